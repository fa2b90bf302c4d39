import XCTest
@testable import MIDIParse

final class WriterTests: XCTestCase {
    func testWriteThenReadGivesTheSameEvents() throws {
        let notes = [
            MIDINote(tick: 0, note: 36, velocity: 100, channel: 9, duration: 60),
            MIDINote(tick: 0, note: 42, velocity: 100, channel: 9, duration: 60),
            MIDINote(tick: 120, note: 38, velocity: 90, channel: 9, duration: 240),  // ends after the next onset
            MIDINote(tick: 240, note: 42, velocity: 80, channel: 9, duration: 30),
            MIDINote(tick: 100_000, note: 49, velocity: 127, channel: 9, duration: 1),  // 3-byte delta
        ]
        let bytes = try MIDIWriter.format0(
            ppq: 480, tempos: [MIDITempoChange(tick: 0, microsecondsPerQuarter: 600_000)],
            timeSignatures: [MIDITimeSignature(numerator: 7, denominator: 8)], notes: notes)
        let (file, warnings) = try MIDIFile.parse(bytes, path: "w.mid", mode: .strict)
        XCTAssertTrue(warnings.isEmpty)
        XCTAssertEqual(file.format, 0)
        XCTAssertEqual(file.division, .ppq(480))
        let off: (Int, UInt8) -> MIDIEventKind = { .channel(.noteOff(channel: 9, note: $1, velocity: MIDIWriter.noteOffVelocity)) }
        let on: (UInt8, UInt8) -> MIDIEventKind = { .channel(.noteOn(channel: 9, note: $0, velocity: $1)) }
        XCTAssertEqual(file.tracks[0].events, [
            MIDIEvent(tick: 0, kind: .meta(.tempo(microsecondsPerQuarter: 600_000))),
            MIDIEvent(tick: 0, kind: .meta(.timeSignature(numerator: 7, denominatorPower: 3, clocksPerClick: 24, thirtySecondsPerQuarter: 8))),
            MIDIEvent(tick: 0, kind: on(36, 100)),
            MIDIEvent(tick: 0, kind: on(42, 100)),
            MIDIEvent(tick: 60, kind: off(60, 36)),
            MIDIEvent(tick: 60, kind: off(60, 42)),
            MIDIEvent(tick: 120, kind: on(38, 90)),
            MIDIEvent(tick: 240, kind: on(42, 80)),
            MIDIEvent(tick: 270, kind: off(270, 42)),
            MIDIEvent(tick: 360, kind: off(360, 38)),
            MIDIEvent(tick: 100_000, kind: on(49, 127)),
            MIDIEvent(tick: 100_001, kind: off(100_001, 49)),
            MIDIEvent(tick: 100_001, kind: .meta(.endOfTrack)),
        ])
        XCTAssertEqual(file.hits().map { MIDINote(tick: $0.tick, note: $0.note, velocity: $0.velocity, channel: $0.channel, duration: 0) },
                       notes.map { MIDINote(tick: $0.tick, note: $0.note, velocity: $0.velocity, channel: $0.channel, duration: 0) })
        XCTAssertEqual(file.tempoMap.seconds(atTick: 480), 0.6, accuracy: 1e-12)
    }

    func testNoteOffComesBeforeTheNextOnsetAtTheSameTick() throws {
        // The sampler's rule: duration = min(length, gap to next onset). Here every note lasts
        // exactly until the next onset, so each NOTE OFF shares a tick with the next NOTE ON.
        let onsets = [0, 30, 60, 90]
        let notes = onsets.enumerated().map { i, t in
            MIDINote(tick: t, note: i % 2 == 0 ? 36 : 38, velocity: 100, channel: 9, duration: 30)
        }
        let (file, _) = try MIDIFile.parse(try MIDIWriter.format0(ppq: 480, notes: notes), path: "w", mode: .strict)
        let channel = file.tracks[0].events.compactMap { e -> (Int, Bool)? in
            switch e.kind {
            case .channel(.noteOn): return (e.tick, true)
            case .channel(.noteOff): return (e.tick, false)
            default: return nil
            }
        }
        XCTAssertEqual(channel.map(\.0), [0, 30, 30, 60, 60, 90, 90, 120])
        XCTAssertEqual(channel.map(\.1), [true, false, true, false, true, false, true, false])
        XCTAssertEqual(file.hits().map(\.tick), onsets)
    }

