// The training run: sets up a new or resumed run, then loops
//   step → log every --log-every → evaluate every --eval-every → checkpoint every
//   --checkpoint-every (and when validation improves) → stop on --steps or a signal,
// writing a final evaluation and checkpoint. A NaN/Inf loss or weights stop the
// run with an error and write nothing, so the last checkpoint on disk is good.
import Checkpoints
import DrummerCore
import FileOutput
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
    public enum Ending: Sendable, Equatable { case reachedSteps, interrupted, nothingToDo, earlyStopped }
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
    /// What an evaluation reads: the training figure's rows and the validation split's (a grid
    /// model's as files, each from its own zero state).
    let evaluationSets: (train: EvaluationSet, validation: EvaluationSet?)
    let trainer: Trainer
    let rngState: [UInt64]
    var smoothedLoss: Double
    var schedule: ScheduleProgress
    var bestValidationLoss: Double
    var bestStep: Int
    var lastCheckpoint: String?
    var savedStep: Int?
    var evaluatedStep: Int?
    /// The evaluation of the current step, cut short by a stop request: saved with its
    /// checkpoint, done first by the run resumed from it.
    var pendingEvaluation: PendingEvaluation?
    /// The fingerprint of the data the run trains on, as every checkpoint records it (the data
    /// and the groups do not change during a run).
    let datasetFingerprint: String
    /// The warnings said once per run, and what they watch.
    var warnedSplit = false, warnedRising = false
    var previousValidationLoss: Double?
    var risingEvaluations = 0
    let reporter: RunReporter
    let checkpoints: CheckpointDirectory
    /// This run's id (the same across resumes; see CheckpointDirectory).
    public let runID: String
    /// The checkpoint directory's lock, held while this run exists.
    let lock: RunLock
    /// What choosing the step after the run will play (`train -o`), for the estimate line; nil
    /// when the run only trains.
    public var choice: ChoiceEstimate?

    /// `train -o`'s choice of the step, as the estimate counts it: each checkpoint of the run's
    /// second half (as many as --keep keeps) plays `hitsPerCheckpoint` hits, at most
    /// `measurements` times (again at other temperatures when none meets the rule), on
    /// `threads` threads; `secondsPerStep` times a few 16th steps of the model as it is (a
    /// trained model plays as many hits a step as its data).
    public struct ChoiceEstimate {
        public var hitsPerCheckpoint: Int
        public var measurements: Int
        public var threads: Int
        public var secondsPerStep: (LSTMWeights) -> Double?

        public init(hitsPerCheckpoint: Int, measurements: Int, threads: Int, secondsPerStep: @escaping (LSTMWeights) -> Double?) {
            self.hitsPerCheckpoint = hitsPerCheckpoint
            self.measurements = measurements
            self.threads = threads
            self.secondsPerStep = secondsPerStep
        }
    }

    /// The trainer's whole state, copied out (see `Trainer.snapshot`).
    public func snapshot() -> TrainingState { trainer.snapshot() }

    /// Where the run is (free to read).
    public var progress: TrainingProgress { trainer.progress }

    /// Stream groups the batch is trained as (see `Trainer.streamGroupCount`).
    public var streamGroupCount: Int { trainer.streamGroupCount }

    /// Where a run starts: everything `init` sets up before claiming the checkpoint directory.
    private struct Start {
        var configuration: RunConfiguration
        var data: TrainingData
        var groups: ModelGroups
        var classes: Classes
        var rngState: [UInt64]
        var smoothedLoss: Double
        var schedule = ScheduleProgress()
        var bestValidationLoss = Double.infinity
        var bestStep = -1
        var trainer: Trainer
        var lastCheckpoint: String?
        var runID: String
        var pendingEvaluation: PendingEvaluation?
        /// The data's fingerprint when a resume has computed it already.
        var datasetFingerprint: String?
    }

    /// Loads the data, and the checkpoint or initial weights, as `options` say; then claims the
    /// checkpoint directory.
    /// `shouldStop` is asked once the data and weights are loaded: a stop request then ends
    /// the run before it claims the directory (`RunError.interruptedBeforeTraining`).
    public init(options: RunOptions, reporter: RunReporter, shouldStop: () -> Bool = { false }) throws {
        self.reporter = reporter
        let start = try options.resume.map { try Self.resumed(from: $0, options: options, reporter: reporter) }
            ?? Self.fresh(options: options, reporter: reporter)
        if shouldStop() { throw RunError.interruptedBeforeTraining }
        configuration = start.configuration
        data = start.data
        groups = start.groups
        (trainingClasses, validationClasses) = (start.classes.training, start.classes.validation)
        evaluationSets = Self.evaluationSets(start.classes, inputs: start.groups.inputNames.count)
        rngState = start.rngState
        smoothedLoss = start.smoothedLoss
        schedule = start.schedule
        bestValidationLoss = start.bestValidationLoss
        bestStep = start.bestStep
        trainer = start.trainer
        lastCheckpoint = start.lastCheckpoint
        pendingEvaluation = start.pendingEvaluation
        datasetFingerprint = start.datasetFingerprint ?? start.data.fingerprint(for: start.groups)
        savedStep = options.resume == nil ? nil : trainer.progress.step
        runID = start.runID
        Self.announceRegularization(start.configuration, reporter: reporter)
        // The checkpoints and the export go beside the data, never into it.
        let dataInput = CommandInput(data.path, role: "the dataset")
        try InputOverlap.check(output: configuration.checkpointDirectory, inputs: [dataInput])
        if let output = options.output {
            try InputOverlap.check(output: output, directory: true,
                                   inputs: [dataInput, .checkpointDirectory(configuration.checkpointDirectory)])
            // A checkpoint directory the run is yet to make has no inode to compare: by its path,
            // -o must be neither it nor a folder holding it (the export would fail at the end of
            // the run, or replace the checkpoints).
            let place = PathNames.containment(of: configuration.checkpointDirectory, in: output)
            if place != .outside {
                throw OutputError(path: output, message: "\(place == .same ? "is" : "holds") the checkpoint directory "
                                  + "\(configuration.checkpointDirectory) the run writes; export elsewhere")
            }
            // And what the export will refuse (a file, a foreign folder, a folder it cannot
            // write in): a run of minutes or hours is not spent on an output it cannot write.
            try AtomicOutput.prepareDirectory(at: output, kind: .model).discard()
        }
        checkpoints = CheckpointDirectory(path: configuration.checkpointDirectory)
        // Before any training: the directory exists, is writable, is locked, and is this run's.
        lock = try checkpoints.claim(runID: runID, resumingFrom: options.resume, resumeFlags: options.output.map { " -o " + ShellWords.quoted($0) } ?? "")
        if let takeover = lock.takeover { reporter.line("note: \(takeover)") }
        if let replaced = lock.replacedRun { reporter.line("note: \(replaced)") }
        // A resume with steps to train branches from its step; one with none changes nothing.
        if options.resume != nil, configuration.steps.map({ trainer.progress.step < $0 }) ?? true { try dropLaterHistory() }
    }

    /// A run continued from the checkpoint at `path`: its settings with the options that may
    /// change, its data (or --data's, checked against it), its state.
    private static func resumed(from path: String, options: RunOptions, reporter: RunReporter) throws -> Start {
        let ckpt = try Checkpoint.read(path: path)
        if let retired = ckpt.retiredSettingsInUse.first {
            throw RunError.retiredSetting(checkpoint: path, setting: retired)
        }
        let config = try options.resumedConfiguration(from: ckpt, path: path)
        try config.validate()
        try options.checkGroupsUnchanged(ckpt.groups, path: path)
        let dataPath = options.data ?? ckpt.datasetPath
        let data = try TrainingData.load(path: dataPath)
        try Trainer.checkWorkspace(shape: ckpt.state.shape, unroll: config.unroll, batch: config.batchSize, addressSpace: false)
        if let diff = vocabularyDifference(ckpt.vocabulary, data.vocabulary, aName: "the checkpoint", bName: "the dataset") {
            throw RunError.vocabularyMismatch(source: path, difference: diff)
        }
        let fingerprint = data.fingerprint(for: ckpt.groups)
        let state = ckpt.state
        if fingerprint != ckpt.datasetFingerprint {
            // The same data but for its styles (a file's path now gives it another), or a
            // checkpoint written before the fingerprint held the styles.
            if let styles = ckpt.groups.grid?.styles, data.fingerprint(for: ckpt.groups, styles: false) == ckpt.datasetFingerprint {
                let found = try GridStyles(rule: styles.rule, files: data.gridFiles(validation: false).files.map { ($0.path, $0.steps) })
                if found != styles {
                    throw RunError.stylesChanged(dataset: dataPath, checkpoint: path, difference: Self.styleDifference(styles, found))
                }
                // Written before: the styles' steps agree, the most that checkpoint can tell.
            } else {
                throw RunError.datasetChanged(dataset: dataPath, expected: ckpt.datasetFingerprint,
                                              found: fingerprint, checkpoint: path)
            }
        }
        let classes = try Self.classes(of: data, for: ckpt.groups, config: config, reporter: reporter)
        let trainer = try Self.makeTrainer(state: state, classes: classes, data: data, config: config,
                                           groups: ckpt.groups)
        reporter.line("resumed \(path) at step \(state.step), epoch \(state.epoch)")
        return Start(configuration: config, data: data, groups: ckpt.groups, classes: classes, rngState: ckpt.rngState,
                     smoothedLoss: ckpt.smoothedLoss, schedule: ckpt.schedule,
                     bestValidationLoss: ckpt.bestValidationLoss, bestStep: ckpt.bestStep, trainer: trainer,
                     lastCheckpoint: path,
                     // A version 1 checkpoint had no run id: the run that continues it gets one.
                     runID: ckpt.runID.isEmpty ? Checkpoint.newRunID() : ckpt.runID,
                     pendingEvaluation: ckpt.pendingEvaluation,
                     // A checkpoint written before the fingerprint held the styles is written anew with them.
                     datasetFingerprint: fingerprint)
    }

    /// What differs between the styles a checkpoint trained with and those its rule gives the
    /// data now: the first style whose training steps differ, or that only one of them has.
    static func styleDifference(_ trained: GridStyles, _ found: GridStyles) -> String {
        let steps = Dictionary(zip(found.names, found.steps), uniquingKeysWith: { a, _ in a })
        for (name, n) in zip(trained.names, trained.steps) where steps[name] != n {
            return "style \"\(name)\" had \(n) training steps, the data's files now give it \(steps[name] ?? 0)"
        }
        if let extra = found.names.first(where: { !trained.names.contains($0) }) {
            return "style \"\(extra)\" is new"
        }
        return "the files' styles moved"
    }

    /// A new run: the defaults with the options given, the dataset's groups
    /// and initial weights.
    private static func fresh(options given: RunOptions, reporter: RunReporter) throws -> Start {
        var options = given
        var config = options.newConfiguration()
        try config.validate()
        let data = try TrainingData.load(path: options.data ?? RunOptions.defaultData)
        // A grid run given no --styles takes a style input from the data when it carries one.
        if options.layoutGrid, options.gridStyles == nil, !options.noGridStyles {
            if let found = try data.dataStyles() {
                options.gridStyles = found.rule
                reporter.line("styles: from the data (\(Self.describe(found.rule))): "
                              + "\(found.styles.count - 1) styles of \(GridStyles.minimumFiles) training files or more, the rest \"other\" (--styles \(found.rule.rawValue); --styles none leaves it out)")
            } else {
                reporter.line("styles: none (the data's names and folders give fewer than two styles of \(GridStyles.minimumFiles) training files or more; --styles chooses a rule)")
            }
        }
        var rng = SeededRNG(seed: config.seed)
        let (groups, weights) = try initialModel(config: config, options: options, data: data, rng: &rng)
        config.hidden = weights.shape.hidden
        config.layers = weights.shape.layers
        let classes = try Self.classes(of: data, for: groups, config: config, reporter: reporter)
        try Self.fitToData(&config, rows: classes.training.count / max(1, groups.inputNames.count), options: options,
                           dataset: data.path, unit: groups.grid != nil ? "rows (16th steps and a start row per file)" : "events",
                           reporter: reporter)
        try Trainer.checkWorkspace(shape: weights.shape, unroll: config.unroll, batch: config.batchSize, addressSpace: false)
        let state = TrainingState(weights: weights, unroll: config.unroll, batch: config.batchSize, optimizer: config.optimizer)
        let trainer = try Self.makeTrainer(state: state, classes: classes, data: data, config: config, groups: groups)
        reporter.line("groups: inputs " + zip(groups.inputNames, weights.shape.inputGroups).map { "\($0) \($1)" }.joined(separator: ", ")
                      + "; outputs " + zip(groups.outputNames, weights.shape.outputGroups).map { "\($0) \($1)" }.joined(separator: ", ")
                      + (weights.shape.layers > 1 ? "; \(weights.shape.layers) layers of \(weights.shape.hidden)" : ""))
        // The original's starting value: the loss of a uniform guess over every output group (a
        // grid run replaces it with its first step's loss: TrainingRun.advance).
        return Start(configuration: config, data: data, groups: groups, classes: classes, rngState: rng.stateWords,
                     smoothedLoss: weights.shape.outputGroups.reduce(0) { $0 + log(Double($1)) }, trainer: trainer,
                     lastCheckpoint: nil, runID: Checkpoint.newRunID())
    }

    /// The groups and starting weights of a new run: the grid's from the dataset, or the 2017
    /// layout's (note, tick), initialised with `config.initScheme`.
    private static func initialModel(config: RunConfiguration, options: RunOptions, data: TrainingData,
                                     rng: inout SeededRNG) throws -> (ModelGroups, LSTMWeights) {
        let groups = try options.layoutGrid
            ? ModelGroups(vocabulary: data.vocabulary, grid: data.gridGroup(lookback: .velocities, lookbackBars: Recipe.gridLookbackBars,
                                                                             styles: options.gridStyles))
            : ModelGroups(vocabulary: data.vocabulary)
        let shape = groups.shape(hidden: config.hidden, layers: config.layers)
        try Trainer.checkWorkspace(shape: shape, unroll: config.unroll, batch: config.batchSize, addressSpace: false)
        return (groups, try Initializer.weights(shape: shape, scheme: config.initScheme, rng: &rng))
    }

    /// A dataset too small for the batch and unroll: each of the B streams needs U + 1 rows
    /// (rows / B ≥ U + 1). When neither was given (the recipe's), the largest batch that fits at
    /// the recipe's unroll, or one stream of the longest unroll that fits, said in one line;
    /// when either was given, a refusal that names flags that fit.
    static func fitToData(_ config: inout RunConfiguration, rows: Int, options: RunOptions, dataset: String, unit: String,
                          reporter: RunReporter) throws {
        let B = config.batchSize, U = config.unroll
        guard rows / B < U + 1 else {
            fitToSegments(&config, rows: rows, options: options, unit: unit, reporter: reporter)
            warnOfPasses(config, rows: rows, unit: unit, reporter: reporter)
            return
        }
        guard rows >= 2 else {
            throw RunError.tooLittleData(dataset: dataset, message: "the training split holds \(rows) \(unit): at least 2 are needed (add files)")
        }
        let fitB = rows / (U + 1)
        let (most, u) = fitB >= 1 ? (fitB, U) : (1, rows - 1)
        // Of the batches that fit, the largest that reads all but a tenth of the rows (fitToSegments).
        let b = readingBatch(rows: rows, atMost: most, unroll: u) ?? most
        let needed = B * (U + 1)
        if options.batchSize != nil || options.unroll != nil {
            throw RunError.tooLittleData(dataset: dataset, message: "its \(rows) training \(unit) are too few for --batch-size \(B) --unroll \(U) "
                                         + "(\(B) stream\(B == 1 ? "" : "s") of \(U + 1) need \(needed)): --batch-size \(b) --unroll \(u) fit")
        }
        config.batchSize = b
        config.unroll = u
        let read = b < most ? ", which read\(b == 1 ? "s" : "") all but \(unreadPercent(rows: rows, batch: b, unroll: u)) of them "
            + "(\(most) would leave \(unreadPercent(rows: rows, batch: most, unroll: u)) unread)" : ""
        reporter.line("data: \(rows) training \(unit) are too few for the recipe's \(B) streams of \(U + 1); "
                      + "training \(b) stream\(b == 1 ? "" : "s") of \(u) steps (--batch-size \(b) --unroll \(u))\(read); more files train better")
        warnOfPasses(config, rows: rows, unit: unit, reporter: reporter)
    }

    /// The share of `rows` the trainer reads with `batch` streams and chunks of `unroll`: each
    /// stream reads its segment (rows / batch) chunk by chunk from its start, and starts it again
    /// when the next chunk (unroll + 1 rows) would reach the segment's end (Trainer.step), so a
    /// segment a little longer than a chunk leaves most of a chunk unread at its end.
    static func readShare(rows: Int, batch: Int, unroll: Int) -> Double {
        let segment = rows / batch
        guard segment >= unroll + 1, rows > 0 else { return 0 }
        var last = 0
        while last + unroll + (unroll + 1) < segment { last += unroll }
        return Double(batch * (last + unroll + 1)) / Double(rows)
    }

    /// Most of the training rows a run may leave unread before the recipe's batch is made smaller.
    static let maximumUnreadShare = 0.1

    /// The largest batch of at most `most` streams that leaves at most `maximumUnreadShare` of
    /// `rows` unread; nil when none does.
    static func readingBatch(rows: Int, atMost most: Int, unroll: Int) -> Int? {
        (1...max(1, most)).reversed().first { 1 - readShare(rows: rows, batch: $0, unroll: unroll) <= maximumUnreadShare }
    }

    /// The share of `rows` that `batch` streams leave unread, as a whole percent ("35%").
    static func unreadPercent(rows: Int, batch: Int, unroll: Int) -> String {
        "\(Int((100 * (1 - readShare(rows: rows, batch: batch, unroll: unroll))).rounded()))%"
    }

    /// A small dataset whose segments leave a large share of the rows unread (a third, for 32
    /// streams of 100 rows): the recipe's batch made smaller until at most a tenth is, said in one
    /// line; a batch or unroll given is kept, with a warning that names one that reads more.
    static func fitToSegments(_ config: inout RunConfiguration, rows: Int, options: RunOptions, unit: String, reporter: RunReporter) {
        let B = config.batchSize, U = config.unroll
        // (B itself leaves more unread, so the batch found is smaller.)
        guard 1 - readShare(rows: rows, batch: B, unroll: U) > maximumUnreadShare,
              let b = readingBatch(rows: rows, atMost: B, unroll: U) else { return }
        let unread = unreadPercent(rows: rows, batch: B, unroll: U), reads = unreadPercent(rows: rows, batch: b, unroll: U)
        let why = "each of the \(B) streams reads its \(rows / B) rows in chunks of \(U + 1), from the start again when the next would not fit"
        if options.batchSize == nil, options.unroll == nil {
            config.batchSize = b
            reporter.line("data: the recipe's \(B) streams would leave \(unread) of the \(rows) training \(unit) unread (\(why)); "
                          + "training \(b) stream\(b == 1 ? "" : "s") (--batch-size \(b)), which read\(b == 1 ? "s" : "") all but \(reads); "
                          + "more files train better")
        } else {
            reporter.line("warning: --batch-size \(B) --unroll \(U) leave \(unread) of the \(rows) training \(unit) unread (\(why)); "
                          + "--batch-size \(b) reads all but \(reads)")
        }
    }

    /// Passes over the training data a run may make before it is warned of (about three times
    /// the recipe's on the Groove corpus, 69).
    static let manyPasses = 200.0

    /// A run whose steps read its training data many times over (a small folder with the
    /// recipe's 10,000 steps): the model learns so few files by heart; said once, with the cures.
    static func warnOfPasses(_ config: RunConfiguration, rows: Int, unit: String, reporter: RunReporter) {
        guard let steps = config.steps, rows > 0 else { return }
        let passes = Double(steps) * Double(config.batchSize * config.unroll) / Double(rows)
        guard passes > manyPasses else { return }
        reporter.line("warning: \(steps) steps read the \(rows) training \(unit) about \(Int(passes.rounded())) times over "
                      + "(the recipe reads the Groove corpus 69 times): a model learns so little data by heart; more files train better, "
                      + "or fewer --steps")
    }

    /// Where a style rule reads a file's style, for the line that says which one a run took.
    static func describe(_ rule: GridStyleRule) -> String {
        switch rule {
        case .grooveDrummerNames: return "the Groove MIDI Dataset's drummers and styles"
        case .grooveNames: return "the Groove MIDI Dataset's style names"
        case .grooveDrummers: return "the Groove MIDI Dataset's drummers"
        case .folders: return "the folders the files lie in"
        }
    }

    /// Says which dropout and weight decay the run trains with, if any.
    private static func announceRegularization(_ config: RunConfiguration, reporter: RunReporter) {
        let between = config[Settings.dropout], decay = config[Settings.weightDecay]
        var parts: [String] = []
        if between > 0 { parts.append("dropout \(between) between the layers") }
        if decay > 0 { parts.append("weight decay \(decay) (decoupled)") }
        if !parts.isEmpty { reporter.line("regularization: " + parts.joined(separator: ", ") + " (training only)") }
    }

    /// A resumed run branches from its step: the checkpoints past it, of a run that went further,
    /// are removed (a run that stopped short of them left them beside its own, with no log rows,
    /// for choose-step, report and a later resume to read as this run's), and train_log.csv's
    /// rows after it are dropped.
    private func dropLaterHistory() throws {
        let step = trainer.progress.step
        let later = checkpoints.list().filter { $0.step > step }
        if !later.isEmpty {
            for c in later { try FileManager.default.removeItem(atPath: c.path) }
            reporter.line("note: removed \(later.count) checkpoint(s) past step \(step) from \(checkpoints.path) "
                          + "(\(later.map { ($0.path as NSString).lastPathComponent }.joined(separator: ", "))), of a run that went further: "
                          + "this run goes on from step \(step)")
        }
        let dropped = try TrainLog.truncate(after: step, directory: configuration.checkpointDirectory)
        if dropped > 0 {
            reporter.line("note: dropped \(dropped) row(s) after step \(step) from \(TrainLog.fileName)")
        }
    }

    static func makeTrainer(state: TrainingState, classes: Classes, data: TrainingData, config: RunConfiguration,
                            groups: ModelGroups) throws -> Trainer {
        let trainer: Trainer
        do {
            trainer = try Trainer(state: state, events: classes.training,
                                  optimizer: config.optimizerConfig(learningRate: config.learningRate))
        } catch {
            throw RunError.trainerRejected("\(data.path): \(error)")
        }
        trainer.dropout = Dropout(probability: config[Settings.dropout], seed: config.seed)
        // On one core the helper thread would only take turns with the calling one (same bits
        // either way).
        trainer.usesHelperThread = CPUCount.available >= 2
        return trainer
    }

    /// The training and validation class matrices, and a grid model's rows per file of each
    /// (nil for the 2017 layout, whose split is one sequence).
    typealias Classes = (training: [Int32], validation: [Int32]?, trainingFiles: [Int]?, validationFiles: [Int]?)

    /// The class matrices of the training and validation splits for `groups` (a grid model's
    /// training files in `config`'s order), saying how many positions or velocities fell outside
    /// what the groups know.
    /// A validation split with nothing the model reads is none (see `emptyValidationNote`).
    static func classes(of data: TrainingData, for groups: ModelGroups, config: RunConfiguration, reporter: RunReporter) throws
        -> Classes
    {
        let classes = try splitClasses(of: data, for: groups, config: config, reporter: reporter)
        guard let validation = classes.validation, validation.isEmpty else { return classes }
        reporter.line(Self.emptyValidationNote)
        return (classes.training, nil, classes.trainingFiles, nil)
    }

    private static func splitClasses(of data: TrainingData, for groups: ModelGroups, config: RunConfiguration,
                                     reporter: RunReporter) throws -> Classes {
        if let grid = groups.grid {
            var out: [[Int32]] = [], rows: [[Int]] = []
            for (name, validation) in [("training", false), ("validation", true)] where !validation || data.validationSplit != nil {
                let shuffle = !validation && config[Settings.shuffleFiles]
                let (classes, files, fileRows) = try data.gridClasses(validation: validation, group: grid,
                                                                      shuffleSeed: shuffle ? config.seed : nil)
                rows.append(fileRows)
                var line = "grid \(name): \(files.files.count) file\(files.files.count == 1 ? "" : "s") in 4/4" + (shuffle ? " (shuffled with seed \(config.seed))" : "")
                    + ", \(files.steps) 16th steps, \(files.hits) hits"
                if files.merged > 0 { line += "; \(files.merged) hits shared a 16th with one of their class (a double hit)" }
                if files.unmapped > 0 { line += "; \(files.unmapped) hits of notes outside the 9 drum classes left out" }
                if !files.skipped.isEmpty { line += "; \(files.skipped.count) file\(files.skipped.count == 1 ? "" : "s") left out (first: \(files.skipped[0].path): \(files.skipped[0].reason))" }
                reporter.line(line)
                if !validation, let styles = grid.styles {
                    let total = Double(styles.steps.reduce(0, +))
                    reporter.line("grid styles (\(styles.rule.rawValue), share of training steps): "
                        + zip(styles.names, styles.steps).map { "\($0) \(Int((Double($1) / total * 100).rounded()))%" }.joined(separator: ", "))
                }
                out.append(classes)
            }
            return (out[0], out.count > 1 ? out[1] : nil, rows[0], rows.count > 1 ? rows[1] : nil)
        }
        let t = try data.classes(data.training, for: groups)
        let v = try data.validationSplit.map { try data.classes($0, for: groups) }
        return (t.classes, v?.classes, nil, nil)
    }

    /// A validation split with nothing the model reads has no loss: the run goes on as without
    /// one (a loss of 0 drove the learning-rate plateau, --early-stop and the best checkpoint).
    static let emptyValidationNote = "note: the validation split holds nothing the model reads: the run goes on as without one "
        + "(the learning-rate plateau watches the smoothed training loss; --early-stop has nothing to watch)"

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
        var c = Checkpoint(configuration: configuration, state: trainer.snapshot(), groups: groups,
                           rngState: rngState, datasetPath: absolutePath(data.path), datasetFingerprint: datasetFingerprint,
                           datasetEvents: data.eventCount, validationEvents: data.validationCount,
                           smoothedLoss: smoothedLoss, schedule: schedule, bestValidationLoss: bestValidationLoss,
                           bestStep: bestStep, runID: runID)
        c.pendingEvaluation = pendingEvaluation
        return c
    }
}

