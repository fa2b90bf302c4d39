// CKernels' products (AVX-512 and AVX2, each where this CPU runs it) against a
// double-precision loop, over shapes whose rows and columns do not fill the kernels'
// tiles (8 × 32, 6 × 16), with and without accumulation, and with leading dimensions
// larger than the widths; the packed-panel form against the in-place one (the same
// bits), W packed as is and transposed; and the two levels against each other (the same
// bits: the same FMA chains).
import CKernels
import XCTest

/// The levels with a product this CPU runs, as (name, table).
func productLevels() -> [(String, drummer_kernel_table)] {
    [(Int32(DRUMMER_ISA_AVX2), "avx2"), (Int32(DRUMMER_ISA_AVX512), "avx512")].compactMap { isa, name in
        guard let t = drummer_kernels_table(isa), t.pointee.gemm != nil else { return nil }
        return (name, t.pointee)
    }
}

final class RecurrentProductTests: XCTestCase {
    func testMatchesNaiveProductOnRaggedShapes() throws {
        let levels = productLevels()
        try XCTSkipIf(levels.isEmpty, "this CPU has neither AVX2 nor AVX-512: the products are OpenBLAS's here")
        for (name, table) in levels { try matchesNaiveProduct(name, table) }
    }

    private func matchesNaiveProduct(_ level: String, _ table: drummer_kernel_table) throws {
        var rng = UniformFloats(seed: 0x9E37_79B9_7F4A_7C15)
        func uniform() -> Float { rng.next() }
        var cases = 0
        for M in [1, 5, 6, 7, 8, 9, 13, 17, 32] {
            for N in [1, 15, 16, 17, 31, 32, 33, 200, 800] {
                for K in [1, 5, 200] {
                    for accumulate in [false, true] {
                        let lda = K + 3, ldw = N + 5, ldc = N + 2
                        let A = (0..<(M * lda)).map { _ in uniform() }
                        let W = (0..<(K * ldw)).map { _ in uniform() }
                        let C0 = (0..<(M * ldc)).map { _ in uniform() }
                        var C = C0
                        C.withUnsafeMutableBufferPointer { c in
                            table.gemm!(Int32(M), Int32(N), Int32(K), A, Int32(lda), W, Int32(ldw), c.baseAddress,
                                       Int32(ldc), accumulate ? 1 : 0)
                        }
                        for m in 0..<M {
                            for n in 0..<ldc {
                                let got = C[m * ldc + n]
                                guard n < N else {
                                    XCTAssertEqual(got, C0[m * ldc + n], "\(level) M=\(M) N=\(N) K=\(K): column \(n) past N was written")
                                    continue
                                }
                                var want = accumulate ? Double(C0[m * ldc + n]) : 0
                                for k in 0..<K { want += Double(A[m * lda + k]) * Double(W[k * ldw + n]) }
                                // float32 sums of K products of size ≤ 0.25: error ≲ K·2⁻²⁴.
                                XCTAssertEqual(Double(got), want, accuracy: 1e-6 * Double(K + 1),
                                               "\(level) M=\(M) N=\(N) K=\(K) acc=\(accumulate) at (\(m), \(n))")
                            }
                        }
                        cases += 1
                    }
                }
            }
        }
        XCTAssertEqual(cases, 9 * 9 * 3 * 2)
    }

    func testPanelsGiveTheInPlaceProductsBits() throws {
        let levels = productLevels()
        try XCTSkipIf(levels.isEmpty, "this CPU has neither AVX2 nor AVX-512: the products are OpenBLAS's here")
        for (name, table) in levels { try panelsGiveInPlaceBits(name, table) }
    }

