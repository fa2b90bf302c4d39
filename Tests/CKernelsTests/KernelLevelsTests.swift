// Every instruction-set level of the elementwise kernels that this CPU runs (the baseline,
// AVX2 and AVX-512 tables), on the same operands: the adds-only kernels (input block,
// scatter, accumulate) and Adam (no contraction) give the same bits at every level; the cell
// and softmax kernels the same bits at AVX2 and AVX-512 (both contract the same products into
// FMAs and neither reorders a sum) and, at the baseline (no FMA), values within float32
// rounding of them. A CPU runs one level unless DRUMMER_MAX_ISA lowers it: these tests are
// where the levels it does not pick are checked.
import CKernels
import XCTest

final class KernelLevelsTests: XCTestCase {
    /// The levels this CPU runs, lowest first, as (name, table).
    private var levels: [(String, drummer_kernel_table)] {
        [(Int32(DRUMMER_ISA_BASELINE), "baseline"), (Int32(DRUMMER_ISA_AVX2), "avx2"),
         (Int32(DRUMMER_ISA_AVX512), "avx512")].compactMap { isa, name in
            drummer_kernels_table(isa).map { (name, $0.pointee) }
        }
    }

    private func floats(_ n: Int, seed: UInt64, scale: Float = 1) -> [Float] {
        var rng = UniformFloats(seed: seed)
        return (0..<n).map { _ in scale * 2 * rng.next() }
    }

