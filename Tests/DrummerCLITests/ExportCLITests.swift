import XCTest
import Foundation

final class ExportCLITests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("export-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    /// A dataset directory: vocab.json and events.npy (int32 [E, 2], NPY 1.0 written by hand).
    private func dataset(events: Int, vocab: String = #"{"ix_to_note": [36, 38, 42], "ix_to_tick": [0, 120, 240]}"#) throws -> URL {
        let dir = tmp.appendingPathComponent("data")
        // A repeating groove: kick, hat, snare, hat on the beat grid.
        let groove: [(Int32, Int32)] = [(0, 2), (2, 1), (1, 1), (2, 1)]
        try TestDataset.write(dir, pairs: (0..<events).map { groove[$0 % 4] }, vocabJSON: vocab)
        return dir
    }

    /// train → export (with --swift) → sample, end to end through the binary.
    func testTrainExportSample() throws {
        let data = try dataset(events: 400)
        let ck = tmp.appendingPathComponent("ck").path
        let t = try CLI.run(["train", "--recipe", "original", "--data", data.path, "--hidden", "8", "--steps", "2", "--batch-size", "1",
                             "--unroll", "8", "--checkpoint-dir", ck])
        XCTAssertEqual(t.status, 0, t.stderr + t.stdout)
        let ckpt = ck + "/ckpt-2.h5"
        XCTAssertTrue(FileManager.default.fileExists(atPath: ckpt), t.stdout)

        let model = tmp.appendingPathComponent("model").path
        let swift = tmp.appendingPathComponent("DrumModel.swift").path
        let e = try CLI.run(["export", ckpt, "-o", model, "--swift", swift])
        XCTAssertEqual(e.status, 0, e.stderr)
        XCTAssertTrue(e.stdout.contains("to \(model): Wx.bin 15×32, Wy.bin 9×6"), e.stdout)
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: model)), ["Wx.bin", "Wy.bin", "model.json"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: model + "/Wx.bin")).count, 15 * 32 * 4)
        let manifest = try XCTUnwrap(JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: model + "/model.json"))) as? [String: Any])
        XCTAssertEqual(manifest["hidden_size"] as? Int, 8)
        XCTAssertEqual((manifest["metadata"] as? [String: String])?["step"], "2")
        XCTAssertNotNil((manifest["sha256"] as? [String: String])?["Wy.bin"])
        XCTAssertTrue(try String(contentsOfFile: swift, encoding: .utf8).contains("public enum DrumModel {"))

        let out = tmp.appendingPathComponent("g.mid").path
        let s = try CLI.run(["sample", model, "-n", "64", "--seed", "3", "-o", out, "--json"])
        XCTAssertEqual(s.status, 0, s.stderr)
        let midi = try XCTUnwrap(TinyMIDI([UInt8](Data(contentsOf: URL(fileURLWithPath: out)))))
        XCTAssertGreaterThan(midi.noteOns.count, 0)
        XCTAssertTrue(midi.noteOns.allSatisfy { [36, 38, 42].contains($0.note) && $0.status == 0x99 })

        // Exporting over an existing directory replaces it (no temporary siblings left).
        XCTAssertEqual(try CLI.run(["export", ckpt, "-o", model]).status, 0)
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: tmp.path).contains { $0.hasPrefix(".") })
    }

    func testExportErrors() throws {
        let missing = try CLI.run(["export", tmp.appendingPathComponent("none.h5").path])
        XCTAssertEqual(missing.status, 1, "a run-time failure, as for sample and eval")
        XCTAssertEqual(missing.stderr, "error: \(tmp.appendingPathComponent("none.h5").path): no such checkpoint, checkpoint directory or model directory\n")
        let junk = tmp.appendingPathComponent("junk.h5")
        try Data("not hdf5".utf8).write(to: junk)
        let bad = try CLI.run(["export", junk.path, "-o", tmp.appendingPathComponent("m").path])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("junk.h5"), bad.stderr)
        XCTAssertFalse(bad.stderr.contains("Fatal error"), bad.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: tmp.appendingPathComponent("m").path))
    }
}
