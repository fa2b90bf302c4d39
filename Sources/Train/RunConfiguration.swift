// Everything that defines a training run: model sizes, optimizer, schedule,
// initialisation, seed, and the run's bookkeeping settings. A checkpoint stores
// all of it; `--resume` restores it and lets only some fields change.
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

/// The hyperparameters and settings of one training run: a value for every setting of
/// `Settings.all` (its default unless set). Read and write one with `config[Settings.x]`;
/// the settings the training code uses most have a named property too.
public struct RunConfiguration: @unchecked Sendable, Equatable {
    // @unchecked: the values are the settings' own types, all Sendable value types.
    private var values: [String: AnyHashable] = [:]

    /// Every setting at its default.
    public init() {}

    public subscript<V>(setting: Setting<V>) -> V {
        get { values[setting.name].flatMap { $0.base as? V } ?? setting.defaultValue }
        set { values[setting.name] = AnyHashable(newValue) }
    }

    public static func == (a: RunConfiguration, b: RunConfiguration) -> Bool {
        Settings.all.allSatisfy { $0.stored(in: a) == $0.stored(in: b) }
    }

    /// A configuration with these settings, the others at their defaults.
    public init(
        hidden: Int = Settings.hidden.defaultValue, unroll: Int = Settings.unroll.defaultValue,
        batchSize: Int = Settings.batchSize.defaultValue, optimizer: OptimizerKind = Settings.optimizer.defaultValue,
        initScheme: InitScheme = Settings.initScheme.defaultValue, seed: UInt64 = Settings.seed.defaultValue,
        learningRate: Float = Settings.learningRate.defaultValue,
        momentum: Float = Settings.momentum.defaultValue, decay: Float = Settings.decay.defaultValue,
        epsilon: Float = Settings.epsilon.defaultValue, clip: Float = Settings.clip.defaultValue,
        schedule: LearningRateSchedule = LearningRateSchedule(), steps: Int? = nil,
        checkpointEvery: Int = Settings.checkpointEvery.defaultValue,
        checkpointDirectory: String = Settings.checkpointDirectory.defaultValue,
        keep: Int = Settings.keep.defaultValue, logEvery: Int = Settings.logEvery.defaultValue,
        evalEvery: Int = Settings.evalEvery.defaultValue
    ) {
        self.hidden = hidden; self.unroll = unroll; self.batchSize = batchSize
        self.optimizer = optimizer; self.initScheme = initScheme; self.seed = seed
        self.learningRate = learningRate; self.momentum = momentum; self.decay = decay
        self.epsilon = epsilon; self.clip = clip; self.schedule = schedule; self.steps = steps
        self.checkpointEvery = checkpointEvery; self.checkpointDirectory = checkpointDirectory
        self.keep = keep; self.logEvery = logEvery; self.evalEvery = evalEvery
    }

    // Named views of the settings the code reads most (each is `self[Settings.x]`).
    /// H, the hidden size.
    public var hidden: Int { get { self[Settings.hidden] } set { self[Settings.hidden] = newValue } }
    /// L, stacked LSTM layers.
    public var layers: Int { get { self[Settings.layers] } set { self[Settings.layers] = newValue } }
    /// U, the truncated-BPTT chunk length.
    public var unroll: Int { get { self[Settings.unroll] } set { self[Settings.unroll] = newValue } }
    /// B, the number of contiguous streams trained together.
    public var batchSize: Int { get { self[Settings.batchSize] } set { self[Settings.batchSize] = newValue } }
    public var optimizer: OptimizerKind { get { self[Settings.optimizer] } set { self[Settings.optimizer] = newValue } }
    public var initScheme: InitScheme { get { self[Settings.initScheme] } set { self[Settings.initScheme] = newValue } }
    public var seed: UInt64 { get { self[Settings.seed] } set { self[Settings.seed] = newValue } }
    public var learningRate: Float { get { self[Settings.learningRate] } set { self[Settings.learningRate] = newValue } }
    public var momentum: Float { get { self[Settings.momentum] } set { self[Settings.momentum] = newValue } }
    public var decay: Float { get { self[Settings.decay] } set { self[Settings.decay] = newValue } }
    public var epsilon: Float { get { self[Settings.epsilon] } set { self[Settings.epsilon] = newValue } }
    public var clip: Float { get { self[Settings.clip] } set { self[Settings.clip] = newValue } }
    /// The learning-rate schedule of --lr-decay, --lr-decay-every and --lr-plateau-patience (0 = off).
    public var schedule: LearningRateSchedule {
        get {
            let every = self[Settings.lrDecayEvery], patience = self[Settings.lrPlateauPatience]
            return LearningRateSchedule(factor: self[Settings.lrDecay], every: every == 0 ? nil : every,
                                        plateauPatience: patience == 0 ? nil : patience)
        }
        set {
            self[Settings.lrDecay] = newValue.factor
            self[Settings.lrDecayEvery] = newValue.every ?? 0
            self[Settings.lrPlateauPatience] = newValue.plateauPatience ?? 0
        }
    }
    /// The global step to train until; nil trains until interrupted.
    public var steps: Int? { get { self[Settings.steps] } set { self[Settings.steps] = newValue } }
    public var checkpointEvery: Int { get { self[Settings.checkpointEvery] } set { self[Settings.checkpointEvery] = newValue } }
    public var checkpointDirectory: String {
        get { self[Settings.checkpointDirectory] } set { self[Settings.checkpointDirectory] = newValue }
    }
    public var keep: Int { get { self[Settings.keep] } set { self[Settings.keep] = newValue } }
    public var logEvery: Int { get { self[Settings.logEvery] } set { self[Settings.logEvery] = newValue } }
    public var evalEvery: Int { get { self[Settings.evalEvery] } set { self[Settings.evalEvery] = newValue } }

    /// The optimizer settings at learning rate `rate`.
    public func optimizerConfig(learningRate rate: Float) -> OptimizerConfig {
        OptimizerConfig(kind: optimizer, learningRate: rate, momentum: momentum, decay: decay,
                        epsilon: epsilon, clip: clip, weightDecay: self[Settings.weightDecay])
    }

    /// Checks every setting against its range (`Settings.all`); throws `SettingError` naming the flag.
    public func validate() throws {
        for s in Settings.all { try s.validate(in: self) }
        try schedule.validate()
        if self[Settings.dropout] > 0, self[Settings.layers] < 2 {
            throw SettingError(option: "--dropout", message: "drops units between stacked layers: give --layers 2 or more, or --dropout 0")
        }
        if Double(self[Settings.weightDecay]) * Double(learningRate) >= 1 {
            throw SettingError(option: "--weight-decay", message: "times --lr must be below 1 (each update multiplies "
                + "the weights by 1 − lr·λ), got \(self[Settings.weightDecay]) × \(learningRate)")
        }
    }
}
