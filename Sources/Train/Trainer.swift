// Truncated-BPTT training loop: one chunk of U steps per stream = one update.
//
// Schedule (the original's, min-char-rnn style): with B streams the sequence of
// N events is cut into B contiguous segments of L = N / B events (stream b covers
// [b·L, (b+1)·L); B = 1 gives L = N). All streams share the pointer p: a chunk's
// inputs are events p..p+U−1 of each segment and its targets p+1..p+U. After the
// update p += U; then, if p + U + 1 ≥ L, p = 0, (h, c) = 0 and epoch += 1.
// The original checks the same condition before taking a chunk; checking after
// the update takes the same chunks and leaves a state whose pointer is always
// the next chunk's, which is what a checkpoint stores.
//
// Two cores. B < 16: one pipeline (the stack of layers for every stream); its helper
// thread runs the block GEMMs beside the recurrence (see ChunkPipeline). B ≥ 16: two
// stream groups, streams [0, ⌊B/2⌋) and [⌊B/2⌋, B), each a pipeline running a whole
// chunk by itself, one on the calling thread and one on the other group's helper thread;
// then gradient = group 0's + group 1's and one update, half of it on each thread. No
// thread waits on the other mid-chunk, and the recurrent products keep ≥ 8 rows. The
// split depends on B only, so results are the same with or without the helper thread.

import DrummerCore

/// Where a run is: updates done, epochs completed and the data pointer of the next chunk.
public struct TrainingProgress: Sendable, Equatable {
    public var step: Int
    public var epoch: Int
    public var pointer: Int
}

public final class Trainer {
    let shape: ModelShape
    let unroll: Int, batch: Int
    /// L: events per stream segment.
    let segment: Int
    let events: [Int32]
    var optimizerSettings: OptimizerConfig
    /// Steps, epochs and pointer: reading them copies three integers.
    public private(set) var progress: TrainingProgress
    /// One pipeline per stream group (1 below `streamGroupMinimumBatch` streams, else 2);
    /// group 0's layer writes `grad`, group 1's `groupGrad`.
    let groups: [ChunkPipeline]
    var main: ChunkPipeline { groups[0] }
    /// Run group 1's chunk on its helper thread (true) or after group 0's (false).
    var groupsInParallel = true
    /// P parameters (Wx then Wy), their gradient and the optimizer slot (velocity or ms).
    let params: FloatBuffer, grad: FloatBuffer
    /// Group 1's gradient (empty with one group).
    let groupGrad: FloatBuffer
    var slots: [FloatBuffer] = []
    /// Dropout between stacked layers (nil: none).
    package var dropout: Dropout? {
        didSet { for g in groups { g.dropout = dropout } }
    }

    /// `events`: the class matrix (one row per event, one column per input group of the shape;
    /// see `TrainingData.classes(_:for:)`).
    public init(state: TrainingState, events: [Int32], optimizer: OptimizerConfig) throws {
        let s = state.shape
        guard s.isValid else { throw TrainError.stateMismatch("invalid model shape \(s)") }
        try Settings.unroll.validate(state.unroll)
        try Settings.batchSize.validate(state.batch)
        try optimizer.validate()
        try Trainer.checkWorkspace(shape: s, unroll: state.unroll, batch: state.batch, held: Trainer.heldBytes(state),
                                   slots: state.optimizer.slots.count)
        let P = state.parameterCount
        guard state.parameters.count == P else {
            throw TrainError.stateMismatch("parameter buffer holds \(state.parameters.count) values, the shape needs \(P)")
        }
        if let k = state.parameters.firstIndex(where: { !$0.isFinite }) {
            throw TrainError.stateMismatch("parameter \(k) is \(state.parameters[k])")
        }
        let LBH = s.layers * state.batch * s.hidden
        guard state.h.count == LBH, state.c.count == LBH else {
            throw TrainError.stateMismatch("h and c hold \(state.h.count) and \(state.c.count) values, expected \(LBH) (layers × batch × hidden)")
        }
        guard state.step >= 0, state.epoch >= 0 else {
            throw TrainError.stateMismatch("negative step \(state.step) or epoch \(state.epoch)")
        }
        try EventValidation.check(events, shape: s)
        let k = s.inputGroups.count
        let n = events.count / k
        let L = n / state.batch
        guard L >= state.unroll + 1 else {
            throw TrainError.tooFewEvents(events: n, streams: state.batch, needed: state.unroll + 1)
        }
        guard state.pointer >= 0, state.pointer + state.unroll < L else {
            throw TrainError.stateMismatch("data pointer \(state.pointer) leaves no chunk of \(state.unroll) in a segment of \(L) events")
        }
        shape = s
        unroll = state.unroll
        batch = state.batch
        segment = L
        self.events = events
        optimizerSettings = optimizer
        progress = TrainingProgress(step: state.step, epoch: state.epoch, pointer: state.pointer)
        params = FloatBuffer(state.parameters)
        grad = FloatBuffer(count: P)
        let B = state.batch, U = state.unroll
        if B >= Trainer.streamGroupMinimumBatch {
            groupGrad = FloatBuffer(count: P)
            let half = B / 2
            groups = [
                ChunkPipeline(shape: s, unroll: U, batch: half, firstStream: 0, totalStreams: B, params: params, grad: grad,
                              inline: true),
                ChunkPipeline(shape: s, unroll: U, batch: B - half, firstStream: half, totalStreams: B, params: params,
                              grad: groupGrad, inline: true),
            ]
        } else {
            groupGrad = FloatBuffer(count: 0)
            groups = [ChunkPipeline(shape: s, unroll: U, batch: B, params: params, grad: grad)]
        }
        shareRecurrentPanels()
        setCarriedState(h: state.h, c: state.c)
        try installSlots(from: state.optimizer, kind: optimizer.kind)
    }

