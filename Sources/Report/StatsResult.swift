// The figures of `drummer stats` for two tallies (generated, reference), the targets
// and why a figure is n/a; rows for the terminal table and the report's table.
import Foundation
import MIDIParse

public struct StatsResult: Sendable {
    /// A figure of each side and generated / reference.
    public struct Pair: Equatable, Sendable {
        public var generated: Double?
        public var reference: Double?
        public var ratio: Double? {
            guard let g = generated, let r = reference, r != 0 else { return nil }
            return g / r
        }
    }

    /// The accent profiles: mean velocity per sixteenth of bars of `barTicks`.
    public struct Accent: Equatable, Sendable {
        public var barTicks: Int?
        public var generated: [Double?] = []
        public var reference: [Double?] = []
        public var correlation: Double?
        /// Hits with a velocity in bars of other lengths, left out of the profile.
        public var skippedGenerated = 0
        public var skippedReference = 0
    }

    /// One of the targets.
    public struct Target: Equatable, Sendable {
        /// The JSON key of the figure.
        public var key: String
        /// "≤ 0.03 bits", "≥ 80% of reference", ...
        public var text: String
        /// Nil when the figure is n/a.
        public var met: Bool?
        /// For a target that bounds a share of the reference's figure: how far the figure lies
        /// inside the bound, as the natural log of their ratio (0.02: it could move about 2%
        /// before it fails; negative: missed; ±∞ when decided without a ratio, against a
        /// reference figure of 0); nil for the other targets and when n/a.
        public var margin: Double? = nil
    }

    public var ticksPerQuarter: Int
    /// Grid tolerance in sixteenths.
    public var tolerance: Double
    public var quantize: Int?
    public var generated: GrooveTally
    public var reference: GrooveTally
    public var noteJS: Double?
    public var deltaJS: Double?
    public var velocityJS: Double?
    public var gridShare: Pair
    /// The grid share of onsets placed uniformly at random (see GrooveStats).
    public var gridUniform: Double
    /// Bar periodicity of the onset pattern (the target) and of each drum's pattern.
    public var periodicity: Pair
    public var periodicityPerDrum: Pair
    public var accent: Accent
    public var duplicateRate: Pair
    /// Hits the generated files should hold (--expected-hits), when given.
    public var expectedHits: Int?
    /// Why a figure is n/a, by JSON key.
    public var missing: [String: String] = [:]
    public var targets: [Target] = []
    /// Files the bar-structure figures left out, or why they are n/a.
    public var structureNotes: [String] = []
    /// Targets the reference cannot define though it was measured (its bars outside the fills
    /// hold no tom or crash: a bump without a size): not counted, met or missed.
    public var referenceUndefined: Set<String> = []

