// What the user asked for on the command line (nil = not given), and how it
// combines with defaults (a new run) or with a checkpoint (a resumed run).
import Checkpoints
import DrummerCore
import Foundation
import Train

public struct RunOptions: Sendable {
    public var data: String?
    public var hidden: Int?
    public var unroll: Int?
    public var batchSize: Int?
    public var optimizer: OptimizerKind?
    public var momentum: Float?
    public var decay: Float?
    public var epsilon: Float?
    public var clip: Float?
    public var learningRate: Float?
    public var lrDecay: Float?
    public var lrDecayEvery: Int?
    public var lrPlateauPatience: Int?
    public var initScheme: InitScheme?
    public var initFrom: String?
    public var seed: UInt64?
    public var steps: Int?
    public var checkpointEvery: Int?
    public var checkpointDirectory: String?
    public var keep: Int?
    public var logEvery: Int?
    public var evalEvery: Int?
    /// `--input-noise`, `--input-noise-groups` (comma-separated names) and `--input-noise-draw`.
    public var inputNoise: Float?
    public var inputNoiseGroups: [String]?
    public var inputNoiseDraw: InputNoiseDraw?
    public var resume: String?
    public var allowDataChange: Bool
    /// The groups of a new run (nil: what the dataset carries): the position-in-bar input
    /// (`--position` / `--no-position`), the velocity input and output (`--velocity` /
    /// `--no-velocity`), `--layout original` (neither), the position encoding and the number
    /// of velocity bins.
    public var position: Bool?
    public var velocity: Bool?
    /// The lookback input (`--lookback` / `--no-lookback`; default: off).
    public var lookback: Bool?
    public var layoutOriginal = false
    public var positionEncoding: PositionEncoding?
    public var velocityBins: Int?

    public static let defaultData = "data"

    public init(data: String? = nil, hidden: Int? = nil, unroll: Int? = nil, batchSize: Int? = nil,
                optimizer: OptimizerKind? = nil, momentum: Float? = nil, decay: Float? = nil,
                epsilon: Float? = nil, clip: Float? = nil, learningRate: Float? = nil, lrDecay: Float? = nil,
                lrDecayEvery: Int? = nil, lrPlateauPatience: Int? = nil, initScheme: InitScheme? = nil,
                initFrom: String? = nil, seed: UInt64? = nil, steps: Int? = nil, checkpointEvery: Int? = nil,
                checkpointDirectory: String? = nil, keep: Int? = nil, logEvery: Int? = nil,
                evalEvery: Int? = nil, resume: String? = nil, allowDataChange: Bool = false) {
        self.data = data; self.hidden = hidden; self.unroll = unroll; self.batchSize = batchSize
        self.optimizer = optimizer; self.momentum = momentum; self.decay = decay; self.epsilon = epsilon
        self.clip = clip; self.learningRate = learningRate; self.lrDecay = lrDecay
        self.lrDecayEvery = lrDecayEvery; self.lrPlateauPatience = lrPlateauPatience
        self.initScheme = initScheme; self.initFrom = initFrom; self.seed = seed; self.steps = steps
        self.checkpointEvery = checkpointEvery; self.checkpointDirectory = checkpointDirectory
        self.keep = keep; self.logEvery = logEvery; self.evalEvery = evalEvery; self.resume = resume
        self.allowDataChange = allowDataChange
    }

