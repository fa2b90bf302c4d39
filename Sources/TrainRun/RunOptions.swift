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
    public var allowDataChange: Bool
    /// The values a new run starts from before the options given: `drummer train --recipe`, whose
    /// default is groove; options built in code start from the table's defaults (original).
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
    public var inputNoise: Float? { get { self[Settings.inputNoise] } set { self[Settings.inputNoise] = newValue } }
    public var inputNoiseDraw: InputNoiseDraw? { get { self[Settings.inputNoiseDraw] } set { self[Settings.inputNoiseDraw] = newValue } }
    /// `--steps` (nil: not given).
    public var steps: Int? {
        get { given.contains(Settings.steps.name) ? values[Settings.steps] : nil }
        set { self[Settings.steps] = newValue.map { Optional($0) } }
    }
    /// `--init-from` (nil: not given).
    public var initFrom: String? {
        get { given.contains(Settings.initFrom.name) ? values[Settings.initFrom] : nil }
        set { self[Settings.initFrom] = newValue.map { Optional($0) } }
    }
    /// `--input-noise-groups` (comma-separated names; nil: not given).
    public var inputNoiseGroups: [String]? {
        get { given.contains(Settings.inputNoiseGroups.name) ? values[Settings.inputNoiseGroups] : nil }
        set { self[Settings.inputNoiseGroups] = newValue.map { Optional($0) } }
    }

    /// The groups of a new run (nil: what the dataset carries): the position-in-bar input
    /// (`--position` / `--no-position`), the velocity input and output (`--velocity` /
    /// `--no-velocity`), `--layout original` (neither), the position encoding and the number
    /// of velocity bins.
    public var position: Bool?
    public var velocity: Bool?
    /// The lookback input (`--lookback` / `--no-lookback`; default: off).
    public var lookback: Bool?
    public var layoutOriginal = false
    /// `--layout grid` (or `--recipe grid`): the 16th-note grid layout (GridGroup).
    public var layoutGrid = false
    /// `--grid-lookback`: how a grid run reads the bars before (default: velocities, the shipped model's).
    public var gridLookback: GridLookback?
    /// `--grid-lookback-bars`: the bars back a grid run's lookback reads (default: 1 and 2).
    public var gridLookbackBars: [Int]?
    /// `--styles`: a grid run's style input, read from the files' paths by a rule (default: none).
    public var gridStyles: GridStyleRule?
    /// `--styles none` given.
    public var noGridStyles = false
    public var positionEncoding: PositionEncoding?
    public var velocityBins: Int?

    static let defaultData = "data"

    public init(data: String? = nil, hidden: Int? = nil, unroll: Int? = nil, batchSize: Int? = nil,
                optimizer: OptimizerKind? = nil, momentum: Float? = nil, decay: Float? = nil,
                epsilon: Float? = nil, clip: Float? = nil, learningRate: Float? = nil, lrDecay: Float? = nil,
                lrDecayEvery: Int? = nil, lrPlateauPatience: Int? = nil, initScheme: InitScheme? = nil,
                initFrom: String? = nil, seed: UInt64? = nil, steps: Int? = nil, checkpointEvery: Int? = nil,
                checkpointDirectory: String? = nil, keep: Int? = nil, logEvery: Int? = nil,
                evalEvery: Int? = nil, resume: String? = nil, allowDataChange: Bool = false) {
        self.data = data; self.resume = resume; self.allowDataChange = allowDataChange
        self.hidden = hidden; self.unroll = unroll; self.batchSize = batchSize
        self.optimizer = optimizer; self.momentum = momentum; self.decay = decay; self.epsilon = epsilon
        self.clip = clip; self.learningRate = learningRate; self.lrDecay = lrDecay
        self.lrDecayEvery = lrDecayEvery; self.lrPlateauPatience = lrPlateauPatience
        self.initScheme = initScheme; self.initFrom = initFrom; self.seed = seed; self.steps = steps
        self.checkpointEvery = checkpointEvery; self.checkpointDirectory = checkpointDirectory
        self.keep = keep; self.logEvery = logEvery; self.evalEvery = evalEvery
    }

    /// Checks every setting given against its range (the table's rules, which
    /// `RunConfiguration.validate` applies to a whole configuration); throws `SettingError`
    /// naming the first bad option.
    public func validate() throws {
        for s in givenSettings { try s.validate(in: values) }
        if layoutOriginal, let g = inputNoiseGroups, let other = g.first(where: { !["note", "tick"].contains($0) }) {
            throw SettingError(option: "--input-noise-groups", message: "names \"\(other)\", but --layout original has only note and tick inputs")
        }
        if let v = velocityBins, !(1...127).contains(v) {
            throw SettingError(option: "--velocity-bins", message: "must be between 1 and 127, got \(v)")
        }
        if layoutGrid, layoutOriginal {
            throw SettingError(option: "--layout", message: "is either original or grid")
        }
        if layoutGrid, position != nil || velocity != nil || lookback != nil || positionEncoding != nil || velocityBins != nil {
            throw SettingError(option: "--layout grid", message: "has its own groups: drop --position/--lookback/--velocity/--position-encoding/--velocity-bins")
        }
        if !layoutGrid, resume == nil, gridLookback != nil {
            throw SettingError(option: "--grid-lookback", message: "needs --layout grid")
        }
        if !layoutGrid, resume == nil, gridLookbackBars != nil {
            throw SettingError(option: "--grid-lookback-bars", message: "needs --layout grid")
        }
        if let bars = gridLookbackBars, !GridGroup.validLookbackBars(bars) {
            throw SettingError(option: "--grid-lookback-bars", message: "takes 1 to 8 increasing numbers of bars back, each 1...64 (such as 1,2,4), got \(bars.map(String.init).joined(separator: ","))")
        }
        if !layoutGrid, resume == nil, self[Settings.shuffleFiles] == true {
            throw SettingError(option: "--shuffle-files", message: "needs --layout grid (the event layouts read events.npy in its order)")
        }
        if !layoutGrid, resume == nil, self[Settings.resetStatePerFile] == true {
            throw SettingError(option: "--reset-state-per-file", message: "needs --layout grid (the event layouts read events.npy as one sequence)")
        }
        if !layoutGrid, resume == nil, gridStyles != nil {
            throw SettingError(option: "--styles", message: "needs --layout grid")
        }
        if layoutOriginal, position == true || velocity == true || lookback == true {
            throw SettingError(option: "--layout original", message: "has no position, lookback or velocity group: drop --position/--lookback/--velocity")
        }
        if position == false, lookback == true {
            throw SettingError(option: "--lookback", message: "needs the position group (it matches places in the bar)")
        }
        if layoutOriginal || position == false, positionEncoding != nil {
            throw SettingError(option: "--position-encoding", message: "needs the position group")
        }
        if layoutOriginal || velocity == false, velocityBins != nil {
            throw SettingError(option: "--velocity-bins", message: "needs the velocity group")
        }
    }

    /// Refuses group options that differ from the groups of the run being continued or the
    /// model being fine-tuned (`what` names it).
    func checkGroupsUnchanged(_ groups: ModelGroups, path: String, what: String = "checkpoint") throws {
        func refuse(_ option: String, _ requested: String, _ has: String) throws {
            if what == "checkpoint" {
                throw RunError.refusedOverride(option: option, requested: requested, checkpoint: has, path: path)
            }
            throw SettingError(option: option, message: (requested.isEmpty ? "" : requested + " ")
                + "differs from the \(what) \(path), which has \(has)")
        }
        let hasPosition = groups.position != nil, hasVelocity = groups.velocity != nil
        if let p = position, p != hasPosition {
            try refuse(p ? "--position" : "--no-position", "", hasPosition ? "a position group" : "no position group")
        }
        let hasLookback = groups.lookback != nil
        if let l = lookback, l != hasLookback {
            try refuse(l ? "--lookback" : "--no-lookback", "", hasLookback ? "a lookback group" : "no lookback group")
        }
        if let v = velocity, v != hasVelocity {
            try refuse(v ? "--velocity" : "--no-velocity", "", hasVelocity ? "a velocity group" : "no velocity group")
        }
        if layoutGrid, groups.grid == nil {
            try refuse("--layout", "grid", "groups " + groups.inputNames.joined(separator: ", "))
        }
        if !layoutGrid, groups.grid != nil, layoutOriginal || position != nil || velocity != nil || lookback != nil {
            try refuse("--layout", layoutOriginal ? "original" : "event groups", "the grid layout")
        }
        if layoutOriginal, !groups.isOriginalLayout {
            try refuse("--layout", "original", "groups " + groups.inputNames.joined(separator: ", "))
        }
        if let l = gridLookback, let grid = groups.grid, l != grid.lookback {
            try refuse("--grid-lookback", l.rawValue, "grid lookback " + grid.lookback.rawValue)
        }
        if let bars = gridLookbackBars, let grid = groups.grid, bars != grid.lookbackBars {
            try refuse("--grid-lookback-bars", bars.map(String.init).joined(separator: ","),
                       "lookback bars " + grid.lookbackBars.map(String.init).joined(separator: ","))
        }
        if let grid = groups.grid, gridStyles != nil || noGridStyles, gridStyles != grid.styles?.rule {
            try refuse("--styles", gridStyles?.rawValue ?? "none", "styles " + (grid.styles?.rule.rawValue ?? "none"))
        }
        if let e = positionEncoding, e != groups.position?.encoding {
            try refuse("--position-encoding", e.rawValue, "position encoding " + (groups.position?.encoding.rawValue ?? "none"))
        }
        if let b = velocityBins, b != groups.velocity?.bins.count {
            try refuse("--velocity-bins", String(b), "\(groups.velocity?.bins.count ?? 0) velocity bins")
        }
    }

    /// The configuration of a new run: defaults, the recipe, then the options given.
    func newConfiguration() -> RunConfiguration {
        var c = RunConfiguration()
        recipe.apply(to: &c)
        for s in givenSettings { try? s.restore(s.stored(in: values), into: &c) }
        c.initFrom = c.initFrom.map(absolutePath)
        return c
    }

    /// The configuration of a resumed run: the checkpoint's, with the options that may change
    /// applied; an option that may not change and differs from the checkpoint is refused
    /// (giving the same value is accepted).
    func resumedConfiguration(from ckpt: Checkpoint, path: String) throws -> RunConfiguration {
        var c = ckpt.configuration
        if let f = initFrom {
            throw RunError.refusedOverride(option: "--init-from", requested: f,
                                           checkpoint: "weights at step \(ckpt.state.step)", path: path)
        }
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