    /// With two stream groups, group 1's layers use group 0's recurrent panels (the same
    /// weights), packed once a step by `runChunk` instead of once per group.
    private func shareRecurrentPanels() {
        guard groups.count == 2 else { return }
        for (l, layer) in groups[1].layers.enumerated() { layer.recurrent = groups[0].layers[l].recurrent }
        for g in groups { g.packsPanels = false }
    }

    /// Copies the optimizer slots `kind` needs out of `state`, checking their lengths.
    private func installSlots(from state: OptimizerState, kind: OptimizerKind) throws {
        let P = params.count
        slots = try OptimizerState.slotNames(kind).map { name in
            guard let values = state.slots[name] else {
                throw TrainError.stateMismatch("optimizer \(kind.rawValue) needs the slot \"\(name)\", which the state lacks")
            }
            guard values.count == P else {
                throw TrainError.stateMismatch("optimizer slot \"\(name)\" holds \(values.count) values, expected \(P)")
            }
            return FloatBuffer(values)
        }
    }

    /// Bytes of the buffers a trainer allocates for these sizes (the layers' per-row
    /// activations and gradients for U·B rows, plus parameters, gradient and up to two optimizer
    /// slots).
    static func workspaceBytes(shape: ModelShape, unroll: Int, batch: Int) -> Int {
        let layers = ChunkPipeline.workspaceBytes(shape: shape, unroll: unroll, batch: batch)
        let (params, o1) = shape.parameterCount.multipliedReportingOverflow(by: 4 * 4)
        let (sum, o2) = layers.addingReportingOverflow(params)
        return o1 || o2 ? Int.max : sum
    }

    /// `workspaceBytes` and what writing a checkpoint adds at its peak: about ten copies of
    /// the parameters with Adam's two slots (the state's tensors copied out, the file built in
    /// memory, and its image; measured at H = 1024 and 2048), a third of that for each of the
    /// checkpoint's tensors: parameters and `slots` optimizer slots (SGD: none).
    static func peakBytes(shape: ModelShape, unroll: Int, batch: Int, slots: Int = 2) -> Int {
        let (copies, o1) = shape.parameterCount.multipliedReportingOverflow(by: 4 * 10 * (1 + slots))
        let (sum, o2) = workspaceBytes(shape: shape, unroll: unroll, batch: batch).addingReportingOverflow(copies / 3)
        return o1 || o2 ? Int.max : sum
    }

    /// The most `workspaceBytes` a trainer accepts: 8 GiB, and at most 3/4 of this machine's memory.
    static var workspaceLimit: Int {
        min(8 << 30, (ModelLimits.physicalMemory ?? Int.max / 4) / 4 * 3)
    }

    /// Address space kept for what maps after the check: the threads' stacks and malloc
    /// arenas (the helper thread, evaluation's workers) and OpenBLAS's buffers. Measured on a
    /// 2-core Zen 4 as the peak's excess over the check's account: 288–310 MiB (the recipe on
    /// the corpus, and H = 640 and 1024 on a small dataset and the corpus).
    static let laterThreadsReserve = 320 << 20

