import Foundation
import XCTest
import MIDIParse

/// Builds MIDI bytes for these tests with the MIDIParse writer (format 0, one track).
enum MIDIBytes {
    static func notes(ppq: Int, _ hits: [(tick: Int, note: UInt8, channel: UInt8)], tempo: Int? = nil) throws -> [UInt8] {
        try MIDIWriter.format0(
            ppq: ppq, tempos: tempo.map { [MIDITempoChange(tick: 0, microsecondsPerQuarter: $0)] } ?? [],
            notes: hits.map { MIDINote(tick: $0.tick, note: $0.note, velocity: 100, channel: $0.channel, duration: 1) })
    }

    static func parse(_ bytes: [UInt8]) throws -> MIDIFile { try MIDIFile.parse(bytes, path: "t.mid").file }
}

final class HitExtractionTests: XCTestCase {
    func testChannelAutoPrefersChannelIndex9() throws {
        let file = try MIDIBytes.parse(MIDIBytes.notes(ppq: 480, [(0, 36, 9), (10, 60, 0), (20, 38, 9)]))
        var s = HitExtractionSettings()
        let auto = try FileHits(file: file, path: "t.mid", settings: s)
        XCTAssertEqual(auto.notes, [36, 38])
        XCTAssertEqual(auto.ticks, [0, 20])
        XCTAssertEqual(auto.channelUsed, "9")
        s.channel = .all
        XCTAssertEqual(try FileHits(file: file, path: "t.mid", settings: s).notes, [36, 60, 38])
        s.channel = .index(0)
        XCTAssertEqual(try FileHits(file: file, path: "t.mid", settings: s).notes, [60])

        // No notes on index 9: auto takes every channel (the original patterns use index 0).
        let other = try MIDIBytes.parse(MIDIBytes.notes(ppq: 480, [(0, 36, 0), (5, 38, 10)]))
        let h = try FileHits(file: other, path: "t.mid", settings: HitExtractionSettings())
        XCTAssertEqual(h.notes, [36, 38])
        XCTAssertEqual(h.channelUsed, "all")
    }

    /// The first tempo comes with the hits, in the mode they are read in: a primer or beat that
    /// only the safe mode reads (bytes after its last chunk) still gives its tempo.
    func testFirstTempoIsReadWithTheHits() throws {
        let bytes = try MIDIBytes.notes(ppq: 480, [(0, 36, 9), (240, 38, 9)], tempo: 600_000) + [0x00, 0x01, 0x02]
        XCTAssertThrowsError(try MIDIFile.parse(bytes, path: "t.mid", mode: .strict))
        let hits = try FileHits.parse(bytes, path: "t.mid", settings: HitExtractionSettings())
        XCTAssertEqual(hits.notes, [36, 38])
        XCTAssertEqual(try XCTUnwrap(hits.firstBPM), 100, accuracy: 1e-9)
        let none = try FileHits.parse(try MIDIBytes.notes(ppq: 480, [(0, 36, 9)]), path: "t.mid", settings: HitExtractionSettings())
        XCTAssertNil(none.firstBPM)
    }

    func testChannelSelectionParsing() {
        XCTAssertEqual(ChannelSelection(argument: "auto"), .auto)
        XCTAssertEqual(ChannelSelection(argument: "ALL"), .all)
        XCTAssertEqual(ChannelSelection(argument: "15"), .index(15))
        XCTAssertNil(ChannelSelection(argument: "16"))
        XCTAssertNil(ChannelSelection(argument: "-1"))
        XCTAssertNil(ChannelSelection(argument: "drums"))
    }

