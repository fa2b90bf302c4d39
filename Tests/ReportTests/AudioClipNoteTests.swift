import Foundation
import MIDIParse
import XCTest
@testable import Report

/// Every hit audible: the report's audio plays every hit on a General MIDI kit, as `drummer sample`
/// writes them: 22 as 42, 26 as 46; GM notes as they are.
final class AudioClipNoteTests: XCTestCase {
    func testTheClipPlaysGeneralMIDINotes() throws {
        let hits = [(0.0, 22), (0.25, 26), (0.5, 36), (0.75, 38), (1.0, 21)].map { s, n in
            (seconds: s, hit: MIDIHit(tick: Int(s * 960), channel: 9, note: UInt8(n), velocity: 90))
        }
        let file = try MIDIFile.parse(try AudioClip.midi(hits), path: "clip.mid").file
        XCTAssertEqual(file.hits(channel: 9).map(\.note), [42, 46, 36, 38, 35])
    }
}
