// Export of groove models: a checkpoint with position and velocity groups exports a model.json
// version 2 holding the same groups, with Wx.bin and Wy.bin sized by them; the --swift file
// declares the groups and their tables and typechecks; the frozen version 1 checkpoint exports
// the original layout.
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

    /// Groups with a position group of 16 slots of 120 ticks (4/4 at 480 PPQ) in `encoding`
    /// and 3 velocity bins over a small histogram.
    static func groups(_ encoding: PositionEncoding) throws -> ModelGroups {
        var histogram = [Int](repeating: 0, count: 127)
        for (v, n) in [(30, 4), (64, 9), (100, 6), (127, 2)] { histogram[v - 1] = n }
        return ModelGroups(vocabulary: vocabulary,
                           position: PositionGroup(encoding: encoding, slots: 16, ticksPerSlot: 120, ppq: 480, meter: .common),
                           velocity: try VelocityGroup(bins: [30...63, 64...99, 100...127], histogram: histogram))
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

    func testGrooveCheckpointExportsItsGroups() throws {
        for encoding in PositionEncoding.allCases {
            let g = try Self.groups(encoding)
            let (path, w) = try checkpoint(g, "ckpt-\(encoding.rawValue).h5")
            let out = tmp.appendingPathComponent("model-\(encoding.rawValue)").path
            let summary = try Exporter.export(checkpoint: path, to: out)
            XCTAssertEqual(summary.shape, g.shape(hidden: 6))
            let m = try ModelDirectory.load(path: out)
            XCTAssertEqual(m.groups, try Checkpoint.read(path: path).groups)
            XCTAssertEqual(m.groups, g)
            XCTAssertEqual(m.formatVersion, 2)
            XCTAssertTrue(m.checksumsVerified)
            XCTAssertEqual(m.weights.wx.map(\.bitPattern), w.wx.map(\.bitPattern))
            XCTAssertEqual(m.weights.wy.map(\.bitPattern), w.wy.map(\.bitPattern))
            // Sizes from the groups: one-hot inputs 4 + 5 + 16 + 3, binary 4 + 5 + 4·2 + 3; outputs 4 + 5 + 3.
            let inputWidth = encoding == .oneHot ? 28 : 20
            let wx = try Data(contentsOf: URL(fileURLWithPath: out + "/Wx.bin"))
            let wy = try Data(contentsOf: URL(fileURLWithPath: out + "/Wy.bin"))
            XCTAssertEqual(wx.count, (inputWidth + 6 + 1) * 24 * 4, encoding.rawValue)
            XCTAssertEqual(wy.count, 7 * 12 * 4, encoding.rawValue)
            let json = try XCTUnwrap(JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: out + "/model.json"))) as? [String: Any])
            XCTAssertEqual(json["format_version"] as? Int, 2)
            XCTAssertEqual(json["Wx_shape"] as? [Int], [inputWidth + 7, 24])
            XCTAssertEqual(json["Wy_shape"] as? [Int], [7, 12])
            let groups = try XCTUnwrap(json["groups"] as? [String: Any])
            XCTAssertEqual((groups["inputs"] as? [[String: Any]])?.compactMap { $0["name"] as? String },
                           encoding == .oneHot ? ["note", "tick", "position", "velocity"]
                               : ["note", "tick", "position_bit0", "position_bit1", "position_bit2", "position_bit3", "velocity"])
            XCTAssertEqual((groups["velocity"] as? [String: Any])?["bins"] as? [[Int]], [[30, 63], [64, 99], [100, 127]])
            XCTAssertEqual((groups["position"] as? [String: Any])?["encoding"] as? String, encoding.rawValue)
        }
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
        for encoding in PositionEncoding.allCases {
            let g = try Self.groups(encoding)
            let w = try Self.weights(g.shape(hidden: 6))
            let swiftFile = tmp.appendingPathComponent("GrooveModel.swift").path
            _ = try Exporter.export(weights: w, groups: g, step: 9, metadata: [:],
                                    to: tmp.appendingPathComponent("m-\(encoding.rawValue)").path, swiftFile: swiftFile)
            let text = try String(contentsOfFile: swiftFile, encoding: .utf8)
            let inputs = encoding == .oneHot
                ? #"["note", "tick", "position", "velocity"]"#
                : #"["note", "tick", "position_bit0", "position_bit1", "position_bit2", "position_bit3", "velocity"]"#
            let sizes = encoding == .oneHot ? "[4, 5, 16, 3]" : "[4, 5, 2, 2, 2, 2, 3]"
            for line in ["public static let inputGroups: [String] = \(inputs)",
                         "public static let inputGroupSizes: [Int] = \(sizes)",
                         #"public static let outputGroups: [String] = ["note", "tick", "velocity"]"#,
                         "public static let outputGroupSizes: [Int] = [4, 5, 3]",
                         "public static let vocabularySize = \(encoding == .oneHot ? 28 : 20)",
                         "public static let wxRows = \(g.shape(hidden: 6).wxRows)",
                         "public static let wyCols = 12",
                         "public static let positionEncoding = \"\(encoding.rawValue)\"",
                         "public static let positionSlots = 16",
                         "public static let ticksPerSlot = 120",
                         "public static let positionPPQ = 480",
                         "public static let meter = (4, 4)",
                         "public static let velocityBins: [ClosedRange<Int>] = [30...63, 64...99, 100...127]"] {
                XCTAssertTrue(text.contains(line), "\(encoding.rawValue): the Swift file lacks \(line)")
            }
            XCTAssertEqual(Self.ranges(named: "velocityBins", in: text), g.velocity?.bins)
            XCTAssertEqual(ExporterTests.intArray(named: "velocityHistogram", in: text), g.velocity?.histogram)
            XCTAssertEqual(ExporterTests.intArray(named: "ixToTick", in: text), Self.vocabulary.ixToTick)

            guard let swiftc = ExporterTests.findExecutable("swiftc") else { throw XCTSkip("swiftc not on PATH") }
            // A client using every group constant with its expected type, checking the tables agree.
            let client = tmp.appendingPathComponent("main.swift")
            try """
                let inputs: [String] = GrooveModel.inputGroups
                let inputSizes: [Int] = GrooveModel.inputGroupSizes
                let outputs: [String] = GrooveModel.outputGroups
                let outputSizes: [Int] = GrooveModel.outputGroupSizes
                let encoding: String = GrooveModel.positionEncoding
                let slots: Int = GrooveModel.positionSlots
                let grid: Int = GrooveModel.ticksPerSlot * GrooveModel.positionPPQ
                let meter: (Int, Int) = GrooveModel.meter
                let bins: [ClosedRange<Int>] = GrooveModel.velocityBins
                let histogram: [Int] = GrooveModel.velocityHistogram
                assert(inputs.count == inputSizes.count && outputs.count == outputSizes.count)
                assert(inputSizes.reduce(0, +) == GrooveModel.vocabularySize)
                assert(outputSizes.reduce(0, +) == GrooveModel.wyCols && outputSizes.last == bins.count)
                assert(histogram.count == 127)
                print(encoding, slots, grid, meter, GrooveModel.noteCount, GrooveModel.tickCount)
                """.write(to: client, atomically: true, encoding: .utf8)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: swiftc)
            p.arguments = ["-typecheck", swiftFile, client.path]
            let err = Pipe()
            p.standardError = err
            try p.run()
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0, message)
            XCTAssertEqual(message, "", "the generated file must compile without warnings")
        }
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
        for name in ["positionEncoding", "positionSlots", "velocityBins", "velocityHistogram", "meter"] {
            XCTAssertFalse(text.contains("static let \(name)"), name)
        }
    }
}
