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
import Checkpoints
import DrummerCore
import Encode
import Foundation
import Train

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
    public var modes: [Mode] = [.helper, .helperOpenBLAS, .blas1, .blas2, .loop, .loopSnapshot]
    public var timing = TimingSettings(runs: 5, minimumSeconds: 1)

    public init() {}

    /// Largest synthetic sequence (two Int32 per event: 80 MB).
    public static let maximumEvents = 10_000_000

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
        let shape = ModelShape(notes: notes, ticks: ticks, hidden: hidden)
        for b in batches {
            guard (1...events).contains(b) else { throw BenchmarkError("--batch \(b) must be between 1 and --events \(events)") }
            guard events / b >= unroll + 1 else {
                throw BenchmarkError("--events \(events) is too few for batch \(b): each stream needs unroll + 1 = \(unroll + 1) events")
            }
            try Trainer.checkWorkspace(shape: shape, unroll: unroll, batch: b)
        }
    }

    public func run(report: (String) -> Void) throws {
        try validate()
        report(MachineInfo.header)
        report("settings: U=\(unroll) H=\(hidden) V=\(notes + ticks) (\(notes) notes + \(ticks) ticks), "
               + "\(events) synthetic events, SGD, \(timing.runs) runs of ≥ \(timing.minimumSeconds) s, median")
        let shape = ModelShape(notes: notes, ticks: ticks, hidden: hidden)
        let flops = FMAPeak.flopsPerTimestep(hidden: hidden, outputs: shape.outputWidth)
        let cores = MachineInfo.cores
        let peakAll = FMAPeak.measure(threads: cores), peakOne = FMAPeak.measure(threads: 1)
        if let p1 = peakOne, let p = peakAll {
            report("float32 FMA peak (\(FMAPeak.probe.label)): \(fixed(p1, 0)) GFLOP/s on 1 core, \(fixed(p, 0)) on \(cores); "
                   + "a timestep is \(fixed(flops / 1e6, 3)) MFLOP")
        } else {
            report("a timestep is \(fixed(flops / 1e6, 3)) MFLOP (no FMA peak: \(FMAPeak.probe.label))")
        }
        var rng = SeededRNG(seed: 1)
        var seq: [Int32] = []
        seq.reserveCapacity(2 * events)
        for _ in 0..<events {
            seq.append(Int32(rng.index(below: notes)))
            seq.append(Int32(rng.index(below: ticks)))
        }
        let weights = try Initializer.weights(shape: shape, scheme: .original, rng: &rng)
        let defaultThreads = BLASRuntime.threads
        defer { BLASRuntime.setThreads(defaultThreads) }
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("drummer-bench-train-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: scratch) }
        if modes.contains(where: \.isLoop) { try writeDataset(seq, to: scratch.appendingPathComponent("data")) }
        for b in batches {
            for mode in modes {
                BLASRuntime.setThreads(mode.blasThreads)
                let step: () throws -> Void
                let describe: () -> String
                if mode.isLoop {
                    let run = try TrainingRun(options: loopOptions(batch: b, scratch: scratch), reporter: RunReporter(line: { _ in }))
                    let copies = mode == .loopSnapshot
                    step = {
                        _ = try run.advance()
                        if copies { for _ in 0..<3 { _ = run.snapshot() } }
                    }
                    describe = { "\(run.streamGroupCount) stream group(s)" }
                } else {
                    let state = TrainingState(weights: weights, unroll: unroll, batch: b, optimizer: .sgd)
                    let trainer = try Trainer(state: state, events: seq, optimizer: OptimizerConfig(learningRate: 0.1))
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
                let gflops = rates.median * flops / 1e9
                // Against the peak of the cores the mode can use: blas1 runs on one.
                let used = mode == .blas1 ? 1 : cores
                let ofPeak = (used == 1 ? peakOne : peakAll).map {
                    ", \(fixed(100 * gflops / $0, 0))% of the \(used)-core peak"
                } ?? ""
                report("batch \(fixed(Double(b), 0, width: 3))  \(padded(mode.rawValue, 15))  median \(fixed(rates.median, 0, width: 9)) timesteps/s  "
                       + "(min \(fixed(rates.min, 0)), max \(fixed(rates.max, 0)))  \(fixed(gflops, 0)) GFLOP/s\(ofPeak)  \(describe())")
            }
        }
        BLASRuntime.setThreads(1)
        let eval = Timing.singleCalls(timing, work: Double(events - 1)) {
            _ = Evaluator.evaluate(weights: weights, events: seq)
        }
        report("evaluation (forward only, 1 stream, 1 OpenBLAS thread): median \(fixed(eval.median, 0)) events/s")
        report("peak RSS: \(fixed(MachineInfo.peakRSSMiB, 1)) MiB")
    }

    /// The synthetic sequence as a convert-midi dataset (events.npy, vocab.json).
    func writeDataset(_ seq: [Int32], to dir: URL) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try NPY.write(int32: seq, shape: [seq.count / 2, 2], to: dir.appendingPathComponent("events.npy").path)
        let vocab = try Vocabulary(ixToNote: Array(0..<notes), ixToTick: Array(0..<ticks))
        try JSONOutput.encode(vocab).write(to: dir.appendingPathComponent("vocab.json"))
    }

    /// A new run on the synthetic dataset that never evaluates, logs or checkpoints while timed.
    func loopOptions(batch: Int, scratch: URL) -> RunOptions {
        let never = Int.max / 2
        return RunOptions(
            data: scratch.appendingPathComponent("data").path, hidden: hidden, unroll: unroll, batchSize: batch,
            optimizer: .sgd, learningRate: 0.1, initScheme: .original, checkpointEvery: never,
            checkpointDirectory: scratch.appendingPathComponent("checkpoints-\(batch)").path,
            logEvery: never, evalEvery: never)
    }
}
