import XCTest
@testable import MIDIParse

/// FileHits.barSpan counts the bars from the first hit's to the last's, empty ones included,
/// and checkBarSpan refuses more than a grid model reads.
final class BarSpanTests: XCTestCase {
    private func hits(_ ticks: [Int], barTicks: Int = 1920) -> FileHits {
        FileHits(notes: ticks.map { _ in 36 }, ticks: ticks, tickInBar: ticks.map { $0 % barTicks },
                 barTicks: ticks.map { _ in barTicks }, channelUsed: "9")
    }

    func testBarsBetweenTheFirstAndLastHit() {
        XCTAssertEqual(hits([]).barSpan, 0)
        XCTAssertEqual(hits([0, 480, 1000]).barSpan, 1)
        XCTAssertEqual(hits([0, 1920, 3840 + 100]).barSpan, 3)
        XCTAssertEqual(hits([1920 * 5, 1920 * 9 + 7]).barSpan, 5, "bars 6 to 10: three empty ones between")
        XCTAssertEqual(hits([0, 1440], barTicks: 1440).barSpan, 2, "3/4 bars")
        // A 1/4 pickup (480 ticks), then 4/4 bars: 2,600 empty ones before the last hit's bar.
        let far = 480 + 2600 * 1920
        let pickup = FileHits(notes: [38, 38, 36], ticks: [0, 240, far], tickInBar: [0, 240, 0], barTicks: [480, 480, 1920], channelUsed: "9")
        XCTAssertEqual(pickup.barSpan, 2602, "the empty bars at 4/4's length, not the pickup's")
    }

    func testMoreThanTheLimitIsRefusedNamingFileBarsAndLimit() throws {
        let limit = FileHits.maximumBarsRead
        XCTAssertNoThrow(try hits([0, (limit - 1) * 1920]).checkBarSpan(path: "ok.mid"))
        XCTAssertThrowsError(try hits([0, limit * 1920]).checkBarSpan(path: "far.mid")) { e in
            XCTAssertEqual(e as? HitExtractionError, .tooManyBars(path: "far.mid", bars: limit + 1, limit: limit))
            XCTAssertTrue("\(e)".hasPrefix("far.mid: its hits span \(limit + 1) bars"), "\(e)")
            XCTAssertTrue("\(e)".contains("more than the \(limit)"), "\(e)")
        }
    }
}
