// model.json format version 2: the "groups" section of a groove model (position one-hot or
// binary, velocity bins and histogram) round-trips with its weights; groups that disagree with
// the .bin files, or are malformed, are refused naming the file and the key; version 1 files
// load as the original layout.
import XCTest
import Foundation
import DrummerCore
@testable import ModelFiles

final class ModelDirectoryGroupsTests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws {
        tmp = FileManager.default.temporaryDirectory
            .appendingPathComponent("modeldir-groups-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: tmp)
    }

    static let vocabulary = (try? Vocabulary(ixToNote: [36, 38, 42], ixToTick: [0, 60, 120, 240]))!

    /// A velocity group of 3 bins over a histogram with hits at a few velocities.
    static func velocityGroup() throws -> VelocityGroup {
        var histogram = [Int](repeating: 0, count: 127)
        for (v, n) in [(20, 3), (40, 7), (64, 11), (90, 5), (110, 2), (127, 1)] { histogram[v - 1] = n }
        return try VelocityGroup(bins: [1...40, 41...90, 91...127], histogram: histogram)
    }

    /// Groups over `vocabulary`: a position group of 12 slots of 120 ticks (3/4 at 480 PPQ) in
    /// `encoding`, and the velocity group when `velocity`.
    static func groups(_ encoding: PositionEncoding?, velocity: Bool = true) throws -> ModelGroups {
        ModelGroups(vocabulary: vocabulary,
                    position: encoding.map {
                        PositionGroup(encoding: $0, slots: 12, ticksPerSlot: 120, ppq: 480, meter: Meter(numerator: 3, denominator: 4)!)
                    },
                    velocity: velocity ? try velocityGroup() : nil)
    }

    /// Random weights of `groups` at hidden size 5.
    static func weights(_ groups: ModelGroups, seed: UInt64 = 11) throws -> LSTMWeights {
        let shape = groups.shape(hidden: 5)
        var rng = SeededRNG(seed: seed)
        return try LSTMWeights(shape: shape, wx: (0..<shape.wxCount).map { _ in Float(rng.uniform(-1, 1)) },
                               wy: (0..<shape.wyCount).map { _ in Float(rng.uniform(-1, 1)) })
    }

    private func write(_ groups: ModelGroups, _ name: String = "model") throws -> (String, LSTMWeights) {
        let w = try Self.weights(groups)
        let dir = tmp.appendingPathComponent(name).path
        try ModelDirectory.write(weights: w, groups: groups, to: dir, metadata: ["step": "3"])
        return (dir, w)
    }

