import Foundation
import MIDIParse
import XCTest
@testable import Report

/// `drummer stats` figures on small hand-made hit lists, against values computed by hand.
final class StatsFigureTests: XCTestCase {
    func testJensenShannonInBits() throws {
        func h(_ c: [Int]) -> Histogram { Histogram(labels: c.map { _ in "" }, counts: c) }
        XCTAssertEqual(try XCTUnwrap(Histogram.jensenShannonBits(h([3, 1]), h([6, 2]))), 0, accuracy: 1e-15, "same shares")
        XCTAssertEqual(try XCTUnwrap(Histogram.jensenShannonBits(h([1, 0]), h([0, 1]))), 1, accuracy: 1e-15, "disjoint: 1 bit")
        // P = (1/2, 1/2), Q = (1, 0), M = (3/4, 1/4):
        // KL(P‖M) = ½ log2(2/3) + ½ log2(2) = 0.2075187496, KL(Q‖M) = log2(4/3) = 0.4150374993,
        // JS = (0.2075187496 + 0.4150374993) / 2 = 0.3112781245.
        XCTAssertEqual(try XCTUnwrap(Histogram.jensenShannonBits(h([5, 5]), h([7, 0]))), 0.3112781245, accuracy: 1e-9)
        XCTAssertNil(Histogram.jensenShannonBits(h([0, 0]), h([1, 0])), "an empty side")
        XCTAssertNil(Histogram.jensenShannonBits(h([1]), h([1, 0])), "different bins")
        // Exact-value bins: the union of both sides' values.
        let (a, b) = HitHistograms.exact([0: 2, 120: 2], [120: 4, 240: 4])
        XCTAssertEqual(a.labels, ["0", "120", "240"])
        XCTAssertEqual(a.counts, [2, 2, 0])
        XCTAssertEqual(b.counts, [0, 4, 4])
        // P = (1/2, 1/2, 0), Q = (0, 1/2, 1/2): M = (1/4, 1/2, 1/4); KL(P‖M) = ½·1 + ½·0 = ½ = KL(Q‖M): JS = 0.5.
        XCTAssertEqual(try XCTUnwrap(Histogram.jensenShannonBits(a, b)), 0.5, accuracy: 1e-12)
    }

    func testDeltasAndDuplicateOnsets() {
        XCTAssertEqual(GrooveStats.deltas([0, 0, 240, 1915]), [0, 240, 1675])
        XCTAssertEqual(GrooveStats.deltas([7]), [])
        // At 0: 36, 36 (repeat), 42; at 10: 36 (new onset); at 20: 36, 36 (repeat): 2 repeats.
        XCTAssertEqual(GrooveStats.duplicateOnsets(notes: [36, 36, 42, 36, 36, 36], onsets: [0, 0, 0, 10, 20, 20]), 2)
        XCTAssertEqual(GrooveStats.duplicateOnsets(notes: [36, 42, 36], onsets: [0, 0, 5]), 0)
    }

    func testGridShareWithTolerance() {
        // 4/4 at 480 PPQ (a sixteenth is 120 ticks). Distinct onsets: 0 (twice: counted once), 15 (on:
        // 15 ≤ 15), 16 (off), 60 (off), 105 (on: 120 − 105 = 15), 2160 (bar 2, tick 240: on).
        let onsets = [0, 0, 15, 16, 60, 105, 2160]
        let bars = onsets.map { BarSlot(bar: $0 / 1920, tickInBar: $0 % 1920, barTicks: 1920) }
        XCTAssertEqual(GrooveStats.gridCounts(onsets: onsets, bars: bars, ticksPerQuarter: 480, tolerance: 0.125),
                       GridCounts(onGrid: 4, onsets: 6))
        XCTAssertEqual(GrooveStats.gridCounts(onsets: onsets, bars: bars, ticksPerQuarter: 480, tolerance: 0),
                       GridCounts(onGrid: 2, onsets: 6))
        XCTAssertEqual(GrooveStats.gridCounts(onsets: onsets, bars: bars, ticksPerQuarter: 480, tolerance: 0.25),
                       GridCounts(onGrid: 5, onsets: 6), "16 is on at 30 ticks; 60, half way, never")
        // 6/8 (1440-tick bars): the same grid from the bar line; 1440 + 130 is 10 ticks from a line.
        let six = [BarSlot(bar: 1, tickInBar: 130, barTicks: 1440)]
        XCTAssertEqual(GrooveStats.gridCounts(onsets: [1570], bars: six, ticksPerQuarter: 480, tolerance: 0.125).onGrid, 1)
        // Uniform baselines: every tick of a sixteenth (0...15 and 105...119 of 120 are on), every
        // 30 ticks (0 of 0, 30, 60, 90), every 40 ticks (0 of 0, 40, 80), every 7 ticks (lcm 840:
        // positions k·7 mod 120 within 15 of a line: 0, 7, 14, 105, 112, 119 and their shifts).
        XCTAssertEqual(GrooveStats.uniformGridShare(ticksPerQuarter: 480, quantize: nil, tolerance: 0.125), 31.0 / 120, accuracy: 1e-12)
        XCTAssertEqual(GrooveStats.uniformGridShare(ticksPerQuarter: 480, quantize: 30, tolerance: 0.125), 0.25, accuracy: 1e-12)
        XCTAssertEqual(GrooveStats.uniformGridShare(ticksPerQuarter: 480, quantize: 40, tolerance: 0.125), 1.0 / 3, accuracy: 1e-12)
        XCTAssertEqual(GrooveStats.uniformGridShare(ticksPerQuarter: 480, quantize: 7, tolerance: 0.125), 31.0 / 120, accuracy: 1e-12,
                       "7 and 120 are coprime: every residue once")
        XCTAssertEqual(GrooveStats.uniformGridShare(ticksPerQuarter: 480, quantize: nil, tolerance: 0), 1.0 / 120, accuracy: 1e-12)
    }

