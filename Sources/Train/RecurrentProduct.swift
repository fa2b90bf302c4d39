// The two sequential products of the LSTM layer, (1) a_t += h_{t−1}·W_rec and (1')
// dhNext = da_t·W_recᵀ (see LSTMLayer.swift), and the one choice of how to compute them:
//   - OpenBLAS: a GEMV for one row (B = 1), a GEMM for more;
//   - CKernels' own kernel (AVX-512 or AVX2 + FMA, from 8 rows): W_rec and its transpose,
//     packed once per chunk into the kernel's 32-column panels (once a step for two stream
//     groups, which share them: Trainer), are read from cache on each of the 2U calls of a
//     chunk, where OpenBLAS re-packs its operand on every call (why panels: CKernels'
//     gemm_tiles).
// Both give the same results up to float32 rounding; a run is bitwise reproducible with
// the same choice. `drummer bench train` (mode helper-openblas) compares them.
import DrummerCore

struct RecurrentProduct {
    enum Kernel: Sendable, Equatable {
        case openBLAS
        /// CKernels' product at the level in use (Kernels.isa: AVX-512 or AVX2).
        case own
    }

    /// Which operand multiplies the rows: W_rec (H×G) or its transpose (G×H).
    enum Operand {
        case weights
        case transposedWeights
    }

    /// Below this many rows the kernel's 8-row tiles are mostly empty and OpenBLAS is faster
    /// (H = 200 on a Zen 4: OpenBLAS 42–109 GFLOP/s at 1–4 rows against 13–37; from 8 rows the
    /// kernel 98–104 against 45–90).
    static let ownMinimumRows = 8

    /// The faster kernel for `rows` rows on this CPU.
    static func defaultKernel(rows: Int) -> Kernel {
        Kernels.haveGEMM && rows >= ownMinimumRows ? .own : .openBLAS
    }

    let kernel: Kernel
    let H: Int, G: Int
    /// The own kernel's operands, W_rec (H×G) for (1) and W_recᵀ (G×H) for (1'), in its
    /// 32-column panels; refreshed by `refreshPanels` once per chunk. Buffers, not values: a
    /// copy of this product shares them (two stream groups' layers do).
    private let panels: FloatBuffer, transposedPanels: FloatBuffer

    /// `kernel` falls back to OpenBLAS where the kernels have no product (the baseline level).
    init(kernel: Kernel, hidden: Int) {
        self.kernel = Kernels.haveGEMM ? kernel : .openBLAS
        H = hidden
        G = 4 * hidden
        let own = self.kernel == .own
        panels = FloatBuffer(count: own ? Kernels.panelFloats(k: H, n: G) : 0)
        transposedPanels = FloatBuffer(count: own ? Kernels.panelFloats(k: G, n: H) : 0)
    }

    /// Whether `refreshPanels` must run before each chunk's products.
    var needsPanels: Bool { kernel == .own }

    /// Packs W_rec (`.weights`, for the forward products) or W_recᵀ (`.transposedWeights`, for
    /// the backward ones) out of the parameters (the floats `recurrent` of a layer's Wx).
    func refreshPanels(_ operand: Operand, of params: FloatBuffer, at recurrent: Range<Int>) {
        guard needsPanels else { return }
        let rec = params.buffer(recurrent.lowerBound, H * G)
        switch operand {
        case .weights:
            Kernels.packPanels(k: H, n: G, w: rec, ldw: G, transposed: false, into: panels.mutable(0, panels.count))
        case .transposedWeights:
            Kernels.packPanels(k: G, n: H, w: rec, ldw: G, transposed: true,
                               into: transposedPanels.mutable(0, transposedPanels.count))
        }
    }

    /// out (+)= a · op: `a` is rows×H for `.weights` (out rows×G) and rows×G for
    /// `.transposedWeights` (out rows×H); W_rec is the floats `recurrent` of `params`.
    func multiply(rows: Int, _ a: UnsafeBufferPointer<Float>, by operand: Operand, of params: FloatBuffer,
                  at recurrent: Range<Int>, into out: UnsafeMutableBufferPointer<Float>, accumulate: Bool) {
        precondition(recurrent.count == H * G, "RecurrentProduct: W_rec is H×G")
        let rec = params.buffer(recurrent.lowerBound, H * G)
        let (inner, width) = operand == .weights ? (H, G) : (G, H)
        precondition(a.count == rows * inner && out.count == rows * width, "RecurrentProduct: buffer sizes")
        let beta: Float = accumulate ? 1 : 0
        switch (kernel, operand) {
        case (.own, .weights):
            Kernels.gemm(m: rows, n: G, k: H, a: a, lda: H, panels: panels.buffer(0, panels.count), c: out,
                         ldc: G, accumulate: accumulate)
        case (.own, .transposedWeights):
            Kernels.gemm(m: rows, n: H, k: G, a: a, lda: G, panels: transposedPanels.buffer(0, transposedPanels.count),
                         c: out, ldc: H, accumulate: accumulate)
        case (.openBLAS, _) where rows == 1:
            // One row: out = op·a as a GEMV on W_rec stored H×G.
            BLAS.sgemv(operand == .weights ? .transposed : .none, rows: H, cols: G, alpha: 1, a: rec, lda: G,
                       x: a, beta: beta, y: out)
        case (.openBLAS, .weights):
            BLAS.sgemm(.none, .none, m: rows, n: G, k: H, alpha: 1, a: a, lda: H, b: rec, ldb: G, beta: beta,
                       c: out, ldc: G)
        case (.openBLAS, .transposedWeights):
            BLAS.sgemm(.none, .transposed, m: rows, n: H, k: G, alpha: 1, a: a, lda: G, b: rec, ldb: G, beta: beta,
                       c: out, ldc: H)
        }
    }
}