    /// Figures of `generated` against `reference` (tallies at the same resolution).
    public init(generated g: GrooveTally, reference r: GrooveTally, tolerance: Double, quantize: Int?, expectedHits: Int? = nil) {
        precondition(g.ticksPerQuarter == r.ticksPerQuarter, "both sides at one resolution")
        ticksPerQuarter = g.ticksPerQuarter
        self.tolerance = tolerance
        self.quantize = quantize
        generated = g
        reference = r
        self.expectedHits = expectedHits
        gridUniform = GrooveStats.uniformGridShare(ticksPerQuarter: g.ticksPerQuarter, quantize: quantize, tolerance: tolerance)

        let notes = HitHistograms.exact(g.noteCounts, r.noteCounts)
        noteJS = Histogram.jensenShannonBits(notes.0, notes.1)
        let deltas = HitHistograms.exact(g.deltaCounts, r.deltaCounts)
        deltaJS = Histogram.jensenShannonBits(deltas.0, deltas.1)
        if deltaJS == nil { missing["delta_js_bits"] = "no file with two hits on one side" }
        if let gv = g.velocityCounts, let rv = r.velocityCounts {
            velocityJS = Histogram.jensenShannonBits(Histogram(labels: [], counts: gv), Histogram(labels: [], counts: rv))
        } else {
            missing["velocity_js_bits"] = r.velocityCounts == nil ? "no velocities in the reference" : "no velocities in the generated files"
        }
        let noBars = r.grid == nil ? "no bar positions in the reference" : g.grid == nil ? "no bar positions in the generated files" : nil
        gridShare = Pair(generated: g.gridShare, reference: r.gridShare)
        periodicity = Pair(generated: g.periodicity?.r, reference: r.periodicity?.r)
        periodicityPerDrum = Pair(generated: g.periodicityPerDrum?.r, reference: r.periodicityPerDrum?.r)
        if let noBars {
            missing["grid16_share"] = noBars
            missing["bar_periodicity"] = noBars
            missing["bar_periodicity_per_drum"] = noBars
        } else {
            if periodicity.generated == nil || periodicity.reference == nil {
                missing["bar_periodicity"] = "no file of the " + (periodicity.generated == nil ? "generated files" : "reference")
                    + " spans more than a bar with onsets that vary"
            }
            if periodicityPerDrum.generated == nil || periodicityPerDrum.reference == nil {
                missing["bar_periodicity_per_drum"] = "no file of the " + (periodicityPerDrum.generated == nil ? "generated files" : "reference")
                    + " spans more than a bar with a drum that varies"
            }
        }
        duplicateRate = Pair(generated: g.duplicateRate, reference: r.duplicateRate)

        // The accent profile, over the bar length most of the reference's hits are in.
        accent = Accent()
        // No correlation, yet the target is missed: the generated profile flat, or the reference's
        // flat only where the generated files play.
        var accentMissed = false
        if let ga = g.accents, let ra = r.accents {
            let chosen = (ra.isEmpty ? ga : ra).max { a, b in a.value.hits != b.value.hits ? a.value.hits < b.value.hits : a.key > b.key }
            if let (barTicks, _) = chosen {
                let cells = GrooveStats.sixteenths(barTicks: barTicks, ticksPerQuarter: ticksPerQuarter)
                accent.barTicks = barTicks
                accent.generated = ga[barTicks]?.means ?? [Double?](repeating: nil, count: cells)
                accent.reference = ra[barTicks]?.means ?? [Double?](repeating: nil, count: cells)
                accent.skippedGenerated = ga.filter { $0.key != barTicks }.values.reduce(0) { $0 + $1.hits }
                accent.skippedReference = ra.filter { $0.key != barTicks }.values.reduce(0) { $0 + $1.hits }
                let both = zip(accent.generated, accent.reference).compactMap { a, b in a.flatMap { x in b.map { (x, $0) } } }
                accent.correlation = GrooveStats.pearson(both.map(\.0), both.map(\.1))
                if accent.correlation == nil {
                    // Constant by Pearson's own test.
                    func flat(_ v: [Double]) -> Bool { GrooveStats.pearson(v, v) == nil }
                    // A reference of one velocity over its whole profile (programmed beats) has no
                    // accents to follow: the target is not counted, whatever the generated files
                    // play (a model of such beats plays one velocity too, and could never meet
                    // it). A reference that has accents, flat only where the generated files
                    // play (they drop its ghost notes), is missed.
                    if both.count < 2 {
                        missing["accent_profile"] = "fewer than 2 positions with hits on both sides"
                    } else if flat(accent.reference.compactMap { $0 }) {
                        missing["accent_profile"] = "constant velocity in the reference: the target is not counted"
                        referenceUndefined.insert("accent_profile")
                    } else if flat(both.map(\.0)) {
                        missing["accent_profile"] = "constant velocity"
                        accentMissed = true
                    } else {
                        missing["accent_profile"] = "the reference's velocity is constant where the generated files play: its accents are missed"
                        accentMissed = true
                    }
                }
            } else {
                missing["accent_profile"] = "no hits with a velocity and a bar position"
            }
        } else {
            missing["accent_profile"] = [r.velocityCounts == nil ? "no velocities in the reference" : nil,
                                         r.grid == nil ? "no bar positions in the reference" : nil,
                                         g.velocityCounts == nil ? "no velocities in the generated files" : nil,
                                         g.grid == nil ? "no bar positions in the generated files" : nil]
                .compactMap { $0 }.joined(separator: "; ")
        }

        // The groove targets. A share of a reference figure of 0 has no ratio: the target is
        // then met by what the share allows of 0 (within: 0 alone; at least: anything from 0;
        // at most: 0 alone), and the note says why the ratio is null.
        func at(_ key: String, _ text: String, _ met: Bool?, margin: Double? = nil) {
            targets.append(Target(key: key, text: text, met: met, margin: margin))
        }
        func at(_ key: String, _ text: String, _ bound: (met: Bool, margin: Double)?) { at(key, text, bound?.met, margin: bound?.margin) }
        func log(_ x: Double) -> Double { x > 0 ? Foundation.log(x) : -.infinity }
        func decided(_ met: Bool) -> (met: Bool, margin: Double) { (met, met ? .infinity : -.infinity) }
        func within(_ p: Pair, _ tolerance: Double) -> (met: Bool, margin: Double)? {
            guard let g = p.generated, let r = p.reference else { return nil }
            if r == 0 { return decided(g == 0) }
            return (abs(g / r - 1) <= tolerance + 1e-12, min(log((1 + tolerance) * r / g), log(g / ((1 - tolerance) * r))))
        }
        func atLeast(_ p: Pair, _ share: Double) -> (met: Bool, margin: Double)? {
            guard let g = p.generated, let r = p.reference else { return nil }
            if r == 0 { return decided(g >= 0) }
            return (g / r >= share - 1e-12, log(g / r / share))
        }
        func atMost(_ p: Pair, _ share: Double) -> (met: Bool, margin: Double)? {
            guard let g = p.generated, let r = p.reference else { return nil }
            if r == 0 { return decided(g == 0) }
            return (g / r <= share + 1e-12, log(share / (g / r)))
        }
        for (key, p) in [("grid16_share", gridShare), ("bar_periodicity", periodicity)]
        where p.reference == 0 && p.generated != nil && missing[key] == nil {
            missing[key] = Self.zeroReference
        }
        at("note_js_bits", "≤ 0.03 bits", noteJS.map { $0 <= 0.03 })
        at("delta_js_bits", "≤ 0.03 bits", deltaJS.map { $0 <= 0.03 })
        at("velocity_js_bits", "≤ 0.05 bits", velocityJS.map { $0 <= 0.05 })
        at("grid16_share", "within 15% of reference", within(gridShare, 0.15))
        at("bar_periodicity", "≥ 80% of reference", atLeast(periodicity, 0.8))
        // A flat generated profile against a varied reference cannot correlate: not met.
        at("accent_profile", "correlation ≥ 0.8", accent.correlation.map { $0 >= 0.8 - 1e-12 } ?? (accentMissed ? false : nil))
        at("duplicate_onset_rate", "0", duplicateRate.generated.map { $0 == 0 })
        if let expectedHits { at("hits", "exactly \(expectedHits)", g.hits == expectedHits) }

        // The bar-structure targets and the touch targets.
        let gs = g.structure, rs = r.structure
        for lag in BarStructureSums.lags {
            at("bar_similarity_lag\(lag)", "≥ 80% of reference",
               atLeast(Pair(generated: gs.similarity(lag: lag), reference: rs.similarity(lag: lag)), 0.8))
        }
        at("patterns_per_16_bars", "≤ 130% of reference",
           atMost(Pair(generated: gs.patternsPer16Bars, reference: rs.patternsPer16Bars), 1.3))
        // A side whose bars outside the fills hold none of the figure (a share of 0) has no ratio:
        // its bump is whole. The generated files' meets a reference's bump up; against the
        // reference's, which has no size to meet half of, the sign decides: fill bars holding
        // more of it than the others meet it.
        for (key, what, g, r) in [("fill_tom_crash_ratio", "no tom or crash", gs.fillClassTargetRatio, rs.fillClassTargetRatio),
                                  ("fill_similarity_ratio", "no bar like the one before", gs.fillSimilarityTargetRatio, rs.fillSimilarityTargetRatio)] {
            for (side, ratio) in [("generated files'", g), ("reference's", r)] where ratio == .infinity {
                structureNotes.append("\(key): the \(side) bars outside the fills hold \(what) (a share of 0): no ratio"
                                      + (side == "reference's" ? "; met by fills that hold more of it than the other bars" : ", its bump whole"))
            }
            at(key, "the reference's bump: same sign, ≥ half", r == .infinity ? g.map { decided($0 > 1) } : Self.bump(g, r))
        }
        at("hits_per_bar", "within 10% of reference", within(Pair(generated: g.hitsPerBar, reference: r.hitsPerBar), 0.1))
        at("simultaneous_onset_share", "within 10% of reference",
           within(Pair(generated: gs.simultaneousShare, reference: rs.simultaneousShare), 0.1))
        at("velocity_mean", "within 10% of reference", within(Pair(generated: gs.velocityMean, reference: rs.velocityMean), 0.1))
        at("soft_hit_share", "within 10% of reference", within(Pair(generated: gs.softShare, reference: rs.softShare), 0.1))
        for (side, sums) in [("generated", gs), ("reference", rs)] where sums.filesNot44 > 0 {
            structureNotes.append("bar-structure figures: \(sums.filesNot44) of \(sums.filesNot44 + sums.files44) \(side) files "
                                  + "with bar positions have hits outside 4/4 bars and are left out of them")
        }
        if gs.files44 == 0 || rs.files44 == 0 {
            structureNotes.append("bar-structure figures: n/a (no file of the \(gs.files44 == 0 ? "generated files" : "reference") "
                                  + "has bar positions with every hit in 4/4 bars)")
        } else {
            // Figures a side's files are too short for: why each is null. The reference's are not
            // counted (a folder of 2-bar loops has no similarity 8 bars apart to meet; every
            // checkpoint missed it, and train -o could never meet the rule).
            for key in BarStructureSums.lags.filter({ rs.similarity(lag: $0) == nil }).map({ "bar_similarity_lag\($0)" })
                + (rs.patternsPer16Bars == nil ? ["patterns_per_16_bars"] : [])
                + (rs.fillClassTargetRatio == nil ? ["fill_tom_crash_ratio"] : [])
                + (rs.fillSimilarityTargetRatio == nil ? ["fill_similarity_ratio"] : []) {
                referenceUndefined.insert(key)
            }
            for (side, sums) in [("generated", gs), ("reference", rs)] {
                let files = side == "generated" ? "generated file" : "reference file"
                let uncounted = side == "reference" ? "; the target is not counted" : ""
                for lag in BarStructureSums.lags where sums.similarity(lag: lag) == nil {
                    structureNotes.append("bar_similarity_lag\(lag): n/a (no \(files) in 4/4 has \(lag + 1) bars or more)\(uncounted)")
                }
                if sums.patternsPer16Bars == nil {
                    structureNotes.append("patterns_per_16_bars: n/a (no \(files) in 4/4 holds a whole 16-bar window from its bar 1)\(uncounted)")
                }
                if sums.fillClassTargetRatio == nil || sums.fillSimilarityTargetRatio == nil {
                    structureNotes.append("fill ratios: n/a where null (no \(files) in 4/4 holds a whole 8-bar phrase from its bar 1 "
                                          + "with hits in its fill bars and the others)\(uncounted)")
                }
            }
        }
    }