    func testPeriodicityOfARepeatingAndANonRepeatingPattern() throws {
        // One drum, bars of 4 cells. Cells 0, 4, 8 (K = 9, μ = 1/3): over k < 5 the pairs are
        // (1,1), (0,0) ×3, (1,1): N = 2 − 2μ − 2μ + 5μ² = 11/9 = A = B, r = 1.
        let repeating = GrooveStats.periodicity(cells: [0, 4, 8], drums: [36, 36, 36], lag: 4)
        XCTAssertEqual(repeating.numerator, 11.0 / 9, accuracy: 1e-12)
        XCTAssertEqual(repeating.a, 11.0 / 9, accuracy: 1e-12)
        XCTAssertEqual(repeating.b, 11.0 / 9, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(repeating.r), 1, accuracy: 1e-12)
        // Cells 0, 5, 10 (K = 11, μ = 3/11): x[0..<7] = 1000010, x[4..<11] = 0100001, no pair (1,1):
        // N = 0 − 2μ − 2μ + 7μ² = −69/121, A = B = 2(1 − 2μ) + 7μ² = 173/121, r = −69/173.
        let never = GrooveStats.periodicity(cells: [0, 5, 10], drums: [36, 36, 36], lag: 4)
        XCTAssertEqual(never.numerator, -69.0 / 121, accuracy: 1e-12)
        XCTAssertEqual(never.a, 173.0 / 121, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(never.r), -69.0 / 173, accuracy: 1e-12)
        // Pooled over the two files: (11/9 − 69/121) / (11/9 + 173/121) = 710/2888.
        var both = repeating
        both.add(never)
        XCTAssertEqual(both.files, 2)
        XCTAssertEqual(try XCTUnwrap(both.r), 710.0 / 2888, accuracy: 1e-12)
        // A file no longer than a bar adds nothing; a drum in every cell has no variance.
        XCTAssertEqual(GrooveStats.periodicity(cells: [0, 3], drums: [36, 36], lag: 4), PeriodicitySums())
        XCTAssertNil(GrooveStats.periodicity(cells: Array(0..<9), drums: [Int](repeating: 42, count: 9), lag: 4).r)
    }

    func testPeriodicityOfAFileIsOneForARepeatedBeatAndCountsCellsFromTheFirstOnset() throws {
        // Four bars of a rock beat (hi-hat eighths, kick 1 and 3, snare 2 and 4), starting in bar 2:
        // leading silence is not part of the pattern.
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for bar in 1...4 {
            for i in 0..<8 { hits.append((bar * 1920 + i * 240, 42, 80)) }
            hits += [(bar * 1920, 36, 100), (bar * 1920 + 960, 36, 100), (bar * 1920 + 480, 38, 100), (bar * 1920 + 1440, 38, 100)]
        }
        let t = try HitTrack(file: performance(hits).file, path: "rock.mid", settings: HitExtractionSettings())
        XCTAssertEqual(t.barSpan, 4)
        for perDrum in [false, true] {
            XCTAssertEqual(try XCTUnwrap(GrooveStats.periodicity(t, perDrum: perDrum).r), 1, accuracy: 1e-12)
        }
        // Moving one snare hit by a sixteenth in the last bar breaks the repetition.
        var moved = hits
        moved[moved.count - 1].tick += 120
        let u = try HitTrack(file: performance(moved).file, path: "moved.mid", settings: HitExtractionSettings())
        for perDrum in [false, true] {
            XCTAssertLessThan(try XCTUnwrap(GrooveStats.periodicity(u, perDrum: perDrum).r), 0.99)
        }
    }

    /// Read with the notes of an onset sorted (convert-midi's --onset-order note), each hit keeps
    /// its own velocity: they come from the same reading as the notes.
    func testVelocitiesFollowTheirNotesWhenAnOnsetIsSorted() throws {
        var settings = HitExtractionSettings()
        settings.onsetOrder = .note
        let t = try HitTrack(file: performance([(0, 42, 50), (0, 36, 120), (480, 38, 90)]).file, path: "o.mid", settings: settings)
        XCTAssertEqual(t.notes, [36, 42, 38])
        XCTAssertEqual(t.velocities, [120, 50, 90])
    }

    /// The onset pattern repeats when the same cells are struck every bar, whatever drum strikes
    /// them; per drum, bars that swap kick and snare are anti-correlated.
    func testOnsetPatternAndPerDrumPeriodicityDiffer() throws {
        // Bars alternate: A = kick on 1, snare on 3; B = snare on 1, kick on 3 (hi-hat eighths in both).
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for bar in 0..<6 {
            for i in 0..<8 { hits.append((bar * 1920 + i * 240, 42, 80)) }
            let (one, three): (UInt8, UInt8) = bar % 2 == 0 ? (36, 38) : (38, 36)
            hits += [(bar * 1920 + 120, one, 100), (bar * 1920 + 1080, three, 100)]
        }
        let t = try HitTrack(file: performance(hits).file, path: "swap.mid", settings: HitExtractionSettings())
        XCTAssertEqual(try XCTUnwrap(GrooveStats.periodicity(t, perDrum: false).r), 1, accuracy: 1e-12)
        // Per drum: the hi-hat's eighths repeat every bar; kick and snare swap cells from bar to
        // bar, which pulls the figure well below 1.
        let perDrum = try XCTUnwrap(GrooveStats.periodicity(t, perDrum: true).r)
        XCTAssertLessThan(perDrum, 0.75)
        XCTAssertEqual(perDrum, Self.handPeriodicity(hits), accuracy: 1e-12)
    }

    /// The per-drum figure computed the plain way, for the test above.
    static func handPeriodicity(_ hits: [(tick: Int, note: UInt8, velocity: UInt8)]) -> Double {
        let cells = hits.map { $0.tick / 120 }
        let first = cells.min()!, k = cells.max()! - first + 1, lag = 16
        var n = 0.0, a = 0.0, b = 0.0
        for drum in Set(hits.map(\.note)) {
            var x = [Double](repeating: 0, count: k)
            for (c, h) in zip(cells, hits) where h.note == drum { x[c - first] = 1 }
            let mu = x.reduce(0, +) / Double(k)
            for i in 0..<(k - lag) {
                n += (x[i] - mu) * (x[i + lag] - mu)
                a += (x[i] - mu) * (x[i] - mu)
                b += (x[i + lag] - mu) * (x[i + lag] - mu)
            }
        }
        return n / (a * b).squareRoot()
    }

    func testPearsonCorrelation() throws {
        XCTAssertEqual(try XCTUnwrap(GrooveStats.pearson([1, 2, 3], [2, 4, 6])), 1, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(GrooveStats.pearson([1, 2, 3], [3, 2, 1])), -1, accuracy: 1e-12)
        // Deviations (−1.5, −0.5, 0.5, 1.5) and (−1.5, 0.5, −0.5, 1.5): Σxy = 4, Σx² = Σy² = 5: r = 0.8.
        XCTAssertEqual(try XCTUnwrap(GrooveStats.pearson([1, 2, 3, 4], [1, 3, 2, 4])), 0.8, accuracy: 1e-12)
        XCTAssertNil(GrooveStats.pearson([100, 100, 100], [1, 2, 3]), "constant velocity")
        XCTAssertNil(GrooveStats.pearson([1], [1]))
    }

