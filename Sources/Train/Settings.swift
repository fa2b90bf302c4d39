// Every training setting, declared once: its command-line flag, default, valid range,
// whether a resumed run may change it, its attribute in a checkpoint's /hyperparameters
// and its key in model.json's metadata. The CLI (`drummer train`'s options and help), the
// validation (`RunOptions.validate`, `RunConfiguration.validate`), the resume rules, the
// checkpoint writer and reader and the exporter's metadata all read `Settings.all`; adding a
// setting is one declaration here plus the code that uses its value.
import DrummerCore

/// How a resumed run (`--resume`) treats a setting given on its command line.
public enum ResumePolicy: Sendable, Equatable {
    /// Fixed for the life of a run: a different value is refused (the same value is accepted).
    case fixed
    /// May change when the run is resumed (e.g. the learning rate).
    case mayChange
}

/// A setting's value as a checkpoint attribute stores it.
public enum SettingValue: Equatable, Sendable, CustomStringConvertible {
    case int(Int64)
    case double(Double)
    case string(String)

    /// The attribute type the value is stored as.
    public var storage: SettingStorage {
        switch self {
        case .int: return .int
        case .double: return .double
        case .string: return .string
        }
    }

    public var description: String {
        switch self {
        case .int(let v): return String(v)
        case .double(let v): return String(v)
        case .string(let v): return "\"\(v)\""
        }
    }
}

/// The attribute type a setting is stored as.
public enum SettingStorage: Sendable, Equatable { case int, double, string }

/// A stored value that does not decode (an unknown name, a number out of range).
public struct SettingDecodingError: Error, CustomStringConvertible, Equatable, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// How a setting's value is written and read back as an attribute, and shown as text.
public struct SettingCodec<Value: Hashable & Sendable>: Sendable {
    public let storage: SettingStorage
    let encode: @Sendable (Value) -> SettingValue
    let decode: @Sendable (SettingValue) throws -> Value
    /// The value as text: --help's default, model.json's metadata, error messages.
    let text: @Sendable (Value) -> String
}

extension SettingCodec where Value == Int {
    public static var int: SettingCodec {
        SettingCodec(storage: .int, encode: { .int(Int64($0)) }, decode: { v in
            guard case .int(let i) = v, let n = Int(exactly: i) else { throw SettingDecodingError("is \(v), not an integer") }
            return n
        }, text: { String($0) })
    }
}

extension SettingCodec where Value == Bool {
    /// Stored as int64 0 or 1.
    public static var bool: SettingCodec {
        SettingCodec(storage: .int, encode: { .int($0 ? 1 : 0) }, decode: { v in
            guard case .int(let i) = v, i == 0 || i == 1 else { throw SettingDecodingError("is \(v), not 0 or 1") }
            return i == 1
        }, text: { $0 ? "on" : "off" })
    }
}

extension SettingCodec where Value == Int? {
    /// An integer that may be off, stored as `none` when off.
    static func optionalInt(none: Int64) -> SettingCodec {
        SettingCodec(storage: .int, encode: { .int($0.map(Int64.init) ?? none) }, decode: { v in
            guard case .int(let i) = v, let n = Int(exactly: i) else { throw SettingDecodingError("is \(v), not an integer") }
            return i == none ? nil : n
        }, text: { $0.map(String.init) ?? "off" })
    }
}

extension SettingCodec where Value == UInt64 {
    /// Stored as the int64 with the same bits.
    public static var uint64: SettingCodec {
        SettingCodec(storage: .int, encode: { .int(Int64(bitPattern: $0)) }, decode: { v in
            guard case .int(let i) = v else { throw SettingDecodingError("is \(v), not an integer") }
            return UInt64(bitPattern: i)
        }, text: { String($0) })
    }
}

