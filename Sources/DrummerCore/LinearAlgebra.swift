// Thin, shape-checked wrappers over OpenBLAS cblas (row-major, float32).
//
// Public functions take arrays with explicit shapes and check them; the
// pointer-level entry points used by hot loops check their buffer counts.
import CBLAS

/// A shape or argument error in a linear-algebra call.
public struct LinearAlgebraError: Error, CustomStringConvertible, Equatable {
    public let call: String
    public let message: String
    public init(call: String, message: String) {
        self.call = call
        self.message = message
    }
    public var description: String { "\(call): \(message)" }
}

/// Whether an operand is used as stored or transposed.
public enum Transpose: Sendable {
    case none
    case transposed

    var cblas: CBLAS_TRANSPOSE { self == .none ? CblasNoTrans : CblasTrans }
}

/// A dense row-major float32 matrix.
public struct Matrix: Equatable, Sendable {
    public var rows: Int
    public var cols: Int
    public var data: [Float]

    public init(rows: Int, cols: Int, data: [Float]) throws {
        guard rows >= 0, cols >= 0 else {
            throw LinearAlgebraError(call: "Matrix", message: "negative shape \(rows)x\(cols)")
        }
        guard data.count == rows * cols else {
            throw LinearAlgebraError(
                call: "Matrix", message: "\(data.count) values do not fill a \(rows)x\(cols) matrix")
        }
        self.rows = rows
        self.cols = cols
        self.data = data
    }

    public init(zeros rows: Int, _ cols: Int) {
        precondition(rows >= 0 && cols >= 0, "negative matrix shape")
        self.rows = rows
        self.cols = cols
        self.data = [Float](repeating: 0, count: rows * cols)
    }

    public subscript(row: Int, col: Int) -> Float {
        get { data[row * cols + col] }
        set { data[row * cols + col] = newValue }
    }

    /// The shape after an optional transpose.
    func shape(_ t: Transpose) -> (rows: Int, cols: Int) {
        t == .none ? (rows, cols) : (cols, rows)
    }
}

public enum BLAS {
    /// C = alpha · op(A) · op(B) + beta · C, all row-major.
    public static func gemm(
        _ a: Matrix, _ transA: Transpose = .none,
        _ b: Matrix, _ transB: Transpose = .none,
        into c: inout Matrix, alpha: Float = 1, beta: Float = 0
    ) throws {
        let (m, k) = a.shape(transA)
        let (kb, n) = b.shape(transB)
        guard k == kb else {
            throw LinearAlgebraError(
                call: "gemm",
                message: "inner dimensions differ: op(A) is \(m)x\(k), op(B) is \(kb)x\(n)")
        }
        guard c.rows == m, c.cols == n else {
            throw LinearAlgebraError(
                call: "gemm", message: "C is \(c.rows)x\(c.cols), expected \(m)x\(n)")
        }
        if m == 0 || n == 0 { return }
        a.data.withUnsafeBufferPointer { pa in
            b.data.withUnsafeBufferPointer { pb in
                c.data.withUnsafeMutableBufferPointer { pc in
                    sgemm(
                        transA, transB, m: m, n: n, k: k, alpha: alpha,
                        a: pa, lda: a.cols, b: pb, ldb: b.cols, beta: beta, c: pc, ldc: n)
                }
            }
        }
    }

    /// op(A) · op(B) as a new matrix.
    public static func matmul(
        _ a: Matrix, _ transA: Transpose = .none, _ b: Matrix, _ transB: Transpose = .none
    ) throws -> Matrix {
        var c = Matrix(zeros: a.shape(transA).rows, b.shape(transB).cols)
        try gemm(a, transA, b, transB, into: &c)
        return c
    }

    /// y = alpha · op(A) · x + beta · y.
    public static func gemv(
        _ a: Matrix, _ trans: Transpose = .none, _ x: [Float],
        into y: inout [Float], alpha: Float = 1, beta: Float = 0
    ) throws {
        let (m, n) = a.shape(trans)
        guard x.count == n else {
            throw LinearAlgebraError(
                call: "gemv", message: "x has \(x.count) values, op(A) is \(m)x\(n)")
        }
        guard y.count == m else {
            throw LinearAlgebraError(
                call: "gemv", message: "y has \(y.count) values, op(A) is \(m)x\(n)")
        }
        if m == 0 { return }
        a.data.withUnsafeBufferPointer { pa in
            x.withUnsafeBufferPointer { px in
                y.withUnsafeMutableBufferPointer { py in
                    sgemv(trans, rows: a.rows, cols: a.cols, alpha: alpha, a: pa, lda: a.cols,
                          x: px, beta: beta, y: py)
                }
            }
        }
    }

