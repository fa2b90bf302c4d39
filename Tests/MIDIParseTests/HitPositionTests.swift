// Each hit's velocity and position in its bar, as convert-midi records them (velocities.npy,
// positions.npy): bar lines from the file's time signatures (4/4 without one), positions in
// target ticks after --ppq rescaling and --quantize. Expected values are worked out by hand
// from the bar lengths (4/4 at 480 PPQ: 1920 ticks; 3/4: 1440; 6/8: 1440; 5/4: 2400).
import XCTest
@testable import MIDIParse

final class HitPositionTests: XCTestCase {
    /// A format-0 file: `events` are (absolute tick, bytes) in order; hits are NOTE ONs on channel 10.
    func file(_ events: [(Int, [UInt8])], division: Int) -> [UInt8] {
        var body: [UInt8] = [], last = 0
        for (tick, bytes) in events {
            body += vlq(tick - last) + bytes
            last = tick
        }
        return SMF.file(body, division: division)
    }

    func vlq(_ v: Int) -> [UInt8] {
        var out = [UInt8(v & 0x7F)], v = v >> 7
        while v > 0 {
            out.insert(UInt8(v & 0x7F) | 0x80, at: 0)
            v >>= 7
        }
        return out
    }

    func hit(_ note: UInt8, _ velocity: UInt8) -> [UInt8] { [0x99, note, velocity] }

    /// FF 58 04 nn dd cc bb: dd is the power of two of the denominator.
    func timeSignature(_ n: UInt8, _ d: Int) -> [UInt8] {
        [0xFF, 0x58, 0x04, n, UInt8(d.trailingZeroBitCount), 24, 8]
    }

    func hits(_ bytes: [UInt8], ppq: Int = 480, quantize: Int? = nil) throws -> FileHits {
        var s = HitExtractionSettings()
        s.ppq = ppq
        s.quantize = quantize
        let fast = try FileHits.parse(bytes, path: "t.mid", settings: s)
        // The full parse gives the same (positions and velocities included).
        let (midi, warnings) = try MIDIFile.parse(bytes, path: "t.mid", mode: .safe)
        XCTAssertEqual(try FileHits(file: midi, path: "t.mid", settings: s, warnings: warnings), fast)
        return fast
    }

    func testNoTimeSignatureIsFourFourAndRescalesToThePPQ() throws {
        // 96 PPQ: ticks 0, 24 (a sixteenth), 432 (bar 2, beat 2 and a half) -> 0, 120, 2160 at 480.
        let h = try hits(file([(0, hit(36, 100)), (24, hit(42, 33)), (432, hit(38, 127))], division: 96))
        XCTAssertEqual(h.ticks, [0, 120, 2160])
        XCTAssertEqual(h.velocities, [100, 33, 127])
        XCTAssertEqual(h.tickInBar, [0, 120, 240])
        XCTAssertEqual(h.barTicks, [1920, 1920, 1920])
        XCTAssertEqual(h.meter, "4/4")
    }

    func testSixEight() throws {
        // 6/8 at 480 PPQ: bars of 1440. Hits at 0, 720 (beat 4 of 6), 1680 (bar 2 + 240).
        let h = try hits(file([(0, timeSignature(6, 8)), (0, hit(36, 90)), (720, hit(38, 80)), (1680, hit(42, 1))],
                              division: 480))
        XCTAssertEqual(h.tickInBar, [0, 720, 240])
        XCTAssertEqual(h.barTicks, [1440, 1440, 1440])
        XCTAssertEqual(h.velocities, [90, 80, 1])
        XCTAssertEqual(h.meter, "6/8")
    }

    func testAMeterChangeOnABarLineAndTheMostCommonMeter() throws {
        // One bar of 4/4 (0..<1920), then 3/4 from 1920: bars at 1920, 3360, 4800.
        let h = try hits(file([(0, hit(36, 100)), (1920, timeSignature(3, 4)), (2920, hit(38, 100)),
                               (3400, hit(36, 100)), (4800, hit(42, 100))], division: 480))
        XCTAssertEqual(h.tickInBar, [0, 1000, 40, 0])
        XCTAssertEqual(h.barTicks, [1920, 1440, 1440, 1440])
        XCTAssertEqual(h.meter, "3/4", "three of the four hits are in 3/4")
    }

    func testAnOffBarChangeStartsABarAtItsTick() throws {
        // 4/4, then 5/4 at 1000 (mid-bar): the first bar is cut short (1000 ticks long), 5/4
        // bars start at 1000.
        let h = try hits(file([(0, hit(36, 100)), (900, hit(38, 100)), (1000, timeSignature(5, 4)),
                               (1000, hit(36, 100)), (3500, hit(36, 100))], division: 480))
        XCTAssertEqual(h.tickInBar, [0, 900, 0, 100])
        XCTAssertEqual(h.barTicks, [1000, 1000, 2400, 2400])
    }

    func testPositionsAreTakenAfterQuantizing() throws {
        // --quantize 30: 1910 -> 1920 (the next bar line), 1934 -> 1920, 1936 -> 1950.
        let h = try hits(file([(0, hit(36, 100)), (1910, hit(42, 100)), (1934, hit(38, 100)), (1936, hit(42, 100))],
                              division: 480), quantize: 30)
        XCTAssertEqual(h.ticks, [0, 1920, 1920, 1950])
        XCTAssertEqual(h.tickInBar, [0, 0, 0, 30])
        XCTAssertEqual(h.barTicks, [1920, 1920, 1920, 1920])
    }

    func testATimeSignatureMovesWithThePPQ() throws {
        // 96 PPQ: 3/4 bars of 288 source ticks; at --ppq 120 they are 360 ticks long.
        let h = try hits(file([(0, timeSignature(3, 4)), (0, hit(36, 64)), (312, hit(36, 64))], division: 96), ppq: 120)
        XCTAssertEqual(h.ticks, [0, 390])
        XCTAssertEqual(h.tickInBar, [0, 30])
        XCTAssertEqual(h.barTicks, [360, 360])
        XCTAssertEqual(h.meter, "3/4")
    }

    func testOnsetOrderNoteSortsTheHitsOfAnOnsetKeepingTheirVelocities() throws {
        // At 480 PPQ with --quantize 60: 42 at 0, 36 at 10 and 38 at 25 share onset 0 (as
        // played: 42, 36, 38); 46 then 42 at 470/481 share onset 480. The same note twice keeps
        // its order.
        let bytes = file([(0, hit(42, 80)), (10, hit(36, 110)), (25, hit(38, 90)), (25, hit(38, 20)),
                          (470, hit(46, 70)), (481, hit(42, 60))], division: 480)
        var s = HitExtractionSettings()
        s.quantize = 60
        let asPlayed = try FileHits.parse(bytes, path: "t.mid", settings: s)
        XCTAssertEqual(asPlayed.notes, [42, 36, 38, 38, 46, 42])
        s.onsetOrder = .note
        let sorted = try FileHits.parse(bytes, path: "t.mid", settings: s)
        XCTAssertEqual(sorted.notes, [36, 38, 38, 42, 42, 46])
        XCTAssertEqual(sorted.velocities, [110, 90, 20, 80, 60, 70])
        XCTAssertEqual(sorted.ticks, [0, 0, 0, 0, 480, 480])
        XCTAssertEqual(sorted.tickInBar, [0, 0, 0, 0, 480, 480])
        let (midi, warnings) = try MIDIFile.parse(bytes, path: "t.mid", mode: .safe)
        XCTAssertEqual(try FileHits(file: midi, path: "t.mid", settings: s, warnings: warnings), sorted)
    }
}
