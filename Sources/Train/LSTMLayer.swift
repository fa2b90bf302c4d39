// One LSTM layer over one chunk of U steps for B streams: the forward and the backward
// pass side by side, on buffers allocated once. Pure math: the layer holds views of its
// weights and gradient and its scratch buffers; where its inputs come from is
// ChunkInputs.swift's (one-hot rows, layer 0) or the layer below's h (layers ≥ 1), the
// output layer and the loss are OutputHead.swift's, the order in which the phases run and
// on which thread is ChunkPipeline.swift's, the update is Optimizer's. The inference
// forward (one stream, one event at a time) is DrummerCore's LSTMInference; both use
// CKernels' cell and input-block kernels.
//
// Letters:
//   U steps per chunk, B streams of this layer (a stream group; B_all = the whole batch),
//   R = U·B rows, row r = t·B + b (step t, stream b);
//   H hidden size, G = 4H gate columns (blocks f, i, o, g);
//   X input width: layer 0 the one-hot input groups (k of them, I rows of Wx), a layer
//   above the H of the layer below (x_r = h of the layer below at row r).
// Parameters (ParameterLayout.Layer): Wx (X+H+1)×G = [W_in (X rows) | W_rec (H rows) | bias];
// the gradient buffer has the same layout.
//
// FORWARD, step t, stream b, row r:
//   (1) a_r  = x_r · W_in + Wx[bias] + h_{t−1,b} · W_rec                  a: G   (forwardStep)
//            layer 0: x_r · W_in = Σ_g Wx[in(r, g)] (one row per one-hot group);
//            (by default computed from a reference class per group: ReferenceClasses.swift);
//            above: one GEMM per block of rows, before the recurrence (inputProduct)
//   (2) f, i, o = σ(a_f), σ(a_i), σ(a_o);  g = tanh(a_g)                         (forwardStep)
//   (3) c_r  = f ⊙ c_{t−1,b} + i ⊙ g                                              (forwardStep)
//   (4) h_r  = o ⊙ tanh(c_r)                                                      (forwardStep)
//
// BACKWARD, given dHout_r = dLoss/dh_r from above (the output head, or the layer above):
//   (4') dh     = dHout_r + dhNext_b        (dhNext_b = da_{t+1,b} · W_recᵀ, 0 at t = U−1)
//        dc     = dcNext_b + dh ⊙ o ⊙ (1 − tanh²(c_r));  da_o = dh ⊙ tanh(c_r) ⊙ o(1 − o)
//   (3') da_f   = dc ⊙ c_{t−1,b} ⊙ f(1 − f);  da_i = dc ⊙ g ⊙ i(1 − i);  dcNext_b = dc ⊙ f
//   (2') da_g   = dc ⊙ i ⊙ (1 − g²)                                                   (backwardStep)
//   (1') dhNext_b = da_r · W_recᵀ                                                     (backwardStep)
//        dW_rec += h_{t−1,b}ᵀ · da_r;  dWx[bias] += da_r                            (inputGradients)
//        layer 0: dWx[in(r, g)] += da_r;  above: dW_in += x_rᵀ · da_r and the layer
//        below's dHout_r = da_r · W_inᵀ                                              (inputGradients)
// The state carried into the chunk (h_{−1}, c_{−1}) gets no gradient (truncated BPTT).
//
// Buffers (floats unless marked):
//   hs, cs      (U+1)·B·H   block 0: the carried (h_{−1}, c_{−1}); block t+1: h_t, c_t
//   acts        R·G         σ(f), σ(i), σ(o), tanh(g)  (above layer 0: x·W_in + bias first)
//   tanhC       R·H         tanh(c_t)
//   dHout       R·H         dLoss/dh_t from above
//   dGates      R·G         da, written over acts (the backward step reads a row's activations
//                           and then writes its gradients; nothing reads them afterwards)
//   dhNext, dc  B·H         gradients flowing from step t to step t−1
//   ones        R           for column sums as GEMVs
//   inputRows   R·k (Int32) layer 0: Wx rows of each row's one-hot inputs (in(r, g)); ChunkInputs'
import DrummerCore

final class LSTMLayer: @unchecked Sendable {
    /// Where the layer's input comes from.
    enum Input {
        /// Layer 0: k one-hot groups; `rows` holds, per chunk row, the Wx rows of its classes.
        case oneHot(rows: Int32Buffer, groups: Int)
        /// A layer above: the h of the layer below (its rows 1…U of hs).
        case dense(below: LSTMLayer)
    }

