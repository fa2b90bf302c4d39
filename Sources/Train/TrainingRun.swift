// The training run: sets up a new or resumed run, then loops
//   step → log every --log-every → evaluate every --eval-every → checkpoint every
//   --checkpoint-every (and when validation improves) → stop on --steps or a signal,
// writing a final evaluation and checkpoint. A NaN/Inf loss or weights stop the
// run with an error and write nothing, so the last checkpoint on disk is good.
import Checkpoints
import DrummerCore
import Foundation

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
            let dataPath = options.data ?? ckpt.datasetPath
            let data = try TrainingData.load(path: dataPath)
            try Trainer.checkWorkspace(shape: ckpt.state.shape, unroll: config.unroll, batch: config.batchSize)
            if let diff = vocabularyDifference(ckpt.vocabulary, data.vocabulary, aName: "the checkpoint", bName: "the dataset") {
                throw RunError.vocabularyMismatch(source: resume, difference: diff)
            }
            if data.fingerprint != ckpt.datasetFingerprint {
                guard options.allowDataChange else {
                    throw RunError.datasetChanged(dataset: dataPath, expected: ckpt.datasetFingerprint,
                                                  found: data.fingerprint, checkpoint: resume)
                }
                reporter.line("warning: \(dataPath) differs from the data \(resume) was trained on; continuing (--allow-data-change)")
            }
            self.configuration = config
            self.data = data
            self.rngState = ckpt.rngState
            self.smoothedLoss = ckpt.smoothedLoss
            self.schedule = ckpt.schedule
            self.bestValidationLoss = ckpt.bestValidationLoss
            self.bestStep = ckpt.bestStep
            var state = ckpt.state
            if data.fingerprint != ckpt.datasetFingerprint, state.pointer + config.unroll + 1 >= data.eventCount / config.batchSize {
                // The new data is shorter than where the old run was: start its next epoch.
                state.pointer = 0
                for i in state.h.indices { state.h[i] = 0 }
                for i in state.c.indices { state.c[i] = 0 }
            }
            self.trainer = try Self.makeTrainer(state: state, data: data, config: config)
            self.lastCheckpoint = resume
            self.savedStep = ckpt.state.step
            reporter.line("resumed \(resume) at step \(state.step), epoch \(state.epoch)")
        } else {
            let config = options.newConfiguration()
            try config.validate()
            let dataPath = options.data ?? RunOptions.defaultData
            let data = try TrainingData.load(path: dataPath)
            try Trainer.checkWorkspace(shape: data.vocabulary.shape(hidden: config.hidden), unroll: config.unroll,
                                       batch: config.batchSize)
            var rng = SeededRNG(seed: config.seed)
            let weights: LSTMWeights
            if let from = config.initFrom {
                let model = try ModelDirectory.load(path: from)
                if let diff = vocabularyDifference(model.vocabulary, data.vocabulary, aName: "the model", bName: "the dataset") {
                    throw RunError.vocabularyMismatch(source: from, difference: diff)
                }
                if let h = options.hidden, h != model.shape.hidden {
                    throw SettingError(option: "--hidden", message:
                        "\(h) differs from the hidden size \(model.shape.hidden) of --init-from \(from)")
                }
                weights = model.weights
            } else {
                weights = try Initializer.weights(shape: data.vocabulary.shape(hidden: config.hidden),
                                                  scheme: config.initScheme, rng: &rng)
            }
            var c = config
            c.hidden = weights.shape.hidden
            let state = TrainingState(weights: weights, unroll: c.unroll, batch: c.batchSize, optimizer: c.optimizer)
            self.configuration = c
            self.data = data
            self.rngState = rng.stateWords
            // The original's starting value: the loss of a uniform guess.
            self.smoothedLoss = log(Double(data.vocabulary.notes)) + log(Double(data.vocabulary.ticks))
            self.schedule = ScheduleProgress()
            self.bestValidationLoss = .infinity
            self.bestStep = -1
            self.trainer = try Self.makeTrainer(state: state, data: data, config: c)
            self.lastCheckpoint = nil
            self.savedStep = nil
        }
        self.checkpoints = CheckpointDirectory(path: configuration.checkpointDirectory)
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

    static func makeTrainer(state: TrainingState, data: TrainingData, config: RunConfiguration) throws -> Trainer {
        do {
            return try Trainer(state: state, events: data.events,
                               optimizer: config.optimizerConfig(learningRate: config.learningRate))
        } catch {
            throw RunError.trainerRejected("\(data.path): \(error)")
        }
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
        Checkpoint(configuration: configuration, state: trainer.snapshot(), vocabulary: data.vocabulary,
                   rngState: rngState, datasetPath: absolutePath(data.path), datasetFingerprint: data.fingerprint,
                   datasetEvents: data.eventCount, validationEvents: data.validationCount,
                   smoothedLoss: smoothedLoss, schedule: schedule, bestValidationLoss: bestValidationLoss,
                   bestStep: bestStep)
    }
}
