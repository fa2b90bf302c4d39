// LookbackTracker against a brute-force reference written from the definition in
// Lookback.swift (every earlier hit searched, no ring), and by hand on a repeated bar.
import XCTest
@testable import DrummerCore

final class LookbackTests: XCTestCase {
    struct Hit {
        var onset: Int, note: Int32, tick: Int32, bar: Int
    }

    /// The definition, the plain way: for hit i, among the hits before it (at most `window − 1`
    /// back) with an onset before t_i, the onset nearest t_i − L within the tolerance (the earlier
    /// on a tie); the hit of rank min(r, n − 1) there; the hit after it.
    static func reference(_ hits: [Hit], tolerance: Int, window: Int, notes: Int32, ticks: Int32) -> [(Int32, Int32)] {
        var out: [(Int32, Int32)] = []
        for (i, h) in hits.enumerated() {
            let rank = hits[..<i].filter { $0.onset == h.onset }.count
            let lowest = max(0, i - (window - 1))
            let target = h.onset - h.bar
            guard h.bar > tolerance else { out.append((notes, ticks)); continue }
            let candidates = Set(hits[lowest..<i].map(\.onset)).filter { $0 < h.onset && abs($0 - target) <= tolerance }
            guard let o = candidates.min(by: { abs($0 - target) != abs($1 - target) ? abs($0 - target) < abs($1 - target) : $0 < $1 }) else {
                out.append((notes, ticks))
                continue
            }
            let at = (lowest..<i).filter { hits[$0].onset == o }
            let j = at[min(rank, at.count - 1)]
            out.append((hits[j + 1].note, hits[j + 1].tick))
        }
        return out
    }

    func run(_ hits: [Hit], tolerance: Int, window: Int) -> [(Int32, Int32)] {
        var t = LookbackTracker(group: LookbackGroup(toleranceTicks: tolerance, window: window), notes: 9, ticks: 7)
        return hits.map { t.push(onset: $0.onset, note: $0.note, tick: $0.tick, barTicks: $0.bar) }
    }

    func testARepeatedBarLooksUpTheHitThatCameNext() {
        // Two bars of 4 beats (L = 4): kick+hat at 0, hat at 1, snare+hat at 2, hat at 3; again.
        // Sorted within onsets: (0: kick 0, hat 2), (1: hat 2), (2: snare 1, hat 2), (3: hat 2).
        let bar: [(Int, Int32)] = [(0, 0), (0, 2), (1, 2), (2, 1), (2, 2), (3, 2)]
        var hits: [Hit] = []
        for b in 0..<2 { for (o, n) in bar { hits.append(Hit(onset: 4 * b + o, note: n, tick: Int32(o), bar: 4)) } }
        let got = run(hits, tolerance: 0, window: 64)
        // Bar 1: nothing one bar back: none (9, 7).
        XCTAssertTrue(got[0..<6].allSatisfy { $0 == (9, 7) })
        // Bar 2: each hit gets the hit that followed its twin one bar ago.
        let expected: [(Int32, Int32)] = [(2, 0), (2, 1), (1, 2), (2, 2), (2, 3), (0, 0)]
        for (k, e) in expected.enumerated() { XCTAssertTrue(got[6 + k] == e, "hit \(6 + k): \(got[6 + k]), expected \(e)") }
    }

    func testNearestOnsetWithinTheToleranceAndTheEarlierOnATie() {
        // L = 100, tolerance 10: hit at 200 looks for 100; onsets 92 and 108 are both 8 away: 92 wins.
        let hits = [Hit(onset: 92, note: 1, tick: 0, bar: 100), Hit(onset: 108, note: 2, tick: 1, bar: 100),
                    Hit(onset: 150, note: 3, tick: 2, bar: 100), Hit(onset: 200, note: 4, tick: 3, bar: 100),
                    // 305 looks for 205: 200 is 5 away.
                    Hit(onset: 305, note: 5, tick: 4, bar: 100),
                    // 420 looks for 320: nothing within 10 (305 is 15 away).
                    Hit(onset: 420, note: 6, tick: 5, bar: 100)]
        let got = run(hits, tolerance: 10, window: 64)
        XCTAssertTrue(got[3] == (2, 1), "\(got[3])")
        XCTAssertTrue(got[4] == (5, 4), "the hit after 200 is 305 itself: \(got[4])")
        XCTAssertTrue(got[5] == (9, 7), "\(got[5])")
    }

    func testMatchesTheReferenceOnRandomSequences() {
        var rng = SeededRNG(seed: 7)
        for trial in 0..<200 {
            var hits: [Hit] = []
            var onset = 0
            let bar = [48, 64, 96][trial % 3], tolerance = [0, 3, 8][trial % 3]
            for _ in 0..<(20 + rng.index(below: 120)) {
                // Deltas of 0 (chords) are common; the bar changes now and then.
                onset += [0, 0, 4, 8, 12, 16, 5, 3][rng.index(below: 8)]
                hits.append(Hit(onset: onset, note: Int32(rng.index(below: 9)), tick: Int32(rng.index(below: 7)),
                                bar: rng.index(below: 10) == 0 ? bar / 2 : bar))
            }
            for window in [4, 16, 512] {
                let got = run(hits, tolerance: tolerance, window: window)
                let want = Self.reference(hits, tolerance: tolerance, window: window, notes: 9, ticks: 7)
                for i in hits.indices where got[i] != want[i] {
                    return XCTFail("trial \(trial), window \(window), hit \(i): \(got[i]), reference \(want[i])")
                }
            }
        }
    }

    func testResetForgetsEverything() {
        var t = LookbackTracker(group: LookbackGroup(toleranceTicks: 0, window: 8), notes: 3, ticks: 3)
        _ = t.push(onset: 0, note: 1, tick: 0, barTicks: 4)
        _ = t.push(onset: 2, note: 2, tick: 1, barTicks: 4)
        XCTAssertTrue(t.push(onset: 4, note: 0, tick: 2, barTicks: 4) == (2, 1))
        t.reset()
        XCTAssertTrue(t.push(onset: 4, note: 0, tick: 2, barTicks: 4) == (3, 3))
    }
}
