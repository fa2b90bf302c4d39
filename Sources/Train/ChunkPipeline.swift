// Where and in which order the phases of one chunk run, on two cores: the stack of LSTM
// layers (LSTMLayer.swift) between the inputs (ChunkInputs.swift) and the output head
// (OutputHead.swift).
//
// Only the recurrence is sequential: per layer, bottom up, forwardStep(t) for t = 0…U−1;
// then per layer, top down, backwardStep(t) for t = U−1…0. The rest works on blocks of T
// steps and can run beside it: during the forward sweep of a layer, the next layer's
// input product of a block (or, on the top layer, the output layer of a block) once its h
// rows exist; during the backward sweep, the layer's weight gradients of a block (and the
// gradient reaching the layer below) once its da rows exist. So the calling thread runs the
// recurrence and a helper thread (OrderedJobs) runs the block work as soon as each block is
// done, plus half of the optimizer update. Between two layers the calling thread waits for
// the helper (the next layer needs all of what the block work wrote).
//
// Jobs run one at a time in submission order, whichever thread runs them (the caller takes
// over the jobs the helper has not started when it reaches the end of a sweep), so the
// results do not depend on timing, and `pipelined = false` (everything inline) gives
// identical bits. The two threads touch disjoint buffers: a block's output job reads its h
// rows and writes its logits, rowLoss, dHout rows and dWy; an input-product job reads the
// block's h rows of the layer below and writes the block's acts rows of the layer above;
// the recurrence writes only the current block's rows. A gradient job reads the block's h
// and da rows and writes the layer's dWx (and the block's dHout rows of the layer below);
// the recurrence writes da of earlier blocks and dhNext, dc.
//
// Stream groups (see Trainer): with two groups, each pipeline runs whole chunks with
// `pipelined = false`, one on the calling thread and one, asynchronously, on group 1's
// helper thread (`startChunk` / `finishChunk`); that thread then runs half of the optimizer
// update (`update(_:slots:adding:beside:)`).

import DrummerCore

final class ChunkPipeline: OrderedJobExecutor, @unchecked Sendable {
    /// The LSTM layers, bottom (reads the inputs) to top (read by the head).
    let layers: [LSTMLayer]
    let head: OutputHead
    let inputs: ChunkInputs
    /// The parameters and the gradient this group writes (every Wx, then Wy).
    let params: FloatBuffer, grad: FloatBuffer
    let U: Int, B: Int
    /// Steps per block. Pipelined: about 256 rows, at least 8 blocks per chunk when U allows
    /// (shorter blocks shorten the tails where one thread waits for the other; measured best
    /// at B = 1: 25 steps). A stream group's pipeline (`inline`), which runs its block work
    /// itself, has no tails to shorten: about 512 rows, so that the block GEMMs are larger while
    /// a block's gates (512 × 4H floats at the recipe's H = 256: 2 MB) still fit a core's L2
    /// (the shipped shape trains 3–5% faster than at 128 rows; 1,024 rows was slower again).
    let T: Int
    /// Run block work on the helper thread (true) or inline (false); same results for a given T.
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
    /// The part of an optimizer update this pipeline's thread runs as its `.update` job.
    private var updatePart = UpdatePart()
    /// The arguments and the result of an asynchronous chunk (`startChunk` / `finishChunk`).
    private var chunkEvents = UnsafeBufferPointer<Int32>(start: nil, count: 0)
    private var chunkSegment = 0, chunkPointer = 0
    private var chunkLossSum = 0.0

    /// The stack of `shape` for streams firstStream..<firstStream + batch of a batch of
    /// `totalStreams`, on the shared `params`, writing `grad`.
    /// `inline`: a stream group's pipeline, which runs its block work on its own thread.
    init(shape: ModelShape, unroll: Int, batch: Int, firstStream: Int = 0, totalStreams: Int? = nil,
         params: FloatBuffer, grad: FloatBuffer, inline: Bool = false) {
        let layout = shape.parameters
        inputs = ChunkInputs(shape: shape, unroll: unroll, batch: batch, firstStream: firstStream)
        var stack: [LSTMLayer] = []
        for l in layout.layers {
            let input: LSTMLayer.Input = l.oneHotInputs
                ? .oneHot(rows: inputs.inputRows, groups: inputs.k) : .dense(below: stack[l.index - 1])
            stack.append(LSTMLayer(layout: l, input: input, hidden: shape.hidden, unroll: unroll, batch: batch,
                                   params: params, grad: grad, referenceClasses: !shape.isOriginalLayout))
        }
        layers = stack
        head = OutputHead(layout: layout.head, top: stack[stack.count - 1], targets: inputs.targets,
                          totalStreams: totalStreams ?? batch, sparseGroups: !shape.isOriginalLayout)
        self.params = params
        self.grad = grad
        U = unroll; B = batch
        T = inline ? max(1, min(512 / batch, unroll)) : max(1, min(256 / batch, unroll / 8))
        pipelined = !inline
    }