    /// Whether a fill ratio's bump (ratio − 1) has the reference's sign and at least half its
    /// size, and its margin (the log of the bumps' ratio over one half; ±∞ against no bump).
    static func bump(_ generated: Double?, _ reference: Double?) -> (met: Bool, margin: Double)? {
        guard let g = generated, let r = reference else { return nil }
        let bg = g - 1, br = r - 1
        if abs(br) < 1e-12 { return abs(bg) < 1e-12 ? (true, .infinity) : (false, -.infinity) }
        let share = bg / br
        return (bg.sign == br.sign && abs(bg) >= 0.5 * abs(br) - 1e-12, share > 0 ? Foundation.log(share / 0.5) : -.infinity)
    }

    public func target(_ key: String) -> Target? { targets.first { $0.key == key } }

    /// The keys of the groove targets and of the bar-structure ones.
    public static let grooveTargets = ["note_js_bits", "delta_js_bits", "velocity_js_bits", "grid16_share", "bar_periodicity",
                                       "accent_profile", "duplicate_onset_rate", "hits"]
    public static let structureTargets = ["bar_similarity_lag1", "bar_similarity_lag2", "bar_similarity_lag4", "bar_similarity_lag8",
                                          "patterns_per_16_bars", "fill_tom_crash_ratio", "fill_similarity_ratio"]
    /// The touch targets: hits per bar, simultaneous onsets, mean velocity, soft hits.
    public static let touchTargets = ["hits_per_bar", "simultaneous_onset_share", "velocity_mean", "soft_hit_share"]

