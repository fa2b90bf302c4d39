// What the user asked for on the command line (nil = not given), and how it
// combines with defaults (a new run) or with a checkpoint (a resumed run).
import Checkpoints
import DrummerCore
import FileOutput
import Foundation
import Train

public struct RunOptions: Sendable {
    public var data: String?
    public var resume: String?
    /// The model directory the run's chosen step is exported to afterwards (`train -o`): checked
    /// against the data and the checkpoint directory before anything is written.
    public var output: String?
    /// The values a new run starts from before the options given: `drummer train --recipe`, whose
    /// default is grid; options built in code start from the table's defaults (original).
    public var recipe: Recipe = .original
    /// The training settings given (a value for each; `given` names them).
    private var values = RunConfiguration()
    private var given: Set<String> = []

    /// The value given for `setting`, nil when not given.
    public subscript<V>(setting: Setting<V>) -> V? {
        get { given.contains(setting.name) ? values[setting] : nil }
        set {
            if let newValue {
                values[setting] = newValue
                given.insert(setting.name)
            } else {
                given.remove(setting.name)
            }
        }
    }

    /// The settings given, in table order.
    var givenSettings: [any TrainingSetting] { Settings.all.filter { given.contains($0.name) } }

    // Named views (each is `self[Settings.x]`).
    public var hidden: Int? { get { self[Settings.hidden] } set { self[Settings.hidden] = newValue } }
    public var layers: Int? { get { self[Settings.layers] } set { self[Settings.layers] = newValue } }
    public var unroll: Int? { get { self[Settings.unroll] } set { self[Settings.unroll] = newValue } }
    public var batchSize: Int? { get { self[Settings.batchSize] } set { self[Settings.batchSize] = newValue } }
    public var optimizer: OptimizerKind? { get { self[Settings.optimizer] } set { self[Settings.optimizer] = newValue } }
    public var momentum: Float? { get { self[Settings.momentum] } set { self[Settings.momentum] = newValue } }
    public var decay: Float? { get { self[Settings.decay] } set { self[Settings.decay] = newValue } }
    public var epsilon: Float? { get { self[Settings.epsilon] } set { self[Settings.epsilon] = newValue } }
    public var clip: Float? { get { self[Settings.clip] } set { self[Settings.clip] = newValue } }
    public var learningRate: Float? { get { self[Settings.learningRate] } set { self[Settings.learningRate] = newValue } }
    public var lrDecay: Float? { get { self[Settings.lrDecay] } set { self[Settings.lrDecay] = newValue } }
    public var lrDecayEvery: Int? { get { self[Settings.lrDecayEvery] } set { self[Settings.lrDecayEvery] = newValue } }
    public var lrPlateauPatience: Int? { get { self[Settings.lrPlateauPatience] } set { self[Settings.lrPlateauPatience] = newValue } }
    public var initScheme: InitScheme? { get { self[Settings.initScheme] } set { self[Settings.initScheme] = newValue } }
    public var seed: UInt64? { get { self[Settings.seed] } set { self[Settings.seed] = newValue } }
    public var checkpointEvery: Int? { get { self[Settings.checkpointEvery] } set { self[Settings.checkpointEvery] = newValue } }
    public var checkpointDirectory: String? { get { self[Settings.checkpointDirectory] } set { self[Settings.checkpointDirectory] = newValue } }
    public var keep: Int? { get { self[Settings.keep] } set { self[Settings.keep] = newValue } }
    public var logEvery: Int? { get { self[Settings.logEvery] } set { self[Settings.logEvery] = newValue } }
    public var evalEvery: Int? { get { self[Settings.evalEvery] } set { self[Settings.evalEvery] = newValue } }
    /// `--steps` (nil: not given).
    public var steps: Int? {
        get { given.contains(Settings.steps.name) ? values[Settings.steps] : nil }
        set { self[Settings.steps] = newValue.map { Optional($0) } }
    }
    /// Whether a new run has the grid layout (the grid recipe's) or the 2017 one.
    public var layoutGrid: Bool { recipe.grid }
    /// `--styles`: a grid run's style input, read from the files' paths by a rule (default: from the data).
    public var gridStyles: GridStyleRule?
    /// `--styles none` given.
    public var noGridStyles = false

    static let defaultData = "data"

