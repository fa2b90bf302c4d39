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
    /// `--input-noise`: the probability that a training input class is replaced by a random
    /// class of its group (0: off; see Train/InputNoise.swift).
    public var inputNoise: Float
    /// `--input-noise-groups`: the input groups that get noise, by name; nil: the default
    /// groups the model has.
    public var inputNoiseGroups: [String]?
    /// `--input-noise-draw`: where a replaced input class comes from.
    public var inputNoiseDraw: InputNoiseDraw

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
    public static let defaultInputNoise: Float = 0
    /// The note and velocity the sampler feeds back. Not the tick: on Groove (--input-noise 0.15,
    /// uniform draws; see the previous models/groove/TRAINING.md, git show 1d8506d:…), noise on
    /// the tick too put 103–117% of the corpus's share
    /// of onsets on the 16th grid and let the note histogram drift (JS 0.027–0.082 bits over
    /// 100 files), where note and velocity alone gave 102% and 0.016–0.028.
    public static let defaultInputNoiseGroups = ["note", "velocity"]

    public init(
        hidden: Int = defaultHidden, unroll: Int = defaultUnroll, batchSize: Int = defaultBatchSize,
        optimizer: OptimizerKind = .sgd, initScheme: InitScheme = defaultInit,
        seed: UInt64 = defaultSeed, initFrom: String? = nil,
        learningRate: Float = defaultLearningRate, momentum: Float = defaultMomentum,
        decay: Float = defaultDecay, epsilon: Float = defaultEpsilon, clip: Float = defaultClip,
        schedule: LearningRateSchedule = LearningRateSchedule(), steps: Int? = nil,
        checkpointEvery: Int = defaultCheckpointEvery, checkpointDirectory: String = defaultCheckpointDirectory,
        keep: Int = defaultKeep, logEvery: Int = defaultLogEvery, evalEvery: Int = defaultEvalEvery,
        inputNoise: Float = defaultInputNoise, inputNoiseGroups: [String]? = nil,
        inputNoiseDraw: InputNoiseDraw = .uniform
    ) {
        self.hidden = hidden; self.unroll = unroll; self.batchSize = batchSize
        self.optimizer = optimizer; self.initScheme = initScheme; self.seed = seed; self.initFrom = initFrom
        self.learningRate = learningRate; self.momentum = momentum; self.decay = decay
        self.epsilon = epsilon; self.clip = clip; self.schedule = schedule; self.steps = steps
        self.checkpointEvery = checkpointEvery; self.checkpointDirectory = checkpointDirectory
        self.keep = keep; self.logEvery = logEvery; self.evalEvery = evalEvery
        self.inputNoise = inputNoise; self.inputNoiseGroups = inputNoiseGroups
        self.inputNoiseDraw = inputNoiseDraw
    }

    /// The names of the input groups that get noise on a model with inputs `inputNames`: the
    /// ones asked for, else the default groups the model has.
    public func inputNoiseGroupNames(modelInputs inputNames: [String]) -> [String] {
        inputNoiseGroups ?? RunConfiguration.defaultInputNoiseGroups.filter(inputNames.contains)
    }

    /// The optimizer settings at learning rate `rate`.
    public func optimizerConfig(learningRate rate: Float) -> OptimizerConfig {
        OptimizerConfig(kind: optimizer, learningRate: rate, momentum: momentum, decay: decay,
                        epsilon: epsilon, clip: clip)
    }

    /// Checks every setting with `SettingRules`; throws `SettingError` naming the option.
    public func validate() throws {
        try SettingRules.hidden(hidden)
        try SettingRules.unroll(unroll)
        try SettingRules.batchSize(batchSize)
        try optimizerConfig(learningRate: learningRate).validate()
        if let steps { try SettingRules.steps(steps) }
        try SettingRules.checkpointEvery(checkpointEvery)
        try SettingRules.checkpointDirectory(checkpointDirectory)
        try SettingRules.keep(keep)
        try SettingRules.logEvery(logEvery)
        try SettingRules.evalEvery(evalEvery)
        try SettingRules.inputNoise(inputNoise)
        if let g = inputNoiseGroups { try SettingRules.inputNoiseGroups(g) }
        try schedule.validate()
    }
}

/// Where `--input-noise` takes a replaced input class from.
public enum InputNoiseDraw: String, Sendable, CaseIterable {
    /// Uniformly from the group's classes.
    case uniform
    /// From the model's own prediction of that input (its softmax at temperature 1, given the
    /// true events before it): the slips it makes when it samples. The group must also be an
    /// output of the model (note, tick, velocity).
    case model
}