extension SettingCodec where Value == Float {
    /// A float64 attribute holding the float32 exactly.
    public static var float: SettingCodec {
        SettingCodec(storage: .double, encode: { .double(Double($0)) }, decode: { v in
            guard case .double(let d) = v, d.isFinite, abs(d) <= Double(Float.greatestFiniteMagnitude) else {
                throw SettingDecodingError("is \(v), not a finite float32")
            }
            return Float(d)
        }, text: { String($0) })
    }
}

extension SettingCodec where Value == String {
    public static var string: SettingCodec {
        SettingCodec(storage: .string, encode: { .string($0) }, decode: { v in
            guard case .string(let s) = v else { throw SettingDecodingError("is \(v), not a string") }
            return s
        }, text: { $0 })
    }
}

extension SettingCodec where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// One of the type's names.
    public static var name: SettingCodec {
        SettingCodec(storage: .string, encode: { .string($0.rawValue) }, decode: { v in
            guard case .string(let s) = v, let value = Value(rawValue: s) else {
                let names = Value.allCases.map(\.rawValue)
                throw SettingDecodingError("is \(v), not " + names.dropLast().joined(separator: ", ")
                                           + (names.count > 1 ? " or " : "") + (names.last ?? ""))
            }
            return value
        }, text: { $0.rawValue })
    }
}

/// One training setting.
public struct Setting<Value: Hashable & Sendable>: Sendable {
    /// Its attribute in a checkpoint's /hyperparameters and its key in model.json's metadata.
    public let name: String
    /// Its long flag without the dashes ("hidden" for --hidden).
    public let flagName: String
    public let defaultValue: Value
    /// What it does, for --help (the default is added from `defaultValue`).
    public let help: String
    public let onResume: ResumePolicy
    /// What the setting is called in a refusal ("hidden size" in "the checkpoint has hidden size 200").
    public let noun: String
    let codec: SettingCodec<Value>
    /// Its valid range: throws `SettingError` naming the flag.
    let check: @Sendable (Value, String) throws -> Void
    /// The value a checkpoint written before the setting existed holds; nil: the attribute is required.
    let absentValue: Value?
    /// Whether model.json's metadata lists it (given the run's settings, or its own value).
    let inMetadata: @Sendable (RunConfiguration) -> Bool
    let listedWhen: (@Sendable (Value) -> Bool)?

    public init(_ name: String, flag: String, default value: Value, help: String, onResume: ResumePolicy,
                noun: String? = nil, codec: SettingCodec<Value>, absent: Value? = nil,
                check: @escaping @Sendable (Value, String) throws -> Void = { _, _ in },
                inMetadata: @escaping @Sendable (RunConfiguration) -> Bool = { _ in false },
                listedWhen: (@Sendable (Value) -> Bool)? = nil) {
        self.name = name
        flagName = flag
        defaultValue = value
        self.help = help
        self.onResume = onResume
        self.noun = noun ?? name.replacingOccurrences(of: "_", with: " ")
        self.codec = codec
        absentValue = absent
        self.check = check
        self.inMetadata = inMetadata
        self.listedWhen = listedWhen
    }

    /// "--hidden".
    public var flag: String { "--" + flagName }
    /// The --help text: what it does and its default.
    public var helpText: String { "\(help) (default \(codec.text(defaultValue)))" }

    /// Throws `SettingError` when `value` is outside the setting's range.
    public func validate(_ value: Value) throws { try check(value, flag) }
}

/// What every setting offers, whatever its type (the table's rows).
public protocol TrainingSetting: Sendable {
    var name: String { get }
    var flag: String { get }
    var onResume: ResumePolicy { get }
    var storage: SettingStorage { get }
    /// Checks the configuration's value of this setting.
    func validate(in c: RunConfiguration) throws
    /// The configuration's value, as stored.
    func stored(in c: RunConfiguration) -> SettingValue
    /// Sets the configuration's value from a stored one (nil: the attribute is absent, which
    /// gives `absentValue` or throws when the setting is required).
    func restore(_ v: SettingValue?, into c: inout RunConfiguration) throws
    /// The configuration's value as model.json's metadata shows it, nil when not listed.
    func metadata(of c: RunConfiguration) -> String?
    /// The configuration's value as text.
    func text(in c: RunConfiguration) -> String
    var noun: String { get }
}

