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
// Two cores. B < 16: one workspace; its helper thread runs the block GEMMs beside
// the recurrence (see ChunkWorkspace). B ≥ 16: two stream groups, streams
// [0, ⌊B/2⌋) and [⌊B/2⌋, B), each a workspace running a whole chunk by itself,
// one on the calling thread and one on the other group's helper thread; then
// gradient = group 0's + group 1's and one update. No thread waits on the other
// mid-chunk, and the recurrent products keep ≥ 8 rows. The split depends on B
// only, so results are the same with or without the helper thread.
import Checkpoints
import CKernels
import DrummerCore

public final class Trainer {
    /// SGD learning rate used when none is given. Groove corpus (quantize 30, 327k training
    /// events, H = 200, U = 200, B = 1), 3,000 steps: lr 0.1/0.3/1/3 gave validation loss
    /// 4.21/4.09/3.87/3.96 (original init) and 4.03/3.89/3.74/3.96 (keras init); lr 2 with
    /// keras init diverged near step 5,000; 15,000 steps with keras init: lr 1 reached
    /// loss 3.015 over the whole training set and 3.235 on validation, lr 0.5 3.068 and 3.268.
    public static let defaultLearningRate: Float = 1
    /// Initialisation used when none is given: keras reached a lower or equal validation loss
    /// than original at every learning rate tried (15,000 steps at lr 1: 3.235 against 3.299;
    /// loss over the whole training set 3.015 against 3.113).
    public static let defaultInit: InitScheme = .keras

    let shape: ModelShape
    let unroll: Int, batch: Int
    /// L: events per stream segment.
    let segment: Int
    let events: [Int32]
    var optimizerSettings: OptimizerConfig
    var stepCount: Int, epochCount: Int, pointer: Int
    /// One workspace per stream group (1 below `streamGroupMinimumBatch` streams, else 2);
    /// group 0 writes `grad`, group 1 `groupGrad`.
    let groups: [ChunkWorkspace]
    var chunk: ChunkWorkspace { groups[0] }
    /// Run group 1's chunk on its helper thread (true) or after group 0's (false).
    var groupsInParallel = true
    /// P parameters (Wx then Wy), their gradient and the optimizer slot (velocity or ms).
    let params: FloatBuffer, grad: FloatBuffer
    /// Group 1's gradient (empty with one group).
    let groupGrad: FloatBuffer
    var slot: FloatBuffer?

    public init(state: TrainingState, events: [Int32], optimizer: OptimizerConfig) throws {
        let s = state.shape
        guard s.isValid else { throw TrainError.stateMismatch("invalid model shape \(s)") }
        try SettingRules.unroll(state.unroll)
        try SettingRules.batchSize(state.batch)
        try optimizer.validate()
        let bytes = Trainer.workspaceBytes(shape: s, unroll: state.unroll, batch: state.batch)
        guard bytes <= Trainer.workspaceLimit else {
            throw TrainError.badSetting(
                "unroll \(state.unroll) × batch \(state.batch) needs \(bytes >> 20) MiB of training buffers, more than the \(Trainer.workspaceLimit >> 30) GiB limit")
        }
        let P = state.parameterCount
        guard state.parameters.count == P else {
            throw TrainError.stateMismatch("parameter buffer holds \(state.parameters.count) values, the shape needs \(P)")
        }
        if let k = state.parameters.firstIndex(where: { !$0.isFinite }) {
            throw TrainError.stateMismatch("parameter \(k) is \(state.parameters[k])")
        }
        let BH = state.batch * s.hidden
        guard state.h.count == BH, state.c.count == BH else {
            throw TrainError.stateMismatch("h and c hold \(state.h.count) and \(state.c.count) values, expected \(BH) (batch × hidden)")
        }
        guard state.step >= 0, state.epoch >= 0 else {
            throw TrainError.stateMismatch("negative step \(state.step) or epoch \(state.epoch)")
        }
        try EventValidation.check(events, shape: s)
        let n = events.count / 2
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
        stepCount = state.step
        epochCount = state.epoch
        pointer = state.pointer
        params = FloatBuffer(state.parameters)
        grad = FloatBuffer(count: P)
        let B = state.batch
        if B >= Trainer.streamGroupMinimumBatch {
            groupGrad = FloatBuffer(count: P)
            let half = B / 2
            groups = [
                ChunkWorkspace(shape: s, unroll: state.unroll, batch: half, firstStream: 0, totalStreams: B,
                               params: params, grad: grad),
                ChunkWorkspace(shape: s, unroll: state.unroll, batch: B - half, firstStream: half, totalStreams: B,
                               params: params, grad: groupGrad),
            ]
            for g in groups { g.pipelined = false }
        } else {
            groupGrad = FloatBuffer(count: 0)
            groups = [ChunkWorkspace(shape: s, unroll: state.unroll, batch: B, params: params, grad: grad)]
        }
        setCarriedState(h: state.h, c: state.c)
        slot = nil
        try installSlot(from: state.optimizer, kind: optimizer.kind)
    }

