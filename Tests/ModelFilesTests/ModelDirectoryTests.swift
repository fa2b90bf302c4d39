import XCTest
import Foundation
import DrummerCore
@testable import ModelFiles
@testable import FileOutput

final class ModelDirectoryTests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws {
        tmp = FileManager.default.temporaryDirectory
            .appendingPathComponent("modeldir-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: tmp)
    }

    /// A small random model: 3 notes, 4 ticks, hidden 5.
    private func smallModel(seed: UInt64 = 7) throws -> (LSTMWeights, Vocabulary) {
        let vocab = try Vocabulary(ixToNote: [36, 38, 42], ixToTick: [0, 60, 120, 240])
        let shape = vocab.shape(hidden: 5)
        var rng = SeededRNG(seed: seed)
        let wx = (0..<shape.wxCount).map { _ in Float(rng.uniform(-1, 1)) }
        let wy = (0..<shape.wyCount).map { _ in Float(rng.uniform(-1, 1)) }
        return (try LSTMWeights(shape: shape, wx: wx, wy: wy), vocab)
    }

    private func writeSmall(_ name: String = "model") throws -> String {
        let (w, v) = try smallModel()
        let dir = tmp.appendingPathComponent(name).path
        try ModelDirectory.write(weights: w, vocabulary: v, to: dir, metadata: ["step": "12"])
        return dir
    }

