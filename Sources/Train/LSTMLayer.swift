// The LSTM layer over one chunk of U steps for B streams: the forward and the backward
// pass side by side, on buffers allocated once. This file is the math; the order in which
// the phases run and on which thread is ChunkPipeline.swift's; the update is Optimizer's.
// The inference forward (one stream, one event at a time) is DrummerCore's LSTMInference;
// both use CKernels' cell and input-block kernels.
//
// Letters:
//   U steps per chunk, B streams of this layer (a stream group; B_all = the whole batch),
//   R = U·B rows, row r = t·B + b (step t, stream b);
//   H hidden size, G = 4H gate columns (blocks f, i, o, g);
//   I input width (one-hot input groups side by side), O output width (softmax output groups);
//   k input groups, m output groups (the original model: k = m = 2, note and tick).
// Parameters, one buffer: Wx (I+H+1)×G = [input rows | W_rec (H rows) | bias], then
// Wy (H+1)×O = [W_out (H rows) | bias]. The gradient buffer has the same layout.
//
// FORWARD, step t, stream b, row r:
//   (1) a_r  = Σ_g Wx[in(r, g)] + Wx[bias] + h_{t−1,b} · W_rec          a: G   (forwardStep)
//   (2) f, i, o = σ(a_f), σ(a_i), σ(a_o);  g = tanh(a_g)                         (forwardStep)
//   (3) c_r  = f ⊙ c_{t−1,b} + i ⊙ g                                              (forwardStep)
//   (4) h_r  = o ⊙ tanh(c_r)                                                      (forwardStep)
//   (5) y_r  = h_r · W_out + Wy[bias]                                   y: O   (outputLayer)
//   (6) loss = 1/(U·B_all) Σ_r Σ_groups −log softmax(y_r[group])[target(r, group)]
//
// BACKWARD (the same equations, read from the loss back):
//   (6') dy_r   = (softmax(y_r[group]) − onehot(target(r, group))) / (U·B_all)       (outputLayer)
//   (5') dW_out += h_rᵀ · dy_r;  dWy[bias] += dy_r;  dhOut_r = dy_r · W_outᵀ          (outputLayer)
//   (4') dh     = dhOut_r + dhNext_b        (dhNext_b = da_{t+1,b} · W_recᵀ, 0 at t = U−1)
//        dc     = dcNext_b + dh ⊙ o ⊙ (1 − tanh²(c_r));  da_o = dh ⊙ tanh(c_r) ⊙ o(1 − o)
//   (3') da_f   = dc ⊙ c_{t−1,b} ⊙ f(1 − f);  da_i = dc ⊙ g ⊙ i(1 − i);  dcNext_b = dc ⊙ f
//   (2') da_g   = dc ⊙ i ⊙ (1 − g²)                                                   (backwardStep)
//   (1') dhNext_b = da_r · W_recᵀ                                                     (backwardStep)
//        dW_rec += h_{t−1,b}ᵀ · da_r;  dWx[bias] += da_r;  dWx[in(r, g)] += da_r     (inputGradients)
// The state carried into the chunk (h_{−1}, c_{−1}) gets no gradient (truncated BPTT).
//
// Buffers (floats unless marked):
//   hs, cs      (U+1)·B·H   block 0: the carried (h_{−1}, c_{−1}); block t+1: h_t, c_t
//   acts        R·G         σ(f), σ(i), σ(o), tanh(g)
//   tanhC       R·H         tanh(c_t)
//   logits      R·O         y, then dy
//   rowLoss     R           Σ_groups CE per row
//   dHout       R·H         dLoss/dh_t through the output layer
//   dGates      R·G         da
//   dhNext, dc  B·H         gradients flowing from step t to step t−1
//   ones        R           for column sums as GEMVs
//   inputRows   R·k (Int32) Wx rows of each row's one-hot inputs (in(r, g))
//   targets     R·m (Int32) class index within each output group (target(r, g))
import Checkpoints
import DrummerCore

