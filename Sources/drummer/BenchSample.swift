import ArgumentParser
import DrummerCore
import Foundation
import Sample

struct BenchSample: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample",
        abstract: "Sampler speed: notes/s for 1000-note generation (H=200, V=226 by default).")

    @Option(parsing: .unconditional, help: "Timed runs per figure (the median is reported).")
    var runs: Int = 15

    @Option(name: .customLong("notes"), parsing: .unconditional, help: "Notes generated per run.")
    var notes: Int = 1000

    @Option(parsing: .unconditional, help: "Hidden size H.")
    var hidden: Int = 200

    @Option(name: .customLong("note-classes"), parsing: .unconditional, help: "Notes in the vocabulary (N); V = N + ticks.")
    var noteClasses: Int = 17

    @Option(name: .customLong("tick-classes"), parsing: .unconditional, help: "Tick values in the vocabulary (K); V = notes + K.")
    var tickClasses: Int = 209

    func validate() throws {
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
        guard notes >= 1 else { throw ValidationError("--notes must be at least 1") }
        guard (1...4096).contains(hidden) else { throw ValidationError("--hidden must be in 1...4096") }
        guard (1...128).contains(noteClasses) else { throw ValidationError("--note-classes must be in 1...128") }
        guard (1...4096).contains(tickClasses) else { throw ValidationError("--tick-classes must be in 1...4096") }
    }

    func run() throws {
        print(MachineInfo.header)
        let vocab = try Vocabulary(ixToNote: Array(0..<noteClasses), ixToTick: Array(0..<tickClasses))
        let shape = vocab.shape(hidden: hidden)
        var rng = SeededRNG(seed: 1)
        // Random weights of the scale a trained model has (|w| ≲ 0.3): the work per note
        // does not depend on the values.
        let wx = (0..<shape.wxCount).map { _ in Float(rng.uniform(-0.3, 0.3)) }
        let wy = (0..<shape.wyCount).map { _ in Float(rng.uniform(-0.3, 0.3)) }
        let sampler = try Sampler(weights: LSTMWeights(shape: shape, wx: wx, wy: wy), vocabulary: vocab)
        print("model: H=\(hidden), N=\(noteClasses), K=\(tickClasses), V=\(shape.vocab); "
              + "\(notes) notes per run, median of \(runs) runs")
        let defaultThreads = BLASRuntime.threads
        var rates: [Int: Double] = [:]
        for threads in Array(Set([1, defaultThreads])).sorted() {
            BLASRuntime.setThreads(threads)
            var r = SeededRNG(seed: 7)
            _ = try sampler.generate(count: notes, rng: &r)  // warm-up
            var perRun: [Double] = []
            for run in 0..<runs {
                var r = SeededRNG(seed: UInt64(run))
                let start = DispatchTime.now().uptimeNanoseconds
                let out = try sampler.generate(count: notes, rng: &r)
                let s = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                precondition(out.count == notes)
                perRun.append(Double(notes) / s)
            }
            perRun.sort()
            let median = perRun[perRun.count / 2]
            rates[threads] = median
            print(String(format: "threads=%d  median %9.0f notes/s  (min %.0f, max %.0f)  %.3f ms per %d notes",
                         threads, median, perRun[0], perRun[perRun.count - 1], 1000 * Double(notes) / median,
                         notes))
        }
        BLASRuntime.setThreads(defaultThreads)
        if let one = rates[1], let many = rates[defaultThreads], defaultThreads > 1 {
            print(String(format: "1 thread / %d threads: %.2fx (same run)", defaultThreads, one / many))
        }
    }
}
