// model.json format version 2: the "groups" section of a grid model (its velocity bins and
// histogram, offsets, notes, lookback and styles) round-trips with its weights; groups that
// disagree with the .bin files, or are malformed, are refused naming the file and the key; the
// event layout's keys are refused saying so; version 1 files load as the original layout.
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

    /// A grid model's groups over `vocabulary`: 3 velocity bins, 4 offset bins, the velocity
    /// lookback one and two bars back, two styles.
    static func groups() throws -> ModelGroups {
        let styles = try GridStyles(rule: .folders, names: ["rock", "other"], steps: [30, 12])
        let grid = try GridGroup(ppq: 480, velocity: try velocityGroup(), offsets: [-45, -15, 15, 45],
                                 notes: [36, 38, 42, 46, 45, 48, 50, 49, 51], offsetCoupling: 0.5, lookback: .velocities,
                                 lookbackBars: [1, 2], styles: styles)
        return ModelGroups(vocabulary: vocabulary, grid: grid)
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

    func testGridRoundTrip() throws {
        let g = try Self.groups()
        let (dir, w) = try write(g)
        let m = try ModelDirectory.load(path: dir)
        XCTAssertEqual(m.groups, g)
        XCTAssertEqual(m.formatVersion, 2)
        XCTAssertTrue(m.checksumsVerified)
        assertBitwiseEqual(m.weights, w)
        let grid = try XCTUnwrap(g.grid)
        XCTAssertEqual(m.shape, ModelShape(inputGroups: grid.inputGroups, outputGroups: grid.outputGroups, hidden: 5,
                                           targetColumns: grid.targetInputs, lossGroups: grid.outputGroups.count))

        // The file as a reader sees it: shapes, and the groups section key by key.
        let json = try manifest(dir)
        XCTAssertEqual(json["Wx_shape"] as? [Int], [grid.inputGroups.reduce(0, +) + 5 + 1, 20])
        XCTAssertEqual(json["Wy_shape"] as? [Int], [6, grid.outputGroups.reduce(0, +)])
        let groups = try XCTUnwrap(json["groups"] as? [String: Any])
        XCTAssertEqual(Set(groups.keys), ["inputs", "outputs", "grid"])
        let inputs = try XCTUnwrap(groups["inputs"] as? [[String: Any]])
        XCTAssertEqual(inputs.map { $0["name"] as? String }, grid.inputNames)
        XCTAssertEqual(inputs.map { $0["size"] as? Int }, grid.inputGroups)
        // 513 hit sets, 9 velocity groups of 3 bins + not hit, 9 offset groups of 8 + not hit,
        // position 16, phrase 8, 18 lookback groups of 3 + 2, repeats, 2 styles.
        XCTAssertEqual(grid.inputGroups, [513] + [Int](repeating: 4, count: 9) + [Int](repeating: 9, count: 9) + [16, 8]
                       + [Int](repeating: 5, count: 18) + [2, 2, 2])
        let table = try XCTUnwrap(groups["grid"] as? [String: Any])
        XCTAssertEqual(table["ppq"] as? Int, 480)
        XCTAssertEqual(table["offsets"] as? [Int], [-45, -15, 15, 45])
        XCTAssertEqual(table["lookback"] as? String, "velocities")
        XCTAssertNil(table["lookback_bars"], "one and two bars back are not written")
        let velocity = try XCTUnwrap(table["velocity"] as? [String: Any])
        XCTAssertEqual(velocity["bins"] as? [[Int]], [[1, 40], [41, 90], [91, 127]])
        XCTAssertEqual((velocity["histogram"] as? [Int])?.reduce(0, +), 29)
        XCTAssertEqual((table["styles"] as? [String: Any])?["names"] as? [String], ["rock", "other"])

        // Writing the loaded model again reproduces all three files byte for byte.
        let again = tmp.appendingPathComponent("again").path
        try ModelDirectory.write(weights: m.weights, groups: m.groups, to: again, metadata: m.metadata)
        for name in ["Wx.bin", "Wy.bin", "model.json"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: again + "/" + name)),
                           try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name)), name)
        }
    }

    /// The original layout's groups section lists just its inputs and outputs.
    func testOriginalLayoutRoundTrip() throws {
        let o = ModelGroups(vocabulary: Self.vocabulary)
        let (odir, _) = try write(o, "original")
        let m = try ModelDirectory.load(path: odir)
        XCTAssertEqual(m.groups, o)
        XCTAssertTrue(m.groups.isOriginalLayout)
        let groups = try XCTUnwrap(try manifest(odir)["groups"] as? [String: Any])
        XCTAssertEqual(Set(groups.keys), ["inputs", "outputs"])
    }

    // MARK: Groups that disagree with the weights

    /// model.json's grid says 5 offset bins; Wx.bin and Wy.bin hold the rows and columns of 4.
    func testGroupsThatDisagreeWithTheBinFilesAreRefused() throws {
        let (dir, _) = try write(try Self.groups())
        let manifestPath = dir + "/model.json"
        let wide = try ModelDirectory.load(path: dir).groups.grid!
        var five = wide
        five.offsets = [-48, -24, 0, 24, 48]
        let fiveShape = ModelGroups(vocabulary: Self.vocabulary, grid: five).shape(hidden: 5)
        try editGroups(dir) { g in
            var t = g["grid"] as? [String: Any] ?? [:]
            t["offsets"] = five.offsets
            g["grid"] = t
            g["inputs"] = zip(five.inputNames, five.inputGroups).map { ["name": $0, "size": $1] }
            g["outputs"] = zip(five.outputNames, five.outputGroups).map { ["name": $0, "size": $1] }
        }
        // Wx_shape still says 4 bins' rows: the key that disagrees with the groups is named.
        let rows = wide.inputGroups.reduce(0, +) + 6
        XCTAssertEqual(message(dir), "\(manifestPath): Wx_shape is [\(rows), 20] but the vocabulary, groups and hidden_size "
                       + "give [\(fiveShape.wxRows), 20]")
        // With the shapes matching the groups, Wx.bin's size is what disagrees.
        try editManifest(dir) { $0["Wx_shape"] = [fiveShape.wxRows, 20]; $0["Wy_shape"] = [6, fiveShape.wyCols] }
        XCTAssertTrue(message(dir).hasPrefix("\(dir)/Wx.bin: \(rows * 20 * 4) bytes, expected \(fiveShape.wxRows * 20 * 4) "
                                             + "(\(fiveShape.wxRows) × 20 float32) for model.json's groups: inputs hits 513,"),
                      message(dir))
    }

    /// The listed inputs/outputs must be what the tables give.
    func testListedGroupSizesMustMatchTheTables() throws {
        let (dir, _) = try write(try Self.groups())
        let manifestPath = dir + "/model.json"
        try editGroups(dir) { g in
            var inputs = g["inputs"] as? [[String: Any]] ?? []
            inputs[0]["size"] = 500
            g["inputs"] = inputs
        }
        XCTAssertTrue(message(dir).hasPrefix("\(manifestPath): groups: inputs [hits 500, velocity_kick 4,"), message(dir))
        XCTAssertTrue(message(dir).contains("] do not match the vocabulary and tables, which give [hits 513, velocity_kick 4,"), message(dir))
    }

    // MARK: Malformed groups

    func testMalformedGroupsAreRefusedNamingTheKey() throws {
        let (dir, _) = try write(try Self.groups())
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
        func grid(_ key: String, _ value: Any) -> (inout [String: Any]) -> Void {
            { g in
                var t = g["grid"] as? [String: Any] ?? [:]
                t[key] = value
                g["grid"] = t
            }
        }
        func velocity(_ key: String, _ value: Any) -> (inout [String: Any]) -> Void {
            { g in
                var t = g["grid"] as? [String: Any] ?? [:]
                var v = t["velocity"] as? [String: Any] ?? [:]
                v[key] = value
                t["velocity"] = v
                g["grid"] = t
            }
        }
        try check("groups: velocity bins 1...40 and 42...90 are not consecutive",
                  velocity("bins", [[1, 40], [42, 90], [91, 127]]))
        try check("groups: grid.velocity bins[1] is [90, 41], expected [low, high]",
                  velocity("bins", [[1, 40], [90, 41], [91, 127]]))
        try check("groups: velocity bins must lie within 1...127",
                  velocity("bins", [[0, 40], [41, 90], [91, 127]]))
        try check("groups: velocity histogram: 126 counts, expected 127 non-negative counts",
                  velocity("histogram", [Int](repeating: 1, count: 126)))
        try check("groups.grid.velocity.histogram is \"many\" (a string), expected an array of whole numbers",
                  velocity("histogram", "many"))
        // Counts the sampler's draws add up: at most 2^31 − 1 each, as a checkpoint holds them.
        try check("groups: velocity histogram: the count of velocity 1 is 4611686018427387904, expected a count 0...2147483647",
                  velocity("histogram", [Int](repeating: 1 << 62, count: 127)))
        try check("groups: grid.styles: grid styles: expected 2 step counts 0...2147483647, not all 0") { g in
            var t = g["grid"] as? [String: Any] ?? [:]
            var styles = t["styles"] as? [String: Any] ?? [:]
            styles["steps"] = [1 << 62, 1 << 62]
            t["styles"] = styles
            g["grid"] = t
        }
        try check("groups: grid.lookback \"sideways\" is not one of hit-sets, classes, velocities", grid("lookback", "sideways"))
        // An offset past the 16th (the bins clamp, so the last bin's check alone would pass it).
        try check("groups: grid offset 1000000000000 of bin 3 lies outside that bin", grid("offsets", [-45, -15, 15, 1_000_000_000_000]))
        try check("groups: grid offset -9223372036854775807 of bin 0 lies outside that bin", grid("offsets", [-Int.max, -15, 15, 45]))
        // A note is one class's: two classes writing one note would read back as one.
        try check("groups: grid notes: note 38 is the note of both snare and tom_low", grid("notes", [36, 38, 42, 46, 38, 48, 50, 49, 51]))
        try check("groups: grid note counts: note 40 is counted for both kick and snare") { g in
            var t = g["grid"] as? [String: Any] ?? [:]
            var counts = (t["note_counts"] as? [[Int]]) ?? []
            counts[0][40] = 3
            counts[1][40] = 5
            t["note_counts"] = counts
            g["grid"] = t
        }
        try check("missing key groups.grid.ppq") { g in
            var t = g["grid"] as? [String: Any] ?? [:]
            t.removeValue(forKey: "ppq")
            g["grid"] = t
        }
        try check("groups.grid is 3, expected an object") { $0["grid"] = 3 }
        try check("groups.inputs is missing or not an array") { $0.removeValue(forKey: "inputs") }
        // Version 2 lists its groups.
        var m = good
        m.removeValue(forKey: "groups")
        try JSONSerialization.data(withJSONObject: m).write(to: URL(fileURLWithPath: manifestPath))
        XCTAssertEqual(message(dir), manifestPath + ": missing key groups (format version 2 lists them)")
    }

    /// A model.json of the event layout (its "position", "lookback" or "velocity" groups) is
    /// refused saying so, whatever the rest holds.
    func testEventLayoutGroupsAreRefusedSayingSo() throws {
        let (dir, _) = try write(ModelGroups(vocabulary: Self.vocabulary))
        for key in ["position", "lookback", "velocity"] {
            try editGroups(dir) { g in
                for k in ["position", "lookback", "velocity"] { g.removeValue(forKey: k) }
                g[key] = ["slots": 16]
            }
            XCTAssertEqual(message(dir), dir + "/model.json: groups.\(key): a model of the event layout, which drummer no "
                           + "longer plays (docs/research.md, The event layout); models of the 2017 layout and of the grid play")
        }
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
