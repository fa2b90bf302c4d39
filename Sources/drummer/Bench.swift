// `drummer bench`: the benchmarks of the Benchmarks module, one thin command each.
import ArgumentParser
import Benchmarks

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks (figures, with the machine and settings; not tests).",
        subcommands: [BenchBLAS.self, BenchTrain.self, BenchSample.self])
}

/// How often and how long every benchmark times (the defaults differ per benchmark).
struct TimingOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Timed runs per figure, 1 to 1000 (the median is reported; default: blas 7, sample 15, train 5).")
    var runs: Int?

    @Option(parsing: .unconditional, help: "Minimum seconds per timed run, 0 to 3600 (default: blas 0.2, sample 0, train 1).")
    var seconds: Double?

    func settings(defaultRuns: Int, defaultSeconds: Double) -> TimingSettings {
        TimingSettings(runs: runs ?? defaultRuns, minimumSeconds: seconds ?? defaultSeconds)
    }
}

/// A benchmark error as ArgumentParser's validation error (exit 64 with the usage line).
func validated(_ check: () throws -> Void) throws {
    do { try check() } catch let e as BenchmarkError { throw ValidationError(e.description) }
}

struct BenchBLAS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blas",
        abstract: "GFLOP/s of the GEMV and GEMM shapes the LSTM uses, 1 thread and default threads.")

    @OptionGroup var timing: TimingOptions

    var settings: TimingSettings { timing.settings(defaultRuns: 7, defaultSeconds: 0.2) }

    func validate() throws { try validated { try settings.validate() } }

    func run() throws { BLASBenchmark.run(settings) { print($0) } }
}
