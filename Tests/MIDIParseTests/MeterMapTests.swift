import XCTest
@testable import MIDIParse

final class MeterMapTests: XCTestCase {
    private func pos(_ bar: Int, _ tick: Int, _ barTicks: Int, _ n: Int, _ d: Int) -> MIDIBarPosition {
        MIDIBarPosition(bar: bar, tickInBar: tick, barTicks: barTicks, numerator: n, denominator: d)
    }

    func testFourFourFromTickZeroWithoutTimeSignatures() {
        let m = MIDIMeterMap(ticksPerQuarter: 480, changes: [])
        XCTAssertEqual(m.position(atTick: 0), pos(0, 0, 1920, 4, 4))
        XCTAssertEqual(m.position(atTick: 1919), pos(0, 1919, 1920, 4, 4))
        XCTAssertEqual(m.position(atTick: 1920), pos(1, 0, 1920, 4, 4))
        XCTAssertEqual(m.position(atTick: 5000), pos(2, 1160, 1920, 4, 4))
        XCTAssertEqual(m.position(atTick: -5), pos(0, 0, 1920, 4, 4), "ticks before 0 read as 0")
        XCTAssertEqual(m.startTick(ofBar: 3), 5760)
        XCTAssertEqual(m.barStartTicks(through: 3840), [0, 1920, 3840])
        XCTAssertEqual(m.barStartTicks(through: 3839), [0, 1920])
        XCTAssertEqual(m.barStartTicks(through: -1), [])
    }

    func testSixEight() {
        let m = MIDIMeterMap(ticksPerQuarter: 480, changes: [(tick: 0, numerator: 6, denominator: 8)])
        XCTAssertEqual(m.segments.count, 1, "a change at tick 0 replaces the default 4/4")
        XCTAssertEqual(m.position(atTick: 2 * 1440 + 720), pos(2, 720, 1440, 6, 8))
        XCTAssertEqual(m.startTick(ofBar: 4), 5760)
        XCTAssertEqual(m.position(atTick: 0).fraction, 0)
        XCTAssertEqual(m.position(atTick: 720).fraction, 0.5)
    }

    func testChangeOnABarLine() {
        // Two bars of 4/4, then 3/4 from bar 3 (tick 3840).
        let m = MIDIMeterMap(ticksPerQuarter: 480, changes: [(tick: 3840, numerator: 3, denominator: 4)])
        XCTAssertEqual(m.position(atTick: 3839), pos(1, 1919, 1920, 4, 4))
        XCTAssertEqual(m.position(atTick: 3840), pos(2, 0, 1440, 3, 4))
        XCTAssertEqual(m.position(atTick: 3840 + 1440 + 10), pos(3, 10, 1440, 3, 4))
        XCTAssertEqual(m.startTick(ofBar: 2), 3840)
        XCTAssertEqual(m.startTick(ofBar: 3), 5280)
        XCTAssertEqual(m.barStartTicks(through: 5280), [0, 1920, 3840, 5280])
    }

    func testChangeOffABarLineStartsANewBarThere() {
        // 3/4 at tick 2400: bar 1 (1920...) is cut short after one beat (its length 480, its
        // meter's 1920); bar 2 starts at 2400.
        let m = MIDIMeterMap(ticksPerQuarter: 480, changes: [(tick: 2400, numerator: 3, denominator: 4)])
        XCTAssertEqual(m.position(atTick: 2399), MIDIBarPosition(bar: 1, tickInBar: 479, barTicks: 1920, length: 480, numerator: 4, denominator: 4))
        XCTAssertEqual(m.position(atTick: 1919).length, 1920, "bar 0 is whole")
        XCTAssertEqual(m.position(atTick: 2400), pos(2, 0, 1440, 3, 4))
        XCTAssertEqual(m.position(atTick: 3840), pos(3, 0, 1440, 3, 4))
        XCTAssertEqual(m.barStartTicks(through: 3840), [0, 1920, 2400, 3840])
        XCTAssertEqual(m.startTick(ofBar: 1), 1920)
    }

