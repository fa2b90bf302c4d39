// The float32 FMA throughput ceiling of this machine, for judging benchmark figures:
// register-only AVX-512 FMA chains, timed on 1 or more threads at once.
import Checkpoints
import CKernels
import Dispatch

public enum FMAPeak {
    /// FLOPs in one training timestep at hidden size H and vocabulary V: three H×4H products
    /// (recurrent forward, recurrent backward, dW_rec) and three H×V ones (output, dWy, dh from
    /// the output), 2 FLOPs per multiply-add. The input block (one-hot) needs no product.
    public static func flopsPerTimestep(hidden H: Int, vocab V: Int) -> Double {
        6 * Double(H) * Double(4 * H + V)
    }

    /// GFLOP/s of `threads` threads running the probe at the same time (their sum), the best of
    /// `runs`; nil without AVX-512.
    public static func measure(threads: Int, runs: Int = 3, iterations: Int = 50_000_000) -> Double? {
        guard drummer_kernels_have_avx512() != 0, threads >= 1 else { return nil }
        var best = 0.0
        for _ in 0..<runs {
            let rates = Rates(count: threads)
            DispatchQueue.concurrentPerform(iterations: threads) { k in
                let start = DispatchTime.now().uptimeNanoseconds
                let sink = drummer_fma_peak_loop_avx512(iterations)
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                rates.slots[k] = sink.isNaN ? 0 : 384 * Double(iterations) / seconds / 1e9
            }
            best = max(best, rates.slots.reduce(0, +))
        }
        return best
    }
}

/// One slot per thread; each thread writes only its own.
private final class Rates: @unchecked Sendable {
    let slots: UnsafeMutableBufferPointer<Double>
    init(count: Int) { slots = .allocate(capacity: count); slots.initialize(repeating: 0) }
    deinit { slots.deallocate() }
}
