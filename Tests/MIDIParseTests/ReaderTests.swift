import XCTest
@testable import MIDIParse

final class ReaderTests: XCTestCase {
    private func parse(_ bytes: [UInt8], _ mode: MIDIParseMode = .strict) throws -> (file: MIDIFile, warnings: [MIDIWarning]) {
        try MIDIFile.parse(bytes, path: "t.mid", mode: mode)
    }

    private func assertDefect(_ bytes: [UInt8], _ mode: MIDIParseMode = .strict, offset: Int, _ defect: MIDIDefect,
                              file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try parse(bytes, mode), file: file, line: line) { error in
            guard let e = error as? MIDIFileError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(e.defect, defect, file: file, line: line)
            XCTAssertEqual(e.offset, offset, file: file, line: line)
            XCTAssertEqual(e.path, "t.mid", file: file, line: line)
        }
    }

    // MARK: Variable-length quantities (SMF 1.0: at most 4 bytes, largest 0FFFFFFF)

    func testVLQBoundaries() throws {
        // (encoding, value) pairs from the SMF 1.0 table of examples.
        let cases: [([UInt8], Int)] = [
            ([0x00], 0), ([0x40], 0x40), ([0x7F], 0x7F), ([0x81, 0x00], 0x80), ([0xC0, 0x00], 0x2000),
            ([0xFF, 0x7F], 0x3FFF), ([0x81, 0x80, 0x00], 0x4000), ([0xFF, 0xFF, 0x7F], 0x1FFFFF),
            ([0x81, 0x80, 0x80, 0x00], 0x200000), ([0xFF, 0xFF, 0xFF, 0x7F], 0x0FFFFFFF),
            ([0x80, 0x80, 0x80, 0x05], 5),  // padded with continuation bytes: still 4 bytes
        ]
        for (encoding, value) in cases {
            let (file, _) = try parse(SMF.file(encoding + [0x99, 36, 100]))
            XCTAssertEqual(file.hits(), [MIDIHit(tick: value, channel: 9, note: 36, velocity: 100)], "\(encoding)")
        }
    }

    func testVLQOfFiveBytesIsRejected() {
        let body: [UInt8] = [0x80, 0x80, 0x80, 0x80, 0x00, 0x99, 36, 100]
        assertDefect(SMF.file(body), offset: 22, .vlqTooLong)
        // Lenient: the track is cut at the bad delta, earlier events kept.
        XCTAssertNoThrow(try {
            let (file, warnings) = try parse(SMF.file([0x00, 0x99, 40, 1] + body), .lenient)
            XCTAssertEqual(file.hits().map(\.note), [40])
            XCTAssertEqual(warnings.map(\.defect), [.vlqTooLong])
            XCTAssertEqual(warnings.first?.offset, 26)
        }())
    }

    func testVLQTruncatedAtEndOfChunk() {
        let bytes = SMF.header() + SMF.chunk("MTrk", [0x00, 0x99, 36, 100, 0x81])
        assertDefect(bytes, offset: 27, .truncated(expected: "a delta time"))
    }

    // MARK: Running status

    func testRunningStatusAcrossChannelMessages() throws {
        let (file, _) = try parse(SMF.file([0x00, 0x99, 36, 100, 0x10, 38, 90, 0x10, 36, 0, 0x00, 42, 80]))
        XCTAssertEqual(file.hits(), [
            MIDIHit(tick: 0, channel: 9, note: 36, velocity: 100),
            MIDIHit(tick: 16, channel: 9, note: 38, velocity: 90),
            MIDIHit(tick: 32, channel: 9, note: 42, velocity: 80),
        ])
        // NOTE ON velocity 0 (the third event) reads as a NOTE OFF.
        XCTAssertTrue(file.tracks[0].events.contains(MIDIEvent(tick: 32, kind: .channel(.noteOff(channel: 9, note: 36, velocity: 0)))))
    }

    func testMetaAndSysexCancelRunningStatus() throws {
        let meta: [UInt8] = [0x00, 0x99, 36, 100, 0x00, 0xFF, 0x01, 0x01, 0x41, 0x00, 38, 90]
        assertDefect(SMF.file(meta), offset: 32, .runningStatusCancelled(found: 38))
        let (file, warnings) = try parse(SMF.file(meta), .lenient)
        XCTAssertEqual(file.hits().map(\.note), [36, 38])
        XCTAssertEqual(warnings.map(\.defect), [.runningStatusCancelled(found: 38)])

        let sysex: [UInt8] = [0x00, 0x99, 36, 100, 0x00, 0xF0, 0x02, 0x7E, 0xF7, 0x00, 38, 90]
        assertDefect(SMF.file(sysex), offset: 32, .runningStatusCancelled(found: 38))
        let escape: [UInt8] = [0x00, 0x99, 36, 100, 0x00, 0xF7, 0x01, 0xF8, 0x00, 38, 90]
        assertDefect(SMF.file(escape), offset: 31, .runningStatusCancelled(found: 38))
    }

    func testDataByteWithoutAnyStatus() throws {
        assertDefect(SMF.file([0x00, 36, 100]), offset: 23, .noRunningStatus(found: 36))
        let (file, warnings) = try parse(SMF.file([0x00, 36, 100]), .lenient)
        XCTAssertEqual(file.hits(), [])
        XCTAssertEqual(warnings.first?.recovery, "dropped the rest of the track")
    }

    func testStatusByteWhereDataWasExpected() {
        assertDefect(SMF.file([0x00, 0x99, 36, 0x99]), offset: 25, .dataByteExpected(found: 0x99))
    }

    // MARK: Events

    func testSysexAndMetaEventsDecoded() throws {
        let body: [UInt8] = [
            0x00, 0xFF, 0x00, 0x02, 0x00, 0x07,                 // sequence number 7
            0x00, 0xFF, 0x03, 0x02, 0x44, 0x72,                 // track name "Dr"
            0x00, 0xFF, 0x20, 0x01, 0x09,                       // channel prefix
            0x00, 0xFF, 0x21, 0x01, 0x01,                       // port
            0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20,           // tempo 500000
            0x00, 0xFF, 0x54, 0x05, 1, 2, 3, 4, 5,              // SMPTE offset
            0x00, 0xFF, 0x58, 0x04, 0x06, 0x03, 0x18, 0x08,     // 6/8
            0x00, 0xFF, 0x59, 0x02, 0xFE, 0x01,                 // 2 flats, minor
            0x00, 0xFF, 0x7F, 0x01, 0x42,                       // sequencer specific
            0x00, 0xFF, 0x60, 0x01, 0x11,                       // unknown meta type
            0x00, 0xF0, 0x03, 0x7E, 0x01, 0xF7,                 // sysex
            0x00, 0xF7, 0x01, 0xF8,                             // escape
            0x00, 0xB9, 0x07, 0x64, 0x00, 0xC9, 0x05, 0x00, 0xD9, 0x30,
            0x00, 0xE9, 0x00, 0x40, 0x00, 0xA9, 36, 20,
        ]
        let (file, _) = try parse(SMF.file(body))
        XCTAssertEqual(file.tracks[0].events.map(\.kind), [
            .meta(.sequenceNumber(7)), .meta(.text(type: 3, bytes: [0x44, 0x72])), .meta(.channelPrefix(9)),
            .meta(.port(1)), .meta(.tempo(microsecondsPerQuarter: 500_000)),
            .meta(.smpteOffset(hours: 1, minutes: 2, seconds: 3, frames: 4, hundredths: 5)),
            .meta(.timeSignature(numerator: 6, denominatorPower: 3, clocksPerClick: 24, thirtySecondsPerQuarter: 8)),
            .meta(.keySignature(sharpsOrFlats: -2, minor: true)), .meta(.sequencerSpecific([0x42])),
            .meta(.unknown(type: 0x60, bytes: [0x11])), .sysex([0x7E, 0x01, 0xF7]), .sysexEscape([0xF8]),
            .channel(.controlChange(channel: 9, controller: 7, value: 100)), .channel(.programChange(channel: 9, program: 5)),
            .channel(.channelPressure(channel: 9, pressure: 0x30)), .channel(.pitchBend(channel: 9, value: 8192)),
            .channel(.polyPressure(channel: 9, note: 36, pressure: 20)), .meta(.endOfTrack),
        ])
    }

    func testMetaOfWrongLength() throws {
        let body: [UInt8] = [0x00, 0xFF, 0x51, 0x02, 0x07, 0xA1, 0x00, 0x99, 36, 1]
        assertDefect(SMF.file(body), offset: 23, .badMetaLength(type: 0x51, length: 2, expected: 3))
        let (file, warnings) = try parse(SMF.file(body), .lenient)
        XCTAssertEqual(file.tracks[0].events.first?.kind, .meta(.unknown(type: 0x51, bytes: [0x07, 0xA1])))
        XCTAssertEqual(warnings.count, 1)
        XCTAssertEqual(file.hits().count, 1)
    }

    // MARK: Header, chunks, lenient recoveries

    func testHeaderDefects() {
        assertDefect([], offset: 0, .emptyFile)
        assertDefect(Array("MTh".utf8), offset: 3, .truncated(expected: "the \"MThd\" header"))
        assertDefect(Array("MThd".utf8) + SMF.be32(5) + [0, 0, 0, 1, 0], offset: 4, .headerTooShort(length: 5))
        assertDefect(Array("MThd".utf8) + SMF.be32(6) + [0, 3, 0, 1, 0, 96], offset: 8, .unsupportedFormat(3))
        assertDefect(SMF.header(division: 0) + SMF.track([]), offset: 12, .zeroPPQ)
        // SMPTE: -30 fps with 0 ticks per frame, and -20 fps (not one of -24, -25, -29, -30).
        assertDefect(SMF.header(division: 0xE200) + SMF.track([]), offset: 12, .badSMPTEDivision(framesPerSecond: 30, ticksPerFrame: 0))
        assertDefect(SMF.header(division: 0xEC28) + SMF.track([]), offset: 12, .badSMPTEDivision(framesPerSecond: 20, ticksPerFrame: 40))
    }

    func testHeaderLongerThanSixIsHonoured() throws {
        // SMF 1.0: "it is important to read and honor the length, even if it is longer than 6".
        let bytes = Array("MThd".utf8) + SMF.be32(8) + [0, 0, 0, 1, 0, 96, 0xAA, 0xBB] + SMF.track([0x00, 0x99, 36, 1])
        XCTAssertEqual(try parse(bytes).file.hits().count, 1)
    }

    func testAlienChunkSkipped() throws {
        let bytes = SMF.header(format: 1, tracks: 1) + SMF.chunk("XFIH", [0x00, 0x99, 36, 1]) + SMF.track([0x00, 0x99, 38, 1])
        let (file, warnings) = try parse(bytes)
        XCTAssertEqual(file.hits().map(\.note), [38])
        XCTAssertTrue(warnings.isEmpty)
    }

    func testMissingEndOfTrack() throws {
        let bytes = SMF.header() + SMF.track([0x00, 0x99, 36, 1], endOfTrack: false)
        assertDefect(bytes, offset: 26, .missingEndOfTrack)
        let (file, warnings) = try parse(bytes, .lenient)
        XCTAssertEqual(file.hits().count, 1)
        XCTAssertEqual(file.tracks[0].events.last?.kind, .meta(.endOfTrack))
        XCTAssertEqual(warnings.map(\.defect), [.missingEndOfTrack])
        XCTAssertEqual(warnings[0].description,
                       "t.mid: byte 26: track ends without an end-of-track event, expected FF 2F 00 (ended the track at the end of its chunk)")
    }

    func testChunkLengthPastEndOfFile() throws {
        var bytes = SMF.header() + SMF.track([0x00, 0x99, 36, 1])
        bytes.replaceSubrange(18..<22, with: SMF.be32(100))
        assertDefect(bytes, offset: 18, .chunkPastEnd(declared: 100, available: 8))
        let (file, warnings) = try parse(bytes, .lenient)
        XCTAssertEqual(file.hits().count, 1)
        XCTAssertEqual(warnings.map(\.defect), [.chunkPastEnd(declared: 100, available: 8)])
    }

    func testHugeChunkLengthDoesNotAllocate() throws {
        var bytes = SMF.header() + SMF.track([0x00, 0xFF, 0x01, 0x8F, 0xFF, 0xFF, 0x7F])
        bytes.replaceSubrange(18..<22, with: SMF.be32(0xFFFF_FFFF))
        let (_, warnings) = try parse(bytes, .lenient)
        XCTAssertEqual(warnings.map(\.defect), [
            .chunkPastEnd(declared: 0xFFFF_FFFF, available: 11),
            .truncated(expected: "33554431 bytes of meta event data"),
        ])
    }

    func testTrailingGarbageAndDataAfterEndOfTrack() throws {
        let garbage = SMF.file([0x00, 0x99, 36, 1]) + [0x00, 0x01, 0x02]
        assertDefect(garbage, offset: 30, .trailingGarbage(bytes: 3))
        XCTAssertEqual(try parse(garbage, .lenient).warnings.map(\.defect), [.trailingGarbage(bytes: 3)])

        let after = SMF.header() + SMF.chunk("MTrk", [0x00, 0xFF, 0x2F, 0x00, 0x00, 0x99, 36, 1])
        assertDefect(after, offset: 26, .dataAfterEndOfTrack(bytes: 4))
        let (file, warnings) = try parse(after, .lenient)
        XCTAssertEqual(file.hits().count, 0)
        XCTAssertEqual(warnings.map(\.defect), [.dataAfterEndOfTrack(bytes: 4)])
    }

    func testTrackCountMismatch() throws {
        let bytes = SMF.header(format: 1, tracks: 3) + SMF.track([0x00, 0x99, 36, 1])
        assertDefect(bytes, offset: 10, .trackCountMismatch(declared: 3, found: 1))
        XCTAssertEqual(try parse(bytes, .lenient).file.tracks.count, 1)
    }

    func testIllegalSystemMessagesSkippedLeniently() throws {
        let body: [UInt8] = [0x00, 0xF2, 0x01, 0x02, 0x00, 0xF8, 0x00, 0x99, 36, 1]
        assertDefect(SMF.file(body), offset: 23, .illegalStatus(0xF2))
        let (file, warnings) = try parse(SMF.file(body), .lenient)
        XCTAssertEqual(file.hits().count, 1)
        XCTAssertEqual(warnings.map(\.defect), [.illegalStatus(0xF2), .illegalStatus(0xF8)])
    }

    // MARK: RIFF RMID

    func testRIFFWrappedFile() throws {
        let smf = SMF.file([0x00, 0x99, 36, 100, 0x60, 0x99, 38, 100])
        let list = Array("LIST".utf8) + SMF.le32(3) + [1, 2, 3, 0]  // odd length: padded
        let body = Array("RMID".utf8) + list + Array("data".utf8) + SMF.le32(smf.count) + smf
        let riff = Array("RIFF".utf8) + SMF.le32(body.count) + body
        let (file, _) = try parse(riff)
        XCTAssertEqual(file.hits().map(\.tick), [0, 96])
        XCTAssertEqual(file.tracks[0].offset, 12 + 12 + 8 + 14)

        // Offsets in errors are file offsets.
        var bad = riff
        bad[12 + 12 + 8] = UInt8(ascii: "X")
        assertDefect(bad, offset: 32, .notMIDI(found: Array("XThd".utf8)))
        var notRMID = riff
        notRMID[8] = UInt8(ascii: "W")
        assertDefect(notRMID, offset: 8, .riffNotRMID(found: Array("WMID".utf8)))
        let noData = Array("RIFF".utf8) + SMF.le32(12) + Array("RMID".utf8) + list
        assertDefect(noData, offset: 12, .riffWithoutData)
    }

    // MARK: SMPTE

    func testSMPTEDivisionAndTempoMap() throws {
        // -25 fps (0xE7), 40 ticks per frame: 1000 ticks per second.
        let body: [UInt8] = [0x00, 0x99, 36, 1, 0x87, 0x68, 0x99, 38, 1]  // second hit at 1000 ticks
        let (file, _) = try parse(SMF.file(body, division: 0xE728))
        XCTAssertEqual(file.division, .smpte(framesPerSecond: 25, ticksPerFrame: 40))
        let map = file.tempoMap
        XCTAssertEqual(map.seconds(atTick: 1000), 1.0, accuracy: 1e-12)
        // Default tempo 120 BPM: one second is two quarter notes.
        XCTAssertEqual(map.quarterNotes(atTick: 1000), 2.0, accuracy: 1e-12)

        // 29.97 drop frame (-29 = 0xE3) at 80 ticks per frame.
        let (df, _) = try parse(SMF.file([], division: 0xE350))
        XCTAssertEqual(df.division.smpteTicksPerSecond ?? 0, 80 * 30000 / 1001, accuracy: 1e-9)
    }

    func testPPQTempoMapIntegratesTempoChanges() throws {
        // 96 PPQ; 120 BPM for the first quarter, then 60 BPM (1,000,000 µs per quarter).
        let body: [UInt8] = [0x60, 0xFF, 0x51, 0x03, 0x0F, 0x42, 0x40, 0x60, 0x99, 36, 1]
        let (file, _) = try parse(SMF.file(body))
        let map = file.tempoMap
        XCTAssertEqual(map.seconds(atTick: 96), 0.5, accuracy: 1e-12)
        XCTAssertEqual(map.seconds(atTick: 192), 1.5, accuracy: 1e-12)
        XCTAssertEqual(map.quarterNotes(atTick: 192), 2.0, accuracy: 1e-12)
    }

    func testSMPTETempoChangeAltersQuarterNotes() {
        // 1000 ticks per second; tempo 1 s per quarter from tick 1000: quarters 2 + 1.
        let map = MIDITempoMap(division: .smpte(framesPerSecond: 25, ticksPerFrame: 40),
                               changes: [MIDITempoChange(tick: 1000, microsecondsPerQuarter: 1_000_000)])
        XCTAssertEqual(map.quarterNotes(atTick: 2000), 3.0, accuracy: 1e-12)
    }

    // MARK: Merging

    func testMergeOrderIsTickThenTrackThenFileOrder() throws {
        let t0 = SMF.track([0x00, 0x90, 60, 1, 0x00, 0x90, 61, 1, 0x10, 0x90, 62, 1])
        let t1 = SMF.track([0x00, 0x91, 70, 1, 0x08, 0x91, 71, 1])
        let (file, _) = try parse(SMF.header(format: 1, tracks: 2) + t0 + t1)
        XCTAssertEqual(file.hits().map(\.note), [60, 61, 70, 71, 62])
        XCTAssertEqual(file.hits(channel: 1).map(\.note), [70, 71])
        XCTAssertTrue(file.hasNotes(onChannel: 1))
        XCTAssertFalse(file.hasNotes(onChannel: 9))
        XCTAssertEqual(file.mergedEvents().map(\.track), [0, 0, 1, 1, 1, 0, 0])
    }

    func testFormat2TracksPlaySequentially() throws {
        let t0 = SMF.chunk("MTrk", [0x00, 0x90, 60, 1, 0x60, 0xFF, 0x2F, 0x00])
        let t1 = SMF.chunk("MTrk", [0x10, 0x90, 62, 1, 0x00, 0xFF, 0x2F, 0x00])
        let (file, _) = try parse(SMF.header(format: 2, tracks: 2) + t0 + t1)
        XCTAssertEqual(file.trackStartTicks, [0, 96])
        XCTAssertEqual(file.hits().map(\.tick), [0, 112])
    }

    func testErrorDescriptionIsOneLine() {
        let e = MIDIFileError(path: "a/b.mid", offset: 12, defect: .zeroPPQ)
        XCTAssertEqual(e.description, "a/b.mid: byte 12: division of 0 ticks per quarter note, expected at least 1")
        let all: [MIDIDefect] = [
            .emptyFile, .notMIDI(found: [1]), .riffNotRMID(found: [1]), .riffWithoutData, .truncated(expected: "x"),
            .headerTooShort(length: 1), .unsupportedFormat(3), .zeroPPQ, .badSMPTEDivision(framesPerSecond: 1, ticksPerFrame: 1),
            .format0TrackCount(2), .trackCountMismatch(declared: 1, found: 2), .chunkPastEnd(declared: 1, available: 0),
            .missingEndOfTrack, .dataAfterEndOfTrack(bytes: 1), .vlqTooLong, .noRunningStatus(found: 1),
            .runningStatusCancelled(found: 1), .illegalStatus(0xF1), .dataByteExpected(found: 0x80),
            .badMetaLength(type: 0x51, length: 1, expected: 3), .trailingGarbage(bytes: 1),
        ]
        for d in all {
            XCTAssertFalse(d.message.contains("\n"))
            XCTAssertTrue(d.message.contains("expected"), d.message)
        }
    }
}
