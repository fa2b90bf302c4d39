// The learning-rate schedule: the base rate times `factor` raised to the number
// of decays so far. Decays come from two sources, usable together:
//   step decay     one decay every `every` steps (`--lr-decay F --lr-decay-every N`):
//                  rate(step) = lr · F^⌊step / N⌋
//   plateau decay  one decay when the monitored loss (validation loss when a
//                  validation set exists, else the smoothed training loss) has not
//                  improved for `patience` evaluations in a row (`--lr-decay F
//                  --lr-plateau-patience P`); the count restarts after each decay.
// The plateau counters live in `ScheduleProgress`, saved in every checkpoint, so
// a resumed run follows the same schedule.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct LearningRateSchedule: Sendable, Equatable {
    /// Multiplier applied at each decay (1 = no schedule).
    public var factor: Float
    /// Decay every this many steps; nil disables step decay.
    public var every: Int?
    /// Decay after this many evaluations without improvement; nil disables plateau decay.
    public var plateauPatience: Int?

    public init(factor: Float = 1, every: Int? = nil, plateauPatience: Int? = nil) {
        self.factor = factor
        self.every = every
        self.plateauPatience = plateauPatience
    }

    package var isActive: Bool { factor != 1 && (every != nil || plateauPatience != nil) }

    public func validate() throws {
        try Settings.lrDecay.validate(factor)
        // nil is off (0 on the command line); a stored count must be a real one.
        if let e = every { try SettingRules.atLeast(1, e, "--lr-decay-every") }
        if let p = plateauPatience { try SettingRules.atLeast(1, p, "--lr-plateau-patience") }
        if factor != 1, every == nil, plateauPatience == nil {
            throw SettingError(option: "--lr-decay", message: "needs --lr-decay-every N and/or --lr-plateau-patience P")
        }
    }

    /// The rate for the update that takes the model from `step` to `step + 1`.
    public func rate(base: Float, step: Int, progress: ScheduleProgress) -> Float {
        var decays = progress.plateauDecays
        if let e = every { decays += step / e }
        guard decays > 0, factor != 1 else { return base }
        return base * powf(factor, Float(decays))
    }

    /// Records one evaluation of the monitored loss; returns true when it caused a decay.
    @discardableResult
    public func observe(loss: Double, progress: inout ScheduleProgress) -> Bool {
        if loss < progress.bestMonitored {
            progress.bestMonitored = loss
            progress.badEvaluations = 0
            return false
        }
        progress.badEvaluations += 1
        guard let p = plateauPatience, progress.badEvaluations >= p else { return false }
        progress.plateauDecays += 1
        progress.badEvaluations = 0
        return true
    }
}

/// Plateau bookkeeping of a run (stored in checkpoints).
public struct ScheduleProgress: Sendable, Equatable {
    public var plateauDecays: Int
    public var badEvaluations: Int
    public var bestMonitored: Double

    public init(plateauDecays: Int = 0, badEvaluations: Int = 0, bestMonitored: Double = .infinity) {
        self.plateauDecays = plateauDecays
        self.badEvaluations = badEvaluations
        self.bestMonitored = bestMonitored
    }
}