    /// A 4/4 bar of quarter notes at velocities `v` (one drum), repeated `bars` times.
    private func quarters(_ v: [UInt8], bars: Int = 1, note: UInt8 = 38) throws -> HitTrack {
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for b in 0..<bars { for (i, x) in v.enumerated() { hits.append((b * 1920 + i * 480, note, x)) } }
        return try HitTrack(file: performance(hits).file, path: "q.mid", settings: HitExtractionSettings())
    }

    func testAccentProfileAndItsCorrelation() throws {
        var g = GrooveTally(ticksPerQuarter: 480), r = GrooveTally(ticksPerQuarter: 480)
        g.add(try quarters([40, 80, 60, 100]), tolerance: 0.125)
        r.add(try quarters([40, 60, 80, 100]), tolerance: 0.125)
        // A 6/8 reference file: its bars (1440 ticks) are not the most common length: skipped and counted.
        r.add(try HitTrack(file: performance([(0, 36, 127), (720, 36, 127)], meter: (6, 8)).file, path: "six.mid",
                           settings: HitExtractionSettings()), tolerance: 0.125)
        let s = StatsResult(generated: g, reference: r, tolerance: 0.125, quantize: nil)
        XCTAssertEqual(s.accent.barTicks, 1920)
        XCTAssertEqual(s.accent.generated, [40, nil, nil, nil, 80, nil, nil, nil, 60, nil, nil, nil, 100, nil, nil, nil])
        XCTAssertEqual(s.accent.reference[4], 60)
        XCTAssertEqual(s.accent.skippedReference, 2)
        XCTAssertEqual(s.accent.skippedGenerated, 0)
        // Positions 1, 2, 3, 4: (40, 80, 60, 100) against (40, 60, 80, 100): deviations (−30, 10, −10, 30)
        // and (−30, −10, 10, 30): Σxy = 900 − 100 − 100 + 900 = 1600, Σx² = 2000: r = 0.8.
        XCTAssertEqual(try XCTUnwrap(s.accent.correlation), 0.8, accuracy: 1e-12)
        XCTAssertEqual(s.target("accent_profile")?.met, true)
        XCTAssertEqual(s.accentLabels.prefix(5), ["1", "e", "&", "a", "2"])

        // Every generated velocity 100: no correlation, said so, and the target is not met.
        var flat = GrooveTally(ticksPerQuarter: 480)
        flat.add(try quarters([100, 100, 100, 100]), tolerance: 0.125)
        let f = StatsResult(generated: flat, reference: r, tolerance: 0.125, quantize: nil)
        XCTAssertNil(f.accent.correlation)
        XCTAssertEqual(f.missing["accent_profile"], "constant velocity")
        XCTAssertEqual(f.target("accent_profile")?.met, false)
        XCTAssertEqual(f.rows.first { $0.figure == "accent correlation" }?.comparison, "n/a (constant velocity)")

        // A reference of one velocity (programmed beats) has no accents: the target is not
        // counted, and files like it can meet the step choice's rule (they never could).
        var programmed = GrooveTally(ticksPerQuarter: 480)
        programmed.add(try quarters([100, 100, 100, 100], bars: 4), tolerance: 0.125)
        let p = StatsResult(generated: programmed, reference: programmed, tolerance: 0.125, quantize: nil)
        XCTAssertNil(p.target("accent_profile")?.met)
        XCTAssertEqual(p.missing["accent_profile"], "constant velocity in the reference: the target is not counted")
        XCTAssertTrue(p.referenceUndefined.contains("accent_profile"), "\(p.referenceUndefined)")
        let figures = StepFigures(step: 1, path: "p", result: p)
        XCTAssertTrue(figures.targetsMet, "\(figures.missed)")
        XCTAssertFalse(figures.missed.contains("accent_profile"))
        XCTAssertTrue(StepRule.meets(figures), "the rule's other margins met")

        // A reference with accents (8ths at 100, 16ths between at 50) against files that drop its
        // ghost 16ths: flat where both play, yet the reference has accents: missed, not skipped.
        var accented = GrooveTally(ticksPerQuarter: 480), eighths = GrooveTally(ticksPerQuarter: 480)
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = [], plain: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for k in 0..<64 {
            hits.append((k * 120, 42, k % 2 == 0 ? 100 : 50))
            if k % 2 == 0 { plain.append((k * 120, 42, UInt8([40, 70, 127][(k / 2) % 3]))) }
        }
        accented.add(try HitTrack(file: performance(hits).file, path: "a.mid", settings: HitExtractionSettings()), tolerance: 0.125)
        eighths.add(try HitTrack(file: performance(plain).file, path: "e.mid", settings: HitExtractionSettings()), tolerance: 0.125)
        let dropped = StatsResult(generated: eighths, reference: accented, tolerance: 0.125, quantize: nil)
        XCTAssertEqual(dropped.target("accent_profile")?.met, false)
        XCTAssertFalse(dropped.referenceUndefined.contains("accent_profile"))
        XCTAssertTrue(StepFigures(step: 1, path: "e", result: dropped).missed.contains("accent_profile"))
    }

    /// A reference figure of 0 has no ratio, yet its target is decided: a share on the 16th grid
    /// of 1 against none is not within 15% (it was null: neither met nor missed), 0 against 0 is.
    func testATargetAgainstAReferenceOfZeroIsDecided() throws {
        func tally(offset: Int) throws -> GrooveTally {
            var t = GrooveTally(ticksPerQuarter: 480)
            let hits = (0..<8).map { (tick: $0 * 480 + offset, note: UInt8(38), velocity: UInt8(100)) }
            t.add(try HitTrack(file: performance(hits).file, path: "q.mid", settings: HitExtractionSettings()), tolerance: 0.125)
            return t
        }
        let onGrid = try tally(offset: 0), off = try tally(offset: 180)
        let s = StatsResult(generated: onGrid, reference: off, tolerance: 0.125, quantize: nil)
        XCTAssertEqual(s.gridShare.reference, 0)
        XCTAssertNil(s.gridShare.ratio)
        XCTAssertEqual(s.target("grid16_share")?.met, false)
        XCTAssertEqual(s.missing["grid16_share"], "the reference's figure is 0: no ratio")
        XCTAssertEqual(s.rows.first { $0.figure == "share on 16th grid" }?.mark, "✗")
        let both = StatsResult(generated: off, reference: off, tolerance: 0.125, quantize: nil)
        XCTAssertEqual(both.target("grid16_share")?.met, true)
        XCTAssertEqual(both.missing["grid16_share"], "the reference's figure is 0: no ratio")
        // The note says how it is decided, not that it is n/a.
        XCTAssertTrue(s.notes.contains("grid16_share: no ratio (the reference's figure is 0); the target is decided on 0: "
                                       + "within 15% of 0 is 0 alone"), "\(s.notes)")
    }