    /// Bytes of the buffers a pipeline of these sizes allocates (every layer, the head, the
    /// inputs and layer 0's reference classes); Int.max on overflow.
    static func workspaceBytes(shape: ModelShape, unroll: Int, batch: Int) -> Int {
        guard let layer = LSTMLayer.workspaceBytes(hidden: shape.hidden, unroll: unroll, batch: batch),
              let head = OutputHead.workspaceBytes(outputs: shape.outputWidth, hidden: shape.hidden,
                                                   widestGroup: shape.outputGroups.max() ?? 0,
                                                   sparseGroups: !shape.isOriginalLayout, unroll: unroll, batch: batch),
              let inputs = ChunkInputs.workspaceBytes(shape: shape, unroll: unroll, batch: batch) else { return Int.max }
        let (rows, o0) = max(0, unroll).multipliedReportingOverflow(by: max(0, batch))
        guard !o0, let reference = shape.isOriginalLayout ? 0
                : ReferenceClasses.workspaceBytes(inputRows: shape.inputWidth, groups: shape.inputGroups.count,
                                                  rows: rows, gates: 4 * shape.hidden) else { return Int.max }
        let (layers, o1) = layer.multipliedReportingOverflow(by: shape.layers)
        let (a, o2) = layers.addingReportingOverflow(head)
        let (b, o3) = a.addingReportingOverflow(inputs)
        let (c, o4) = b.addingReportingOverflow(reference)
        return o1 || o2 || o3 || o4 ? Int.max : c
    }

    deinit { jobQueue?.stop() }

    var firstStream: Int { inputs.firstStream }

