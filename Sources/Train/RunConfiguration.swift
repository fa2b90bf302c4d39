// Everything that defines a training run: model sizes, optimizer, schedule,
// initialisation, seed, and the run's bookkeeping settings. A checkpoint stores
// all of it; `--resume` restores it and lets only some fields change.
import DrummerCore

/// The hyperparameters and settings of one training run.
public struct RunConfiguration: Sendable, Equatable {
    // Fixed for the life of a run (refused as overrides on resume).
    /// H, the hidden size.
    public var hidden: Int
    /// U, the truncated-BPTT chunk length.
    public var unroll: Int
    /// B, the number of contiguous streams trained together.
    public var batchSize: Int
    public var optimizer: OptimizerKind
    public var initScheme: InitScheme
    public var seed: UInt64
    /// The model directory the weights started from (`--init-from`), if any.
    public var initFrom: String?

    // May change when a run is resumed.
    public var learningRate: Float
    public var momentum: Float
    public var decay: Float
    public var epsilon: Float
    public var clip: Float
    public var schedule: LearningRateSchedule
    /// The global step to train until; nil trains until interrupted.
    public var steps: Int?
    public var checkpointEvery: Int
    public var checkpointDirectory: String
    public var keep: Int
    public var logEvery: Int
    public var evalEvery: Int

    public static let defaultHidden = 200
    public static let defaultUnroll = 200
    public static let defaultBatchSize = 1
    public static let defaultMomentum: Float = 0.9
    public static let defaultDecay: Float = 0.9
    public static let defaultEpsilon: Float = 1e-10
    public static let defaultClip: Float = 5
    public static let defaultCheckpointEvery = 500
    public static let defaultCheckpointDirectory = "checkpoints"
    public static let defaultKeep = 5
    public static let defaultLogEvery = 100
    public static let defaultEvalEvery = 1000
    public static let defaultSeed: UInt64 = 1

    public init(
        hidden: Int = defaultHidden, unroll: Int = defaultUnroll, batchSize: Int = defaultBatchSize,
        optimizer: OptimizerKind = .sgd, initScheme: InitScheme = Trainer.defaultInit,
        seed: UInt64 = defaultSeed, initFrom: String? = nil,
        learningRate: Float = Trainer.defaultLearningRate, momentum: Float = defaultMomentum,
        decay: Float = defaultDecay, epsilon: Float = defaultEpsilon, clip: Float = defaultClip,
        schedule: LearningRateSchedule = LearningRateSchedule(), steps: Int? = nil,
        checkpointEvery: Int = defaultCheckpointEvery, checkpointDirectory: String = defaultCheckpointDirectory,
        keep: Int = defaultKeep, logEvery: Int = defaultLogEvery, evalEvery: Int = defaultEvalEvery
    ) {
        self.hidden = hidden; self.unroll = unroll; self.batchSize = batchSize
        self.optimizer = optimizer; self.initScheme = initScheme; self.seed = seed; self.initFrom = initFrom
        self.learningRate = learningRate; self.momentum = momentum; self.decay = decay
        self.epsilon = epsilon; self.clip = clip; self.schedule = schedule; self.steps = steps
        self.checkpointEvery = checkpointEvery; self.checkpointDirectory = checkpointDirectory
        self.keep = keep; self.logEvery = logEvery; self.evalEvery = evalEvery
    }

    /// The optimizer settings at learning rate `rate`.
    public func optimizerConfig(learningRate rate: Float) -> OptimizerConfig {
        OptimizerConfig(kind: optimizer, learningRate: rate, momentum: momentum, decay: decay,
                        epsilon: epsilon, clip: clip)
    }

    /// Checks ranges; throws `RunError.invalidSetting` naming the option.
    public func validate() throws {
        func need(_ ok: Bool, _ option: String, _ what: String) throws {
            if !ok { throw RunError.invalidSetting(option: option, message: what) }
        }
        try need(hidden >= 1, "--hidden", "must be at least 1")
        try need(unroll >= 1, "--unroll", "must be at least 1")
        try need(batchSize >= 1, "--batch-size", "must be at least 1")
        try need(learningRate.isFinite && learningRate > 0, "--lr", "must be a positive number")
        try need(momentum.isFinite && momentum >= 0 && momentum < 1, "--momentum", "must be in [0, 1)")
        try need(decay.isFinite && decay >= 0 && decay < 1, "--decay", "must be in [0, 1)")
        try need(epsilon.isFinite && epsilon > 0, "--epsilon", "must be a positive number")
        try need(clip.isFinite && clip > 0, "--clip", "must be a positive number")
        try need(steps.map { $0 >= 0 } ?? true, "--steps", "must not be negative")
        try need(checkpointEvery >= 1, "--checkpoint-every", "must be at least 1")
        try need(!checkpointDirectory.isEmpty, "--checkpoint-dir", "must not be empty")
        try need(keep >= 1, "--keep", "must be at least 1")
        try need(logEvery >= 1, "--log-every", "must be at least 1")
        try need(evalEvery >= 1, "--eval-every", "must be at least 1")
        try schedule.validate()
    }
}
