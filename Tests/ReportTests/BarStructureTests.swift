import Foundation
import MIDIParse
import XCTest
@testable import Report

/// The bar-structure figures on hand-made tracks, against values worked out by hand.
final class BarStructureTests: XCTestCase {
    /// (drum note, sixteenth) per bar, 4/4 at 480 PPQ.
    typealias BarHits = [(note: Int, cell: Int)]
    // A: kick on 1, snare on 2, hats on 1 and its &: {(0,0), (1,4), (2,0), (2,2)}.
    let a: BarHits = [(36, 0), (42, 0), (42, 2), (38, 4)]
    // B: kick on 1, snare on 2, crash on 1: {(0,0), (1,4), (7,0)}. J(A, B) = 2 / 5.
    let b: BarHits = [(36, 0), (49, 0), (38, 4)]
    // F, a fill: low tom, mid tom, crash: {(4,0), (5,4), (7,8)}. J(A, F) = J(B, F) = 0.
    let f: BarHits = [(45, 0), (48, 4), (49, 8)]

    func track(_ bars: [BarHits], velocity: Int = 80, firstBar: Int = 0) -> HitTrack {
        var hits: [(onset: Int, note: Int)] = []
        for (i, bar) in bars.enumerated() {
            for h in bar { hits.append(((firstBar + i) * 1920 + h.cell * 120, h.note)) }
        }
        hits.sort { $0.onset < $1.onset }
        return HitTrack(path: "t", ticksPerQuarter: 480, notes: hits.map(\.note), onsets: hits.map(\.onset),
                        velocities: hits.map { _ in velocity },
                        bars: hits.map { BarSlot(bar: $0.onset / 1920, tickInBar: $0.onset % 1920, barTicks: 1920) })
    }

    /// The tally of `tracks` (each bars of `BarHits`, `copies` times), at `velocity`.
    func tally(_ tracks: [BarHits]..., copies: Int = 1, velocity: Int = 80) -> GrooveTally {
        var t = GrooveTally(ticksPerQuarter: 480)
        for _ in 0..<copies { for bars in tracks { t.add(track(bars, velocity: velocity), tolerance: 0.125) } }
        return t
    }

    func testDrumClassesAreMagentasNine() {
        XCTAssertEqual(DrumClasses.count, 9)
        XCTAssertEqual([36, 35, 38, 37, 40, 42, 44, 22, 46, 26, 45, 43, 48, 47, 50, 49, 57, 55, 51, 53, 59].map { DrumClasses.of(note: $0)! },
                       [0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 7, 7, 8, 8, 8])
        XCTAssertNil(DrumClasses.of(note: 21))
        XCTAssertNil(DrumClasses.of(note: 128))
        XCTAssertNil(DrumClasses.of(note: -1))
    }

    func testJaccard() {
        var x = BarStructure.BarSet(), y = BarStructure.BarSet()
        XCTAssertEqual(x.jaccard(y), 1, "two empty bars")
        x.insert(drumClass: 0, sixteenth: 0)
        x.insert(drumClass: 8, sixteenth: 15)   // bit 143, the last word
        x.insert(drumClass: 4, sixteenth: 1)    // bit 65, the second word
        y.insert(drumClass: 8, sixteenth: 15)
        y.insert(drumClass: 3, sixteenth: 15)
        XCTAssertEqual(x.count, 3)
        XCTAssertEqual(x.jaccard(y), 1.0 / 4, accuracy: 1e-15)
        XCTAssertEqual(x.jaccard(x), 1)
    }

