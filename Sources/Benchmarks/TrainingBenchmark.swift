// Training throughput: timesteps/s of TBPTT chunks (SGD) on a synthetic sequence, per
// batch size and mode, with GFLOP/s and the share of the machine's FMA peak.
//
// Modes:
//   helper           the trainer's default: a helper thread beside the recurrence, OpenBLAS on 1 thread
//   helper-openblas  the same with the recurrent products on OpenBLAS instead of the kernels' own (AVX-512 or AVX2)
//                    (only differs where the kernel is the default)
//   blas1 / blas2    no helper thread; OpenBLAS on 1 / 2 threads
//   loop             the step loop as `drummer train` runs it (TrainingRun.advance: learning-rate
//                    schedule, update, loss checks), reading the run's progress without copies
//   loop-snapshot    the same loop plus the three whole-state copies per step that reading the
//                    step number cost before `Trainer.progress` existed: the effect, in one run
//
// Layouts: original (note, tick in and out, one layer of --hidden) and grid (the shipped
// model's shape: the 16th-note grid's 51 input groups, 1,218 one-hot rows, and 19 output
// groups, 710 columns, with the recipe's two layers of 256 unless --grid-hidden and
// --grid-layers say otherwise): the original with SGD on synthetic classes drawn uniformly per
// group (its work does not depend on them), the grid as its recipe trains (Adam, dropout 0.3
// between the layers) on real rows (--grid-rows: a corpus as `drummer encode` writes it) or on
// uniform classes. The grid's work depends on its rows: layer 0 sums its input from each
// group's most common class in the chunk (Train/ReferenceClasses.swift), so a drummer's rows,
// mostly silent, read about a quarter of the rows uniform classes read. The loop modes run
// `drummer train`'s step loop on a synthetic dataset and time the original layout only.
import Checkpoints
import DrummerCore
import Encode
import Foundation
import Train
import FileOutput
import TrainRun

public struct TrainingBenchmark {
    public enum Mode: String, CaseIterable, Sendable {
        case helper, helperOpenBLAS = "helper-openblas", blas1, blas2, loop, loopSnapshot = "loop-snapshot"

        var blasThreads: Int { self == .blas2 ? 2 : 1 }
        var usesHelper: Bool { self != .blas1 && self != .blas2 }
        var isLoop: Bool { self == .loop || self == .loopSnapshot }
    }

    public var unroll = 200
    public var hidden = 200
    public var notes = 17
    public var ticks = 209
    public var events = 52_260
    public var batches = [1, 32]
    public var layouts: [Layout] = [.original, .grid]
    /// The grid layout's hidden size and layers (the recipe's: two layers of 256).
    public var gridHidden = 256
    public var gridLayers = 2
    /// The grid layout's rows: an int32 .npy of rows × the 51 input groups' classes (`drummer
    /// encode models/groove --data DATA`); nil: uniform classes, `events` of them.
    public var gridRows: String?
    public var modes: [Mode] = [.helper, .helperOpenBLAS, .blas1, .blas2, .loop, .loopSnapshot]
    public var timing = TimingSettings(runs: 5, minimumSeconds: 1)

    public enum Layout: String, CaseIterable, Sendable {
        case original, grid
    }

    public init() {}

    /// The shape of `layout`: the original's at --hidden, or the shipped grid model's groups.
    func shape(_ layout: Layout) throws -> ModelShape {
        switch layout {
        case .original: return ModelShape(notes: notes, ticks: ticks, hidden: hidden)
        case .grid:
            let grid = try Self.shippedGrid()
            return ModelShape(inputGroups: grid.inputGroups, outputGroups: grid.outputGroups, hidden: gridHidden,
                              layers: gridLayers, targetColumns: grid.targetInputs, lossGroups: grid.outputGroups.count)
        }
    }

    /// A grid group of the shipped model's sizes: 14 velocity bins, 4 offset bins, the velocity
    /// lookback one, two and four bars back, 29 styles.
    static func shippedGrid() throws -> GridGroup {
        let velocity = try VelocityGroup.quantileBins(histogram: [Int](repeating: 1, count: 127), count: 14)
        let styles = try GridStyles(rule: .grooveDrummerNames, names: (1...28).map { "style\($0)" } + [GridStyles.other],
                                    steps: [Int](repeating: 1, count: 29))
        return try GridGroup(ppq: 480, velocity: velocity, offsets: [-45, -15, 15, 45], notes: [36, 38, 42, 46, 45, 48, 50, 49, 51],
                             lookback: .velocities, lookbackBars: [1, 2, 4], styles: styles)
    }

