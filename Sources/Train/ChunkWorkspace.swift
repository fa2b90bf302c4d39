// Forward and backward of the LSTM over one chunk of U steps for B streams, on
// buffers allocated once. Row r = t·B + b indexes (step t, stream b).
//
// Only the recurrent products are sequential: forward gates_t += h_{t−1}·W_rec
// (GEMV at B = 1, [B×H]·[H×G] GEMM otherwise) and backward dh_{t−1} = dG_t·W_recᵀ.
// The input block is two row additions (x is one-hot: note row + tick row) and its
// gradient a scatter-add; the output layer, dWy, dH from the output, dW_rec and the
// bias gradients are GEMMs (or GEMVs with a ones vector) over blocks of T steps.
//
// Two cores: the calling thread runs the sequential recurrence; a helper thread
// (OrderedJobs) runs the block GEMMs as soon as a block of steps is done — the
// output layer during the forward sweep, the weight gradients during the backward
// sweep — and half of the optimizer update. Jobs run one at a time in a fixed
// order whichever thread runs them (the caller takes over the ones the helper has
// not started when it reaches the end of a sweep), so results do not depend on
// timing, and `pipelined = false` (everything inline) gives identical bits.
// The two threads touch disjoint buffers: see the comments of each phase.
//
// Buffers (floats), R = U·B:
//   hs, cs   (U+1)·B·H   block 0 is the carried state (h_{−1}, c_{−1}), block t+1 is h_t, c_t
//   acts     R·G         σ(f), σ(i), σ(o), tanh(g) per row
//   tanhC    R·H         tanh(c_t)
//   logits   R·V         logits, then scale·(softmax − onehot)
//   rowLoss  R           CE(note) + CE(tick) per row
//   dHout    R·H         dLoss/dh_t from the output layer
//   dGates   R·G         dLoss/d(pre-activation gates)
//   dhNext, dc   B·H     running gradients flowing to step t−1
//   ones     R           for column sums through GEMV
//   recT     G·H         W_recᵀ, for the backward product with the AVX-512 kernel
//
// The recurrent products: at B ≥ 8 on a CPU with AVX-512, CKernels' drummer_gemm_avx512
// (no packing: W_rec, or its transpose copied once per chunk, stays in cache across the
// U calls); otherwise OpenBLAS. `Scripts/bench-train` shows the difference.
import Checkpoints
import CKernels
import DrummerCore

final class ChunkWorkspace: OrderedJobExecutor, @unchecked Sendable {
    let shape: ModelShape
    /// B: the streams of this workspace, streams firstStream..<firstStream + B of the
    /// trainer's `totalStreams` (a stream group; see Trainer).
    let U: Int, B: Int, H: Int, G: Int, V: Int, N: Int
    let firstStream: Int, totalStreams: Int
    /// Steps per pipeline block: about 256 rows, at least 8 blocks per chunk when U allows
    /// (shorter blocks shorten the tails where one thread waits for the other; measured best
    /// at B = 1: 25 steps).
    let T: Int
    /// P parameters (Wx then Wy) and their gradient, owned by the trainer.
    let params: FloatBuffer, grad: FloatBuffer
    let hs: FloatBuffer, cs: FloatBuffer, acts: FloatBuffer, tanhC: FloatBuffer
    let logits: FloatBuffer, rowLoss: FloatBuffer, dHout: FloatBuffer, dGates: FloatBuffer
    let dhNext: FloatBuffer, dc: FloatBuffer, ones: FloatBuffer
    /// Run the recurrent products with drummer_gemm_avx512 instead of OpenBLAS; true by
    /// default when `ownKernelAvailable` and B ≥ `ownKernelMinimumBatch`. Results differ
    /// from OpenBLAS's by float32 rounding only.
    var ownRecurrentKernel: Bool {
        didSet { if ownRecurrentKernel && recT.count == 0 { recT = FloatBuffer(count: G * H) } }
    }
    /// W_recᵀ (G×H), refreshed at the start of every chunk when `ownRecurrentKernel`.
    private(set) var recT: FloatBuffer
    /// Row indices into Wx of the inputs' note and tick, and the targets' note and tick index, per row.
    let inNote: UnsafeMutablePointer<Int>, inTick: UnsafeMutablePointer<Int>
    let outNote: UnsafeMutablePointer<Int>, outTick: UnsafeMutablePointer<Int>
    /// Run block work on the helper thread (true) or inline (false); same results.
    var pipelined = true
    /// The helper thread's queue, made on first use (a workspace that never pipelines and never
    /// runs a chunk asynchronously starts no thread).
    private var jobQueue: OrderedJobs?
    private var jobs: OrderedJobs {
        if let q = jobQueue { return q }
        let q = OrderedJobs()
        q.executor = self
        jobQueue = q
        return q
    }
    /// The optimizer settings and slot of the update job in flight.
    private var updateConfig = OptimizerConfig()
    private var updateSlot: FloatBuffer?
    /// The arguments and the result of an asynchronous chunk (`startChunk` / `finishChunk`).
    private var chunkEvents = UnsafeBufferPointer<Int32>(start: nil, count: 0)
    private var chunkSegment = 0, chunkPointer = 0
    private var chunkLossSum = 0.0

