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
//
// Sparse groups. A group whose target is "not predicted" in most of a block's rows (the grid's
// velocity and offset of a class, predicted only where the class is hit: about one row in
// eight on the Groove corpus) gets no loss and dy = 0 there, so (5), (6') and (5') need only
// its predicted rows: they are gathered (h rows into `rowsH`), multiplied by the group's
// columns of W_out alone, and their dh added back into dHout. Per block, the groups from the
// first one predicted in fewer than half the rows on (`sparseFrom`) take this path; the ones
// before it, contiguous columns, one dense product as above. The same function and gradient
// (the skipped products only made the terms the loss drops), rounded otherwise; a layout whose
// targets are always predicted (the 2017 layout) takes the dense path alone, with its bits.
//   rowsH       R·H   h of a sparse group's predicted rows, then their dh
//   rowsY       R·w   their logits, then dy (w: the widest output group)
//   rowList     R     Int32: which rows of the block they are
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
    /// Whether groups may take the sparse path (their buffers allocated); false: dense only.
    let sparseGroups: Bool
    let rowsH: FloatBuffer, rowsY: FloatBuffer, rowList: Int32Buffer

    /// `sparseGroups`: output groups predicted in few of a block's rows take the sparse path.
    init(layout: ParameterLayout.Head, top: LSTMLayer, targets: Int32Buffer, totalStreams: Int, sparseGroups: Bool = false) {
        self.layout = layout
        self.top = top
        self.targets = targets
        U = top.U; B = top.B; H = top.H
        O = layout.wy.cols; m = layout.outputColumns.count
        self.totalStreams = totalStreams
        let R = U * B
        logits = FloatBuffer(count: R * O)
        rowLoss = FloatBuffer(count: R)
        self.sparseGroups = sparseGroups
        let widest = layout.outputColumns.map(\.count).max() ?? 0
        rowsH = FloatBuffer(count: sparseGroups ? R * H : 0)
        rowsY = FloatBuffer(count: sparseGroups ? R * widest : 0)
        rowList = Int32Buffer(count: sparseGroups ? R : 0)
    }

    /// Bytes of the head's buffers per chunk (logits, rowLoss, and with sparse groups rowsH,
    /// rowsY, rowList); nil on overflow.
    static func workspaceBytes(outputs O: Int, hidden H: Int, widestGroup w: Int, sparseGroups: Bool, unroll: Int,
                               batch: Int) -> Int? {
        let (rows, o1) = max(0, unroll).multipliedReportingOverflow(by: max(0, batch))
        let (perRow, o2) = sparseGroups ? (O + 1).addingReportingOverflow(H + w + 1) : (O + 1, false)
        let (bytes, o3) = rows.multipliedReportingOverflow(by: 4)
        let (total, o4) = bytes.multipliedReportingOverflow(by: perRow)
        return o1 || o2 || o3 || o4 ? nil : total
    }

    private var wy: UnsafeBufferPointer<Float> { top.params.buffer(layout.wy.offset, layout.wy.count) }

    /// (5) for `rows`: logits[r] = h[r − rows.lowerBound] · W_out + Wy[bias], from `h` (rows.count × H).
    func computeLogits(rows: Range<Int>, h: UnsafeBufferPointer<Float>) {
        OutputLayer.logits(rows: rows.count, h: h, wy: wy, hidden: H, into: logits.mutable(rows.lowerBound * O, rows.count * O))
    }

    /// (5), (6), (6') and (5') for `rows`: logits, the cross-entropies of every output group
    /// (rowLoss), dy, the top layer's dHout, and dWy (overwritten when `first`, else
    /// accumulated). Reads h of these rows, writes only these rows (and dWy).
    func outputLayer(rows: Range<Int>, first: Bool) {
        let r0 = rows.lowerBound, nr = rows.count
        let wOut = top.params.buffer(layout.weights.lowerBound, layout.weights.count)
        let gWOut = top.grad.mutable(layout.weights.lowerBound, layout.weights.count)
        let gBias = top.grad.mutable(layout.bias.lowerBound, layout.bias.count)
        let hRows = top.hRows(rows)
        let columns = layout.outputColumns
        let sparse = sparseFrom(rows: rows)
        // The dense groups' columns, 0..<D.
        let D = sparse < m ? columns[sparse].lowerBound : O
        let scale = 1 / Float(U * totalStreams)
        let beta: Float = first ? 0 : 1
        // (5) y = h · W_out + bias over the dense columns (all of them: OutputLayer's product)
        if D == O {
            computeLogits(rows: rows, h: hRows)
        } else {
            logits(of: hRows, rows: nr, columns: 0..<D, into: logits.mutable(r0 * O, nr * O), ldc: O)
        }
        // (6), (6'): loss per row, y ← dy, the dense groups
        for r in rows {
            var loss: Float = 0
            for (g, c) in columns[..<sparse].enumerated() {
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
        // (5') dW_out (+)= hᵀ · dy;  dWy[bias] (+)= Σ_rows dy;  dHout = dy · W_outᵀ (dense columns)
        let dy = logits.buffer(r0 * O, nr * O)
        let dHout = top.dHout.mutable(r0 * H, nr * H)
        BLAS.sgemm(.transposed, .none, m: H, n: D, k: nr, alpha: 1, a: hRows, lda: H, b: dy, ldb: O,
                   beta: beta, c: gWOut, ldc: O)
        BLAS.sgemv(.transposed, rows: nr, cols: D, alpha: 1, a: dy, lda: O, x: top.ones.buffer(0, nr), beta: beta,
                   y: UnsafeMutableBufferPointer(rebasing: gBias[0..<D]))
        BLAS.sgemm(.none, .transposed, m: nr, n: H, k: D, alpha: 1, a: dy, lda: O, b: wOut, ldb: O, beta: 0,
                   c: dHout, ldc: H)
        for g in sparse..<m { sparseGroup(g, rows: rows, first: first, scale: scale) }
    }

    /// (5) on `columns` of the output: y = h · W_out[:, columns] + bias[columns] for `rows` rows
    /// of h (rows × H), into y (rows × columns.count, leading dimension ldc): the bias rows, then
    /// one product adding to them.
    private func logits(of h: UnsafeBufferPointer<Float>, rows n: Int, columns: Range<Int>,
                        into y: UnsafeMutableBufferPointer<Float>, ldc: Int) {
        let w = columns.count
        let bias = top.params.buffer(layout.bias.lowerBound + columns.lowerBound, w)
        for q in 0..<n { _ = UnsafeMutableBufferPointer(rebasing: y[(q * ldc)..<(q * ldc + w)]).update(fromContentsOf: bias) }
        let wCols = UnsafeBufferPointer(rebasing: top.params.buffer(layout.weights.lowerBound, layout.weights.count)[columns.lowerBound...])
        BLAS.sgemm(.none, .none, m: n, n: w, k: H, alpha: 1, a: h, lda: H, b: wCols, ldb: O, beta: 1, c: y, ldc: ldc)
    }

    /// The first group of the sparse path for these rows (m: none; always m without
    /// `sparseGroups`).
    private func sparseFrom(rows: Range<Int>) -> Int {
        guard sparseGroups else { return m }
        let columns = layout.outputColumns
        return SparseOutputGroups.first(groups: m, rows: rows.count) { g in
            let size = Int32(columns[g].count)
            var predicted = 0
            for r in rows where targets[r * m + g] < size { predicted += 1 }
            return predicted
        }
    }

    /// (5), (6), (6') and (5') of output group g on the rows that predict it (rowList): their h
    /// gathered, their logits, loss (added to rowLoss in group order, as the dense loop adds)
    /// and dy, dWy of the group's columns, and their dh added into dHout.
    private func sparseGroup(_ g: Int, rows: Range<Int>, first: Bool, scale: Float) {
        let c = layout.outputColumns[g], w = c.count
        var n = 0
        for r in rows where Int(targets[r * m + g]) < w {
            rowList[n] = Int32(r)
            n += 1
        }
        let wOut = top.params.buffer(layout.weights.lowerBound, layout.weights.count)
        let gWOut = top.grad.mutable(layout.weights.lowerBound, layout.weights.count)
        let gBias = UnsafeMutableBufferPointer(rebasing: top.grad.mutable(layout.bias.lowerBound, layout.bias.count)[c])
        let wCols = UnsafeBufferPointer(rebasing: wOut[c.lowerBound...])
        let gCols = UnsafeMutableBufferPointer(rebasing: gWOut[c.lowerBound...])
        guard n > 0 else {
            // No row predicts it: its gradient is zero (written when this block overwrites).
            if first {
                for k in 0..<H { gWOut.baseAddress!.advanced(by: k * O + c.lowerBound).update(repeating: 0, count: w) }
                gBias.update(repeating: 0)
            }
            return
        }
        let hs = rowsH.mutable(0, n * H), ys = rowsY.mutable(0, n * w)
        for q in 0..<n { _ = rowsH.mutable(q * H, H).update(fromContentsOf: top.hRows(Int(rowList[q])..<(Int(rowList[q]) + 1))) }
        // (5) on the gathered rows
        logits(of: UnsafeBufferPointer(hs), rows: n, columns: c, into: ys, ldc: w)
        // (6), (6')
        for q in 0..<n {
            let r = Int(rowList[q])
            rowLoss.pointer[r] += Kernels.softmaxCrossEntropy(rowsY.mutable(q * w, w), target: Int(targets[r * m + g]),
                                                              scale: scale)
        }
        // (5') the group's columns of dW_out and dWy[bias]; then dh = dy · W_out[:, c]ᵀ over h's
        // rows (read by the product before), added into dHout
        let beta: Float = first ? 0 : 1
        BLAS.sgemm(.transposed, .none, m: H, n: w, k: n, alpha: 1, a: UnsafeBufferPointer(hs), lda: H, b: UnsafeBufferPointer(ys),
                   ldb: w, beta: beta, c: gCols, ldc: O)
        BLAS.sgemv(.transposed, rows: n, cols: w, alpha: 1, a: UnsafeBufferPointer(ys), lda: w, x: top.ones.buffer(0, n),
                   beta: beta, y: gBias)
        BLAS.sgemm(.none, .transposed, m: n, n: H, k: w, alpha: 1, a: UnsafeBufferPointer(ys), lda: w, b: wCols, ldb: O,
                   beta: 0, c: hs, ldc: H)
        for q in 0..<n {
            let r = Int(rowList[q])
            Kernels.accumulate(rowsH.buffer(q * H, H), into: top.dHout.mutable(r * H, H))
        }
    }

    /// Σ over the chunk's rows of the per-row loss.
    var lossSum: Double {
        var total: Double = 0
        for r in 0..<(U * B) { total += Double(rowLoss.pointer[r]) }
        return total
    }
}

/// The head's rule for its sparse path (shared with the benchmark's estimate of the work it skips).
package enum SparseOutputGroups {
    /// The groups from the first one predicted in fewer than half of `rows` rows on
    /// (`predicted(g)`: how many predict group g) take the sparse path; `groups` when none does.
    package static func first(groups m: Int, rows: Int, predicted: (Int) -> Int) -> Int {
        for g in 0..<m where 2 * predicted(g) < rows { return g }
        return m
    }
}