    func testEqualTicksLastWinsAndInvalidChangesAreIgnored() {
        let m = MIDIMeterMap(ticksPerQuarter: 96, changes: [
            (tick: 384, numerator: 7, denominator: 8), (tick: 384, numerator: 5, denominator: 4),
            (tick: 600, numerator: 0, denominator: 4), (tick: 700, numerator: 3, denominator: 256),
            (tick: -10, numerator: 2, denominator: 2),
        ])
        // 2/2 from tick 0 (the negative tick clamps to 0), then 5/4 at 384 (the later of two at 384).
        XCTAssertEqual(m.position(atTick: 0), pos(0, 0, 384, 2, 2))
        XCTAssertEqual(m.position(atTick: 384), pos(1, 0, 480, 5, 4))
        XCTAssertEqual(m.position(atTick: 384 + 480 * 3 + 1), pos(4, 1, 480, 5, 4))
        XCTAssertEqual(m.segments.count, 2)
    }

    func testRepeatedMeterOnABarLineAddsNoSegment() {
        let m = MIDIMeterMap(ticksPerQuarter: 480, changes: [(tick: 1920, numerator: 4, denominator: 4),
                                                             (tick: 0, numerator: 4, denominator: 4)])
        XCTAssertEqual(m.segments.count, 1)
        XCTAssertEqual(m.position(atTick: 1920 * 5), pos(5, 0, 1920, 4, 4))
    }

    func testHugeTicksDoNotOverflow() {
        let m = MIDIMeterMap(ticksPerQuarter: 480, changes: [(tick: 1000, numerator: 3, denominator: 4)])
        let p = m.position(atTick: Int.max)
        XCTAssertEqual(p.tickInBar, (Int.max - 1000) % 1440)
        XCTAssertEqual(p.bar, 1 + (Int.max - 1000) / 1440)
        XCTAssertEqual(m.startTick(ofBar: Int.max), Int.max, "saturates instead of trapping")
        XCTAssertEqual(m.startTick(ofBar: p.bar), Int.max - p.tickInBar)
        let big = MIDIMeterMap(ticksPerQuarter: 32767, changes: [(tick: 0, numerator: 255, denominator: 1)])
        XCTAssertEqual(big.position(atTick: 0).barTicks, 255 * 4 * 32767)
    }

    func testUnevenBarLengthsRound() {
        // 5/8 at 25 ticks per quarter: 5 × 100 / 8 = 62.5 ticks, rounded to 63.
        let m = MIDIMeterMap(ticksPerQuarter: 25, changes: [(tick: 0, numerator: 5, denominator: 8)])
        XCTAssertEqual(m.position(atTick: 63).bar, 1)
    }

    // MARK: From files

    private func timeSignature(_ n: UInt8, _ power: UInt8) -> [UInt8] { [0xFF, 0x58, 0x04, n, power, 24, 8] }

    func testFromAFormat1FileMergesTracks() throws {
        // Track 0: 3/4 at 0 and 2/4 at tick 288 (bar 1 at 96 PPQ); track 1: a hit.
        let t0: [UInt8] = [0x00] + timeSignature(3, 2) + [0x82, 0x20] + timeSignature(2, 2)
        let t1: [UInt8] = [0x00, 0x99, 36, 100]
        let bytes = SMF.header(format: 1, tracks: 2, division: 96) + SMF.track(t0) + SMF.track(t1)
        let (file, _) = try MIDIFile.parse(bytes, path: "t.mid")
        let m = MIDIMeterMap(file: file)
        XCTAssertEqual(m.ticksPerQuarter, 96)
        XCTAssertEqual(m.position(atTick: 287), pos(0, 287, 288, 3, 4))
        XCTAssertEqual(m.position(atTick: 288), pos(1, 0, 192, 2, 4))
    }

    func testFileWithoutTimeSignatureIsFourFour() throws {
        let (file, _) = try MIDIFile.parse(SMF.file([0x00, 0x99, 36, 100]), path: "t.mid")
        XCTAssertEqual(MIDIMeterMap(file: file).position(atTick: 400), pos(1, 16, 384, 4, 4))
    }