    init(shape: ModelShape, unroll: Int, batch: Int, firstStream: Int = 0, totalStreams: Int? = nil,
         params: FloatBuffer, grad: FloatBuffer) {
        self.shape = shape
        U = unroll; B = batch; H = shape.hidden; G = 4 * shape.hidden; V = shape.vocab; N = shape.notes
        self.firstStream = firstStream
        self.totalStreams = totalStreams ?? batch
        T = max(1, min(256 / batch, unroll / 8))
        self.params = params
        self.grad = grad
        let R = U * B
        hs = FloatBuffer(count: (U + 1) * B * H)
        cs = FloatBuffer(count: (U + 1) * B * H)
        acts = FloatBuffer(count: R * G)
        tanhC = FloatBuffer(count: R * H)
        logits = FloatBuffer(count: R * V)
        rowLoss = FloatBuffer(count: R)
        dHout = FloatBuffer(count: R * H)
        dGates = FloatBuffer(count: R * G)
        dhNext = FloatBuffer(count: B * H)
        dc = FloatBuffer(count: B * H)
        ones = FloatBuffer(count: R, value: 1)
        let own = ChunkWorkspace.ownKernelAvailable && batch >= ChunkWorkspace.ownKernelMinimumBatch
        ownRecurrentKernel = own
        recT = FloatBuffer(count: own ? G * H : 0)
        inNote = .allocate(capacity: R); inNote.initialize(repeating: 0, count: R)
        inTick = .allocate(capacity: R); inTick.initialize(repeating: 0, count: R)
        outNote = .allocate(capacity: R); outNote.initialize(repeating: 0, count: R)
        outTick = .allocate(capacity: R); outTick.initialize(repeating: 0, count: R)
    }

    deinit {
        jobQueue?.stop()
        inNote.deallocate(); inTick.deallocate(); outNote.deallocate(); outTick.deallocate()
    }

    /// Whether this CPU runs CKernels' AVX-512 recurrent product.
    static let ownKernelAvailable = drummer_kernels_have_avx512() != 0
    /// Below 8 rows the kernel's 8-row tiles are mostly empty and OpenBLAS is faster
    /// (H = 200: OpenBLAS 42–109 GFLOP/s at 1–4 rows against 13–37; from 8 rows the kernel 98–104 against 45–90).
    static let ownKernelMinimumBatch = 8

    // MARK: carried state

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

    // MARK: helper thread

    private func helper(_ job: ChunkJob) {
        if pipelined { jobs.submit(job) } else { run(job) }
    }

    private func waitForHelper() {
        if pipelined { jobs.drain() }
    }

    func run(_ job: ChunkJob) {
        switch job {
        case .output(let k): outputBlock(k)
        case .gradient(let k, let first): gradientBlock(k, first: first)
        case .transposeRecurrent: transposeRecurrent()
        case .chunk:
            chunkLossSum = forwardBackward(events: chunkEvents, segment: chunkSegment, pointer: chunkPointer)
        case .update(let count):
            Optimizer.update(updateConfig, params: params.pointer, grad: UnsafePointer(grad.pointer),
                             slot: updateSlot?.pointer, count: count)
        }
    }

    private var blockCount: Int { (U + T - 1) / T }
    private func rows(ofBlock k: Int) -> Range<Int> { (k * T * B)..<(min(U, (k + 1) * T) * B) }

    // MARK: chunk