    func testRescaleFromOtherPPQRoundsHalfUp() throws {
        // 96 -> 480 multiplies by 5; 100 -> 480: 1 tick = 4.8 -> 5, 5 ticks = 24, 7 ticks = 33.6 -> 34.
        let a = try MIDIBytes.parse(MIDIBytes.notes(ppq: 96, [(0, 36, 9), (24, 38, 9), (97, 42, 9)]))
        XCTAssertEqual(try FileHits(file: a, path: "t.mid", settings: HitExtractionSettings()).ticks, [0, 120, 485])
        let b = try MIDIBytes.parse(MIDIBytes.notes(ppq: 100, [(1, 36, 9), (5, 38, 9), (7, 42, 9)]))
        XCTAssertEqual(try FileHits(file: b, path: "t.mid", settings: HitExtractionSettings()).ticks, [5, 24, 34])
        // 960 -> 480: 1 tick = 0.5 -> 1 (half up), 3 ticks = 1.5 -> 2.
        let c = try MIDIBytes.parse(MIDIBytes.notes(ppq: 960, [(1, 36, 9), (3, 38, 9)]))
        XCTAssertEqual(try FileHits(file: c, path: "t.mid", settings: HitExtractionSettings()).ticks, [1, 2])
    }

    func testSMPTEConvertsThroughFrameRateAndTempo() throws {
        // 25 fps × 40 ticks per frame = 1000 ticks per second. At 120 BPM (default) a quarter
        // is 0.5 s; at 100 BPM (600,000 µs) it is 0.6 s.
        var bytes = try MIDIBytes.notes(ppq: 96, [(0, 36, 9), (500, 38, 9), (1500, 42, 9)])
        bytes[12] = 0xE7  // division: -25 fps
        bytes[13] = 40    // 40 ticks per frame
        let file = try MIDIBytes.parse(bytes)
        XCTAssertEqual(try FileHits(file: file, path: "t.mid", settings: HitExtractionSettings()).ticks, [0, 480, 1440])
        var slow = try MIDIBytes.notes(ppq: 96, [(0, 36, 9), (600, 38, 9)], tempo: 600_000)
        slow[12] = 0xE7
        slow[13] = 40
        XCTAssertEqual(try FileHits(file: try MIDIBytes.parse(slow), path: "t.mid", settings: HitExtractionSettings()).ticks, [0, 480])
    }

