// The inference forward of the LSTM: one stream, one event at a time. The sampler
// (`drummer sample`) and evaluation (`drummer eval`, and the evaluations during
// training) both run this code, so the same model gives the same h, c and logits in
// both: the input block and the cell are CKernels' (the trainer's own kernels), the
// recurrent products and the output layer OpenBLAS GEMVs. The trainer's chunked forward
// and backward are in Train/LSTMLayer.swift.
//
// Letters (see ModelLayout.swift): H hidden size, G = 4H, O output width, k input
// groups, L layers; h^l, c^l the state of layer l.
//
//   layer 0:  a = Σ_g Wx_0[row of class_g] + bias_0 + h⁰ · W_rec⁰           a: G
//   layer l:  a = bias_l + [h^{l−1}, h^l] · Wx_l[0..<2H]                      a: G
//             f, i, o = σ(a_f), σ(a_i), σ(a_o);  g = tanh(a_g)
//             c^l ← f ⊙ c^l + i ⊙ g;   h^l ← o ⊙ tanh(c^l)                   c, h: H
//   head:     y = h^{L−1} · W_out + bias                                      y: O (logits)
//
// The h of the layers lie side by side in one buffer [h⁰ | h¹ | … | h^{L−1}], so the input
// of layer l ≥ 1, [h^{l−1} (this step), h^l (the last step)], is one contiguous 2H vector
// and its input and recurrent products are one GEMV over Wx_l's first 2H rows.
//
// Real-time safe: every buffer is allocated in `init`; `step()` and `logits()` allocate
// nothing, take no lock and do a fixed amount of work.

/// One LSTM stream run forward event by event, with buffers allocated once.
/// Not thread-safe: one instance per thread.
public final class LSTMInference {
    public let shape: ModelShape
    let H: Int, G: Int, O: Int, L: Int
    let layout: ParameterLayout
    /// A copy of the flat parameters (every Wx, then Wy).
    private let params: UnsafeMutableBufferPointer<Float>
    /// h of every layer side by side (L·H); c and the next c (L·H each, swapped every step),
    /// tanh(c) (H), gates (G), logits (O).
    private let hs: UnsafeMutableBufferPointer<Float>
    private var cs: UnsafeMutableBufferPointer<Float>, cNext: UnsafeMutableBufferPointer<Float>
    private let tanhC: UnsafeMutableBufferPointer<Float>, gates: UnsafeMutableBufferPointer<Float>
    private let y: UnsafeMutableBufferPointer<Float>
    /// Wx_0 rows of the current input (k), and each input group's first row and size (k each).
    private let rows: UnsafeMutableBufferPointer<Int32>
    private let groupOffset: UnsafeMutableBufferPointer<Int>, groupSize: UnsafeMutableBufferPointer<Int>

    /// The class index of each input group for the next `step()` (k entries, group order
    /// of `ModelShape.inputGroups`; HitEncoder writes them); set them, then call `step()`.
    public let input: UnsafeMutableBufferPointer<Int32>

    public init(weights: LSTMWeights) {
        let s = weights.shape
        shape = s
        layout = s.parameters
        H = s.hidden; G = 4 * s.hidden; O = s.outputWidth; L = s.layers
        func buffer<T>(_ n: Int, _ v: T) -> UnsafeMutableBufferPointer<T> {
            let b = UnsafeMutableBufferPointer<T>.allocate(capacity: max(1, n))
            b.initialize(repeating: v)
            return UnsafeMutableBufferPointer(rebasing: b[0..<n])
        }
        params = buffer(layout.count, 0)
        for (m, values) in weights.namedMatrices {
            _ = UnsafeMutableBufferPointer(rebasing: params[m.range]).update(fromContentsOf: values)
        }
        hs = buffer(L * H, 0); cs = buffer(L * H, 0); cNext = buffer(L * H, 0); tanhC = buffer(H, 0)
        gates = buffer(G, 0); y = buffer(O, 0)
        let groups = s.inputGroups
        rows = buffer(groups.count, 0)
        groupOffset = buffer(groups.count, 0)
        groupSize = buffer(groups.count, 0)
        input = buffer(groups.count, 0)
        for (g, r) in layout.layers[0].inputGroupRows.enumerated() {
            groupOffset[g] = r.lowerBound
            groupSize[g] = r.count
        }
    }

