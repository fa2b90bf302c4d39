import Foundation
import XCTest
@testable import MIDIParse

/// `FileHits.read` reads only what hit extraction needs; it must give exactly what the full
/// model gives (`MIDIFile.parse` then `FileHits(file:)`): the same hits, warnings and errors,
/// in every parse mode and with every setting.
final class HitReaderAgreementTests: XCTestCase {
    static let settings: [HitExtractionSettings] = {
        var out = [HitExtractionSettings()]
        var all = HitExtractionSettings()
        all.channel = .all
        out.append(all)
        var zero = HitExtractionSettings()
        zero.channel = .index(0)
        zero.ppq = 96
        zero.quantize = 7
        out.append(zero)
        var mapped = HitExtractionSettings()
        mapped.noteMap = .original
        mapped.ppq = 1000
        out.append(mapped)
        return out
    }()

    private func assertAgree(_ bytes: [UInt8], path: String, file: StaticString = #filePath, line: UInt = #line) {
        for mode in MIDIParseMode.allCases {
            for var s in Self.settings {
                s.parseMode = mode
                let full = Result { () throws -> FileHits in
                    let (f, w) = try MIDIFile.parse(bytes, path: path, mode: mode)
                    return try FileHits(file: f, path: path, settings: s, warnings: w)
                }
                let fast = Result { try FileHits.parse(bytes, path: path, settings: s) }
                switch (full, fast) {
                case (.success(let a), .success(let b)):
                    XCTAssertEqual(a, b, "\(path) in \(mode) mode, \(s)", file: file, line: line)
                case (.failure(let a), .failure(let b)):
                    XCTAssertEqual("\(a)", "\(b)", "\(path) in \(mode) mode", file: file, line: line)
                default:
                    XCTFail("\(path) in \(mode) mode: \(full) vs \(fast)", file: file, line: line)
                }
            }
        }
    }

    func testSharedEdgeFilesAndGrooveFiles() throws {
        let edge = try SharedData.require("midi-edge")
        var paths: [String] = []
        if let walker = FileManager.default.enumerator(atPath: edge.path) {
            for case let rel as String in walker { paths.append(edge.appendingPathComponent(rel).path) }
        }
        if let groove = try? SharedData.require("corpus/groove"), let walker = FileManager.default.enumerator(atPath: groove.path) {
            var n = 0
            for case let rel as String in walker where rel.hasSuffix(".mid") && n < 60 {
                paths.append(groove.appendingPathComponent(rel).path)
                n += 1
            }
        }
        var checked = 0
        for path in paths.sorted() {
            guard let bytes = try? MIDIFile.readBytes(path: path) else { continue }
            assertAgree(bytes, path: path)
            checked += 1
        }
        XCTAssertGreaterThan(checked, 100)
    }

    func testMultiTrackFormat2AndSMPTEFiles() {
        // Format 1: tracks out of order in time, merged by (tick, track, order).
        let f1 = SMF.header(format: 1, tracks: 3) + SMF.track([0x10, 0x99, 36, 1, 0x10, 0x99, 38, 1])
            + SMF.track([0x00, 0x99, 42, 1, 0x20, 0x99, 46, 1]) + SMF.track([0x10, 0x90, 60, 1, 0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20])
        assertAgree(f1, path: "f1.mid")
        // Format 2: track 2 starts where track 1 ends.
        let f2 = SMF.header(format: 2, tracks: 2) + SMF.track([0x10, 0x99, 36, 1, 0x30, 0x89, 36, 0])
            + SMF.track([0x05, 0x99, 38, 1])
        assertAgree(f2, path: "f2.mid")
        // SMPTE with a tempo change in a second track.
        let smpte = SMF.header(format: 1, tracks: 2, division: 0xE728) + SMF.track([0x00, 0x99, 36, 1, 0x83, 0x60, 0x99, 38, 1])
            + SMF.track([0x81, 0x00, 0xFF, 0x51, 0x03, 0x09, 0x27, 0xC0])
        assertAgree(smpte, path: "s.mid")
        // Defects: a missing end of track and trailing bytes; an illegal status.
        assertAgree(SMF.header() + SMF.track([0x00, 0x99, 36, 1], endOfTrack: false) + [1, 2], path: "d.mid")
        assertAgree(SMF.file([0x00, 0xF8, 0x00, 0x99, 36, 1]), path: "i.mid")
    }

    func testQuantizingPastTheTimeLimitIsAnErrorNotAnOverflow() throws {
        // A hit 1 tick below the limit at 480 PPQ, snapped up to a grid of 2^20 ticks.
        var body: [UInt8] = []
        var left = FileHits.maximumTick - 1
        while left > 0 {
            let d = min(left, 0x0FFF_FFFF)
            body += [UInt8(0x80 | d >> 21 & 0x7F), UInt8(0x80 | d >> 14 & 0x7F), UInt8(0x80 | d >> 7 & 0x7F), UInt8(d & 0x7F), 0xFF, 0x01, 0x00]
            left -= d
        }
        body += [0x00, 0x99, 36, 1]
        let bytes = SMF.header(division: 480) + SMF.track(body)
        var s = HitExtractionSettings()
        XCTAssertEqual(try FileHits.parse(bytes, path: "q.mid", settings: s).ticks, [FileHits.maximumTick - 1])
        s.quantize = 1 << 20
        XCTAssertThrowsError(try FileHits.parse(bytes, path: "q.mid", settings: s)) { error in
            XCTAssertEqual(error as? HitExtractionError, .hitTooLate(path: "q.mid", tick: FileHits.maximumTick - 1))
        }
    }
}
