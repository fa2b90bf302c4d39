// Optimizer settings and the optimizer's saved per-parameter slots.

public enum OptimizerKind: String, CaseIterable, Sendable {
    case sgd, momentum, rmsprop, adam
}

/// Update rule settings. The update is: clip every gradient entry to ±clip, then
/// - sgd:      p -= lr·g
/// - momentum: v = momentum·v + g; p -= lr·v                (TF1 MomentumOptimizer)
/// - rmsprop:  ms = decay·ms + (1−decay)·g²; p -= lr·g / sqrt(ms + epsilon)
///             (TF1 RMSPropOptimizer without momentum; ms starts at 1)
/// - adam:     m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g²;
///             p -= lr · (m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + ε)
///             (PyTorch's torch.optim.Adam: β1 0.9, β2 0.999, ε 1e-8; t the update, from 1)
/// With a weight decay λ > 0 every parameter is first multiplied by 1 − lr·λ (decoupled
/// weight decay, PyTorch's `param.mul_(1 - lr * weight_decay)`: adam becomes torch.optim.AdamW).
public struct OptimizerConfig: Sendable, Equatable {
    public var kind: OptimizerKind
    public var learningRate: Float
    public var momentum: Float
    public var decay: Float
    public var epsilon: Float
    public var clip: Float
    /// λ of the decoupled weight decay (0: none).
    public var weightDecay: Float = 0
    /// The update being made, from 1 (Adam's bias correction; the trainer sets it).
    public var step: Int = 1

    public static let adamBeta1: Double = 0.9
    public static let adamBeta2: Double = 0.999
    public static let adamEpsilon: Double = 1e-8

    public init(
        kind: OptimizerKind = Settings.optimizer.defaultValue, learningRate: Float = Settings.learningRate.defaultValue,
        momentum: Float = Settings.momentum.defaultValue, decay: Float = Settings.decay.defaultValue,
        epsilon: Float = Settings.epsilon.defaultValue, clip: Float = Settings.clip.defaultValue,
        weightDecay: Float = Settings.weightDecay.defaultValue
    ) {
        self.kind = kind
        self.learningRate = learningRate
        self.momentum = momentum
        self.decay = decay
        self.epsilon = epsilon
        self.clip = clip
        self.weightDecay = weightDecay
    }

    /// Throws `SettingError` when a setting is out of its range (see `SettingRules`).
    public func validate() throws {
        try Settings.learningRate.validate(learningRate)
        try Settings.clip.validate(clip)
        try Settings.momentum.validate(momentum)
        try Settings.decay.validate(decay)
        try Settings.epsilon.validate(epsilon)
        try Settings.weightDecay.validate(weightDecay)
    }
}

/// The optimizer's per-parameter slots, each the length of the parameter buffer.
/// sgd: none; momentum: "velocity" (starts at 0); rmsprop: "ms" (starts at 1, as TF1);
/// adam: "m" and "v" (start at 0).
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
    static let meanSquare = "ms"
    static let firstMoment = "m"
    static let secondMoment = "v"

    /// The slots `kind` uses.
    public static func slotNames(_ kind: OptimizerKind) -> [String] {
        switch kind {
        case .sgd: return []
        case .momentum: return [velocity]
        case .rmsprop: return [meanSquare]
        case .adam: return [firstMoment, secondMoment]
        }
    }

    /// A fresh slot's value: 1 for RMSProp's accumulator (TF1), 0 otherwise.
    static func initialValue(_ slot: String) -> Float { slot == meanSquare ? 1 : 0 }
}