    /// Copies the optimizer slot `kind` needs out of `state`, checking its length.
    private func installSlot(from state: OptimizerState, kind: OptimizerKind) throws {
        let P = params.count
        guard let name = OptimizerState.slotNames(kind).first else { slot = nil; return }
        guard let values = state.slots[name] else {
            throw TrainError.stateMismatch("optimizer \(kind.rawValue) needs the slot \"\(name)\", which the state lacks")
        }
        guard values.count == P else {
            throw TrainError.stateMismatch("optimizer slot \"\(name)\" holds \(values.count) values, expected \(P)")
        }
        slot = FloatBuffer(values)
    }

    /// Bytes of the buffers a trainer allocates for these sizes (per-step activations and
    /// gradients for U·B rows, plus parameters, gradient and one optimizer slot).
    public static func workspaceBytes(shape: ModelShape, unroll: Int, batch: Int) -> Int {
        let H = shape.hidden, G = 4 * H, V = shape.vocab
        let (rows, o1) = max(0, unroll).multipliedReportingOverflow(by: max(0, batch))
        let perRow = 2 * G + 3 * H + V + 1 + 2 * H + 4 * 2  // acts, dGates, tanhC, dHout, logits, loss, hs, cs, indices
        let (rowBytes, o2) = rows.multipliedReportingOverflow(by: 4 * perRow)
        let params = 3 * 4 * (shape.wxCount + shape.wyCount)
        return o1 || o2 ? Int.max : rowBytes + params
    }

    /// From this many streams on, the batch is trained as two stream groups, one per core.
    /// At B = 32 on a 2-core Zen 4: 131k timesteps/s for two independent B = 16 runs side by
    /// side against 107k–119k for one B = 32 workspace with its helper thread.
    public static let streamGroupMinimumBatch = 16

    private func setCarriedState(h: [Float], c: [Float]) {
        let H = shape.hidden
        for g in groups {
            let r = (g.firstStream * H)..<((g.firstStream + g.B) * H)
            g.setState(h: Array(h[r]), c: Array(c[r]))
        }
    }

    private var carriedState: (h: [Float], c: [Float]) {
        var h: [Float] = [], c: [Float] = []
        for g in groups {
            let (gh, gc) = g.currentState
            h += gh
            c += gc
        }
        return (h, c)
    }

