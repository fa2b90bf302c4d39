// `drummer train`: parse and check the options, then hand over to Train.TrainingRun.
import ArgumentParser
import Checkpoints
import DrummerCore
import Foundation
import Train
import FileOutput
import TrainRun

struct TrainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Train the LSTM drummer on a dataset (truncated BPTT, HDF5 checkpoints, exact resume).",
        discussion: """
            Checkpoints ckpt-<step>.h5 are written every --checkpoint-every steps, at the end, and on \
            Ctrl-C or SIGTERM (the current step finishes, a checkpoint is saved, the exit status is 0). \
            A second Ctrl-C is noted and the save still happens; a third quits at once without saving \
            (exit status 130; the last checkpoint written is kept). Standard error says whether the \
            final checkpoint was saved. train_log.csv beside them gets one row per evaluation. \
            Temporary checkpoint files left by a killed run in the checkpoint directory are removed \
            at the start, with a line saying so.

            --resume CKPT continues a run: the data path and every hyperparameter come from the \
            checkpoint. --lr, --momentum, --decay, --epsilon, --clip, the --lr-decay options, --steps, \
            the --input-noise options, the checkpoint and logging options and --data may be given to change them; --hidden, \
            --unroll, --batch-size, --optimizer, --init, --init-from and --seed may not. A dataset whose \
            contents differ from the checkpoint's is refused unless --allow-data-change. The model's \
            groups are the checkpoint's too: --position, --lookback, --velocity, --layout and their \
            options may not change.

            Groups: a new run trains on what the dataset carries: note and tick (the original 2017 \
            model), plus the position of each hit in its bar when the dataset has positions.npy, plus \
            velocity (in and out) when it has velocities.npy; --no-position, --no-velocity or \
            --layout original leave them out. --lookback adds the hit that came next one bar ago, at \
            the same place in the bar (it needs the position group). --init-from MODEL trains the \
            groups that model has.

            --input-noise P: while training, each input class of the --input-noise-groups (default \
            note and velocity, those the model has) is replaced, with probability P, \
            by a class drawn uniformly from its group; the targets, the validation loss, eval and \
            sample never see noise. The model learns not to lose the groove after one of its own \
            slips (models/groove is trained with --input-noise 0.15). The draws depend only on the \
            seed, the step and the hit, so a resumed run repeats them exactly.

            Learning-rate schedule: the rate is --lr × F^d, where F is --lr-decay and d counts decays: \
            one every --lr-decay-every N steps, and/or one when the validation loss (the smoothed \
            training loss without a validation set) has not improved for --lr-plateau-patience P \
            evaluations in a row.
            """)

    @Option(help: "Dataset directory: convert-midi output (events.npy, vocab.json, validation/) or the original's X.npy with ix_to_note.p/ix_to_tick.p. Default: data, or the checkpoint's with --resume.")
    var data: String?

    @Option(parsing: .unconditional, help: "Hidden size H (default \(RunConfiguration.defaultHidden)).")
    var hidden: Int?

    @Option(parsing: .unconditional, help: "Truncated-BPTT chunk length U (default \(RunConfiguration.defaultUnroll)).")
    var unroll: Int?

    @Option(name: .customLong("batch-size"), parsing: .unconditional, help: "Contiguous streams B trained together (default \(RunConfiguration.defaultBatchSize)).")
    var batchSize: Int?

    @Option(help: "Optimizer: sgd, momentum or rmsprop (default sgd).")
    var optimizer: OptimizerKind?

    @Option(parsing: .unconditional, help: "Momentum coefficient for --optimizer momentum (default \(RunConfiguration.defaultMomentum)).")
    var momentum: Float?

    @Option(parsing: .unconditional, help: "RMSProp decay of the squared-gradient average (default \(RunConfiguration.defaultDecay)).")
    var decay: Float?

    @Option(parsing: .unconditional, help: "RMSProp epsilon, inside the square root (default \(RunConfiguration.defaultEpsilon)).")
    var epsilon: Float?

    @Option(parsing: .unconditional, help: "Clip each gradient entry to ±this before the update (default \(RunConfiguration.defaultClip)).")
    var clip: Float?

    @Option(parsing: .unconditional, help: "Learning rate (default \(RunConfiguration.defaultLearningRate)).")
    var lr: Float?

    @Option(name: .customLong("lr-decay"), parsing: .unconditional, help: "Learning-rate decay factor F in (0, 1], applied by --lr-decay-every and/or --lr-plateau-patience.")
    var lrDecay: Float?

    @Option(name: .customLong("lr-decay-every"), parsing: .unconditional, help: "Multiply the learning rate by F every N steps (0 = off).")
    var lrDecayEvery: Int?

    @Option(name: .customLong("lr-plateau-patience"), parsing: .unconditional, help: "Multiply the learning rate by F after P evaluations without improvement (0 = off).")
    var lrPlateauPatience: Int?

    @Option(name: .customLong("init"), help: "Initialisation: original or keras (default \(RunConfiguration.defaultInit.rawValue)).")
    var initScheme: InitScheme?

    @Option(name: .customLong("init-from"), help: "Start from an exported model directory (Wx.bin, Wy.bin, model.json) with the dataset's vocabulary.")
    var initFrom: String?

    @Option(parsing: .unconditional, help: "Random seed: the same seed, data and flags give bitwise-identical weights (default \(RunConfiguration.defaultSeed)).")
    var seed: UInt64?

    @Option(parsing: .unconditional, help: "Global step to train until (default: until interrupted).")
    var steps: Int?

    @Option(name: .customLong("checkpoint-every"), parsing: .unconditional, help: "Write a checkpoint every N steps (default \(RunConfiguration.defaultCheckpointEvery)).")
    var checkpointEvery: Int?

    @Option(name: .customLong("checkpoint-dir"), help: "Directory of the checkpoints and train_log.csv (default \(RunConfiguration.defaultCheckpointDirectory); with --resume, the checkpoint's directory).")
    var checkpointDir: String?

    @Option(parsing: .unconditional, help: "Keep the last K checkpoints, plus the best by validation loss (default \(RunConfiguration.defaultKeep)).")
    var keep: Int?

    @Option(name: .customLong("log-every"), parsing: .unconditional, help: "Print a progress line every N steps (default \(RunConfiguration.defaultLogEvery)).")
    var logEvery: Int?

    @Option(name: .customLong("eval-every"), parsing: .unconditional, help: "Evaluate on the training sequence and the validation set every N steps (default \(RunConfiguration.defaultEvalEvery)).")
    var evalEvery: Int?

    @Option(name: .customLong("input-noise"), parsing: .unconditional, help: "Probability P in [0, 1) that a training input class of the noise groups is replaced by a random one (default \(RunConfiguration.defaultInputNoise): off).")
    var inputNoise: Float?

    @Option(name: .customLong("input-noise-groups"), help: "Comma-separated input groups that get --input-noise (default \(RunConfiguration.defaultInputNoiseGroups.joined(separator: ",")), those the model has).")
    var inputNoiseGroups: String?

    @Option(name: .customLong("input-noise-draw"), help: "Where a replaced input class comes from: uniform (any class of its group) or model (the model's own prediction of that input, as when it samples; needs groups that are also outputs) (default uniform).")
    var inputNoiseDraw: InputNoiseDraw?

    @Flag(inversion: .prefixedNo, help: "Give the model the position of each hit in its bar (default: when the dataset has positions.npy).")
    var position: Bool?

    @Flag(inversion: .prefixedNo, help: "Give the model, with each hit, the hit that came next one bar ago at the same place in the bar (default: off; needs the position group).")
    var lookback: Bool?

    @Flag(inversion: .prefixedNo, help: "Give the model each hit's velocity and have it predict the next one's (default: when the dataset has velocities.npy).")
    var velocity: Bool?

    @Option(help: "Layout: original trains the 2017 model (note and tick in and out, no position or velocity).")
    var layout: Layout?

    @Option(name: .customLong("position-encoding"), help: "Position in the bar as onehot (one group of slots, default) or binary (the slot number's bits, as drums_rnn's counters).")
    var positionEncoding: PositionEncoding?

    @Option(name: .customLong("velocity-bins"), parsing: .unconditional, help: "Velocity bins, chosen from the data so each holds about the same share of its hits (default \(TrainingData.defaultVelocityBins)).")
    var velocityBins: Int?

    enum Layout: String, ExpressibleByArgument, CaseIterable {
        case original
    }

    @Option(help: "Continue the run saved in this checkpoint.")
    var resume: String?

    @Flag(name: .customLong("allow-data-change"), help: "With --resume, accept a dataset whose contents differ from the checkpoint's.")
    var allowDataChange = false

    func validate() throws {
        do { try options.validate() } catch let e as SettingError { throw ValidationError(e.description) }
        if allowDataChange && resume == nil { throw ValidationError("--allow-data-change only applies with --resume") }
        if resume != nil && initFrom != nil { throw ValidationError("--init-from cannot be combined with --resume") }
    }

    var options: RunOptions {
        var o = RunOptions(
            data: data, hidden: hidden, unroll: unroll, batchSize: batchSize,
            optimizer: optimizer, momentum: momentum, decay: decay,
            epsilon: epsilon, clip: clip, learningRate: lr, lrDecay: lrDecay, lrDecayEvery: lrDecayEvery,
            lrPlateauPatience: lrPlateauPatience, initScheme: initScheme,
            initFrom: initFrom, seed: seed, steps: steps, checkpointEvery: checkpointEvery,
            checkpointDirectory: checkpointDir, keep: keep, logEvery: logEvery, evalEvery: evalEvery,
            resume: resume, allowDataChange: allowDataChange)
        o.position = position
        o.velocity = velocity
        o.lookback = lookback
        o.layoutOriginal = layout == .original
        o.positionEncoding = positionEncoding
        o.velocityBins = velocityBins
        o.inputNoise = inputNoise
        o.inputNoiseDraw = inputNoiseDraw
        o.inputNoiseGroups = inputNoiseGroups.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        return o
    }

    func run() throws {
        let reporter = RunReporter(
            line: { text in FileHandle.standardOutput.write(Data((text + "\n").utf8)) },
            bar: isatty(STDERR_FILENO) != 0 ? { text in
                FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
            } : nil)
        let run = try TrainingRun(options: options, reporter: reporter)
        TemporaryFiles.sweepOnce(directory: run.configuration.checkpointDirectory)
        StopSignal.install()
        let summary: RunSummary
        do { summary = try run.run() } catch {
            if StopSignal.requested {
                Self.stderr("drummer: interrupted: the final checkpoint was not saved (\(error))")
            }
            throw error
        }
        if summary.ending == .interrupted {
            Self.stderr("drummer: interrupted at step \(summary.step): "
                + (summary.lastCheckpoint.map { "checkpoint saved to \($0)" } ?? "no checkpoint was saved"))
        }
    }

    private static func stderr(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

extension OptimizerKind: ExpressibleByArgument {}
extension InitScheme: ExpressibleByArgument {}
extension PositionEncoding: ExpressibleByArgument {}
extension InputNoiseDraw: ExpressibleByArgument {}