    /// Bytes of a training state's arrays (parameters, optimizer slots, carried h and c).
    static func heldBytes(_ state: TrainingState) -> Int {
        4 * (state.parameters.count + state.optimizer.slots.values.reduce(0) { $0 + $1.count } + state.h.count + state.c.count)
    }

    /// Throws `SettingError` (naming the sizes, what they need and the limit) when a trainer of
    /// these sizes would need more than `workspaceLimit`, or (with its checkpoints' writing)
    /// more than an address-space limit leaves, where a failed allocation crashed the run or
    /// left its checkpoint unwritten after the training; call it before allocating the trainer,
    /// with `held` the bytes of the state the caller holds (`heldBytes`), which the trainer's
    /// copies replace. `addressSpace: false` leaves the address-space limit to the trainer's
    /// own check, once the data is read and the batch fitted to it (an early one would count
    /// neither).
    package static func checkWorkspace(shape: ModelShape, unroll: Int, batch: Int, held: Int = 0, slots: Int = 2,
                                       addressSpace: Bool = true, writesCheckpoints: Bool = true) throws {
        let sizes = "\(shape.hidden)/\(unroll)/\(batch)"
        let bytes = workspaceBytes(shape: shape, unroll: unroll, batch: batch)
        let limit = workspaceLimit
        if bytes > limit {
            let need = bytes == Int.max ? "more memory than can be counted" : ModelLimits.describe(bytes: bytes)
            let machine = ModelLimits.physicalMemory.map { " (this machine has \(ModelLimits.describe(bytes: $0)))" } ?? ""
            throw SettingError(option: "--hidden/--unroll/--batch-size", message:
                "\(sizes) need \(need) of training memory, more than the \(ModelLimits.describe(bytes: limit)) limit\(machine)")
        }
        // (A benchmark writes no checkpoint: its peak is the buffers alone.)
        let peak = writesCheckpoints ? peakBytes(shape: shape, unroll: unroll, batch: batch, slots: slots) : bytes
        if addressSpace, let shortfall = ModelLimits.addressSpaceShortfall(for: peak, reserve: laterThreadsReserve, held: held) {
            throw SettingError(option: "--hidden/--unroll/--batch-size",
                               message: "\(sizes)\(writesCheckpoints ? " (while writing a checkpoint)" : "") \(shortfall)")
        }
    }

    /// From this many streams on, the batch is trained as two stream groups, one per core.
    /// At B = 32 on a 2-core Zen 4: 131k timesteps/s for two independent B = 16 runs side by
    /// side against 107k–119k for one B = 32 layer with its helper thread.
    static let streamGroupMinimumBatch = 16

    /// The carried state is layer-major: layer l's (h, c) of stream s at (l·B + s)·H.
    private func setCarriedState(h: [Float], c: [Float]) {
        let H = shape.hidden
        for l in 0..<shape.layers {
            for g in groups {
                let r = ((l * batch + g.firstStream) * H)..<((l * batch + g.firstStream + g.B) * H)
                g.setState(layer: l, h: h[r], c: c[r])
            }
        }
    }

    /// The whole state, copied out: the parameters, the optimizer slot, the carried h and c
    /// and the progress (what a checkpoint stores). Costs a copy of every parameter: use
    /// `progress` to know where the run is.
    public func snapshot() -> TrainingState {
        var saved: [String: [Float]] = [:]
        for (name, s) in zip(OptimizerState.slotNames(optimizerSettings.kind), slots) { saved[name] = s.array }
        var h: [Float] = [], c: [Float] = []
        for l in 0..<shape.layers {
            for g in groups {
                let (gh, gc) = g.layers[l].carriedState
                h += gh
                c += gc
            }
        }
        return TrainingState(
            shape: shape, unroll: unroll, batch: batch, parameters: params.array,
            optimizer: OptimizerState(slots: saved), h: h, c: c,
            step: progress.step, epoch: progress.epoch, pointer: progress.pointer)
    }

    /// The current weights, copied out.
    public func weights() throws -> LSTMWeights {
        try LSTMWeights(shape: shape, parameters: params.array)
    }