    let layout: ParameterLayout.Layer
    let input: Input
    let U: Int, B: Int, H: Int, G: Int
    /// The parameters (every layer's Wx, then Wy) and the gradient this layer writes (same layout).
    let params: FloatBuffer, grad: FloatBuffer
    let hs: FloatBuffer, cs: FloatBuffer, acts: FloatBuffer, tanhC: FloatBuffer
    let dHout: FloatBuffer, dGates: FloatBuffer
    let dhNext: FloatBuffer, dc: FloatBuffer, ones: FloatBuffer
    /// Layer 0's scratch for the input gradient's scatter (Kernels.scatterRows): a run start per
    /// input row (+ 1) and a source row per (row, group); empty above layer 0.
    let scatterStart: Int32Buffer, scatterOrder: Int32Buffer
    /// The recurrent products (1) and (1'): OpenBLAS or CKernels' own kernel (AVX-512 or AVX2).
    var recurrent: RecurrentProduct
    /// Layer 0's input from a reference class per group (ReferenceClasses.swift); nil: the direct
    /// sum of one Wx row per group (the 2017 layout, and every layer above layer 0).
    private(set) var reference: ReferenceClasses?
    /// Dropout on this layer's input (a layer above layer 0, when training with --dropout);
    /// nil without dropout.
    private(set) var dropout: DropoutMask?

    /// Turns dropout of this layer's input on (buffers allocated once) or off.
    func setDropout(_ on: Bool) {
        guard case .dense = input else { return }
        dropout = DropoutMask.toggled(dropout, on: on, rows: U * B, width: H)
    }

    /// Layer 0 sums its input from a reference class per group (buffers allocated once) or
    /// directly; no effect above layer 0.
    func setReferenceClasses(_ on: Bool) {
        guard case .oneHot = input else { return }
        if !on {
            reference = nil
        } else if reference == nil {
            reference = ReferenceClasses(groupRows: layout.inputGroupRows, rows: U * B, gates: G)
        }
    }

    /// The input rows the products read: the layer below's h, or with dropout x ⊙ mask.
    private func inputRows(_ rows: Range<Int>, below: LSTMLayer) -> UnsafeBufferPointer<Float> {
        dropout?.maskedRows(rows) ?? below.hRows(rows)
    }

    /// `referenceClasses`: layer 0 sums its input from a reference class per group.
    init(layout: ParameterLayout.Layer, input: Input, hidden: Int, unroll: Int, batch: Int,
         params: FloatBuffer, grad: FloatBuffer, referenceClasses: Bool = false) {
        self.layout = layout
        self.input = input
        U = unroll; B = batch; H = hidden; G = 4 * hidden
        self.params = params
        self.grad = grad
        let R = U * B
        hs = FloatBuffer(count: (U + 1) * B * H)
        cs = FloatBuffer(count: (U + 1) * B * H)
        acts = FloatBuffer(count: R * G)
        tanhC = FloatBuffer(count: R * H)
        dHout = FloatBuffer(count: R * H)
        dGates = acts
        dhNext = FloatBuffer(count: B * H)
        dc = FloatBuffer(count: B * H)
        ones = FloatBuffer(count: R, value: 1)
        if case .oneHot(_, let k) = input {
            scatterStart = Int32Buffer(count: layout.inputBlock.count / G + 1)
            scatterOrder = Int32Buffer(count: R * k)
        } else {
            scatterStart = Int32Buffer(count: 0)
            scatterOrder = Int32Buffer(count: 0)
        }
        recurrent = RecurrentProduct(kernel: RecurrentProduct.defaultKernel(rows: batch), hidden: hidden)
        setReferenceClasses(referenceClasses)
    }

    /// Bytes of the buffers one layer of these sizes allocates (hs, cs, acts (and dGates over
    /// it), tanhC, dHout, ones per row, and the recurrent kernel's two packed copies of W_rec;
    /// nil on overflow).
    static func workspaceBytes(hidden H: Int, unroll: Int, batch: Int) -> Int? {
        let (rows, o1) = max(0, unroll).multipliedReportingOverflow(by: max(0, batch))
        let perRow = 4 * H + 2 * H + 1 + 2 * H
        let (bytes, o2) = rows.multipliedReportingOverflow(by: 4 * perRow)
        // Each copy: at most G·H + 32·G floats (columns padded to whole 32-column panels).
        let (rec, o3) = H.multipliedReportingOverflow(by: 4 * H)
        let (padded, o4) = rec.addingReportingOverflow(32 * 4 * H)
        let (panels, o5) = padded.multipliedReportingOverflow(by: 2 * 4)
        let (sum, o6) = bytes.addingReportingOverflow(panels)
        return o1 || o2 || o3 || o4 || o5 || o6 ? nil : sum
    }

    // MARK: carried state

    /// (h_{−1}, c_{−1}) of this layer's streams, B·H each.
    func setState(h: ArraySlice<Float>, c: ArraySlice<Float>) {
        precondition(h.count == B * H && c.count == B * H, "LSTMLayer.setState: B·H values each")
        _ = hs.mutable(0, B * H).update(fromContentsOf: h)
        _ = cs.mutable(0, B * H).update(fromContentsOf: c)
    }

