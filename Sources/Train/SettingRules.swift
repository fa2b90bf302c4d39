// The shapes of the settings' range rules (the ranges themselves are in Settings.swift,
// one per setting) and the error naming the command-line option.
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
    static let maximumUnroll = 100_000
    static let maximumBatchSize = 65_536

    // MARK: shapes of rules (the settings table's `check`s; `option` is the flag)

    public static func within(_ low: Int, _ high: Int, _ v: Int, _ option: String) throws {
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
    public static func positive(_ v: Float, _ option: String) throws {
        guard v.isFinite, v > 0 else { throw SettingError(option: option, message: "must be a positive number, got \(v)") }
    }
    /// A finite number not below 0 (0 = off).
    static func notNegative(_ v: Float, _ option: String) throws {
        guard v.isFinite, v >= 0 else { throw SettingError(option: option, message: "must not be negative (0 = off), got \(v)") }
    }
    /// A probability that may be 0 (off) but not 1.
    static func probability(_ v: Float, _ option: String) throws {
        guard v.isFinite, v >= 0, v < 1 else {
            throw SettingError(option: option, message: "must be at least 0 and below 1, got \(v)")
        }
    }
    public static func unitInterval(_ v: Float, _ option: String) throws {
        guard v.isFinite, v >= 0, v < 1 else { throw SettingError(option: option, message: "must be in [0, 1), got \(v)") }
    }
    /// A decay factor in (0, 1].
    public static func lrDecay(_ v: Float, _ option: String) throws {
        guard v.isFinite, v > 0, v <= 1 else {
            throw SettingError(option: option, message: "must be in (0, 1], got \(v)")
        }
    }
}
