// The training run: sets up a new or resumed run, then loops
//   step → log every --log-every → evaluate every --eval-every → checkpoint every
//   --checkpoint-every (and when validation improves) → stop on --steps or a signal,
// writing a final evaluation and checkpoint. A NaN/Inf loss or weights stop the
// run with an error and write nothing, so the last checkpoint on disk is good.
import Checkpoints
import DrummerCore
import Foundation
import Train
import ModelFiles

/// Where a run's messages go: permanent lines (stdout) and, on a terminal, a
/// progress bar redrawn in place (stderr).
public struct RunReporter {
    public var line: (String) -> Void
    public var bar: ((String) -> Void)?

    public init(line: @escaping (String) -> Void, bar: ((String) -> Void)? = nil) {
        self.line = line
        self.bar = bar
    }
}

/// How a run ended.
public struct RunSummary: Sendable, Equatable {
    public enum Ending: Sendable, Equatable { case reachedSteps, interrupted, nothingToDo }
    public var ending: Ending
    public var step: Int
    public var lastCheckpoint: String?
}

public final class TrainingRun {
    public let configuration: RunConfiguration
    public let data: TrainingData
    /// The model's groups (the vocabulary, the position and velocity tables).
    public let groups: ModelGroups
    /// The class matrices the trainer and the evaluations read (see TrainingData.classes).
    let trainingClasses: [Int32]
    let validationClasses: [Int32]?
    let trainer: Trainer
    let rngState: [UInt64]
    var smoothedLoss: Double
    var schedule: ScheduleProgress
    var bestValidationLoss: Double
    var bestStep: Int
    var lastCheckpoint: String?
    var savedStep: Int?
    var evaluatedStep: Int?
    let reporter: RunReporter
    let checkpoints: CheckpointDirectory
    /// This run's id (the same across resumes; see CheckpointDirectory).
    public let runID: String
    /// The checkpoint directory's lock, held while this run exists.
    let lock: RunLock

    /// The trainer's whole state, copied out (see `Trainer.snapshot`).
    public func snapshot() -> TrainingState { trainer.snapshot() }

    /// Where the run is (free to read).
    public var progress: TrainingProgress { trainer.progress }

    /// Stream groups the batch is trained as (see `Trainer.streamGroupCount`).
    public var streamGroupCount: Int { trainer.streamGroupCount }

    /// Loads the data, and the checkpoint or initial weights, as `options` say.
    public init(options: RunOptions, reporter: RunReporter) throws {
        self.reporter = reporter
        if let resume = options.resume {
            let ckpt = try Checkpoint.read(path: resume)
            let config = try options.resumedConfiguration(from: ckpt, path: resume)
            try config.validate()
            try options.checkGroupsUnchanged(ckpt.groups, path: resume)
            let dataPath = options.data ?? ckpt.datasetPath
            let data = try TrainingData.load(path: dataPath)
            try Trainer.checkWorkspace(shape: ckpt.state.shape, unroll: config.unroll, batch: config.batchSize)
            if let diff = vocabularyDifference(ckpt.vocabulary, data.vocabulary, aName: "the checkpoint", bName: "the dataset") {
                throw RunError.vocabularyMismatch(source: resume, difference: diff)
            }
            let fingerprint = data.fingerprint(for: ckpt.groups)
            if fingerprint != ckpt.datasetFingerprint {
                guard options.allowDataChange else {
                    throw RunError.datasetChanged(dataset: dataPath, expected: ckpt.datasetFingerprint,
                                                  found: fingerprint, checkpoint: resume)
                }
                reporter.line("warning: \(dataPath) differs from the data \(resume) was trained on; continuing (--allow-data-change)")
            }
            self.configuration = config
            self.data = data
            self.groups = ckpt.groups
            (self.trainingClasses, self.validationClasses) = try Self.classes(of: data, for: ckpt.groups, reporter: reporter)
            self.rngState = ckpt.rngState
            self.smoothedLoss = ckpt.smoothedLoss
            self.schedule = ckpt.schedule
            self.bestValidationLoss = ckpt.bestValidationLoss
            self.bestStep = ckpt.bestStep
            var state = ckpt.state
            if fingerprint != ckpt.datasetFingerprint, state.pointer + config.unroll + 1 >= data.eventCount / config.batchSize {
                // The new data is shorter than where the old run was: start its next epoch.
                state.pointer = 0
                for i in state.h.indices { state.h[i] = 0 }
                for i in state.c.indices { state.c[i] = 0 }
            }
            self.trainer = try Self.makeTrainer(state: state, classes: trainingClasses, data: data, config: config, groups: ckpt.groups)
            self.lastCheckpoint = resume
            self.savedStep = ckpt.state.step
            // A version 1 checkpoint had no run id: the run that continues it gets one.
            self.runID = ckpt.runID.isEmpty ? Checkpoint.newRunID() : ckpt.runID
            reporter.line("resumed \(resume) at step \(state.step), epoch \(state.epoch)")
        } else {
            let config = options.newConfiguration()
            try config.validate()
            let dataPath = options.data ?? RunOptions.defaultData
            let data = try TrainingData.load(path: dataPath)
            var rng = SeededRNG(seed: config.seed)
            let weights: LSTMWeights
            let groups: ModelGroups
            if let from = config.initFrom {
                let model = try ModelDirectory.load(path: from)
                if let diff = vocabularyDifference(model.vocabulary, data.vocabulary, aName: "the model", bName: "the dataset") {
                    throw RunError.vocabularyMismatch(source: from, difference: diff)
                }
                if let h = options.hidden, h != model.shape.hidden {
                    throw SettingError(option: "--hidden", message:
                        "\(h) differs from the hidden size \(model.shape.hidden) of --init-from \(from)")
                }
                // The model's groups, whatever the dataset carries (the original 2017 model:
                // the original layout, with no extra flag); flags asking for others are refused.
                try options.checkGroupsUnchanged(model.groups, path: from, what: "--init-from model")
                groups = model.groups
                weights = model.weights
            } else {
                groups = try options.layoutOriginal
                    ? ModelGroups(vocabulary: data.vocabulary)
                    : data.groups(position: options.position, velocity: options.velocity, lookback: options.lookback,
                                  encoding: options.positionEncoding ?? .oneHot,
                                  velocityBins: options.velocityBins ?? TrainingData.defaultVelocityBins)
                try Trainer.checkWorkspace(shape: groups.shape(hidden: config.hidden), unroll: config.unroll,
                                           batch: config.batchSize)
                weights = try Initializer.weights(shape: groups.shape(hidden: config.hidden),
                                                  scheme: config.initScheme, rng: &rng)
            }
            var c = config
            c.hidden = weights.shape.hidden
            try Trainer.checkWorkspace(shape: weights.shape, unroll: c.unroll, batch: c.batchSize)
            let state = TrainingState(weights: weights, unroll: c.unroll, batch: c.batchSize, optimizer: c.optimizer)
            self.configuration = c
            self.data = data
            self.groups = groups
            (self.trainingClasses, self.validationClasses) = try Self.classes(of: data, for: groups, reporter: reporter)
            self.rngState = rng.stateWords
            // The original's starting value: the loss of a uniform guess over every output group.
            self.smoothedLoss = weights.shape.outputGroups.reduce(0) { $0 + log(Double($1)) }
            self.schedule = ScheduleProgress()
            self.bestValidationLoss = .infinity
            self.bestStep = -1
            self.trainer = try Self.makeTrainer(state: state, classes: trainingClasses, data: data, config: c, groups: groups)
            self.lastCheckpoint = nil
            self.savedStep = nil
            self.runID = Checkpoint.newRunID()
            reporter.line("groups: inputs " + zip(groups.inputNames, weights.shape.inputGroups).map { "\($0) \($1)" }.joined(separator: ", ")
                          + "; outputs " + zip(groups.outputNames, weights.shape.outputGroups).map { "\($0) \($1)" }.joined(separator: ", "))
        }
        if let n = trainer.inputNoise {
            let names = groups.inputNames
            reporter.line("input noise: \(configuration.inputNoise) on " + n.groups.map { names[$0] }.joined(separator: ", ")
                          + (n.draw == .model ? ", drawn from the model's predictions" : "") + " (training inputs only)")
        }
        self.checkpoints = CheckpointDirectory(path: configuration.checkpointDirectory)
        // Before any training: the directory exists, is writable, is locked, and is this run's.
        self.lock = try checkpoints.claim(runID: runID, resumingFrom: options.resume)
        if options.resume != nil {
            let step = trainer.progress.step
            let later = checkpoints.list().filter { $0.step > step }.map(\.step)
            if !later.isEmpty {
                reporter.line("note: \(checkpoints.path) holds checkpoints past step \(step) (\(later.map(String.init).joined(separator: ", "))) from a run that went further; this run replaces them as it reaches those steps")
            }
            let dropped = try TrainLog.truncate(after: step, directory: configuration.checkpointDirectory)
            if dropped > 0 {
                reporter.line("note: dropped \(dropped) row(s) after step \(step) from \(TrainLog.fileName)")
            }
        }
    }

