// Layer 0's one-hot input measured from a reference class per group (LSTMLayer.swift's (1) and
// (1') for layer 0, written another way). Per chunk, input group g gets a reference class ref_g:
// its most common class in the chunk's rows (the lowest on a tie). With W_g,c the Wx row of
// class c of group g and c_g(r) row r's class:
//
//   x_r · W_in + bias = base + Σ_{g: c_g(r) ≠ ref_g} D_g,c_g(r)
//        base = Σ_g W_g,ref_g + bias,    D_g,c = W_g,c − W_g,ref_g      (W is fixed for a chunk)
//   dW_g,c   = Σ_{r: c_g(r) = c} da_r                            c ≠ ref_g (the scatter)
//   dW_g,ref = Σ_r da_r − Σ_{c ≠ ref_g} dW_g,c                   (Σ_r da_r: the bias gradient)
//
// The same function and gradient as the direct sum of one row per group, rounded differently.
// At the recipe's shape about 39 of a row's 51 classes are their group's reference (most
// instruments silent at most steps, so most velocity, offset and lookback groups sit at their
// silent class): a row reads about 12 rows of 4 KB instead of 51, and the gradient's scatter
// adds about 12 instead of 51. The 2017 layout (two groups, note and tick) keeps the direct
// sum, and its bits.
//
// Buffers (I = the input block's rows, k groups, R = U·B rows, G gate columns):
//   counts   I        Int32  uses of each input row in the chunk
//   refRows  k        Int32  W row of each group's reference class
//   rows     R·k      Int32  per row its non-reference W rows first (group order), then −1s
//   used     R        Int32  how many of a row's entries are W rows
//   diff     I·G             D rows (only those of rows the chunk uses are written)
//   base     G
import DrummerCore

final class ReferenceClasses: @unchecked Sendable {
    let groupRows: [Range<Int>]
    let R: Int, k: Int, G: Int
    let counts: Int32Buffer, refRows: Int32Buffer, rows: Int32Buffer, used: Int32Buffer
    let diff: FloatBuffer, base: FloatBuffer

    init(groupRows: [Range<Int>], rows R: Int, gates G: Int) {
        self.groupRows = groupRows
        self.R = R; k = groupRows.count; self.G = G
        let I = groupRows.last?.upperBound ?? 0
        counts = Int32Buffer(count: I)
        refRows = Int32Buffer(count: k)
        rows = Int32Buffer(count: R * k)
        used = Int32Buffer(count: R)
        diff = FloatBuffer(count: I * G)
        base = FloatBuffer(count: G)
    }

    /// Bytes these buffers take at a shape (nil on overflow).
    static func workspaceBytes(inputRows I: Int, groups k: Int, rows R: Int, gates G: Int) -> Int? {
        let (d, o1) = I.multipliedReportingOverflow(by: G)
        let (rk, o2) = R.multipliedReportingOverflow(by: k)
        let (sum, o3) = d.addingReportingOverflow(rk)
        let (floats, o4) = sum.addingReportingOverflow(I + k + R + G)
        let (bytes, o5) = floats.multipliedReportingOverflow(by: 4)
        return o1 || o2 || o3 || o4 || o5 ? nil : bytes
    }

    /// Chooses the references of the chunk whose rows `inputRows` (R·k W rows, group g's in
    /// column g) holds and writes base, the D rows it uses and the rows' lists, from the input
    /// block `w` and `bias` of the parameters the chunk trains.
    func prepare(inputRows: UnsafeBufferPointer<Int32>, w: UnsafeBufferPointer<Float>, bias: UnsafeBufferPointer<Float>) {
        precondition(inputRows.count == R * k && w.count == counts.count * G && bias.count == G,
                     "ReferenceClasses.prepare: buffer sizes")
        counts.fill(0)
        for i in 0..<(R * k) { counts[Int(inputRows[i])] += 1 }
        for (g, range) in groupRows.enumerated() {
            var best = range.lowerBound
            for row in range where counts[row] > counts[best] { best = row }
            refRows[g] = Int32(best)
        }
        Kernels.inputBlock(wx: w, G: G, rows: refRows.buffer(0, k), bias: bias, out: base.mutable(0, G))
        for (g, range) in groupRows.enumerated() {
            let ref = w.baseAddress! + Int(refRows[g]) * G
            for row in range where counts[row] > 0 && row != Int(refRows[g]) {
                Kernels.difference(w.baseAddress! + row * G, ref, into: diff.pointer + row * G, count: G)
            }
        }
        for r in 0..<R {
            var n = 0
            for g in 0..<k where inputRows[r * k + g] != refRows[g] {
                rows[r * k + n] = inputRows[r * k + g]
                n += 1
            }
            used[r] = Int32(n)
            for q in n..<k { rows[r * k + q] = -1 }
        }
    }

    /// Row r's x_r · W_in + bias into `out` (G); `next` (G floats written soon) is prefetched for
    /// writing meanwhile.
    @inline(__always)
    func inputBlock(row r: Int, out: UnsafeMutableBufferPointer<Float>, prefetching next: UnsafeMutableBufferPointer<Float>?) {
        let n = Int(used[r])
        if n == 0 {
            _ = out.update(fromContentsOf: base.buffer(0, G))
        } else {
            Kernels.inputBlock(wx: diff.buffer(0, diff.count), G: G, rows: rows.buffer(r * k, n), bias: base.buffer(0, G),
                               out: out, prefetching: next)
        }
    }

    /// The reference rows of the input block's gradient `dIn`, once every other row and the bias
    /// gradient `dBias` hold the chunk's sums: dW_g,ref = dBias − Σ dW_g,c over the other
    /// classes the chunk uses, subtracted in row order (the unused ones are +0).
    func fillReferenceGradients(dIn: UnsafeMutableBufferPointer<Float>, dBias: UnsafeBufferPointer<Float>) {
        precondition(dIn.count == counts.count * G && dBias.count == G, "ReferenceClasses.fillReferenceGradients: buffer sizes")
        for (g, range) in groupRows.enumerated() {
            let ref = Int(refRows[g]), dst = dIn.baseAddress! + ref * G
            dst.update(from: dBias.baseAddress!, count: G)
            for row in range where counts[row] > 0 && row != ref {
                Kernels.difference(dst, dIn.baseAddress! + row * G, into: dst, count: G)
            }
        }
    }
}
