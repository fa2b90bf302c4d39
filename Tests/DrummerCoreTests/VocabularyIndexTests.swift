// The one note/tick → class index lookup.
import DrummerCore
import XCTest

final class VocabularyIndexTests: XCTestCase {
    func testFlatTableAndLargeTicks() throws {
        let big = VocabularyIndex.flatTickLimit + 7
        let enc = VocabularyIndex(try Vocabulary(ixToNote: [38, 36], ixToTick: [120, 0, big]))
        XCTAssertEqual(enc.note(38), 0)
        XCTAssertEqual(enc.note(36), 1)
        XCTAssertNil(enc.note(37))
        XCTAssertNil(enc.note(200))
        XCTAssertNil(enc.note(-1))
        XCTAssertEqual(enc.tick(120), 0)
        XCTAssertEqual(enc.tick(0), 1)
        XCTAssertEqual(enc.tick(big), 2)
        XCTAssertNil(enc.tick(121))
        XCTAssertNil(enc.tick(-1))
        XCTAssertNil(enc.tick(big + 1))
        XCTAssertNil(enc.tick(Int.max))
    }

    func testNearestTick() throws {
        // Values 0, 30, 120 at indices 2, 0, 1 (tables need not be sorted).
        let enc = VocabularyIndex(try Vocabulary(ixToNote: [36], ixToTick: [30, 120, 0]))
        XCTAssertTrue(enc.nearestTick(30) == (0, true))
        XCTAssertTrue(enc.nearestTick(14) == (2, false), "14 is nearer 0 than 30")
        XCTAssertTrue(enc.nearestTick(15) == (2, false), "a tie goes to the smaller value")
        XCTAssertTrue(enc.nearestTick(16) == (0, false))
        XCTAssertTrue(enc.nearestTick(75) == (0, false), "75 ties between 30 and 120: the smaller")
        XCTAssertTrue(enc.nearestTick(76) == (1, false))
        XCTAssertTrue(enc.nearestTick(-5) == (2, false), "below the smallest")
        XCTAssertTrue(enc.nearestTick(100_000) == (1, false), "above the largest")
    }
}