    private func assertBits(_ a: [Float], _ b: [Float], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, what, file: file, line: line)
        let first = zip(a, b).enumerated().first { $0.element.0.bitPattern != $0.element.1.bitPattern }
        XCTAssertNil(first.map { "float \($0.offset): \($0.element.0) against \($0.element.1)" }, what, file: file, line: line)
    }

    private func assertClose(_ a: [Float], _ b: [Float], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, what, file: file, line: line)
        let worst = zip(a, b).map { abs($0 - $1) / max(1, abs($1)) }.max() ?? 0
        XCTAssertLessThan(worst, 2e-6, what, file: file, line: line)
    }

    func testTheLevelsThisCPURuns() {
        // Every x86-64 CPU runs the baseline; the active level is one of those listed.
        XCTAssertEqual(levels.first?.0, "baseline")
        XCTAssertLessThanOrEqual(drummer_kernels_isa(), drummer_kernels_cpu_isa())
        XCTAssertNotNil(drummer_kernels_table(drummer_kernels_isa()))
        XCTAssertNil(drummer_kernels_table(drummer_kernels_cpu_isa() + 1), "a level above the CPU's")
        XCTAssertNil(drummer_kernels_table(-1))
        XCTAssertEqual(levels.last.map { $0.1.isa }, drummer_kernels_cpu_isa())
        XCTAssertEqual(drummer_kernels_table(Int32(DRUMMER_ISA_BASELINE))?.pointee.gemm == nil, true,
                       "the baseline level leaves the product to OpenBLAS")
    }

    func testAddsOnlyKernelsAdamAndDropoutRowsGiveTheSameBitsAtEveryLevel() throws {
        let levels = self.levels
        try XCTSkipIf(levels.count < 2, "this CPU runs one level only")
        let n = 1_000, wrows = 37, k = 5, count = 23  // n: 7 whole 128-column tiles and a tail
        let w = floats(wrows * n, seed: 1), bias = floats(n, seed: 2), x = floats(count * n, seed: 3)
        var rowsRNG = UniformFloats(seed: 4)
        let rows = (0..<(count * k)).map { _ in Int32(Float(wrows) * (rowsRNG.next() + 0.5)) % Int32(wrows) }
        var start = [Int32](repeating: 0, count: wrows + 1), order = [Int32](repeating: 0, count: count * k)
        drummer_scatter_rows_order(Int32(count), rows, Int32(k), Int32(wrows), &start, &order)
        let g = floats(10_007, seed: 5, scale: 8), p0 = floats(10_007, seed: 6), m0 = floats(10_007, seed: 7, scale: 0.1)
        let v0 = floats(10_007, seed: 8, scale: 0.01).map { abs($0) }
        var results: [(String, [[Float]])] = []
        for (name, t) in levels {
            var block = [Float](repeating: 0, count: n), hinted = block, next = bias
            t.input_block(Int32(n), w, rows, Int32(k), bias, &block, nil)
            // The prefetch hint (another row to be written) changes nothing and writes nothing.
            t.input_block(Int32(n), w, rows, Int32(k), bias, &hinted, &next)
            assertBits(hinted, block, "\(name): input block with a prefetch hint")
            assertBits(next, bias, "\(name): the hinted row untouched")
            var y = w
            t.scatter_rows(Int32(n), x, Int32(wrows), start, order, &y, 0)
            var acc = bias
            t.accumulate(Int32(n), x, &acc)
            var mask = [Float](repeating: .nan, count: n)
            t.dropout_row(Int32(n), 0x1234_5678_9ABC_DEF0, 5_033_165, 1 / 0.7, &mask)
            var (p, m, v) = (p0, m0, v0)
            for step in 0..<3 {
                // The last step with an addend (the sum read where the gradient is).
                m0.withUnsafeBufferPointer { addend in
                    t.adam(p.count, &p, g, step == 2 ? addend.baseAddress : nil, &m, &v, 0.002, -5, 5, 0.9, 0.999, 0.1,
                           0.001, 0.271, 0.003, 1e-8)
                }
            }
            // a − b into a third buffer, then in place (out = a).
            var difference = [Float](repeating: .nan, count: n), inPlace = bias
            t.difference(Int32(n), bias, x, &difference)
            inPlace.withUnsafeMutableBufferPointer { t.difference(Int32(n), $0.baseAddress, x, $0.baseAddress) }
            XCTAssertEqual(difference.map(\.bitPattern), (0..<n).map { (bias[$0] - x[$0]).bitPattern }, "difference: \(name)")
            XCTAssertEqual(inPlace.map(\.bitPattern), difference.map(\.bitPattern), "difference in place: \(name)")
            results.append((name, [block, y, acc, p, m, v, mask, difference]))
        }
        let what = ["input block", "scatter", "accumulate", "Adam parameters", "Adam first moments", "Adam second moments",
                    "dropout row", "difference"]
        for (name, r) in results.dropFirst() {
            for (i, label) in what.enumerated() { assertBits(r[i], results[0].1[i], "\(label): \(name) against baseline") }
        }
        // Not vacuous: the scatter and Adam changed what they were given.
        XCTAssertNotEqual(results[0].1[1], w)
        XCTAssertNotEqual(results[0].1[3], p0)
        // P = 0.3 (threshold 0.3 · 2^24): about 30% of the units dropped, the rest 1/0.7.
        let mask = results[0].1[6], dropped = mask.filter { $0 == 0 }.count
        XCTAssertEqual(Double(dropped) / Double(mask.count), 0.3, accuracy: 0.08)
        XCTAssertTrue(mask.allSatisfy { $0 == 0 || $0 == 1 / Float(0.7) })
    }

    /// The trainer writes the gate gradients over the activations: at every level the CPU runs,
    /// the in-place backward gives the bits of the backward into a separate buffer, for widths
    /// of whole 16-unit lanes (256), lanes and a tail (200) and a tail only (7).
    func testCellBackwardInPlaceGivesTheSeparateBuffersBits() {
        for (name, t) in levels {
            for H in [256, 200, 7] {
                let G = 4 * H
                var acts = floats(G, seed: 21, scale: 6)
                let cPrev = floats(H, seed: 22, scale: 3), dhOut = floats(H, seed: 23), dhNext = floats(H, seed: 24)
                let dc0 = floats(H, seed: 25)
                var cNew = [Float](repeating: 0, count: H), tanhC = cNew, h = cNew
                t.cell_forward(Int32(H), &acts, cPrev, &cNew, &tanhC, &h)
                var dc = dc0, dGates = [Float](repeating: .nan, count: G)
                t.cell_backward(Int32(H), acts, cPrev, tanhC, dhOut, dhNext, &dc, &dGates, nil)
                var dcInPlace = dc0, inPlace = acts
                inPlace.withUnsafeMutableBufferPointer { p in
                    t.cell_backward(Int32(H), p.baseAddress, cPrev, tanhC, dhOut, dhNext, &dcInPlace, p.baseAddress, nil)
                }
                // The prefetch hint (another row's activations) changes nothing and writes nothing.
                let next = floats(G, seed: 26)
                var dcHinted = dc0, hinted = [Float](repeating: .nan, count: G)
                t.cell_backward(Int32(H), acts, cPrev, tanhC, dhOut, dhNext, &dcHinted, &hinted, next)
                assertBits(hinted, dGates, "\(name), H = \(H): gate gradients with a prefetch hint")
                assertBits(dcHinted, dc, "\(name), H = \(H): dc with a prefetch hint")
                assertBits(next, floats(G, seed: 26), "\(name), H = \(H): the hinted row untouched")
                assertBits(inPlace, dGates, "\(name), H = \(H): gate gradients in place")
                assertBits(dcInPlace, dc, "\(name), H = \(H): dc in place")
                XCTAssertFalse(dGates.contains { $0.isNaN }, "\(name), H = \(H): every gradient written")
                XCTAssertNotEqual(inPlace, acts, "\(name), H = \(H): the activations were overwritten")
            }
        }
    }

    func testCellAndSoftmaxKernelsAgreeAcrossLevels() throws {
        let levels = self.levels
        try XCTSkipIf(levels.count < 2, "this CPU runs one level only")
        let H = 200, G = 4 * H
        let gates0 = floats(G, seed: 11, scale: 6), cPrev = floats(H, seed: 12, scale: 3)
        let dhOut = floats(H, seed: 13), dhNext = floats(H, seed: 14), dc0 = floats(H, seed: 15)
        let logits0 = floats(226, seed: 16, scale: 10)
        var results: [(String, [[Float]])] = []
        for (name, t) in levels {
            var gates = gates0, cNew = [Float](repeating: 0, count: H), tanhC = cNew, h = cNew
            t.cell_forward(Int32(H), &gates, cPrev, &cNew, &tanhC, &h)
            var dc = dc0, dGates = [Float](repeating: 0, count: G)
            t.cell_backward(Int32(H), gates, cPrev, tanhC, dhOut, dhNext, &dc, &dGates, nil)
            var y1 = logits0, y2 = logits0
            let nll = t.negative_log_likelihood(&y1, 17, 3)
            let ce = t.softmax_cross_entropy(&y2, 226, 100, 0.25)
            results.append((name, [gates, cNew, tanhC, h, dc, dGates, y1, y2, [nll, ce]]))
        }
        let reference = results.last!
        for (name, r) in results.dropLast() {
            for i in r.indices {
                if name == "baseline" {
                    assertClose(r[i], reference.1[i], "output \(i): baseline against \(reference.0)")
                } else {
                    assertBits(r[i], reference.1[i], "output \(i): \(name) against \(reference.0)")
                }
            }
        }
        XCTAssertNotEqual(reference.1[0], gates0, "the forward kernel wrote its activations")
    }
}
