import XCTest
@testable import DrummerCore

func assertClose(_ a: [Float], _ b: [Float], tol: Float, _ msg: String = "",
                 file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(a.count, b.count, "count " + msg, file: file, line: line)
    for i in 0..<min(a.count, b.count) where abs(a[i] - b[i]) > tol * max(1, abs(b[i])) {
        XCTFail("\(msg) element \(i): \(a[i]) vs \(b[i]) (tol \(tol))", file: file, line: line)
        return
    }
}

/// Naive triple loop reference, in Double.
func naiveMatmul(_ a: Matrix, _ ta: Bool, _ b: Matrix, _ tb: Bool) -> [Float] {
    let m = ta ? a.cols : a.rows, k = ta ? a.rows : a.cols
    let n = tb ? b.rows : b.cols
    var out = [Float](repeating: 0, count: m * n)
    for i in 0..<m {
        for j in 0..<n {
            var s = 0.0
            for p in 0..<k {
                let av = ta ? a[p, i] : a[i, p]
                let bv = tb ? b[j, p] : b[p, j]
                s += Double(av) * Double(bv)
            }
            out[i * n + j] = Float(s)
        }
    }
    return out
}

func randomMatrix(_ r: Int, _ c: Int, _ rng: inout SeededRNG) -> Matrix {
    try! Matrix(rows: r, cols: c, data: (0..<(r * c)).map { _ in Float(rng.uniform(-1, 1)) })
}

final class LinearAlgebraTests: XCTestCase {
    func testGemmAllTransposesMatchNaiveLoops() throws {
        var rng = SeededRNG(seed: 7)
        let (m, k, n) = (5, 7, 3)
        for ta in [false, true] {
            for tb in [false, true] {
                let a = ta ? randomMatrix(k, m, &rng) : randomMatrix(m, k, &rng)
                let b = tb ? randomMatrix(n, k, &rng) : randomMatrix(k, n, &rng)
                let c = try BLAS.matmul(a, ta ? .transposed : .none, b, tb ? .transposed : .none)
                XCTAssertEqual(c.rows, m)
                XCTAssertEqual(c.cols, n)
                assertClose(c.data, naiveMatmul(a, ta, b, tb), tol: 1e-5, "ta=\(ta) tb=\(tb)")
            }
        }
    }

    func testGemmAlphaBetaAccumulate() throws {
        var rng = SeededRNG(seed: 8)
        let a = randomMatrix(4, 6, &rng), b = randomMatrix(6, 2, &rng)
        var c = randomMatrix(4, 2, &rng)
        let c0 = c.data
        try BLAS.gemm(a, .none, b, .none, into: &c, alpha: 0.5, beta: 2)
        let ab = naiveMatmul(a, false, b, false)
        assertClose(c.data, zip(ab, c0).map { 0.5 * $0 + 2 * $1 }, tol: 1e-5)
    }

    func testGemmRejectsMismatchedShapes() {
        var rng = SeededRNG(seed: 9)
        let a = randomMatrix(3, 4, &rng), b = randomMatrix(5, 2, &rng)
        XCTAssertThrowsError(try BLAS.matmul(a, .none, b, .none)) { err in
            XCTAssertEqual((err as? LinearAlgebraError)?.call, "gemm")
            XCTAssertTrue("\(err)".contains("inner dimensions"), "\(err)")
        }
        var c = Matrix(zeros: 2, 2)
        XCTAssertThrowsError(try BLAS.gemm(a, .none, randomMatrix(4, 2, &rng), .none, into: &c)) { err in
            XCTAssertTrue("\(err)".contains("C is 2x2, expected 3x2"), "\(err)")
        }
        XCTAssertThrowsError(try Matrix(rows: 2, cols: 3, data: [1, 2, 3])) {
            XCTAssertEqual($0 as? LinearAlgebraError, LinearAlgebraError(call: "Matrix", message: "3 values do not fill a 2x3 matrix"))
        }
    }

