// Softmax.nucleus (top-p) and its variant that keeps one class out of the cut (a grid model's
// empty hit set): figures worked out by hand below each case.
import XCTest
@testable import DrummerCore

final class NucleusTests: XCTestCase {
    func cut(_ w: [Double], p: Double, keeping kept: Int? = nil) -> [Double] {
        var w = w
        var order = [Int](repeating: 0, count: w.count)
        w.withUnsafeMutableBufferPointer { b in
            order.withUnsafeMutableBufferPointer { o in
                if let kept { Softmax.nucleus(b, p: p, order: o, keeping: kept) } else { Softmax.nucleus(b, p: p, order: o) }
            }
        }
        return w
    }

    func assertClose(_ a: [Double], _ b: [Double], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, file: file, line: line)
        for (x, y) in zip(a, b) { XCTAssertEqual(x, y, accuracy: 1e-12, "\(a) vs \(b)", file: file, line: line) }
    }

    func testNucleus() {
        // 0.6 < 0.7 ≤ 0.6 + 0.25: the two likeliest, scaled to sum to 1 (0.6/0.85, 0.25/0.85).
        assertClose(cut([0.6, 0.25, 0.1, 0.05], p: 0.7), [0.6 / 0.85, 0.25 / 0.85, 0, 0])
        assertClose(cut([0.6, 0.25, 0.1, 0.05], p: 1), [0.6, 0.25, 0.1, 0.05])
        // A likely first class alone holds p: it becomes certain.
        assertClose(cut([0.9, 0.05, 0.05], p: 0.8), [1, 0, 0])
    }

    func testKeepingAClassCutsOnlyTheOthers() {
        // Class 0 keeps 0.6; the others (0.25, 0.1, 0.05 of 0.4: shares 0.625, 0.25, 0.125) are cut
        // at 0.7 to the first two (0.875 ≥ 0.7), which share 0.4 as 0.25 : 0.1.
        assertClose(cut([0.6, 0.25, 0.1, 0.05], p: 0.7, keeping: 0), [0.6, 0.4 * 0.25 / 0.35, 0.4 * 0.1 / 0.35, 0])
        // Unnormalised weights: the same.
        assertClose(cut([6, 2.5, 1, 0.5], p: 0.7, keeping: 0), [0.6, 0.4 * 0.25 / 0.35, 0.4 * 0.1 / 0.35, 0])
        // Where plain top-p would leave only the kept class (0.9 ≥ 0.8), the likeliest other stays.
        assertClose(cut([0.9, 0.05, 0.03, 0.02], p: 0.8, keeping: 0), [0.9, 0.1 * 0.05 / 0.08, 0.1 * 0.03 / 0.08, 0])
        // The kept class in the middle: the others' shares are 0.4 and 0.6, and 0.6 alone holds 0.5.
        assertClose(cut([0.2, 0.5, 0.3], p: 0.5, keeping: 1), [0, 0.5, 0.5])
        // p = 1 changes nothing; nothing else possible: the kept class is certain.
        assertClose(cut([0.2, 0.5, 0.3], p: 1, keeping: 1), [0.2, 0.5, 0.3])
        assertClose(cut([0, 3, 0], p: 0.5, keeping: 1), [0, 1, 0])
    }
}
