// GFLOP/s of the two OpenBLAS shapes the original model's LSTM uses: the per-step GEMV
// (1×427)·(427×800) and a 200-step block GEMM (200×427)·(427×800), on 1 thread and on
// OpenBLAS's default thread count.
import DrummerCore

public enum BLASBenchmark {
    public static func run(_ timing: TimingSettings, report: (String) -> Void) {
        report(MachineInfo.header)
        let defaultThreads = BLASRuntime.threads
        defer { BLASRuntime.setThreads(defaultThreads) }
        let k = 427, n = 800
        var rng = SeededRNG(seed: 1)
        let b = (0..<(k * n)).map { _ in Float(rng.uniform(-1, 1)) }
        let a = (0..<(200 * k)).map { _ in Float(rng.uniform(-1, 1)) }
        var c = [Float](repeating: 0, count: 200 * n)
        for threads in Array(Set([1, defaultThreads])).sorted() {
            BLASRuntime.setThreads(threads)
            for (label, m) in [("GEMV (1x427)·(427x800)", 1), ("GEMM (200x427)·(427x800)", 200)] {
                let gflop = 2.0 * Double(m * n * k) / 1e9
                let rates = a.withUnsafeBufferPointer { pa in
                    b.withUnsafeBufferPointer { pb in
                        c.withUnsafeMutableBufferPointer { pc in
                            Timing.rates(timing, work: gflop, warmup: 50, group: 20) {
                                if m == 1 {
                                    BLAS.sgemv(.transposed, rows: k, cols: n, alpha: 1, a: pb, lda: n, x: pa, beta: 0, y: pc)
                                } else {
                                    BLAS.sgemm(.none, .none, m: m, n: n, k: k, alpha: 1, a: pa, lda: k, b: pb, ldb: n,
                                               beta: 0, c: pc, ldc: n)
                                }
                            }
                        }
                    }
                }
                report("\(padded(label, 26)) threads=\(threads)  median \(fixed(rates.median, 1, width: 7)) GFLOP/s  "
                       + "(min \(fixed(rates.min, 1)), max \(fixed(rates.max, 1)), \(timing.runs) runs)")
            }
        }
    }
}