    var carriedState: (h: UnsafeBufferPointer<Float>, c: UnsafeBufferPointer<Float>) {
        (hs.buffer(0, B * H), cs.buffer(0, B * H))
    }

    /// Moves (h_{U−1}, c_{U−1}) into block 0 for the next chunk.
    func carryState() {
        hs.pointer.update(from: hs.pointer + U * B * H, count: B * H)
        cs.pointer.update(from: cs.pointer + U * B * H, count: B * H)
    }

    func resetState() {
        hs.pointer.update(repeating: 0, count: B * H)
        cs.pointer.update(repeating: 0, count: B * H)
    }

    /// The h rows of `rows` (rows.count × H): block t+1 of hs holds step t's.
    func hRows(_ rows: Range<Int>) -> UnsafeBufferPointer<Float> { hs.buffer((rows.lowerBound + B) * H, rows.count * H) }

    private func weights(_ r: Range<Int>) -> UnsafeBufferPointer<Float> { params.buffer(r.lowerBound, r.count) }

    // MARK: forward

    /// Layer 0 with reference classes: chooses the chunk's references from its input rows and
    /// writes what the forward steps read; before the chunk's first forwardStep.
    func prepareInputs() {
        guard let reference, case .oneHot(let inputRows, _) = input else { return }
        reference.prepare(inputRows: inputRows.buffer(0, inputRows.count), w: weights(layout.inputBlock),
                          bias: weights(layout.bias))
    }

    /// (1)'s input part for `rows` of a layer above layer 0: acts = x · W_in + bias, one GEMM.
    /// Reads the layer below's h of these rows; must run before forwardStep of their steps.
    func inputProduct(rows: Range<Int>) {
        guard case .dense(let below) = input else { return }
        let r0 = rows.lowerBound, nr = rows.count
        // x ⊙ mask for these rows (the mask is the chunk's, set by ChunkPipeline).
        dropout?.apply(below.hRows(rows), rows: rows)
        let bias = weights(layout.bias)
        for r in rows { _ = acts.mutable(r * G, G).update(fromContentsOf: bias) }
        BLAS.sgemm(.none, .none, m: nr, n: G, k: H, alpha: 1, a: inputRows(rows, below: below), lda: H,
                   b: weights(layout.inputBlock), ldb: G, beta: 1, c: acts.mutable(r0 * G, nr * G), ldc: G)
    }

    /// (1)–(4) for the B rows of step t: reads h_{t−1}, c_{t−1}; writes acts, c_t, tanh(c_t), h_t.
    func forwardStep(_ t: Int) {
        // Each row's input block prefetches step t+1's row for writing: its lines were last
        // touched a chunk ago (the backward sweep) and left the caches since.
        if let reference {
            for b in 0..<B {
                let r = t * B + b
                reference.inputBlock(row: r, out: acts.mutable(r * G, G), prefetching: nextActs(r))
            }
        } else if case .oneHot(let inputRows, let k) = input {
            let inputBlock = weights(layout.inputBlock), bias = weights(layout.bias)
            for b in 0..<B {
                let r = t * B + b
                Kernels.inputBlock(wx: inputBlock, G: G, rows: inputRows.buffer(r * k, k), bias: bias,
                                   out: acts.mutable(r * G, G), prefetching: nextActs(r))
            }
        }
        // a_t += h_{t−1} · W_rec    [B×H]·[H×G]
        recurrent.multiply(rows: B, previousH(rows: (t * B)..<((t + 1) * B)), by: .weights, of: params,
                           at: layout.recurrent, into: acts.mutable(t * B * G, B * G), accumulate: true)
        for b in 0..<B {
            let r = t * B + b
            Kernels.cellForward(H: H, gates: acts.mutable(r * G, G), cPrev: previousC(r),
                                cNew: cs.mutable((r + B) * H, H), tanhC: tanhC.mutable(r * H, H),
                                hNew: hs.mutable((r + B) * H, H))
        }
    }

    /// Row r's acts one step later (r + B), nil past the chunk's last step.
    @inline(__always) private func nextActs(_ r: Int) -> UnsafeMutableBufferPointer<Float>? {
        r + B < U * B ? acts.mutable((r + B) * G, G) : nil
    }

    /// h_{t−1} of `rows` (row r's is hs at r·H: step t's B rows are hs block t): the forward
    /// step reads it for (1), the weight gradient for dW_rec.
    @inline(__always) private func previousH(rows: Range<Int>) -> UnsafeBufferPointer<Float> {
        hs.buffer(rows.lowerBound * H, rows.count * H)
    }

    /// c_{t−1} of row r: cs block t's row.
    @inline(__always) private func previousC(_ r: Int) -> UnsafeBufferPointer<Float> { cs.buffer(r * H, H) }

    // MARK: backward