/// Rows an evaluation reads: a class matrix, and for a grid model the rows of each file (each
/// evaluated from its own zero state, many side by side: Evaluator.evaluateFiles); without
/// files, one sequence from a zero state (the 2017 layout's split, as the original read it).
struct EvaluationSet {
    let events: [Int32]
    let fileRows: [Int]?
    /// How the rows were chosen, for the eval line ("" for a whole split).
    let description: String

    /// The set's loss and accuracies; nil when `shouldStop` asked to stop.
    func evaluate(_ weights: LSTMWeights, shouldStop: @escaping () -> Bool) -> Metrics? {
        if let fileRows {
            return Evaluator.evaluateFiles(weights: weights, events: events, fileRows: fileRows, shouldStop: shouldStop).map(Metrics.init)
        }
        return Metrics.evaluate(weights: weights, events: events, maxEvents: nil, shouldStop: shouldStop)
    }

    /// Rows in the set.
    func rows(inputs k: Int) -> Int { events.count / max(1, k) }

    /// `train`'s and `validation`'s figures; files of both in one call (their longest files then
    /// run at the same time, and the batches are fuller); nil when `shouldStop` asked to stop.
    static func evaluate(_ train: EvaluationSet, _ validation: EvaluationSet?, _ weights: LSTMWeights,
                         shouldStop: @escaping () -> Bool) -> (Metrics?, Metrics?) {
        if let a = train.fileRows, let v = validation, let b = v.fileRows {
            guard let each = Evaluator.evaluateEachFile(weights: weights, events: train.events + v.events, fileRows: a + b,
                                                        shouldStop: shouldStop) else { return (nil, nil) }
            return (Metrics(Evaluator.sum(each[..<a.count], of: weights.shape)),
                    Metrics(Evaluator.sum(each[a.count...], of: weights.shape)))
        }
        guard let t = train.evaluate(weights, shouldStop: shouldStop) else { return (nil, nil) }
        return (t, validation.flatMap { $0.evaluate(weights, shouldStop: shouldStop) })
    }
}