    /// Runs the chunk at the current pointer over every stream group, leaves the batch's
    /// gradient in `grad` (with two groups and `sumGroups` false, group 0's in `grad` and group
    /// 1's in `groupGrad`, for the update to add) and returns the loss (mean over U·B rows of the
    /// output groups' CE).
    private func runChunk(sumGroups: Bool = true) -> Float {
        let p = progress.pointer
        let sum: Double = events.withUnsafeBufferPointer { ev in
            guard groups.count == 2 else {
                return groups[0].forwardBackward(events: ev, segment: segment, pointer: p)
            }
            let (g0, g1) = (groups[0], groups[1])
            g0.packSharedPanels(with: g1, beside: groupsInParallel)
            if groupsInParallel { g1.startChunk(events: ev, segment: segment, pointer: p) }
            let s0 = g0.forwardBackward(events: ev, segment: segment, pointer: p)
            let s1 = groupsInParallel ? g1.finishChunk() : g1.forwardBackward(events: ev, segment: segment, pointer: p)
            // grad = group 0's + group 1's
            if sumGroups { Kernels.accumulate(groupGrad.buffer(0, groupGrad.count), into: grad.mutable(0, grad.count)) }
            return s0 + s1
        }
        return Float(sum / Double(unroll * batch))
    }

    /// The update rule. Changing `kind` starts the new optimizer's slot fresh.
    public var optimizerConfig: OptimizerConfig {
        get { optimizerSettings }
        set {
            if newValue.kind != optimizerSettings.kind {
                let fresh = OptimizerState(kind: newValue.kind, parameterCount: params.count)
                slots = OptimizerState.slotNames(newValue.kind).compactMap { fresh.slots[$0] }.map { FloatBuffer($0) }
            }
            optimizerSettings = newValue
        }
    }

    /// One chunk = one parameter update = one step. Returns the chunk's loss
    /// (mean over its U·B predictions of the output groups' cross-entropies).
    @discardableResult
    public func step() -> Float {
        if usesHelperThread && BLASRuntime.threads != 1 { BLASRuntime.setThreads(1) }
        for g in groups { g.inputs.step = progress.step }
        // The groups' gradients are added in the update's halves, on both cores.
        let loss = runChunk(sumGroups: false)
        var config = optimizerSettings
        config.step = progress.step + 1
        main.update(config, slots: slots, adding: groups.count == 2 ? groupGrad : nil,
                    beside: groups.count == 2 && groupsInParallel ? groups[1] : nil)
        for g in groups { g.carryState() }
        progress.step += 1
        progress.pointer += unroll
        if progress.pointer + unroll + 1 >= segment {
            progress.pointer = 0
            for g in groups { g.resetState() }
            progress.epoch += 1
        }
        return loss
    }

    /// Whether a second thread works beside the calling one (default true): with one stream
    /// group it runs the per-block GEMMs and half the update while the calling thread runs the
    /// recurrence; with two it runs group 1's chunk. Results are bitwise the same either way.
    /// With the helper thread, `step()` sets OpenBLAS to one thread (a process-wide setting)
    /// so that the two threads do not oversubscribe the cores.
    public var usesHelperThread: Bool {
        get { groups.count == 2 ? groupsInParallel : main.pipelined }
        set { if groups.count == 2 { groupsInParallel = newValue } else { main.pipelined = newValue } }
    }

    /// Stream groups the batch is split into (1 or 2; see `streamGroupMinimumBatch`).
    public var streamGroupCount: Int { groups.count }

    /// Whether the recurrent products run on CKernels' own kernel (true by default when the
    /// kernels run at AVX2 or above and a group has at least 8 streams, where it is faster than
    /// OpenBLAS) or on OpenBLAS. Setting true at the baseline level is ignored. Either gives the same
    /// results up to float32 rounding; a run is bitwise reproducible with the same choice.
    public var usesOwnRecurrentKernel: Bool {
        get { main.layers[0].recurrent.kernel == .own }
        set {
            for g in groups {
                for layer in g.layers {
                    layer.recurrent = RecurrentProduct(kernel: newValue ? .own : .openBLAS, hidden: shape.hidden)
                }
            }
            shareRecurrentPanels()
        }
    }

    /// Whether layer 0 sums its one-hot input from a reference class per group
    /// (ReferenceClasses.swift): true by default except in the 2017 layout, which keeps the
    /// direct sum and its bits. Either gives the same results up to float32 rounding.
    package var usesReferenceClasses: Bool {
        get { main.layers[0].reference != nil }
        set { for g in groups { g.layers[0].setReferenceClasses(newValue) } }
    }

    /// The raw (unclipped) gradient of the next chunk's loss with respect to the
    /// parameters, and that loss; changes nothing.
    func chunkGradient() -> (loss: Float, gradient: [Float]) {
        let loss = runChunk()
        return (loss, grad.array)
    }
}
