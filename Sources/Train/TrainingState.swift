// The whole in-memory training state: everything a checkpoint must hold to
// resume bit-exactly.
//
// Letters: N = notes, K = ticks, V = N + K, H = hidden size, G = 4H gate columns,
// U = unroll steps per chunk, B = streams (batch), P = parameter count.
import DrummerCore

/// The whole in-memory training state; every field is saved in a checkpoint and
/// restoring it resumes bit-exactly.
public struct TrainingState: Sendable, Equatable {
    public var shape: ModelShape
    /// U: steps per chunk.
    public var unroll: Int
    /// B: streams trained together.
    public var batch: Int
    /// Every layer's Wx, then Wy, one contiguous buffer (`shape.parameters` says where each lies).
    public var parameters: [Float]
    public var optimizer: OptimizerState
    /// L×B×H each (layer-major, then stream), carried between chunks.
    public var h: [Float]
    public var c: [Float]
    /// Updates done.
    public var step: Int
    /// Completed passes over the data.
    public var epoch: Int
    /// Data pointer p: the next chunk's inputs are events p..p+U−1 of every stream's segment.
    public var pointer: Int

    public init(
        shape: ModelShape, unroll: Int, batch: Int, parameters: [Float], optimizer: OptimizerState,
        h: [Float], c: [Float], step: Int, epoch: Int, pointer: Int
    ) {
        self.shape = shape
        self.unroll = unroll
        self.batch = batch
        self.parameters = parameters
        self.optimizer = optimizer
        self.h = h
        self.c = c
        self.step = step
        self.epoch = epoch
        self.pointer = pointer
    }

    /// The state at step 0: these weights, fresh optimizer slots, zero (h, c), p = 0.
    public init(weights: LSTMWeights, unroll: Int, batch: Int, optimizer: OptimizerKind) {
        let p = weights.parameters
        let state = weights.shape.layers * max(0, batch) * weights.shape.hidden
        self.init(
            shape: weights.shape, unroll: unroll, batch: batch, parameters: p,
            optimizer: OptimizerState(kind: optimizer, parameterCount: p.count),
            h: [Float](repeating: 0, count: state),
            c: [Float](repeating: 0, count: state),
            step: 0, epoch: 0, pointer: 0)
    }

    /// P: every layer's Wx count plus Wy's.
    public var parameterCount: Int { shape.parameterCount }

    /// The parameters as the model's matrices.
    public func weights() throws -> LSTMWeights {
        try LSTMWeights(shape: shape, parameters: parameters)
    }
}
