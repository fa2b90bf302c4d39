// Choosing which checkpoint to ship by what its samples play (`drummer choose-step`): each
// candidate's sampled files measured against the reference (StatsRun), then one rule.
//
// Why not the validation loss alone: it scores one-step predictions on true inputs, while
// the groove figures score what the model plays on its own, and the bar periodicity of a
// sampled model swings from checkpoint to checkpoint of one run by more than any training
// recipe moves it (57–98% over 40 checkpoints on Groove; docs/research.md).
//
// The rule: every groove target met, each with a margin (so that a new sample of files
// still meets it), and among those the highest bar periodicity (the earlier step on a tie).
// With --structure, the bar-structure and touch targets too, and among those that meet them
// the widest margin: the checkpoint whose nearest such target is furthest from its limit.
// (Ranking by bar similarity, as before, rewarded repeating more than the corpus does and chose
// checkpoints that met a target by a hair on 300 files and missed it on 1,000 others.)

import Foundation

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
    /// Every groove target of `drummer stats` met (one that cannot be measured counts as not met).
    public var targetsMet: Bool
    /// Bar similarity at lags 1, 2, 4, 8, each as a share of the reference's, averaged.
    public var similarity: Double? = nil
    /// Patterns per 16 bars as a share of the reference's.
    public var patterns: Double? = nil
    /// Every bar-structure target met (similarity at each lag, patterns, the fills).
    public var structureMet = false
    /// The keys of the `drummer stats` targets not met (the groove, bar-structure and touch
    /// targets), in table order.
    public var missed: [String] = []
    /// The fill's tom + crash bump (ratio − 1) as a share of the reference's (the target: ≥ 0.5).
    public var fillBump: Double? = nil
    /// Hits per bar and mean velocity as shares of the reference's.
    public var hitsPerBar: Double? = nil
    public var velocity: Double? = nil
    /// Every touch target met (hits per bar, simultaneous onsets, mean velocity,
    /// soft hits, each within 10% of the reference's).
    public var touchMet = false
    /// The smallest margin of the bar-structure and touch targets: for each, how far its
    /// figure is from the target's limit, as the natural log of their ratio (0.02: the figure
    /// could move about 2% before it fails; negative: missed); nil when one cannot be measured.
    public var margin: Double? = nil
    /// Targets the reference cannot define, neither met nor missed (StatsResult.referenceUndefined).
    public var notCounted: Set<String> = []

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
        // A target the reference cannot define is neither met nor missed (StatsResult.referenceUndefined).
        func met(_ keys: [String]) -> Bool { keys.allSatisfy { r.target($0)?.met == true || r.referenceUndefined.contains($0) } }
        self.init(step: step, path: path, periodicity: r.periodicity.ratio, noteJS: r.noteJS, deltaJS: r.deltaJS,
                  velocityJS: r.velocityJS, grid: r.gridShare.ratio, accent: r.accent.correlation,
                  targetsMet: met(StatsResult.grooveTargets.filter { $0 != "hits" || r.expectedHits != nil }))
        let g = r.generated.structure, ref = r.reference.structure
        let lags = BarStructureSums.lags.compactMap { lag in
            StatsResult.Pair(generated: g.similarity(lag: lag), reference: ref.similarity(lag: lag)).ratio
        }
        similarity = lags.count == BarStructureSums.lags.count ? lags.reduce(0, +) / Double(lags.count) : nil
        patterns = StatsResult.Pair(generated: g.patternsPer16Bars, reference: ref.patternsPer16Bars).ratio
        fillBump = StatsResult.Pair(generated: g.fillClassRatio.map { $0 - 1 }, reference: ref.fillClassRatio.map { $0 - 1 }).ratio
        structureMet = met(StatsResult.structureTargets)
        touchMet = met(StatsResult.touchTargets)
        let counted = Set(StatsResult.grooveTargets + StatsResult.structureTargets + StatsResult.touchTargets)
        missed = r.targets.filter { counted.contains($0.key) && $0.met != true && !r.referenceUndefined.contains($0.key)
            && ($0.key != "hits" || r.expectedHits != nil) }.map(\.key)
        hitsPerBar = StatsResult.Pair(generated: r.generated.hitsPerBar, reference: r.reference.hitsPerBar).ratio
        velocity = StatsResult.Pair(generated: g.velocityMean, reference: ref.velocityMean).ratio
        margin = Self.margin(r)
        notCounted = r.referenceUndefined
    }

    /// The smallest of the bar-structure and touch targets' margins (`margin`), of those the
    /// reference defines; nil when one of them cannot be measured.
    static func margin(_ r: StatsResult) -> Double? {
        let margins = (StatsResult.structureTargets + StatsResult.touchTargets)
            .filter { !r.referenceUndefined.contains($0) }.map { r.target($0)?.margin }
        guard margins.allSatisfy({ $0 != nil && !$0!.isNaN }) else { return nil }
        return margins.compactMap { $0 }.min()
    }
}

public enum StepRule {
    static let minimumPeriodicity = 0.85
    static let maximumNoteJS = 0.025
    static let maximumDeltaJS = 0.025
    static let maximumVelocityJS = 0.04
    static let maximumGridDeviation = 0.10
    static let minimumAccent = 0.85

    public static let description = "every groove target met, with margins: bar periodicity >= 85% of the reference's, "
        + "note and delta JS <= 0.025 bits, velocity JS <= 0.04 bits, grid share within 10% of the reference's, "
        + "accent r >= 0.85; then the highest periodicity"

    /// The rule with `--structure`: the bar-structure and touch targets too, ranked by margin.
    public static let structureDescription = "with --structure also the bar-structure and touch targets "
        + "(similarity at lags 1, 2, 4, 8 >= 80% of the reference's, patterns per 16 bars <= 130%, the fill bumps, "
        + "hits per bar, simultaneous onsets, mean velocity and soft-hit share within 10%); then the widest margin "
        + "(the checkpoint whose nearest such target is furthest from its limit)"

    /// Whether `f` meets every target with the margins (and, with `structure`, the bar-structure
    /// and touch targets).
    public static func meets(_ f: StepFigures, structure: Bool = false) -> Bool {
        guard f.targetsMet, let p = f.periodicity, let n = f.noteJS, let d = f.deltaJS, let v = f.velocityJS,
              let g = f.grid else { return false }
        if structure, !f.structureMet || !f.touchMet { return false }
        // The accent's margin, unless the reference has no accents (one velocity).
        let accent = f.notCounted.contains("accent_profile") || (f.accent.map { $0 >= minimumAccent } ?? false)
        return p >= minimumPeriodicity && n <= maximumNoteJS && d <= maximumDeltaJS && v <= maximumVelocityJS
            && abs(g - 1) <= maximumGridDeviation && accent
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
    /// (with `structure`: the widest margin of the bar-structure and touch targets), the earliest
    /// step on a tie; nil when none does.
    public static func choose(_ candidates: [StepFigures], structure: Bool = false) -> Int? {
        func key(_ f: StepFigures) -> Double { (structure ? f.margin : f.periodicity) ?? -.infinity }
        var best: Int?
        for (i, f) in candidates.enumerated() where meets(f, structure: structure) {
            guard let b = best else { best = i; continue }
            let (p, q) = (key(f), key(candidates[b]))
            if p > q || (p == q && f.step < candidates[b].step) { best = i }
        }
        return best
    }
}
