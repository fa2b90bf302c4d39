// `drummer bench sample`: sampler speed (Benchmarks.SamplingBenchmark).
import ArgumentParser
import Benchmarks

struct BenchSample: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample",
        abstract: "Sampler speed: notes/s for 1000-note generation (H=200, V=226 by default).")

    @Option(name: .customLong("notes"), help: "Notes generated per run.")
    var notes: Int = 1000

    @Option(help: "Hidden size H.")
    var hidden: Int = 200

    @Option(name: .customLong("note-classes"), help: "Notes in the vocabulary (N); V = N + ticks.")
    var noteClasses: Int = 17

    @Option(name: .customLong("tick-classes"), help: "Tick values in the vocabulary (K); V = notes + K.")
    var tickClasses: Int = 209

    @OptionGroup var timing: TimingOptions

    var benchmark: SamplingBenchmark {
        var b = SamplingBenchmark()
        b.notes = notes; b.hidden = hidden; b.noteClasses = noteClasses; b.tickClasses = tickClasses
        b.timing = timing.settings(defaultRuns: 15, defaultSeconds: 0)
        return b
    }

    func validate() throws { try validated { try benchmark.validate() } }

    func run() throws { try benchmark.run { print($0) } }
}