extension TrainingRun {
    /// Rows the training figure of a grid run reads at most: about a validation split's worth
    /// (the Groove corpus's is 47,795), the training files spread evenly over the split.
    static let trainingSampleRows = 50_000

    /// The sets an evaluation reads. A grid run: the validation split's files, each from a zero
    /// state; the training figure from every n-th training file (n = the split's rows over
    /// `trainingSampleRows`, rounded up), so that it costs about a validation split and still
    /// spans the corpus. The 2017 layout: both splits whole, as one sequence each.
    static func evaluationSets(_ classes: Classes, inputs k: Int) -> (train: EvaluationSet, validation: EvaluationSet?) {
        guard let trainingFiles = classes.trainingFiles else {
            return (EvaluationSet(events: classes.training, fileRows: nil, description: ""),
                    classes.validation.map { EvaluationSet(events: $0, fileRows: nil, description: "") })
        }
        let total = trainingFiles.reduce(0, +)
        let every = max(1, (total + trainingSampleRows - 1) / trainingSampleRows)
        var events: [Int32] = [], rows: [Int] = []
        var start = 0
        for (f, n) in trainingFiles.enumerated() {
            defer { start += n }
            guard f % every == 0 else { continue }
            events += classes.training[(start * k)..<((start + n) * k)]
            rows.append(n)
        }
        let sample = every == 1 ? "every file" : "every \(ordinal(every)) file"
        let train = EvaluationSet(events: events, fileRows: rows,
                                  description: " (\(sample): \(rows.count) of \(trainingFiles.count) files, \(rows.reduce(0, +)) steps)")
        let validation = classes.validation.map { EvaluationSet(events: $0, fileRows: classes.validationFiles, description: "") }
        return (train, validation)
    }

    /// "2nd", "3rd", "7th", "11th", "21st".
    static func ordinal(_ n: Int) -> String {
        let suffix = (n % 100 / 10 == 1) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th"
        return "\(n)\(suffix)"
    }
}
