import XCTest
@testable import MIDIParse

/// The tempo changes a player hears, as every command reads them from one file.
final class TempoChangesTests: XCTestCase {
    private func c(_ tick: Int, _ us: Int) -> MIDITempoChange { MIDITempoChange(tick: tick, microsecondsPerQuarter: us) }

    func testTheLastChangeAtTickZeroIsTheStart() {
        XCTAssertEqual([c(0, 500_000), c(0, 600_000), c(960, 400_000)].startMicrosecondsPerQuarter, 600_000)
        XCTAssertNil([c(960, 400_000)].startMicrosecondsPerQuarter, "none at tick 0")
        XCTAssertNil([MIDITempoChange]().startMicrosecondsPerQuarter)
        XCTAssertEqual([c(0, 500_000), c(0, 0)].startMicrosecondsPerQuarter, 500_000, "a zero tempo is no tempo")
    }

    func testOfChangesAtOneTickTheLastAndNoneThatRestatesTheTempo() {
        let changes = [c(0, 500_000), c(480, 600_000), c(480, 500_000),  // back to the tempo in force: nothing heard
                       c(960, 500_000),  // restated
                       c(1920, 400_000), c(1920, 300_000), c(2880, 300_000), c(3840, 0), c(4800, 500_000)]
        XCTAssertEqual(changes.audibleChanges(after: 500_000), [c(1920, 300_000), c(4800, 500_000)])
        XCTAssertEqual(changes.audibleChanges(after: nil).first, c(480, 500_000), "no tempo before: the first is heard")
    }

    /// Changes out of tick order (merged from tracks by another tool) are heard in tick order,
    /// of those at one tick the one given last.
    func testOutOfOrderChangesAreReadInTickOrder() {
        XCTAssertEqual([c(1920, 400_000), c(960, 600_000), c(1920, 450_000)].audibleChanges(after: 500_000),
                       [c(960, 600_000), c(1920, 450_000)])
    }
}