    /// Another command swaps a new model directory in while this one reads it: model.json of
    /// one version, Wx.bin of the other, refused as "file corrupted or replaced" (sample failed
    /// 5 times in 69 beside a loop of exports). The directory changed, so it is read again.
    func testADirectorySwappedInWhileReadIsReadAgain() throws {
        let (w1, v) = try smallModel(seed: 7)
        let (w2, _) = try smallModel(seed: 8)
        let dir = tmp.appendingPathComponent("m").path, other = tmp.appendingPathComponent("n").path
        try ModelDirectory.write(weights: w1, vocabulary: v, to: dir, metadata: ["step": "1"])
        try ModelDirectory.write(weights: w2, vocabulary: v, to: other, metadata: ["step": "2"])
        var swaps = 0
        ModelDirectory.afterManifestRead = {
            guard swaps == 0 else { return }
            swaps += 1
            let aside = self.tmp.appendingPathComponent("aside").path
            XCTAssertEqual(rename(dir, aside), 0)
            XCTAssertEqual(rename(other, dir), 0)
            XCTAssertEqual(rename(aside, other), 0)
        }
        defer { ModelDirectory.afterManifestRead = nil }
        let loaded = try ModelDirectory.load(path: dir)
        XCTAssertEqual(swaps, 1)
        XCTAssertEqual(loaded.metadata["step"], "2", "the version in place after the swap, whole")
        XCTAssertEqual(loaded.weights.wx, w2.wx)
        // A damaged file in a directory that stays put is still refused at once.
        ModelDirectory.afterManifestRead = nil
        let wx = (other as NSString).appendingPathComponent("Wx.bin")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: wx))
        bytes[0] ^= 1
        try bytes.write(to: URL(fileURLWithPath: wx))
        expectError(other) { if case .checksumMismatch = $0 { return true } else { return false } }
    }

    private func expectError(
        _ dir: String, file: StaticString = #filePath, line: UInt = #line,
        _ check: (ModelDirectoryError) -> Bool
    ) {
        do {
            _ = try ModelDirectory.load(path: dir)
            XCTFail("loaded a broken model directory", file: file, line: line)
        } catch let e as ModelDirectoryError {
            XCTAssertTrue(check(e), "unexpected error: \(e)", file: file, line: line)
            XCTAssertFalse(e.description.contains("\n"), file: file, line: line)
        } catch {
            XCTFail("untyped error \(error)", file: file, line: line)
        }
    }

    private func editManifest(_ dir: String, _ edit: (inout [String: Any]) -> Void) throws {
        let url = URL(fileURLWithPath: dir).appendingPathComponent("model.json")
        var obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        edit(&obj)
        try JSONSerialization.data(withJSONObject: obj).write(to: url)
    }

    func testRoundTripIsBitExact() throws {
        let (w, v) = try smallModel()
        let dir = try writeSmall()
        let m = try ModelDirectory.load(path: dir)
        XCTAssertEqual(m.weights, w)
        XCTAssertEqual(m.vocabulary, v)
        XCTAssertEqual(m.metadata, ["step": "12"])
        XCTAssertEqual(m.formatVersion, 2, "a one-layer model is written as version 2")
        XCTAssertTrue(m.checksumsVerified)
        // File sizes and the little-endian row-major layout, checked byte by byte.
        let wx = try Data(contentsOf: URL(fileURLWithPath: dir).appendingPathComponent("Wx.bin"))
        XCTAssertEqual(wx.count, w.shape.wxCount * 4)
        let row = 3, col = 7, i = row * w.shape.wxCols + col
        let bits = w.wx[i].bitPattern
        XCTAssertEqual(Array(wx[(4 * i)..<(4 * i + 4)]),
                       [UInt8(bits & 0xff), UInt8((bits >> 8) & 0xff), UInt8((bits >> 16) & 0xff), UInt8(bits >> 24)])
        let json = try XCTUnwrap(JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: dir).appendingPathComponent("model.json"))) as? [String: Any])
        XCTAssertEqual(json["Wx_shape"] as? [Int], [3 + 4 + 5 + 1, 20])
        XCTAssertEqual(json["Wy_shape"] as? [Int], [6, 7])
        XCTAssertEqual(json["hidden_size"] as? Int, 5)
        XCTAssertEqual(json["gate_order"] as? [String], ["f", "i", "o", "g"])
        XCTAssertEqual(json["format"] as? String, "drummer-model")
        XCTAssertEqual((json["sha256"] as? [String: String])?["Wx.bin"], SHA256.hex(wx))
        // Rewriting replaces the directory and leaves no temporary siblings.
        try ModelDirectory.write(weights: w, vocabulary: v, to: dir)
        XCTAssertEqual(try ModelDirectory.load(path: dir).metadata, [:])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.path), ["model"])
    }

    func testWriteRefusesNonFiniteAndMismatchedVocabulary() throws {
        var (w, v) = try smallModel()
        let other = try Vocabulary(ixToNote: [36], ixToTick: [0, 1, 2, 3])
        let dir = tmp.appendingPathComponent("m").path
        XCTAssertThrowsError(try ModelDirectory.write(weights: w, vocabulary: other, to: dir)) {
            guard case .vocabularyMismatch(_, let m)? = $0 as? ModelDirectoryError else { return XCTFail("\($0)") }
            XCTAssertTrue(m.contains("the vocabulary 1 notes and 4 ticks"), m)
        }
        w.wy[4] = .nan
        XCTAssertThrowsError(try ModelDirectory.write(weights: w, vocabulary: v, to: dir)) {
            guard case .weights(_, let m)? = $0 as? ModelDirectoryError else { return XCTFail("\($0)") }
            XCTAssertTrue(m.contains("is nan: weights must be finite"), m)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir))
    }

    func testMissingDirectoryAndFiles() throws {
        expectError(tmp.appendingPathComponent("nope").path) {
            if case .missingDirectory = $0 { return true }; return false
        }
        let file = tmp.appendingPathComponent("plain").path
        try Data([1]).write(to: URL(fileURLWithPath: file))
        expectError(file) { if case .notADirectory = $0 { return true }; return false }
        for name in ["Wx.bin", "Wy.bin", "model.json"] {
            let dir = try writeSmall()
            try FileManager.default.removeItem(atPath: dir + "/" + name)
            expectError(dir) {
                if case .missingFile(let p) = $0 { return p.hasSuffix(name) }; return false
            }
        }
    }

    func testBadJSONAndMissingKeys() throws {
        let dir = try writeSmall()
        try Data("{ \"ix_to_note\": [36, ".utf8).write(to: URL(fileURLWithPath: dir + "/model.json"))
        expectError(dir) {
            if case .badManifest(let f, let m) = $0 { return f.hasSuffix("model.json") && m.contains("JSON") }
            return false
        }
        let dir2 = try writeSmall()
        try editManifest(dir2) { $0.removeValue(forKey: "hidden_size") }
        expectError(dir2) {
            if case .badManifest(_, let m) = $0 { return m.contains("hidden_size") }; return false
        }
        try editManifest(dir2) { $0["hidden_size"] = "five" }
        expectError(dir2) {
            if case .badManifest(_, let m) = $0 { return m.contains("hidden_size") }; return false
        }
        try editManifest(dir2) { $0["hidden_size"] = 5; $0["ix_to_note"] = [36, 36, 38] }
        expectError(dir2) {
            if case .vocabularyMismatch(_, let m) = $0 { return m.contains("duplicates") }; return false
        }
        try editManifest(dir2) { $0["ix_to_note"] = [36, 38, 42]; $0["format_version"] = 99 }
        expectError(dir2) { if case .unsupportedFormat = $0 { return true }; return false }
        try editManifest(dir2) { $0["format_version"] = 1; $0["gate_order"] = ["i", "f", "o", "g"] }
        expectError(dir2) {
            if case .badManifest(_, let m) = $0 { return m.contains("gate_order") }; return false
        }
        try editManifest(dir2) { $0["gate_order"] = ["f", "i", "o", "g"]; $0["dtype"] = "float64" }
        expectError(dir2) {
            if case .badManifest(_, let m) = $0 { return m.contains("dtype") }; return false
        }
        try editManifest(dir2) { $0["dtype"] = "float32"; $0["hidden_size"] = 1 << 40 }
        expectError(dir2) {
            if case .badManifest(_, let m) = $0 { return m.contains("hidden_size") }; return false
        }
    }

    func testShapeKeysMustAgreeWithVocabularyAndHidden() throws {
        let dir = try writeSmall()
        try editManifest(dir) { $0["Wx_shape"] = [12, 20] }
        expectError(dir) {
            if case .shapeMismatch(_, "Wx_shape", [13, 20], [12, 20]) = $0 { return true }; return false
        }
        try editManifest(dir) { $0["Wx_shape"] = [13, 20]; $0["Wy_shape"] = [6, 8] }
        expectError(dir) {
            if case .shapeMismatch(_, "Wy_shape", [6, 7], [6, 8]) = $0 { return true }; return false
        }
        // hidden_size changed consistently with the shapes: now the .bin sizes disagree.
        try editManifest(dir) {
            $0["hidden_size"] = 4; $0["Wx_shape"] = [12, 16]; $0["Wy_shape"] = [5, 7]
        }
        expectError(dir) {
            if case .wrongSize(let f, 12 * 16 * 4, 13 * 20 * 4, _) = $0 { return f.hasSuffix("Wx.bin") }
            return false
        }
    }

    func testTruncatedFileAndChecksum() throws {
        let dir = try writeSmall()
        let wy = URL(fileURLWithPath: dir + "/Wy.bin")
        var bytes = try Data(contentsOf: wy)
        try bytes.dropLast(4).write(to: wy)
        expectError(dir) {
            if case .wrongSize(let f, 168, 164, [6, 7]) = $0 { return f.hasSuffix("Wy.bin") }; return false
        }
        bytes[9] ^= 0x01
        try bytes.write(to: wy)
        expectError(dir) {
            if case .checksumMismatch(let f, _, _) = $0 { return f.hasSuffix("Wy.bin") }; return false
        }
        try editManifest(dir) { $0["sha256"] = ["Wx.bin": "00"] }
        expectError(dir) {
            if case .badManifest(_, let m) = $0 { return m.contains("Wy.bin") }; return false
        }
    }

    func testNonFiniteWeightsAreNamedWhenNoChecksums() throws {
        let dir = try writeSmall()
        try editManifest(dir) { $0.removeValue(forKey: "sha256") }
        let wx = URL(fileURLWithPath: dir + "/Wx.bin")
        var bytes = try Data(contentsOf: wx)
        let i = 2 * 20 + 3
        let inf = Float.infinity.bitPattern.littleEndian
        withUnsafeBytes(of: inf) { for k in 0..<4 { bytes[4 * i + k] = $0[k] } }
        try bytes.write(to: wx)
        expectError(dir) {
            if case .notFinite(let f, 2, 3, let v) = $0 { return f.hasSuffix("Wx.bin") && v.isInfinite }
            return false
        }
    }

    /// The original project's pretrained model: Wx.bin, Wy.bin, and vocab.json
    /// renamed model.json (no format, no checksums) load as they are.
    func testOriginalPretrainedModelLoads() throws {
        let fixtures = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/Fixtures/rnn-drummer").standardizedFileURL
        guard FileManager.default.fileExists(atPath: fixtures.appendingPathComponent("Wx.bin").path) else {
            throw VendoredFixtureMissing()
        }
        let dir = tmp.appendingPathComponent("original")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (from, to) in [("Wx.bin", "Wx.bin"), ("Wy.bin", "Wy.bin"), ("vocab.json", "model.json")] {
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent(from),
                                             to: dir.appendingPathComponent(to))
        }
        let m = try ModelDirectory.load(path: dir.path)
        XCTAssertEqual(m.shape, ModelShape(notes: 17, ticks: 209, hidden: 200))
        // No groups section: the original layout, (note, tick) in and out.
        XCTAssertEqual(m.groups, ModelGroups(vocabulary: m.vocabulary))
        XCTAssertTrue(m.groups.isOriginalLayout)
        XCTAssertEqual(m.groups.inputNames, ["note", "tick"])
        XCTAssertEqual(m.groups.outputNames, ["note", "tick"])
        XCTAssertEqual(m.vocabulary.ixToNote.first, 36)
        XCTAssertNil(m.formatVersion)
        XCTAssertFalse(m.checksumsVerified)
        XCTAssertEqual(m.metadata, [:])
        // Writing it back reproduces the original .bin files byte for byte.
        let out = tmp.appendingPathComponent("rewritten").path
        try ModelDirectory.write(weights: m.weights, vocabulary: m.vocabulary, to: out)
        for name in ["Wx.bin", "Wy.bin"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out + "/" + name)),
                           try Data(contentsOf: fixtures.appendingPathComponent(name)), name)
        }
        let rewritten = try ModelDirectory.load(path: out)
        XCTAssertTrue(rewritten.checksumsVerified)
        XCTAssertEqual(rewritten.formatVersion, 2, "a one-layer model is written as version 2")
        XCTAssertEqual(rewritten.groups, m.groups)
    }

    private func message(_ dir: String) -> String {
        do { _ = try ModelDirectory.load(path: dir); return "loaded" } catch { return "\(error)" }
    }

    /// Wrong types name the key, the expected type and the value found ("hidden_size": 32.5
    /// used to say "not valid JSON").
    func testWrongTypesNameKeyExpectedTypeAndValue() throws {
        let dir = try writeSmall()
        let manifest = dir + "/model.json"
        try editManifest(dir) { $0["hidden_size"] = 32.5 }
        XCTAssertEqual(message(dir), "\(manifest): hidden_size is 32.5, expected a whole number")
        try editManifest(dir) { $0["hidden_size"] = 5.0 }  // a whole number written as 5.0 is 5
        XCTAssertNoThrow(try ModelDirectory.load(path: dir))
        try editManifest(dir) { $0["hidden_size"] = "five" }
        XCTAssertEqual(message(dir), "\(manifest): hidden_size is \"five\" (a string), expected a whole number")
        try editManifest(dir) { $0["hidden_size"] = 5; $0["ix_to_note"] = [36, true, 42] }
        XCTAssertEqual(message(dir), "\(manifest): ix_to_note[1] is true, expected a whole number")
        try editManifest(dir) { $0["ix_to_note"] = 36 }
        XCTAssertEqual(message(dir), "\(manifest): ix_to_note is 36, expected an array of whole numbers")
        try editManifest(dir) { $0["ix_to_note"] = [36, 38, 42]; $0["format"] = 1 }
        XCTAssertEqual(message(dir), "\(manifest): format is 1, expected a string")
        try editManifest(dir) { $0["format"] = "drummer-model"; $0["metadata"] = ["step": 12] }
        XCTAssertEqual(message(dir), "\(manifest): metadata.step is 12, expected a string")
        try editManifest(dir) { $0["metadata"] = NSNull(); $0["hidden_size"] = NSNull() }
        XCTAssertEqual(message(dir), "\(manifest): hidden_size is null, expected a value")
        try Data("[1, 2]".utf8).write(to: URL(fileURLWithPath: manifest))
        XCTAssertEqual(message(dir), "\(manifest): holds an array of 2 value(s), expected a JSON object")
        try Data().write(to: URL(fileURLWithPath: manifest))
        XCTAssertEqual(message(dir), "\(manifest): is empty, expected the JSON manifest")
    }

    /// model.json or a weight file that is a directory: a sentence, not
    /// "NSCocoaErrorDomain error 256".
    func testDirectoriesWhereFilesBelongAreNamed() throws {
        let dir = try writeSmall()
        try FileManager.default.removeItem(atPath: dir + "/model.json")
        try FileManager.default.createDirectory(atPath: dir + "/model.json", withIntermediateDirectories: false)
        XCTAssertEqual(message(dir), "\(dir)/model.json: is a directory, expected the JSON manifest")
        let dir2 = try writeSmall("model2")
        try FileManager.default.removeItem(atPath: dir2 + "/Wy.bin")
        try FileManager.default.createDirectory(atPath: dir2 + "/Wy.bin", withIntermediateDirectories: false)
        XCTAssertEqual(message(dir2), "\(dir2)/Wy.bin: is a directory, expected 6 × 7 float32 weights")
        XCTAssertEqual(mkfifo(dir2 + "/Wy.bin.fifo", 0o644), 0)
        try FileManager.default.removeItem(atPath: dir2 + "/Wy.bin")
        try FileManager.default.moveItem(atPath: dir2 + "/Wy.bin.fifo", toPath: dir2 + "/Wy.bin")
        XCTAssertEqual(message(dir2), "\(dir2)/Wy.bin: is a FIFO, expected 6 × 7 float32 weights")
    }

    /// A model directory made of symbolic links loads: sizes are the targets' (it was
    /// rejected with the link's own size, "23 bytes").
    func testModelDirectoryOfSymlinksLoads() throws {
        let real = try writeSmall()
        let links = tmp.appendingPathComponent("links").path
        try FileManager.default.createDirectory(atPath: links, withIntermediateDirectories: true)
        for name in ["Wx.bin", "Wy.bin", "model.json"] {
            XCTAssertEqual(symlink(real + "/" + name, links + "/" + name), 0)
        }
        let m = try ModelDirectory.load(path: links)
        XCTAssertTrue(m.checksumsVerified)
        XCTAssertEqual(m, try ModelDirectory.load(path: real))
        // A dangling link and a link to a file of the wrong size say so, naming both.
        unlink(links + "/Wy.bin")
        XCTAssertEqual(symlink(tmp.appendingPathComponent("gone").path, links + "/Wy.bin"), 0)
        XCTAssertEqual(message(links), "\(links)/Wy.bin (a link to \(tmp.appendingPathComponent("gone").path)): "
            + "cannot read: the symbolic link's target does not exist")
        unlink(links + "/Wy.bin")
        XCTAssertEqual(symlink(real + "/model.json", links + "/Wy.bin"), 0)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: real + "/model.json")[.size] as? Int)
        XCTAssertEqual(message(links), "\(links)/Wy.bin (a link to \(real)/model.json): \(size) bytes, expected 168 (6 × 7 float32)")
    }

    /// export's writer replaces a model directory, never a directory that is not one.
    func testWriteRefusesToReplaceAForeignDirectory() throws {
        let (w, v) = try smallModel()
        let foreign = tmp.appendingPathComponent("project").path
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: foreign + "/main.swift"))
        XCTAssertThrowsError(try ModelDirectory.write(weights: w, vocabulary: v, to: foreign)) {
            XCTAssertEqual("\($0)", "\(foreign): not replacing it: it is not empty and not a drummer model "
                + "directory (no model.json); remove it or choose another path")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: foreign), ["main.swift"])
        // A model directory is replaced.
        let dir = try writeSmall()
        try ModelDirectory.write(weights: w, vocabulary: v, to: dir, metadata: ["step": "13"])
        XCTAssertEqual(try ModelDirectory.load(path: dir).metadata["step"], "13")
    }

    /// A model directory's own files, as a replacement recognises them: every layer's Wx file up
    /// to the most layers a model may have (DirectoryKind.model lists them in FileOutput, which
    /// cannot read ModelLimits).
    func testTheModelDirectoryKindOwnsEveryLayersFile() {
        let owned = DirectoryKind.model.owned
        for k in 0..<ModelLimits.maximumLayers { XCTAssertTrue(owned.contains(ModelDirectory.wxFile(layer: k)), "layer \(k)") }
        XCTAssertFalse(owned.contains(ModelDirectory.wxFile(layer: ModelLimits.maximumLayers)))
        XCTAssertTrue(owned.isSuperset(of: [ModelDirectory.manifestFile, ModelDirectory.wyFile]))
    }
}
