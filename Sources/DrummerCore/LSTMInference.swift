// The inference forward of the LSTM: one stream, one event at a time. The sampler
// (`drummer sample`) and evaluation (`drummer eval`, and the evaluations during
// training) both run this code, so the same model gives the same h, c and logits in
// both: the input block and the cell are CKernels' (the trainer's own kernels), the
// recurrent product and the output layer OpenBLAS GEMVs. The trainer's chunked forward
// and backward are in Train/LSTMLayer.swift.
//
// Letters (see ModelLayout.swift): H hidden size, G = 4H, I input width, O output width,
// k input groups.
//
//   a   = Σ_g Wx[inputOffset(g) + class_g] + Wx[bias] + h · W_rec      a: G
//   f, i, o = σ(a_f), σ(a_i), σ(a_o);  g = tanh(a_g)
//   c   ← f ⊙ c + i ⊙ g;   h ← o ⊙ tanh(c)                             c, h: H
//   y   = h · W_out + Wy[bias]                                          y: O (logits)
//
// Real-time safe: every buffer is allocated in `init`; `step()` and `logits()` allocate
// nothing, take no lock and do a fixed amount of work.

/// One LSTM stream run forward event by event, with buffers allocated once.
/// Not thread-safe: one instance per thread.
public final class LSTMInference {
    public let shape: ModelShape
    let H: Int, G: Int, O: Int
    /// Wx's row ranges: input block [0, I), recurrent block [I, I + H), bias row I + H.
    let inputEnd: Int, recurrentStart: Int, biasRow: Int
    /// Copies of the weights: Wx (I+H+1)·G, Wy (H+1)·O.
    private let wx: UnsafeMutableBufferPointer<Float>, wy: UnsafeMutableBufferPointer<Float>
    /// h (H), c and the next c (H each, swapped every step), tanh(c) (H), gates (G), logits (O).
    private let hBuffer: UnsafeMutableBufferPointer<Float>
    private var cBuffer: UnsafeMutableBufferPointer<Float>, cNext: UnsafeMutableBufferPointer<Float>
    private let tanhC: UnsafeMutableBufferPointer<Float>, gates: UnsafeMutableBufferPointer<Float>
    private let y: UnsafeMutableBufferPointer<Float>
    /// Wx rows of the current input (k), and each input group's first row and size (k each).
    private let rows: UnsafeMutableBufferPointer<Int32>
    private let groupOffset: UnsafeMutableBufferPointer<Int>, groupSize: UnsafeMutableBufferPointer<Int>

    /// The class index of each input group for the next `step()` (k entries, group order
    /// of `ModelShape.inputGroups`); set them, then call `step()`.
    public let input: UnsafeMutableBufferPointer<Int>

    public init(weights: LSTMWeights) {
        let s = weights.shape
        shape = s
        H = s.hidden; G = 4 * s.hidden; O = s.outputWidth
        inputEnd = s.inputWidth; recurrentStart = s.recurrentRow; biasRow = s.wxBiasRow
        func buffer<T>(_ n: Int, _ v: T) -> UnsafeMutableBufferPointer<T> {
            let b = UnsafeMutableBufferPointer<T>.allocate(capacity: max(1, n))
            b.initialize(repeating: v)
            return UnsafeMutableBufferPointer(rebasing: b[0..<n])
        }
        wx = buffer(s.wxCount, 0)
        wy = buffer(s.wyCount, 0)
        _ = wx.update(fromContentsOf: weights.wx)
        _ = wy.update(fromContentsOf: weights.wy)
        hBuffer = buffer(H, 0); cBuffer = buffer(H, 0); cNext = buffer(H, 0); tanhC = buffer(H, 0)
        gates = buffer(G, 0); y = buffer(O, 0)
        let groups = s.inputGroups
        rows = buffer(groups.count, 0)
        groupOffset = buffer(groups.count, 0)
        groupSize = buffer(groups.count, 0)
        input = buffer(groups.count, 0)
        for (g, size) in groups.enumerated() {
            groupOffset[g] = s.inputOffset(g)
            groupSize[g] = size
        }
    }

    deinit {
        for b in [wx, wy, hBuffer, cBuffer, cNext, tanhC, gates, y] { b.baseAddress?.deallocate() }
        rows.baseAddress?.deallocate()
        groupOffset.baseAddress?.deallocate()
        groupSize.baseAddress?.deallocate()
        input.baseAddress?.deallocate()
    }

    /// The hidden state h (H).
    public var h: UnsafeBufferPointer<Float> { UnsafeBufferPointer(hBuffer) }
    /// The cell state c (H).
    public var c: UnsafeBufferPointer<Float> { UnsafeBufferPointer(cBuffer) }

    /// Sets h and c (H values each).
    public func setState<S: Sequence<Float>, T: Sequence<Float>>(h: S, c: T) {
        let (_, nh) = hBuffer.initialize(from: h)
        let (_, nc) = cBuffer.initialize(from: c)
        precondition(nh == H && nc == H, "LSTMInference.setState: h and c need \(H) values each")
    }

    /// h = c = 0.
    public func resetState() {
        hBuffer.update(repeating: 0)
        cBuffer.update(repeating: 0)
    }

    /// One step on the event in `input`: updates h and c. Each class must be inside its group.
    public func step() {
        for g in 0..<rows.count {
            let k = input[g]
            precondition(k >= 0 && k < groupSize[g], "LSTMInference.step: class \(k) outside input group \(g) (size \(groupSize[g]))")
            rows[g] = Int32(groupOffset[g] + k)
        }
        let wxRows = UnsafeBufferPointer(rebasing: wx[0..<(inputEnd * G)])
        let rec = UnsafeBufferPointer(rebasing: wx[(recurrentStart * G)..<(biasRow * G)])
        let bias = UnsafeBufferPointer(rebasing: wx[(biasRow * G)...])
        // a = Σ input rows + bias;  a += h · W_rec  (1×H · H×G)
        Kernels.inputBlock(wx: wxRows, G: G, rows: UnsafeBufferPointer(rows), bias: bias, out: gates)
        BLAS.sgemv(.transposed, rows: H, cols: G, alpha: 1, a: rec, lda: G, x: UnsafeBufferPointer(hBuffer),
                   beta: 1, y: gates)
        Kernels.cellForward(H: H, gates: gates, cPrev: UnsafeBufferPointer(cBuffer), cNew: cNext, tanhC: tanhC,
                            hNew: hBuffer)
        swap(&cBuffer, &cNext)
    }

    /// The logits y = [h, 1] · Wy (O values; output group g starts at `shape.outputOffset(g)`).
    /// Valid until the next call.
    public func logits() -> UnsafeBufferPointer<Float> {
        _ = y.update(fromContentsOf: UnsafeBufferPointer(rebasing: wy[(H * O)...]))
        BLAS.sgemv(.transposed, rows: H, cols: O, alpha: 1, a: UnsafeBufferPointer(rebasing: wy[0..<(H * O)]),
                   lda: O, x: UnsafeBufferPointer(hBuffer), beta: 1, y: y)
        return UnsafeBufferPointer(y)
    }
}
