// The sampler never strikes a note twice at one onset: the joint (note, tick) distribution
// is masked where a struck note would repeat at the current onset and renormalised, so
// exactly n hits come out, each onset holds each note once, and the draws are the
// double-precision reference's (ReferenceLSTM.generate).
import XCTest
import DrummerCore
import MIDIParse
@testable import Sample

final class OnsetMaskTests: XCTestCase {
    /// A model biased towards note 0 (+8 on its logit) at delta 0 (+16): without the mask
    /// nearly every hit would repeat note 0 at the onset already struck.
    private func biased(_ w: LSTMWeights, zeroTick: Int) throws -> LSTMWeights {
        let s = w.shape, O = s.outputWidth
        var wy = w.wy
        wy[s.hidden * O] += 8
        wy[s.hidden * O + s.notes + zeroTick] += 16
        return try LSTMWeights(shape: s, wx: w.wx, wy: wy)
    }

    /// The hits grouped by onset (a new onset at every non-zero delta).
    private func onsets(_ hits: [DrumHit]) -> [[Int]] {
        var out: [[Int]] = []
        for (i, h) in hits.enumerated() {
            if i == 0 || h.delta != 0 { out.append([]) }
            out[out.count - 1].append(h.note)
        }
        return out
    }

    func testExactlyNHitsAndNoNoteTwiceAtAnOnset() throws {
        let (ow, v) = try TestModels.small()
        let w = try biased(ow, zeroTick: 0)
        let sampler = try Sampler(weights: w, vocabulary: v)
        for t in [Float(1), 0.5, 0] {
            var rng = SeededRNG(seed: 3)
            let out = try sampler.generate(count: 2000, options: SamplingOptions(temperature: t), rng: &rng)
            let hits = out.map(\.hit)
            XCTAssertEqual(out.count, 2000, "T=\(t)")
            let groupsByOnset = onsets(hits)
            XCTAssertTrue(groupsByOnset.allSatisfy { Set($0).count == $0.count }, "T=\(t): a note twice at an onset")
            XCTAssertEqual(DrumMIDI.deduplicated(hits), hits, "T=\(t)")
            // Delta 0 dominates: onsets fill up with every note (4), so the mask excluded
            // every note there and the next hit had to move on.
            XCTAssertGreaterThan(hits.filter { $0.delta == 0 }.count, 1000, "T=\(t)")
            XCTAssertEqual(groupsByOnset.map(\.count).max(), 4, "T=\(t)")
            // The draws are the reference's (joint masking, renormalised), the notes the GM kit's.
            let want = ReferenceLSTM.generate(w, zeroTick: 0, count: 2000, temperature: Double(t), initScale: 0.1,
                                              primer: [], seed: 3,
                                              sounds: v.ixToNote.map(GeneralMIDIDrums.audible(note:)))
            XCTAssertEqual(out.map(\.event), want, "T=\(t)")
        }
    }

    /// When every note has been struck at the onset (more hits there than notes) the mask
    /// excludes them all at delta 0: the next hit takes a later tick, drawn from the ticks
    /// after 0, and nothing hangs.
    func testAnOnsetHoldingEveryNoteMovesOn() throws {
        let vocab = try Vocabulary(ixToNote: [36, 38], ixToTick: [0, 120])
        let groups = ModelGroups(vocabulary: vocab)
        let shape = groups.shape(hidden: 2)
        var wy = [Float](repeating: 0, count: shape.wyCount)
        wy[2 * 4 + 2] = 30  // tick value 0 is e^30 times as likely as 120
        let w = try LSTMWeights(shape: shape, wx: [Float](repeating: 0, count: shape.wxCount), wy: wy)
        let sampler = try Sampler(weights: w, groups: groups)
        for t in [Float(1), 0] {
            var rng = SeededRNG(seed: 9)
            let hits = try sampler.generate(count: 1000, options: SamplingOptions(temperature: t), rng: &rng).map(\.hit)
            XCTAssertEqual(hits.count, 1000)
            // Every onset after the first holds both notes: the one the second hit moves away from.
            let byOnset = onsets(hits)
            XCTAssertTrue(byOnset.allSatisfy { Set($0).count == $0.count }, "T=\(t)")
            XCTAssertTrue(byOnset.dropFirst().dropLast().allSatisfy { $0.count == 2 }, "T=\(t): \(byOnset.prefix(10))")
            XCTAssertEqual(hits.filter { $0.delta == 120 }.count, byOnset.count - (hits[0].delta == 120 ? 0 : 1), "T=\(t)")
        }
    }

    /// A vocabulary whose only tick value is 0 cannot place more hits than notes without
    /// repeating one: the sampler still ends with n hits (nothing can be masked), and the file
    /// holds each note once (DrumMIDI writes a repeated note at one onset once).
    func testOnlySimultaneousTicksEndsAndWritesEachNoteOnce() throws {
        let vocab = try Vocabulary(ixToNote: [36, 38], ixToTick: [0])
        let shape = vocab.shape(hidden: 2)
        let w = try LSTMWeights(shape: shape, wx: [Float](repeating: 0.1, count: shape.wxCount),
                                wy: [Float](repeating: 0.1, count: shape.wyCount))
        var rng = SeededRNG(seed: 1)
        let hits = try Sampler(weights: w, vocabulary: vocab).generate(count: 50, rng: &rng).map(\.hit)
        XCTAssertEqual(hits.count, 50)
        XCTAssertTrue(hits.allSatisfy { $0.delta == 0 })
        XCTAssertEqual(try DrumMIDI.notes(hits).map(\.note).sorted(), [36, 38])
    }
}
