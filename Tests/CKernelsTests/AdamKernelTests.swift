// drummer_adam (the level this CPU runs; KernelLevelsTests compares the levels) against the
// scalar Adam loop it replaced, written out here in Swift, one rounded operation at a time:
// the same bits for every parameter.
import CKernels
import XCTest

final class AdamKernelTests: XCTestCase {
    struct Constants {
        var lr: Float = 0.002, lo: Float = -5, hi: Float = 5
        var b1: Float = 0.9, b2: Float = 0.999, d1 = Float(1 - 0.9), d2 = Float(1 - 0.999)
        var c1 = Float(1 - 0.729), c2 = Float(1 - 0.997002999), eps: Float = 1e-8
    }

    /// The loop Optimizer.swift ran before the kernel (Swift rounds each operation on its own).
    func scalarAdam(_ p: inout [Float], _ g: [Float], _ m: inout [Float], _ v: inout [Float], _ k: Constants) {
        for i in p.indices {
            let gi = min(max(g[i], k.lo), k.hi)
            let mi = k.b1 * m[i] + k.d1 * gi
            let vi = k.b2 * v[i] + k.d2 * (gi * gi)
            m[i] = mi
            v[i] = vi
            p[i] -= k.lr * (mi / k.c1) / ((vi / k.c2).squareRoot() + k.eps)
        }
    }

    func kernelAdam(_ p: inout [Float], _ g: [Float], _ m: inout [Float], _ v: inout [Float], _ k: Constants) {
        drummer_adam(p.count, &p, g, nil, &m, &v, k.lr, k.lo, k.hi, k.b1, k.b2, k.d1, k.d2, k.c1, k.c2, k.eps)
    }

    func testSameBitsAsTheScalarLoop() {
        var rng = SystemRandomNumberGenerator()
        // 10,007 parameters (not a multiple of 16: the vector tail), gradients inside and beyond
        // the clip (both signs, exactly at it), zeros, tiny and huge slot values.
        let n = 10_007
        var g = (0..<n).map { _ in Float.random(in: -8...8, using: &rng) }
        g[0] = 5; g[1] = -5; g[2] = 0; g[3] = -0.0; g[4] = 1e-30; g[5] = .greatestFiniteMagnitude; g[6] = -.infinity
        let p0 = (0..<n).map { _ in Float.random(in: -1...1, using: &rng) }
        let m0 = (0..<n).map { _ in Float.random(in: -0.1...0.1, using: &rng) }
        var v0 = (0..<n).map { _ in Float.random(in: 0...0.01, using: &rng) }
        v0[7] = 0; v0[8] = 1e-38
        for constants in [Constants(), Constants(lr: 0.1, lo: -0.5, hi: 0.5, eps: 1e-6)] {
            var (ps, ms, vs) = (p0, m0, v0)
            var (pk, mk, vk) = (p0, m0, v0)
            // Three steps, each from the last one's state.
            for _ in 0..<3 {
                scalarAdam(&ps, g, &ms, &vs, constants)
                kernelAdam(&pk, g, &mk, &vk, constants)
            }
            assertSameBits(ps, pk, "parameters")
            assertSameBits(ms, mk, "first moments")
            assertSameBits(vs, vk, "second moments")
            XCTAssertNotEqual(ps, p0, "the parameters moved")
        }
    }

    /// With an addend the kernel reads grad + addend: the bits of adding it into grad first, grad
    /// left as it was.
    func testAddendGivesTheBitsOfAddingItFirst() {
        var rng = SystemRandomNumberGenerator()
        let n = 1_003
        let g = (0..<n).map { _ in Float.random(in: -4...4, using: &rng) }
        let addend = (0..<n).map { _ in Float.random(in: -4...4, using: &rng) }
        let p0 = (0..<n).map { _ in Float.random(in: -1...1, using: &rng) }
        let k = Constants()
        var (pa, ma, va) = (p0, [Float](repeating: 0.01, count: n), [Float](repeating: 0.001, count: n))
        var (pf, mf, vf) = (pa, ma, va)
        var summed = g
        drummer_accumulate(Int32(n), addend, &summed)
        kernelAdam(&pa, summed, &ma, &va, k)
        var grad = g
        grad.withUnsafeMutableBufferPointer { gp in
            drummer_adam(n, &pf, gp.baseAddress, addend, &mf, &vf, k.lr, k.lo, k.hi, k.b1, k.b2, k.d1, k.d2, k.c1, k.c2,
                         k.eps)
        }
        assertSameBits(pa, pf, "parameters")
        assertSameBits(ma, mf, "first moments")
        assertSameBits(va, vf, "second moments")
        assertSameBits(grad, g, "the gradient, not written")
        XCTAssertNotEqual(summed, g)
    }

    /// Fails with the first index whose bits differ (and how many do).
    func assertSameBits(_ a: [Float], _ b: [Float], _ what: String, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, line: line)
        let differing = a.indices.filter { a[$0].bitPattern != b[$0].bitPattern }
        if let i = differing.first {
            XCTFail("\(what): \(differing.count) of \(a.count) differ, first at \(i): \(a[i]) against \(b[i])", line: line)
        }
    }

    func testNaNPassesThroughTheClamp() {
        // Swift's min(max(NaN, lo), hi) is NaN: the update carries it rather than hiding it.
        var (ps, ms, vs): ([Float], [Float], [Float]) = ([0.5], [0], [0])
        var (pk, mk, vk) = (ps, ms, vs)
        scalarAdam(&ps, [.nan], &ms, &vs, Constants())
        kernelAdam(&pk, [.nan], &mk, &vk, Constants())
        XCTAssertTrue(ps[0].isNaN && pk[0].isNaN && mk[0].isNaN && vk[0].isNaN)
    }
}
