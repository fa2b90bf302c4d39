import Foundation
import XCTest
@testable import MIDIParse

/// The default (safe) parse policy: the defects whose recovery needs no guessing are
/// recovered with a warning each, exactly as lenient mode recovers them; every other defect
/// is refused with the error strict mode gives.
final class SafePolicyTests: XCTestCase {
    private func parse(_ bytes: [UInt8], _ mode: MIDIParseMode) throws -> (file: MIDIFile, warnings: [MIDIWarning]) {
        try MIDIFile.parse(bytes, path: "t.mid", mode: mode)
    }

    /// Safe recovers `bytes` with exactly `defects`, giving lenient's file; strict refuses with the first.
    private func assertRecovered(_ bytes: [UInt8], _ defects: [MIDIDefect], hits: Int,
                                 file: StaticString = #filePath, line: UInt = #line) throws {
        let (safe, warnings) = try parse(bytes, .safe)
        XCTAssertEqual(warnings.map(\.defect), defects, file: file, line: line)
        XCTAssertEqual(safe.hits().count, hits, file: file, line: line)
        let lenient = try parse(bytes, .lenient)
        XCTAssertEqual(safe, lenient.file, file: file, line: line)
        XCTAssertEqual(warnings, lenient.warnings, file: file, line: line)
        XCTAssertThrowsError(try parse(bytes, .strict), file: file, line: line) { error in
            XCTAssertEqual((error as? MIDIFileError)?.defect, defects.first, file: file, line: line)
        }
        // The hit extraction reader agrees.
        var settings = HitExtractionSettings()
        settings.channel = .all
        let hitsRead = try FileHits.parse(bytes, path: "t.mid", settings: settings)
        XCTAssertEqual(hitsRead.count, hits, file: file, line: line)
        XCTAssertEqual(hitsRead.warnings, warnings, file: file, line: line)
    }