    /// Synthetic class rows for `shape`: `count` rows, each group's class uniform over its size.
    static func syntheticClasses(_ shape: ModelShape, count: Int, rng: inout SeededRNG) -> [Int32] {
        var out: [Int32] = []
        out.reserveCapacity(count * shape.inputGroups.count)
        for _ in 0..<count {
            for size in shape.inputGroups { out.append(Int32(rng.index(below: size))) }
        }
        return out
    }

    /// The rows of `gridRows` for `shape`: rows × groups, each class inside its group.
    func readGridRows(_ path: String, shape: ModelShape) throws -> [Int32] {
        let k = shape.inputGroups.count
        let a: NPYArray
        do { a = try NPY.read(path: path) } catch { throw BenchmarkError("--grid-rows \(path): \(error)") }
        guard a.shape.count == 2, a.shape[1] == k else {
            throw BenchmarkError("--grid-rows \(path): shape \(a.shape), expected rows × \(k) (one class per input group of the shipped grid model, as `drummer encode models/groove --data DATA` writes)")
        }
        let rows: [Int32]
        do { rows = try a.int32Values() } catch { throw BenchmarkError("--grid-rows \(path): \(error)") }
        for (i, c) in rows.enumerated() where c < 0 || Int(c) >= shape.inputGroups[i % k] {
            throw BenchmarkError("--grid-rows \(path): row \(i / k), group \(i % k) holds class \(c), outside 0..<\(shape.inputGroups[i % k]) (the shipped grid model's groups)")
        }
        for b in batches where a.shape[0] / b < unroll + 1 {
            throw BenchmarkError("--grid-rows \(path): \(a.shape[0]) rows are too few for batch \(b): each stream needs unroll + 1 = \(unroll + 1) rows")
        }
        return rows
    }

    /// Largest synthetic sequence (two Int32 per event: 80 MB).
    static let maximumEvents = 10_000_000

    /// Checks every setting before anything is allocated.
    public func validate() throws {
        try timing.validate()
        guard (1...100_000).contains(unroll) else { throw BenchmarkError("--unroll must be between 1 and 100000, got \(unroll)") }
        guard (1...ModelLimits.maximumHidden).contains(hidden) else {
            throw BenchmarkError("--hidden must be between 1 and \(ModelLimits.maximumHidden), got \(hidden)")
        }
        guard (1...128).contains(notes) else { throw BenchmarkError("--notes must be between 1 and 128, got \(notes)") }
        guard (1...ModelLimits.maximumTicks).contains(ticks) else {
            throw BenchmarkError("--ticks must be between 1 and \(ModelLimits.maximumTicks), got \(ticks)")
        }
        guard (2...Self.maximumEvents).contains(events) else {
            throw BenchmarkError("--events must be between 2 and \(Self.maximumEvents), got \(events)")
        }
        guard !batches.isEmpty else { throw BenchmarkError("--batch needs at least one size") }
        guard !modes.isEmpty else { throw BenchmarkError("--modes needs at least one mode") }
        guard !layouts.isEmpty else { throw BenchmarkError("--layouts needs at least one layout") }
        guard (1...ModelLimits.maximumHidden).contains(gridHidden) else {
            throw BenchmarkError("--grid-hidden must be between 1 and \(ModelLimits.maximumHidden), got \(gridHidden)")
        }
        guard (1...8).contains(gridLayers) else { throw BenchmarkError("--grid-layers must be between 1 and 8, got \(gridLayers)") }
        if gridRows != nil, !layouts.contains(.grid) { throw BenchmarkError("--grid-rows needs the grid layout (--layouts grid)") }
        for b in batches {
            guard (1...events).contains(b) else { throw BenchmarkError("--batch \(b) must be between 1 and --events \(events)") }
            guard events / b >= unroll + 1 else {
                throw BenchmarkError("--events \(events) is too few for batch \(b): each stream needs unroll + 1 = \(unroll + 1) events")
            }
            for layout in layouts { try Trainer.checkWorkspace(shape: try shape(layout), unroll: unroll, batch: b, writesCheckpoints: false) }
        }
    }

