// The allowed range of every training setting, in one place. The CLI checks the
// options it was given with these rules (before anything is loaded), and
// `RunConfiguration.validate()` checks a whole configuration with the same rules
// (a new run, a resumed one, or one read back from a checkpoint).
import DrummerCore

/// A setting outside its range, naming the command-line option.
public struct SettingError: Error, CustomStringConvertible, Equatable, Sendable {
    public let option: String
    public let message: String
    public init(option: String, message: String) {
        self.option = option
        self.message = message
    }
    public var description: String { "\(option) \(message)" }
}

public enum SettingRules {
    /// Longest chunk and most streams accepted (the memory they need is checked separately,
    /// against the machine: `Trainer.checkWorkspace`).
    public static let maximumUnroll = 100_000
    public static let maximumBatchSize = 65_536

    public static func hidden(_ v: Int) throws { try within(1, ModelLimits.maximumHidden, v, "--hidden") }
    public static func unroll(_ v: Int) throws { try within(1, maximumUnroll, v, "--unroll") }
    public static func batchSize(_ v: Int) throws { try within(1, maximumBatchSize, v, "--batch-size") }
    public static func steps(_ v: Int) throws {
        guard v >= 0 else { throw SettingError(option: "--steps", message: "must not be negative, got \(v)") }
    }
    public static func checkpointEvery(_ v: Int) throws { try atLeast(1, v, "--checkpoint-every") }
    public static func keep(_ v: Int) throws { try atLeast(1, v, "--keep") }
    public static func logEvery(_ v: Int) throws { try atLeast(1, v, "--log-every") }
    public static func evalEvery(_ v: Int) throws { try atLeast(1, v, "--eval-every") }
    public static func checkpointDirectory(_ v: String) throws {
        guard !v.isEmpty else { throw SettingError(option: "--checkpoint-dir", message: "must not be empty") }
    }

    public static func learningRate(_ v: Float) throws { try positive(v, "--lr") }
    public static func clip(_ v: Float) throws { try positive(v, "--clip") }
    /// RMSProp's epsilon sits under the square root beside ms, which can reach 0: it must be > 0.
    public static func epsilon(_ v: Float) throws { try positive(v, "--epsilon") }
    public static func momentum(_ v: Float) throws { try unitInterval(v, "--momentum") }
    public static func decay(_ v: Float) throws { try unitInterval(v, "--decay") }

    /// --input-noise P in [0, 1).
    public static func inputNoise(_ v: Float) throws {
        guard v.isFinite, v >= 0, v < 1 else {
            throw SettingError(option: "--input-noise", message: "must be at least 0 and below 1, got \(v)")
        }
    }
    /// --input-noise-groups: one or more group names (which the model has is checked against it).
    public static func inputNoiseGroups(_ v: [String]) throws {
        guard !v.isEmpty, !v.contains(where: \.isEmpty) else {
            throw SettingError(option: "--input-noise-groups", message: "must name one or more input groups, e.g. note,velocity")
        }
    }

    /// --lr-decay F in (0, 1].
    public static func lrDecay(_ v: Float) throws {
        guard v.isFinite, v > 0, v <= 1 else {
            throw SettingError(option: "--lr-decay", message: "must be in (0, 1], got \(v)")
        }
    }
    /// --lr-decay-every and --lr-plateau-patience: 0 (off) or a count.
    public static func lrDecayEvery(_ v: Int) throws { try notNegative(v, "--lr-decay-every") }
    public static func lrPlateauPatience(_ v: Int) throws { try notNegative(v, "--lr-plateau-patience") }

    // MARK: shapes of rules

    static func within(_ low: Int, _ high: Int, _ v: Int, _ option: String) throws {
        guard v >= low, v <= high else {
            throw SettingError(option: option, message: "must be between \(low) and \(high), got \(v)")
        }
    }
    static func atLeast(_ low: Int, _ v: Int, _ option: String) throws {
        guard v >= low else { throw SettingError(option: option, message: "must be at least \(low), got \(v)") }
    }
    static func notNegative(_ v: Int, _ option: String) throws {
        guard v >= 0 else { throw SettingError(option: option, message: "must not be negative (0 = off), got \(v)") }
    }
    static func positive(_ v: Float, _ option: String) throws {
        guard v.isFinite, v > 0 else { throw SettingError(option: option, message: "must be a positive number, got \(v)") }
    }
    static func unitInterval(_ v: Float, _ option: String) throws {
        guard v.isFinite, v >= 0, v < 1 else { throw SettingError(option: option, message: "must be in [0, 1), got \(v)") }
    }
}
