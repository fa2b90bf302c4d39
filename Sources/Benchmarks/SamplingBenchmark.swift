// Sampler speed: notes/s generating from a model of the original's sizes with random
// weights (the work per note does not depend on the values), 1 OpenBLAS thread against
// the default, in the same run. Or a given model (a model directory or checkpoint, e.g.
// models/groove, a grid model): its own weights, layout and sizes, hits per second.
import DrummerCore
import Foundation
import Sample

public struct SamplingBenchmark {
    public var notes = 1000
    public var hidden = 200
    public var noteClasses = 17
    public var tickClasses = 209
    public var timing = TimingSettings(runs: 15, minimumSeconds: 0)
    /// A model to time instead of the random one (its sizes replace the settings above), and
    /// where it came from for the report.
    public var model: (weights: LSTMWeights, groups: ModelGroups, origin: String)?

    public init() {}

    /// Most notes per run (the output array is reserved up front).
    static let maximumNotes = 10_000_000

    public func validate() throws {
        try timing.validate()
        guard (1...Self.maximumNotes).contains(notes) else {
            throw BenchmarkError("--notes must be between 1 and \(Self.maximumNotes), got \(notes)")
        }
        guard (1...ModelLimits.maximumHidden).contains(hidden) else {
            throw BenchmarkError("--hidden must be between 1 and \(ModelLimits.maximumHidden), got \(hidden)")
        }
        guard (1...128).contains(noteClasses) else { throw BenchmarkError("--note-classes must be between 1 and 128, got \(noteClasses)") }
        guard (1...4096).contains(tickClasses) else { throw BenchmarkError("--tick-classes must be between 1 and 4096, got \(tickClasses)") }
    }

    public func run(report: (String) -> Void) throws {
        try validate()
        report(MachineInfo.header)
        // A grid model's step runs on its own threads (one, or split over two as `drummer
        // sample` runs it on a machine with two cores), OpenBLAS on one thread as every command
        // sets it: OpenBLAS's threads would spin on the cores the split step spins on. A model
        // of the 2017 layout steps through OpenBLAS: its threads are OpenBLAS's.
        let makeSampler: (Int) throws -> Sampler
        let stepThreads: Bool
        if let model {
            let shape = model.weights.shape
            stepThreads = model.groups.grid != nil
            makeSampler = { threads in
                try Sampler(weights: model.weights, groups: model.groups, stepThreads: stepThreads ? threads : nil)
            }
            let layout = model.groups.grid != nil ? "grid layout" : "original layout"
            report("model: \(model.origin) (\(layout), \(shape.layers) layer(s) of H=\(shape.hidden), "
                   + "I=\(shape.inputWidth), O=\(shape.outputWidth)); \(notes) hits per generation, median of \(timing.runs) runs")
        } else {
            let vocab = try Vocabulary(ixToNote: Array(0..<noteClasses), ixToTick: Array(0..<tickClasses))
            let groups = ModelGroups(vocabulary: vocab)
            let shape = groups.shape(hidden: hidden)
            var rng = SeededRNG(seed: 1)
            // Random weights of the scale a trained model has (|w| ≲ 0.3).
            let wx = (0..<shape.wxCount).map { _ in Float(rng.uniform(-0.3, 0.3)) }
            let wy = (0..<shape.wyCount).map { _ in Float(rng.uniform(-0.3, 0.3)) }
            let weights = try LSTMWeights(shape: shape, wx: wx, wy: wy)
            stepThreads = false
            makeSampler = { _ in try Sampler(weights: weights, groups: groups) }
            report("model: H=\(hidden), N=\(noteClasses), K=\(tickClasses), V=\(shape.inputWidth); "
                   + "\(notes) notes per generation, median of \(timing.runs) runs")
        }
        let defaultThreads = BLASRuntime.threads
        defer { BLASRuntime.setThreads(defaultThreads) }
        let most = stepThreads ? min(2, CPUCount.available) : defaultThreads
        report(stepThreads ? "threads: the threads a step runs on (split in two halves), OpenBLAS on 1 thread"
                           : "threads: OpenBLAS's threads")
        var medians: [Int: Double] = [:]
        for threads in Array(Set([1, most])).sorted() {
            BLASRuntime.setThreads(stepThreads ? 1 : threads)
            let sampler = try makeSampler(threads)
            var seed: UInt64 = 0
            var count = 0
            let rates = try Timing.rates(timing, work: Double(notes)) {
                var r = SeededRNG(seed: seed)
                seed += 1
                count = 0
                try sampler.generate(count: notes, rng: &r) { _ in count += 1 }
                precondition(count == notes)
            }
            medians[threads] = rates.median
            report("threads=\(threads)  median \(fixed(rates.median, 0, width: 9)) notes/s  (min \(fixed(rates.min, 0)), "
                   + "max \(fixed(rates.max, 0)))  \(fixed(1000 * Double(notes) / rates.median, 3)) ms per \(notes) notes")
        }
        if let one = medians[1], let many = medians[most], most > 1 {
            report("1 thread / \(most) threads: \(fixed(one / many, 2))x (same run)")
        }
    }
}