    func testGemvBothOrientations() throws {
        var rng = SeededRNG(seed: 10)
        let a = randomMatrix(6, 4, &rng)
        let x4 = (0..<4).map { _ in Float(rng.uniform(-1, 1)) }
        let x6 = (0..<6).map { _ in Float(rng.uniform(-1, 1)) }
        var y6 = [Float](repeating: 0, count: 6)
        try BLAS.gemv(a, .none, x4, into: &y6)
        assertClose(y6, naiveMatmul(a, false, try Matrix(rows: 4, cols: 1, data: x4), false), tol: 1e-5)
        var y4 = [Float](repeating: 1, count: 4)
        try BLAS.gemv(a, .transposed, x6, into: &y4, beta: 1)
        let ref = naiveMatmul(a, true, try Matrix(rows: 6, cols: 1, data: x6), false).map { $0 + 1 }
        assertClose(y4, ref, tol: 1e-5)
        XCTAssertThrowsError(try BLAS.gemv(a, .none, x6, into: &y6)) { err in
            XCTAssertTrue("\(err)".contains("x has 6 values"), "\(err)")
        }
        XCTAssertThrowsError(try BLAS.gemv(a, .transposed, x6, into: &y6)) { err in
            XCTAssertTrue("\(err)".contains("y has 6 values"), "\(err)")
        }
    }

    func testSgerAndSaxpyMatchLoops() {
        var a = [Float](repeating: 1, count: 6)
        let x: [Float] = [1, 2], y: [Float] = [3, 4, 5]
        x.withUnsafeBufferPointer { px in
            y.withUnsafeBufferPointer { py in
                a.withUnsafeMutableBufferPointer { pa in
                    BLAS.sger(m: 2, n: 3, alpha: 2, x: px, y: py, a: pa, lda: 3)
                }
            }
        }
        XCTAssertEqual(a, [7, 9, 11, 13, 17, 21])
        var z: [Float] = [1, 1, 1]
        y.withUnsafeBufferPointer { py in
            z.withUnsafeMutableBufferPointer { pz in BLAS.saxpy(3, alpha: -1, x: py, y: pz) }
        }
        XCTAssertEqual(z, [-2, -3, -4])
    }

    func testOrthogonalHasOrthonormalColumnsAndRows() throws {
        var rng = SeededRNG(seed: 11)
        for (r, c) in [(200, 200), (50, 20), (20, 50)] {
            let q = try Orthogonal.matrix(rows: r, cols: c, rng: &rng)
            XCTAssertEqual(q.rows, r)
            XCTAssertEqual(q.cols, c)
            // QᵀQ = I for tall, QQᵀ = I for wide.
            let g = r >= c ? try BLAS.matmul(q, .transposed, q, .none) : try BLAS.matmul(q, .none, q, .transposed)
            let d = min(r, c)
            var worst: Float = 0
            for i in 0..<d { for j in 0..<d { worst = max(worst, abs(g[i, j] - (i == j ? 1 : 0))) } }
            XCTAssertLessThan(worst, 1e-4, "\(r)x\(c)")
        }
        let g = try Orthogonal.matrix(rows: 8, cols: 8, gain: 2, rng: &rng)
        let gtg = try BLAS.matmul(g, .transposed, g, .none)
        XCTAssertEqual(gtg[3, 3], 4, accuracy: 1e-4)
        XCTAssertThrowsError(try Orthogonal.matrix(rows: 0, cols: 3, rng: &rng)) {
            XCTAssertTrue($0 is LinearAlgebraError, "\($0)")
            XCTAssertTrue("\($0)".contains("0"), "\($0)")
        }
    }

    func testOrthogonalIsSeeded() throws {
        var r1 = SeededRNG(seed: 5), r2 = SeededRNG(seed: 5), r3 = SeededRNG(seed: 6)
        let a = try Orthogonal.matrix(rows: 10, cols: 10, rng: &r1)
        XCTAssertEqual(a, try Orthogonal.matrix(rows: 10, cols: 10, rng: &r2))
        XCTAssertNotEqual(a, try Orthogonal.matrix(rows: 10, cols: 10, rng: &r3))
    }
}