    /// Checks every option given against `SettingRules` (the ranges `RunConfiguration.validate`
    /// applies to a whole configuration); throws `SettingError` naming the first bad option.
    public func validate() throws {
        if let v = hidden { try SettingRules.hidden(v) }
        if let v = unroll { try SettingRules.unroll(v) }
        if let v = batchSize { try SettingRules.batchSize(v) }
        if let v = learningRate { try SettingRules.learningRate(v) }
        if let v = momentum { try SettingRules.momentum(v) }
        if let v = decay { try SettingRules.decay(v) }
        if let v = epsilon { try SettingRules.epsilon(v) }
        if let v = clip { try SettingRules.clip(v) }
        if let v = lrDecay { try SettingRules.lrDecay(v) }
        if let v = lrDecayEvery { try SettingRules.lrDecayEvery(v) }
        if let v = lrPlateauPatience { try SettingRules.lrPlateauPatience(v) }
        if let v = steps { try SettingRules.steps(v) }
        if let v = checkpointEvery { try SettingRules.checkpointEvery(v) }
        if let v = checkpointDirectory { try SettingRules.checkpointDirectory(v) }
        if let v = keep { try SettingRules.keep(v) }
        if let v = logEvery { try SettingRules.logEvery(v) }
        if let v = evalEvery { try SettingRules.evalEvery(v) }
        if let v = inputNoise { try SettingRules.inputNoise(v) }
        if let v = inputNoiseGroups { try SettingRules.inputNoiseGroups(v) }
        if layoutOriginal, let g = inputNoiseGroups, let other = g.first(where: { !["note", "tick"].contains($0) }) {
            throw SettingError(option: "--input-noise-groups", message: "names \"\(other)\", but --layout original has only note and tick inputs")
        }
        if let v = velocityBins, !(1...127).contains(v) {
            throw SettingError(option: "--velocity-bins", message: "must be between 1 and 127, got \(v)")
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
        if layoutOriginal, !groups.isOriginalLayout {
            try refuse("--layout", "original", "groups " + groups.inputNames.joined(separator: ", "))
        }
        if let e = positionEncoding, e != groups.position?.encoding {
            try refuse("--position-encoding", e.rawValue, "position encoding " + (groups.position?.encoding.rawValue ?? "none"))
        }
        if let b = velocityBins, b != groups.velocity?.bins.count {
            try refuse("--velocity-bins", String(b), "\(groups.velocity?.bins.count ?? 0) velocity bins")
        }
    }

    /// Applies the options that may change at any time (new or resumed run).
    func applyMutable(to c: inout RunConfiguration) {
        if let v = learningRate { c.learningRate = v }
        if let v = momentum { c.momentum = v }
        if let v = decay { c.decay = v }
        if let v = epsilon { c.epsilon = v }
        if let v = clip { c.clip = v }
        if let v = lrDecay { c.schedule.factor = v }
        if let v = lrDecayEvery { c.schedule.every = v == 0 ? nil : v }
        if let v = lrPlateauPatience { c.schedule.plateauPatience = v == 0 ? nil : v }
        if let v = steps { c.steps = v }
        if let v = checkpointEvery { c.checkpointEvery = v }
        if let v = checkpointDirectory { c.checkpointDirectory = v }
        if let v = keep { c.keep = v }
        if let v = logEvery { c.logEvery = v }
        if let v = evalEvery { c.evalEvery = v }
        if let v = inputNoise { c.inputNoise = v }
        if let v = inputNoiseGroups { c.inputNoiseGroups = v }
        if let v = inputNoiseDraw { c.inputNoiseDraw = v }
    }

    /// The configuration of a new run: defaults, then the options given.
    func newConfiguration() -> RunConfiguration {
        var c = RunConfiguration()
        if let v = hidden { c.hidden = v }
        if let v = unroll { c.unroll = v }
        if let v = batchSize { c.batchSize = v }
        if let v = optimizer { c.optimizer = v }
        if let v = initScheme { c.initScheme = v }
        if let v = seed { c.seed = v }
        c.initFrom = initFrom.map(absolutePath)
        applyMutable(to: &c)
        return c
    }

    /// The configuration of a resumed run: the checkpoint's, with the options
    /// that may change applied; an option that may not change and differs from
    /// the checkpoint is refused (giving the same value is accepted).
    func resumedConfiguration(from ckpt: Checkpoint, path: String) throws -> RunConfiguration {
        var c = ckpt.configuration
        func refuse<T: Equatable>(_ option: String, _ given: T?, _ stored: T, _ what: String) throws {
            if let given, given != stored {
                throw RunError.refusedOverride(option: option, requested: "\(given)", checkpoint: "\(what) \(stored)", path: path)
            }
        }
        try refuse("--hidden", hidden, c.hidden, "hidden size")
        try refuse("--unroll", unroll, c.unroll, "unroll")
        try refuse("--batch-size", batchSize, c.batchSize, "batch size")
        try refuse("--optimizer", optimizer?.rawValue, c.optimizer.rawValue, "optimizer")
        try refuse("--init", initScheme?.rawValue, c.initScheme.rawValue, "init")
        try refuse("--seed", seed, c.seed, "seed")
        if let f = initFrom {
            throw RunError.refusedOverride(option: "--init-from", requested: f,
                                           checkpoint: "weights at step \(ckpt.state.step)", path: path)
        }
        // Checkpoints of a resumed run go beside the one it resumed from unless told otherwise.
        c.checkpointDirectory = (path as NSString).deletingLastPathComponent
        if c.checkpointDirectory.isEmpty { c.checkpointDirectory = "." }
        applyMutable(to: &c)
        return c
    }
}

func absolutePath(_ p: String) -> String {
    URL(fileURLWithPath: p).standardizedFileURL.path
}
