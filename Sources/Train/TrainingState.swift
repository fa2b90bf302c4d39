// The whole in-memory training state and the optimizer settings. Everything a
// checkpoint must hold to resume bit-exactly is in `TrainingState`.
//
// Letters: N = notes, K = ticks, V = N + K, H = hidden size, G = 4H gate columns,
// U = unroll steps per chunk, B = streams (batch), P = parameter count.
import DrummerCore

/// Weight initialisation schemes.
public enum InitScheme: String, CaseIterable, Sendable {
    /// The original's: truncated normal, stddev 0.01, every row including the biases.
    case original
    /// Keras' LSTM defaults: Glorot-uniform input block, orthogonal recurrent block
    /// (the whole H×4H matrix, as Keras), zero bias with forget-gate bias 1;
    /// Glorot-uniform output matrix with zero bias.
    case keras
}

public enum OptimizerKind: String, CaseIterable, Sendable {
    case sgd, momentum, rmsprop
}

/// Update rule settings. The update is: clip every gradient entry to ±clip, then
/// - sgd:      p -= lr·g
/// - momentum: v = momentum·v + g; p -= lr·v                (TF1 MomentumOptimizer)
/// - rmsprop:  ms = decay·ms + (1−decay)·g²; p -= lr·g / sqrt(ms + epsilon)
///             (TF1 RMSPropOptimizer without momentum; ms starts at 1)
public struct OptimizerConfig: Sendable, Equatable {
    public var kind: OptimizerKind
    public var learningRate: Float
    public var momentum: Float
    public var decay: Float
    public var epsilon: Float
    public var clip: Float

    public init(
        kind: OptimizerKind = .sgd, learningRate: Float = Trainer.defaultLearningRate,
        momentum: Float = 0.9, decay: Float = 0.9, epsilon: Float = 1e-10, clip: Float = 5
    ) {
        self.kind = kind
        self.learningRate = learningRate
        self.momentum = momentum
        self.decay = decay
        self.epsilon = epsilon
        self.clip = clip
    }

    /// Throws when a setting is out of its range.
    public func validate() throws {
        guard learningRate.isFinite, learningRate > 0 else {
            throw TrainError.badSetting("learning rate must be a positive number, got \(learningRate)")
        }
        guard clip.isFinite, clip > 0 else {
            throw TrainError.badSetting("clip must be a positive number, got \(clip)")
        }
        guard momentum.isFinite, momentum >= 0, momentum < 1 else {
            throw TrainError.badSetting("momentum must be in [0, 1), got \(momentum)")
        }
        guard decay.isFinite, decay >= 0, decay < 1 else {
            throw TrainError.badSetting("RMSProp decay must be in [0, 1), got \(decay)")
        }
        guard epsilon.isFinite, epsilon >= 0 else {
            throw TrainError.badSetting("RMSProp epsilon must be a non-negative number, got \(epsilon)")
        }
    }
}

/// The optimizer's per-parameter slots, each the length of the parameter buffer.
/// sgd: none; momentum: "velocity" (starts at 0); rmsprop: "ms" (starts at 1, as TF1).
public struct OptimizerState: Sendable, Equatable {
    public var slots: [String: [Float]]

    public init(slots: [String: [Float]]) { self.slots = slots }

    /// Fresh slots for `kind` over `parameterCount` parameters.
    public init(kind: OptimizerKind, parameterCount: Int) {
        var s: [String: [Float]] = [:]
        for name in OptimizerState.slotNames(kind) {
            s[name] = [Float](repeating: OptimizerState.initialValue(name), count: parameterCount)
        }
        slots = s
    }

    public static let velocity = "velocity"
    public static let meanSquare = "ms"

    /// The slots `kind` uses.
    public static func slotNames(_ kind: OptimizerKind) -> [String] {
        switch kind {
        case .sgd: return []
        case .momentum: return [velocity]
        case .rmsprop: return [meanSquare]
        }
    }

    /// A fresh slot's value: 1 for RMSProp's accumulator (TF1), 0 otherwise.
    public static func initialValue(_ slot: String) -> Float { slot == meanSquare ? 1 : 0 }
}

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
            throw TrainError.stateMismatch(
                "parameter buffer holds \(parameters.count) values, the shape needs \(parameterCount)")
        }
        return try LSTMWeights(
            shape: shape, wx: Array(parameters[0..<shape.wxCount]),
            wy: Array(parameters[shape.wxCount...]))
    }

    /// L: events per stream segment for a sequence of `eventCount` events (N / B).
    public func segmentLength(eventCount: Int) -> Int { batch > 0 ? eventCount / batch : 0 }
}
