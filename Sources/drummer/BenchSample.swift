// `drummer bench sample`: sampler speed (Benchmarks.SamplingBenchmark).
import ArgumentParser
import Benchmarks
import DrummerCore

struct BenchSample: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample",
        abstract: "Sampler speed: notes/s for 1000-note generation (H=200, V=226 by default, or a given model such as models/groove).")

    @Option(name: .customLong("notes"), parsing: .unconditional, help: "Notes generated per run.")
    var notes: Int = 1000

    /// The synthetic model's sizes: nil when not given (SamplingBenchmark's defaults), so that
    /// --model can refuse any of them given beside it, defaults included.
    @Option(parsing: .unconditional, help: "Hidden size H (default \(SamplingBenchmark().hidden)).")
    var hidden: Int?

    @Option(name: .customLong("note-classes"), parsing: .unconditional, help: "Notes in the vocabulary (N); V = N + ticks (default \(SamplingBenchmark().noteClasses)).")
    var noteClasses: Int?

    @Option(name: .customLong("tick-classes"), parsing: .unconditional, help: "Tick values in the vocabulary (K); V = notes + K (default \(SamplingBenchmark().tickClasses)).")
    var tickClasses: Int?

    @Option(help: "Time this model (a model directory, a checkpoint file, or a checkpoint directory's best) instead of random weights; its sizes replace --hidden, --note-classes and --tick-classes.")
    var model: String?

    @OptionGroup var timing: TimingOptions

    var benchmark: SamplingBenchmark {
        var b = SamplingBenchmark()
        b.notes = notes
        if let hidden { b.hidden = hidden }
        if let noteClasses { b.noteClasses = noteClasses }
        if let tickClasses { b.tickClasses = tickClasses }
        b.timing = timing.settings(defaultRuns: 15, defaultSeconds: 0)
        return b
    }

    func validate() throws {
        if model != nil, hidden != nil || noteClasses != nil || tickClasses != nil {
            throw ValidationError("--model takes its sizes and groups from the model: drop --hidden, --note-classes and --tick-classes")
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