    func testSixteenBarsOfAABFWorkedByHand() throws {
        // A A B F repeated four times: fills at bars 4, 8, 12, 16.
        let bars = Array([[a, a, b, f], [a, a, b, f], [a, a, b, f], [a, a, b, f]].joined())
        let s = BarStructure.measure(track(bars), tolerance: 0.125)
        XCTAssertEqual(s.files44, 1)
        XCTAssertEqual(s.bars, 16)
        // Lag 1: per A A B F: J(A,A) = 1, J(A,B) = .4, J(B,F) = 0, J(F,A) = 0; 15 pairs: 4 × 1.4 / 15.
        XCTAssertEqual(try XCTUnwrap(s.similarity(lag: 1)), 5.6 / 15, accuracy: 1e-12)
        // Lag 2: pairs starting on an A then B (.4), A then F (0), B then A (.4), F then B... i = 0..13:
        // i % 4 == 0 (4 pairs) and == 2 (3 pairs) give .4.
        XCTAssertEqual(try XCTUnwrap(s.similarity(lag: 2)), 7 * 0.4 / 14, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(s.similarity(lag: 4)), 1, accuracy: 1e-12)
        XCTAssertEqual(s.similarityPairs, [15, 14, 12, 8])
        XCTAssertEqual(try XCTUnwrap(s.similarity(lag: 8)), 1, accuracy: 1e-12)
        // One 16-bar window: A, B (J .4 to A), F: three patterns.
        XCTAssertEqual(s.patternWindows, 1)
        XCTAssertEqual(s.patternsPer16Bars, 3)
        // Two 8-bar windows. Fill bars (4, 8): F, 3 hits, all toms or crash, J to previous (B) 0.
        // Others (2, 3, 6, 7): A, B, A, B per window: 3.5 hits a bar, 1 crash in 7 hits, J .7 on average.
        XCTAssertEqual(s.fill, .init(bars: 4, hits: 12, fillClassHits: 12, similaritySum: 0))
        XCTAssertEqual(s.other.bars, 8)
        XCTAssertEqual(s.other.hits, 28)
        XCTAssertEqual(s.other.fillClassHits, 4)
        XCTAssertEqual(try XCTUnwrap(s.other.similarityToPrevious), 0.7, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(s.fillHitsRatio), 3 / 3.5, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(s.fillClassRatio), 7, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(s.fillSimilarityRatio), 0, accuracy: 1e-12)
        // Onsets per bar: A 3 (one of them kick + hat), B 2 (one kick + crash), F 3 (none).
        XCTAssertEqual(s.onsets, 4 * (3 + 3 + 2 + 3))
        XCTAssertEqual(s.simultaneousOnsets, 4 * 3)
        XCTAssertEqual(s.classHits, [12, 12, 16, 0, 4, 4, 0, 8, 0])
        XCTAssertEqual(s.classOnGrid, s.classHits)
    }

