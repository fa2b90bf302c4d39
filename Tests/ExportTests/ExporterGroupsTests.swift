// Export of grid models: a checkpoint with the grid's groups exports a model.json version 2
// holding the same groups, with Wx.bin and Wy.bin sized by them; the --swift file declares the
// groups and the grid's tables and typechecks; the frozen version 1 checkpoint exports the
// original layout.
import XCTest
import Foundation
import DrummerCore
@testable import Export
import Checkpoints
import ModelFiles
import Train

final class ExporterGroupsTests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws {
        tmp = FileManager.default.temporaryDirectory.appendingPathComponent("export-groups-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: tmp)
    }

    static let vocabulary = (try? Vocabulary(ixToNote: [36, 38, 42, 46], ixToTick: [0, 120, 240, 480, 960]))!

    /// A grid model's groups over `vocabulary`: 3 velocity bins over a small histogram, 4 offset
    /// bins, the velocity lookback one, two and four bars back.
    static func groups() throws -> ModelGroups {
        var histogram = [Int](repeating: 0, count: 127)
        for (v, n) in [(30, 4), (64, 9), (100, 6), (127, 2)] { histogram[v - 1] = n }
        let grid = try GridGroup(ppq: 480, velocity: try VelocityGroup(bins: [30...63, 64...99, 100...127], histogram: histogram),
                                 offsets: [-45, -15, 15, 45], notes: [36, 38, 42, 46, 45, 48, 50, 49, 51], offsetCoupling: 0.25,
                                 lookback: .velocities, lookbackBars: [1, 2, 4])
        return ModelGroups(vocabulary: vocabulary, grid: grid)
    }

    static func weights(_ shape: ModelShape, seed: UInt64 = 4) throws -> LSTMWeights {
        var rng = SeededRNG(seed: seed)
        return try LSTMWeights(shape: shape, wx: (0..<shape.wxCount).map { _ in Float(rng.normal()) },
                               wy: (0..<shape.wyCount).map { _ in Float(rng.normal()) })
    }

    /// A checkpoint of `groups` at hidden size 6 written to `name`; returns its path and weights.
    func checkpoint(_ groups: ModelGroups, _ name: String) throws -> (String, LSTMWeights) {
        let w = try Self.weights(groups.shape(hidden: 6))
        let ckpt = Checkpoint(
            configuration: RunConfiguration(hidden: 6), state: TrainingState(weights: w, unroll: 8, batch: 1, optimizer: .sgd),
            groups: groups, rngState: SeededRNG(seed: 1).stateWords, datasetPath: "data", datasetFingerprint: "",
            datasetEvents: 0, validationEvents: 0, smoothedLoss: 0, schedule: ScheduleProgress(),
            bestValidationLoss: .infinity, bestStep: -1, runID: Checkpoint.newRunID())
        let path = tmp.appendingPathComponent(name).path
        try ckpt.write(to: path)
        return (path, w)
    }

