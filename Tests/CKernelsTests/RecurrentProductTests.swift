// CKernels' AVX-512 product against a double-precision loop, over shapes whose
// rows and columns do not fill the kernel's 8 × 32 tiles, with and without
// accumulation, and with leading dimensions larger than the widths; its packed-panel
// form against the in-place one (the same bits), W packed as is and transposed.
import CKernels
import XCTest

final class RecurrentProductTests: XCTestCase {
    func testMatchesNaiveProductOnRaggedShapes() throws {
        try XCTSkipUnless(drummer_kernels_have_avx512() != 0, "this CPU has no AVX-512: the kernel is not used here")
        var rng = UniformFloats(seed: 0x9E37_79B9_7F4A_7C15)
        func uniform() -> Float { rng.next() }
        var cases = 0
        for M in [1, 7, 8, 9, 17, 32] {
            for N in [1, 15, 16, 17, 31, 32, 33, 200, 800] {
                for K in [1, 5, 200] {
                    for accumulate in [false, true] {
                        let lda = K + 3, ldw = N + 5, ldc = N + 2
                        let A = (0..<(M * lda)).map { _ in uniform() }
                        let W = (0..<(K * ldw)).map { _ in uniform() }
                        let C0 = (0..<(M * ldc)).map { _ in uniform() }
                        var C = C0
                        C.withUnsafeMutableBufferPointer { c in
                            drummer_gemm_avx512(Int32(M), Int32(N), Int32(K), A, Int32(lda), W, Int32(ldw),
                                                c.baseAddress, Int32(ldc), accumulate ? 1 : 0)
                        }
                        for m in 0..<M {
                            for n in 0..<ldc {
                                let got = C[m * ldc + n]
                                guard n < N else {
                                    XCTAssertEqual(got, C0[m * ldc + n], "M=\(M) N=\(N) K=\(K): column \(n) past N was written")
                                    continue
                                }
                                var want = accumulate ? Double(C0[m * ldc + n]) : 0
                                for k in 0..<K { want += Double(A[m * lda + k]) * Double(W[k * ldw + n]) }
                                // float32 sums of K products of size ≤ 0.25: error ≲ K·2⁻²⁴.
                                XCTAssertEqual(Double(got), want, accuracy: 1e-6 * Double(K + 1),
                                               "M=\(M) N=\(N) K=\(K) acc=\(accumulate) at (\(m), \(n))")
                            }
                        }
                        cases += 1
                    }
                }
            }
        }
        XCTAssertEqual(cases, 6 * 9 * 3 * 2)
    }

    func testPanelsGiveTheInPlaceProductsBits() throws {
        try XCTSkipUnless(drummer_kernels_have_avx512() != 0, "this CPU has no AVX-512: the kernel is not used here")
        var rng = UniformFloats(seed: 0x2545_F491_4F6C_DD1D)
        func uniform() -> Float { rng.next() }
        var cases = 0
        for M in [1, 8, 9, 16, 17] {
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
                                drummer_gemm_avx512(Int32(M), Int32(N), Int32(K), A, Int32(lda), W, Int32(N),
                                                    c.baseAddress, Int32(ldc), accumulate ? 1 : 0)
                            }
                            packed.withUnsafeMutableBufferPointer { c in
                                drummer_gemm_avx512_panels(Int32(M), Int32(N), Int32(K), A, Int32(lda), panels,
                                                           c.baseAddress, Int32(ldc), accumulate ? 1 : 0)
                            }
                            let first = zip(packed, inPlace).enumerated().first {
                                $0.element.0.bitPattern != $0.element.1.bitPattern
                            }
                            XCTAssertNil(first.map { "float \($0.offset): \($0.element.0), in place \($0.element.1)" },
                                         "M=\(M) N=\(N) K=\(K) transposed=\(transposed) acc=\(accumulate)")
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
        XCTAssertEqual(cases, 5 * 7 * 3 * 2 * 2)
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