    func testTalliesAndTargetsOfAHandMadePair() throws {
        // Generated: kick (36) on every quarter of 2 bars at 100; reference: the same plus a snare (38)
        // on 2 and 4, velocities 120/60 alternating.
        var g = GrooveTally(ticksPerQuarter: 480), r = GrooveTally(ticksPerQuarter: 480)
        g.add(try quarters([100, 100, 100, 100], bars: 2, note: 36), tolerance: 0.125)
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for b in 0..<2 {
            for i in 0..<4 { hits.append((b * 1920 + i * 480, 36, i % 2 == 0 ? 120 : 60)) }
            hits += [(b * 1920 + 480, 38, 60), (b * 1920 + 1440, 38, 60)]
        }
        r.add(try HitTrack(file: performance(hits).file, path: "r.mid", settings: HitExtractionSettings()), tolerance: 0.125)
        XCTAssertEqual(g.hits, 8)
        XCTAssertEqual(g.bars, 2)
        XCTAssertEqual(r.hits, 12)
        XCTAssertEqual(r.noteCounts, [36: 8, 38: 4])
        // Reference deltas: per bar 0 (kick 1), 480 (kick 2), 0 (snare 2), 480, 480, 0; 11 deltas.
        XCTAssertEqual(r.deltaCounts, [480: 7, 0: 4])
        XCTAssertEqual(r.velocityCounts?[7], 8, "velocity 60: bin 56-63")
        XCTAssertEqual(r.velocityCounts?[15], 4, "velocity 120: bin 120-127")
        let s = StatsResult(generated: g, reference: r, tolerance: 0.125, quantize: 30, expectedHits: 8)
        // Notes: P = (1, 0), Q = (2/3, 1/3); M = (5/6, 1/6): KL(P‖M) = log2(6/5),
        // KL(Q‖M) = 2/3 log2(4/5) + 1/3 log2(2); JS = ½ (0.2630344 − 0.2146187 + 0.3333333) = 0.1908745.
        XCTAssertEqual(try XCTUnwrap(s.noteJS), 0.5 * (log2(1.2) + 2.0 / 3 * log2(0.8) + 1.0 / 3), accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(s.noteJS), 0.1908745, accuracy: 1e-6)
        // Deltas: P = {480: 1}, Q = {0: 4/11, 480: 7/11}.
        let q0 = 4.0 / 11, q1 = 7.0 / 11, m1 = (1 + q1) / 2
        XCTAssertEqual(try XCTUnwrap(s.deltaJS), 0.5 * (log2(1 / m1) + q0 * log2(q0 / (q0 / 2)) + q1 * log2(q1 / m1)), accuracy: 1e-12)
        XCTAssertEqual(s.gridShare.generated, 1)
        XCTAssertEqual(s.gridShare.reference, 1)
        XCTAssertEqual(s.gridShare.ratio, 1)
        XCTAssertEqual(s.gridUniform, 0.25, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(s.periodicity.generated), 1, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(s.periodicity.reference), 1, accuracy: 1e-12)
        // Each drum's own onsets repeat bar after bar too (kick alone; kick and snare).
        XCTAssertEqual(try XCTUnwrap(s.periodicityPerDrum.generated), 1, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(s.periodicityPerDrum.reference), 1, accuracy: 1e-12)
        XCTAssertEqual(s.duplicateRate.generated, 0)
        XCTAssertEqual(s.target("note_js_bits")?.met, false)
        XCTAssertEqual(s.target("grid16_share")?.met, true)
        XCTAssertEqual(s.target("bar_periodicity")?.met, true)
        XCTAssertEqual(s.target("duplicate_onset_rate")?.met, true)
        XCTAssertEqual(s.target("hits")?.met, true)
        XCTAssertEqual(s.target("velocity_js_bits")?.met, false, "all 100 (bin 12) against 60 and 120")
        // The accent profile's reason, then those of the bar-structure figures these short files
        // cannot give (lags 2, 4, 8, patterns per 16 bars, the fill ratios), each side.
        XCTAssertEqual(s.notes.count, 11, "\(s.notes)")
        XCTAssertTrue(s.notes[0].hasPrefix("accent_profile: n/a (constant velocity): "), s.notes[0])
        XCTAssertEqual(s.notes.filter { $0.hasPrefix("patterns_per_16_bars: n/a") }.count, 2, "\(s.notes)")
        let rows = s.rows
        XCTAssertEqual(rows.map(\.figure).prefix(13), ["files", "hits", "bars", "hits per bar", "note histogram", "delta histogram",
                                                       "velocity histogram", "share on 16th grid", "  uniform random", "bar periodicity",
                                                       "  per drum", "accent correlation", "duplicate-onset rate"])
        // Then the bar-structure rows (BarStructureTests), with a grid row per drum class either side has.
        XCTAssertEqual(rows.map(\.figure).suffix(2), ["on 16th grid, by class: kick", "  snare"])
        XCTAssertEqual(rows[4].comparison, "JS 0.1909 bits")
        XCTAssertEqual(rows[4].mark, "✗")
        XCTAssertEqual(rows[7].comparison, "100.0% of reference")
        XCTAssertEqual(rows[7].mark, "✓")
        XCTAssertEqual(rows[1].target, "exactly 8")
        XCTAssertEqual(rows[10].generated, "1.000")
        XCTAssertEqual(rows[10].comparison, "100.0% of reference")
        XCTAssertEqual(rows[10].mark, "", "the per-drum figure is shown, not judged")
        XCTAssertEqual(StatsResult.grouped(1_234_567), "1,234,567")
    }
}