final class LSTMLayer: @unchecked Sendable {
    let shape: ModelShape
    let U: Int, B: Int, H: Int, G: Int, I: Int, O: Int, k: Int, m: Int
    /// Streams firstStream..<firstStream + B of a batch of `totalStreams` (a stream group).
    let firstStream: Int, totalStreams: Int
    /// Each output group's first column in Wy and its size.
    let outputOffsets: [Int], outputSizes: [Int]
    /// Each input group's first row in Wx.
    let inputOffsets: [Int]
    /// P parameters (Wx then Wy) and the gradient this layer writes (same layout).
    let params: FloatBuffer, grad: FloatBuffer
    let hs: FloatBuffer, cs: FloatBuffer, acts: FloatBuffer, tanhC: FloatBuffer
    let logits: FloatBuffer, rowLoss: FloatBuffer, dHout: FloatBuffer, dGates: FloatBuffer
    let dhNext: FloatBuffer, dc: FloatBuffer, ones: FloatBuffer
    let inputRows: Int32Buffer, targets: Int32Buffer
    /// The recurrent products (1) and (1'): OpenBLAS or CKernels' AVX-512 kernel.
    var recurrent: RecurrentProduct
    /// Training input noise (InputNoise.swift) and the step whose draws `gather` makes.
    var noise: InputNoise?
    var noiseStep = 0

    init(shape: ModelShape, unroll: Int, batch: Int, firstStream: Int = 0, totalStreams: Int? = nil,
         params: FloatBuffer, grad: FloatBuffer) {
        self.shape = shape
        U = unroll; B = batch; H = shape.hidden; G = 4 * shape.hidden
        I = shape.inputWidth; O = shape.outputWidth
        k = shape.inputGroups.count; m = shape.outputGroups.count
        self.firstStream = firstStream
        self.totalStreams = totalStreams ?? batch
        inputOffsets = (0..<k).map(shape.inputOffset)
        outputOffsets = (0..<m).map(shape.outputOffset)
        outputSizes = shape.outputGroups
        self.params = params
        self.grad = grad
        let R = U * B
        hs = FloatBuffer(count: (U + 1) * B * H)
        cs = FloatBuffer(count: (U + 1) * B * H)
        acts = FloatBuffer(count: R * G)
        tanhC = FloatBuffer(count: R * H)
        logits = FloatBuffer(count: R * O)
        rowLoss = FloatBuffer(count: R)
        dHout = FloatBuffer(count: R * H)
        dGates = FloatBuffer(count: R * G)
        dhNext = FloatBuffer(count: B * H)
        dc = FloatBuffer(count: B * H)
        ones = FloatBuffer(count: R, value: 1)
        inputRows = Int32Buffer(count: R * k)
        targets = Int32Buffer(count: R * m)
        recurrent = RecurrentProduct(kernel: RecurrentProduct.defaultKernel(rows: batch), hidden: shape.hidden)
    }

