// The float32 FMA throughput ceiling of this machine, for judging benchmark figures:
// register-only FMA chains (AVX-512 where the CPU has it, else AVX2 + FMA3), timed on
// 1 or more threads at once.
import CKernels
import Dispatch
import DrummerCore
import Train

public enum FMAPeak {
    /// FLOPs in one training timestep of `shape`, 2 per multiply-add: per layer three H×4H
    /// products of the recurrence (forward, backward, dW_rec), above layer 0 three more of its
    /// input (x·W_in, dW_in, dx), and three H×O of the output layer (output, dWy, dh). Layer 0's
    /// one-hot input block is a gather and needs no product. (The 2017 layout, H = 200 and
    /// O = 226: 1.231 MFLOP; the shipped grid model, two layers of 256 and O = 710: 5.81 MFLOP.)
    static func flopsPerTimestep(shape: ModelShape) -> Double {
        let H = Double(shape.hidden), G: Double = 4 * H, layers = Double(shape.layers), O = Double(shape.outputWidth)
        let recurrence: Double = 3 * H * G * layers
        let inputs: Double = 3 * H * G * (layers - 1)
        let head: Double = 3 * H * O
        return 2 * (recurrence + inputs + head)
    }

    /// The share of `flopsPerTimestep` the trainer skips on these rows (the class matrix of a
    /// shape, one column per input group): the output groups the head's rule sends to its sparse
    /// path (Train/OutputHead.swift's `SparseOutputGroups`) multiply only the rows that predict
    /// them. Counted over all rows (the trainer decides block by block): an estimate.
    static func skippedShare(shape: ModelShape, classes: [Int32]) -> Double {
        guard !shape.isOriginalLayout else { return 0 }
        let k = shape.inputGroups.count, n = classes.count / k
        guard n > 1 else { return 0 }
        // Row r's targets are row r + 1's classes: n − 1 rows predict.
        let predicted = shape.outputGroups.indices.map { g in
            let column = shape.targetColumns[g], size = Int32(shape.outputGroups[g])
            var count = 0
            for r in 1..<n where classes[r * k + column] < size { count += 1 }
            return count
        }
        let first = SparseOutputGroups.first(groups: predicted.count, rows: n - 1) { predicted[$0] }
        var skipped = 0.0
        for g in first..<predicted.count {
            skipped += Double(n - 1 - predicted[g]) / Double(n - 1) * Double(shape.outputGroups[g])
        }
        return 2 * 3 * Double(shape.hidden) * skipped / flopsPerTimestep(shape: shape)
    }

    /// Which probe runs on this CPU, or why none can.
    public enum Probe: Sendable, Equatable {
        case avx512
        case avx2
        case unavailable(String)

        public var label: String {
            switch self {
            case .avx512: return "AVX-512 register loop"
            case .avx2: return "AVX2 FMA register loop"
            case .unavailable(let why): return why
            }
        }
    }

    package static var probe: Probe {
        #if arch(x86_64)
        switch Kernels.isa {
        case .avx512: return .avx512
        case .avx2: return .avx2
        case .baseline:
            return .unavailable(KernelISA.cpu == .baseline ? "this CPU has neither AVX-512 nor AVX2 with FMA"
                                : "DRUMMER_MAX_ISA=baseline: no FMA probe")
        }
        #else
        return .unavailable("the FMA peak probe is written for x86-64")
        #endif
    }

    /// GFLOP/s of `threads` threads running the probe at the same time (all their FLOPs over the
    /// span from the first start to the last end), the best of `runs`; nil when `probe` is
    /// unavailable. `iterations` per thread and run; nil sizes a run to about 0.1 s on this
    /// machine (at most 50 M iterations, about 0.1 s on a core that runs two 8-wide FMAs per cycle
    /// at 2.5 GHz; far fewer where the loop runs slowly, as in a debug build).
    public static func measure(threads: Int, runs: Int = 3, iterations: Int? = nil) -> Double? {
        let flopsPerIteration: Double
        let loop: @Sendable (Int) -> Float
        switch probe {
        case .avx512:
            flopsPerIteration = 12 * 16 * 2
            loop = { drummer_fma_peak_loop_avx512($0) }
        case .avx2:
            flopsPerIteration = 12 * 8 * 2
            loop = { drummer_fma_peak_loop_avx2($0) }
        case .unavailable:
            return nil
        }
        guard threads >= 1 else { return nil }
        let iterations = iterations ?? calibrated(loop)
        var best = 0.0
        for _ in 0..<runs {
            // The threads' FLOPs over the span from the first start to the last end: threads that
            // take turns on fewer cores than asked (a CPU affinity, a busy machine) count as the
            // cores they had, where adding each thread's own rate counted each as a whole core.
            let starts = Slots(count: threads), ends = Slots(count: threads)
            let valid = Slots(count: threads)
            DispatchQueue.concurrentPerform(iterations: threads) { k in
                starts.values[k] = Double(DispatchTime.now().uptimeNanoseconds)
                let sink = loop(iterations)
                ends.values[k] = Double(DispatchTime.now().uptimeNanoseconds)
                valid.values[k] = sink.isNaN ? 0 : 1
            }
            guard valid.values.allSatisfy({ $0 == 1 }), let first = starts.values.min(), let last = ends.values.max(),
                  last > first else { continue }
            let seconds = (last - first) / 1e9
            best = max(best, flopsPerIteration * Double(iterations) * Double(threads) / seconds / 1e9)
        }
        return best
    }

    /// Iterations of `loop` for a run of about 0.1 s: doubled from 65,536 until one run takes
    /// 25 ms, then scaled; never more than 50 M.
    static func calibrated(_ loop: (Int) -> Float) -> Int {
        let ceiling = 50_000_000
        var n = 1 << 16
        while true {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = loop(n)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            if seconds >= 0.025 || n >= ceiling {
                return min(ceiling, max(n, Int(Double(n) * 0.1 / max(seconds, 1e-9))))
            }
            n *= 2
        }
    }
}

/// One slot per thread; each thread writes only its own.
private final class Slots: @unchecked Sendable {
    let values: UnsafeMutableBufferPointer<Double>
    init(count: Int) { values = .allocate(capacity: count); values.initialize(repeating: 0) }
    deinit { values.deallocate() }
}
