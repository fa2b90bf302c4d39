// Every hit audible. The sampler writes General MIDI drum notes by default (22 → 42,
// 26 → 46, other notes outside 35...81 → their class's GM note), never striking two notes that
// become one at the same onset, so every one of the n hits is written; `.raw` writes the
// training data's notes as the sampler did before.
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
        var rawOptions = SamplingOptions()
        rawOptions.noteOutput = .raw
        for t in [Float(1), 0.6, 0] {
            var gmRNG = SeededRNG(seed: 3), rawRNG = SeededRNG(seed: 3)
            var gmOptions = SamplingOptions(temperature: t)
            gmOptions.noteOutput = .generalMIDI
            rawOptions.temperature = t
            let gm = try sampler.generate(count: 400, options: gmOptions, rng: &gmRNG)
            let raw = try sampler.generate(count: 400, options: rawOptions, rng: &rawRNG)
            XCTAssertEqual(gm.map(\.event), ReferenceLSTM.generate(small, zeroTick: 0, count: 400, temperature: Double(t), initScale: 0.1,
                                                                   primer: [], seed: 3, sounds: [42, 46, 42, 46]), "T \(t)")
            XCTAssertEqual(raw.map(\.event), ReferenceLSTM.generate(small, zeroTick: 0, count: 400, temperature: Double(t), initScale: 0.1,
                                                                    primer: [], seed: 3), "T \(t): raw as before")
            XCTAssertEqual(Set(gm.map(\.hit.note)), [42, 46], "T \(t)")
            XCTAssertEqual(DrumMIDI.deduplicated(gm.map(\.hit)).count, 400, "T \(t): no hit lost")
            XCTAssertLessThan(DrumMIDI.deduplicated(raw.map(\.hit).map { DrumHit(note: GeneralMIDIDrums.audible(note: $0.note), delta: $0.delta) }).count,
                              400, "T \(t): the raw notes, mapped after the fact, would lose hits")
        }
    }

    static var grooveModel: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("models/groove-events")
    }

    func testTheShippedModelWritesGeneralMIDINotesAndLosesNoHit() throws {
        let model = try ModelDirectory.load(path: Self.grooveModel.path)
        XCTAssertTrue(model.groups.vocabulary.ixToNote.contains(22), "the shipped model plays note 22")
        let sampler = try Sampler(model: model)
        var rawOptions = SamplingOptions()
        rawOptions.noteOutput = .raw
        var a = SeededRNG(seed: 5), b = SeededRNG(seed: 5)
        let gm = try sampler.generate(count: 3000, options: SamplingOptions(), rng: &a)
        let raw = try sampler.generate(count: 3000, options: rawOptions, rng: &b)
        XCTAssertTrue(gm.allSatisfy { GeneralMIDIDrums.range.contains($0.hit.note) }, "every written note is a GM drum")
        XCTAssertTrue(raw.contains { $0.hit.note == 22 }, "the raw draws have the hi-hat edge")
        XCTAssertEqual(DrumMIDI.deduplicated(gm.map(\.hit)).count, 3000, "no two hits of one GM note at one onset")
        // The random baseline follows the same rule.
        var r = SeededRNG(seed: 9)
        let uniform = try Sampler.randomBaseline(count: 2000, vocabulary: model.groups.vocabulary, rng: &r)
        XCTAssertTrue(uniform.allSatisfy { GeneralMIDIDrums.range.contains($0.hit.note) })
        XCTAssertEqual(DrumMIDI.deduplicated(uniform.map(\.hit)).count, 2000)
    }
}