    /// Runs the chunk starting at data pointer `p` of every segment of length `segment`
    /// (this workspace's streams); writes the gradient of the chunk's loss into `grad` (dWx
    /// then dWy) and returns the sum over its U·B rows of CE(note) + CE(tick). The loss whose
    /// gradient is written is the mean over U·totalStreams rows, so that the stream groups'
    /// gradients add up to the whole batch's. Reads the carried state in block 0 and leaves it
    /// unchanged.
    func forwardBackward(events: UnsafeBufferPointer<Int32>, segment: Int, pointer p: Int) -> Double {
        for t in 0..<U {
            for b in 0..<B {
                let r = t * B + b
                let e = (firstStream + b) * segment + p + t
                inNote[r] = shape.noteRow(Int(events[2 * e]))
                inTick[r] = shape.tickRow(Int(events[2 * e + 1]))
                outNote[r] = Int(events[2 * e + 2])
                outTick[r] = Int(events[2 * e + 3])
            }
        }
        forward()
        backward()
        var total: Double = 0
        for r in 0..<(U * B) { total += Double(rowLoss.pointer[r]) }
        return total
    }

    /// Runs `forwardBackward` on the helper thread (`finishChunk` returns its result); the
    /// events must stay valid until then. Requires `pipelined == false`: the helper thread
    /// runs the whole chunk, block work included.
    func startChunk(events: UnsafeBufferPointer<Int32>, segment: Int, pointer p: Int) {
        precondition(!pipelined, "an asynchronous chunk runs its block work inline")
        chunkEvents = events
        chunkSegment = segment
        chunkPointer = p
        jobs.submit(.chunk)
    }

    /// Waits for the chunk `startChunk` began (running it here if the helper has not started it).
    func finishChunk() -> Double {
        jobs.drain()
        chunkEvents = UnsafeBufferPointer(start: nil, count: 0)
        return chunkLossSum
    }

