// Size-checked Swift entry points to CKernels, the C loops of the LSTM layer (see
// Sources/CKernels/include/drummer_kernels.h; each is compiled per instruction set and
// picked at load time). Every call here checks the buffer sizes against H, G or n before
// handing raw pointers to C. H = hidden size, G = 4H (gate blocks f, i, o, g).
import CKernels

package enum Kernels {
    /// Input block of one step (the one-hot input times Wx, plus the bias):
    /// out[j] = Σ_q wx[rows[q]·G + j] + bias[j], q < rows.count, in that order.
    /// `wx` holds whole rows of G floats; every row index must be one of them. `next` (G floats
    /// written soon) is prefetched for writing as out is written: a hint, no effect on any value.
    @inline(__always)
    package static func inputBlock(wx: UnsafeBufferPointer<Float>, G: Int, rows: UnsafeBufferPointer<Int32>,
                                   bias: UnsafeBufferPointer<Float>, out: UnsafeMutableBufferPointer<Float>,
                                   prefetching next: UnsafeMutableBufferPointer<Float>? = nil) {
        precondition(G > 0 && wx.count % G == 0 && bias.count == G && out.count == G && !rows.isEmpty
                     && (next == nil || next!.count == G), "Kernels.inputBlock: buffer sizes")
        let n = wx.count / G
        for r in rows { precondition(r >= 0 && Int(r) < n, "Kernels.inputBlock: row \(r) outside 0..<\(n)") }
        drummer_input_block(Int32(G), wx.baseAddress, rows.baseAddress, Int32(rows.count), bias.baseAddress,
                            out.baseAddress, next?.baseAddress)
    }

    /// The scatter-add y[rows[r·k + g]] += x[r] (rows of G floats) for every r < rows.count / k
    /// and g < k, in that order (the same bits as one `accumulate` per pair), with each y row read
    /// and written once: `start` (y's rows + 1) and `order` (rows.count) are scratch. A row index
    /// of −1 is no pair. `overwrite`: y's old values are not read, as if y had been zeroed first
    /// (the same bits).
    @inline(__always)
    package static func scatterRows(_ x: UnsafeBufferPointer<Float>, G: Int, rows: UnsafeBufferPointer<Int32>, k: Int,
                                    into y: UnsafeMutableBufferPointer<Float>, overwrite: Bool = false,
                                    start: UnsafeMutableBufferPointer<Int32>, order: UnsafeMutableBufferPointer<Int32>) {
        precondition(G > 0 && k > 0 && rows.count % k == 0 && x.count == rows.count / k * G && y.count % G == 0
                     && start.count == y.count / G + 1 && order.count >= rows.count, "Kernels.scatterRows: buffer sizes")
        let n = y.count / G
        for r in rows { precondition(r >= -1 && Int(r) < n, "Kernels.scatterRows: row \(r) outside 0..<\(n)") }
        drummer_scatter_rows_order(Int32(rows.count / k), rows.baseAddress, Int32(k), Int32(n), start.baseAddress,
                                   order.baseAddress)
        drummer_scatter_rows(Int32(G), x.baseAddress, Int32(n), start.baseAddress, order.baseAddress, y.baseAddress,
                             overwrite ? 1 : 0)
    }

    /// Cell forward. `gates` (G): pre-activations in, σ(f), σ(i), σ(o), tanh(g) out;
    /// cPrev (H) → cNew (H) = σ(f)·cPrev + σ(i)·tanh(g), tanhC (H) = tanh(cNew), hNew (H) = σ(o)·tanhC.
    /// cNew, tanhC and hNew must not overlap each other, gates or cPrev.
    @inline(__always)
    package static func cellForward(H: Int, gates: UnsafeMutableBufferPointer<Float>, cPrev: UnsafeBufferPointer<Float>,
                                    cNew: UnsafeMutableBufferPointer<Float>, tanhC: UnsafeMutableBufferPointer<Float>,
                                    hNew: UnsafeMutableBufferPointer<Float>) {
        precondition(gates.count == 4 * H && cPrev.count == H && cNew.count == H && tanhC.count == H && hNew.count == H,
                     "Kernels.cellForward: buffer sizes")
        drummer_cell_forward(Int32(H), gates.baseAddress, cPrev.baseAddress, cNew.baseAddress, tanhC.baseAddress,
                             hNew.baseAddress)
    }

    /// Cell backward. acts (G): the forward activations; dhOut + dhNext (H each) reach h_t;
    /// dc (H): in, the gradient reaching c_t from step t+1; out, the one reaching c_{t−1};
    /// dGates (G) receives the pre-activation gradients; it may be acts' memory (in place).
    /// `next` (G activations read soon) is prefetched as acts is read: a hint, no effect on any value.
    @inline(__always)
    package static func cellBackward(H: Int, acts: UnsafeBufferPointer<Float>, cPrev: UnsafeBufferPointer<Float>,
                                     tanhC: UnsafeBufferPointer<Float>, dhOut: UnsafeBufferPointer<Float>,
                                     dhNext: UnsafeBufferPointer<Float>, dc: UnsafeMutableBufferPointer<Float>,
                                     dGates: UnsafeMutableBufferPointer<Float>,
                                     prefetching next: UnsafeBufferPointer<Float>? = nil) {
        precondition(acts.count == 4 * H && cPrev.count == H && tanhC.count == H && dhOut.count == H
                     && dhNext.count == H && dc.count == H && dGates.count == 4 * H
                     && (next == nil || next!.count == 4 * H), "Kernels.cellBackward: buffer sizes")
        drummer_cell_backward(Int32(H), acts.baseAddress, cPrev.baseAddress, tanhC.baseAddress, dhOut.baseAddress,
                              dhNext.baseAddress, dc.baseAddress, dGates.baseAddress, next?.baseAddress)
    }

    /// One row of a dropout mask: out[j] = 0 when the top 24 bits of SplitMix64's finaliser of
    /// key ^ j are below `threshold`, else `keep` (Train/Dropout.swift's scale(row:unit:)).
    @inline(__always)
    package static func dropoutRow(key: UInt64, threshold: UInt32, keep: Float, out: UnsafeMutableBufferPointer<Float>) {
        if out.isEmpty { return }
        drummer_dropout_row(Int32(out.count), key, threshold, keep, out.baseAddress)
    }

    /// y += x, elementwise.
    @inline(__always)
    package static func accumulate(_ x: UnsafeBufferPointer<Float>, into y: UnsafeMutableBufferPointer<Float>) {
        precondition(x.count == y.count, "Kernels.accumulate: buffer sizes")
        if x.isEmpty { return }
        drummer_accumulate(Int32(x.count), x.baseAddress, y.baseAddress)
    }

    /// out = a − b, elementwise, over n floats; `out` may be `a` (in place), not `b`.
    @inline(__always)
    package static func difference(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>,
                                   count n: Int) {
        precondition(n >= 0 && n <= Int(Int32.max), "Kernels.difference: count")
        if n == 0 { return }
        drummer_difference(Int32(n), a, b, out)
    }

    /// −log softmax(y)[target]; overwrites y with exp(y − max y).
    @inline(__always)
    package static func negativeLogLikelihood(_ y: UnsafeMutableBufferPointer<Float>, target: Int) -> Float {
        precondition(target >= 0 && target < y.count, "Kernels.negativeLogLikelihood: target outside the logits")
        return drummer_negative_log_likelihood(y.baseAddress, Int32(y.count), Int32(target))
    }

    /// Cross-entropy of softmax(y) against `target`; replaces y by scale·(softmax(y) − onehot(target)).
    @inline(__always)
    package static func softmaxCrossEntropy(_ y: UnsafeMutableBufferPointer<Float>, target: Int, scale: Float) -> Float {
        precondition(target >= 0 && target < y.count, "Kernels.softmaxCrossEntropy: target outside the logits")
        return drummer_softmax_cross_entropy(y.baseAddress, Int32(y.count), Int32(target), scale)
    }

    /// The instruction-set level the kernels run at: the CPU's best, or a lower one the
    /// environment variable DRUMMER_MAX_ISA names.
    package static let isa = KernelISA(rawValue: Int(drummer_kernels_isa())) ?? .baseline

    /// The level DRUMMER_MAX_ISA names (avx512 when it is unset or empty), nil when it names no
    /// level (`KernelISA.settingError` says so).
    package static var isaSetting: KernelISA? { KernelISA(rawValue: Int(drummer_kernels_isa_setting())) }

    /// `drummer --version`'s line: "kernels: LEVEL", and the CPU's own when DRUMMER_MAX_ISA holds
    /// them lower.
    package static var versionLine: String {
        let cpu = KernelISA.cpu
        return isa < cpu ? "kernels: \(isa.name) (DRUMMER_MAX_ISA=\(isa.name); the CPU runs \(cpu.name))" : "kernels: \(isa.name)"
    }

    /// Whether the kernels' own product (`gemm`) runs here: at AVX2 and above.
    package static let haveGEMM = drummer_kernels_have_gemm() != 0

    /// C[M×N] = A[M×K]·W[K×N] (+ C when `accumulate`), row-major with leading dimensions lda, ldw,
    /// ldc; W is read in place (no packing). Requires `haveGEMM`.
    @inline(__always)
    package static func gemm(m: Int, n: Int, k: Int, a: UnsafeBufferPointer<Float>, lda: Int,
                             w: UnsafeBufferPointer<Float>, ldw: Int, c: UnsafeMutableBufferPointer<Float>,
                             ldc: Int, accumulate: Bool) {
        precondition(haveGEMM, "Kernels.gemm at the baseline level")
        precondition(m >= 1 && n >= 1 && k >= 1 && lda >= k && ldw >= n && ldc >= n
                     && a.count >= (m - 1) * lda + k && w.count >= (k - 1) * ldw + n && c.count >= (m - 1) * ldc + n,
                     "Kernels.gemm: buffer sizes")
        drummer_gemm(Int32(m), Int32(n), Int32(k), a.baseAddress, Int32(lda), w.baseAddress, Int32(ldw),
                     c.baseAddress, Int32(ldc), accumulate ? 1 : 0)
    }

    /// Floats of `packPanels`' layout for a K×N operand: ⌈N/32⌉ panels of K rows of 32.
    package static func panelFloats(k: Int, n: Int) -> Int { (n + 31) / 32 * 32 * k }

    /// Packs the K×N operand of `gemm(panels:)` into 32-column panels: W (K×N, ldw) itself,
    /// or with `transposed` Sᵀ for S = w (N×K, leading dimension ldw).
    @inline(__always)
    package static func packPanels(k: Int, n: Int, w: UnsafeBufferPointer<Float>, ldw: Int, transposed: Bool,
                                   into out: UnsafeMutableBufferPointer<Float>) {
        let (rows, cols) = transposed ? (n, k) : (k, n)
        precondition(k >= 1 && n >= 1 && ldw >= cols && w.count >= (rows - 1) * ldw + cols
                     && out.count == panelFloats(k: k, n: n), "Kernels.packPanels: buffer sizes")
        drummer_pack_panels(Int32(k), Int32(n), w.baseAddress, Int32(ldw), transposed ? 1 : 0, out.baseAddress)
    }

    /// `gemm` with W (K×N) packed by `packPanels`: the same sums, the same bits.
    @inline(__always)
    package static func gemm(m: Int, n: Int, k: Int, a: UnsafeBufferPointer<Float>, lda: Int,
                             panels: UnsafeBufferPointer<Float>, c: UnsafeMutableBufferPointer<Float>,
                             ldc: Int, accumulate: Bool) {
        precondition(haveGEMM, "Kernels.gemm at the baseline level")
        precondition(m >= 1 && n >= 1 && k >= 1 && lda >= k && ldc >= n && a.count >= (m - 1) * lda + k
                     && panels.count == panelFloats(k: k, n: n) && c.count >= (m - 1) * ldc + n,
                     "Kernels.gemm(panels:): buffer sizes")
        drummer_gemm_panels(Int32(m), Int32(n), Int32(k), a.baseAddress, Int32(lda), panels.baseAddress,
                            c.baseAddress, Int32(ldc), accumulate ? 1 : 0)
    }
}