/// HitTrack reads a MIDI file as convert-midi does: rescaled, quantized, bars from its meter.
final class HitTrackTests: XCTestCase {
    func testRescaleQuantizeAndBarsOfASixEightFileAt96PPQ() throws {
        // 96 PPQ, 6/8 (a 288-tick bar): hits at 0, 49 (→ 245 at 480; 240 with --quantize 30), 290 (→ 1450;
        // 1440 quantized: bar 2's line), with velocities.
        let p = performance([(0, 36, 100), (49, 42, 50), (290, 38, 127)], ppq: 96, meter: (6, 8))
        let raw = try HitTrack(file: p.file, path: "six.mid", settings: HitExtractionSettings())
        XCTAssertEqual(raw.onsets, [0, 245, 1450])
        XCTAssertEqual(raw.velocities, [100, 50, 127])
        XCTAssertEqual(raw.bars, [BarSlot(bar: 0, tickInBar: 0, barTicks: 1440), BarSlot(bar: 0, tickInBar: 245, barTicks: 1440),
                                  BarSlot(bar: 1, tickInBar: 10, barTicks: 1440)])
        var settings = HitExtractionSettings()
        settings.quantize = 30
        let q = try HitTrack(file: p.file, path: "six.mid", settings: settings)
        XCTAssertEqual(q.onsets, [0, 240, 1440])
        XCTAssertEqual(q.bars?.map(\.tickInBar), [0, 240, 0])
        XCTAssertEqual(q.barSpan, 2)
        // Channel auto: the hits are on index 9; a file with notes elsewhere only reads every channel.
        let other = performance([(0, 36, 90), (480, 38, 90)], channel: 3)
        XCTAssertEqual(try HitTrack(file: other.file, path: "o.mid", settings: HitExtractionSettings()).hits, 2)
    }
}