    private func panelsGiveInPlaceBits(_ level: String, _ table: drummer_kernel_table) throws {
        var rng = UniformFloats(seed: 0x2545_F491_4F6C_DD1D)
        func uniform() -> Float { rng.next() }
        var cases = 0
        for M in [1, 6, 8, 9, 16, 17] {
            for N in [1, 16, 17, 32, 33, 200, 256] {
                for K in [1, 5, 200] {
                    for transposed in [false, true] {
                        let lda = K + 3, ldc = N + 2
                        // The operand W (K×N): in place with ldw = N + 5, or as Sᵀ for S (N×K, lds = K + 7).
                        let ld = transposed ? K + 7 : N + 5
                        let S = (0..<((transposed ? N : K) * ld)).map { _ in uniform() }
                        func w(_ k: Int, _ n: Int) -> Float { transposed ? S[n * ld + k] : S[k * ld + n] }
                        var W = [Float](repeating: 0, count: K * N)
                        for k in 0..<K { for n in 0..<N { W[k * N + n] = w(k, n) } }
                        let A = (0..<(M * lda)).map { _ in uniform() }
                        let C0 = (0..<(M * ldc)).map { _ in uniform() }
                        var panels = [Float](repeating: .nan, count: (N + 31) / 32 * 32 * K)
                        panels.withUnsafeMutableBufferPointer { p in
                            drummer_pack_panels(Int32(K), Int32(N), S, Int32(ld), transposed ? 1 : 0, p.baseAddress)
                        }
                        XCTAssertFalse(panels.contains { $0.isNaN }, "K=\(K) N=\(N): a panel float was not written")
                        for accumulate in [false, true] {
                            var inPlace = C0, packed = C0
                            inPlace.withUnsafeMutableBufferPointer { c in
                                table.gemm!(Int32(M), Int32(N), Int32(K), A, Int32(lda), W, Int32(N),
                                                    c.baseAddress, Int32(ldc), accumulate ? 1 : 0)
                            }
                            packed.withUnsafeMutableBufferPointer { c in
                                table.gemm_panels!(Int32(M), Int32(N), Int32(K), A, Int32(lda), panels,
                                                           c.baseAddress, Int32(ldc), accumulate ? 1 : 0)
                            }
                            let first = zip(packed, inPlace).enumerated().first {
                                $0.element.0.bitPattern != $0.element.1.bitPattern
                            }
                            XCTAssertNil(first.map { "float \($0.offset): \($0.element.0), in place \($0.element.1)" },
                                         "\(level) M=\(M) N=\(N) K=\(K) transposed=\(transposed) acc=\(accumulate)")
                            // And the product itself (the in-place kernel is checked above; this
                            // catches a pack that fed both the same wrong operand).
                            for m in 0..<M {
                                for n in 0..<N {
                                    var want = accumulate ? Double(C0[m * ldc + n]) : 0
                                    for k in 0..<K { want += Double(A[m * lda + k]) * Double(w(k, n)) }
                                    XCTAssertEqual(Double(packed[m * ldc + n]), want, accuracy: 1e-6 * Double(K + 1))
                                }
                            }
                            cases += 1
                        }
                    }
                }
            }
        }
        XCTAssertEqual(cases, 6 * 7 * 3 * 2 * 2)
    }

    /// The AVX2 product gives the AVX-512 one's bits, so that a run's results do not depend on
    /// which of the two its CPU has (the elementwise kernels: KernelLevelsTests).
    func testAVX2AndAVX512GiveTheSameBits() throws {
        let levels = productLevels()
        try XCTSkipUnless(levels.count == 2, "this CPU has no AVX-512: only one product level runs here")
        var rng = UniformFloats(seed: 0x5851_F42D_4C95_7F2D)
        var cases = 0
        for (M, N, K) in [(16, 1024, 256), (16, 256, 1024), (13, 800, 200), (9, 33, 7), (32, 710, 256)] {
            let lda = K + 1, ldc = N + 3
            let A = (0..<(M * lda)).map { _ in rng.next() }
            let W = (0..<(K * N)).map { _ in rng.next() }
            let C0 = (0..<(M * ldc)).map { _ in rng.next() }
            var panels = [Float](repeating: 0, count: (N + 31) / 32 * 32 * K)
            panels.withUnsafeMutableBufferPointer { drummer_pack_panels(Int32(K), Int32(N), W, Int32(N), 0, $0.baseAddress) }
            for accumulate in [false, true] {
                let results = levels.map { _, table in
                    var inPlace = C0, packed = C0
                    inPlace.withUnsafeMutableBufferPointer { c in
                        table.gemm!(Int32(M), Int32(N), Int32(K), A, Int32(lda), W, Int32(N), c.baseAddress, Int32(ldc),
                                   accumulate ? 1 : 0)
                    }
                    packed.withUnsafeMutableBufferPointer { c in
                        table.gemm_panels!(Int32(M), Int32(N), Int32(K), A, Int32(lda), panels, c.baseAddress,
                                          Int32(ldc), accumulate ? 1 : 0)
                    }
                    return (inPlace.map(\.bitPattern), packed.map(\.bitPattern))
                }
                XCTAssertEqual(results[0].0, results[1].0, "in place M=\(M) N=\(N) K=\(K) acc=\(accumulate)")
                XCTAssertEqual(results[0].1, results[1].1, "panels M=\(M) N=\(N) K=\(K) acc=\(accumulate)")
                XCTAssertNotEqual(results[0].0, C0.map(\.bitPattern), "the product wrote nothing")
                cases += 1
            }
        }
        XCTAssertEqual(cases, 10)
    }
}

/// Floats in [−0.5, 0.5) from a 64-bit LCG: the same operands on every run.
struct UniformFloats {
    var seed: UInt64

    mutating func next() -> Float {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Float(seed >> 40) / Float(1 << 24) - 0.5
    }
}