/// An instruction-set level of the kernels (CKernels' DRUMMER_ISA_…).
package enum KernelISA: Int, Sendable, Comparable {
    case baseline = 0
    /// x86-64-v3: AVX2 and FMA.
    case avx2 = 1
    /// x86-64-v4: AVX-512 F, BW, CD, DQ and VL.
    case avx512 = 2

    /// The name DRUMMER_MAX_ISA takes and benchmarks print.
    package var name: String {
        switch self {
        case .baseline: return "baseline"
        case .avx2: return "avx2"
        case .avx512: return "avx512"
        }
    }

    /// The best level this CPU runs, whatever DRUMMER_MAX_ISA says.
    package static var cpu: KernelISA { KernelISA(rawValue: Int(drummer_kernels_cpu_isa())) ?? .baseline }

    /// The problem with DRUMMER_MAX_ISA's value, or nil when it is unset or one of the names.
    package static var settingError: String? {
        guard drummer_kernels_isa_setting() < 0 else { return nil }
        let value = ProcessEnvironment.get("DRUMMER_MAX_ISA") ?? ""
        return "DRUMMER_MAX_ISA=\(value): expected avx512, avx2 or baseline (the highest instruction set the kernels may use)"
    }

    package static func < (a: KernelISA, b: KernelISA) -> Bool { a.rawValue < b.rawValue }
}

