// `drummer bench sample`: sampler speed (Benchmarks.SamplingBenchmark).
import ArgumentParser
import Benchmarks
import DrummerCore

struct BenchSample: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample",
        abstract: "Sampler speed: notes/s for 1000-note generation (H=200, V=226 by default; optionally with position and velocity groups, or a given model such as models/groove).")

    @Option(name: .customLong("notes"), parsing: .unconditional, help: "Notes generated per run.")
    var notes: Int = 1000

    @Option(parsing: .unconditional, help: "Hidden size H.")
    var hidden: Int = 200

    @Option(name: .customLong("note-classes"), parsing: .unconditional, help: "Notes in the vocabulary (N); V = N + ticks.")
    var noteClasses: Int = 17

    @Option(name: .customLong("tick-classes"), parsing: .unconditional, help: "Tick values in the vocabulary (K); V = notes + K.")
    var tickClasses: Int = 209

    @Option(name: .customLong("position-encoding"), help: "Add a position-in-bar input group (64 slots of 30 ticks, 4/4 at 480 PPQ): onehot or binary (default: none).")
    var positionEncoding: PositionEncoding?

    @Option(name: .customLong("velocity-bins"), parsing: .unconditional, help: "Add a velocity group (in and out) of this many bins, 0...127 (default 0: none).")
    var velocityBins: Int = 0

    @Option(help: "Time this model (a model directory, a checkpoint file, or a checkpoint directory's best) instead of random weights; its sizes replace --hidden, --note-classes, --tick-classes, --position-encoding and --velocity-bins.")
    var model: String?

    @OptionGroup var timing: TimingOptions

    var benchmark: SamplingBenchmark {
        var b = SamplingBenchmark()
        b.notes = notes; b.hidden = hidden; b.noteClasses = noteClasses; b.tickClasses = tickClasses
        b.positionEncoding = positionEncoding; b.velocityBins = velocityBins
        b.timing = timing.settings(defaultRuns: 15, defaultSeconds: 0)
        return b
    }

    func validate() throws {
        if model != nil, hidden != 200 || noteClasses != 17 || tickClasses != 209 || positionEncoding != nil || velocityBins != 0 {
            throw ValidationError("--model takes its sizes and groups from the model: drop --hidden, --note-classes, --tick-classes, --position-encoding and --velocity-bins")
        }
        try validated { try benchmark.validate() }
    }

    func run() throws {
        var b = benchmark
        if let model {
            let m = try ModelSource.load(model, step: nil)
            b.model = (m.weights, m.groups, m.origin)
        }
        try b.run { print($0) }
    }
}
