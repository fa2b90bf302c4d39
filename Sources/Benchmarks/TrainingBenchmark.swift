// Training throughput: timesteps/s of TBPTT chunks (SGD) on a synthetic sequence, per
// batch size and mode, with GFLOP/s and the share of the machine's FMA peak.
//
// Modes:
//   helper           the trainer's default: a helper thread beside the recurrence, OpenBLAS on 1 thread
//   helper-openblas  the same with the recurrent products on OpenBLAS instead of the AVX-512 kernel
//                    (only differs where the kernel is the default)
//   blas1 / blas2    no helper thread; OpenBLAS on 1 / 2 threads
//   loop             the step loop as `drummer train` runs it (TrainingRun.advance: learning-rate
//                    schedule, update, loss checks), reading the run's progress without copies
//   loop-snapshot    the same loop plus the three whole-state copies per step that reading the
//                    step number cost before `Trainer.progress` existed: the effect, in one run
//
// Layouts: original (note, tick in and out), groove (plus a one-hot position of `slots` and
// `velocityBins` velocity bins in, and the velocity out) and groove-binary (the position as
// binary bit groups). Every layout runs on the same synthetic notes and ticks in the same run,
// and the groove layouts' speed is printed as a share of the original's.
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
    public var layouts: [Layout] = [.original, .groove]
    /// Position slots and velocity bins of the groove layouts (64 slots: 4/4 in 32nd notes).
    public var slots = 64
    public var velocityBins = 16
    public var modes: [Mode] = [.helper, .helperOpenBLAS, .blas1, .blas2, .loop, .loopSnapshot]
    public var timing = TimingSettings(runs: 5, minimumSeconds: 1)

    public enum Layout: String, CaseIterable, Sendable {
        case original, groove, grooveBinary = "groove-binary"
    }

    public init() {}

    /// The groups of `layout` over `vocabulary`.
    func groups(_ layout: Layout, vocabulary: Vocabulary) throws -> ModelGroups {
        var g = ModelGroups(vocabulary: vocabulary)
        guard layout != .original else { return g }
        g.position = PositionGroup(encoding: layout == .groove ? .oneHot : .binary, slots: slots,
                                   ticksPerSlot: Meter.common.barTicks(ppq: 480) / slots, ppq: 480, meter: .common)
        // Equal-width bins over 1...127 (the synthetic velocities are uniform).
        let width = (127 + velocityBins - 1) / velocityBins
        let bins = stride(from: 1, through: 127, by: width).map { $0...min(127, $0 + width - 1) }
        g.velocity = try VelocityGroup(bins: bins, histogram: [Int](repeating: 1, count: 127))
        return g
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
        guard (1...1920).contains(slots), 1920 % slots == 0 else {
            throw BenchmarkError("--slots must divide a 4/4 bar of 1920 ticks, got \(slots)")
        }
        guard (1...127).contains(velocityBins) else { throw BenchmarkError("--velocity-bins must be between 1 and 127, got \(velocityBins)") }
        let vocabulary = try Vocabulary(ixToNote: Array(0..<notes), ixToTick: Array(0..<ticks))
        let widest = try layouts.map { try groups($0, vocabulary: vocabulary).shape(hidden: hidden) }
            .max { $0.wxCount + $0.wyCount < $1.wxCount + $1.wyCount } ?? ModelShape(notes: notes, ticks: ticks, hidden: hidden)
        for b in batches {
            guard (1...events).contains(b) else { throw BenchmarkError("--batch \(b) must be between 1 and --events \(events)") }
            guard events / b >= unroll + 1 else {
                throw BenchmarkError("--events \(events) is too few for batch \(b): each stream needs unroll + 1 = \(unroll + 1) events")
            }
            try Trainer.checkWorkspace(shape: widest, unroll: unroll, batch: b)
        }
    }

    public func run(report: (String) -> Void) throws {
        try validate()
        report(MachineInfo.header)
        report("settings: U=\(unroll) H=\(hidden) V=\(notes + ticks) (\(notes) notes + \(ticks) ticks), "
               + "\(events) synthetic events, SGD, \(timing.runs) runs of ≥ \(timing.minimumSeconds) s, median")
        let vocabulary = try Vocabulary(ixToNote: Array(0..<notes), ixToTick: Array(0..<ticks))
        let original = ModelShape(notes: notes, ticks: ticks, hidden: hidden)
        let flops = FMAPeak.flopsPerTimestep(hidden: hidden, outputs: original.outputWidth)
        let cores = MachineInfo.cores
        let peakAll = FMAPeak.measure(threads: cores), peakOne = FMAPeak.measure(threads: 1)
        if let p1 = peakOne, let p = peakAll {
            report("float32 FMA peak (\(FMAPeak.probe.label)): \(fixed(p1, 0)) GFLOP/s on 1 core, \(fixed(p, 0)) on \(cores); "
                   + "a timestep is \(fixed(flops / 1e6, 3)) MFLOP")
        } else {
            report("a timestep is \(fixed(flops / 1e6, 3)) MFLOP (no FMA peak: \(FMAPeak.probe.label))")
        }
        var rng = SeededRNG(seed: 1)
        // Features per event: note, tick, slot, velocity bin (the original layout reads the first two).
        var features: [Int32] = []
        features.reserveCapacity(4 * events)
        for _ in 0..<events {
            features.append(Int32(rng.index(below: notes)))
            features.append(Int32(rng.index(below: ticks)))
            features.append(Int32(rng.index(below: slots)))
            features.append(Int32(rng.index(below: 127)) + 1)
        }
        var setups: [(layout: Layout, groups: ModelGroups, shape: ModelShape, events: [Int32], weights: LSTMWeights)] = []
        for layout in layouts {
            let g = try groups(layout, vocabulary: vocabulary)
            let shape = g.shape(hidden: hidden)
            if layout != .original {
                report("layout \(layout.rawValue): inputs \(shape.inputGroups), outputs \(shape.outputGroups) "
                       + "(Wx \(shape.wxRows) × \(shape.wxCols), Wy \(shape.wyRows) × \(shape.wyCols))")
            }
            setups.append((layout, g, shape, classes(features, groups: g), try Initializer.weights(shape: shape, scheme: .original, rng: &rng)))
        }
        var medians: [String: Double] = [:]
        let defaultThreads = BLASRuntime.threads
        defer { BLASRuntime.setThreads(defaultThreads) }
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("drummer-bench-train-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: scratch) }
        if modes.contains(where: \.isLoop) { try writeDataset(features, to: scratch.appendingPathComponent("data")) }
        for b in batches {
            for mode in modes {
              for setup in setups {
                BLASRuntime.setThreads(mode.blasThreads)
                let step: () throws -> Void
                let describe: () -> String
                if mode.isLoop {
                    let run = try TrainingRun(options: loopOptions(batch: b, mode: mode, scratch: scratch, layout: setup.layout),
                                              reporter: RunReporter(line: { _ in }))
                    let runShape = run.groups.shape(hidden: hidden)
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
                    let state = TrainingState(weights: setup.weights, unroll: unroll, batch: b, optimizer: .sgd)
                    let trainer = try Trainer(state: state, events: setup.events, optimizer: OptimizerConfig(learningRate: 0.1))
                    trainer.usesHelperThread = mode.usesHelper
                    if mode == .helperOpenBLAS {
                        guard trainer.usesOwnRecurrentKernel else { continue }
                        trainer.usesOwnRecurrentKernel = false
                    }
                    step = { trainer.step() }
                    describe = {
                        "recurrent: \(trainer.usesOwnRecurrentKernel ? "avx512" : "openblas"), \(trainer.streamGroupCount) stream group(s)"
                    }
                }
                let rates = try Timing.rates(timing, work: Double(unroll * b), warmup: 2, step)
                medians["\(b) \(mode.rawValue) \(setup.layout.rawValue)"] = rates.median
                // GFLOP/s counts the layout's products (a one-hot input row costs no product).
                let gflops = rates.median * FMAPeak.flopsPerTimestep(hidden: hidden, outputs: setup.shape.outputWidth) / 1e9
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
        let first = setups[0]
        let eval = Timing.singleCalls(timing, work: Double(events - 1)) {
            _ = Evaluator.evaluate(weights: first.weights, events: first.events)
        }
        report("evaluation (forward only, 1 stream, 1 OpenBLAS thread, \(first.layout.rawValue) layout): median \(fixed(eval.median, 0)) events/s")
        report("peak RSS: \(fixed(MachineInfo.peakRSSMiB, 1)) MiB")
    }

    /// The class matrix of `features` (4 per event: note, tick, slot, velocity) for `groups`.
    func classes(_ features: [Int32], groups: ModelGroups) -> [Int32] {
        var encoder = HitEncoder(groups: groups)
        let k = encoder.inputCount, n = features.count / 4
        var out = [Int32](repeating: 0, count: n * k)
        out.withUnsafeMutableBufferPointer { o in
            for e in 0..<n {
                let slot = Int(features[4 * e + 2]), perSlot = groups.position?.ticksPerSlot ?? 1
                let bin = Int32(groups.velocity?.bin(of: Int(features[4 * e + 3])) ?? 0)
                _ = encoder.encode(note: features[4 * e], tick: features[4 * e + 1], onset: 0, tickInBar: slot * perSlot,
                                   barTicks: 1, velocityBin: bin, into: UnsafeMutableBufferPointer(rebasing: o[(e * k)..<(e * k + k)]))
            }
        }
        return out
    }

    /// The synthetic sequence as a convert-midi dataset (events.npy, vocab.json, and the
    /// groove layouts' velocities.npy and positions.npy: slot × ticks per slot in 4/4 bars).
    func writeDataset(_ features: [Int32], to dir: URL) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let n = features.count / 4
        var events: [Int32] = [], velocities: [Int32] = [], positions: [Int32] = []
        let ticksPerSlot = Int32(1920 / slots)
        for e in 0..<n {
            events += [features[4 * e], features[4 * e + 1]]
            positions += [features[4 * e + 2] * ticksPerSlot, 1920]
            velocities.append(features[4 * e + 3])
        }
        try NPY.write(int32: events, shape: [n, 2], to: dir.appendingPathComponent("events.npy").path)
        try NPY.write(int32: velocities, shape: [n], to: dir.appendingPathComponent("velocities.npy").path)
        try NPY.write(int32: positions, shape: [n, 2], to: dir.appendingPathComponent("positions.npy").path)
        // The grid the positions are on, so that the run's position slots are the groove layouts'.
        let manifest = #"{"settings": {"ppq": 480, "quantize": \#(ticksPerSlot)}}"#
        try Data(manifest.utf8).write(to: dir.appendingPathComponent("manifest.json"))
        let vocab = try Vocabulary(ixToNote: Array(0..<notes), ixToTick: Array(0..<ticks))
        try JSONOutput.encode(vocab).write(to: dir.appendingPathComponent("vocab.json"))
    }

    /// A new run on the synthetic dataset that never evaluates, logs or checkpoints while timed;
    /// each (batch, mode, layout) gets a checkpoint directory of its own (one run per directory).
    func loopOptions(batch: Int, mode: Mode, scratch: URL, layout: Layout) -> RunOptions {
        let never = Int.max / 2
        var o = RunOptions(
            data: scratch.appendingPathComponent("data").path, hidden: hidden, unroll: unroll, batchSize: batch,
            optimizer: .sgd, learningRate: 0.1, initScheme: .original, checkpointEvery: never,
            checkpointDirectory: scratch.appendingPathComponent("checkpoints-\(batch)-\(mode.rawValue)-\(layout.rawValue)").path,
            logEvery: never, evalEvery: never)
        o.layoutOriginal = layout == .original
        if layout != .original {
            o.positionEncoding = layout == .groove ? .oneHot : .binary
            o.velocityBins = velocityBins
        }
        return o
    }
}