/// The output layer's logits, the one place they are computed (the trainer's chunks, the
/// evaluation's blocks and the runtime's single steps): y_r = h_r · W_out + bias for each of
/// `rows` rows, from Wy = [W_out (H rows) | bias] ((H+1)×O, row-major).
package enum OutputLayer {
    @inline(__always)
    package static func logits(rows: Int, h: UnsafeBufferPointer<Float>, wy: UnsafeBufferPointer<Float>, hidden H: Int,
                               into y: UnsafeMutableBufferPointer<Float>) {
        let O = wy.count / (H + 1)
        precondition(wy.count == (H + 1) * O && h.count >= rows * H && y.count >= rows * O, "OutputLayer.logits: sizes")
        let bias = UnsafeBufferPointer(rebasing: wy[(H * O)...]), wOut = UnsafeBufferPointer(rebasing: wy[0..<(H * O)])
        for r in 0..<rows { _ = UnsafeMutableBufferPointer(rebasing: y[(r * O)..<(r * O + O)]).update(fromContentsOf: bias) }
        if rows == 1 {
            BLAS.sgemv(.transposed, rows: H, cols: O, alpha: 1, a: wOut, lda: O, x: h, beta: 1, y: y)
        } else {
            BLAS.sgemm(.none, .none, m: rows, n: O, k: H, alpha: 1, a: h, lda: H, b: wOut, ldb: O, beta: 1, c: y, ldc: O)
        }
    }
}