    // MARK: pointer level (hot loops)

    /// Row-major sgemm on raw buffers: C[m×n] = alpha·op(A)·op(B) + beta·C.
    /// `lda`, `ldb`, `ldc` are the row strides of the stored matrices.
    @inline(__always)
    package static func sgemm(
        _ transA: Transpose, _ transB: Transpose, m: Int, n: Int, k: Int, alpha: Float,
        a: UnsafeBufferPointer<Float>, lda: Int, b: UnsafeBufferPointer<Float>, ldb: Int,
        beta: Float, c: UnsafeMutableBufferPointer<Float>, ldc: Int
    ) {
        // Stored A is m×k (no transpose) or k×m; same for B with k×n / n×k.
        let aRows = transA == .none ? m : k
        let bRows = transB == .none ? k : n
        precondition(m >= 0 && n >= 0 && k >= 0, "sgemm: negative size")
        precondition(aRows == 0 || a.count >= (aRows - 1) * lda + (transA == .none ? k : m),
                     "sgemm: A buffer too small")
        precondition(bRows == 0 || b.count >= (bRows - 1) * ldb + (transB == .none ? n : k),
                     "sgemm: B buffer too small")
        precondition(m == 0 || c.count >= (m - 1) * ldc + n, "sgemm: C buffer too small")
        if m == 0 || n == 0 { return }
        cblas_sgemm(
            CblasRowMajor, transA.cblas, transB.cblas, Int32(m), Int32(n), Int32(k), alpha,
            a.baseAddress, Int32(lda), b.baseAddress, Int32(ldb), beta, c.baseAddress, Int32(ldc))
    }

    /// Row-major sgemv on raw buffers: y = alpha·op(A)·x + beta·y, A stored rows×cols.
    @inline(__always)
    package static func sgemv(
        _ trans: Transpose, rows: Int, cols: Int, alpha: Float,
        a: UnsafeBufferPointer<Float>, lda: Int, x: UnsafeBufferPointer<Float>,
        beta: Float, y: UnsafeMutableBufferPointer<Float>
    ) {
        let (m, n) = trans == .none ? (rows, cols) : (cols, rows)
        precondition(rows == 0 || a.count >= (rows - 1) * lda + cols, "sgemv: A buffer too small")
        precondition(x.count >= n && y.count >= m, "sgemv: vector too small")
        if rows == 0 || cols == 0 { return }
        cblas_sgemv(
            CblasRowMajor, trans.cblas, Int32(rows), Int32(cols), alpha, a.baseAddress,
            Int32(lda), x.baseAddress, 1, beta, y.baseAddress, 1)
    }

    /// y += alpha · x.
    @inline(__always)
    public static func saxpy(
        _ n: Int, alpha: Float, x: UnsafeBufferPointer<Float>, y: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(x.count >= n && y.count >= n, "saxpy: vector too small")
        if n == 0 { return }
        cblas_saxpy(Int32(n), alpha, x.baseAddress, 1, y.baseAddress, 1)
    }

    /// A += alpha · x · yᵀ (rank-1 update), A stored m×n with row stride lda.
    @inline(__always)
    public static func sger(
        m: Int, n: Int, alpha: Float, x: UnsafeBufferPointer<Float>,
        y: UnsafeBufferPointer<Float>, a: UnsafeMutableBufferPointer<Float>, lda: Int
    ) {
        precondition(x.count >= m && y.count >= n, "sger: vector too small")
        precondition(m == 0 || a.count >= (m - 1) * lda + n, "sger: A buffer too small")
        if m == 0 || n == 0 { return }
        cblas_sger(CblasRowMajor, Int32(m), Int32(n), alpha, x.baseAddress, 1, y.baseAddress, 1,
                   a.baseAddress, Int32(lda))
    }
}