    static func makeTrainer(state: TrainingState, classes: [Int32], data: TrainingData, config: RunConfiguration,
                            groups: ModelGroups) throws -> Trainer {
        let noise = try InputNoise(configuration: config, modelGroups: groups, shape: state.shape)
        let trainer: Trainer
        do {
            trainer = try Trainer(state: state, events: classes,
                                  optimizer: config.optimizerConfig(learningRate: config.learningRate))
        } catch {
            throw RunError.trainerRejected("\(data.path): \(error)")
        }
        trainer.inputNoise = noise
        return trainer
    }

    /// The class matrices of the training and validation splits for `groups`, saying how many
    /// positions or velocities fell outside what the groups know.
    static func classes(of data: TrainingData, for groups: ModelGroups, reporter: RunReporter) throws
        -> (training: [Int32], validation: [Int32]?)
    {
        let t = try data.classes(data.training, for: groups)
        let v = try data.validationSplit.map { try data.classes($0, for: groups) }
        for (name, r) in [("training", t), ("validation", v)] {
            guard let r else { continue }
            if r.clampedPositions > 0 {
                reporter.line("note: \(r.clampedPositions) \(name) hit(s) lie in bars longer than the model's \(groups.position?.slots ?? 0) position slots: read as the last slot")
            }
            if r.clampedVelocities > 0 {
                reporter.line("note: \(r.clampedVelocities) \(name) hit(s) have velocities outside the model's bins: read as the nearest bin")
            }
        }
        return (t.classes, v?.classes)
    }

    /// The learning rate of the next update.
    public var currentLearningRate: Float {
        configuration.schedule.rate(base: configuration.learningRate, step: trainer.progress.step, progress: schedule)
    }

    /// The current weights.
    public func weights() throws -> LSTMWeights {
        try trainer.weights()
    }

    /// The checkpoint of the current state.
    public func checkpoint() -> Checkpoint {
        Checkpoint(configuration: configuration, state: trainer.snapshot(), groups: groups,
                   rngState: rngState, datasetPath: absolutePath(data.path), datasetFingerprint: data.fingerprint(for: groups),
                   datasetEvents: data.eventCount, validationEvents: data.validationCount,
                   smoothedLoss: smoothedLoss, schedule: schedule, bestValidationLoss: bestValidationLoss,
                   bestStep: bestStep, runID: runID)
    }
}