    /// "figure: reason" for every n/a figure, in table order.
    /// `missing`'s reason for a groove target's ratio when the reference's figure is 0.
    static let zeroReference = "the reference's figure is 0: no ratio"

    public var notes: [String] {
        let order = ["delta_js_bits", "velocity_js_bits", "grid16_share", "bar_periodicity", "accent_profile"]
        return order.compactMap { k in
            missing[k].map { reason in
                // A reference figure of 0 leaves the ratio n/a, not the target: say how it is decided.
                if reason == Self.zeroReference {
                    return "\(k): no ratio (the reference's figure is 0); the target is decided on 0: "
                        + (k == "grid16_share" ? "within 15% of 0 is 0 alone" : "at least 80% of 0 is any figure")
                }
                return "\(k): n/a (\(reason))" + (reason == "constant velocity"
                    ? ": every position of the generated accent profile has the same mean velocity (a model without "
                      + "velocities, such as the 2017 layout, writes every hit at 100); the target counts as not met" : "")
            }
        } + structureNotes
    }
}

// MARK: Rows

/// One line of the figures table.
public struct StatsRow: Equatable, Sendable {
    public var figure: String
    public var generated: String
    public var reference: String
    public var comparison: String
    public var target: String
    /// "✓", "✗" or "" (no target, or n/a).
    public var mark: String
}