    func testGridCheckpointExportsItsGroups() throws {
        let g = try Self.groups()
        let grid = try XCTUnwrap(g.grid)
        let (path, w) = try checkpoint(g, "ckpt-grid.h5")
        let out = tmp.appendingPathComponent("model-grid").path
        let summary = try Exporter.export(checkpoint: path, to: out)
        XCTAssertEqual(summary.shape, g.shape(hidden: 6))
        let m = try ModelDirectory.load(path: out)
        XCTAssertEqual(m.groups, try Checkpoint.read(path: path).groups)
        XCTAssertEqual(m.groups, g)
        XCTAssertEqual(m.formatVersion, 2)
        XCTAssertTrue(m.checksumsVerified)
        XCTAssertEqual(m.weights.wx.map(\.bitPattern), w.wx.map(\.bitPattern))
        XCTAssertEqual(m.weights.wy.map(\.bitPattern), w.wy.map(\.bitPattern))
        // Sizes from the groups, summed here from the grid's definition: 513 hit sets, 9 × (3 + 1)
        // velocities, 9 × (8 + 1) offsets, 16 positions, 8 phrase bars, 27 × (3 + 2) lookbacks, 2 × 2
        // repeats; outputs 512 + 9 × 3 + 9 × 8.
        let inputWidth = 513 + 36 + 81 + 16 + 8 + 135 + 4, outputWidth = 512 + 27 + 72
        XCTAssertEqual(grid.inputGroups.reduce(0, +), inputWidth)
        let wx = try Data(contentsOf: URL(fileURLWithPath: out + "/Wx.bin"))
        let wy = try Data(contentsOf: URL(fileURLWithPath: out + "/Wy.bin"))
        XCTAssertEqual(wx.count, (inputWidth + 6 + 1) * 24 * 4)
        XCTAssertEqual(wy.count, 7 * outputWidth * 4)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: out + "/model.json"))) as? [String: Any])
        XCTAssertEqual(json["format_version"] as? Int, 2)
        XCTAssertEqual(json["Wx_shape"] as? [Int], [inputWidth + 7, 24])
        XCTAssertEqual(json["Wy_shape"] as? [Int], [7, outputWidth])
        let groups = try XCTUnwrap(json["groups"] as? [String: Any])
        XCTAssertEqual((groups["inputs"] as? [[String: Any]])?.compactMap { $0["name"] as? String }, grid.inputNames)
        let table = try XCTUnwrap(groups["grid"] as? [String: Any])
        XCTAssertEqual((table["velocity"] as? [String: Any])?["bins"] as? [[Int]], [[30, 63], [64, 99], [100, 127]])
        XCTAssertEqual(table["lookback_bars"] as? [Int], [1, 2, 4])
    }

    /// The frozen version 1 checkpoint of TrainTests (before groups) exports the original layout.
    func testVersion1CheckpointExportsTheOriginalLayout() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("TrainTests/Fixtures/v1-checkpoint/ckpt-3.h5")
        let out = tmp.appendingPathComponent("v1").path
        let summary = try Exporter.export(checkpoint: fixture.path, to: out)
        XCTAssertEqual(summary.shape, ModelShape(notes: 4, ticks: 5, hidden: 4))
        let m = try ModelDirectory.load(path: out)
        XCTAssertEqual(m.groups, ModelGroups(vocabulary: try Vocabulary(ixToNote: [36, 38, 42, 46], ixToTick: [0, 12, 24, 48, 96])))
        XCTAssertEqual(m.metadata["checkpoint_format_version"], "1")
        let json = try XCTUnwrap(JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: out + "/model.json"))) as? [String: Any])
        let groups = try XCTUnwrap(json["groups"] as? [String: Any])
        XCTAssertEqual(Set(groups.keys), ["inputs", "outputs"])
        XCTAssertEqual((groups["outputs"] as? [[String: Any]])?.compactMap { $0["size"] as? Int }, [4, 5])
    }

    /// `vel...vel` ranges of `let name: [ClosedRange<Int>] = [...]` in the generated text.
    static func ranges(named name: String, in text: String) -> [ClosedRange<Int>]? {
        guard let start = text.range(of: "let \(name): [ClosedRange<Int>] = ["),
              let end = text[start.upperBound...].firstIndex(of: "]") else { return nil }
        return text[start.upperBound..<end].split(separator: ",").compactMap { item in
            let bounds = item.trimmingCharacters(in: .whitespaces).components(separatedBy: "...")
            guard bounds.count == 2, let lo = Int(bounds[0]), let hi = Int(bounds[1]) else { return nil }
            return lo...hi
        }
    }

    func testSwiftFileDeclaresGroupsAndTablesAndTypechecks() throws {
        let g = try Self.groups()
        let grid = try XCTUnwrap(g.grid)
        let w = try Self.weights(g.shape(hidden: 6))
        let swiftFile = tmp.appendingPathComponent("GrooveModel.swift").path
        _ = try Exporter.export(weights: w, groups: g, step: 9, metadata: [:],
                                to: tmp.appendingPathComponent("m-grid").path, swiftFile: swiftFile)
        let text = try String(contentsOfFile: swiftFile, encoding: .utf8)
        for line in ["public static let inputGroupSizes: [Int] = \(grid.inputGroups)",
                     "public static let outputGroupSizes: [Int] = \(grid.outputGroups)",
                     "public static let wxRows = \(g.shape(hidden: 6).wxRows)",
                     "public static let wyCols = \(grid.outputGroups.reduce(0, +))",
                     "public static let gridLookback = \"velocities\"",
                     "public static let gridLookbackBars = [1, 2, 4]",
                     "public static let gridPPQ = 480",
                     "public static let gridVelocityBins: [ClosedRange<Int>] = [30...63, 64...99, 100...127]",
                     "public static let gridOffsets: [Int] = [-45, -15, 15, 45]",
                     "public static let gridOffsetCoupling = 0.25",
                     // The vocabulary's counts, which the grid's input groups do not hold (its first
                     // group is the hit set's 513 classes).
                     "public static let noteCount = \(g.vocabulary.ixToNote.count)",
                     "public static let tickCount = \(g.vocabulary.ixToTick.count)"] {
            XCTAssertTrue(text.contains(line), "the Swift file lacks \(line)")
        }
        XCTAssertEqual(Self.ranges(named: "gridVelocityBins", in: text), grid.velocity.bins)
        XCTAssertEqual(ExporterTests.intArray(named: "gridVelocityHistogram", in: text), grid.velocity.histogram)

        guard let swiftc = ExporterTests.findExecutable("swiftc") else { throw XCTSkip("swiftc not on PATH") }
        // A client using the grid's constants with their expected types, checking the tables agree.
        let client = tmp.appendingPathComponent("main.swift")
        try """
            let inputs: [String] = GrooveModel.inputGroups
            let inputSizes: [Int] = GrooveModel.inputGroupSizes
            let outputs: [String] = GrooveModel.outputGroups
            let outputSizes: [Int] = GrooveModel.outputGroupSizes
            let lookback: String = GrooveModel.gridLookback
            let bars: [Int] = GrooveModel.gridLookbackBars
            let bins: [ClosedRange<Int>] = GrooveModel.gridVelocityBins
            let histogram: [Int] = GrooveModel.gridVelocityHistogram
            let offsets: [Int] = GrooveModel.gridOffsets
            let counts: [[Int]] = GrooveModel.gridNoteCounts
            assert(inputs.count == inputSizes.count && outputs.count == outputSizes.count)
            assert(outputSizes.reduce(0, +) == GrooveModel.wyCols && outputSizes[1] == bins.count)
            assert(histogram.count == 127 && counts.count == 9 && offsets.count * 2 == outputSizes.last)
            assert(GrooveModel.ixToNote.count == GrooveModel.noteCount && GrooveModel.ixToTick.count == GrooveModel.tickCount)
            print(lookback, bars, GrooveModel.gridPPQ, GrooveModel.gridOffsetCoupling)
            """.write(to: client, atomically: true, encoding: .utf8)
        try ExporterTests.assertTypechecks(swiftc: swiftc, [swiftFile, client.path])
    }

    /// The original layout's Swift file lists just note and tick, and none of the group tables.
    func testOriginalLayoutSwiftFileHasNoGroupTables() throws {
        let g = ModelGroups(vocabulary: Self.vocabulary)
        let swiftFile = tmp.appendingPathComponent("Plain.swift").path
        _ = try Exporter.export(weights: try Self.weights(g.shape(hidden: 6)), groups: g, step: 1, metadata: [:],
                                to: tmp.appendingPathComponent("plain").path, swiftFile: swiftFile)
        let text = try String(contentsOfFile: swiftFile, encoding: .utf8)
        XCTAssertTrue(text.contains(#"public static let inputGroups: [String] = ["note", "tick"]"#), text)
        XCTAssertTrue(text.contains("public static let inputGroupSizes: [Int] = [4, 5]"), text)
        XCTAssertTrue(text.contains("public static let vocabularySize = 9"), text)
        for name in ["gridLookback", "gridPPQ", "gridVelocityBins", "gridVelocityHistogram", "gridOffsets"] {
            XCTAssertFalse(text.contains("static let \(name)"), name)
        }
    }
}