extension Setting: TrainingSetting {
    public var storage: SettingStorage { codec.storage }
    public func validate(in c: RunConfiguration) throws { try validate(c[self]) }
    public func stored(in c: RunConfiguration) -> SettingValue { codec.encode(c[self]) }
    public func restore(_ v: SettingValue?, into c: inout RunConfiguration) throws {
        guard let v else {
            guard let a = absentValue else { throw SettingDecodingError("is missing") }
            c[self] = a
            return
        }
        c[self] = try codec.decode(v)
    }
    public func metadata(of c: RunConfiguration) -> String? {
        inMetadata(c) || listedWhen?(c[self]) == true ? codec.text(c[self]) : nil
    }
    public func text(in c: RunConfiguration) -> String { codec.text(c[self]) }
}

// MARK: - The table

/// The training settings of `drummer train`, in the order --help and checkpoints list them.
public enum Settings {
    static let always: @Sendable (RunConfiguration) -> Bool = { _ in true }
    static let withSchedule: @Sendable (RunConfiguration) -> Bool = { $0.schedule.isActive }

    // Fixed for the life of a run.
    public static let hidden = Setting<Int>(
        "hidden", flag: "hidden", default: 200, help: "Hidden size H of every LSTM layer", onResume: .fixed,
        noun: "hidden size", codec: .int, check: { try SettingRules.within(1, ModelLimits.maximumHidden, $0, $1) },
        inMetadata: always)
    public static let layers = Setting<Int>(
        "layers", flag: "layers", default: 1, help: "Stacked LSTM layers L (each of hidden size H)", onResume: .fixed,
        noun: "layers", codec: .int, absent: 1, check: { try SettingRules.within(1, ModelLimits.maximumLayers, $0, $1) },
        inMetadata: always)
    public static let unroll = Setting<Int>(
        "unroll", flag: "unroll", default: 200, help: "Truncated-BPTT chunk length U", onResume: .fixed,
        codec: .int, check: { try SettingRules.within(1, SettingRules.maximumUnroll, $0, $1) }, inMetadata: always)
    public static let batchSize = Setting<Int>(
        "batch_size", flag: "batch-size", default: 1, help: "Contiguous streams B trained together", onResume: .fixed,
        codec: .int, check: { try SettingRules.within(1, SettingRules.maximumBatchSize, $0, $1) }, inMetadata: always)
    public static let optimizer = Setting<OptimizerKind>(
        "optimizer", flag: "optimizer", default: .sgd, help: "Optimizer: sgd, momentum, rmsprop or adam (PyTorch's: beta1 0.9, beta2 0.999, epsilon 1e-8)", onResume: .fixed,
        codec: .name, inMetadata: always)
    /// keras reached a lower or equal validation loss than original at every learning rate tried
    /// (the 2017 layout, 15,000 steps at lr 1: 3.235 against 3.299; loss over the whole training
    /// set 3.015 against 3.113).
    public static let initScheme = Setting<InitScheme>(
        "init", flag: "init", default: .keras, help: "Initialisation: original or keras", onResume: .fixed,
        codec: .name, inMetadata: always)
    public static let seed = Setting<UInt64>(
        "seed", flag: "seed", default: 1,
        help: "Random seed: the same seed, data and flags give bitwise-identical weights", onResume: .fixed,
        codec: .uint64, inMetadata: always)

