// TemperatureSetting: parsing --temperature, and resolving it over a model's defaults (one
// number: every group, defaults ignored; pairs: named groups over the defaults; else 1).
import XCTest
@testable import DrummerCore

final class TemperatureTests: XCTestCase {
    static let original = ModelGroups(vocabulary: try! Vocabulary(ixToNote: [36, 38], ixToTick: [0, 120]))

    func testParsing() throws {
        XCTAssertEqual(try TemperatureSetting(parsing: "0.9"), TemperatureSetting(all: 0.9))
        XCTAssertEqual(try TemperatureSetting(parsing: "note=0.9,tick=0.8"), TemperatureSetting(groups: ["note": 0.9, "tick": 0.8]))
        for (text, message) in [("note=0.9,note=1", "--temperature names note twice"),
                                ("pitch=1", "--temperature names \"pitch\": the output groups are note, tick and velocity (a grid model: hits, velocity and offset)"),
                                ("-1", "--temperature must be a finite number ≥ 0, got -1.0"),
                                ("note=nan", "--temperature note must be a finite number ≥ 0, got nan"),
                                ("note:1", "--temperature takes a number or group=T pairs (note=0.9,tick=0.9,velocity=1.0), got \"note:1\"")] {
            XCTAssertThrowsError(try TemperatureSetting(parsing: text)) { XCTAssertEqual(($0 as? TemperatureError)?.description, message) }
        }
    }

    func testResolution() throws {
        let g = Self.original
        XCTAssertEqual(TemperatureSetting.names(for: g), ["note", "tick"])
        let defaults: [String: Float] = ["tick": 1.2]
        XCTAssertEqual(TemperatureSetting().resolved(for: g, defaults: defaults), ["note": 1, "tick": 1.2])
        XCTAssertEqual(TemperatureSetting(all: 1).resolved(for: g, defaults: defaults), ["note": 1, "tick": 1], "one number ignores the defaults")
        XCTAssertEqual(TemperatureSetting(groups: ["note": 0.5]).resolved(for: g, defaults: defaults), ["note": 0.5, "tick": 1.2])
        XCTAssertEqual(TemperatureSetting(groups: ["tick": 0.7]).resolved(for: g, defaults: defaults), ["note": 1, "tick": 0.7])
        XCTAssertThrowsError(try TemperatureSetting(groups: ["velocity": 1]).check(for: g)) {
            XCTAssertEqual(($0 as? TemperatureError)?.description,
                           "--temperature names velocity, which this model does not predict (its temperature groups: note, tick)")
        }
        XCTAssertEqual(TemperatureSetting.describe(["note": 0.9, "tick": 0.9]), "0.9")
        XCTAssertEqual(TemperatureSetting.describe(["tick": 1.2, "note": 1]), "note=1.0,tick=1.2")
    }

    /// --top-p: one share or group=P pairs, each above 0 and at most 1; unnamed groups at 1.
    func testTopP() throws {
        XCTAssertEqual(try TopPSetting(parsing: "0.95"), TopPSetting(all: 0.95))
        XCTAssertEqual(try TopPSetting(parsing: "hits=0.9,velocity=1"), TopPSetting(groups: ["hits": 0.9, "velocity": 1]))
        for (text, message) in [("0", "--top-p must be above 0 and at most 1, got 0.0"),
                                ("hits=1.5", "--top-p hits must be above 0 and at most 1, got 1.5"),
                                ("hits=0.9,hits=1", "--top-p names hits twice"),
                                ("kick=0.9", "--top-p names \"kick\": the output groups are note, tick and velocity (a grid model: hits, velocity and offset)"),
                                ("hits:0.9", "--top-p takes a number or group=P pairs (hits=0.95,velocity=1), got \"hits:0.9\"")] {
            XCTAssertThrowsError(try TopPSetting(parsing: text)) { XCTAssertEqual(($0 as? TemperatureError)?.description, message) }
        }
        let g = Self.original
        XCTAssertEqual(TopPSetting().resolved(for: g), ["note": 1, "tick": 1])
        XCTAssertEqual(TopPSetting(all: 0.9).resolved(for: g), ["note": 0.9, "tick": 0.9])
        XCTAssertEqual(TopPSetting(groups: ["tick": 0.8]).resolved(for: g), ["note": 1, "tick": 0.8])
        XCTAssertThrowsError(try TopPSetting(groups: ["hits": 0.9]).check(for: g)) {
            XCTAssertEqual(($0 as? TemperatureError)?.description,
                           "--top-p names hits, which this model does not predict (its top-p groups: note, tick)")
        }
        XCTAssertEqual(TopPSetting.describe(["note": 0.9, "tick": 1]), "note=0.9,tick=1.0")
    }
}
