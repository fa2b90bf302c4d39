// Accuracy of CKernels' vectorised exp, sigmoid and tanh (the clone this CPU runs)
// against double precision.
import CKernels
import Foundation
import XCTest

final class FastMathTests: XCTestCase {
    func worst(_ f: (UnsafeMutablePointer<Float>, Int) -> Void, _ ref: (Double) -> Double,
               over xs: [Float], relative: Bool) -> Double {
        var ys = xs
        ys.withUnsafeMutableBufferPointer { b in
            if let p = b.baseAddress { f(p, b.count) }
        }
        var w = 0.0
        for (x, y) in zip(xs, ys) {
            let r = ref(Double(x))
            let err = relative ? abs(Double(y) - r) / max(abs(r), 1e-300) : abs(Double(y) - r)
            w = max(w, err)
        }
        return w
    }

    func testAccuracy() {
        // 20,003 points (not a multiple of 8: exercises the tail) over each range.
        let wide = (0..<20_003).map { Float(-87 + 175 * Double($0) / 20_002) }
        let narrow = (0..<20_003).map { Float(-12 + 24 * Double($0) / 20_002) }
        let tiny = (0..<20_003).map { Float(-1e-3 + 2e-3 * Double($0) / 20_002) }
        let expErr = worst({ drummer_exp($0, Int32($1)) }, Foundation.exp, over: wide, relative: true)
        XCTAssertLessThan(expErr, 5e-7, "exp relative error")
        let sigErr = worst({ drummer_sigmoid($0, Int32($1)) }, { 1 / (1 + Foundation.exp(-$0)) }, over: narrow, relative: true)
        XCTAssertLessThan(sigErr, 1e-6, "sigmoid relative error")
        let tanhErr = worst({ drummer_tanh($0, Int32($1)) }, Foundation.tanh, over: narrow + tiny, relative: true)
        XCTAssertLessThan(tanhErr, 1e-6, "tanh relative error")
        print("fast math worst relative errors: exp \(expErr), sigmoid \(sigErr), tanh \(tanhErr)")
        var extremes: [Float] = [-1000, -100, 100, 1000, 0, -0.0]
        extremes.withUnsafeMutableBufferPointer { drummer_tanh($0.baseAddress!, Int32($0.count)) }
        XCTAssertEqual(extremes, [-1, -1, 1, 1, 0, 0])
        var s: [Float] = [-1000, 1000]
        s.withUnsafeMutableBufferPointer { drummer_sigmoid($0.baseAddress!, Int32($0.count)) }
        XCTAssertEqual(s[1], 1)
        XCTAssertLessThan(s[0], 1e-37)
    }
}