    // May change when a run is resumed.
    /// The 2017 layout's SGD on the Groove corpus (quantize 30, 327k training events, H = 200,
    /// U = 200, B = 1), 3,000 steps: lr 0.1/0.3/1/3 gave validation loss 4.21/4.09/3.87/3.96
    /// (original init) and 4.03/3.89/3.74/3.96 (keras init); lr 2 with keras init diverged near
    /// step 5,000; 15,000 steps with keras init: lr 1 reached loss 3.015 over the whole training
    /// set and 3.235 on validation, lr 0.5 3.068 and 3.268.
    public static let learningRate = Setting<Float>(
        "learning_rate", flag: "lr", default: 1, help: "Learning rate", onResume: .mayChange, codec: .float,
        check: { try SettingRules.positive($0, $1) }, inMetadata: always)
    public static let momentum = Setting<Float>(
        "momentum", flag: "momentum", default: 0.9, help: "Momentum coefficient for --optimizer momentum",
        onResume: .mayChange, codec: .float, check: { try SettingRules.unitInterval($0, $1) })
    public static let decay = Setting<Float>(
        "decay", flag: "decay", default: 0.9, help: "RMSProp decay of the squared-gradient average",
        onResume: .mayChange, codec: .float, check: { try SettingRules.unitInterval($0, $1) })
    /// RMSProp's epsilon sits under the square root beside ms, which can reach 0: it must be > 0.
    public static let epsilon = Setting<Float>(
        "epsilon", flag: "epsilon", default: 1e-10, help: "RMSProp epsilon, inside the square root",
        onResume: .mayChange, codec: .float, check: { try SettingRules.positive($0, $1) })
    public static let clip = Setting<Float>(
        "clip", flag: "clip", default: 5, help: "Clip each gradient entry to ±this before the update",
        onResume: .mayChange, codec: .float, check: { try SettingRules.positive($0, $1) }, inMetadata: always)
    public static let weightDecay = Setting<Float>(
        "weight_decay", flag: "weight-decay", default: 0,
        help: "Decoupled weight decay λ: every parameter is multiplied by 1 − lr·λ before each update, as PyTorch's "
            + "AdamW does (with --optimizer adam, torch.optim.AdamW; 0 = off)",
        onResume: .mayChange, codec: .float, absent: 0, check: { try SettingRules.notNegative($0, $1) },
        listedWhen: { $0 > 0 })
    public static let lrDecay = Setting<Float>(
        "lr_decay", flag: "lr-decay", default: 1,
        help: "Learning-rate decay factor F in (0, 1], applied by --lr-decay-every and/or --lr-plateau-patience",
        onResume: .mayChange, codec: .float, check: { try SettingRules.lrDecay($0, $1) }, inMetadata: withSchedule)
    public static let lrDecayEvery = Setting<Int>(
        "lr_decay_every", flag: "lr-decay-every", default: 0, help: "Multiply the learning rate by F every N steps (0 = off)",
        onResume: .mayChange, codec: .int, check: { try SettingRules.notNegative($0, $1) },
        inMetadata: { $0.schedule.every != nil })
    public static let lrPlateauPatience = Setting<Int>(
        "lr_plateau_patience", flag: "lr-plateau-patience", default: 0,
        help: "Multiply the learning rate by F after P evaluations without improvement (0 = off)",
        onResume: .mayChange, codec: .int, check: { try SettingRules.notNegative($0, $1) },
        inMetadata: { $0.schedule.plateauPatience != nil })
    public static let steps = Setting<Int?>(
        "steps", flag: "steps", default: nil, help: "Global step to train until (off, --recipe original's default: until interrupted; the grid recipe always has a last step)",
        onResume: .mayChange, codec: .optionalInt(none: -1), check: { v, flag in
            if let v, v < 0 { throw SettingError(option: flag, message: "must not be negative, got \(v)") }
        })
    public static let checkpointEvery = Setting<Int>(
        "checkpoint_every", flag: "checkpoint-every", default: 500, help: "Write a checkpoint every N steps",
        onResume: .mayChange, codec: .int, check: { try SettingRules.atLeast(1, $0, $1) })
    public static let checkpointDirectory = Setting<String>(
        "checkpoint_dir", flag: "checkpoint-dir", default: "checkpoints",
        help: "Directory of the checkpoints and train_log.csv (with --resume: the checkpoint's directory)",
        onResume: .mayChange, codec: .string, check: { v, flag in
            if v.isEmpty { throw SettingError(option: flag, message: "must not be empty") }
        })
    public static let keep = Setting<Int>(
        "keep", flag: "keep", default: 5, help: "Keep the last K checkpoints, plus the best by validation loss",
        onResume: .mayChange, codec: .int, check: { try SettingRules.atLeast(1, $0, $1) })
    public static let logEvery = Setting<Int>(
        "log_every", flag: "log-every", default: 100, help: "Print a progress line every N steps",
        onResume: .mayChange, codec: .int, check: { try SettingRules.atLeast(1, $0, $1) })
    public static let evalEvery = Setting<Int>(
        "eval_every", flag: "eval-every", default: 1000,
        help: "Evaluate every N steps: the validation set, and the training data (a grid run: every n-th training file, about a validation set's worth, each file from a zero state; the 2017 layout: the whole training sequence)",
        onResume: .mayChange, codec: .int, check: { try SettingRules.atLeast(1, $0, $1) })