    func testSameKeyIsClippedAndDuplicatesWrittenOnce() throws {
        let notes = [
            MIDINote(tick: 0, note: 36, velocity: 100, channel: 9, duration: 500),
            MIDINote(tick: 0, note: 36, velocity: 50, channel: 9, duration: 10),   // duplicate: dropped
            MIDINote(tick: 100, note: 36, velocity: 90, channel: 9, duration: 10),
        ]
        let (file, _) = try MIDIFile.parse(try MIDIWriter.format0(ppq: 96, notes: notes), path: "w", mode: .strict)
        XCTAssertEqual(file.hits().map(\.velocity), [100, 90])
        let offs = file.tracks[0].events.filter { if case .channel(.noteOff) = $0.kind { return true } else { return false } }
        XCTAssertEqual(offs.map(\.tick), [100, 110])
    }

    func testInvalidValuesAreErrors() {
        let ok = MIDINote(tick: 0, note: 36, velocity: 1, channel: 9, duration: 1)
        var bad = [ok, ok, ok, ok, ok]
        bad[0].velocity = 0
        bad[1].channel = 16
        bad[2].duration = 0
        bad[3].tick = -1
        bad[4].note = 128
        let messages = ["velocity 0 is outside 1...127", "channel index 16 is outside 0...15", "note duration 0 is below 1 tick",
                        "note at negative tick -1", "note number 128 is outside 0...127"]
        for (n, m) in zip(bad, messages) {
            XCTAssertThrowsError(try MIDIWriter.format0(ppq: 96, notes: [n]), "\(n)") {
                XCTAssertEqual($0 as? MIDIWriteError, MIDIWriteError(m))
            }
        }
        XCTAssertThrowsError(try MIDIWriter.format0(ppq: 0, notes: [ok])) {
            XCTAssertEqual($0 as? MIDIWriteError, MIDIWriteError("PPQ 0 is outside 1...32767"))
        }
        XCTAssertThrowsError(try MIDIWriter.format0(ppq: 96, timeSignatures: [MIDITimeSignature(numerator: 4, denominator: 3)], notes: [])) {
            XCTAssertEqual($0 as? MIDIWriteError, MIDIWriteError("time signature denominator 3 is not a power of two in 1...128"))
        }
        XCTAssertThrowsError(try MIDIWriter.format0(ppq: 96, tempos: [MIDITempoChange(tick: 0, microsecondsPerQuarter: 0)], notes: [])) {
            XCTAssertEqual($0 as? MIDIWriteError, MIDIWriteError("tempo 0 µs per quarter is outside 1...16777215"))
        }
        XCTAssertThrowsError(try MIDIWriter.format0(ppq: 96, notes: [MIDINote(tick: 0x1000_0000, note: 1, velocity: 1, channel: 0, duration: 1)])) {
            XCTAssertEqual($0 as? MIDIWriteError, MIDIWriteError("delta time 268435456 is outside the SMF range 0...268435455"))
        }
    }

    func testVLQEncodingMatchesTheSpecificationTable() throws {
        let table: [(Int, [UInt8])] = [
            (0, [0x00]), (0x40, [0x40]), (0x7F, [0x7F]), (0x80, [0x81, 0x00]), (0x2000, [0xC0, 0x00]),
            (0x3FFF, [0xFF, 0x7F]), (0x4000, [0x81, 0x80, 0x00]), (0x100000, [0xC0, 0x80, 0x00]),
            (0x1FFFFF, [0xFF, 0xFF, 0x7F]), (0x200000, [0x81, 0x80, 0x80, 0x00]),
            (0x8000000, [0xC0, 0x80, 0x80, 0x00]), (0xFFFFFFF, [0xFF, 0xFF, 0xFF, 0x7F]),
        ]
        for (value, encoding) in table {
            var out: [UInt8] = []
            try MIDIWriter.appendVLQ(value, to: &out)
            XCTAssertEqual(out, encoding, "\(value)")
        }
    }

    func testWriteToFileAndReadBack() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("midi-writer-\(UUID().uuidString).mid").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(MIDIWriter.format0(ppq: 480, notes: [MIDINote(tick: 5, note: 42, velocity: 64, channel: 9, duration: 10)]))
            .write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try MIDIFile.read(path: path).file.hits(), [MIDIHit(tick: 5, channel: 9, note: 42, velocity: 64)])
        XCTAssertThrowsError(try MIDIFile.read(path: path + ".missing")) { error in
            XCTAssertEqual((error as? MIDIReadError)?.message, "cannot read: no such file or directory")
        }
        XCTAssertThrowsError(try MIDIFile.read(path: FileManager.default.temporaryDirectory.path)) { error in
            XCTAssertEqual((error as? MIDIReadError)?.message, "not a regular file (a directory)")
        }
    }
}
