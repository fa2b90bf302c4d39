// `drummer bench train`: training throughput (Benchmarks.TrainingBenchmark).
import ArgumentParser
import Benchmarks

struct BenchTrain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Training timesteps/s on a synthetic sequence (TBPTT chunks, SGD), per batch size and mode.")

    @Option(parsing: .unconditional, help: "Unroll steps per chunk (U).")
    var unroll: Int = 200

    @Option(parsing: .unconditional, help: "Hidden size (H).")
    var hidden: Int = 200

    @Option(parsing: .unconditional, help: "Notes in the synthetic vocabulary.")
    var notes: Int = 17

    @Option(parsing: .unconditional, help: "Tick values in the synthetic vocabulary.")
    var ticks: Int = 209

    @Option(parsing: .unconditional, help: "Events in the synthetic sequence.")
    var events: Int = 52_260

    @Option(parsing: .upToNextOption, help: "Batch sizes (streams) to measure.")
    var batch: [Int] = [1, 32]

    @Option(parsing: .upToNextOption,
            help: "Modes to measure: helper (the trainer's default: helper thread, 1 OpenBLAS thread), helper-openblas (the same with the recurrent products on OpenBLAS instead of the AVX-512 kernel), blas1 (no helper, 1 OpenBLAS thread), blas2 (no helper, 2 OpenBLAS threads), loop (the step loop as `drummer train` runs it), loop-snapshot (that loop plus the whole-state copies per step it made before Trainer.progress).")
    var modes: [TrainingBenchmark.Mode] = TrainingBenchmark.Mode.allCases

    @Option(parsing: .upToNextOption,
            help: "Layouts to measure in the same run: original (note, tick), groove (plus a one-hot position and velocity bins in, velocity out), groove-binary (the position as binary bit groups). Each groove layout's speed is also printed as a share of the original's.")
    var layouts: [TrainingBenchmark.Layout] = [.original, .groove]

    @Option(parsing: .unconditional, help: "Position slots per 4/4 bar of the groove layouts (divides 1920).")
    var slots: Int = 64

    @Option(name: .customLong("velocity-bins"), parsing: .unconditional, help: "Velocity bins of the groove layouts.")
    var velocityBins: Int = 16

    @OptionGroup var timing: TimingOptions

    var benchmark: TrainingBenchmark {
        var b = TrainingBenchmark()
        b.unroll = unroll; b.hidden = hidden; b.notes = notes; b.ticks = ticks; b.events = events
        b.batches = batch; b.modes = modes
        b.layouts = layouts; b.slots = slots; b.velocityBins = velocityBins
        b.timing = timing.settings(defaultRuns: 5, defaultSeconds: 1)
        return b
    }

    func validate() throws { try validated { try benchmark.validate() } }

    func run() throws { try benchmark.run { print($0) } }
}

extension TrainingBenchmark.Mode: ExpressibleByArgument {}
extension TrainingBenchmark.Layout: ExpressibleByArgument {}
