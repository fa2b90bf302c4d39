// Choosing which checkpoint to ship by what its samples play (`drummer choose-step`): each
// candidate's sampled files measured against the reference (StatsRun), then one rule.
//
// Why not the validation loss alone: it scores one-step predictions on true inputs, while
// issue 10's figures score what the model plays on its own, and the bar periodicity of a
// sampled model swings from checkpoint to checkpoint of one run by more than any training
// recipe moves it (57–98% over 40 checkpoints on Groove; models/groove-events/TRAINING.md).
//
// The rule: every issue-10 target met, each with a margin (so that a new sample of files
// still meets it), and among those the highest bar periodicity (the earlier step on a tie).

/// One candidate's figures.
public struct StepFigures: Sendable, Equatable {
    public var step: Int
    public var path: String
    /// Bar periodicity as a share of the reference's.
    public var periodicity: Double?
    public var noteJS: Double?
    public var deltaJS: Double?
    public var velocityJS: Double?
    /// Share of onsets on the 16th grid as a share of the reference's.
    public var grid: Double?
    public var accent: Double?
    /// Every issue-10 target of `drummer stats` met (one that cannot be measured counts as not met).
    public var targetsMet: Bool
    /// Bar similarity at lags 1, 2, 4, 8, each as a share of the reference's, averaged.
    public var similarity: Double? = nil
    /// Patterns per 16 bars as a share of the reference's.
    public var patterns: Double? = nil
    /// Every bar-structure target of issue 20 met (similarity at each lag, patterns, the fills).
    public var structureMet = false
    /// The keys of the `drummer stats` targets not met (issue 10's, and issue 20's bar-structure
    /// and touch targets), in table order.
    public var missed: [String] = []
    /// The fill's tom + crash bump (ratio − 1) as a share of the reference's (the target: ≥ 0.5).
    public var fillBump: Double? = nil
    /// Hits per bar and mean velocity as shares of the reference's.
    public var hitsPerBar: Double? = nil
    public var velocity: Double? = nil
    /// Every touch target of issue 20 met (hits per bar, simultaneous onsets, mean velocity,
    /// soft hits, each within 10% of the reference's).
    public var touchMet = false

    public init(step: Int, path: String, periodicity: Double?, noteJS: Double?, deltaJS: Double?,
                velocityJS: Double?, grid: Double?, accent: Double?, targetsMet: Bool) {
        self.step = step
        self.path = path
        self.periodicity = periodicity
        self.noteJS = noteJS
        self.deltaJS = deltaJS
        self.velocityJS = velocityJS
        self.grid = grid
        self.accent = accent
        self.targetsMet = targetsMet
    }

    public init(step: Int, path: String, result r: StatsResult) {
        func met(_ keys: [String]) -> Bool { keys.allSatisfy { r.target($0)?.met == true } }
        self.init(step: step, path: path, periodicity: r.periodicity.ratio, noteJS: r.noteJS, deltaJS: r.deltaJS,
                  velocityJS: r.velocityJS, grid: r.gridShare.ratio, accent: r.accent.correlation,
                  targetsMet: met(StatsResult.issue10Targets.filter { $0 != "hits" || r.expectedHits != nil }))
        let g = r.generated.structure, ref = r.reference.structure
        let lags = BarStructureSums.lags.compactMap { lag in
            StatsResult.Pair(generated: g.similarity(lag: lag), reference: ref.similarity(lag: lag)).ratio
        }
        similarity = lags.count == BarStructureSums.lags.count ? lags.reduce(0, +) / Double(lags.count) : nil
        patterns = StatsResult.Pair(generated: g.patternsPer16Bars, reference: ref.patternsPer16Bars).ratio
        fillBump = StatsResult.Pair(generated: g.fillClassRatio.map { $0 - 1 }, reference: ref.fillClassRatio.map { $0 - 1 }).ratio
        structureMet = met(StatsResult.structureTargets)
        touchMet = met(StatsResult.touchTargets)
        let counted = Set(StatsResult.issue10Targets + StatsResult.structureTargets + StatsResult.touchTargets)
        missed = r.targets.filter { counted.contains($0.key) && $0.met != true && ($0.key != "hits" || r.expectedHits != nil) }.map(\.key)
        hitsPerBar = StatsResult.Pair(generated: r.generated.hitsPerBar, reference: r.reference.hitsPerBar).ratio
        velocity = StatsResult.Pair(generated: g.velocityMean, reference: ref.velocityMean).ratio
    }
}

public enum StepRule {
    static let minimumPeriodicity = 0.85
    static let maximumNoteJS = 0.025
    static let maximumDeltaJS = 0.025
    static let maximumVelocityJS = 0.04
    static let maximumGridDeviation = 0.10
    static let minimumAccent = 0.85

    public static let description = "every issue-10 target met, with margins: bar periodicity >= 85% of the reference's, "
        + "note and delta JS <= 0.025 bits, velocity JS <= 0.04 bits, grid share within 10% of the reference's, "
        + "accent r >= 0.85; then the highest periodicity"

    /// The rule with `--structure`: issue 20's bar-structure targets too, ranked by similarity.
    public static let structureDescription = "with --structure also issue 20's targets (similarity at lags 1, 2, 4, 8 "
        + ">= 80% of the reference's, patterns per 16 bars <= 130%, the fill bumps, hits per bar, simultaneous onsets, "
        + "mean velocity and soft-hit share within 10%); then the highest mean similarity"

    /// Whether `f` meets every target with the margins (and, with `structure`, issue 20's
    /// bar-structure targets).
    public static func meets(_ f: StepFigures, structure: Bool = false) -> Bool {
        guard f.targetsMet, let p = f.periodicity, let n = f.noteJS, let d = f.deltaJS, let v = f.velocityJS,
              let g = f.grid, let a = f.accent else { return false }
        if structure, !f.structureMet || !f.touchMet { return false }
        return p >= minimumPeriodicity && n <= maximumNoteJS && d <= maximumDeltaJS && v <= maximumVelocityJS
            && abs(g - 1) <= maximumGridDeviation && a >= minimumAccent
    }

    /// The candidate that misses the fewest targets (`missed`), the highest mean bar similarity
    /// on a tie, then the earlier step; nil for none. (`choose-step --closest` when none meets
    /// the rule.)
    public static func closest(_ candidates: [StepFigures]) -> Int? {
        var best: Int?
        for (i, f) in candidates.enumerated() {
            guard let b = best else { best = i; continue }
            let g = candidates[b]
            if f.missed.count < g.missed.count
                || (f.missed.count == g.missed.count && (f.similarity ?? 0) > (g.similarity ?? 0)) { best = i }
        }
        return best
    }

    /// The index of the candidate to ship: of those that meet the rule, the highest periodicity
    /// (with `structure`: the highest mean bar similarity), the earliest step on a tie; nil when
    /// none does.
    public static func choose(_ candidates: [StepFigures], structure: Bool = false) -> Int? {
        func key(_ f: StepFigures) -> Double { (structure ? f.similarity : f.periodicity) ?? 0 }
        var best: Int?
        for (i, f) in candidates.enumerated() where meets(f, structure: structure) {
            guard let b = best else { best = i; continue }
            let (p, q) = (key(f), key(candidates[b]))
            if p > q || (p == q && f.step < candidates[b].step) { best = i }
        }
        return best
    }
}