    private var blockCount: Int { (U + T - 1) / T }
    private func steps(ofBlock k: Int) -> Range<Int> { (k * T)..<min(U, (k + 1) * T) }
    private func rows(ofBlock k: Int) -> Range<Int> {
        let s = steps(ofBlock: k)
        return (s.lowerBound * B)..<(s.upperBound * B)
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
        case .output(let k): head.outputLayer(rows: rows(ofBlock: k), first: k == 0)
        case .gradient(let l, let k): layers[l].inputGradients(rows: rows(ofBlock: k), first: k == blockCount - 1, last: k == 0)
        case .inputProduct(let l, let k): layers[l].inputProduct(rows: rows(ofBlock: k))
        case .packTransposedRecurrent:
            refreshPanels(.transposedWeights)
        case .chunk:
            chunkLossSum = forwardBackward(events: chunkEvents, segment: chunkSegment, pointer: chunkPointer)
        case .update:
            apply(updatePart)
        }
    }

    // MARK: chunk

    /// Runs the chunk starting at data pointer `p` of every segment of length `segment`
    /// (this group's streams); writes the gradient of the chunk's loss into `grad` and returns
    /// the sum over its U·B rows of the output groups' cross-entropies. The loss whose gradient
    /// is written is the mean over U·totalStreams rows, so that the stream groups' gradients add
    /// up to the whole batch's. Reads the carried state in block 0 and leaves it unchanged.
    func forwardBackward(events: UnsafeBufferPointer<Int32>, segment: Int, pointer p: Int) -> Double {
        inputs.gather(events: events, segment: segment, pointer: p)
        layers[0].prepareInputs()
        fillDropoutMasks(segment: segment, pointer: p)
        // Forward sweep, bottom up: the recurrence here; each finished block's input product
        // of the layer above, or on the top layer its output layer, on the helper.
        if packsPanels && layers[0].recurrent.needsPanels {
            // W_rec for the forward sweep here; W_recᵀ, read by the backward sweep, beside it.
            refreshPanels(.weights)
            helper(.packTransposedRecurrent)
        }
        let top = layers.count - 1
        for l in 0...top {
            for k in 0..<blockCount {
                for t in steps(ofBlock: k) { layers[l].forwardStep(t) }
                helper(l == top ? .output(block: k) : .inputProduct(layer: l + 1, block: k))
            }
            waitForHelper()
        }
        // Backward sweep, top down, last block first: the recurrence here, each finished
        // block's weight gradients (and the gradient reaching the layer below) on the helper.
        for l in stride(from: top, through: 0, by: -1) {
            layers[l].startBackward()
            for k in stride(from: blockCount - 1, through: 0, by: -1) {
                for t in steps(ofBlock: k).reversed() { layers[l].backwardStep(t) }
                helper(.gradient(layer: l, block: k))
            }
            waitForHelper()
        }
        return head.lossSum
    }

    /// Whether each chunk packs the recurrent kernel's panels itself (true), or its owner packs
    /// them once for two stream groups that share them (`packSharedPanels`).
    var packsPanels = true

    /// Two stream groups' panels, which `other`'s layers share with these: W_rec of every layer
    /// packed here and W_recᵀ on `other`'s helper thread (idle between chunks) or, with
    /// `beside` false, here too; before a chunk of either group. The same panels either way.
    func packSharedPanels(with other: ChunkPipeline, beside: Bool) {
        guard layers[0].recurrent.needsPanels else { return }
        if beside { other.jobs.submit(.packTransposedRecurrent) } else { run(.packTransposedRecurrent) }
        refreshPanels(.weights)
        if beside { other.jobs.drain() }
    }

    /// Packs `operand` (W_rec or W_recᵀ) of every layer into its recurrent kernel's panels.
    private func refreshPanels(_ operand: RecurrentProduct.Operand) {
        for layer in layers { layer.recurrent.refreshPanels(operand, of: params, at: layer.layout.recurrent) }
    }

    /// Dropout between layers (Dropout.swift): nil for none.
    var dropout: Dropout? {
        didSet { for layer in layers.dropFirst() { layer.setDropout(dropout != nil) } }
    }

    /// The chunk's dropout masks of every layer above layer 0 (`dropout`): row r (step t,
    /// stream b) of layer l gets Dropout.scale(step, l, its event, unit) for each unit.
    func fillDropoutMasks(segment: Int, pointer p: Int) {
        func fill(_ mask: DropoutMask, layer l: Int, _ dropout: Dropout) {
            let H = mask.width
            for t in 0..<U {
                for b in 0..<B {
                    let r = t * B + b, e = inputs.event(step: t, stream: b, segment: segment, pointer: p)
                    let key = dropout.rowKey(step: inputs.step, layer: l, event: e)
                    dropout.fillRow(key: key, mask.mask.mutable(r * H, H))
                }
            }
        }
        if let dropout {
            for (l, layer) in layers.enumerated().dropFirst() {
                if let mask = layer.dropout { fill(mask, layer: l, dropout) }
            }
        }
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

    /// The optimizer update of every parameter from `grad` plus `addend` (Adam reads the sum;
    /// the other rules add it into `grad` first), split in two halves between two threads:
    /// this pipeline's helper when it pipelines, else `beside`'s helper thread (the other
    /// stream group's, idle between chunks), else both halves here. Every parameter's
    /// arithmetic is the same whichever thread runs it.
    func update(_ config: OptimizerConfig, slots: [FloatBuffer], adding addend: FloatBuffer? = nil,
                beside other: ChunkPipeline? = nil) {
        let P = params.count, half = P / 2
        precondition(addend.map { $0.count == P } ?? true, "ChunkPipeline.update: addend size")
        precondition(other.map { $0.params === params && !$0.pipelined } ?? true,
                     "ChunkPipeline.update: a pipeline beside shares the parameters and runs no block work")
        let first = UpdatePart(config: config, slots: slots, grad: grad, addend: addend, first: 0, count: half)
        let second = UpdatePart(config: config, slots: slots, grad: grad, addend: addend, first: half, count: P - half)
        let runner: ChunkPipeline? = pipelined ? self : other
        if let runner {
            runner.updatePart = first
            runner.jobs.submit(.update)
        } else {
            apply(first)
        }
        apply(second)
        if let runner {
            runner.jobs.drain()
            runner.updatePart = UpdatePart()
        }
    }

    /// A range of parameters to update, with what the update reads.
    private struct UpdatePart {
        var config = OptimizerConfig()
        var slots: [FloatBuffer] = []
        var grad: FloatBuffer?
        var addend: FloatBuffer?
        var first = 0, count = 0
    }

    /// Parameters first..<first + count of `part`: the optimizer's rule on its gradient plus
    /// its addend.
    private func apply(_ part: UpdatePart) {
        guard let grad = part.grad, part.count > 0 else { return }
        let first = part.first, count = part.count
        let slots = part.slots
        Optimizer.update(part.config, params: params.pointer + first, grad: grad.pointer + first,
                         adding: part.addend.map { UnsafePointer($0.pointer + first) },
                         slot: slots.first.map { $0.pointer + first }, slot2: slots.dropFirst().first.map { $0.pointer + first },
                         count: count)
    }

    // MARK: carried state (every layer's, B·H each, layer-major)

    /// Sets the carried (h, c) of layer l from `h[l]`, `c[l]` (B·H values each).
    func setState(layer l: Int, h: ArraySlice<Float>, c: ArraySlice<Float>) { layers[l].setState(h: h, c: c) }

    func carryState() { for layer in layers { layer.carryState() } }
    func resetState() { for layer in layers { layer.resetState() } }
}