    public static let earlyStop = Setting<Bool>(
        "early_stop", flag: "early-stop", default: false,
        help: "Stop when the validation loss has not improved for --early-stop-patience evaluations in a row",
        onResume: .mayChange, codec: .bool, absent: false, listedWhen: { $0 })
    public static let earlyStopPatience = Setting<Int>(
        "early_stop_patience", flag: "early-stop-patience", default: 3,
        help: "Evaluations without a better validation loss before --early-stop stops the run",
        onResume: .mayChange, codec: .int, absent: 3, check: { try SettingRules.atLeast(1, $0, $1) })

    public static let dropout = Setting<Float>(
        "dropout", flag: "dropout", default: 0,
        help: "Probability P in [0, 1) that a unit of a layer's h is dropped on its way to the layer above (training only; needs --layers 2 or more: a run of one layer given no --dropout has none)",
        onResume: .mayChange, codec: .float, absent: 0, check: { try SettingRules.probability($0, $1) }, listedWhen: { $0 > 0 })

    public static let shuffleFiles = Setting<Bool>(
        "shuffle_files", flag: "shuffle-files", default: false,
        help: "Train a grid model on its training files in an order shuffled with --seed (else in the dataset's, where "
            + "neighbours are mostly one drummer's files of one style and a file's first steps read the state its "
            + "neighbour left; models/groove keeps the dataset's order: docs/research.md, File order)",
        onResume: .fixed, codec: .bool, absent: false, listedWhen: { $0 })

    /// Every setting, in order.
    public static let all: [any TrainingSetting] = [
        hidden, layers, unroll, batchSize, optimizer, initScheme, seed,
        learningRate, momentum, decay, epsilon, clip, weightDecay, lrDecay, lrDecayEvery, lrPlateauPatience, steps,
        checkpointEvery, checkpointDirectory, keep, logEvery, evalEvery,
        earlyStop, earlyStopPatience, dropout, shuffleFiles,
    ]

    /// Settings drummer no longer has (docs/research.md says what each did and the commit that
    /// removed it): a checkpoint that stored one off resumes as before; one that stored another
    /// value trained with it and is refused on resume (it still exports, samples and evaluates).
    public static let retired: [RetiredSetting] = [
        RetiredSetting(name: "lookback_from_model", flag: "--lookback-from-model", off: .double(0)),
        RetiredSetting(name: "fill_weight", flag: "--fill-weight", off: .double(1)),
        RetiredSetting(name: "reset_state_at_style_change", flag: "--reset-state-at-style-change", off: .int(0)),
        RetiredSetting(name: "input_noise", flag: "--input-noise", off: .double(0)),
        RetiredSetting(name: "output_dropout", flag: "--output-dropout", off: .double(0)),
        RetiredSetting(name: "reset_state_per_file", flag: "--reset-state-per-file", off: .int(0)),
    ]
    // Also retired, and harmless in a checkpoint whatever their value: init_from (the model a run
    // started from), eval_max_events (how much an evaluation read), input_noise_groups and
    // input_noise_draw (which only mattered with input_noise, refused above).

