// Forward and backward of the LSTM over one chunk of U steps for B streams, on
// buffers allocated once. Row r = t·B + b indexes (step t, stream b).
//
// Only the recurrent products are sequential: forward gates_t += h_{t−1}·W_rec
// (GEMV at B = 1, [B×H]·[H×G] GEMM otherwise) and backward dh_{t−1} = dG_t·W_recᵀ.
// The input block is two row additions (x is one-hot: note row + tick row) and its
// gradient a scatter-add; the output layer, dWy, dH from the output, dW_rec and the
// bias gradients are one GEMM (or GEMV with a ones vector) per chunk.
//
// Buffers (floats):
//   hs, cs   (U+1)·B·H   block 0 is the carried state (h_{−1}, c_{−1}), block t+1 is h_t, c_t
//   acts     U·B·G       σ(f), σ(i), σ(o), tanh(g) per row
//   tanhC    U·B·H       tanh(c_t)
//   logits   U·B·V       logits, then scale·(softmax − onehot)
//   dHout    U·B·H       dLoss/dh_t from the output layer
//   dGates   U·B·G       dLoss/d(pre-activation gates)
//   dhNext, dc   B·H     running gradients flowing to step t−1
//   ones     U·B         for column sums through GEMV
import DrummerCore

final class ChunkWorkspace {
    let shape: ModelShape
    let U: Int, B: Int, H: Int, G: Int, V: Int, N: Int
    let hs: FloatBuffer, cs: FloatBuffer, acts: FloatBuffer, tanhC: FloatBuffer
    let logits: FloatBuffer, dHout: FloatBuffer, dGates: FloatBuffer
    let dhNext: FloatBuffer, dc: FloatBuffer, ones: FloatBuffer
    /// Row indices into Wx of the inputs' note and tick, and the targets' note and tick index, per row.
    let inNote: UnsafeMutablePointer<Int>, inTick: UnsafeMutablePointer<Int>
    let outNote: UnsafeMutablePointer<Int>, outTick: UnsafeMutablePointer<Int>

    init(shape: ModelShape, unroll: Int, batch: Int) {
        self.shape = shape
        U = unroll; B = batch; H = shape.hidden; G = 4 * shape.hidden; V = shape.vocab; N = shape.notes
        let R = U * B
        hs = FloatBuffer(count: (U + 1) * B * H)
        cs = FloatBuffer(count: (U + 1) * B * H)
        acts = FloatBuffer(count: R * G)
        tanhC = FloatBuffer(count: R * H)
        logits = FloatBuffer(count: R * V)
        dHout = FloatBuffer(count: R * H)
        dGates = FloatBuffer(count: R * G)
        dhNext = FloatBuffer(count: B * H)
        dc = FloatBuffer(count: B * H)
        ones = FloatBuffer(count: R, value: 1)
        inNote = .allocate(capacity: R); inNote.initialize(repeating: 0, count: R)
        inTick = .allocate(capacity: R); inTick.initialize(repeating: 0, count: R)
        outNote = .allocate(capacity: R); outNote.initialize(repeating: 0, count: R)
        outTick = .allocate(capacity: R); outTick.initialize(repeating: 0, count: R)
    }

    deinit {
        inNote.deallocate(); inTick.deallocate(); outNote.deallocate(); outTick.deallocate()
    }

    func setState(h: [Float], c: [Float]) {
        for k in 0..<(B * H) { hs.pointer[k] = h[k]; cs.pointer[k] = c[k] }
    }

