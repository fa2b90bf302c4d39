// The scatter-add of layer 0's input gradient, sorted by destination row, against one
// accumulate per (row, group) pair in row order: the same bits, every destination row; and its
// overwriting form against zeroing first; entries of −1 (no pair) are passed over.
import CKernels
import XCTest

final class ScatterRowsTests: XCTestCase {
    func testSortedScatterAddsInTheOrderOfThePairs() {
        var seed: UInt64 = 0x5851_F42D_4C95_7F2D
        func next(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        func uniform() -> Float { Float(next(1 << 24)) / Float(1 << 24) - 0.5 }
        var cases = 0
        // n: row widths around the kernel's 256-column slices; groups of few classes, so that
        // destination rows repeat many times within a block (as the grid's position and style do).
        for n in [1, 7, 256, 300, 1024] {
            for (count, groupSizes) in [(1, [3]), (5, [2, 3]), (128, [16, 8, 29, 3, 513])] {
              for skips in [false, true] {
                let k = groupSizes.count, wrows = groupSizes.reduce(0, +)
                let offsets = groupSizes.indices.map { groupSizes[..<$0].reduce(0, +) }
                // skips: about a third of the entries are −1 (layer 0's reference classes).
                let rows = (0..<(count * k)).map { skips && next(3) == 0 ? -1 : Int32(offsets[$0 % k] + next(groupSizes[$0 % k])) }
                let pairs = rows.filter { $0 >= 0 }.count
                let x = (0..<(count * n)).map { _ in uniform() }
                let y0 = (0..<(wrows * n)).map { _ in uniform() }
                var want = y0
                want.withUnsafeMutableBufferPointer { y in
                    for r in 0..<count {
                        for g in 0..<k {
                            let w = Int(rows[r * k + g])
                            if w < 0 { continue }
                            for j in 0..<n { y[w * n + j] += x[r * n + j] }
                        }
                    }
                }
                var got = y0
                var start = [Int32](repeating: -1, count: wrows + 1), order = [Int32](repeating: -1, count: count * k)
                drummer_scatter_rows_order(Int32(count), rows, Int32(k), Int32(wrows), &start, &order)
                XCTAssertEqual(start.first, 0)
                XCTAssertEqual(start.last, Int32(pairs))
                drummer_scatter_rows(Int32(n), x, Int32(wrows), start, order, &got, 0)
                let first = zip(got, want).enumerated().first { $0.element.0.bitPattern != $0.element.1.bitPattern }
                XCTAssertNil(first.map { "float \($0.offset): \($0.element.0), one by one \($0.element.1)" },
                             "n=\(n) rows=\(count) groups=\(groupSizes)")
                // overwrite: y zeroed, then the same adds; y's old values (NaN here) never read.
                var zeroed = [Float](repeating: 0, count: wrows * n), over = [Float](repeating: .nan, count: wrows * n)
                drummer_scatter_rows(Int32(n), x, Int32(wrows), start, order, &zeroed, 0)
                drummer_scatter_rows(Int32(n), x, Int32(wrows), start, order, &over, 1)
                XCTAssertEqual(over.map(\.bitPattern), zeroed.map(\.bitPattern), "overwrite n=\(n) rows=\(count) groups=\(groupSizes)")
                if skips, count == 128 { XCTAssertLessThan(pairs, count * k * 3 / 4, "about a third skipped") }
                cases += 1
              }
            }
        }
        XCTAssertEqual(cases, 30)
    }
}