    deinit {
        for b in [params, hs, cs, cNext, tanhC, gates, y] { b.baseAddress?.deallocate() }
        rows.baseAddress?.deallocate()
        groupOffset.baseAddress?.deallocate()
        groupSize.baseAddress?.deallocate()
        input.baseAddress?.deallocate()
    }

    /// The hidden state h of the top layer (H): what the output layer reads.
    public var h: UnsafeBufferPointer<Float> { UnsafeBufferPointer(rebasing: hs[((L - 1) * H)...]) }
    /// The cell state c of the top layer (H).
    public var c: UnsafeBufferPointer<Float> { UnsafeBufferPointer(rebasing: cs[((L - 1) * H)...]) }

    /// Sets h and c of layer `layer` (H values each).
    public func setState<S: Sequence<Float>, T: Sequence<Float>>(layer: Int = 0, h: S, c: T) {
        precondition((0..<L).contains(layer), "LSTMInference.setState: no layer \(layer)")
        let r = (layer * H)..<((layer + 1) * H)
        let (_, nh) = UnsafeMutableBufferPointer(rebasing: hs[r]).initialize(from: h)
        let (_, nc) = UnsafeMutableBufferPointer(rebasing: cs[r]).initialize(from: c)
        precondition(nh == H && nc == H, "LSTMInference.setState: h and c need \(H) values each")
    }

    /// h = c = 0 in every layer.
    package func resetState() {
        hs.update(repeating: 0)
        cs.update(repeating: 0)
    }

    private func view(_ r: Range<Int>) -> UnsafeBufferPointer<Float> { UnsafeBufferPointer(rebasing: params[r]) }

    /// One step on the event in `input`: updates h and c of every layer. Each class must be
    /// inside its group.
    public func step() {
        for g in 0..<rows.count {
            let k = Int(input[g])
            precondition(k >= 0 && k < groupSize[g], "LSTMInference.step: class \(k) outside input group \(g) (size \(groupSize[g]))")
            rows[g] = Int32(groupOffset[g] + k)
        }
        // Layer 0: a = Σ input rows + bias;  a += h⁰ · W_rec  (1×H · H×G)
        let first = layout.layers[0]
        Kernels.inputBlock(wx: view(first.inputBlock), G: G, rows: UnsafeBufferPointer(rows), bias: view(first.bias),
                           out: gates)
        BLAS.sgemv(.transposed, rows: H, cols: G, alpha: 1, a: view(first.recurrent), lda: G,
                   x: UnsafeBufferPointer(rebasing: hs[0..<H]), beta: 1, y: gates)
        cell(layer: 0)
        for l in 1..<L {
            // a = bias + [h^{l−1}, h^l] · Wx_l[0..<2H]  (1×2H · 2H×G)
            let layer = layout.layers[l]
            _ = gates.update(fromContentsOf: view(layer.bias))
            BLAS.sgemv(.transposed, rows: 2 * H, cols: G, alpha: 1, a: view(layer.wx.rows(0..<(2 * H))), lda: G,
                       x: UnsafeBufferPointer(rebasing: hs[((l - 1) * H)..<((l + 1) * H)]), beta: 1, y: gates)
            cell(layer: l)
        }
        swap(&cs, &cNext)
    }

    /// The cell of layer `l` on the gates' pre-activations: c^l, tanh(c^l), h^l.
    private func cell(layer l: Int) {
        let r = (l * H)..<((l + 1) * H)
        Kernels.cellForward(H: H, gates: gates, cPrev: UnsafeBufferPointer(rebasing: cs[r]),
                            cNew: UnsafeMutableBufferPointer(rebasing: cNext[r]), tanhC: tanhC,
                            hNew: UnsafeMutableBufferPointer(rebasing: hs[r]))
    }

    /// The logits y = [h, 1] · Wy of the top layer's h (O values; output group g is
    /// `shape.parameters.head.outputColumns[g]`). Valid until the next call.
    public func logits() -> UnsafeBufferPointer<Float> {
        OutputLayer.logits(rows: 1, h: h, wy: view(layout.head.wy.range), hidden: H, into: y)
        return UnsafeBufferPointer(y)
    }
}