    public init(data: String? = nil, hidden: Int? = nil, unroll: Int? = nil, batchSize: Int? = nil,
                optimizer: OptimizerKind? = nil, momentum: Float? = nil, decay: Float? = nil,
                epsilon: Float? = nil, clip: Float? = nil, learningRate: Float? = nil, lrDecay: Float? = nil,
                lrDecayEvery: Int? = nil, lrPlateauPatience: Int? = nil, initScheme: InitScheme? = nil,
                seed: UInt64? = nil, steps: Int? = nil, checkpointEvery: Int? = nil,
                checkpointDirectory: String? = nil, keep: Int? = nil, logEvery: Int? = nil,
                evalEvery: Int? = nil, resume: String? = nil) {
        self.data = data; self.resume = resume
        self.hidden = hidden; self.unroll = unroll; self.batchSize = batchSize
        self.optimizer = optimizer; self.momentum = momentum; self.decay = decay; self.epsilon = epsilon
        self.clip = clip; self.learningRate = learningRate; self.lrDecay = lrDecay
        self.lrDecayEvery = lrDecayEvery; self.lrPlateauPatience = lrPlateauPatience
        self.initScheme = initScheme; self.seed = seed; self.steps = steps
        self.checkpointEvery = checkpointEvery; self.checkpointDirectory = checkpointDirectory
        self.keep = keep; self.logEvery = logEvery; self.evalEvery = evalEvery
    }

    /// Checks every setting given against its range (the table's rules, which
    /// `RunConfiguration.validate` applies to a whole configuration); throws `SettingError`
    /// naming the first bad option.
    public func validate() throws {
        for s in givenSettings { try s.validate(in: values) }
        if !layoutGrid, resume == nil, self[Settings.shuffleFiles] == true {
            throw SettingError(option: "--shuffle-files", message: "needs the grid layout (--recipe original reads events.npy in its order)")
        }
        if !layoutGrid, resume == nil, gridStyles != nil {
            throw SettingError(option: "--styles", message: "needs the grid layout (--recipe original has no style input)")
        }
    }

    /// Refuses a --styles that differs from the style input of the run being continued.
    func checkGroupsUnchanged(_ groups: ModelGroups, path: String) throws {
        if let grid = groups.grid, gridStyles != nil || noGridStyles, gridStyles != grid.styles?.rule {
            throw RunError.refusedOverride(option: "--styles", requested: gridStyles?.rawValue ?? "none",
                                           checkpoint: "styles " + (grid.styles?.rule.rawValue ?? "none"), path: path)
        }
        if groups.grid == nil, gridStyles != nil {
            throw RunError.refusedOverride(option: "--styles", requested: gridStyles!.rawValue,
                                           checkpoint: "the 2017 layout (no style input)", path: path)
        }
    }

    /// The configuration of a new run: defaults, the recipe, then the options given.
    func newConfiguration() -> RunConfiguration {
        var c = RunConfiguration()
        recipe.apply(to: &c)
        for s in givenSettings { try? s.restore(s.stored(in: values), into: &c) }
        // The recipe's dropout is between stacked layers: one layer given, and no --dropout, has none.
        if c[Settings.layers] < 2, !givenSettings.contains(where: { $0.name == Settings.dropout.name }) {
            c[Settings.dropout] = 0
        }
        return c
    }

    /// The configuration of a resumed run: the checkpoint's, with the options that may change
    /// applied; an option that may not change and differs from the checkpoint is refused
    /// (giving the same value is accepted).
    func resumedConfiguration(from ckpt: Checkpoint, path: String) throws -> RunConfiguration {
        var c = ckpt.configuration
        for s in givenSettings where s.onResume == .fixed && s.stored(in: values) != s.stored(in: c) {
            throw RunError.refusedOverride(option: s.flag, requested: s.text(in: values),
                                           checkpoint: "\(s.noun) \(s.text(in: c))", path: path)
        }
        // Checkpoints of a resumed run go beside the one it resumed from unless told otherwise.
        c.checkpointDirectory = PathNames.parent(of: path)
        for s in givenSettings where s.onResume == .mayChange { try? s.restore(s.stored(in: values), into: &c) }
        return c
    }
}

func absolutePath(_ p: String) -> String {
    URL(fileURLWithPath: p).standardizedFileURL.path
}