    /// Settings a checkpoint stores that `drummer train` has no flag for: every new run takes the
    /// table default (the initialisation: keras, which reached a lower validation loss than the
    /// original's at every learning rate tried; see `initScheme`).
    public static let withoutFlag: Set<String> = [initScheme.name]

    /// The flags a resumed run may change, for --help.
    public static var resumable: [String] {
        all.filter { $0.onResume == .mayChange && !withoutFlag.contains($0.name) }.map(\.flag)
    }
    /// The flags a resumed run may not change.
    public static var fixedOnResume: [String] {
        all.filter { $0.onResume == .fixed && !withoutFlag.contains($0.name) }.map(\.flag)
    }
}

/// A setting drummer no longer has: its checkpoint attribute, its flag and its off value.
public struct RetiredSetting: Sendable, Equatable {
    public let name: String
    public let flag: String
    public let off: SettingValue

    public init(name: String, flag: String, off: SettingValue) {
        self.name = name
        self.flag = flag
        self.off = off
    }
}

// MARK: - Recipes

/// A named set of setting values a new run starts from (`drummer train --recipe`); the
/// options given on the command line override it. `grid` is the recipe models/groove was
/// trained with, and the default; `original` is the 2017 project's plain SGD on (note, tick)
/// events (every setting at its table default: no step budget, no schedule, no early stop).
public enum Recipe: String, CaseIterable, Sendable {
    /// The 16th-note grid layout's: two layers of 256 with dropout 0.3 between them, Adam at a
    /// rate halved every 1,500 steps, 32 streams of 64 steps, 10,000 steps, seed 3
    /// (docs/research.md says how each was chosen; the decay steadies what the model plays from
    /// checkpoint to checkpoint).
    case grid
    case original

    /// The recipe's values, in table order (settings not listed keep their table default).
    public var values: [(setting: any TrainingSetting, value: SettingValue)] {
        switch self {
        case .original: return []
        case .grid:
            func v<V>(_ s: Setting<V>, _ x: V) -> (any TrainingSetting, SettingValue) { (s, s.codec.encode(x)) }
            return [
                v(Settings.hidden, 256), v(Settings.layers, 2), v(Settings.unroll, 64), v(Settings.batchSize, 32),
                v(Settings.optimizer, .adam), v(Settings.seed, 3), v(Settings.clip, 5), v(Settings.learningRate, 0.002),
                v(Settings.lrDecay, 0.5), v(Settings.lrDecayEvery, 1500),
                v(Settings.steps, Recipe.gridSteps), v(Settings.checkpointEvery, 500), v(Settings.keep, 40),
                v(Settings.logEvery, 100), v(Settings.evalEvery, 500), v(Settings.dropout, 0.3),
            ]
        }
    }

    /// Steps of the grid recipe.
    public static let gridSteps = 10_000
    /// The bars back the grid recipe's lookback reads: one, two and four (where the corpus's
    /// four-bar patterns repeat).
    public static let gridLookbackBars = [1, 2, 4]

    /// Whether a new run has the grid layout.
    public var grid: Bool { self == .grid }

    /// `c` with the recipe's values.
    public func apply(to c: inout RunConfiguration) {
        for (setting, value) in values { try? setting.restore(value, into: &c) }
    }

    /// The recipe's value of `setting` as text, nil when it keeps the table default.
    public func text(of setting: any TrainingSetting) -> String? {
        guard let (_, value) = values.first(where: { $0.setting.name == setting.name }) else { return nil }
        var c = RunConfiguration()
        try? setting.restore(value, into: &c)
        return setting.text(in: c)
    }
}

extension Setting {
    /// The --help text for a command whose default recipe is `recipe`: what the setting does,
    /// its default under that recipe, and the table default when the recipe changes it.
    public func helpText(recipe: Recipe) -> String {
        guard let r = recipe.text(of: self) else { return helpText }
        return "\(help) (default \(r); --recipe original: \(codec.text(defaultValue)))"
    }
}