    /// Forward sweep. Calling thread: acts, cs, tanhC, hs rows of the current block.
    /// Helper: logits, rowLoss, dHout rows and dWy for finished blocks (reads their hs rows).
    private func forward() {
        let wx = UnsafePointer(params.pointer)
        let rec = UnsafeBufferPointer(start: wx + shape.recurrentRow * G, count: H * G)
        let bias = wx + shape.wxBiasRow * G
        if ownRecurrentKernel { helper(.transposeRecurrent) }  // read by backward(), after the drain
        for k in 0..<blockCount {
            for t in (k * T)..<min(U, (k + 1) * T) {
                let gt = acts.pointer + t * B * G
                for b in 0..<B {
                    let r = t * B + b
                    drummer_add3(Int32(G), wx + inNote[r] * G, wx + inTick[r] * G, bias, gt + b * G)
                }
                if ownRecurrentKernel {
                    drummer_gemm_avx512(Int32(B), Int32(G), Int32(H), hs.pointer + t * B * H, Int32(H),
                                        rec.baseAddress, Int32(G), gt, Int32(G), 1)
                } else if B == 1 {
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
            helper(.output(block: k))
        }
        waitForHelper()
    }

    /// Output layer, cross-entropies and output-side gradients of block k.
    private func outputBlock(_ k: Int) {
        let rows = self.rows(ofBlock: k)
        let r0 = rows.lowerBound, nr = rows.count
        let wy = UnsafePointer(params.pointer + shape.wxCount)
        let gwy = grad.pointer + shape.wxCount
        let wyTop = UnsafeBufferPointer(start: wy, count: H * V)
        let hRows = hs.buffer((r0 + B) * H, nr * H)
        for r in rows { (logits.pointer + r * V).update(from: wy + H * V, count: V) }
        BLAS.sgemm(.none, .none, m: nr, n: V, k: H, alpha: 1, a: hRows, lda: H, b: wyTop, ldb: V, beta: 1,
                   c: logits.mutable(r0 * V, nr * V), ldc: V)
        let scale = 1 / Float(U * totalStreams)
        for r in rows {
            let y = logits.pointer + r * V
            let ln = Kernels.softmaxCrossEntropy(y, count: N, target: outNote[r], scale: scale)
            let lt = Kernels.softmaxCrossEntropy(y + N, count: V - N, target: outTick[r], scale: scale)
            rowLoss.pointer[r] = ln + lt
        }
        let dl = logits.buffer(r0 * V, nr * V)
        let beta: Float = k == 0 ? 0 : 1
        // dWy += [h, 1]ᵀ·dlogits; dHout = dlogits·Wy[0..<H]ᵀ.
        BLAS.sgemm(.transposed, .none, m: H, n: V, k: nr, alpha: 1, a: hRows, lda: H, b: dl, ldb: V,
                   beta: beta, c: UnsafeMutableBufferPointer(start: gwy, count: H * V), ldc: V)
        BLAS.sgemv(.transposed, rows: nr, cols: V, alpha: 1, a: dl, lda: V, x: ones.buffer(0, nr), beta: beta,
                   y: UnsafeMutableBufferPointer(start: gwy + H * V, count: V))
        BLAS.sgemm(.none, .transposed, m: nr, n: H, k: V, alpha: 1, a: dl, lda: V, b: wyTop, ldb: V, beta: 0,
                   c: dHout.mutable(r0 * H, nr * H), ldc: H)
    }

    /// Backward sweep, last block first. Calling thread: dGates rows of the current block,
    /// dhNext, dc. Helper: dW_rec, bias and input-block gradients of finished blocks.
    private func backward() {
        let wx = UnsafePointer(params.pointer)
        let rec = UnsafeBufferPointer(start: wx + shape.recurrentRow * G, count: H * G)
        dhNext.fill(0)
        dc.fill(0)
        for k in stride(from: blockCount - 1, through: 0, by: -1) {
            for t in stride(from: min(U, (k + 1) * T) - 1, through: k * T, by: -1) {
                for b in 0..<B {
                    let r = t * B + b
                    Kernels.cellBackward(
                        H: H, acts: acts.pointer + r * G, cPrev: cs.pointer + r * H, tanhC: tanhC.pointer + r * H,
                        dhOut: dHout.pointer + r * H, dhNext: dhNext.pointer + b * H, dc: dc.pointer + b * H,
                        dGates: dGates.pointer + r * G)
                }
                if t == 0 { break }  // the gradient reaching the carried state is not used
                if ownRecurrentKernel {
                    drummer_gemm_avx512(Int32(B), Int32(H), Int32(G), dGates.pointer + t * B * G, Int32(G),
                                        recT.pointer, Int32(H), dhNext.pointer, Int32(H), 0)
                } else if B == 1 {
                    BLAS.sgemv(.none, rows: H, cols: G, alpha: 1, a: rec, lda: G, x: dGates.buffer(t * G, G),
                               beta: 0, y: dhNext.mutable(0, H))
                } else {
                    BLAS.sgemm(.none, .transposed, m: B, n: H, k: G, alpha: 1,
                               a: dGates.buffer(t * B * G, B * G), lda: G, b: rec, ldb: G, beta: 0,
                               c: dhNext.mutable(0, B * H), ldc: H)
                }
            }
            let first = k == blockCount - 1
            helper(.gradient(block: k, first: first))
        }
        waitForHelper()
    }

    /// Weight gradients of Wx from block k's dGates: dW_rec += [h_{t−1}]ᵀ·dG, bias += Σ dG,
    /// input rows += dG (scatter). `first` overwrites instead of accumulating.
    private func gradientBlock(_ k: Int, first: Bool) {
        let rows = self.rows(ofBlock: k)
        let r0 = rows.lowerBound, nr = rows.count
        let gwx = grad.pointer
        let dg = dGates.buffer(r0 * G, nr * G)
        let beta: Float = first ? 0 : 1
        BLAS.sgemm(.transposed, .none, m: H, n: G, k: nr, alpha: 1, a: hs.buffer(r0 * H, nr * H), lda: H,
                   b: dg, ldb: G, beta: beta,
                   c: UnsafeMutableBufferPointer(start: gwx + shape.recurrentRow * G, count: H * G), ldc: G)
        BLAS.sgemv(.transposed, rows: nr, cols: G, alpha: 1, a: dg, lda: G, x: ones.buffer(0, nr), beta: beta,
                   y: UnsafeMutableBufferPointer(start: gwx + shape.wxBiasRow * G, count: G))
        if first { gwx.update(repeating: 0, count: V * G) }
        for r in rows {
            let d = dGates.pointer + r * G
            drummer_accumulate(Int32(G), d, gwx + inNote[r] * G)
            drummer_accumulate(Int32(G), d, gwx + inTick[r] * G)
        }
    }

    /// recT = W_recᵀ (G×H) from the current parameters.
    private func transposeRecurrent() {
        let rec = params.pointer + shape.recurrentRow * G, t = recT.pointer
        for k in 0..<H {
            let row = rec + k * G
            for j in 0..<G { t[j * H + k] = row[j] }
        }
    }

    /// The optimizer update of every parameter from `grad`, split in two halves between
    /// the helper and the calling thread.
    func update(_ config: OptimizerConfig, slot: FloatBuffer?) {
        let P = params.count, half = P / 2
        updateConfig = config
        updateSlot = slot
        helper(.update(count: half))
        Optimizer.update(config, params: params.pointer + half, grad: UnsafePointer(grad.pointer + half),
                         slot: slot.map { $0.pointer + half }, count: P - half)
        waitForHelper()
    }
}