    /// Runs the chunk at `pointer` over every stream group, leaves the batch's gradient in
    /// `grad` and returns the loss (mean over U·B rows of CE(note) + CE(tick)).
    private func runChunk() -> Float {
        let sum: Double = events.withUnsafeBufferPointer { ev in
            guard groups.count == 2 else {
                return groups[0].forwardBackward(events: ev, segment: segment, pointer: pointer)
            }
            let (g0, g1) = (groups[0], groups[1])
            if groupsInParallel { g1.startChunk(events: ev, segment: segment, pointer: pointer) }
            let s0 = g0.forwardBackward(events: ev, segment: segment, pointer: pointer)
            let s1 = groupsInParallel
                ? g1.finishChunk() : g1.forwardBackward(events: ev, segment: segment, pointer: pointer)
            drummer_accumulate(Int32(grad.count), groupGrad.pointer, grad.pointer)  // grad = group 0's + group 1's
            return s0 + s1
        }
        return Float(sum / Double(unroll * batch))
    }

    /// The most `workspaceBytes` a trainer accepts.
    public static let workspaceLimit = 8 << 30

    public var state: TrainingState {
        var slots: [String: [Float]] = [:]
        if let name = OptimizerState.slotNames(optimizerSettings.kind).first, let s = slot {
            slots[name] = s.array
        }
        let (h, c) = carriedState
        return TrainingState(
            shape: shape, unroll: unroll, batch: batch, parameters: params.array,
            optimizer: OptimizerState(slots: slots), h: h, c: c,
            step: stepCount, epoch: epochCount, pointer: pointer)
    }

    /// The update rule. Changing `kind` starts the new optimizer's slot fresh.
    public var optimizerConfig: OptimizerConfig {
        get { optimizerSettings }
        set {
            if newValue.kind != optimizerSettings.kind {
                let fresh = OptimizerState(kind: newValue.kind, parameterCount: params.count)
                slot = OptimizerState.slotNames(newValue.kind).first.flatMap { fresh.slots[$0] }.map { FloatBuffer($0) }
            }
            optimizerSettings = newValue
        }
    }

    /// One chunk = one parameter update = one step. Returns the chunk's loss
    /// (mean over its U·B predictions of note CE + tick CE).
    @discardableResult
    public func step() -> Float {
        if usesHelperThread && BLASRuntime.threads != 1 { BLASRuntime.setThreads(1) }
        let loss = runChunk()
        chunk.update(optimizerSettings, slot: slot)
        for g in groups { g.carryState() }
        stepCount += 1
        pointer += unroll
        if pointer + unroll + 1 >= segment {
            pointer = 0
            for g in groups { g.resetState() }
            epochCount += 1
        }
        return loss
    }

    /// Whether a second thread works beside the calling one (default true): with one stream
    /// group it runs the per-block GEMMs and half the update while the calling thread runs the
    /// recurrence; with two it runs group 1's chunk. Results are bitwise the same either way.
    /// With the helper thread, `step()` sets OpenBLAS to one thread (a process-wide setting)
    /// so that the two threads do not oversubscribe the cores.
    public var usesHelperThread: Bool {
        get { groups.count == 2 ? groupsInParallel : chunk.pipelined }
        set { if groups.count == 2 { groupsInParallel = newValue } else { chunk.pipelined = newValue } }
    }

    /// Stream groups the batch is split into (1 or 2; see `streamGroupMinimumBatch`).
    public var streamGroupCount: Int { groups.count }

    /// Whether the recurrent products run on CKernels' AVX-512 kernel (true by default when
    /// the CPU has AVX-512 and B ≥ 8, where it is faster than OpenBLAS) or on OpenBLAS.
    /// Setting true on a CPU without AVX-512 is ignored. Either gives the same results up to
    /// float32 rounding; a run is bitwise reproducible with the same choice.
    public var usesOwnRecurrentKernel: Bool {
        get { chunk.ownRecurrentKernel }
        set { for g in groups { g.ownRecurrentKernel = newValue && ChunkWorkspace.ownKernelAvailable } }
    }

    /// The raw (unclipped) gradient of the next chunk's loss with respect to the
    /// parameters, and that loss; changes nothing.
    func chunkGradient() -> (loss: Float, gradient: [Float]) {
        let loss = runChunk()
        return (loss, grad.array)
    }
}
