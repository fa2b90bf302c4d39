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
                                ("pitch=1", "--temperature names \"pitch\": the output groups are hits, velocity and offset, and fills (a model of the 2017 layout: note and tick)"),
                                ("-1", "--temperature must be a number from 0 to 100, got -1.0"),
                                ("note=nan", "--temperature note must be a number from 0 to 100, got nan"),
                                // model.json holds 0 to 100: what export accepts, sample can read.
                                ("100.5", "--temperature must be a number from 0 to 100, got 100.5"),
                                ("hits=1e30", "--temperature hits must be a number from 0 to 100, got 1e+30"),
                                ("note:1", "--temperature takes a number or group=T pairs (hits=0.9,velocity=1.2), got \"note:1\"")] {
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

    /// A grid model's `fills` (the hit set in bars 4 and 8 of each phrase): resolved only where
    /// pairs or the defaults name it (else the sampler draws those bars at the hits'); one
    /// number for every group leaves it out; a model of the 2017 layout refuses it.
    func testFills() throws {
        let grid = ModelGroups(vocabulary: try Vocabulary(ixToNote: [36], ixToTick: [0]), grid: try GridGroup(
            ppq: 480, velocity: VelocityGroup(bins: [1...127], histogram: (1...127).map { _ in 1 }), offsets: [0],
            notes: [36, 38, 42, 46, 45, 48, 50, 49, 51]))
        XCTAssertEqual(try TemperatureSetting(parsing: "fills=1.2"), TemperatureSetting(groups: ["fills": 1.2]))
        XCTAssertNoThrow(try TemperatureSetting(groups: ["fills": 1.2]).check(for: grid))
        XCTAssertEqual(TemperatureSetting().resolved(for: grid, defaults: [:]), ["hits": 1, "velocity": 1, "offset": 1])
        XCTAssertEqual(TemperatureSetting(groups: ["fills": 1.2, "hits": 0.9]).resolved(for: grid, defaults: [:]),
                       ["hits": 0.9, "velocity": 1, "offset": 1, "fills": 1.2])
        XCTAssertEqual(TemperatureSetting(groups: ["hits": 0.9]).resolved(for: grid, defaults: ["fills": 1.1]),
                       ["hits": 0.9, "velocity": 1, "offset": 1, "fills": 1.1], "pairs keep the model's fills")
        XCTAssertEqual(TemperatureSetting(all: 1).resolved(for: grid, defaults: ["fills": 1.1]),
                       ["hits": 1, "velocity": 1, "offset": 1], "one number: the fill bars at it too")
        XCTAssertThrowsError(try TemperatureSetting(groups: ["fills": 1.2]).check(for: Self.original)) {
            XCTAssertEqual(($0 as? TemperatureError)?.description,
                           "--temperature names fills, a grid model's hit-set temperature in bars 4 and 8 of each phrase (--temperature only); this model's temperature groups: note, tick")
        }
        XCTAssertEqual((0..<16).filter(GridGroup.isFillBar), [3, 7, 11, 15])

        // Carrying on a beat heard: a grid model's hits at 0.8 over the model's, unless set.
        XCTAssertEqual(TemperatureSetting().resolved(for: grid, defaults: ["hits": 1.1, "velocity": 0.9], continuing: true),
                       ["hits": 0.8, "velocity": 0.9, "offset": 1])
        XCTAssertEqual(TemperatureSetting(groups: ["hits": 0.95]).resolved(for: grid, defaults: [:], continuing: true),
                       ["hits": 0.95, "velocity": 1, "offset": 1])
        XCTAssertEqual(TemperatureSetting(all: 1).resolved(for: grid, defaults: [:], continuing: true),
                       ["hits": 1, "velocity": 1, "offset": 1])
        XCTAssertEqual(TemperatureSetting().resolved(for: Self.original, defaults: [:], continuing: true),
                       ["note": 1, "tick": 1], "the 2017 layout has no hit sets")
    }
}
