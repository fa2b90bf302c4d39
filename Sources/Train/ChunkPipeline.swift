// Where and in which order the phases of one chunk (LSTMLayer.swift) run, on two cores.
//
// Only the recurrence is sequential: forwardStep(t) for t = 0…U−1, then backwardStep(t)
// for t = U−1…0. The rest works on blocks of T steps and can run beside it: the output
// layer of a block once its h rows exist (during the forward sweep), the input-weight
// gradients of a block once its da rows exist (during the backward sweep). So the calling
// thread runs the recurrence and a helper thread (OrderedJobs) runs the block work as soon
// as each block is done, plus half of the optimizer update.
//
// Jobs run one at a time in submission order, whichever thread runs them (the caller takes
// over the jobs the helper has not started when it reaches the end of a sweep), so the
// results do not depend on timing, and `pipelined = false` (everything inline) gives
// identical bits. The two threads touch disjoint buffers: a block's output job reads its h
// rows and writes its logits, rowLoss, dHout rows and dWy; the recurrence writes only the
// current block's rows. A gradient job reads the block's h and da rows and writes dWx; the
// recurrence writes da of earlier blocks and dhNext, dc.
//
// Stream groups (see Trainer): with two groups, each pipeline runs whole chunks with
// `pipelined = false`, one on the calling thread and one, asynchronously, on group 1's
// helper thread (`startChunk` / `finishChunk`).
import Checkpoints
import DrummerCore

final class ChunkPipeline: OrderedJobExecutor, @unchecked Sendable {
    let layer: LSTMLayer
    /// Steps per pipeline block: about 256 rows, at least 8 blocks per chunk when U allows
    /// (shorter blocks shorten the tails where one thread waits for the other; measured best
    /// at B = 1: 25 steps).
    let T: Int
    /// Run block work on the helper thread (true) or inline (false); same results.
    var pipelined = true
    /// The helper thread's queue, made on first use (a pipeline that never pipelines and never
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
    /// Output group g's target is column targetColumn[g] of an event (see LSTMLayer.gather).
    let targetColumn: [Int]

    init(layer: LSTMLayer, targetColumn: [Int]) {
        self.layer = layer
        self.targetColumn = targetColumn
        T = max(1, min(256 / layer.B, layer.U / 8))
    }

    deinit { jobQueue?.stop() }

    private var blockCount: Int { (layer.U + T - 1) / T }
    private func steps(ofBlock k: Int) -> Range<Int> { (k * T)..<min(layer.U, (k + 1) * T) }
    private func rows(ofBlock k: Int) -> Range<Int> {
        let s = steps(ofBlock: k)
        return (s.lowerBound * layer.B)..<(s.upperBound * layer.B)
    }

    // MARK: jobs

    private func helper(_ job: ChunkJob) {
        if pipelined { jobs.submit(job) } else { run(job) }
    }

    private func waitForHelper() {
        if pipelined { jobs.drain() }
    }

    func run(_ job: ChunkJob) {
        switch job {
        case .output(let k): layer.outputLayer(rows: rows(ofBlock: k), first: k == 0)
        case .gradient(let k): layer.inputGradients(rows: rows(ofBlock: k), first: k == blockCount - 1)
        case .transposeRecurrent: layer.recurrent.refreshTranspose(of: layer.params, recurrentRow: layer.shape.recurrentRow)
        case .chunk:
            chunkLossSum = forwardBackward(events: chunkEvents, segment: chunkSegment, pointer: chunkPointer)
        case .update(let count):
            Optimizer.update(updateConfig, params: layer.params.pointer, grad: UnsafePointer(layer.grad.pointer),
                             slot: updateSlot?.pointer, count: count)
        }
    }

    // MARK: chunk

    /// Runs the chunk starting at data pointer `p` of every segment of length `segment`
    /// (this layer's streams); writes the gradient of the chunk's loss into the layer's
    /// `grad` and returns the sum over its U·B rows of the output groups' cross-entropies.
    /// The loss whose gradient is written is the mean over U·totalStreams rows, so that the
    /// stream groups' gradients add up to the whole batch's. Reads the carried state in block
    /// 0 and leaves it unchanged.
    func forwardBackward(events: UnsafeBufferPointer<Int32>, segment: Int, pointer p: Int) -> Double {
        layer.gather(events: events, segment: segment, pointer: p, targetColumn: targetColumn)
        // With --input-noise-draw model: one more forward sweep, here, over the true inputs,
        // whose predictions replace some of them (nothing runs on the helper meanwhile).
        layer.drawInputsFromModel(segment: segment, pointer: p)
        // Forward sweep: the recurrence here, each finished block's output layer on the helper.
        if layer.recurrent.needsTranspose { helper(.transposeRecurrent) }  // read by the backward sweep
        for k in 0..<blockCount {
            for t in steps(ofBlock: k) { layer.forwardStep(t) }
            helper(.output(block: k))
        }
        waitForHelper()
        // Backward sweep, last block first: the recurrence here, each finished block's
        // input-weight gradients on the helper.
        layer.startBackward()
        for k in stride(from: blockCount - 1, through: 0, by: -1) {
            for t in steps(ofBlock: k).reversed() { layer.backwardStep(t) }
            helper(.gradient(block: k))
        }
        waitForHelper()
        return layer.lossSum
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

    /// The optimizer update of every parameter from the layer's `grad`, split in two halves
    /// between the helper and the calling thread.
    func update(_ config: OptimizerConfig, slot: FloatBuffer?) {
        let P = layer.params.count, half = P / 2
        updateConfig = config
        updateSlot = slot
        helper(.update(count: half))
        Optimizer.update(config, params: layer.params.pointer + half, grad: UnsafePointer(layer.grad.pointer + half),
                         slot: slot.map { $0.pointer + half }, count: P - half)
        waitForHelper()
    }
}
