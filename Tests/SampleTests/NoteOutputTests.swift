// Every hit audible. The sampler writes General MIDI drum notes (22 → 42, 26 → 46, other
// notes outside 35...81 → their class's GM note), never striking two notes that become one at
// the same onset, so every one of the n hits is written.
import XCTest
import DrummerCore
import MIDIParse
import ModelFiles
@testable import Sample

final class NoteOutputTests: XCTestCase {
    func testTheGeneralMIDIMap() {
        XCTAssertEqual(GeneralMIDIDrums.audible(note: 22), 42)
        XCTAssertEqual(GeneralMIDIDrums.audible(note: 26), 46)
        for n in 35...81 { XCTAssertEqual(GeneralMIDIDrums.audible(note: n), n, "GM notes stay") }
        // Magenta's classes for the notes around GM's range: 27...34 and 82...87.
        XCTAssertEqual([27, 29, 30, 31, 82, 84, 85, 86].map(GeneralMIDIDrums.audible(note:)), [38, 45, 50, 38, 51, 45, 38, 48])
        // No class: the nearest GM note.
        XCTAssertEqual([0, 21, 23, 88, 127].map(GeneralMIDIDrums.audible(note:)), [35, 35, 35, 81, 81])
    }

    /// Against the reference sampler, which strikes notes written alike together: a small
    /// model whose vocabulary holds 22 and 42 (one GM note) and 26 and 46.
    func testDrawsMatchTheReferenceThatStrikesNotesWrittenAlikeTogether() throws {
        let (small, _) = try TestModels.small()
        let vocabulary = try Vocabulary(ixToNote: [22, 26, 42, 46], ixToTick: [0, 30, 60, 120, 240, 480])
        let sampler = try Sampler(weights: small, vocabulary: vocabulary)
        for t in [Float(1), 0.6, 0] {
            var rng = SeededRNG(seed: 3)
            let gm = try sampler.generate(count: 400, options: SamplingOptions(temperature: t), rng: &rng)
            XCTAssertEqual(gm.map(\.event), ReferenceLSTM.generate(small, zeroTick: 0, count: 400, temperature: Double(t), initScale: 0.1,
                                                                   primer: [], seed: 3, sounds: [42, 46, 42, 46]), "T \(t)")
            XCTAssertEqual(Set(gm.map(\.hit.note)), [42, 46], "T \(t)")
            XCTAssertEqual(DrumMIDI.deduplicated(gm.map(\.hit)).count, 400, "T \(t): no hit lost")
            // Each note its own (the raw notes), the reference draws differently: the mask matters.
            let raw = ReferenceLSTM.generate(small, zeroTick: 0, count: 400, temperature: Double(t), initScale: 0.1, primer: [], seed: 3)
            if t > 0 { XCTAssertNotEqual(gm.map(\.event), raw, "T \(t)") }
        }
    }
}