    func testWindowsAlignToTheFilesFirstBarAndHitsRoundToTheNearestSixteenth() throws {
        // Hits from bar 3 (index 2) to bar 19: windows of 8 start at bars 9 and 17 (indices 8, 16):
        // only 9–16 is whole; no whole 16-bar window (17–32 ends after the last bar).
        let bars = [BarHits](repeating: a, count: 17)
        let s = BarStructure.measure(track(bars, firstBar: 2), tolerance: 0.125)
        XCTAssertEqual(s.bars, 17)
        XCTAssertEqual(s.fill.bars, 2)
        XCTAssertEqual(s.other.bars, 4)
        XCTAssertEqual(s.patternWindows, 0)
        XCTAssertNil(s.patternsPer16Bars)

        // 1,900 ticks into bar 1 is nearer the next bar line: bar 2's first sixteenth (20 ticks
        // early: off the grid at 1/8, 15 ticks). 1,000 is 8.33 sixteenths: the 9th (cell 8), 40
        // ticks off the line: off the grid.
        let t = HitTrack(path: "t", ticksPerQuarter: 480, notes: [36, 38, 36], onsets: [0, 1000, 1900], velocities: [10, 60, 127],
                         bars: [BarSlot(bar: 0, tickInBar: 0, barTicks: 1920), BarSlot(bar: 0, tickInBar: 1000, barTicks: 1920),
                                BarSlot(bar: 0, tickInBar: 1900, barTicks: 1920)])
        let (first, placed) = try XCTUnwrap(BarStructure.bars(t))
        XCTAssertEqual(first, 0)
        XCTAssertEqual(placed.count, 2)
        var bar1 = BarStructure.BarSet(), bar2 = BarStructure.BarSet()
        bar1.insert(drumClass: 0, sixteenth: 0)
        bar1.insert(drumClass: 1, sixteenth: 8)
        bar2.insert(drumClass: 0, sixteenth: 0)
        XCTAssertEqual(placed.map(\.set), [bar1, bar2])
        let m = BarStructure.measure(t, tolerance: 0.125)
        XCTAssertEqual(try XCTUnwrap(m.similarity(lag: 1)), 0.5, accuracy: 1e-12)
        XCTAssertEqual(m.classOnGrid, [1, 0, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(try XCTUnwrap(m.velocityMean), 197.0 / 3, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(m.softShare), 1.0 / 3, accuracy: 1e-12)
    }

    /// A 2/4 pickup (bar 0) is the end of a 4/4 bar, as the grid model reads it: its snare on
    /// the pickup's second beat is bar 0's fourth beat (sixteenth 12), and the file is measured.
    func testAPickupIsTheEndOfABar() throws {
        let t = HitTrack(path: "t", ticksPerQuarter: 480, notes: [38, 36, 38], onsets: [480, 960, 1920], velocities: nil,
                         bars: [BarSlot(bar: 0, tickInBar: 480, barTicks: 960), BarSlot(bar: 1, tickInBar: 0, barTicks: 1920),
                                BarSlot(bar: 1, tickInBar: 960, barTicks: 1920)])
        let (first, placed) = try XCTUnwrap(BarStructure.bars(t))
        XCTAssertEqual(first, 0)
        var pickup = BarStructure.BarSet(), bar = BarStructure.BarSet()
        pickup.insert(drumClass: 1, sixteenth: 12)
        bar.insert(drumClass: 0, sixteenth: 0)
        bar.insert(drumClass: 1, sixteenth: 8)
        XCTAssertEqual(placed.map(\.set), [pickup, bar])
        XCTAssertEqual(BarStructure.measure(t, tolerance: 0.125).files44, 1)
        // The accent profile counts the pickup's snare at the 4/4 bar's sixteenth 12.
        let voiced = HitTrack(path: "t", ticksPerQuarter: 480, notes: t.notes, onsets: t.onsets, velocities: [40, 100, 90], bars: t.bars)
        var tally = GrooveTally(ticksPerQuarter: 480)
        tally.add(voiced, tolerance: 0.125)
        let accents = try XCTUnwrap(tally.accents)
        XCTAssertEqual(Array(accents.keys), [1920])
        XCTAssertEqual(accents[1920]?.sums[12], 40)
        XCTAssertEqual(accents[1920]?.hits, 3)
    }

    func testOtherMetersAndNotesOutsideTheMap() {
        // A 3/4 bar: left out of the bar figures, counted; still in the touch figures.
        let t = HitTrack(path: "t", ticksPerQuarter: 480, notes: [36, 36], onsets: [0, 1440], velocities: [40, 40],
                         bars: [BarSlot(bar: 0, tickInBar: 0, barTicks: 1440), BarSlot(bar: 1, tickInBar: 0, barTicks: 1440)])
        let s = BarStructure.measure(t, tolerance: 0.125)
        XCTAssertEqual(s.files44, 0)
        XCTAssertEqual(s.filesNot44, 1)
        XCTAssertEqual(s.similarityPairs, [0, 0, 0, 0])
        XCTAssertEqual(s.softShare, 1)
        XCTAssertEqual(s.classHits[0], 2)
        // Note 21 has no class: not in any bar's set, but an onset.
        let u = HitTrack(path: "u", ticksPerQuarter: 480, notes: [21, 36], onsets: [0, 1920], velocities: nil,
                         bars: [BarSlot(bar: 0, tickInBar: 0, barTicks: 1920), BarSlot(bar: 1, tickInBar: 0, barTicks: 1920)])
        let m = BarStructure.measure(u, tolerance: 0.125)
        XCTAssertEqual(m.similarity(lag: 1), 0, "an empty bar against a kick")
        XCTAssertEqual(m.onsets, 2)
        XCTAssertNil(m.velocityMean)
        XCTAssertEqual(m.classHits.reduce(0, +), 1)
    }

    /// Toms and crashes in the fill bars alone (their share elsewhere 0) have no ratio: a
    /// generated such bump meets a reference's bump up, and against a reference's, which has no
    /// size to meet half of, the sign decides (the target was missed by every checkpoint, so
    /// `train -o` on such a folder could never meet the rule): fills holding more of them than
    /// the other bars meet it, toms outside the fills or none miss it.
    func testABumpOfTheFillsAloneIsWhole() throws {
        let onlyInFills = Array([[a, a, a, f], [a, a, a, f], [a, a, a, f], [a, a, a, f]].joined())
        let g = tally(onlyInFills), r = tally(onlyInFills)
        let s = StatsResult(generated: g, reference: r, tolerance: 0.125, quantize: nil)
        XCTAssertEqual(s.target("fill_tom_crash_ratio")?.met, true)
        XCTAssertFalse(s.referenceUndefined.contains("fill_tom_crash_ratio"), "\(s.referenceUndefined)")
        XCTAssertTrue(s.structureNotes.contains("fill_tom_crash_ratio: the reference's bars outside the fills hold no tom or crash (a share of 0): "
                                                + "no ratio; met by fills that hold more of it than the other bars"), "\(s.structureNotes)")
        XCTAssertFalse(s.structureNotes.contains { $0.hasPrefix("fill ratios: n/a") }, "the phrases were measured: \(s.structureNotes)")
        let figures = StepFigures(step: 1, path: "c", result: s)
        XCTAssertFalse(figures.missed.contains("fill_tom_crash_ratio"), "\(figures.missed)")
        XCTAssertTrue(figures.structureMet, "\(figures.missed)")
        XCTAssertNotNil(figures.margin)
        // Toms outside the fills only, or none at all, against it: missed.
        for bars in [Array([[a, f, f, a], [a, f, f, a], [a, f, f, a], [a, f, f, a]].joined()), [BarHits](repeating: a, count: 16)] {
            let w = StatsResult(generated: tally(bars), reference: r, tolerance: 0.125, quantize: nil)
            XCTAssertEqual(w.target("fill_tom_crash_ratio")?.met, false)
            let wf = StepFigures(step: 1, path: "w", result: w)
            XCTAssertTrue(wf.missed.contains("fill_tom_crash_ratio"), "\(wf.missed)")
            XCTAssertEqual(wf.margin, -.infinity)
        }
        // Against a reference with a crash outside the fills too: the whole bump meets its bump.
        let ref = tally(Array([[a, a, b, f], [a, a, b, f], [a, a, b, f], [a, a, b, f]].joined()))
        let up = StatsResult(generated: g, reference: ref, tolerance: 0.125, quantize: nil)
        XCTAssertEqual(up.target("fill_tom_crash_ratio")?.met, true)
        XCTAssertFalse(up.referenceUndefined.contains("fill_tom_crash_ratio"))
    }

    /// A folder of 2-bar loops has no similarity 2, 4 or 8 bars apart, no 16-bar window and no
    /// phrase: those targets are not counted (every checkpoint missed them, and `train -o` on
    /// such a folder could never meet the rule), the others are.
    func testTargetsTheReferencesFilesAreTooShortForAreNotCounted() throws {
        let g = tally([a, b], copies: 4), r = tally([a, b], copies: 4)
        let s = StatsResult(generated: g, reference: r, tolerance: 0.125, quantize: nil)
        XCTAssertEqual(s.target("bar_similarity_lag1")?.met, true)
        for key in ["bar_similarity_lag2", "bar_similarity_lag4", "bar_similarity_lag8", "patterns_per_16_bars",
                    "fill_tom_crash_ratio", "fill_similarity_ratio"] {
            XCTAssertNil(s.target(key)?.met, key)
            XCTAssertTrue(s.referenceUndefined.contains(key), key)
        }
        XCTAssertTrue(s.structureNotes.contains("bar_similarity_lag8: n/a (no reference file in 4/4 has 9 bars or more); the target is not counted"),
                      "\(s.structureNotes)")
        let figures = StepFigures(step: 1, path: "loops", result: s)
        XCTAssertTrue(figures.structureMet, "\(figures.missed)")
        XCTAssertTrue(figures.missed.isEmpty, "\(figures.missed)")
        XCTAssertNotNil(figures.margin)
    }

    func testTargetsOfTwoSides() throws {
        // Generated: A A B F ×4; reference: the same. Every ratio is 1; fills bump alike.
        let bars = Array([[a, a, b, f], [a, a, b, f], [a, a, b, f], [a, a, b, f]].joined())
        let g = tally(bars), r = tally(bars)
        let same = StatsResult(generated: g, reference: r, tolerance: 0.125, quantize: nil)
        for key in ["bar_similarity_lag1", "bar_similarity_lag2", "bar_similarity_lag4", "bar_similarity_lag8", "patterns_per_16_bars",
                    "fill_tom_crash_ratio", "fill_similarity_ratio", "hits_per_bar", "simultaneous_onset_share", "velocity_mean",
                    "soft_hit_share"] {
            XCTAssertEqual(same.target(key)?.met, true, key)
        }
        // Generated: one bar repeated, loud. No variation: similarity 1 (≥ 80%), 1 pattern (≤ 130%),
        // no fill bump (fails both fill targets), 4 hits a bar vs 3.25 (fails), velocity 120 vs 80.
        let other = StatsResult(generated: tally([BarHits](repeating: a, count: 16), velocity: 120), reference: r, tolerance: 0.125, quantize: nil)
        XCTAssertEqual(other.target("bar_similarity_lag1")?.met, true)
        XCTAssertEqual(other.target("patterns_per_16_bars")?.met, true)
        XCTAssertEqual(other.target("fill_tom_crash_ratio")?.met, false, "no tom or crash in any bar: no fill bump")
        XCTAssertEqual(other.target("fill_similarity_ratio")?.met, false)
        XCTAssertEqual(other.target("hits_per_bar")?.met, false)
        XCTAssertEqual(other.target("velocity_mean")?.met, false)
        XCTAssertEqual(other.target("soft_hit_share")?.met, true, "no soft hit on either side")
        XCTAssertEqual(other.target("simultaneous_onset_share")?.met, false, "1 of 3 onsets vs 12 of 44")
        XCTAssertEqual(StatsResult.bump(1.2, 1.3)?.met, true)
        XCTAssertEqual(StatsResult.bump(1.1, 1.3)?.met, false, "less than half the bump")
        XCTAssertEqual(StatsResult.bump(0.9, 1.3)?.met, false, "the other sign")
        XCTAssertEqual(StatsResult.bump(0.96, 0.94)?.met, true)
        XCTAssertEqual(StatsResult.bump(1.03, 0.94)?.met, false)
        // Margins: the bumps' share over one half, as a log; the other sign, none.
        XCTAssertEqual(try XCTUnwrap(StatsResult.bump(1.2, 1.3)?.margin), log((0.2 / 0.3) / 0.5), accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(StatsResult.bump(1.1, 1.3)?.margin), log((0.1 / 0.3) / 0.5), accuracy: 1e-12)
        XCTAssertEqual(StatsResult.bump(0.9, 1.3)?.margin, -.infinity)
        XCTAssertEqual(StatsResult.bump(1, 1)?.margin, .infinity, "no bump against none")
        // Each bounded share carries its margin, the one the step choice ranks by: patterns
        // per 16 bars 1 against 3 (at most 130%), hits per bar outside its 10%.
        XCTAssertEqual(try XCTUnwrap(other.target("patterns_per_16_bars")?.margin), log(1.3 / (1.0 / 3)), accuracy: 1e-9)
        XCTAssertLessThan(try XCTUnwrap(other.target("hits_per_bar")?.margin), 0)
        XCTAssertNil(other.target("note_js_bits")?.margin, "a bound in bits, not a share")
        // Rows for the terminal and the report.
        let figures = other.rows.map(\.figure)
        for name in ["bar similarity, lag 1", "bar similarity, lag 8", "patterns per 16 bars", "  tom + crash share",
                     "  similarity to previous bar", "simultaneous onsets", "mean velocity", "soft hits (velocity < 50)",
                     "on 16th grid, by class: kick"] {
            XCTAssertTrue(figures.contains(name), name)
        }
        XCTAssertEqual(other.rows.first { $0.figure == "patterns per 16 bars" }?.generated, "1.00")
        XCTAssertEqual(other.rows.first { $0.figure == "patterns per 16 bars" }?.reference, "3.00")
    }
}