    func testSMPTEFileUsesANominalQuarterFromItsFirstTempo() throws {
        // 25 fps × 40 ticks per frame = 1000 ticks/s; at 120 BPM a quarter is 500 ticks.
        let smpte = SMF.header(format: 0, tracks: 1, division: 0xE728) + SMF.track([0x00, 0x99, 36, 100])
        let (file, _) = try MIDIFile.parse(smpte, path: "t.mid")
        XCTAssertEqual(MIDIMeterMap(file: file).ticksPerQuarter, 500)
        // A tempo of 1 s per quarter at tick 0 gives 1000 ticks per quarter.
        let slow = SMF.header(format: 0, tracks: 1, division: 0xE728)
            + SMF.track([0x00, 0xFF, 0x51, 0x03, 0x0F, 0x42, 0x40, 0x00, 0x99, 36, 100])
        let (file2, _) = try MIDIFile.parse(slow, path: "t.mid")
        XCTAssertEqual(MIDIMeterMap(file: file2).ticksPerQuarter, 1000)
    }
}

final class GeneralMIDIDrumsTests: XCTestCase {
    func testEveryGMPercussionNoteHasANameAndAUniqueShortName() {
        XCTAssertEqual(GeneralMIDIDrums.all.count, 47)
        XCTAssertEqual(Set(GeneralMIDIDrums.all.map(\.note)), Set(35...81))
        XCTAssertEqual(Set(GeneralMIDIDrums.all.map(\.shortName)).count, 47)
        XCTAssertTrue(GeneralMIDIDrums.all.allSatisfy { (2...3).contains($0.shortName.count) })
        XCTAssertEqual(GeneralMIDIDrums.all.map(\.displayOrder), Array(0..<47))
    }

    func testNames() {
        XCTAssertEqual(GeneralMIDIDrums.name(note: 35), "Acoustic Bass Drum")
        XCTAssertEqual(GeneralMIDIDrums.name(note: 38), "Acoustic Snare")
        XCTAssertEqual(GeneralMIDIDrums.name(note: 42), "Closed Hi-Hat")
        XCTAssertEqual(GeneralMIDIDrums.name(note: 81), "Open Triangle")
        XCTAssertEqual(GeneralMIDIDrums.shortName(note: 36), "BD")
        XCTAssertEqual(GeneralMIDIDrums.shortName(note: 38), "SD")
        XCTAssertEqual(GeneralMIDIDrums.shortName(note: 42), "HH")
        XCTAssertEqual(GeneralMIDIDrums.shortName(note: 49), "CR")
        XCTAssertEqual(GeneralMIDIDrums.shortName(note: 51), "RD")
        XCTAssertEqual(GeneralMIDIDrums.name(note: 22), "Note 22")
        XCTAssertEqual(GeneralMIDIDrums.shortName(note: 22), "N22")
        XCTAssertEqual(GeneralMIDIDrums.drum(note: 22).family, .other)
    }

    func testDrummersOrderCymbalsHiHatTomsSnareKickThenTheRest() {
        XCTAssertEqual(GeneralMIDIDrums.sorted(notes: [36, 38, 42, 49, 22, 45, 50, 56, 36, 0]),
                       [49, 42, 50, 45, 38, 36, 56, 0, 22])
        let families = GeneralMIDIDrums.all.map(\.family)
        let firstIndex: [GeneralMIDIDrum.Family: Int] = Dictionary(families.enumerated().map { ($0.element, $0.offset) },
                                                                   uniquingKeysWith: min)
        let lastIndex: [GeneralMIDIDrum.Family: Int] = Dictionary(families.enumerated().map { ($0.element, $0.offset) },
                                                                  uniquingKeysWith: max)
        let order: [GeneralMIDIDrum.Family] = [.cymbal, .hiHat, .tom, .snare, .kick, .percussion]
        for (a, b) in zip(order, order.dropFirst()) {
            XCTAssertLessThan(lastIndex[a] ?? 99, firstIndex[b] ?? -1, "\(a) before \(b)")
        }
        // Toms from high to low.
        let toms = GeneralMIDIDrums.all.filter { $0.family == .tom }.map(\.note)
        XCTAssertEqual(toms, [50, 48, 47, 45, 43, 41])
    }

    func testListing() {
        XCTAssertEqual(GeneralMIDIDrums.listing(counts: [36: 4, 42: 8, 22: 1]),
                       "Closed Hi-Hat (42) ×8, Bass Drum 1 (36) ×4, Note 22 ×1")
    }
}