    public func run(report: (String) -> Void) throws {
        try validate()
        // The rows are checked before anything is printed or timed.
        let gridClasses = try gridRows.map { try readGridRows($0, shape: shape(.grid)) }
        report(MachineInfo.header)
        report("settings: U=\(unroll), \(timing.runs) run\(timing.runs == 1 ? "" : "s") of ≥ \(timing.minimumSeconds) s, median")
        let original = ModelShape(notes: notes, ticks: ticks, hidden: hidden)
        let flops = FMAPeak.flopsPerTimestep(shape: original)
        let cores = MachineInfo.cores
        // The best of 8 probes of 0.1 s: a neighbour's burst on this shared machine lowers one
        // probe, rarely all of them (with 3 a burst once made the peak read 223 where it is 352).
        let peakAll = FMAPeak.measure(threads: cores, runs: 8), peakOne = FMAPeak.measure(threads: 1, runs: 8)
        if let p1 = peakOne, let p = peakAll {
            report("float32 FMA peak (\(FMAPeak.probe.label)): \(fixed(p1, 0)) GFLOP/s on 1 core"
                   + (cores > 1 ? ", \(fixed(p, 0)) on \(cores)" : ""))
        } else {
            report("no FMA peak: \(FMAPeak.probe.label)")
        }
        if layouts.contains(.original) {
            report("layout original: H=\(hidden), V=\(notes + ticks) (\(notes) notes + \(ticks) ticks), \(events) synthetic events, "
                   + "SGD; a timestep is \(fixed(flops / 1e6, 3)) MFLOP")
        }
        var rng = SeededRNG(seed: 1)
        var setups: [(layout: Layout, shape: ModelShape, events: [Int32], weights: LSTMWeights)] = []
        var originalEvents: [Int32] = []
        for layout in layouts {
            let shape = try shape(layout)
            // Drawn even when --grid-rows replaces them: the weights drawn next are then the same
            // with and without it.
            var classes = Self.syntheticClasses(shape, count: events, rng: &rng)
            if layout == .original { originalEvents = classes }
            if layout != .original {
                var source: String
                if let gridRows, let gridClasses {
                    classes = gridClasses
                    source = "\(classes.count / shape.inputGroups.count) rows of \(gridRows)"
                    let skipped = FMAPeak.skippedShare(shape: shape, classes: classes)
                    if skipped > 0 {
                        source += " (on them the head's sparse output groups skip about \(fixed(100 * skipped, 1))% of a "
                            + "timestep; GFLOP/s counts all of it)"
                    }
                } else {
                    source = "\(events) steps of uniform classes (real rows, --grid-rows, train faster)"
                }
                report("layout \(layout.rawValue): \(shape.layers) layers of H=\(shape.hidden), \(shape.inputGroups.count) input groups "
                       + "(\(shape.inputWidth) rows), \(shape.outputGroups.count) output groups (\(shape.outputWidth) columns); "
                       + "Adam\(shape.layers > 1 ? ", dropout 0.3" : ""); "
                       + "a timestep is \(fixed(FMAPeak.flopsPerTimestep(shape: shape) / 1e6, 3)) MFLOP; \(source)")
            }
            setups.append((layout, shape, classes, try Initializer.weights(shape: shape, scheme: .original, rng: &rng)))
        }
        var medians: [String: Double] = [:]
        let defaultThreads = BLASRuntime.threads
        defer { BLASRuntime.setThreads(defaultThreads) }
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("drummer-bench-train-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: scratch) }
        if modes.contains(where: \.isLoop), layouts.contains(.original) {
            try writeDataset(originalEvents, to: scratch.appendingPathComponent("data"))
        }
        for b in batches {
            for mode in modes {
              for setup in setups {
                BLASRuntime.setThreads(mode.blasThreads)
                let step: () throws -> Void
                let describe: () -> String
                if mode.isLoop {
                    // The loop reads a dataset: the original layout's synthetic events.
                    guard setup.layout == .original else { continue }
                    let run = try TrainingRun(options: loopOptions(batch: b, mode: mode, scratch: scratch),
                                              reporter: RunReporter(line: { _ in }))
                    let runShape = run.groups.shape(hidden: setup.shape.hidden)
                    guard runShape == setup.shape else {
                        throw BenchmarkError("the loop's run has shape \(runShape), expected \(setup.shape)")
                    }
                    let copies = mode == .loopSnapshot
                    step = {
                        _ = try run.advance()
                        if copies { for _ in 0..<3 { _ = run.snapshot() } }
                    }
                    describe = { "\(run.streamGroupCount) stream group(s)" }
                } else {
                    // The grid layout as its recipe trains it: Adam, dropout 0.3 between the layers.
                    let grid = setup.layout == .grid
                    let kind: OptimizerKind = grid ? .adam : .sgd
                    let state = TrainingState(weights: setup.weights, unroll: unroll, batch: b, optimizer: kind)
                    let trainer = try Trainer(state: state, events: setup.events,
                                              optimizer: OptimizerConfig(kind: kind, learningRate: grid ? 0.002 : 0.1))
                    if grid, setup.shape.layers > 1 { trainer.dropout = Dropout(probability: 0.3, seed: 1) }
                    trainer.usesHelperThread = mode.usesHelper
                    if mode == .helperOpenBLAS {
                        guard trainer.usesOwnRecurrentKernel else { continue }
                        trainer.usesOwnRecurrentKernel = false
                    }
                    step = { trainer.step() }
                    describe = {
                        "recurrent: \(trainer.usesOwnRecurrentKernel ? Kernels.isa.name : "openblas"), \(trainer.streamGroupCount) stream group(s)"
                    }
                }
                let rates = try Timing.rates(timing, work: Double(unroll * b), warmup: 2, step)
                medians["\(b) \(mode.rawValue) \(setup.layout.rawValue)"] = rates.median
                // GFLOP/s counts the layout's products (a one-hot input row costs no product).
                let gflops = rates.median * FMAPeak.flopsPerTimestep(shape: setup.shape) / 1e9
                // Against the peak of the cores the mode can use: blas1 runs on one.
                let used = mode == .blas1 ? 1 : cores
                let ofPeak = (used == 1 ? peakOne : peakAll).map {
                    ", \(fixed(100 * gflops / $0, 0))% of the \(used)-core peak"
                } ?? ""
                let layoutLabel = layouts == [.original] ? "" : padded(setup.layout.rawValue, 14)
                report("batch \(fixed(Double(b), 0, width: 3))  \(padded(mode.rawValue, 15))  \(layoutLabel)median \(fixed(rates.median, 0, width: 9)) timesteps/s  "
                       + "(min \(fixed(rates.min, 0)), max \(fixed(rates.max, 0)))  \(fixed(gflops, 0)) GFLOP/s\(ofPeak)  \(describe())")
              }
            }
        }
        if layouts.contains(.original) {
            for b in batches {
                for mode in modes {
                    guard let base = medians["\(b) \(mode.rawValue) original"] else { continue }
                    for layout in layouts where layout != .original {
                        guard let r = medians["\(b) \(mode.rawValue) \(layout.rawValue)"] else { continue }
                        report("batch \(fixed(Double(b), 0, width: 3))  \(padded(mode.rawValue, 15))  \(layout.rawValue): "
                               + "\(fixed(100 * r / base, 1))% of the original layout's timesteps/s")
                    }
                }
            }
        }
        BLASRuntime.setThreads(1)
        // The first `events` rows (a corpus's rows would take a minute a call).
        let first = setups[0], k = first.shape.inputGroups.count
        let evalEvents = Array(first.events.prefix(events * k))
        let eval = Timing.singleCalls(timing, work: Double(evalEvents.count / k - 1)) {
            _ = Evaluator.evaluate(weights: first.weights, events: evalEvents)
        }
        report("evaluation (forward only, 1 stream, 1 OpenBLAS thread, \(first.layout.rawValue) layout): median \(fixed(eval.median, 0)) events/s")
        report("peak RSS: \(fixed(MachineInfo.peakRSSMiB, 1)) MiB")
    }

    /// The original layout's synthetic sequence as a convert-midi dataset (events.npy, vocab.json).
    func writeDataset(_ events: [Int32], to dir: URL) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try NPY.write(int32: events, shape: [events.count / 2, 2], to: dir.appendingPathComponent("events.npy").path)
        let vocab = try Vocabulary(ixToNote: Array(0..<notes), ixToTick: Array(0..<ticks))
        try JSONOutput.encode(vocab).write(to: dir.appendingPathComponent("vocab.json"))
    }

    /// A new run of the 2017 layout on the synthetic dataset that never evaluates, logs or
    /// checkpoints while timed; each (batch, mode) gets a checkpoint directory of its own.
    func loopOptions(batch: Int, mode: Mode, scratch: URL) -> RunOptions {
        let never = Int.max / 2
        return RunOptions(
            data: scratch.appendingPathComponent("data").path, hidden: hidden, unroll: unroll, batchSize: batch,
            optimizer: .sgd, learningRate: 0.1, initScheme: .original, checkpointEvery: never,
            checkpointDirectory: scratch.appendingPathComponent("checkpoints-\(batch)-\(mode.rawValue)").path,
            logEvery: never, evalEvery: never)
    }
}
