// drummer_input_block: the one-hot input of every group summed with the bias, for any number of
// groups, bitwise equal to the sum written out in the documented order ((r0 + r1) + … ) + bias.
import CKernels
import XCTest

final class InputBlockTests: XCTestCase {
    func testEveryGroupCountSumsInTheDocumentedOrder() {
        var seed: UInt64 = 0x9E3779B97F4A7C15
        func random() -> Float {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: seed >> 11) % 2_000_001 - 1_000_000) / 1_000_000 * 3
        }
        for n in [1, 7, 16, 37, 800] {
            let rowsInW = 12
            let w = (0..<(rowsInW * n)).map { _ in random() }
            let bias = (0..<n).map { _ in random() }
            for k in 1...9 {
                let rows = (0..<k).map { Int32(($0 * 5 + k) % rowsInW) }
                var expected = [Float](repeating: 0, count: n)
                for j in 0..<n {
                    var s = w[Int(rows[0]) * n + j]
                    for q in 1..<k { s += w[Int(rows[q]) * n + j] }
                    expected[j] = s + bias[j]
                }
                var out = [Float](repeating: .nan, count: n)
                out.withUnsafeMutableBufferPointer { o in
                    drummer_input_block(Int32(n), w, rows, Int32(k), bias, o.baseAddress, nil)
                }
                XCTAssertEqual(out.map(\.bitPattern), expected.map(\.bitPattern), "n \(n), k \(k)")
            }
        }
    }
}