    var currentState: (h: [Float], c: [Float]) {
        (Array(hs.buffer(0, B * H)), Array(cs.buffer(0, B * H)))
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

    /// Runs the chunk starting at data pointer `p` of every segment of length `segment`;
    /// writes the gradient of the chunk's loss into `grad` (P: dWx then dWy) and returns the loss.
    /// Reads the carried state in block 0 and leaves it unchanged.
    func forwardBackward(
        params: UnsafePointer<Float>, grad: UnsafeMutablePointer<Float>, events: [Int32],
        segment: Int, pointer p: Int
    ) -> Float {
        let R = U * B
        events.withUnsafeBufferPointer { ev in
            for t in 0..<U {
                for b in 0..<B {
                    let r = t * B + b
                    let e = b * segment + p + t
                    inNote[r] = shape.noteRow(Int(ev[2 * e]))
                    inTick[r] = shape.tickRow(Int(ev[2 * e + 1]))
                    outNote[r] = Int(ev[2 * e + 2])
                    outTick[r] = Int(ev[2 * e + 3])
                }
            }
        }
        let wx = params, wy = params + shape.wxCount
        let gwx = grad, gwy = grad + shape.wxCount
        let loss = forward(wx: wx, wy: wy, rows: R)
        backward(wx: wx, wy: wy, gwx: gwx, gwy: gwy, rows: R)
        return loss
    }

    private func forward(wx: UnsafePointer<Float>, wy: UnsafePointer<Float>, rows R: Int) -> Float {
        let rec = UnsafeBufferPointer(start: wx + shape.recurrentRow * G, count: H * G)
        let bias = wx + shape.wxBiasRow * G
        for t in 0..<U {
            let gt = acts.pointer + t * B * G
            for b in 0..<B {
                let r = t * B + b
                let g = gt + b * G, rn = wx + inNote[r] * G, rt = wx + inTick[r] * G
                for j in 0..<G { g[j] = rn[j] + rt[j] + bias[j] }
            }
            if B == 1 {
                BLAS.sgemv(.transposed, rows: H, cols: G, alpha: 1, a: rec, lda: G,
                           x: hs.buffer(t * H, H), beta: 1, y: acts.mutable(t * G, G))
            } else {
                BLAS.sgemm(.none, .none, m: B, n: G, k: H, alpha: 1, a: hs.buffer(t * B * H, B * H), lda: H,
                           b: rec, ldb: G, beta: 1, c: acts.mutable(t * B * G, B * G), ldc: G)
            }
            for b in 0..<B {
                let r = t * B + b
                Kernels.cellForward(
                    H: H, gates: gt + b * G, cPrev: cs.pointer + r * H, cNew: cs.pointer + (r + B) * H,
                    tanhC: tanhC.pointer + r * H, hNew: hs.pointer + (r + B) * H)
            }
        }
        // Output layer for all rows at once: logits = [h, 1]·Wy.
        let wyBias = wy + H * V
        for r in 0..<R { (logits.pointer + r * V).update(from: wyBias, count: V) }
        BLAS.sgemm(.none, .none, m: R, n: V, k: H, alpha: 1, a: hs.buffer(B * H, R * H), lda: H,
                   b: UnsafeBufferPointer(start: wy, count: H * V), ldb: V, beta: 1,
                   c: logits.mutable(0, R * V), ldc: V)
        let scale = 1 / Float(R)
        var total: Double = 0
        for r in 0..<R {
            let y = logits.pointer + r * V
            let ln = Kernels.softmaxCrossEntropy(y, count: N, target: outNote[r], scale: scale)
            let lt = Kernels.softmaxCrossEntropy(y + N, count: V - N, target: outTick[r], scale: scale)
            total += Double(ln) + Double(lt)
        }
        return Float(total / Double(R))
    }

    private func backward(
        wx: UnsafePointer<Float>, wy: UnsafePointer<Float>,
        gwx: UnsafeMutablePointer<Float>, gwy: UnsafeMutablePointer<Float>, rows R: Int
    ) {
        let dl = logits.buffer(0, R * V)
        // dWy = [h, 1]ᵀ·dlogits; dHout = dlogits·Wy[0..<H]ᵀ.
        BLAS.sgemm(.transposed, .none, m: H, n: V, k: R, alpha: 1, a: hs.buffer(B * H, R * H), lda: H,
                   b: dl, ldb: V, beta: 0, c: UnsafeMutableBufferPointer(start: gwy, count: H * V), ldc: V)
        BLAS.sgemv(.transposed, rows: R, cols: V, alpha: 1, a: dl, lda: V, x: ones.buffer(0, R), beta: 0,
                   y: UnsafeMutableBufferPointer(start: gwy + H * V, count: V))
        BLAS.sgemm(.none, .transposed, m: R, n: H, k: V, alpha: 1, a: dl, lda: V,
                   b: UnsafeBufferPointer(start: wy, count: H * V), ldb: V, beta: 0,
                   c: dHout.mutable(0, R * H), ldc: H)
        let rec = UnsafeBufferPointer(start: wx + shape.recurrentRow * G, count: H * G)
        dhNext.fill(0)
        dc.fill(0)
        for t in stride(from: U - 1, through: 0, by: -1) {
            for b in 0..<B {
                let r = t * B + b
                Kernels.cellBackward(
                    H: H, acts: acts.pointer + r * G, cPrev: cs.pointer + r * H, tanhC: tanhC.pointer + r * H,
                    dhOut: dHout.pointer + r * H, dhNext: dhNext.pointer + b * H, dc: dc.pointer + b * H,
                    dGates: dGates.pointer + r * G)
            }
            if t == 0 { break }  // the gradient reaching the carried state is not used
            if B == 1 {
                BLAS.sgemv(.none, rows: H, cols: G, alpha: 1, a: rec, lda: G, x: dGates.buffer(t * G, G),
                           beta: 0, y: dhNext.mutable(0, H))
            } else {
                BLAS.sgemm(.none, .transposed, m: B, n: H, k: G, alpha: 1, a: dGates.buffer(t * B * G, B * G),
                           lda: G, b: rec, ldb: G, beta: 0, c: dhNext.mutable(0, B * H), ldc: H)
            }
        }
        let dg = dGates.buffer(0, R * G)
        // dW_rec = [h_{t−1}]ᵀ·dGates over the chunk; bias gradient = column sums of dGates.
        BLAS.sgemm(.transposed, .none, m: H, n: G, k: R, alpha: 1, a: hs.buffer(0, R * H), lda: H,
                   b: dg, ldb: G, beta: 0,
                   c: UnsafeMutableBufferPointer(start: gwx + shape.recurrentRow * G, count: H * G), ldc: G)
        BLAS.sgemv(.transposed, rows: R, cols: G, alpha: 1, a: dg, lda: G, x: ones.buffer(0, R), beta: 0,
                   y: UnsafeMutableBufferPointer(start: gwx + shape.wxBiasRow * G, count: G))
        // Input block: scatter-add of dGates rows into the note and tick rows.
        gwx.update(repeating: 0, count: V * G)
        for r in 0..<R {
            let d = dGates.pointer + r * G
            let rn = gwx + inNote[r] * G, rt = gwx + inTick[r] * G
            for j in 0..<G { rn[j] += d[j] }
            for j in 0..<G { rt[j] += d[j] }
        }
    }
}
