// Orthogonal initialisation: the Q factor of a random Gaussian matrix (LAPACKE
// sgeqrf + sorgqr), with column signs fixed by diag(R) so that the result is
// uniformly distributed (Mezzadri 2007), as Keras' Orthogonal initialiser does.
// OpenBLAS runs the factorisation on one thread: its sums' order follows its thread count,
// which follows the machine's cores (or OPENBLAS_NUM_THREADS, or a CPU affinity), and a seed
// is to give the same initial weights on any of them.
import CLAPACKE

public enum Orthogonal {
    /// A rows×cols matrix with orthonormal columns (rows ≥ cols) or orthonormal
    /// rows (rows < cols), times `gain`.
    public static func matrix(
        rows: Int, cols: Int, gain: Float = 1, rng: inout SeededRNG
    ) throws -> Matrix {
        guard rows > 0, cols > 0 else {
            throw LinearAlgebraError(call: "Orthogonal.matrix", message: "empty shape \(rows)x\(cols)")
        }
        // Factor the tall orientation m×n (m ≥ n), transpose back at the end.
        let m = max(rows, cols), n = min(rows, cols)
        var a = [Float](repeating: 0, count: m * n)
        for i in 0..<a.count { a[i] = Float(rng.normal()) }
        var tau = [Float](repeating: 0, count: n)
        let info1 = BLASRuntime.onOneThread { LAPACKE_sgeqrf(LAPACK_ROW_MAJOR, Int32(m), Int32(n), &a, Int32(n), &tau) }
        guard info1 == 0 else {
            throw LinearAlgebraError(call: "LAPACKE_sgeqrf", message: "info = \(info1)")
        }
        var signs = [Float](repeating: 1, count: n)
        for j in 0..<n { signs[j] = a[j * n + j] < 0 ? -1 : 1 }
        let info2 = BLASRuntime.onOneThread { LAPACKE_sorgqr(LAPACK_ROW_MAJOR, Int32(m), Int32(n), Int32(n), &a, Int32(n), &tau) }
        guard info2 == 0 else {
            throw LinearAlgebraError(call: "LAPACKE_sorgqr", message: "info = \(info2)")
        }
        for i in 0..<m {
            for j in 0..<n { a[i * n + j] *= signs[j] * gain }
        }
        if rows >= cols { return try Matrix(rows: rows, cols: cols, data: a) }
        var t = [Float](repeating: 0, count: rows * cols)
        for i in 0..<m {
            for j in 0..<n { t[j * cols + i] = a[i * n + j] }
        }
        return try Matrix(rows: rows, cols: cols, data: t)
    }
}