/// Small convert-midi datasets written by hand (NPY 1.0 bytes).
final class DatasetReferenceTests: XCTestCase {
    private var tmp: URL!
    override func setUpWithError() throws {
        tmp = FileManager.default.temporaryDirectory.appendingPathComponent("stats-dataset-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    static func npy(_ values: [Int32], shape: [Int]) -> Data {
        let dims = shape.count == 1 ? "(\(shape[0]),)" : "(" + shape.map(String.init).joined(separator: ", ") + ")"
        var header = "{'descr': '<i4', 'fortran_order': False, 'shape': \(dims), }"
        while (10 + header.utf8.count + 1) % 64 != 0 { header += " " }
        header += "\n"
        var d = Data([0x93]) + Data("NUMPY".utf8) + Data([1, 0, UInt8(header.utf8.count & 0xFF), UInt8(header.utf8.count >> 8)])
        d += Data(header.utf8)
        for v in values { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        return d
    }

    /// Two files, as convert-midi would write them at 480 PPQ:
    /// a.mid (4/4): (36, 0, v100), (42, 0, v60), (42, 240, v70), (38, 480, v110), (36, 1920, v90),
    ///   (38, 2415, v50) — 2415 is 15 ticks past beat 2 of bar 2;
    /// b.mid (6/8): (36, 0, v120), (42, 720, v40), (42, 1440, v80): glued 480 − (2415 mod 480) = 465 ticks after
    ///   a.mid's last hit.
    static let notes = [36, 42, 42, 38, 36, 38, 36, 42, 42]
    static let onsets = [0, 0, 240, 480, 1920, 2415, 0, 720, 1440]
    static let velocities: [Int32] = [100, 60, 70, 110, 90, 50, 120, 40, 80]
    static let positions: [(Int32, Int32)] = [(0, 1920), (0, 1920), (240, 1920), (480, 1920), (0, 1920), (495, 1920),
                                              (0, 1440), (720, 1440), (0, 1440)]

    private func writeDataset(_ dir: URL, velocities: Bool, positions: Bool, manifest: Bool = true) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let ixToNote = [36, 38, 42]
        // Deltas: a: 0, 0, 240, 240, 1440, 495; b: 465 (glue), 720, 720.
        let deltas = [0, 0, 240, 240, 1440, 495, 465, 720, 720]
        let ticks = Array(Set(deltas)).sorted()
        var rows: [Int32] = []
        for (n, d) in zip(Self.notes, deltas) { rows += [Int32(ixToNote.firstIndex(of: n)!), Int32(ticks.firstIndex(of: d)!)] }
        try Self.npy(rows, shape: [9, 2]).write(to: dir.appendingPathComponent("events.npy"))
        try #"{"ix_to_note": [36, 38, 42], "ix_to_tick": \#(ticks)}"#.write(to: dir.appendingPathComponent("vocab.json"), atomically: true, encoding: .utf8)
        if manifest {
            try """
                {"source": "nowhere", "settings": {"ppq": 480, "quantize": null},
                 "files": [{"path": "a.mid", "split": "training", "hits": 6, "offset": 0},
                           {"path": "b.mid", "split": "training", "hits": 3, "offset": 6}]}
                """.write(to: dir.appendingPathComponent("manifest.json"), atomically: true, encoding: .utf8)
        }
        if velocities { try Self.npy(Self.velocities, shape: [9]).write(to: dir.appendingPathComponent("velocities.npy")) }
        if positions {
            try Self.npy(Self.positions.flatMap { [$0.0, $0.1] }, shape: [9, 2]).write(to: dir.appendingPathComponent("positions.npy"))
        }
    }

    /// The same two files as MIDI, read as convert-midi reads them.
    private func midiTracks() throws -> [HitTrack] {
        let a = performance(zip(zip(Self.notes, Self.onsets), Self.velocities).prefix(6).map { ($0.0.1, UInt8($0.0.0), UInt8($0.1)) })
        let b = performance(zip(zip(Self.notes, Self.onsets), Self.velocities).dropFirst(6).map { ($0.0.1, UInt8($0.0.0), UInt8($0.1)) },
                            meter: (6, 8))
        return try [a, b].map { try HitTrack(file: $0.file, path: $0.path, settings: HitExtractionSettings()) }
    }

    func testADatasetWithVelocitiesAndPositionsMeasuresLikeItsMIDIFiles() throws {
        let dir = tmp.appendingPathComponent("data")
        try writeDataset(dir, velocities: true, positions: true)
        let ref = try ReferenceSet.load(path: dir.path)
        XCTAssertEqual(ref.kind, "convert-midi dataset")
        XCTAssertEqual(ref.tracks.count, 2)
        XCTAssertEqual(ref.tracks[0].onsets, [0, 0, 240, 480, 1920, 2415])
        XCTAssertEqual(ref.tracks[1].onsets, [0, 720, 1440], "the glue gap is not an onset")
        XCTAssertEqual(ref.tracks[0].bars?.map(\.bar), [0, 0, 0, 0, 1, 1])
        XCTAssertEqual(ref.tracks[1].bars?.map(\.bar), [0, 0, 1])
        XCTAssertTrue(ref.hasVelocities)
        XCTAssertTrue(ref.hasBarPositions)
        XCTAssertTrue(ref.remarks.allSatisfy { !$0.contains("velocities") && !$0.contains("positions") }, "\(ref.remarks)")

        var fromDataset = GrooveTally(ticksPerQuarter: 480), fromMIDI = GrooveTally(ticksPerQuarter: 480)
        for t in ref.tracks { fromDataset.add(t, tolerance: 0.125) }
        for t in try midiTracks() { fromMIDI.add(t, tolerance: 0.125) }
        XCTAssertEqual(fromDataset, fromMIDI, "the same figures from the dataset and from its MIDI files")
        // By hand: 9 hits, 4 bars (2 + 2); distinct onsets 0, 240, 480, 1920, 2415 | 0, 720, 1440: all on the
        // grid but 2415 (495 in its bar, 15 past 480: on at 15 ticks' tolerance) — so 8 of 8.
        XCTAssertEqual(fromDataset.bars, 4)
        XCTAssertEqual(fromDataset.grid, GridCounts(onGrid: 8, onsets: 8))
        XCTAssertEqual(fromDataset.deltaCounts, [0: 1, 240: 2, 1440: 1, 495: 1, 720: 2])
        XCTAssertEqual(fromDataset.duplicates, 0)
        var tight = GrooveTally(ticksPerQuarter: 480)
        for t in ref.tracks { tight.add(t, tolerance: 0.1) }
        XCTAssertEqual(tight.grid, GridCounts(onGrid: 7, onsets: 8), "12 ticks: 495 is off")
        XCTAssertEqual(ref.sample.positions, [0, 0, 2, 4, 0, 4, 0, 6, 0])
    }

    func testADatasetWithoutVelocitiesOrPositionsSaysSo() throws {
        let dir = tmp.appendingPathComponent("plain")
        try writeDataset(dir, velocities: false, positions: false)
        let ref = try ReferenceSet.load(path: dir.path)
        XCTAssertFalse(ref.hasVelocities)
        XCTAssertFalse(ref.hasBarPositions)
        XCTAssertNil(ref.sample.velocities)
        XCTAssertNil(ref.sample.positions)
        var r = GrooveTally(ticksPerQuarter: 480), g = GrooveTally(ticksPerQuarter: 480)
        for t in ref.tracks { r.add(t, tolerance: 0.125) }
        for t in try midiTracks() { g.add(t, tolerance: 0.125) }
        XCTAssertNil(r.velocityCounts)
        XCTAssertNil(r.grid)
        XCTAssertNil(r.bars)
        let s = StatsResult(generated: g, reference: r, tolerance: 0.125, quantize: nil)
        XCTAssertEqual(try XCTUnwrap(s.noteJS), 0, accuracy: 1e-15)
        XCTAssertEqual(try XCTUnwrap(s.deltaJS), 0, accuracy: 1e-15, "the glue gap is left out on both sides")
        XCTAssertNil(s.velocityJS)
        XCTAssertNil(s.gridShare.reference)
        XCTAssertEqual(s.gridShare.generated, 1)
        XCTAssertNil(s.periodicity.reference)
        XCTAssertNil(s.accent.correlation)
        XCTAssertEqual(s.missing["velocity_js_bits"], "no velocities in the reference")
        XCTAssertEqual(s.missing["grid16_share"], "no bar positions in the reference")
        XCTAssertEqual(s.missing["bar_periodicity"], "no bar positions in the reference")
        XCTAssertEqual(s.missing["accent_profile"], "no velocities in the reference; no bar positions in the reference")
        XCTAssertNil(try XCTUnwrap(s.target("velocity_js_bits")).met)
        XCTAssertEqual(s.notes.count, 6)
        XCTAssertEqual(s.notes[4], "bar-structure figures: 1 of 2 generated files with bar positions have hits outside 4/4 bars "
                       + "and are left out of them")
        XCTAssertEqual(s.notes[5], "bar-structure figures: n/a (no file of the reference has bar positions with every hit in 4/4 bars)")
        XCTAssertNil(try XCTUnwrap(s.target("bar_similarity_lag1")).met)
        XCTAssertEqual(s.rows.first { $0.figure == "bar periodicity" }?.comparison, "n/a (no bar positions in the reference)")
    }

    func testArraysThatDisagreeWithEventsAreErrorsNamingTheFile() throws {
        let dir = tmp.appendingPathComponent("bad")
        try writeDataset(dir, velocities: false, positions: false)
        let v = dir.appendingPathComponent("velocities.npy"), p = dir.appendingPathComponent("positions.npy")
        func message() -> String {
            do { _ = try ReferenceSet.load(path: dir.path); return "no error" } catch { return "\(error)" }
        }
        try Self.npy([100, 100, 100], shape: [3]).write(to: v)
        XCTAssertEqual(message(), "\(v.path): 3 velocities, but events.npy has 9 rows")
        try Self.npy([Int32](repeating: 100, count: 8) + [0], shape: [9]).write(to: v)
        XCTAssertEqual(message(), "\(v.path): row 8 holds velocity 0, outside 1...127")
        try FileManager.default.removeItem(at: v)
        try Self.npy([Int32](repeating: 0, count: 9), shape: [9]).write(to: p)
        XCTAssertEqual(message(), "\(p.path): shape [9], expected [N, 2] (ticks since the bar line, bar length in ticks)")
        try Self.npy([Int32](repeating: 0, count: 16), shape: [8, 2]).write(to: p)
        XCTAssertEqual(message(), "\(p.path): 8 rows, but events.npy has 9 rows")
        try Self.npy([0, 1920, 0, 1920, 1920, 1920] + [Int32](repeating: 1, count: 12), shape: [9, 2]).write(to: p)
        XCTAssertEqual(message(), "\(p.path): row 2 holds (1920, 1920): expected 0 <= ticks since the bar line < bar length")
        try FileManager.default.removeItem(at: p)
        // A manifest pointing beyond events.npy.
        try """
            {"settings": {"ppq": 480}, "files": [{"path": "a.mid", "split": "training", "hits": 6, "offset": 0},
                                                 {"path": "b.mid", "split": "training", "hits": 4, "offset": 6}]}
            """.write(to: dir.appendingPathComponent("manifest.json"), atomically: true, encoding: .utf8)
        let manifest = dir.appendingPathComponent("manifest.json").path
        XCTAssertEqual(message(), "\(manifest): file b.mid: its 4 hits hold rows 6..<10, beyond the 9 rows of the training split's events.npy")
        // One leaving a gap: checked as training checks it (rows of no file are not read quietly).
        try """
            {"settings": {"ppq": 480}, "files": [{"path": "a.mid", "split": "training", "hits": 5, "offset": 0},
                                                 {"path": "b.mid", "split": "training", "hits": 3, "offset": 6}]}
            """.write(to: dir.appendingPathComponent("manifest.json"), atomically: true, encoding: .utf8)
        XCTAssertEqual(message(), "\(manifest): file b.mid: its 3 hits start at 6 in the training split's events.npy, not at 5, "
                       + "where a.mid's 5 hits from 0 end")
        try Data(#"{"settings": {"ppq": 0}}"#.utf8).write(to: dir.appendingPathComponent("manifest.json"))
        XCTAssertEqual(message(), "\(manifest): settings.ppq is 0, expected 1...32767")
    }

    func testSplitsAndAMissingManifest() throws {
        let dir = tmp.appendingPathComponent("split")
        try writeDataset(dir, velocities: true, positions: true)
        // No validation/ yet.
        XCTAssertThrowsError(try ReferenceSet.load(path: dir.path, split: .validation)) {
            XCTAssertEqual("\($0)", "\(dir.path): no validation/events.npy (convert-midi --validation-fraction writes the validation split there)")
        }
        XCTAssertEqual(try ReferenceSet.load(path: dir.path, split: .all).tracks.count, 2, "all: training only when there is none")
        // validation/ holding b.mid's rows alone; the manifest says which rows are whose.
        let val = dir.appendingPathComponent("validation")
        try writeDataset(val, velocities: true, positions: true, manifest: false)
        try """
            {"settings": {"ppq": 480}, "files": [{"path": "a.mid", "split": "training", "hits": 6, "offset": 0},
                                                 {"path": "b.mid", "split": "training", "hits": 3, "offset": 6},
                                                 {"path": "c.mid", "split": "validation", "hits": 9, "offset": 0}]}
            """.write(to: dir.appendingPathComponent("manifest.json"), atomically: true, encoding: .utf8)
        let v = try ReferenceSet.load(path: dir.path, split: .validation)
        XCTAssertEqual(v.tracks.map(\.hits), [9])
        XCTAssertEqual(v.split, .validation)
        XCTAssertEqual(try ReferenceSet.load(path: dir.path, split: .all).tracks.map(\.hits), [6, 3, 9])
        // Without manifest.json: one sequence, said so.
        let bare = tmp.appendingPathComponent("bare")
        try writeDataset(bare, velocities: false, positions: false, manifest: false)
        let b = try ReferenceSet.load(path: bare.path)
        XCTAssertEqual(b.tracks.map(\.hits), [9])
        XCTAssertTrue(b.remarks.contains { $0.contains("no manifest.json file offsets") }, "\(b.remarks)")
    }
}

/// The rule `drummer choose-step` applies (Report.StepRule).
final class StepRuleTests: XCTestCase {
    func figures(_ step: Int, periodicity: Double = 0.9, note: Double = 0.01, delta: Double = 0.01, velocity: Double = 0.01,
                 grid: Double = 1.0, accent: Double = 0.9, met: Bool = true) -> StepFigures {
        StepFigures(step: step, path: "ckpt-\(step).h5", periodicity: periodicity, noteJS: note, deltaJS: delta,
                    velocityJS: velocity, grid: grid, accent: accent, targetsMet: met)
    }

    func testMarginsAreInclusiveAndEachIsEnforced() {
        // At the margins (the grid's 10% just inside: 1.1 − 1 is not exactly 0.1 in binary).
        XCTAssertTrue(StepRule.meets(figures(1, periodicity: 0.85, note: 0.025, delta: 0.025, velocity: 0.04, grid: 1.0999, accent: 0.85)))
        XCTAssertTrue(StepRule.meets(figures(1, grid: 0.9001)))
        for bad in [figures(1, periodicity: 0.849), figures(1, note: 0.0251), figures(1, delta: 0.0251),
                    figures(1, velocity: 0.0401), figures(1, grid: 1.101), figures(1, grid: 0.899),
                    figures(1, accent: 0.849), figures(1, met: false)] {
            XCTAssertFalse(StepRule.meets(bad), "\(bad)")
        }
        var unmeasured = figures(1)
        unmeasured.velocityJS = nil
        XCTAssertFalse(StepRule.meets(unmeasured), "a figure that cannot be measured does not meet the rule")
    }

    func testChoosesTheHighestPeriodicityThenTheEarlierStep() {
        let rows = [figures(4000, periodicity: 0.86), figures(4500, periodicity: 0.95, note: 0.03),
                    figures(5000, periodicity: 0.88), figures(5500, periodicity: 0.88), figures(6000, periodicity: 0.70)]
        XCTAssertEqual(StepRule.choose(rows), 2, "0.95 misses the note margin; 0.88 twice: the earlier step")
        XCTAssertEqual(StepRule.choose([figures(6000, periodicity: 0.88), figures(5000, periodicity: 0.88)]), 1)
        XCTAssertNil(StepRule.choose([figures(1, periodicity: 0.5), figures(2, met: false)]))
        XCTAssertNil(StepRule.choose([]))
    }

    /// --structure: the bar-structure and touch targets must be met too; the widest margin
    /// wins (not the highest similarity). Without it they do not count (groove targets only).
    func testStructureRuleNeedsTheBarTargetsAndRanksByMargin() {
        func structured(_ step: Int, similarity: Double, margin: Double, met: Bool, touch: Bool = true,
                        periodicity: Double = 0.9) -> StepFigures {
            var f = figures(step, periodicity: periodicity)
            f.similarity = similarity
            f.margin = margin
            f.structureMet = met
            f.touchMet = touch
            return f
        }
        let rows = [structured(1, similarity: 0.95, margin: 0.2, met: false, periodicity: 0.99),
                    structured(2, similarity: 0.99, margin: 0.01, met: true),
                    structured(3, similarity: 0.90, margin: 0.05, met: true, periodicity: 0.86),
                    structured(4, similarity: 0.97, margin: 0.3, met: true, touch: false)]
        XCTAssertEqual(StepRule.choose(rows), 0, "without --structure: the highest periodicity, bar targets ignored")
        XCTAssertEqual(StepRule.choose(rows, structure: true), 2,
                       "with it: step 1 misses a bar target, step 4 a touch target; a margin of 5% beats 1% (and a higher similarity)")
        XCTAssertEqual(StepRule.choose([structured(5, similarity: 0.9, margin: 0.05, met: true),
                                        structured(3, similarity: 0.8, margin: 0.05, met: true)], structure: true), 1,
                       "a tie: the earlier step")
        XCTAssertFalse(StepRule.meets(rows[0], structure: true))
        XCTAssertFalse(StepRule.meets(rows[3], structure: true))
        XCTAssertTrue(StepRule.meets(rows[3]), "the touch targets count only with --structure")
    }

    /// --closest: the fewest targets missed, then the highest similarity, then the earlier step.
    func testClosestMissesTheFewestTargets() {
        func missing(_ step: Int, _ keys: [String], similarity: Double) -> StepFigures {
            var f = figures(step, periodicity: 0.9)
            f.missed = keys
            f.similarity = similarity
            return f
        }
        let rows = [missing(1, ["hits_per_bar", "velocity_mean"], similarity: 0.99), missing(2, ["bar_similarity_lag8"], similarity: 0.8),
                    missing(3, ["fill_tom_crash_ratio"], similarity: 0.9), missing(4, ["note_js_bits"], similarity: 0.9)]
        XCTAssertEqual(StepRule.closest(rows), 2, "one target missed, and the higher similarity; step 4 ties and comes later")
        XCTAssertNil(StepRule.closest([]))
    }

    /// The groove targets decide `targetsMet`, whatever the bar-structure figures say.
    func testTargetsMetCountsGrooveTargetsOnly() throws {
        XCTAssertEqual(Set(StatsResult.grooveTargets).intersection(StatsResult.structureTargets), [])
        var g = GrooveTally(ticksPerQuarter: 480), r = GrooveTally(ticksPerQuarter: 480)
        // The same two bars of a beat on both sides, then a reference with many different bars.
        let bar: [(Int, Int)] = [(36, 0), (42, 0), (38, 480), (42, 240), (42, 720), (36, 960), (42, 960), (38, 1440), (42, 1200), (42, 1680)]
        func track(_ bars: Int, fills: Bool = true) -> HitTrack {
            var notes: [Int] = [], onsets: [Int] = []
            for b in 0..<bars {
                for (n, t) in bar { notes.append(n); onsets.append(b * 1920 + t) }
                // A fill: a crash on the last sixteenth of bars 4 and 8 (and a tom in bar 2, so both have some).
                if fills, b % 4 == 3 { notes.append(49); onsets.append(b * 1920 + 1800) }
                if fills, b % 8 == 1 { notes.append(48); onsets.append(b * 1920 + 1800) }
            }
            let order = onsets.indices.sorted { onsets[$0] < onsets[$1] }
            return HitTrack(path: "t", ticksPerQuarter: 480, notes: order.map { notes[$0] }, onsets: order.map { onsets[$0] },
                            velocities: order.map { onsets[$0] % 480 == 0 ? 100 : 60 },
                            bars: order.map { BarSlot(bar: onsets[$0] / 1920, tickInBar: onsets[$0] % 1920, barTicks: 1920) })
        }
        g.add(track(16), tolerance: 0.125)
        r.add(track(16), tolerance: 0.125)
        let same = StepFigures(step: 1, path: "p", result: StatsResult(generated: g, reference: r, tolerance: 0.125, quantize: nil))
        XCTAssertTrue(same.structureMet)
        XCTAssertEqual(try XCTUnwrap(same.similarity), 1, accuracy: 1e-12)
        XCTAssertTrue(same.targetsMet)
        var plain = GrooveTally(ticksPerQuarter: 480)
        plain.add(track(16, fills: false), tolerance: 0.125)
        let other = StepFigures(step: 1, path: "p", result: StatsResult(generated: plain, reference: r, tolerance: 0.125, quantize: nil))
        XCTAssertFalse(other.structureMet, "no fills where the reference has them")
        // choose-step's fill column: the tom + crash bump as a share of the reference's.
        XCTAssertEqual(try XCTUnwrap(same.fillBump), 1, accuracy: 1e-12)
        XCTAssertNil(other.fillBump, "no tom or crash in any bar: no share ratio, no bump")
        // The margin: the same files on both sides are nearest the 10% of the touch targets
        // (log 1.1; the lags have log(1/0.8), patterns log 1.3, the bumps log 2; no soft hits on
        // either side: within with room to spare); no fill bump against the reference's: missed,
        // a margin of −∞.
        XCTAssertEqual(try XCTUnwrap(same.margin), log(1.1), accuracy: 1e-9)
        XCTAssertEqual(other.margin, -.infinity)
        var denser = GrooveTally(ticksPerQuarter: 480)
        let dense = track(16)
        // A second kick in every bar's last 16th (the fills' 16th): 10 hits a bar where there were 10 or 11.
        var notes = dense.notes, onsets = dense.onsets
        for b in 0..<16 { notes.append(36); onsets.append(b * 1920 + 1800) }
        let order = onsets.indices.sorted { (onsets[$0], notes[$0]) < (onsets[$1], notes[$1]) }
        denser.add(HitTrack(path: "d", ticksPerQuarter: 480, notes: order.map { notes[$0] }, onsets: order.map { onsets[$0] },
                            velocities: order.map { onsets[$0] % 480 == 0 ? 100 : 60 },
                            bars: order.map { BarSlot(bar: onsets[$0] / 1920, tickInBar: onsets[$0] % 1920, barTicks: 1920) }),
                   tolerance: 0.125)
        let more = StepFigures(step: 1, path: "p", result: StatsResult(generated: denser, reference: r, tolerance: 0.125, quantize: nil))
        let perBar = try XCTUnwrap(more.hitsPerBar)
        XCTAssertGreaterThan(perBar, 1)
        XCTAssertLessThanOrEqual(try XCTUnwrap(more.margin), log(1.1 / perBar) + 1e-9, "more hits per bar: nearer its limit")
    }
}
