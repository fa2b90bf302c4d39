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
import DrummerCore

public final class Trainer {
    /// SGD learning rate used when none is given (see the issue note for the experiments).
    public static let defaultLearningRate: Float = 1
    /// Initialisation used when none is given.
    public static let defaultInit: InitScheme = .original

    let shape: ModelShape
    let unroll: Int, batch: Int
    /// L: events per stream segment.
    let segment: Int
    let events: [Int32]
    var optimizerSettings: OptimizerConfig
    var stepCount: Int, epochCount: Int, pointer: Int
    let chunk: ChunkWorkspace
    /// P parameters (Wx then Wy), their gradient and the optimizer slot (velocity or ms).
    let params: FloatBuffer, grad: FloatBuffer
    var slot: FloatBuffer?

    public init(state: TrainingState, events: [Int32], optimizer: OptimizerConfig) throws {
        let s = state.shape
        guard s.isValid else { throw TrainError.stateMismatch("invalid model shape \(s)") }
        guard state.unroll >= 1 else { throw TrainError.badSetting("unroll must be at least 1, got \(state.unroll)") }
        guard state.batch >= 1 else { throw TrainError.badSetting("batch size must be at least 1, got \(state.batch)") }
        try optimizer.validate()
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
        chunk = ChunkWorkspace(shape: s, unroll: state.unroll, batch: state.batch)
        chunk.setState(h: state.h, c: state.c)
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

    public var state: TrainingState {
        var slots: [String: [Float]] = [:]
        if let name = OptimizerState.slotNames(optimizerSettings.kind).first, let s = slot {
            slots[name] = s.array
        }
        let (h, c) = chunk.currentState
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
        let loss = chunk.forwardBackward(
            params: UnsafePointer(params.pointer), grad: grad.pointer, events: events,
            segment: segment, pointer: pointer)
        Optimizer.update(
            optimizerSettings, params: params.pointer, grad: UnsafePointer(grad.pointer),
            slot: slot?.pointer, count: params.count)
        chunk.carryState()
        stepCount += 1
        pointer += unroll
        if pointer + unroll + 1 >= segment {
            pointer = 0
            chunk.resetState()
            epochCount += 1
        }
        return loss
    }

    /// The raw (unclipped) gradient of the next chunk's loss with respect to the
    /// parameters, and that loss; changes nothing.
    func chunkGradient() -> (loss: Float, gradient: [Float]) {
        let loss = chunk.forwardBackward(
            params: UnsafePointer(params.pointer), grad: grad.pointer, events: events,
            segment: segment, pointer: pointer)
        return (loss, grad.array)
    }
}

/// An owned, fixed-size float buffer (allocated once, freed in deinit).
final class FloatBuffer {
    let pointer: UnsafeMutablePointer<Float>
    let count: Int

    init(count: Int, value: Float = 0) {
        self.count = count
        pointer = .allocate(capacity: max(1, count))
        pointer.initialize(repeating: value, count: max(1, count))
    }

    convenience init(_ values: [Float]) {
        self.init(count: values.count)
        values.withUnsafeBufferPointer { b in
            if let base = b.baseAddress { pointer.update(from: base, count: values.count) }
        }
    }

    deinit { pointer.deallocate() }

    var array: [Float] { Array(UnsafeBufferPointer(start: pointer, count: count)) }

    func fill(_ v: Float) { pointer.update(repeating: v, count: count) }

    func buffer(_ offset: Int = 0, _ n: Int) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: pointer + offset, count: n)
    }

    func mutable(_ offset: Int = 0, _ n: Int) -> UnsafeMutableBufferPointer<Float> {
        UnsafeMutableBufferPointer(start: pointer + offset, count: n)
    }
}