    /// Safe refuses `bytes` with `defect` at `offset`, while lenient mode recovers it.
    private func assertRefused(_ bytes: [UInt8], offset: Int, _ defect: MIDIDefect,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try parse(bytes, .safe), file: file, line: line) { error in
            guard let e = error as? MIDIFileError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(e.defect, defect, file: file, line: line)
            XCTAssertEqual(e.offset, offset, file: file, line: line)
        }
        XCTAssertNoThrow(try parse(bytes, .lenient), file: file, line: line)
    }

    func testTheDefaultSettingsUseTheSafePolicy() {
        XCTAssertEqual(HitExtractionSettings().parseMode, .safe)
    }

    // MARK: Recovered: nothing is lost or guessed

    func testTrailingBytesAfterTheLastChunk() throws {
        try assertRecovered(SMF.file([0x00, 0x99, 36, 1]) + [0x00, 0x01, 0x02], [.trailingGarbage(bytes: 3)], hits: 1)
        // An HTML footer appended to a file: printable, so it looks like a chunk whose length
        // runs past the end of the file; it is skipped as an unknown chunk.
        try assertRecovered(SMF.file([0x00, 0x99, 36, 1]) + Array("<html><body>saved</body></html>".utf8),
                            [.chunkPastEnd(declared: 0x6C3E_3C62, available: 23)], hits: 1)
    }

    /// A time signature of no meter (numerator 0, or a denominator past 2^7) is left out with a
    /// warning at its byte: the bars keep the meter before it (was: left out in silence).
    func testATimeSignatureOfNoMeterIsLeftOutSayingSo() throws {
        for (n, p) in [(0, 2), (3, 63)] {
            let bytes = SMF.file([0x00, 0xFF, 0x58, 0x04, UInt8(n), UInt8(p), 24, 8, 0x00, 0x99, 36, 1, 0x60, 0x99, 38, 1])
            try assertRecovered(bytes, [.badTimeSignature(numerator: n, denominatorPower: p)], hits: 2)
            let warning = try XCTUnwrap(try parse(bytes, .safe).warnings.first)
            XCTAssertEqual(warning.offset, 23, "the meta event's FF byte")
            XCTAssertTrue(warning.description.contains("time signature \(n)/2^\(p), no meter"), warning.description)
            XCTAssertEqual(try FileHits.parse(bytes, path: "t.mid", settings: HitExtractionSettings()).meter, "4/4")
        }
    }

    func testBytesAfterEndOfTrack() throws {
        let after = SMF.header() + SMF.chunk("MTrk", [0x00, 0x99, 36, 1, 0x00, 0xFF, 0x2F, 0x00, 0x00, 0x99, 38, 1])
        try assertRecovered(after, [.dataAfterEndOfTrack(bytes: 4)], hits: 1)
    }

    func testMissingEndOfTrackWhenTheEventsEndCleanly() throws {
        try assertRecovered(SMF.header() + SMF.track([0x00, 0x99, 36, 1, 0x10, 0x89, 36, 0], endOfTrack: false),
                            [.missingEndOfTrack], hits: 1)
    }

    func testTrackLengthPastTheEndWhenTheEventsEndCleanly() throws {
        // A file cut right after an event: the length says 100, 8 bytes are there.
        var cut = SMF.header() + SMF.track([0x00, 0x99, 36, 1, 0x00, 0x99, 38, 1], endOfTrack: false)
        cut.replaceSubrange(18..<22, with: SMF.be32(100))
        try assertRecovered(cut, [.chunkPastEnd(declared: 100, available: 8), .missingEndOfTrack], hits: 2)
        // The same with its end-of-track present.
        var whole = SMF.file([0x00, 0x99, 36, 1])
        whole.replaceSubrange(18..<22, with: SMF.be32(9))
        try assertRecovered(whole, [.chunkPastEnd(declared: 9, available: 8)], hits: 1)
    }

    func testTrackCountDifferentFromTheTracksFound() throws {
        let more = SMF.header(format: 1, tracks: 3) + SMF.track([0x00, 0x99, 36, 1])
        try assertRecovered(more, [.trackCountMismatch(declared: 3, found: 1)], hits: 1)
        let fewer = SMF.header(format: 1, tracks: 1) + SMF.track([0x00, 0x99, 36, 1]) + SMF.track([0x00, 0x99, 38, 1])
        try assertRecovered(fewer, [.trackCountMismatch(declared: 1, found: 2)], hits: 2)
    }

    func testRIFFLengthsPastTheEnd() throws {
        let smf = SMF.file([0x00, 0x99, 36, 1])
        var riff = Array("RIFF".utf8) + SMF.le32(1000) + Array("RMID".utf8) + Array("data".utf8) + SMF.le32(smf.count + 50) + smf
        try assertRecovered(riff, [.chunkPastEnd(declared: 1000, available: riff.count - 8),
                                   .chunkPastEnd(declared: smf.count + 50, available: smf.count)], hits: 1)
        riff = []
    }

    // MARK: Refused: recovering would mean guessing

    /// An unknown chunk before the track whose length runs past the end of the file: skipping
    /// it would swallow the track, so its length is the error (not "0 tracks" found after it).
    func testAnUnknownChunkLengthThatWouldSwallowTheTrackIsRefused() {
        var bytes = SMF.header() + SMF.chunk("XXXX", []) + SMF.track([0x00, 0x99, 36, 1])
        bytes.replaceSubrange(18..<22, with: SMF.be32(0xFFFF_FFFF))
        assertRefused(bytes, offset: 18, .chunkPastEnd(declared: 0xFFFF_FFFF, available: bytes.count - 22))
    }

    func testAnEventCutShortIsRefused() {
        // The chunk runs past the end and its last event is incomplete: truncated, not recovered.
        var cut = SMF.header() + SMF.track([0x00, 0x99, 36, 1, 0x00, 0x99, 38], endOfTrack: false)
        cut.replaceSubrange(18..<22, with: SMF.be32(100))
        assertRefused(cut, offset: 29, .truncated(expected: "2 data bytes of a channel message"))
        XCTAssertThrowsError(try parse(cut, .safe)) { error in
            XCTAssertEqual((error as? MIDIFileError)?.description, "t.mid: truncated at byte 29: expected 2 data bytes of a channel message")
        }
    }

    func testNoTrackAtAllIsRefused() {
        // A file cut right after its header: nothing to recover.
        assertRefused(SMF.header(format: 1, tracks: 2), offset: 10, .trackCountMismatch(declared: 2, found: 0))
        assertRefused(SMF.header(format: 0, tracks: 1), offset: 10, .format0TrackCount(0))
    }

    func testFormat0WithTwoTracksIsRefused() {
        assertRefused(SMF.header(format: 0, tracks: 2) + SMF.track([0x00, 0x99, 36, 1]) + SMF.track([0x00, 0x99, 38, 1]),
                      offset: 10, .format0TrackCount(2))
    }

    func testGuessingRecoveriesAreRefused() {
        assertRefused(SMF.file([0x00, 0xF8, 0x00, 0x99, 36, 1]), offset: 23, .illegalStatus(0xF8))
        assertRefused(SMF.file([0x00, 0x99, 36, 1, 0x00, 0xFF, 0x01, 0x00, 0x00, 38, 1]), offset: 31, .runningStatusCancelled(found: 38))
        assertRefused(SMF.file([0x00, 0xFF, 0x51, 0x02, 0x07, 0xA1, 0x00, 0x99, 36, 1]), offset: 23,
                      .badMetaLength(type: 0x51, length: 2, expected: 3))
        assertRefused(SMF.file([0x00, 0x99, 36, 0x80]), offset: 25, .dataByteExpected(found: 0x80))
    }

    // MARK: Messages

    func testNotMIDIFilesSayWhatTheyStartWith() {
        let html = Array("<!DOCTYPE html><html></html>".utf8)
        for mode in MIDIParseMode.allCases {
            XCTAssertThrowsError(try parse(html, mode)) { error in
                XCTAssertEqual((error as? MIDIFileError)?.description,
                               "t.mid: not a MIDI file: starts with \"<!DO\" (3C 21 44 4F), expected \"MThd\" or \"RIFF\"")
            }
        }
        XCTAssertThrowsError(try parse([0xF0, 0x7E, 0x7F, 0x06, 0x01], .safe)) { error in
            XCTAssertEqual((error as? MIDIFileError)?.reason, "not a MIDI file: starts with F0 7E 7F 06, expected \"MThd\" or \"RIFF\"")
        }
        XCTAssertThrowsError(try parse([], .safe)) { error in
            XCTAssertEqual((error as? MIDIFileError)?.reason, "empty file, expected an \"MThd\" header")
        }
    }

    func testAFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let dir = try makeTemporaryDirectory(self)
        let fifo = dir.appendingPathComponent("pipe.mid").path
        guard mkfifo(fifo, 0o644) == 0 else { throw XCTSkip("mkfifo failed: \(errno)") }
        XCTAssertThrowsError(try MIDIFile.readBytes(path: fifo)) { error in
            XCTAssertEqual((error as? MIDIReadError)?.message, "not a regular file (a FIFO)")
        }
    }
}