    private func manifest(_ dir: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: dir + "/model.json"))) as? [String: Any])
    }

    private func editManifest(_ dir: String, _ edit: (inout [String: Any]) -> Void) throws {
        var obj = try manifest(dir)
        edit(&obj)
        try JSONSerialization.data(withJSONObject: obj).write(to: URL(fileURLWithPath: dir + "/model.json"))
    }

    /// Edits model.json's "groups" object.
    private func editGroups(_ dir: String, _ edit: (inout [String: Any]) -> Void) throws {
        try editManifest(dir) { m in
            var g = m["groups"] as? [String: Any] ?? [:]
            edit(&g)
            m["groups"] = g
        }
    }

    private func message(_ dir: String) -> String {
        do { _ = try ModelDirectory.load(path: dir); return "loaded" } catch { return "\(error)" }
    }

    private func assertBitwiseEqual(_ a: LSTMWeights, _ b: LSTMWeights, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.shape, b.shape, file: file, line: line)
        XCTAssertEqual(a.wx.map(\.bitPattern), b.wx.map(\.bitPattern), "Wx", file: file, line: line)
        XCTAssertEqual(a.wy.map(\.bitPattern), b.wy.map(\.bitPattern), "Wy", file: file, line: line)
    }

    // MARK: Round trip

    func testOneHotPositionAndVelocityRoundTrip() throws {
        let g = try Self.groups(.oneHot)
        let (dir, w) = try write(g)
        let m = try ModelDirectory.load(path: dir)
        XCTAssertEqual(m.groups, g)
        XCTAssertEqual(m.groups.position?.meter.description, "3/4")
        XCTAssertEqual(m.groups.velocity?.bins, [1...40, 41...90, 91...127])
        XCTAssertEqual(m.groups.velocity?.histogram, try Self.velocityGroup().histogram)
        XCTAssertEqual(m.formatVersion, 2)
        XCTAssertTrue(m.checksumsVerified)
        assertBitwiseEqual(m.weights, w)
        // Input groups note 3, tick 4, position 12, velocity 3; outputs note 3, tick 4, velocity 3.
        XCTAssertEqual(m.shape, ModelShape(inputGroups: [3, 4, 12, 3], outputGroups: [3, 4, 3], hidden: 5))

        // The file as a reader sees it: shapes, and the groups section key by key.
        let json = try manifest(dir)
        XCTAssertEqual(json["format_version"] as? Int, 2)
        XCTAssertEqual(json["Wx_shape"] as? [Int], [3 + 4 + 12 + 3 + 5 + 1, 20])
        XCTAssertEqual(json["Wy_shape"] as? [Int], [6, 3 + 4 + 3])
        let groups = try XCTUnwrap(json["groups"] as? [String: Any])
        let inputs = try XCTUnwrap(groups["inputs"] as? [[String: Any]])
        XCTAssertEqual(inputs.map { $0["name"] as? String }, ["note", "tick", "position", "velocity"])
        XCTAssertEqual(inputs.map { $0["size"] as? Int }, [3, 4, 12, 3])
        let outputs = try XCTUnwrap(groups["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { $0["name"] as? String }, ["note", "tick", "velocity"])
        XCTAssertEqual(outputs.map { $0["size"] as? Int }, [3, 4, 3])
        let position = try XCTUnwrap(groups["position"] as? [String: Any])
        XCTAssertEqual(position["encoding"] as? String, "onehot")
        XCTAssertEqual(position["slots"] as? Int, 12)
        XCTAssertEqual(position["ticks_per_slot"] as? Int, 120)
        XCTAssertEqual(position["ppq"] as? Int, 480)
        XCTAssertEqual(position["meter"] as? String, "3/4")
        let velocity = try XCTUnwrap(groups["velocity"] as? [String: Any])
        XCTAssertEqual(velocity["bins"] as? [[Int]], [[1, 40], [41, 90], [91, 127]])
        let histogram = try XCTUnwrap(velocity["histogram"] as? [Int])
        XCTAssertEqual(histogram.count, 127)
        XCTAssertEqual(histogram[63], 11)
        XCTAssertEqual(histogram.reduce(0, +), 29)

        // Writing the loaded model again reproduces all three files byte for byte.
        let again = tmp.appendingPathComponent("again").path
        try ModelDirectory.write(weights: m.weights, groups: m.groups, to: again, metadata: m.metadata)
        for name in ["Wx.bin", "Wy.bin", "model.json"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: again + "/" + name)),
                           try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name)), name)
        }
    }

    func testBinaryPositionRoundTripWithAndWithoutVelocity() throws {
        for velocity in [true, false] {
            let g = try Self.groups(.binary, velocity: velocity)
            let (dir, w) = try write(g, "binary-\(velocity)")
            let m = try ModelDirectory.load(path: dir)
            XCTAssertEqual(m.groups, g)
            XCTAssertEqual(m.groups.position?.encoding, .binary)
            XCTAssertEqual(m.groups.position?.bits, 4, "slots 0...11 need 4 bits")
            assertBitwiseEqual(m.weights, w)
            // One 2-row group per bit, lowest bit first, then velocity.
            XCTAssertEqual(m.groups.inputNames, ["note", "tick", "position_bit0", "position_bit1", "position_bit2", "position_bit3"]
                + (velocity ? ["velocity"] : []))
            XCTAssertEqual(m.shape.inputGroups, [3, 4, 2, 2, 2, 2] + (velocity ? [3] : []))
            XCTAssertEqual(m.shape.outputGroups, [3, 4] + (velocity ? [3] : []))
            let groups = try XCTUnwrap(try manifest(dir)["groups"] as? [String: Any])
            XCTAssertEqual((groups["position"] as? [String: Any])?["encoding"] as? String, "binary")
            XCTAssertEqual((groups["inputs"] as? [[String: Any]])?.map { $0["size"] as? Int },
                           [3, 4, 2, 2, 2, 2] + (velocity ? [3] : []))
            if !velocity { XCTAssertNil(groups["velocity"]) }
        }
    }

    /// A velocity group alone (no position) and the original layout, written by this version:
    /// the groups section lists just what the model has.
    func testVelocityOnlyAndOriginalLayoutRoundTrip() throws {
        let v = try Self.groups(nil, velocity: true)
        let (dir, _) = try write(v, "velocity")
        XCTAssertEqual(try ModelDirectory.load(path: dir).groups, v)
        XCTAssertEqual(try ModelDirectory.load(path: dir).shape.inputGroups, [3, 4, 3])
        let o = ModelGroups(vocabulary: Self.vocabulary)
        let (odir, _) = try write(o, "original")
        let m = try ModelDirectory.load(path: odir)
        XCTAssertEqual(m.groups, o)
        XCTAssertTrue(m.groups.isOriginalLayout)
        let groups = try XCTUnwrap(try manifest(odir)["groups"] as? [String: Any])
        XCTAssertEqual(Set(groups.keys), ["inputs", "outputs"])
    }

    // MARK: Groups that disagree with the weights

    /// model.json's groups say 80 position slots; Wx.bin holds the rows of 12.
    func testGroupsThatDisagreeWithTheBinFilesAreRefused() throws {
        let (dir, _) = try write(try Self.groups(.oneHot))
        let manifestPath = dir + "/model.json"
        try editGroups(dir) { g in
            var p = g["position"] as? [String: Any] ?? [:]
            p["slots"] = 80
            g["position"] = p
            var inputs = g["inputs"] as? [[String: Any]] ?? []
            inputs[2]["size"] = 80
            g["inputs"] = inputs
        }
        // Wx_shape still says 12 slots' rows: the key that disagrees with the groups is named.
        XCTAssertEqual(message(dir), "\(manifestPath): Wx_shape is [28, 20] but the vocabulary, groups and hidden_size give [96, 20]")
        // With Wx_shape matching the groups, Wx.bin's size is what disagrees.
        try editManifest(dir) { $0["Wx_shape"] = [96, 20] }
        XCTAssertEqual(message(dir), "\(dir)/Wx.bin: \(28 * 20 * 4) bytes, expected \(96 * 20 * 4) (96 × 20 float32) "
            + "for model.json's groups: inputs note 3, tick 4, position 80, velocity 3; hidden size 5")

        // Velocity dropped from the groups (and its shapes): Wx.bin holds its rows, Wy.bin its columns.
        let (dir2, _) = try write(try Self.groups(.oneHot), "novelocity")
        try editGroups(dir2) { g in
            g.removeValue(forKey: "velocity")
            g["inputs"] = (g["inputs"] as? [[String: Any]] ?? []).dropLast().map { $0 }
            g["outputs"] = (g["outputs"] as? [[String: Any]] ?? []).dropLast().map { $0 }
        }
        try editManifest(dir2) { $0.removeValue(forKey: "Wx_shape"); $0.removeValue(forKey: "Wy_shape") }
        XCTAssertEqual(message(dir2), "\(dir2)/Wx.bin: \(28 * 20 * 4) bytes, expected \(25 * 20 * 4) (25 × 20 float32) "
            + "for model.json's groups: inputs note 3, tick 4, position 12; hidden size 5")
        let bins = (dir2 as NSString).appendingPathComponent("Wx.bin")
        try Data(count: 25 * 20 * 4).write(to: URL(fileURLWithPath: bins))
        try editManifest(dir2) { $0.removeValue(forKey: "sha256") }
        XCTAssertEqual(message(dir2), "\(dir2)/Wy.bin: \(6 * 10 * 4) bytes, expected \(6 * 7 * 4) (6 × 7 float32) "
            + "for model.json's groups: outputs note 3, tick 4; hidden size 5")
    }

    /// The listed inputs/outputs must be what the tables give.
    func testListedGroupSizesMustMatchTheTables() throws {
        let (dir, _) = try write(try Self.groups(.oneHot))
        let manifestPath = dir + "/model.json"
        try editGroups(dir) { g in
            var inputs = g["inputs"] as? [[String: Any]] ?? []
            inputs[2]["size"] = 16
            g["inputs"] = inputs
        }
        XCTAssertEqual(message(dir), "\(manifestPath): groups: inputs [note 3, tick 4, position 16, velocity 3] do not match "
            + "the vocabulary and tables, which give [note 3, tick 4, position 12, velocity 3]")
        try editGroups(dir) { g in
            var inputs = g["inputs"] as? [[String: Any]] ?? []
            inputs[2]["size"] = 12
            g["inputs"] = inputs
            g["outputs"] = [["name": "note", "size": 3], ["name": "tick", "size": 4]]
        }
        XCTAssertEqual(message(dir), "\(manifestPath): groups: outputs [note 3, tick 4] do not match "
            + "the vocabulary and tables, which give [note 3, tick 4, velocity 3]")
    }

    // MARK: Malformed groups

    func testMalformedGroupsAreRefusedNamingTheKey() throws {
        let (dir, _) = try write(try Self.groups(.oneHot))
        let manifestPath = dir + "/model.json"
        let good = try manifest(dir)
        func check(_ expected: String, file: StaticString = #filePath, line: UInt = #line,
                   _ edit: (inout [String: Any]) -> Void) throws {
            var g = try XCTUnwrap(good["groups"] as? [String: Any])
            edit(&g)
            var m = good
            m["groups"] = g
            try JSONSerialization.data(withJSONObject: m).write(to: URL(fileURLWithPath: manifestPath))
            XCTAssertEqual(message(dir), manifestPath + ": " + expected, file: file, line: line)
        }
        func position(_ key: String, _ value: Any) -> (inout [String: Any]) -> Void {
            { g in
                var p = g["position"] as? [String: Any] ?? [:]
                p[key] = value
                g["position"] = p
            }
        }
        func velocity(_ key: String, _ value: Any) -> (inout [String: Any]) -> Void {
            { g in
                var v = g["velocity"] as? [String: Any] ?? [:]
                v[key] = value
                g["velocity"] = v
            }
        }
        try check("groups: velocity bins 1...40 and 42...90 are not consecutive",
                  velocity("bins", [[1, 40], [42, 90], [91, 127]]))
        try check("groups: velocity bins 1...40 and 40...90 are not consecutive",
                  velocity("bins", [[1, 40], [40, 90], [91, 127]]))
        try check("groups: velocity bins[1] is [90, 41], expected [low, high]",
                  velocity("bins", [[1, 40], [90, 41], [91, 127]]))
        try check("groups: velocity bins[2] is [91], expected [low, high]",
                  velocity("bins", [[1, 40], [41, 90], [91]]))
        try check("groups: velocity bins must lie within 1...127",
                  velocity("bins", [[0, 40], [41, 90], [91, 127]]))
        try check("groups.velocity.bins[0] holds \"low\" (a string), expected whole numbers",
                  velocity("bins", [["low", 40], [41, 90], [91, 127]]))
        try check("groups: velocity histogram: 126 counts, expected 127 non-negative counts",
                  velocity("histogram", [Int](repeating: 1, count: 126)))
        try check("groups: velocity histogram: the count of velocity 1 is -1, expected a non-negative count",
                  velocity("histogram", [-1] + [Int](repeating: 1, count: 126)))
        try check("groups.velocity.histogram is \"many\" (a string), expected an array of whole numbers",
                  velocity("histogram", "many"))
        try check("missing key groups.velocity.histogram") { g in
            var v = g["velocity"] as? [String: Any] ?? [:]
            v.removeValue(forKey: "histogram")
            g["velocity"] = v
        }
        try check("groups: position encoding \"gray\" is not onehot or binary", position("encoding", "gray"))
        try check("groups.position.encoding is 2, expected a string", position("encoding", 2))
        try check("groups: position meter \"7/3\" is not N/D with D a power of two", position("meter", "7/3"))
        try check("groups: position meter \"four\" is not N/D with D a power of two", position("meter", "four"))
        try check("groups: position slots 0 outside 1...65536", position("slots", 0))
        try check("groups.position.slots is 12.5, expected a whole number", position("slots", 12.5))
        try check("groups.position.ticks_per_slot is missing") { g in
            var p = g["position"] as? [String: Any] ?? [:]
            p.removeValue(forKey: "ticks_per_slot")
            g["position"] = p
        }
        try check("groups.velocity is 3, expected {\"bins\": [[low, high], …], \"histogram\": [127 counts]}") { $0["velocity"] = 3 }
        try check("groups.inputs is missing or not an array") { $0.removeValue(forKey: "inputs") }
        // Version 2 lists its groups.
        var m = good
        m.removeValue(forKey: "groups")
        try JSONSerialization.data(withJSONObject: m).write(to: URL(fileURLWithPath: manifestPath))
        XCTAssertEqual(message(dir), manifestPath + ": missing key groups (format version 2 lists them)")
    }

    // MARK: Older manifests

    /// A version 1 model.json (no groups) loads as the original layout.
    func testVersion1ManifestLoadsAsTheOriginalLayout() throws {
        let (dir, w) = try write(ModelGroups(vocabulary: Self.vocabulary))
        try editManifest(dir) { $0["format_version"] = 1; $0.removeValue(forKey: "groups") }
        let m = try ModelDirectory.load(path: dir)
        XCTAssertEqual(m.formatVersion, 1)
        XCTAssertEqual(m.groups, ModelGroups(vocabulary: Self.vocabulary))
        XCTAssertTrue(m.groups.isOriginalLayout)
        XCTAssertEqual(m.shape, ModelShape(notes: 3, ticks: 4, hidden: 5))
        XCTAssertTrue(m.checksumsVerified)
        assertBitwiseEqual(m.weights, w)
        // "groups": null reads as absent too.
        try editManifest(dir) { $0["groups"] = NSNull() }
        XCTAssertEqual(try ModelDirectory.load(path: dir).groups, ModelGroups(vocabulary: Self.vocabulary))
    }
}