extension StatsResult {
    public var rows: [StatsRow] {
        func row(_ figure: String, _ g: String, _ r: String, _ comparison: String = "", key: String? = nil) -> StatsRow {
            let t = key.flatMap { target($0) }
            return StatsRow(figure: figure, generated: g, reference: r, comparison: comparison, target: t?.text ?? "",
                            mark: t?.met.map { $0 ? "✓" : "✗" } ?? "")
        }
        func na(_ key: String) -> String { "n/a" + (missing[key].map { " (\($0))" } ?? "") }
        func js(_ v: Double?, _ key: String) -> String { v.map { String(format: "JS %.4f bits", $0) } ?? na(key) }
        func ratio(_ p: Pair, _ key: String) -> String {
            // One decimal: a ratio rounded to a whole percent could read as its target's bound
            // (89.6% printed as 90% beside "within 10%" and its ✗).
            p.ratio.map { String(format: "%.1f%% of reference", 100 * $0) } ?? na(key)
        }
        let f3 = { (v: Double?) in v.map { String(format: "%.3f", $0) } ?? "n/a" }
        return [
            row("files", Self.grouped(generated.files), Self.grouped(reference.files)),
            row("hits", Self.grouped(generated.hits), Self.grouped(reference.hits), key: "hits"),
            row("bars", generated.bars.map(Self.grouped) ?? "n/a", reference.bars.map(Self.grouped) ?? "n/a"),
            row("hits per bar", generated.hitsPerBar.map { String(format: "%.2f", $0) } ?? "n/a",
                reference.hitsPerBar.map { String(format: "%.2f", $0) } ?? "n/a",
                ratio(Pair(generated: generated.hitsPerBar, reference: reference.hitsPerBar), "hits_per_bar"), key: "hits_per_bar"),
            row("note histogram", "", "", js(noteJS, "note_js_bits"), key: "note_js_bits"),
            row("delta histogram", "", "", js(deltaJS, "delta_js_bits"), key: "delta_js_bits"),
            row("velocity histogram", "", "", js(velocityJS, "velocity_js_bits"), key: "velocity_js_bits"),
            row("share on 16th grid", f3(gridShare.generated), f3(gridShare.reference), ratio(gridShare, "grid16_share"), key: "grid16_share"),
            row("  uniform random", String(format: "%.3f", gridUniform), "",
                gridShare.reference.map { String(format: "%.0f%% of reference", 100 * gridUniform / $0) } ?? ""),
            row("bar periodicity", f3(periodicity.generated), f3(periodicity.reference), ratio(periodicity, "bar_periodicity"),
                key: "bar_periodicity"),
            row("  per drum", f3(periodicityPerDrum.generated), f3(periodicityPerDrum.reference),
                ratio(periodicityPerDrum, "bar_periodicity_per_drum")),
            row("accent correlation", "", "",
                accent.correlation.map { String(format: "r = %.3f", $0) } ?? na("accent_profile"), key: "accent_profile"),
            row("duplicate-onset rate", duplicateRate.generated.map(Self.percent) ?? "n/a",
                duplicateRate.reference.map(Self.percent) ?? "n/a", key: "duplicate_onset_rate"),
        ] + structureRows
    }