    func testHitsBeyondTheTimeLimitAreAnErrorNotAnOverflow() throws {
        // 1 PPQ rescaled to 32767: a hit at 5000 × 0x0FFFFFFF ticks lands beyond the 2^31 − 1-tick limit.
        var far = try MIDIBytes.notes(ppq: 1, [(0, 36, 9)])
        var body: [UInt8] = []
        for _ in 0..<5000 { body += [0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0x01, 0x00] }  // empty text events, max deltas
        body += [0x00, 0x99, 38, 100, 0x00, 0xFF, 0x2F, 0x00]
        far = Array(far[0..<14]) + Array("MTrk".utf8) + [UInt8(body.count >> 24), UInt8(body.count >> 16 & 0xFF), UInt8(body.count >> 8 & 0xFF), UInt8(body.count & 0xFF)] + body
        let file = try MIDIBytes.parse(far)
        XCTAssertEqual(file.hits().last?.tick, 5000 * 0x0FFF_FFFF)
        var s = HitExtractionSettings()
        s.ppq = 32767
        XCTAssertThrowsError(try FileHits(file: file, path: "far.mid", settings: s)) { error in
            XCTAssertEqual(error as? HitExtractionError, .hitTooLate(path: "far.mid", tick: 5000 * 0x0FFF_FFFF))
            // The tick is the file's; the limit is at the target resolution: said so.
            XCTAssertEqual("\(error)", "far.mid: a hit at its tick \(5000 * 0x0FFF_FFFF) (in the file's own resolution) lies beyond "
                           + "2147483647 ticks once rescaled to the target resolution")
        }
        // SMPTE time at the fastest tempo (1 µs per quarter): about 1.8e21 target ticks, which would
        // trap in the conversion to Int without the limit.
        var smpte = far
        smpte[12] = 0xE8  // -24 fps
        smpte[13] = 1
        let tempo: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0x00, 0x00, 0x01]
        let sbody = tempo + body
        smpte = Array(smpte[0..<14]) + Array("MTrk".utf8) + [UInt8(sbody.count >> 24), UInt8(sbody.count >> 16 & 0xFF), UInt8(sbody.count >> 8 & 0xFF), UInt8(sbody.count & 0xFF)] + sbody
        XCTAssertThrowsError(try FileHits(file: try MIDIBytes.parse(smpte), path: "s.mid", settings: s))
    }

    func testQuantizeSnapsAbsoluteOnsets() throws {
        let file = try MIDIBytes.parse(MIDIBytes.notes(ppq: 480, [(0, 36, 9), (14, 38, 9), (15, 42, 9), (44, 36, 9), (1000, 36, 9)]))
        var s = HitExtractionSettings()
        s.quantize = 30
        // 14 -> 0, 15 -> 30 (half up), 44 -> 30, 1000 -> 990.
        XCTAssertEqual(try FileHits(file: file, path: "t.mid", settings: s).ticks, [0, 0, 30, 30, 990])
    }

    func testNoteMaps() throws {
        let file = try MIDIBytes.parse(MIDIBytes.notes(ppq: 480, [(0, 21, 0), (1, 36, 0), (2, 82, 0)]))
        var s = HitExtractionSettings()
        s.noteMap = .original
        XCTAssertEqual(try FileHits(file: file, path: "t.mid", settings: s).notes, [44, 36, 48])

        let dir = try makeTemporaryDirectory(self)
        let good = dir.appendingPathComponent("map.json")
        try Data("{\"36\": 35, \"82\": 51}".utf8).write(to: good)
        s.noteMap = try NoteMap.load(path: good.path)
        XCTAssertEqual(try FileHits(file: file, path: "t.mid", settings: s).notes, [21, 35, 51])
        XCTAssertEqual(s.noteMap.name, good.path)

        // 0 and 1 are notes, not booleans; 44.0 and 1e2 are whole numbers.
        let small = dir.appendingPathComponent("small.json")
        try Data("{\"36\": 1, \"37\": 0, \"38\": 44.0, \"39\": 1e2}".utf8).write(to: small)
        XCTAssertEqual(try NoteMap.load(path: small.path).table, [36: 1, 37: 0, 38: 44, 39: 100])

        // Each error says what is wrong and where: the key, the value, the place in the text.
        for (name, text, message) in [
            ("a.json", "[1, 2]", "expected a JSON object of note numbers such as {\"21\": 44}, found an array"),
            ("b.json", "{\"x\": 1}", "key \"x\" is not a note number 0...127"),
            ("c.json", "{\"1\": 200}", "note 1 maps to 200, outside 0...127"),
            ("d.json", "{\"21\": \"44\"}", "note 21 maps to a string (\"44\"), not a note number 0...127"),
            ("e.json", "{\"21\": 44.5}", "note 21 maps to the number 44.5, not a note number 0...127"),
            ("f.json", "{\"21\": true}", "note 21 maps to true, not a note number 0...127"),
            ("g.json", "{\"21\": 44,\n \"22\" 42}", "not valid JSON: invalid value around character 17 (line 2, column 7)"),
            ("h.json", "", "not valid JSON: unexpected end of file during JSON parse"),
        ] {
            let url = dir.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            XCTAssertThrowsError(try NoteMap.load(path: url.path), text) { error in
                guard case HitExtractionError.noteMap(let path, let m) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(path, url.path)
                XCTAssertEqual(m, message, text)
            }
        }
        // A file it cannot read: the cause in the words every reader of a file uses.
        for (path, message) in [(dir.path, "cannot read: is a directory"),
                                (dir.appendingPathComponent("none.json").path, "cannot read: no such file or directory")] {
            XCTAssertThrowsError(try NoteMap.load(path: path)) { error in
                XCTAssertEqual("\(error)", "\(path): note map: \(message)")
            }
        }
    }
}


/// A fresh temporary directory, removed when the test finishes.
func makeTemporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("drummer-midiparse-tests-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}
