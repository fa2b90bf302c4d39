// Vectorised exp, sigmoid and tanh on float32 buffers, in place: the C kernels of
// CKernels (Cephes polynomials, about 2 ulp; compiled for AVX-512, AVX2 + FMA and
// the baseline, the best one picked at load time).
import CKernels

enum FastMath {
    static func exp(_ x: UnsafeMutablePointer<Float>, count n: Int) { drummer_exp(x, Int32(n)) }
    static func sigmoid(_ x: UnsafeMutablePointer<Float>, count n: Int) { drummer_sigmoid(x, Int32(n)) }
    static func tanh(_ x: UnsafeMutablePointer<Float>, count n: Int) { drummer_tanh(x, Int32(n)) }
}
