// LSTM cell forward for one stream (batch 1), exploiting the one-hot input:
// x_t · Wx_input is the sum of two rows of Wx, so only the recurrent block needs
// a product (H × 4H GEMV). Used by the sampler and by evaluation.
//
// Buffers: gates 4H (pre-activations in, activations out: f, i, o, g), h H, c H.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@inline(__always) public func sigmoid(_ x: Float) -> Float { 1 / (1 + expf(-x)) }

public enum LSTMCell {
    /// One step: updates `h` and `c` in place; `gates` (4H) receives the gate
    /// activations σ(f), σ(i), σ(o), tanh(g).
    public static func step(
        shape: ModelShape, wx: UnsafeBufferPointer<Float>, note: Int, tick: Int,
        h: UnsafeMutableBufferPointer<Float>, c: UnsafeMutableBufferPointer<Float>,
        gates: UnsafeMutableBufferPointer<Float>
    ) {
        let H = shape.hidden, G = 4 * H
        precondition(wx.count == shape.wxCount && h.count == H && c.count == H && gates.count == G,
                     "LSTMCell.step: buffer sizes do not match the model shape")
        precondition(note >= 0 && note < shape.notes && tick >= 0 && tick < shape.ticks,
                     "LSTMCell.step: input index out of range")
        let w = wx.baseAddress!
        let rn = w + shape.noteRow(note) * G
        let rt = w + shape.tickRow(tick) * G
        let rb = w + shape.wxBiasRow * G
        for j in 0..<G { gates[j] = rn[j] + rt[j] + rb[j] }
        // gates += h · Wx[recurrent block]  (1×H · H×4H)
        let rec = UnsafeBufferPointer(start: w + shape.recurrentRow * G, count: H * G)
        BLAS.sgemv(.transposed, rows: H, cols: G, alpha: 1, a: rec, lda: G,
                   x: UnsafeBufferPointer(h), beta: 1, y: gates)
        for j in 0..<H {
            let f = sigmoid(gates[j])
            let i = sigmoid(gates[H + j])
            let o = sigmoid(gates[2 * H + j])
            let g = tanhf(gates[3 * H + j])
            gates[j] = f; gates[H + j] = i; gates[2 * H + j] = o; gates[3 * H + j] = g
            let cn = f * c[j] + i * g
            c[j] = cn
            h[j] = o * tanhf(cn)
        }
    }

    /// Output logits y = [h, 1] · Wy (V values: note logits then tick logits).
    public static func output(
        shape: ModelShape, wy: UnsafeBufferPointer<Float>, h: UnsafeBufferPointer<Float>,
        logits: UnsafeMutableBufferPointer<Float>
    ) {
        let H = shape.hidden, V = shape.vocab
        precondition(wy.count == shape.wyCount && h.count == H && logits.count == V,
                     "LSTMCell.output: buffer sizes do not match the model shape")
        let w = wy.baseAddress!
        for j in 0..<V { logits[j] = w[H * V + j] }
        BLAS.sgemv(.transposed, rows: H, cols: V, alpha: 1,
                   a: UnsafeBufferPointer(start: w, count: H * V), lda: V,
                   x: h, beta: 1, y: logits)
    }
}
