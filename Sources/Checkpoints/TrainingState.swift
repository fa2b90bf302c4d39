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
    /// Wx (shape.wxCount values) then Wy (shape.wyCount), one contiguous buffer.
    public var parameters: [Float]
    public var optimizer: OptimizerState
    /// B×H each (stream-major), carried between chunks.
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
        let p = weights.wx + weights.wy
        self.init(
            shape: weights.shape, unroll: unroll, batch: batch, parameters: p,
            optimizer: OptimizerState(kind: optimizer, parameterCount: p.count),
            h: [Float](repeating: 0, count: max(0, batch) * weights.shape.hidden),
            c: [Float](repeating: 0, count: max(0, batch) * weights.shape.hidden),
            step: 0, epoch: 0, pointer: 0)
    }

    /// P = Wx count + Wy count.
    public var parameterCount: Int { shape.wxCount + shape.wyCount }

    /// The parameters as the two matrices.
    public func weights() throws -> LSTMWeights {
        guard parameters.count == parameterCount else {
            throw WeightsError.wrongCount(matrix: "the parameter buffer (Wx then Wy)", expected: parameterCount,
                                          found: parameters.count)
        }
        return try LSTMWeights(
            shape: shape, wx: Array(parameters[0..<shape.wxCount]),
            wy: Array(parameters[shape.wxCount...]))
    }
}
