// The output layer and the loss of a chunk, on top of the last LSTM layer (LSTMLayer.swift
// has the letters; O output width, m output groups, R = U·B rows):
//
//   (5)  y_r    = h_r · W_out + Wy[bias]                                     y: O   (OutputLayer.logits)
//   (6)  loss   = 1/(U·B_all) Σ_r Σ_groups −log softmax(y_r[group])[target(r, group)]
//               (a target equal to its group's size is not predicted: no term, dy = 0)
//   (6') dy_r   = (softmax(y_r[group]) − onehot(target(r, group))) / (U·B_all)
//   (5') dW_out += h_rᵀ · dy_r;  dWy[bias] += dy_r;  dHout_r = dy_r · W_outᵀ  (into the top layer)
//
// Buffers: logits R·O (y, then dy), rowLoss R (Σ_groups CE per row); the targets are
// ChunkInputs' (R·m class indices within each output group).
import DrummerCore

final class OutputHead: @unchecked Sendable {
    let layout: ParameterLayout.Head
    /// The layer whose h the head reads and whose dHout it writes.
    let top: LSTMLayer
    let targets: Int32Buffer
    let U: Int, B: Int, H: Int, O: Int, m: Int
    /// Streams of the whole batch: the loss is a mean over U·totalStreams rows, so that the
    /// stream groups' gradients add up to the batch's.
    let totalStreams: Int
    let logits: FloatBuffer, rowLoss: FloatBuffer
    init(layout: ParameterLayout.Head, top: LSTMLayer, targets: Int32Buffer, totalStreams: Int) {
        self.layout = layout
        self.top = top
        self.targets = targets
        U = top.U; B = top.B; H = top.H
        O = layout.wy.cols; m = layout.outputColumns.count
        self.totalStreams = totalStreams
        logits = FloatBuffer(count: U * B * O)
        rowLoss = FloatBuffer(count: U * B)
    }

    /// Bytes of the head's buffers (logits, rowLoss) per chunk; nil on overflow.
    static func workspaceBytes(outputs O: Int, unroll: Int, batch: Int) -> Int? {
        let (rows, o1) = max(0, unroll).multipliedReportingOverflow(by: max(0, batch))
        let (bytes, o2) = rows.multipliedReportingOverflow(by: 4 * (O + 1))
        return o1 || o2 ? nil : bytes
    }

    private var wy: UnsafeBufferPointer<Float> { top.params.buffer(layout.wy.offset, layout.wy.count) }

    /// (5) for `rows`: logits[r] = h[r − rows.lowerBound] · W_out + Wy[bias], from `h` (rows.count × H).
    func computeLogits(rows: Range<Int>, h: UnsafeBufferPointer<Float>) {
        OutputLayer.logits(rows: rows.count, h: h, wy: wy, hidden: H, into: logits.mutable(rows.lowerBound * O, rows.count * O))
    }

    /// (5), (6), (6') and (5') for `rows`: logits, the cross-entropies of every output group
    /// (rowLoss), dy in place of the logits, the top layer's dHout, and dWy (overwritten when
    /// `first`, else accumulated). Reads h of these rows, writes only these rows (and dWy).
    func outputLayer(rows: Range<Int>, first: Bool) {
        let r0 = rows.lowerBound, nr = rows.count
        let wOut = top.params.buffer(layout.weights.lowerBound, layout.weights.count)
        let gWOut = top.grad.mutable(layout.weights.lowerBound, layout.weights.count)
        let gBias = top.grad.mutable(layout.bias.lowerBound, layout.bias.count)
        let hRows = top.hRows(rows)
        // (5) y = h · W_out + bias
        computeLogits(rows: rows, h: hRows)
        // (6), (6'): loss per row, y ← dy
        let scale = 1 / Float(U * totalStreams)
        for r in rows {
            var loss: Float = 0
            for (g, c) in layout.outputColumns.enumerated() {
                let y = logits.mutable(r * O + c.lowerBound, c.count), target = Int(targets[r * m + g])
                // A target equal to the group's size (the grid's "not hit") is not predicted.
                guard target < c.count else {
                    y.update(repeating: 0)
                    continue
                }
                loss += Kernels.softmaxCrossEntropy(y, target: target, scale: scale)
            }
            rowLoss.pointer[r] = loss
        }
        // (5') dW_out (+)= hᵀ · dy;  dWy[bias] (+)= Σ_rows dy;  dHout = dy · W_outᵀ
        let dy = logits.buffer(r0 * O, nr * O)
        let beta: Float = first ? 0 : 1
        BLAS.sgemm(.transposed, .none, m: H, n: O, k: nr, alpha: 1, a: hRows, lda: H, b: dy, ldb: O,
                   beta: beta, c: gWOut, ldc: O)
        BLAS.sgemv(.transposed, rows: nr, cols: O, alpha: 1, a: dy, lda: O, x: top.ones.buffer(0, nr), beta: beta,
                   y: gBias)
        BLAS.sgemm(.none, .transposed, m: nr, n: H, k: O, alpha: 1, a: dy, lda: O, b: wOut, ldb: O, beta: 0,
                   c: top.dHout.mutable(r0 * H, nr * H), ldc: H)
    }

    /// Σ over the chunk's rows of the per-row loss.
    var lossSum: Double {
        var total: Double = 0
        for r in 0..<(U * B) { total += Double(rowLoss.pointer[r]) }
        return total
    }
}
