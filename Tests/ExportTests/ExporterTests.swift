import XCTest
import Foundation
import DrummerCore
@testable import Export
import Checkpoints
import ModelFiles
import Train

final class ExporterTests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws {
        tmp = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: tmp)
    }

    private func model() throws -> (LSTMWeights, Vocabulary) {
        let vocab = try Vocabulary(ixToNote: [35, 36, 38, 42, 46, 49, 51],
                                   ixToTick: Array(stride(from: 0, through: 480, by: 15)) + [960])
        let shape = vocab.shape(hidden: 6)
        var rng = SeededRNG(seed: 2)
        return (try LSTMWeights(shape: shape, wx: (0..<shape.wxCount).map { _ in Float(rng.normal()) },
                                wy: (0..<shape.wyCount).map { _ in Float(rng.normal()) }), vocab)
    }

    func testExportWritesALoadableModelDirectoryWithMetadata() throws {
        let (w, v) = try model()
        let dir = tmp.appendingPathComponent("model").path
        let summary = try Exporter.export(weights: w, vocabulary: v, step: 1234,
                                          metadata: ["loss": "1.25", "data": "groove"], to: dir)
        XCTAssertEqual(summary.shape, w.shape)
        XCTAssertNil(summary.swiftFile)
        let loaded = try ModelDirectory.load(path: dir)
        XCTAssertEqual(loaded.weights, w)
        XCTAssertEqual(loaded.vocabulary, v)
        XCTAssertTrue(loaded.checksumsVerified)
        XCTAssertEqual(loaded.metadata["step"], "1234")
        XCTAssertEqual(loaded.metadata["loss"], "1.25")
        XCTAssertEqual(loaded.metadata["data"], "groove")
        XCTAssertEqual(loaded.metadata["exported_by"], "drummer \(DrummerVersion.string)")
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: dir)),
                       ["Wx.bin", "Wy.bin", "model.json"])
        // Exporting twice gives identical files (no timestamps).
        let dir2 = tmp.appendingPathComponent("again").path
        _ = try Exporter.export(weights: w, vocabulary: v, step: 1234,
                                metadata: ["loss": "1.25", "data": "groove"], to: dir2)
        for f in ["Wx.bin", "Wy.bin", "model.json"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir + "/" + f)),
                           try Data(contentsOf: URL(fileURLWithPath: dir2 + "/" + f)), f)
        }
    }

    /// The original's pretrained weights export byte-identical Wx.bin and Wy.bin.
    func testOriginalWeightsExportIdenticalFiles() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/Fixtures/rnn-drummer").standardizedFileURL
        guard FileManager.default.fileExists(atPath: fixtures.appendingPathComponent("Wx.bin").path) else {
            throw VendoredFixtureMissing()
        }
        let src = tmp.appendingPathComponent("src")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        for (a, b) in [("Wx.bin", "Wx.bin"), ("Wy.bin", "Wy.bin"), ("vocab.json", "model.json")] {
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent(a),
                                             to: src.appendingPathComponent(b))
        }
        let original = try ModelDirectory.load(path: src.path)
        let out = tmp.appendingPathComponent("out").path
        _ = try Exporter.export(weights: original.weights, vocabulary: original.vocabulary, step: 0,
                                metadata: [:], to: out)
        for f in ["Wx.bin", "Wy.bin"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out + "/" + f)),
                           try Data(contentsOf: fixtures.appendingPathComponent(f)), f)
        }
        // model.json keeps the original vocab.json's keys and values.
        let a = try XCTUnwrap(JSONSerialization.jsonObject(
            with: Data(contentsOf: fixtures.appendingPathComponent("vocab.json"))) as? [String: Any])
        let b = try XCTUnwrap(JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: out + "/model.json"))) as? [String: Any])
        for key in ["ix_to_note", "ix_to_tick", "hidden_size", "Wx_shape", "Wy_shape", "gate_order"] {
            XCTAssertEqual(a[key].map { "\($0)" }, b[key].map { "\($0)" }, key)
        }
        // Format version 2 lists the original layout's two groups, and nothing else.
        XCTAssertEqual(b["format_version"] as? Int, 2)
        let groups = try XCTUnwrap(b["groups"] as? [String: Any])
        XCTAssertEqual(Set(groups.keys), ["inputs", "outputs"])
        XCTAssertEqual((groups["inputs"] as? [[String: Any]])?.compactMap { $0["size"] as? Int }, [17, 209])
        XCTAssertEqual(try ModelDirectory.load(path: out).groups, original.groups)
        XCTAssertTrue(original.groups.isOriginalLayout)
    }

    func testExportOfTrainedModelKeepsItsMetadata() throws {
        let (w, v) = try model()
        let trained = TrainedModel(weights: w, groups: ModelGroups(vocabulary: v), step: 500, metadata: [
            "format": "drummer-checkpoint", "format_version": "1", "optimizer": "sgd", "seed": "42"])
        let dir = tmp.appendingPathComponent("trained").path
        let summary = try Exporter.export(model: trained, to: dir)
        XCTAssertEqual(summary.step, 500)
        let loaded = try ModelDirectory.load(path: dir)
        XCTAssertEqual(loaded.weights, w)
        XCTAssertEqual(loaded.metadata["checkpoint_format"], "drummer-checkpoint")
        XCTAssertEqual(loaded.metadata["checkpoint_format_version"], "1")
        XCTAssertEqual(loaded.metadata["optimizer"], "sgd")
        XCTAssertEqual(loaded.metadata["step"], "500")
        XCTAssertNil(loaded.metadata["format"])
        XCTAssertEqual(loaded.formatVersion, 2, "a one-layer model is written as version 2")
    }

    /// A step-0 checkpoint holding the original's weights (what a run of the original weights starts
    /// from) exports Wx.bin and Wy.bin identical to the original files, through HDF5.
    func testStepZeroCheckpointOfOriginalWeightsExportsIdenticalFiles() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/Fixtures/rnn-drummer").standardizedFileURL
        guard FileManager.default.fileExists(atPath: fixtures.appendingPathComponent("Wx.bin").path) else {
            throw VendoredFixtureMissing()
        }
        let src = tmp.appendingPathComponent("src")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        for (a, b) in [("Wx.bin", "Wx.bin"), ("Wy.bin", "Wy.bin"), ("vocab.json", "model.json")] {
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent(a), to: src.appendingPathComponent(b))
        }
        let original = try ModelDirectory.load(path: src.path)
        let state = TrainingState(weights: original.weights, unroll: 8, batch: 1, optimizer: .sgd)
        let ckpt = Checkpoint(
            configuration: RunConfiguration(hidden: 200), state: state,
            groups: original.groups, rngState: SeededRNG(seed: 1).stateWords,
            datasetPath: "data", datasetFingerprint: "", datasetEvents: 0, validationEvents: 0,
            smoothedLoss: 0, schedule: ScheduleProgress(), bestValidationLoss: .infinity, bestStep: -1,
            runID: Checkpoint.newRunID())
        let path = tmp.appendingPathComponent("ckpt-0.h5").path
        try ckpt.write(to: path)
        let out = tmp.appendingPathComponent("exported").path
        let summary = try Exporter.export(checkpoint: path, to: out)
        XCTAssertEqual(summary.step, 0)
        for f in ["Wx.bin", "Wy.bin"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out + "/" + f)),
                           try Data(contentsOf: fixtures.appendingPathComponent(f)), f)
        }
        let m = try ModelDirectory.load(path: out)
        XCTAssertTrue(m.groups.isOriginalLayout)
        XCTAssertEqual(m.metadata["checkpoint_format"], "drummer-checkpoint")
    }

    func testTypeNameFromFileName() {
        XCTAssertEqual(SwiftConstants.typeName(forFile: "app/DrumModel.swift"), "DrumModel")
        XCTAssertEqual(SwiftConstants.typeName(forFile: "_m2.swift"), "_m2")
        XCTAssertEqual(SwiftConstants.typeName(forFile: "2fast.swift"), "DrummerModel")
        XCTAssertEqual(SwiftConstants.typeName(forFile: "my-model.swift"), "DrummerModel")
        XCTAssertEqual(SwiftConstants.typeName(forFile: "class.swift"), "DrummerModel")
        XCTAssertEqual(SwiftConstants.typeName(forFile: "Modèle.swift"), "DrummerModel")
    }

    func testSwiftFileDeclaresTablesAndTypechecks() throws {
        let (w, v) = try model()
        let swiftFile = tmp.appendingPathComponent("DrumModel.swift").path
        let summary = try Exporter.export(weights: w, vocabulary: v, step: 7, metadata: [:],
                                          to: tmp.appendingPathComponent("m").path, swiftFile: swiftFile)
        XCTAssertEqual(summary.swiftFile, swiftFile)
        let text = try String(contentsOfFile: swiftFile, encoding: .utf8)
        XCTAssertTrue(text.contains("public enum DrumModel {"))
        XCTAssertTrue(text.contains("public static let hiddenSize = 6"))
        XCTAssertTrue(text.contains("public static let wxRows = \(w.shape.wxRows)"))
        XCTAssertTrue(text.contains("        35, 36, 38, 42, 46, 49, 51,\n"))

        guard let swiftc = Self.findExecutable("swiftc") else { throw XCTSkip("swiftc not on PATH") }
        // A client file that uses every constant with its expected type: type-checked, not run
        // (the types are the check; the tables' values are parsed back below).
        let client = tmp.appendingPathComponent("main.swift")
        try """
            let sizes: [Int] = [DrumModel.noteCount, DrumModel.tickCount, DrumModel.vocabularySize,
                                DrumModel.hiddenSize, DrumModel.wxRows, DrumModel.wxCols,
                                DrumModel.wyRows, DrumModel.wyCols]
            let notes: [Int] = DrumModel.ixToNote
            let ticks: [Int] = DrumModel.ixToTick
            let gates: [String] = DrumModel.gateOrder
            assert(notes.count == DrumModel.noteCount && ticks.count == DrumModel.tickCount)
            print(sizes, gates)
            """.write(to: client, atomically: true, encoding: .utf8)
        try ExporterTests.assertTypechecks(swiftc: swiftc, [swiftFile, client.path])
        // The tables parse back to the vocabulary.
        XCTAssertEqual(Self.intArray(named: "ixToTick", in: text), v.ixToTick)
        XCTAssertEqual(Self.intArray(named: "ixToNote", in: text), v.ixToNote)
    }

    func testExportFailureLeavesNoDirectory() throws {
        var (w, v) = try model()
        w.wx[3] = .infinity
        let dir = tmp.appendingPathComponent("bad").path
        XCTAssertThrowsError(try Exporter.export(weights: w, vocabulary: v, step: 1, metadata: [:], to: dir))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir))
    }

    /// Both outputs are checked before either is written (an unwritable --swift path
    /// failed after the model directory had been written).
    func testUnwritableSwiftPathFailsBeforeTheModelDirectoryIsWritten() throws {
        let (w, v) = try model()
        let dir = tmp.appendingPathComponent("model").path
        let plain = tmp.appendingPathComponent("plain").path
        try Data().write(to: URL(fileURLWithPath: plain))
        for (swift, message) in [(plain + "/Drum.swift", "\(plain)/Drum.swift: \(plain) is not a directory"),
                                 (tmp.path, "\(tmp.path): is a directory")] {
            XCTAssertThrowsError(try Exporter.export(weights: w, vocabulary: v, step: 1, metadata: [:],
                                                     to: dir, swiftFile: swift)) {
                XCTAssertEqual("\($0)", message)
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir))
        }
        // A model directory that may not be replaced: the Swift file is not written either.
        let foreign = tmp.appendingPathComponent("src").path
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: foreign + "/main.swift"))
        let swift = tmp.appendingPathComponent("Drum.swift").path
        XCTAssertThrowsError(try Exporter.export(weights: w, vocabulary: v, step: 1, metadata: [:],
                                                 to: foreign, swiftFile: swift)) {
            XCTAssertTrue("\($0)".contains("not replacing it"), "\($0)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: swift))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.path).sorted(), ["plain", "src"])
    }

    /// A Swift file that still fails after the directory is in place (a full device)
    /// says what was and was not written.
    func testLateSwiftFailureSaysTheModelDirectoryWasWritten() throws {
        guard FileManager.default.fileExists(atPath: "/dev/full") else { throw XCTSkip("no /dev/full") }
        let (w, v) = try model()
        let dir = tmp.appendingPathComponent("model").path
        XCTAssertThrowsError(try Exporter.export(weights: w, vocabulary: v, step: 1, metadata: [:],
                                                 to: dir, swiftFile: "/dev/full")) {
            XCTAssertEqual("\($0)", "/dev/full: cannot write: no space left on device "
                + "(the model directory \(dir) was written; the Swift file was not)")
        }
        XCTAssertNoThrow(try ModelDirectory.load(path: dir))
    }

    static func intArray(named name: String, in text: String) -> [Int]? {
        guard let start = text.range(of: "let \(name): [Int] = [") else { return nil }
        guard let end = text[start.upperBound...].firstIndex(of: "]") else { return nil }
        return text[start.upperBound..<end]
            .split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\n" })
            .compactMap { Int($0) }
    }

    /// `swiftc -typecheck files` exits 0 and prints nothing (the generated file compiles
    /// without warnings beside a client using it).
    static func assertTypechecks(swiftc: String, _ files: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: swiftc)
        p.arguments = ["-typecheck"] + files
        let err = Pipe()
        p.standardError = err
        try p.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, message, file: file, line: line)
        XCTAssertEqual(message, "", "the generated file must compile without warnings", file: file, line: line)
    }

    static func findExecutable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