    /// Bytes of the buffers a layer of these sizes allocates.
    static func workspaceBytes(shape: ModelShape, unroll: Int, batch: Int) -> Int {
        let H = shape.hidden, G = 4 * H, k = shape.inputGroups.count, m = shape.outputGroups.count
        let (rows, o1) = max(0, unroll).multipliedReportingOverflow(by: max(0, batch))
        // acts, dGates, tanhC, dHout, logits, rowLoss, ones, hs, cs (floats); inputRows, targets (Int32).
        let perRow = 2 * G + 2 * H + shape.outputWidth + 2 + 2 * H + k + m
        let (bytes, o2) = rows.multipliedReportingOverflow(by: 4 * perRow)
        return o1 || o2 ? Int.max : bytes
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

    // MARK: inputs

    /// Fills inputRows and targets for the chunk whose inputs are events p..p+U−1 of each of
    /// this layer's streams' segments (length `segment`; the batch's stream s starts at event
    /// s·segment) and whose targets are events p+1..p+U. `events` holds k class indices per
    /// event, one per input group; output group g's target is the event's class in `targetColumn[g]`.
    func gather(events: UnsafeBufferPointer<Int32>, segment: Int, pointer p: Int, targetColumn: [Int]) {
        for t in 0..<U {
            for b in 0..<B {
                let r = t * B + b
                let e = (firstStream + b) * segment + p + t
                for g in 0..<k { inputRows[r * k + g] = Int32(inputOffsets[g]) + events[e * k + g] }
                if let noise, noise.draw == .uniform {
                    for (j, g) in noise.groups.enumerated() {
                        if let c = noise.replacement(step: noiseStep, event: e, slot: j) {
                            inputRows[r * k + g] = Int32(inputOffsets[g] + c)
                        }
                    }
                }
                for g in 0..<m { targets[r * m + g] = events[(e + 1) * k + targetColumn[g]] }
            }
        }
    }

    /// Model-drawn input noise (InputNoise.swift, draw == .model), after `gather`: a forward
    /// sweep over the true inputs, then for each row r (step t, stream b) the model's prediction
    /// of its input event, y = h_{t−1,b} · W_out + Wy[bias] (the carried h at t = 0), and, where
    /// the noise replaces a group's class, a draw from that group's softmax. Uses acts, cs, hs,
    /// tanhC and logits as scratch (the chunk's forward sweep rewrites them); block 0 is kept.
    func drawInputsFromModel(segment: Int, pointer p: Int) {
        guard let noise, noise.draw == .model else { return }
        for t in 0..<(U - 1) { forwardStep(t) }
        // y = h_{t−1} · W_out + bias for every row: the h blocks 0…U−1.
        computeLogits(rows: 0..<(U * B), h: hs.buffer(0, U * B * H))
        for t in 0..<U {
            for b in 0..<B {
                let r = t * B + b
                let e = (firstStream + b) * segment + p + t
                for (j, g) in noise.groups.enumerated() {
                    guard let w = noise.replacementWord(step: noiseStep, event: e, slot: j) else { continue }
                    let o = noise.outputGroups[j]
                    let c = InputNoise.draw(from: logits.buffer(r * O + outputOffsets[o], outputSizes[o]), w)
                    inputRows[r * k + g] = Int32(inputOffsets[g] + c)
                }
            }
        }
    }

    // MARK: forward

    /// (1)–(4) for the B rows of step t: reads h_{t−1}, c_{t−1}; writes acts, c_t, tanh(c_t), h_t.
    func forwardStep(_ t: Int) {
        let wx = params.buffer(0, shape.wxCount)
        let inputBlock = UnsafeBufferPointer(rebasing: wx[0..<(I * G)])
        let bias = UnsafeBufferPointer(rebasing: wx[(shape.wxBiasRow * G)..<(shape.wxBiasRow * G + G)])
        for b in 0..<B {
            let r = t * B + b
            Kernels.inputBlock(wx: inputBlock, G: G, rows: inputRows.buffer(r * k, k), bias: bias,
                               out: acts.mutable(r * G, G))
        }
        // a_t += h_{t−1} · W_rec    [B×H]·[H×G]
        recurrent.multiply(rows: B, hs.buffer(t * B * H, B * H), by: .weights, of: params,
                           recurrentRow: shape.recurrentRow, into: acts.mutable(t * B * G, B * G), accumulate: true)
        for b in 0..<B {
            let r = t * B + b
            Kernels.cellForward(H: H, gates: acts.mutable(r * G, G), cPrev: cs.buffer(r * H, H),
                                cNew: cs.mutable((r + B) * H, H), tanhC: tanhC.mutable(r * H, H),
                                hNew: hs.mutable((r + B) * H, H))
        }
    }

    /// (5), (6), (6') and (5') for `rows`: logits, the cross-entropies of every output group
    /// (rowLoss), dy in place of the logits, dHout, and dWy (overwritten when `first`, else
    /// accumulated). Reads h of these rows, writes only these rows (and dWy).
    func outputLayer(rows: Range<Int>, first: Bool) {
        let r0 = rows.lowerBound, nr = rows.count
        let wOut = UnsafeBufferPointer(rebasing: params.buffer(shape.wxCount, shape.wyCount)[0..<(H * O)])
        let gwy = grad.mutable(shape.wxCount, shape.wyCount)
        let hRows = hs.buffer((r0 + B) * H, nr * H)
        // (5) y = h · W_out + bias
        computeLogits(rows: rows, h: hRows)
        // (6), (6'): loss per row, y ← dy
        let scale = 1 / Float(U * totalStreams)
        for r in rows {
            var loss: Float = 0
            for g in 0..<m {
                loss += Kernels.softmaxCrossEntropy(logits.mutable(r * O + outputOffsets[g], outputSizes[g]),
                                                    target: Int(targets[r * m + g]), scale: scale)
            }
            rowLoss.pointer[r] = loss
        }
        // (5') dW_out (+)= hᵀ · dy;  dWy[bias] (+)= Σ_rows dy;  dHout = dy · W_outᵀ
        let dy = logits.buffer(r0 * O, nr * O)
        let beta: Float = first ? 0 : 1
        BLAS.sgemm(.transposed, .none, m: H, n: O, k: nr, alpha: 1, a: hRows, lda: H, b: dy, ldb: O,
                   beta: beta, c: UnsafeMutableBufferPointer(rebasing: gwy[0..<(H * O)]), ldc: O)
        BLAS.sgemv(.transposed, rows: nr, cols: O, alpha: 1, a: dy, lda: O, x: ones.buffer(0, nr), beta: beta,
                   y: UnsafeMutableBufferPointer(rebasing: gwy[(H * O)...]))
        BLAS.sgemm(.none, .transposed, m: nr, n: H, k: O, alpha: 1, a: dy, lda: O, b: wOut, ldb: O, beta: 0,
                   c: dHout.mutable(r0 * H, nr * H), ldc: H)
    }

    /// (5) for `rows`: logits[r] = h[r − rows.lowerBound] · W_out + Wy[bias], from `h` (rows.count × H).
    func computeLogits(rows: Range<Int>, h: UnsafeBufferPointer<Float>) {
        let wy = params.buffer(shape.wxCount, shape.wyCount)
        for r in rows { _ = logits.mutable(r * O, O).update(fromContentsOf: wy[(H * O)...]) }
        BLAS.sgemm(.none, .none, m: rows.count, n: O, k: H, alpha: 1, a: h, lda: H,
                   b: UnsafeBufferPointer(rebasing: wy[0..<(H * O)]), ldb: O, beta: 1,
                   c: logits.mutable(rows.lowerBound * O, rows.count * O), ldc: O)
    }

    // MARK: backward

    /// Clears dhNext and dc before the backward sweep (nothing flows in from past the chunk).
    func startBackward() {
        dhNext.fill(0)
        dc.fill(0)
    }

    /// (4')–(2') for the B rows of step t, then (1')'s dhNext = da · W_recᵀ for step t−1
    /// (skipped at t = 0: the carried state gets no gradient).
    func backwardStep(_ t: Int) {
        for b in 0..<B {
            let r = t * B + b
            Kernels.cellBackward(H: H, acts: acts.buffer(r * G, G), cPrev: cs.buffer(r * H, H),
                                 tanhC: tanhC.buffer(r * H, H), dhOut: dHout.buffer(r * H, H),
                                 dhNext: dhNext.buffer(b * H, H), dc: dc.mutable(b * H, H),
                                 dGates: dGates.mutable(r * G, G))
        }
        guard t > 0 else { return }
        // dhNext = da_t · W_recᵀ    [B×G]·[G×H]
        recurrent.multiply(rows: B, dGates.buffer(t * B * G, B * G), by: .transposedWeights, of: params,
                           recurrentRow: shape.recurrentRow, into: dhNext.mutable(0, B * H), accumulate: false)
    }

    /// (1')'s weight gradients for `rows`: dW_rec (+)= h_{t−1}ᵀ · da, dWx[bias] (+)= Σ da, and
    /// the input rows: dWx[in(r, g)] += da_r (a scatter; the input block is zeroed first when
    /// `first`, which also overwrites dW_rec and the bias instead of accumulating).
    func inputGradients(rows: Range<Int>, first: Bool) {
        let r0 = rows.lowerBound, nr = rows.count
        let gwx = grad.mutable(0, shape.wxCount)
        let da = dGates.buffer(r0 * G, nr * G)
        let beta: Float = first ? 0 : 1
        BLAS.sgemm(.transposed, .none, m: H, n: G, k: nr, alpha: 1, a: hs.buffer(r0 * H, nr * H), lda: H,
                   b: da, ldb: G, beta: beta,
                   c: UnsafeMutableBufferPointer(rebasing: gwx[(shape.recurrentRow * G)..<(shape.wxBiasRow * G)]), ldc: G)
        BLAS.sgemv(.transposed, rows: nr, cols: G, alpha: 1, a: da, lda: G, x: ones.buffer(0, nr), beta: beta,
                   y: UnsafeMutableBufferPointer(rebasing: gwx[(shape.wxBiasRow * G)...]))
        if first { gwx.baseAddress!.update(repeating: 0, count: I * G) }
        for r in rows {
            for g in 0..<k {
                let row = Int(inputRows[r * k + g])
                Kernels.accumulate(dGates.buffer(r * G, G),
                                   into: UnsafeMutableBufferPointer(rebasing: gwx[(row * G)..<(row * G + G)]))
            }
        }
    }

    /// Σ over the chunk's rows of the per-row loss.
    var lossSum: Double {
        var total: Double = 0
        for r in 0..<(U * B) { total += Double(rowLoss.pointer[r]) }
        return total
    }
}
