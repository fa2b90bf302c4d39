// Optimizer settings and the optimizer's saved per-parameter slots.

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
        kind: OptimizerKind = Settings.optimizer.defaultValue, learningRate: Float = Settings.learningRate.defaultValue,
        momentum: Float = Settings.momentum.defaultValue, decay: Float = Settings.decay.defaultValue,
        epsilon: Float = Settings.epsilon.defaultValue, clip: Float = Settings.clip.defaultValue
    ) {
        self.kind = kind
        self.learningRate = learningRate
        self.momentum = momentum
        self.decay = decay
        self.epsilon = epsilon
        self.clip = clip
    }

    /// Throws `SettingError` when a setting is out of its range (see `SettingRules`).
    public func validate() throws {
        try Settings.learningRate.validate(learningRate)
        try Settings.clip.validate(clip)
        try Settings.momentum.validate(momentum)
        try Settings.decay.validate(decay)
        try Settings.epsilon.validate(epsilon)
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
    static let meanSquare = "ms"

    /// The slots `kind` uses.
    public static func slotNames(_ kind: OptimizerKind) -> [String] {
        switch kind {
        case .sgd: return []
        case .momentum: return [velocity]
        case .rmsprop: return [meanSquare]
        }
    }

    /// A fresh slot's value: 1 for RMSProp's accumulator (TF1), 0 otherwise.
    static func initialValue(_ slot: String) -> Float { slot == meanSquare ? 1 : 0 }
}
