import XCTest
@testable import Encode
import MIDIParse
import DrummerCore

/// Builds MIDI bytes for these tests with the MIDIParse writer (format 0, one track).
enum MIDIBytes {
    static func notes(ppq: Int, _ hits: [(tick: Int, note: UInt8, channel: UInt8)], tempo: Int? = nil) throws -> [UInt8] {
        try MIDIWriter.format0(
            ppq: ppq, tempos: tempo.map { [MIDITempoChange(tick: 0, microsecondsPerQuarter: $0)] } ?? [],
            notes: hits.map { MIDINote(tick: $0.tick, note: $0.note, velocity: 100, channel: $0.channel, duration: 1) })
    }
}

final class HitSequenceTests: XCTestCase {
    private func hits(_ ticks: [Int], note: Int = 36) -> FileHits {
        FileHits(notes: [Int](repeating: note, count: ticks.count), ticks: ticks, channelUsed: "9", warnings: [])
    }

    func testGluingWaitsForTheNextBeatAfterThePreviousFilesLastHit() {
        var seq = HitSequence(ppq: 480, maxDelta: nil)
        seq.append(hits([10, 130, 500]))   // first file: its first delta is its own onset
        seq.append(hits([30, 60]))         // last hit 500: next beat at 960, wait 460, + onset 30
        seq.append(hits([]))               // no hits: left out of the chain
        seq.append(hits([0, 480]))         // last hit 60: wait 420 + 0
        seq.append(hits([7]))              // last hit 480 is on a beat: wait a whole beat, 480 + 7
        XCTAssertEqual(seq.deltas, [10, 120, 370, 490, 30, 420, 480, 487])
        XCTAssertEqual(seq.offsets, [0, 3, 5, 5, 7])
    }

    func testMaxDeltaClampsEveryDeltaIncludingGlue() {
        var seq = HitSequence(ppq: 480, maxDelta: 400)
        seq.append(hits([0, 1000]))
        seq.append(hits([0]))
        XCTAssertEqual(seq.deltas, [0, 400, 400])
    }

    func testSortedUnique() throws {
        XCTAssertEqual(IndexEncoder.sortedUnique([5, 1, 5, 3, 1, 1]), [1, 3, 5])
        XCTAssertEqual(IndexEncoder.sortedUnique([]), [])
        XCTAssertEqual(IndexEncoder.sortedUnique([Int.max, -3, Int.max]), [-3, Int.max])
    }

    func testStableHashKnownVectors() {
        // FNV-1a 64 test vectors (Fowler, Noll, Vo).
        XCTAssertEqual(StableHash.fnv1a64(""), 0xcbf2_9ce4_8422_2325)
        XCTAssertEqual(StableHash.fnv1a64("a"), 0xaf63_dc4c_8601_ec8c)
        XCTAssertEqual(StableHash.fnv1a64("foobar"), 0x8594_4171_f739_67e8)
        let u = StableHash.unitInterval("drummer1/session1/1_funk_80_beat_4-4.mid")
        XCTAssertTrue(u >= 0 && u < 1)
    }
}