    /// Jensen–Shannon divergence (bits) between the two sides' class mixes: how their hits with
    /// a bar position divide among the 9 drum classes (nil when a side has none).
    public var classMixJS: Double? {
        Histogram.jensenShannonBits(Histogram(labels: [], counts: generated.structure.classHits),
                                    Histogram(labels: [], counts: reference.structure.classHits))
    }

    /// The rows of bar structure, phrasing, touch and grid share per drum class.
    var structureRows: [StatsRow] {
        let g = generated.structure, r = reference.structure
        func row(_ figure: String, _ gv: String, _ rv: String, _ comparison: String = "", key: String? = nil) -> StatsRow {
            let t = key.flatMap { target($0) }
            return StatsRow(figure: figure, generated: gv, reference: rv, comparison: comparison, target: t?.text ?? "",
                            mark: t?.met.map { $0 ? "✓" : "✗" } ?? "")
        }
        let f3 = { (v: Double?) in v.map { String(format: "%.3f", $0) } ?? "n/a" }
        let f2 = { (v: Double?) in v.map { String(format: "%.2f", $0) } ?? "n/a" }
        let pct = { (v: Double?) in v.map(Self.percent) ?? "n/a" }
        func ratio(_ a: Double?, _ b: Double?) -> String {
            Pair(generated: a, reference: b).ratio.map { String(format: "%.0f%% of reference", 100 * $0) } ?? "n/a"
        }
        func bump(_ a: Double?, _ b: Double?) -> String {
            guard let a, let b else { return "n/a" }
            return String(format: "bump %+.2f vs %+.2f", a - 1, b - 1)
        }
        var rows = [
            row("bar figures: files in 4/4", "\(Self.grouped(g.files44)) of \(Self.grouped(g.files44 + g.filesNot44))",
                "\(Self.grouped(r.files44)) of \(Self.grouped(r.files44 + r.filesNot44))"),
        ]
        for lag in BarStructureSums.lags {
            rows.append(row("bar similarity, lag \(lag)", f3(g.similarity(lag: lag)), f3(r.similarity(lag: lag)),
                            ratio(g.similarity(lag: lag), r.similarity(lag: lag)), key: "bar_similarity_lag\(lag)"))
        }
        rows += [
            row("patterns per 16 bars", f2(g.patternsPer16Bars), f2(r.patternsPer16Bars),
                ratio(g.patternsPer16Bars, r.patternsPer16Bars), key: "patterns_per_16_bars"),
            row("fill bars 4, 8 / 2, 3, 6, 7: hits", f3(g.fillHitsRatio), f3(r.fillHitsRatio), bump(g.fillHitsRatio, r.fillHitsRatio)),
            row("  tom + crash share", f3(g.fillClassRatio), f3(r.fillClassRatio), bump(g.fillClassRatio, r.fillClassRatio),
                key: "fill_tom_crash_ratio"),
            row("  similarity to previous bar", f3(g.fillSimilarityRatio), f3(r.fillSimilarityRatio),
                bump(g.fillSimilarityRatio, r.fillSimilarityRatio), key: "fill_similarity_ratio"),
            row("simultaneous onsets", pct(g.simultaneousShare), pct(r.simultaneousShare),
                ratio(g.simultaneousShare, r.simultaneousShare), key: "simultaneous_onset_share"),
            row("mean velocity", f2(g.velocityMean), f2(r.velocityMean), ratio(g.velocityMean, r.velocityMean), key: "velocity_mean"),
            row("soft hits (velocity < 50)", pct(g.softShare), pct(r.softShare), ratio(g.softShare, r.softShare), key: "soft_hit_share"),
            row("hi-hat velocity s.d. in a bar", f2(g.hatVelocitySpread), f2(r.hatVelocitySpread),
                ratio(g.hatVelocitySpread, r.hatVelocitySpread)),
            row("loudness drift (s.d. of bar means)", f2(g.loudnessDrift), f2(r.loudnessDrift), ratio(g.loudnessDrift, r.loudnessDrift)),
        ]
        /// One row per class measured on either side, the first naming the figure.
        func byClass(_ figure: String, measured: (Int) -> Bool, _ value: (BarStructureSums, Int) -> Double?,
                     _ format: (Double?) -> String) {
            for (i, c) in (0..<DrumClasses.count).filter(measured).enumerated() {
                rows.append(row(i == 0 ? "\(figure), by class: \(DrumClasses.names[c])" : "  \(DrumClasses.names[c])",
                                format(value(g, c)), format(value(r, c)), ratio(value(g, c), value(r, c))))
            }
        }
        rows.append(row("class mix (hits by drum class)", "", "",
                        classMixJS.map { String(format: "JS %.4f bits", $0) } ?? "n/a"))
        byClass("share of hits", measured: { g.classHits[$0] + r.classHits[$0] > 0 }, { $0.hitShare(drumClass: $1) }, pct)
        byClass("mean velocity", measured: { g.classVelocityHits[$0] + r.classVelocityHits[$0] > 0 },
                { $0.velocityMean(drumClass: $1) }, f2)
        byClass("on 16th grid", measured: { g.classHits[$0] + r.classHits[$0] > 0 }, { $0.gridShare(drumClass: $1) }, f3)
        return rows
    }

    /// 12,345
    static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    static func percent(_ v: Double) -> String { String(format: "%.2f%%", 100 * v) }

    /// The profile's position names: 1 e & a 2 e & a ...
    public var accentLabels: [String] {
        DrumTab.countLabels(cells: accent.generated.count, denominator: 4, grid: 16)
    }
}
