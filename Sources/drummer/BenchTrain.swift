// `drummer bench train`: training throughput (Benchmarks.TrainingBenchmark).
import ArgumentParser
import Benchmarks

struct BenchTrain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Training timesteps/s on a synthetic sequence or a corpus's rows (TBPTT chunks), per batch size, mode and layout, with GFLOP/s and the share of the FMA peak.")

    @Option(parsing: .unconditional, help: "Unroll steps per chunk (U).")
    var unroll: Int = 200

    @Option(parsing: .unconditional, help: "Hidden size (H) of the original layout.")
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
            help: "Modes to measure: helper (the trainer's default: helper thread, 1 OpenBLAS thread), helper-openblas (the same with the recurrent products on OpenBLAS instead of the kernels' own (AVX-512 or AVX2)), blas1 (no helper, 1 OpenBLAS thread), blas2 (no helper, 2 OpenBLAS threads), loop (the step loop as `drummer train` runs it), loop-snapshot (that loop as an older version ran it, copying the whole training state every step).")
    var modes: [TrainingBenchmark.Mode] = TrainingBenchmark.Mode.allCases

    @Option(parsing: .upToNextOption,
            help: "Layouts to measure in the same run: original (the 2017 model: note and tick in and out, one layer of --hidden), grid (the shipped model's groups: 1,218 one-hot input rows in 51 groups, 710 outputs in 19 groups, --grid-layers layers of --grid-hidden).")
    var layouts: [TrainingBenchmark.Layout] = [.original, .grid]

    @Option(name: .customLong("grid-hidden"), parsing: .unconditional, help: "Hidden size of the grid layout (the recipe's: 256).")
    var gridHidden: Int = 256

    @Option(name: .customLong("grid-layers"), parsing: .unconditional, help: "Layers of the grid layout (the recipe's: 2).")
    var gridLayers: Int = 2

    @Option(name: .customLong("grid-rows"), parsing: .unconditional,
            help: ArgumentHelp("The grid layout's rows: a corpus's classes as `drummer encode models/groove --data DATA -o FILE` writes them (int32, rows × 51 groups). Without it, uniform classes: its work depends on them (layer 0 starts from each group's most common class), and uniform classes are its slowest case.", valueName: "file"))
    var gridRows: String?

    @OptionGroup var timing: TimingOptions

    var benchmark: TrainingBenchmark {
        var b = TrainingBenchmark()
        b.unroll = unroll; b.hidden = hidden; b.notes = notes; b.ticks = ticks; b.events = events
        b.batches = batch; b.modes = modes
        b.layouts = layouts; b.gridHidden = gridHidden; b.gridLayers = gridLayers; b.gridRows = gridRows
        b.timing = timing.settings(defaultRuns: 5, defaultSeconds: 1)
        return b
    }

    func validate() throws { try validated { try benchmark.validate() } }

    func run() throws { try benchmark.run { print($0) } }
}

extension TrainingBenchmark.Mode: ExpressibleByArgument {}
extension TrainingBenchmark.Layout: ExpressibleByArgument {}
