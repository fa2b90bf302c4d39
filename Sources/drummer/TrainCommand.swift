// `drummer train`: parse and check the options, then hand over to Train.TrainingRun.
import ArgumentParser
import Checkpoints
import DrummerCore
import Export
import Foundation
import Sample
import Train
import FileOutput
import ModelFiles
import TrainRun

struct TrainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Train the LSTM drummer on a dataset (truncated BPTT, HDF5 checkpoints, exact resume).",
        discussion: """
            Checkpoints ckpt-<step>.h5 are written every --checkpoint-every steps, at the end, and on \
            Ctrl-C, SIGTERM or SIGHUP (the current step finishes, a checkpoint is saved, the exit status is 0). \
            A second Ctrl-C is noted and the save still happens; a third quits at once without saving \
            (exit status 130; the last checkpoint written is kept). Standard error says whether the \
            final checkpoint was saved. train_log.csv beside them gets one row per evaluation, and \
            one per --log-every step between them (step, epoch, smoothed loss, learning rate, the \
            step's batch loss). \
            Temporary checkpoint files left by a killed run in the checkpoint directory are removed \
            at the start, with a line saying so.

            The recipe: a new run trains the 16th-note grid model the repository ships \
            (models/groove) on the dataset's 4/4 files, with a style input when the data carries one \
            (--styles); --recipe original trains the 2017 project's model on (note, tick) events \
            instead. The options given change the recipe's values.

            --resume CKPT continues a run: the data path and every hyperparameter come from the \
            checkpoint. \(Settings.resumable.joined(separator: ", ")) and --data may be given to change \
            them; \(Settings.fixedOnResume.joined(separator: ", ")) may not change (the checkpoint's \
            value is accepted). A dataset whose \
            contents differ from the checkpoint's is refused.

            Learning-rate schedule: the rate is --lr × F^d, where F is --lr-decay and d counts decays: \
            one every --lr-decay-every N steps, and/or one when the validation loss (the smoothed \
            training loss without a validation set) has not improved for --lr-plateau-patience P \
            evaluations in a row.
            """)

    @Option(help: "Dataset directory: convert-midi output (events.npy, vocab.json, validation/) or the original's X.npy with ix_to_note.p/ix_to_tick.p. Default: data, or the checkpoint's with --resume.")
    var data: String?

    // The training settings: flag, help and default from the settings table (Train/Settings.swift).
    @Option(name: Settings.hidden.argumentName, parsing: .unconditional, help: Settings.hidden.argumentHelp)
    var hidden: Int?

    @Option(name: Settings.layers.argumentName, parsing: .unconditional, help: Settings.layers.argumentHelp)
    var layers: Int?

    @Option(name: Settings.unroll.argumentName, parsing: .unconditional, help: Settings.unroll.argumentHelp)
    var unroll: Int?

    @Option(name: Settings.batchSize.argumentName, parsing: .unconditional, help: Settings.batchSize.argumentHelp)
    var batchSize: Int?

    @Option(name: Settings.optimizer.argumentName, help: Settings.optimizer.argumentHelp)
    var optimizer: OptimizerKind?

    @Option(name: Settings.momentum.argumentName, parsing: .unconditional, help: Settings.momentum.argumentHelp)
    var momentum: Float?

    @Option(name: Settings.decay.argumentName, parsing: .unconditional, help: Settings.decay.argumentHelp)
    var decay: Float?

    @Option(name: Settings.epsilon.argumentName, parsing: .unconditional, help: Settings.epsilon.argumentHelp)
    var epsilon: Float?

    @Option(name: Settings.clip.argumentName, parsing: .unconditional, help: Settings.clip.argumentHelp)
    var clip: Float?

    @Option(name: Settings.weightDecay.argumentName, parsing: .unconditional, help: Settings.weightDecay.argumentHelp)
    var weightDecay: Float?

    @Option(name: Settings.learningRate.argumentName, parsing: .unconditional, help: Settings.learningRate.argumentHelp)
    var lr: Float?

    @Option(name: Settings.lrDecay.argumentName, parsing: .unconditional, help: Settings.lrDecay.argumentHelp)
    var lrDecay: Float?

    @Option(name: Settings.lrDecayEvery.argumentName, parsing: .unconditional, help: Settings.lrDecayEvery.argumentHelp)
    var lrDecayEvery: Int?

    @Option(name: Settings.lrPlateauPatience.argumentName, parsing: .unconditional,
            help: Settings.lrPlateauPatience.argumentHelp)
    var lrPlateauPatience: Int?

    @Option(name: Settings.seed.argumentName, parsing: .unconditional, help: Settings.seed.argumentHelp)
    var seed: UInt64?

    @Option(name: Settings.steps.argumentName, parsing: .unconditional, help: Settings.steps.argumentHelp)
    var steps: Int?

    @Option(name: Settings.checkpointEvery.argumentName, parsing: .unconditional, help: Settings.checkpointEvery.argumentHelp)
    var checkpointEvery: Int?

    @Option(name: Settings.checkpointDirectory.argumentName, help: Settings.checkpointDirectory.argumentHelp)
    var checkpointDir: String?

    @Option(name: Settings.keep.argumentName, parsing: .unconditional, help: Settings.keep.argumentHelp)
    var keep: Int?

    @Option(name: Settings.logEvery.argumentName, parsing: .unconditional, help: Settings.logEvery.argumentHelp)
    var logEvery: Int?

    @Option(name: Settings.evalEvery.argumentName, parsing: .unconditional, help: Settings.evalEvery.argumentHelp)
    var evalEvery: Int?

    @Flag(name: Settings.earlyStop.argumentName, inversion: .prefixedNo, help: Settings.earlyStop.argumentHelp)
    var earlyStop: Bool?

    @Option(name: Settings.earlyStopPatience.argumentName, parsing: .unconditional,
            help: Settings.earlyStopPatience.argumentHelp)
    var earlyStopPatience: Int?

    @Option(name: Settings.dropout.argumentName, parsing: .unconditional, help: Settings.dropout.argumentHelp)
    var dropout: Float?

    @Flag(name: Settings.shuffleFiles.argumentName, help: Settings.shuffleFiles.argumentHelp)
    var shuffleFiles = false

    @Option(help: ArgumentHelp("Settings a new run starts from: grid (the shipped model's: the 16th-note grid, 2 layers of 256, Adam, batch 32, unroll 64, 10000 steps, seed 3) or original (the 2017 project's model and SGD, batch 1, until interrupted); the options given override it (default grid)"))
    var recipe: Recipe?

    @Option(help: "Give a grid model a style input, each file's style read from its path: groove-names (the Groove MIDI Dataset's names, \"1_funk-groove1_138_beat_4-4.mid\": funk), groove-drummers (its drummer folders, \"drummer5/…\": drummer5), groove-drummer-names (both: drummer5-funk), folders (the folder a file lies in) or none. Default: from the data, the first of groove-drummer-names, groove-names (when every training file has one) and folders, when it gives two styles of \(GridStyles.minimumFiles) files or more, else none; the run says which. Styles of fewer than \(GridStyles.minimumFiles) training files are \"other\"; drummer sample draws a style per file, or takes --style.")
    var styles: StyleOption?

    /// --styles: none, or one of GridStyleRule's rules (their names, in their order).
    struct StyleOption: ExpressibleByArgument, Equatable {
        /// nil: none.
        let rule: GridStyleRule?

        init?(argument: String) {
            if argument == "none" {
                rule = nil
            } else if let r = GridStyleRule(rawValue: argument) {
                rule = r
            } else {
                return nil
            }
        }

        static var allValueStrings: [String] { ["none"] + GridStyleRule.allCases.map(\.rawValue) }
        static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
    }

    @Option(help: "Continue the run saved in this checkpoint.")
    var resume: String?

    @Option(name: [.customShort("o"), .customLong("output")],
            help: ArgumentHelp("After training, choose the step and export it to this model directory: each checkpoint of the run's second half plays \(TrainCommand.chooseFiles) files of \(TrainCommand.chooseHits.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))) hits, measured against the training data as `drummer choose-step` measures them (a grid model by the bar-structure and touch targets too), and the one the rule chooses is exported; when none meets it, a grid model's checkpoints are measured again with the fill bars drawn at temperature \(TrainCommand.fillTemperatures.map { "\($0)" }.joined(separator: ", then ")) (recorded in model.json when one of them is chosen), else the closest is exported (a model of the 2017 layout: its last checkpoint).", valueName: "model"))
    var output: String?

    /// Files each checkpoint plays for `-o`'s choice, and hits each (the figures of 100,000 hits).
    static let chooseFiles = 100, chooseHits = 1000

    /// The hit sets' temperatures in the fill bars (bars 4 and 8 of each phrase) of `-o`'s further
    /// measurements, in turn, when no checkpoint meets the rule as the model plays: the fill bump
    /// is the target runs of the recipe miss most often, and a twentieth or a tenth above the
    /// hits' brings a checkpoint's to the corpus's at little cost in how its bars hold, the
    /// smaller the less (docs/research.md, *Freer fills when sampling*, *The choice's
    /// temperatures for a retrain*).
    static let fillTemperatures: [Float] = [1.05, 1.1]

    func validate() throws {
        do {
            try options.validate()
            _ = try TrainingRun.evaluationWarningSetting()
        } catch let e as SettingError { throw ValidationError(e.description) }
        if let output, output.isEmpty || output.hasSuffix(".h5") {
            throw ValidationError("-o must name a model directory, got \"\(output)\"")
        }
        if resume != nil, let r = recipe {
            throw ValidationError("--recipe \(r.rawValue) cannot be combined with --resume: a resumed run takes its settings from the checkpoint")
        }
    }

    var options: RunOptions {
        var o = RunOptions(data: data, resume: resume)
        o.output = output
        o[Settings.hidden] = hidden
        o[Settings.layers] = layers
        o[Settings.unroll] = unroll
        o[Settings.batchSize] = batchSize
        o[Settings.optimizer] = optimizer
        o[Settings.momentum] = momentum
        o[Settings.decay] = decay
        o[Settings.epsilon] = epsilon
        o[Settings.clip] = clip
        o[Settings.weightDecay] = weightDecay
        o[Settings.learningRate] = lr
        o[Settings.lrDecay] = lrDecay
        o[Settings.lrDecayEvery] = lrDecayEvery
        o[Settings.lrPlateauPatience] = lrPlateauPatience
        o[Settings.seed] = seed
        o.steps = steps
        o[Settings.checkpointEvery] = checkpointEvery
        o[Settings.checkpointDirectory] = checkpointDir
        o[Settings.keep] = keep
        o[Settings.logEvery] = logEvery
        o[Settings.evalEvery] = evalEvery
        o[Settings.earlyStop] = earlyStop
        o[Settings.earlyStopPatience] = earlyStopPatience
        o[Settings.dropout] = dropout
        o[Settings.shuffleFiles] = shuffleFiles ? true : nil
        o.recipe = recipe ?? .grid
        o.gridStyles = styles?.rule
        o.noGridStyles = styles != nil && styles?.rule == nil
        return o
    }

    func run() throws {
        let reporter = RunReporter(
            line: { text in Console.write(Data((text + "\n").utf8)) },
            bar: isatty(STDERR_FILENO) != 0 ? { text in
                Console.writeError(Data(("\r\u{1B}[K" + text).utf8))
            } : nil)
        // From here on Ctrl-C, SIGTERM and SIGHUP stop the run cleanly: while the data loads (nothing is
        // written before the directory is claimed), between steps, and inside evaluations.
        StopSignal.install()
        let run = try TrainingRun(options: options, reporter: reporter, shouldStop: { StopSignal.requested })
        if output != nil {
            // The estimate line counts -o's choice: a few hundred 16th steps of the model as it
            // is, timed on one thread as the choice plays its files (one per thread). Steps, not
            // hits: an early model plays several hits a step, a trained one about as many as its
            // data (TrainingRun.printEstimates).
            let groups = run.groups
            run.choice = TrainingRun.ChoiceEstimate(hitsPerCheckpoint: Self.chooseFiles * Self.chooseHits,
                                                    measurements: 1 + Self.fillTemperatures.count, threads: 2) { weights in
                guard let stepTicks = groups.grid?.ticksPerStep,
                      let sampler = try? Sampler(weights: weights, groups: groups, stepThreads: 1) else { return nil }
                struct Walked: Error {}
                var rng = SeededRNG(seed: 1)
                let steps = 400, start = DispatchTime.now().uptimeNanoseconds
                var ticks = 0
                do {
                    try BLASRuntime.onOneThread {
                        try sampler.generate(count: Self.chooseHits * steps, options: SamplingOptions(temperature: 1), rng: &rng) { h in
                            ticks += h.hit.delta
                            if ticks >= steps * stepTicks { throw Walked() }
                        }
                    }
                } catch is Walked {} catch { return nil }
                return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 / Double(max(1, ticks / stepTicks))
            }
        }
        TemporaryFiles.sweepOnce(directory: run.configuration.checkpointDirectory)
        let summary: RunSummary
        do { summary = try run.run() } catch {
            if StopSignal.requested {
                Self.stderr("drummer: interrupted: the final checkpoint was not saved (\(error))")
            }
            throw error
        }
        if summary.ending == .interrupted {
            Self.stderr("drummer: interrupted at step \(summary.step): "
                + (summary.lastCheckpoint.map { "checkpoint saved to \($0)" } ?? "no checkpoint was saved")
                + (output.map { o in "; nothing exported to \(o)"
                    + (summary.lastCheckpoint.map { " (drummer train --resume \(ShellWords.quoted($0)) -o \(ShellWords.quoted(o)) carries on and exports)" } ?? "") } ?? ""))
            // A stop is a success when it saved the run to carry on from; before the first step
            // (nothing saved) a script must not read one.
            if summary.lastCheckpoint == nil { throw ExitCode(128 + max(StopSignal.signalNumber, 2)) }
        } else if let output {
            // Choosing samples and measures the checkpoints of the run's second half (minutes): a
            // stop from here on ends the command at once, exporting nothing (the export's temporary
            // removed), where it used to be noticed only after the export had replaced the model.
            let last = summary.lastCheckpoint ?? run.configuration.checkpointDirectory
            let finish = "drummer train --resume \(ShellWords.quoted(last)) -o \(ShellWords.quoted(output)) chooses the step and exports"
            InterruptCleanup.install(note: "nothing exported to \(output); " + finish, noteOutput: output)
            if StopSignal.requested {
                let sig = StopSignal.signalNumber
                Self.stderr("drummer: \(StopSignals.name(sig)): nothing exported to \(output); " + finish)
                throw ExitCode(128 + sig)
            }
            try Self.chooseAndExport(run, summary: summary, to: output)
        }
    }

    /// `-o`: the step the rule chooses among the checkpoints of the run's second half (the 2017
    /// layout: the last checkpoint), exported to `output`.
    static func chooseAndExport(_ run: TrainingRun, summary: RunSummary, to output: String) throws {
        let directory = run.configuration.checkpointDirectory
        let checkpoint: String
        // A further measurement's choice: the temperatures its files were drawn at, for model.json.
        var sampling = SamplingDefaults(), recorded: String?
        if run.groups.grid == nil {
            guard let last = summary.lastCheckpoint ?? CheckpointDirectory(path: directory).list().last?.path else {
                throw CommandFailure("\(directory): no checkpoint to export")
            }
            print("choose-step: a model of the 2017 layout has no groove figures to choose by: its last checkpoint, \(last)")
            checkpoint = last
        } else {
            var chooser = StepChooser(checkpointDir: directory, reference: run.data.path, quantize: nil,
                                      fromStep: summary.step / 2, toStep: summary.step, count: chooseFiles, notes: chooseHits,
                                      seed: 30_001, structure: true, closest: true)
            chooser.nothingExported = true
            let rows = try chooser.measure()
            if let b = chooser.ruleChoice(rows) {
                checkpoint = rows[b].path
            } else {
                var found: String?
                for t in fillTemperatures where found == nil {
                    let fills = "\(TemperatureSetting.fills)=\(t)"
                    print("no checkpoint meets the rule " + (t == fillTemperatures[0] ? "as the model plays" : "there")
                          + "; measuring again with the fill bars drawn at temperature \(t) (\(fills))")
                    chooser.temperature = fills
                    let again = try chooser.measure()
                    if let b = chooser.ruleChoice(again) {
                        found = again[b].path
                        sampling = chooser.sampling
                        recorded = fills
                    }
                }
                if let found {
                    checkpoint = found
                } else {
                    print("none meets it there either; the closest as the model plays:")
                    checkpoint = rows[try chooser.decide(rows)].path
                }
            }
        }
        let s = try Exporter.export(checkpoint: checkpoint, sampling: sampling, to: output)
        print("exported \(checkpoint) (\(s.stepDescription)) to \(s.directory)"
              + (recorded.map { ", sampling temperature \($0) recorded in model.json" } ?? "")
              + ": drummer sample \(ShellWords.quoted(s.directory)) -o beat.mid plays it")
    }

    private static func stderr(_ line: String) {
        Console.writeError(Data((line + "\n").utf8))
    }
}

extension OptimizerKind: ExpressibleByArgument {}

extension Setting {
    /// The setting's long flag, as argument-parser names it.
    var argumentName: NameSpecification { .customLong(flagName) }
    /// The setting's help: what it does and its default (under the default recipe), from the table.
    var argumentHelp: ArgumentHelp { ArgumentHelp(helpText(recipe: .grid)) }
}
extension InitScheme: ExpressibleByArgument {}
extension Recipe: ExpressibleByArgument {}
