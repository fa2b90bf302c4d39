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
        XCTAssertEqual(v.hits(primer.events.map(\.event)), hits)
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
        XCTAssertEqual(primer.events.map(\.event.note), [0, 2, 1, 2, 0])
        XCTAssertEqual(primer.events.map(\.event.tick), [0, 0, 2, 2, 3])
        // Without channel-10 notes every channel is read.
        let other = try write("ch1.mid", [note(0, 36, ch: 0), note(60, 38, ch: 3)])
        let p2 = try Primer.load(path: other, vocabulary: v)
        XCTAssertNil(p2.channel)
        XCTAssertEqual(p2.hits, [DrumHit(note: 36, delta: 0), DrumHit(note: 38, delta: 60)])
    }

    func testTicksOutsideTheVocabularyMapToTheNearest() throws {
        let v = try Vocabulary(ixToNote: [36], ixToTick: [240, 0, 30, 60, 120, 480])  // unsorted on purpose
        let path = try write("t.mid", [note(0, 36), note(44, 36), note(89, 36), note(1089, 36), note(1149, 36)])
        let primer = try Primer.load(path: path, vocabulary: v)
        XCTAssertEqual(primer.hits.map(\.delta), [0, 44, 45, 1000, 60])
        // 44 → 30 (14 < 16), 45 → 30 (tie: the smaller), 1000 → 480 (largest), 60 exact.
        XCTAssertEqual(primer.events.map { v.ixToTick[$0.event.tick] }, [0, 30, 30, 480, 60])
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

    // MARK: - Groove models (position and velocity groups)

    private func write(_ name: String, ppq: Int = 480, meters: [MIDITimeSignature], _ notes: [(tick: Int, note: UInt8, velocity: UInt8)]) throws -> String {
        let path = tmp.appendingPathComponent(name).path
        let bytes = try MIDIWriter.format0(ppq: ppq, timeSignatures: meters, notes: notes.map {
            MIDINote(tick: $0.tick, note: $0.note, velocity: $0.velocity, channel: 9, duration: 10)
        })
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Each hit carries its place in its bar, from the primer's own time signature (rescaled
    /// to the model's PPQ like the onsets), and its velocity's bin.
    func testPrimerSuppliesPositionsFromItsMeterAndVelocityBins() throws {
        let (_, groups) = try TestModels.groove()  // bins 1...20, 21...60, 61...100, 101...127; 16 slots of 120
        let waltz = try write("waltz.mid", meters: [MIDITimeSignature(numerator: 3, denominator: 4)],
                              [(0, 36, 30), (0, 42, 70), (480, 38, 110), (1440, 36, 15), (2400, 42, 61)])
        let p = try Primer.load(path: waltz, groups: groups)
        XCTAssertEqual(p.meter, "3/4")
        XCTAssertEqual(p.hits, [DrumHit(note: 36, delta: 0, velocity: 30), DrumHit(note: 42, delta: 0, velocity: 70),
                                DrumHit(note: 38, delta: 480, velocity: 110), DrumHit(note: 36, delta: 960, velocity: 15),
                                DrumHit(note: 42, delta: 960, velocity: 61)])
        XCTAssertEqual(p.events.map(\.tickInBar), [0, 0, 480, 0, 960])
        XCTAssertEqual(p.events.map(\.barTicks), [1440, 1440, 1440, 1440, 1440])
        XCTAssertEqual(p.events.map(\.event.velocity), [1, 2, 3, 0, 2])
        XCTAssertEqual(p.events.map(\.event.note), [0, 2, 1, 0, 2])
        // 960 is not a tick value of the model: the nearest, 1000.
        XCTAssertEqual(p.events.map { groups.vocabulary.ixToTick[$0.event.tick] }, [0, 0, 480, 1000, 1000])
        XCTAssertEqual(p.mappedTicks, 2)

        // 6/8 at 96 PPQ: a bar is 288 ticks there, 1440 at 480.
        let jig = try write("jig.mid", ppq: 96, meters: [MIDITimeSignature(numerator: 6, denominator: 8)],
                            [(0, 36, 100), (144, 38, 100), (288, 36, 100), (360, 42, 100)])
        let q = try Primer.load(path: jig, groups: groups)
        XCTAssertEqual(q.meter, "6/8")
        XCTAssertEqual(q.events.map(\.tickInBar), [0, 720, 0, 360])
        XCTAssertEqual(q.events.map(\.barTicks), [1440, 1440, 1440, 1440])

        // Without a time signature: 4/4.
        let plain = try write("plain.mid", meters: [], [(0, 36, 100), (1800, 38, 100), (1920, 36, 100)])
        let r = try Primer.load(path: plain, groups: groups)
        XCTAssertEqual(r.meter, "4/4")
        XCTAssertEqual(r.events.map(\.tickInBar), [0, 1800, 0])

        // A model without the groups ignores velocities and positions.
        let original = try Primer.load(path: waltz, vocabulary: groups.vocabulary)
        XCTAssertEqual(original.events.map(\.event.velocity), [0, 0, 0, 0, 0])
        XCTAssertEqual(original.events.map(\.tickInBar), [0, 0, 0, 0, 0])
    }

    func testPrimerVelocityOutsideTheModelsRangeIsNamed() throws {
        var histogram = [Int](repeating: 0, count: 127)
        for v in 40...100 { histogram[v - 1] = 1 }
        let groups = ModelGroups(vocabulary: try Vocabulary(ixToNote: [36, 38], ixToTick: [0, 120]),
                                 velocity: try VelocityGroup.quantileBins(histogram: histogram, count: 4))
        XCTAssertEqual(groups.velocity?.range, 40...100)
        for (velocity, name) in [(UInt8(20), "soft.mid"), (127, "loud.mid")] {
            let path = try write(name, meters: [], [(0, 36, 64), (120, 38, 100), (240, 36, velocity), (360, 36, 10)])
            XCTAssertThrowsError(try Primer.load(path: path, groups: groups)) {
                XCTAssertEqual($0 as? PrimerError, .velocityOutOfRange(path: path, hit: 2, velocity: Int(velocity), range: 40...100))
                XCTAssertEqual("\($0)", "\(path): primer hit 2 has velocity \(velocity), outside the range 40...100 the model learned")
            }
        }
        // The edges of the range are accepted.
        let edges = try write("edges.mid", meters: [], [(0, 36, 40), (120, 38, 100)])
        XCTAssertEqual(try Primer.load(path: edges, groups: groups).events.map(\.event.velocity), [0, 3])
    }

    func testPrimerInAMeterLongerThanTheModelsBarsIsRefused() throws {
        let (_, groups) = try TestModels.groove()  // bars of at most 16 × 120 = 1920 ticks
        let fiveFour = try write("five.mid", meters: [MIDITimeSignature(numerator: 5, denominator: 4)],
                                 [(0, 36, 100), (480, 38, 100)])
        XCTAssertThrowsError(try Primer.load(path: fiveFour, groups: groups)) {
            XCTAssertEqual($0 as? PrimerError, .meterTooLong(path: fiveFour, meter: "5/4", barTicks: 2400, longestBar: 1920))
            XCTAssertEqual("\($0)", "\(fiveFour): the primer is in 5/4, whose bars (2400 ticks) are longer than the model knows (1920 ticks)")
        }
        // 4/4 and 7/8 fit; a model without the position group takes any meter.
        for (n, d) in [(4, 4), (7, 8)] {
            let path = try write("m\(n)-\(d).mid", meters: [MIDITimeSignature(numerator: n, denominator: d)], [(0, 36, 100), (480, 38, 100)])
            XCTAssertEqual(try Primer.load(path: path, groups: groups).meter, "\(n)/\(d)")
        }
        XCTAssertEqual(try Primer.load(path: fiveFour, vocabulary: groups.vocabulary).events.count, 2)
        // Mostly 4/4 with one bar of 7/4: the error names the bar's meter, not the main one.
        let mixed = try write("mixed.mid", meters: [MIDITimeSignature(numerator: 4, denominator: 4),
                                                    MIDITimeSignature(tick: 3840, numerator: 7, denominator: 4)],
                              [(0, 36, 100), (480, 38, 100), (960, 36, 100), (1920, 36, 100), (2400, 38, 100), (3840, 36, 100)])
        XCTAssertThrowsError(try Primer.load(path: mixed, groups: groups)) {
            XCTAssertEqual($0 as? PrimerError, .meterTooLong(path: mixed, meter: "7/4", barTicks: 3360, longestBar: 1920))
        }
        XCTAssertEqual(Primer.meterName(barTicks: 2640, ppq: 480, main: "4/4"), "11/8")
        XCTAssertEqual(Primer.meterName(barTicks: 1320, ppq: 480, main: "4/4"), "11/16")
        XCTAssertEqual(Primer.meterName(barTicks: 2400, ppq: 480, main: "10/8"), "10/8")
    }
}
