// Accuracy of the σ, tanh and exp inside CKernels' cell and softmax kernels (the level
// this CPU runs) against double precision, through the entry points the LSTM uses.
import CKernels
import Foundation
import XCTest

final class FastMathTests: XCTestCase {
    /// drummer_cell_forward writes σ(f), σ(i), σ(o), tanh(g) back into the gates: with the
    /// same x in every block, the four blocks give σ(x) three times and tanh(x).
    func activations(_ xs: [Float]) -> (sigmoid: [Float], tanh: [Float]) {
        let H = xs.count
        var gates = xs + xs + xs + xs
        let cPrev = [Float](repeating: 0, count: H)
        var cNew = cPrev, tanhC = cPrev, hNew = cPrev
        gates.withUnsafeMutableBufferPointer { g in
            cNew.withUnsafeMutableBufferPointer { c in
                tanhC.withUnsafeMutableBufferPointer { t in
                    hNew.withUnsafeMutableBufferPointer { h in
                        drummer_cell_forward(Int32(H), g.baseAddress, cPrev, c.baseAddress, t.baseAddress, h.baseAddress)
                    }
                }
            }
        }
        XCTAssertEqual(Array(gates[0..<H]), Array(gates[H..<(2 * H)]), "σ(f) and σ(i) agree")
        XCTAssertEqual(Array(gates[0..<H]), Array(gates[(2 * H)..<(3 * H)]), "σ(f) and σ(o) agree")
        return (Array(gates[0..<H]), Array(gates[(3 * H)...]))
    }

    func worstRelative(_ got: [Float], _ xs: [Float], _ ref: (Double) -> Double) -> Double {
        zip(got, xs).reduce(0.0) { w, p in
            let r = ref(Double(p.1))
            return max(w, abs(Double(p.0) - r) / max(abs(r), 1e-300))
        }
    }

    func testSigmoidAndTanhInTheCell() {
        // 20,003 points (not a multiple of 16: exercises the vector tail) over each range.
        let narrow = (0..<20_003).map { Float(-12 + 24 * Double($0) / 20_002) }
        let tiny = (0..<20_003).map { Float(-1e-3 + 2e-3 * Double($0) / 20_002) }
        let (sig, th) = activations(narrow)
        let sigErr = worstRelative(sig, narrow) { 1 / (1 + Foundation.exp(-$0)) }
        XCTAssertLessThan(sigErr, 1e-6, "sigmoid relative error")
        let tanhErr = max(worstRelative(th, narrow, Foundation.tanh), worstRelative(activations(tiny).tanh, tiny, Foundation.tanh))
        XCTAssertLessThan(tanhErr, 1e-6, "tanh relative error")
        print("cell kernel worst relative errors: sigmoid \(sigErr), tanh \(tanhErr)")
        let (s, t) = activations([-1000, -100, 100, 1000, 0, -0.0])
        XCTAssertEqual(t, [-1, -1, 1, 1, 0, 0])
        XCTAssertEqual(s[3], 1)
        XCTAssertLessThan(s[0], 1e-37)
        XCTAssertEqual(s[4], 0.5)
    }

    /// drummer_negative_log_likelihood (exp inside a log-sum-exp) against double precision,
    /// over logits spread wide enough to exercise exp's whole range after the max shift.
    func testNegativeLogLikelihood() {
        var seed: UInt64 = 12345
        func uniform() -> Double {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(seed >> 11) / Double(1 << 53)
        }
        var worst = 0.0
        for n in [1, 2, 17, 209, 1000] {
            for spread in [0.1, 5.0, 80.0] {
                let y = (0..<n).map { _ in Float((uniform() - 0.5) * 2 * spread) }
                let target = Int(uniform() * Double(n))
                var buf = y
                let got = buf.withUnsafeMutableBufferPointer {
                    drummer_negative_log_likelihood($0.baseAddress, Int32(n), Int32(target))
                }
                let m = y.map(Double.init).max()!
                let ref = m + Foundation.log(y.reduce(0.0) { $0 + Foundation.exp(Double($1) - m) }) - Double(y[target])
                worst = max(worst, abs(Double(got) - ref) / max(1, abs(ref)))
            }
        }
        XCTAssertLessThan(worst, 2e-6, "NLL relative error")
    }
}
