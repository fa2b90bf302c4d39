import XCTest
import Foundation
import DrummerCore
import MIDIParse
@testable import Sample
import ModelFiles

final class PrimerTests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws {
        tmp = FileManager.default.temporaryDirectory.appendingPathComponent("primer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    private func write(_ name: String, ppq: Int = 480, _ notes: [MIDINote]) throws -> String {
        let path = tmp.appendingPathComponent(name).path
        try Data(MIDIWriter.format0(ppq: ppq, notes: notes)).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func note(_ tick: Int, _ n: UInt8, ch: UInt8 = 9) -> MIDINote {
        MIDINote(tick: tick, note: n, velocity: 100, channel: ch, duration: 10)
    }

    func testGeneratedFileReadsBackAsTheSampledEvents() throws {
        let (w, v) = try TestModels.small()
        var rng = SeededRNG(seed: 31)
        let events = try Sampler(weights: w, vocabulary: v).generate(count: 120, rng: &rng)
        let hits = DrumMIDI.deduplicated(events.map(\.hit))
        let path = tmp.appendingPathComponent("g.mid").path
        try DrumMIDI.write(hits, to: path)
        let primer = try Primer.load(path: path, vocabulary: v)
        XCTAssertEqual(primer.hits, hits)
        XCTAssertEqual(v.hits(primer.events), hits)
        XCTAssertEqual(primer.mappedTicks, 0)
        XCTAssertEqual(primer.channel, 9)
    }

    func testRescalesTo480PPQAndPrefersChannel10() throws {
        let v = try Vocabulary(ixToNote: [36, 38, 42], ixToTick: [0, 60, 120, 240, 480])
        // 96 PPQ: 24 ticks = a sixteenth = 120 at 480 PPQ. Channel index 0 notes are ignored
        // because channel index 9 has notes.
        let path = try write("96.mid", ppq: 96, [note(0, 36), note(0, 42), note(24, 38), note(48, 42),
                                                 note(12, 50, ch: 0), note(96, 36)])
        let primer = try Primer.load(path: path, vocabulary: v)
        XCTAssertEqual(primer.hits, [DrumHit(note: 36, delta: 0), DrumHit(note: 42, delta: 0),
                                     DrumHit(note: 38, delta: 120), DrumHit(note: 42, delta: 120),
                                     DrumHit(note: 36, delta: 240)])
        XCTAssertEqual(primer.events.map(\.note), [0, 2, 1, 2, 0])
        XCTAssertEqual(primer.events.map(\.tick), [0, 0, 2, 2, 3])
        // Without channel-10 notes every channel is read.
        let other = try write("ch1.mid", [note(0, 36, ch: 0), note(60, 38, ch: 3)])
        let p2 = try Primer.load(path: other, vocabulary: v)
        XCTAssertNil(p2.channel)
        XCTAssertEqual(p2.hits, [DrumHit(note: 36, delta: 0), DrumHit(note: 38, delta: 60)])
    }

    /// The last bars end with the last hit's bar and count the empty bars among them: a hit
    /// far before them is not kept (it was, when bars were counted by the bar lines of hits).
    func testLastBarsCountEmptyBars() throws {
        let v = try Vocabulary(ixToNote: [36, 38], ixToTick: [0, 480, 1920])
        // Bars 1 and 2 played, then bar 5 after two empty ones.
        let path = try write("gap.mid", [note(0, 36), note(1920, 38), note(4 * 1920, 36), note(4 * 1920 + 480, 38)])
        let primer = try Primer.load(path: path, vocabulary: v)
        XCTAssertEqual(primer.lastBars(2).hits.map(\.delta), [4 * 1920 - 1920, 480], "bars 4-5: only bar 5's two hits")
        XCTAssertEqual(primer.lastBars(4).hits.count, 3, "bars 2-5")
        XCTAssertEqual(primer.lastBars(5).hits.count, 4, "every bar")
        XCTAssertEqual(primer.lastBars(Int.max).hits.count, 4, "no overflow counting bars back")
        // Without empty bars the last bars are the last bar lines of hits, as before.
        let full = try Primer.load(path: try write("full.mid", [note(0, 36), note(1920, 38), note(3840, 36)]), vocabulary: v)
        XCTAssertEqual(full.lastBars(2).hits.map(\.note), [38, 36])
    }

    func testTicksOutsideTheVocabularyMapToTheNearest() throws {
        let v = try Vocabulary(ixToNote: [36], ixToTick: [240, 0, 30, 60, 120, 480])  // unsorted on purpose
        let path = try write("t.mid", [note(0, 36), note(44, 36), note(89, 36), note(1089, 36), note(1149, 36)])
        let primer = try Primer.load(path: path, vocabulary: v)
        XCTAssertEqual(primer.hits.map(\.delta), [0, 44, 45, 1000, 60])
        // 44 → 30 (14 < 16), 45 → 30 (tie: the smaller), 1000 → 480 (largest), 60 exact.
        XCTAssertEqual(primer.events.map { v.ixToTick[$0.tick] }, [0, 30, 30, 480, 60])
        XCTAssertEqual(primer.mappedTicks, 3)
    }

    func testNotesOutsideTheVocabularyAreNamed() throws {
        let v = try Vocabulary(ixToNote: [36, 38], ixToTick: [0, 120])
        let path = try write("n.mid", [note(0, 36), note(120, 49), note(240, 57), note(360, 49)])
        XCTAssertThrowsError(try Primer.load(path: path, vocabulary: v)) { e in
            XCTAssertEqual(e as? PrimerError, .notesOutsideVocabulary(path: path, notes: [49, 57], vocabulary: [36, 38]))
            XCTAssertTrue("\(e)".contains("49, 57"))
        }
    }

    func testEmptyCorruptAndMissingPrimers() throws {
        let v = try Vocabulary(ixToNote: [36], ixToTick: [0])
        let empty = try write("empty.mid", [])
        XCTAssertThrowsError(try Primer.load(path: empty, vocabulary: v)) {
            XCTAssertEqual($0 as? PrimerError, .noHits(path: empty))
        }
        let junk = tmp.appendingPathComponent("junk.mid").path
        try Data("not a midi file at all".utf8).write(to: URL(fileURLWithPath: junk))
        XCTAssertThrowsError(try Primer.load(path: junk, vocabulary: v)) {
            XCTAssertTrue("\($0)".contains(junk), "\($0)")
        }
        let missing = tmp.appendingPathComponent("missing.mid").path
        XCTAssertThrowsError(try Primer.load(path: missing, vocabulary: v)) {
            XCTAssertTrue("\($0)".contains(missing), "\($0)")
        }
    }

    func testOriginalPatternsPrimeTheOriginalModel() throws {
        let dir = try SharedFixtures.originalModelDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = try ModelDirectory.load(path: dir.path)
        for (name, count) in [("pattern1.mid", 12), ("pattern2.mid", 10)] {
            let primer = try Primer.load(path: SharedFixtures.rnnDrummer.appendingPathComponent(name).path,
                                         vocabulary: model.vocabulary)
            XCTAssertEqual(primer.events.count, count, name)
            XCTAssertNil(primer.channel)
            XCTAssertEqual(primer.mappedTicks, 0)
            var rng = SeededRNG(seed: 1)
            let out = try Sampler(model: model).generate(count: 50, primer: primer.events, rng: &rng)
            XCTAssertEqual(out.count, 50)
        }
    }
}
