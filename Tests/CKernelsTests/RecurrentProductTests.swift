// CKernels' AVX-512 product against a double-precision loop, over shapes whose
// rows and columns do not fill the kernel's 8 × 32 tiles, with and without
// accumulation, and with leading dimensions larger than the widths.
import CKernels
import XCTest

final class RecurrentProductTests: XCTestCase {
    func testMatchesNaiveProductOnRaggedShapes() throws {
        try XCTSkipUnless(drummer_kernels_have_avx512() != 0, "this CPU has no AVX-512: the kernel is not used here")
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func uniform() -> Float {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(seed >> 40) / Float(1 << 24) - 0.5
        }
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
}