    /// Clears dhNext and dc before the backward sweep (nothing flows in from past the chunk).
    func startBackward() {
        dhNext.fill(0)
        dc.fill(0)
    }

    /// (4')–(2') for the B rows of step t, then (1')'s dhNext = da · W_recᵀ for step t−1
    /// (skipped at t = 0: the carried state gets no gradient).
    func backwardStep(_ t: Int) {
        // Each row's cell backward prefetches step t−1's activations, written a whole forward
        // sweep ago: without it the sweep waited on them (half of the cell backward's time).
        for b in 0..<B {
            let r = t * B + b
            Kernels.cellBackward(H: H, acts: acts.buffer(r * G, G), cPrev: previousC(r),
                                 tanhC: tanhC.buffer(r * H, H), dhOut: dHout.buffer(r * H, H),
                                 dhNext: dhNext.buffer(b * H, H), dc: dc.mutable(b * H, H),
                                 dGates: dGates.mutable(r * G, G),
                                 prefetching: t > 0 ? acts.buffer((r - B) * G, G) : nil)
        }
        guard t > 0 else { return }
        // dhNext = da_t · W_recᵀ    [B×G]·[G×H]
        recurrent.multiply(rows: B, dGates.buffer(t * B * G, B * G), by: .transposedWeights, of: params,
                           at: layout.recurrent, into: dhNext.mutable(0, B * H), accumulate: false)
    }

    /// (1')'s weight gradients for `rows`: dW_rec (+)= h_{t−1}ᵀ · da, dWx[bias] (+)= Σ da, and
    /// the input's: layer 0 dWx[in(r, g)] += da_r (a scatter; with reference classes, of the
    /// pairs off their reference only), above it dW_in (+)= xᵀ · da and the layer below's
    /// dHout = da · W_inᵀ for these rows. `first` overwrites instead of accumulating; `last`
    /// (the chunk's rows from 0, the final call) completes layer 0's reference rows.
    func inputGradients(rows: Range<Int>, first: Bool, last: Bool) {
        let r0 = rows.lowerBound, nr = rows.count
        let da = dGates.buffer(r0 * G, nr * G)
        let beta: Float = first ? 0 : 1
        let gBias = layout.bias, gIn = layout.inputBlock
        recurrentGradient(rows: rows, first: first)
        BLAS.sgemv(.transposed, rows: nr, cols: G, alpha: 1, a: da, lda: G, x: ones.buffer(0, nr), beta: beta,
                   y: grad.mutable(gBias.lowerBound, gBias.count))
        switch input {
        case .oneHot(let inputRows, let k):
            // `first` overwrites: no separate pass zeroing the input block's gradient (5 MB at the
            // recipe's shape) before the scatter.
            // With reference classes, the pairs of rows at their reference are −1 (none): those
            // gradient rows are filled from the bias gradient after the last block.
            let dIn = grad.mutable(gIn.lowerBound, gIn.count)
            let pairs = reference?.rows ?? inputRows
            Kernels.scatterRows(da, G: G, rows: pairs.buffer(r0 * k, nr * k), k: k, into: dIn, overwrite: first,
                                start: scatterStart.mutable(0, scatterStart.count), order: scatterOrder.mutable(0, nr * k))
            if last, let reference {
                reference.fillReferenceGradients(dIn: dIn, dBias: grad.buffer(gBias.lowerBound, gBias.count))
            }
        case .dense(let below):
            // dW_in (+)= xᵀ · da;  dx = da · W_inᵀ → the layer below's dHout (with dropout,
            // x is x ⊙ mask and dh = dx ⊙ mask)
            BLAS.sgemm(.transposed, .none, m: H, n: G, k: nr, alpha: 1, a: inputRows(rows, below: below), lda: H,
                       b: da, ldb: G, beta: beta, c: grad.mutable(gIn.lowerBound, gIn.count), ldc: G)
            let dh = below.dHout.mutable(r0 * H, nr * H)
            BLAS.sgemm(.none, .transposed, m: nr, n: H, k: G, alpha: 1, a: da, lda: G, b: weights(gIn), ldb: G,
                       beta: 0, c: dh, ldc: H)
            dropout?.maskGradient(dh, rows: rows)
        }
    }

    /// dW_rec (+)= h_{t−1}ᵀ · da over `rows` (row r's h_{t−1} is hs at r·H): one GEMM.
    private func recurrentGradient(rows: Range<Int>, first: Bool) {
        let gRec = layout.recurrent
        BLAS.sgemm(.transposed, .none, m: H, n: G, k: rows.count, alpha: 1, a: previousH(rows: rows), lda: H,
                   b: dGates.buffer(rows.lowerBound * G, rows.count * G), ldb: G, beta: first ? 0 : 1,
                   c: grad.mutable(gRec.lowerBound, gRec.count), ldc: G)
    }
}
