// safetensors interop: `drummer export --format safetensors` and `drummer import` through the binary.
import Foundation
import XCTest

final class SafeTensorsCLITests: XCTestCase {
    var tmp: URL!
    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("safetensors-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    func testExportImportRoundTripsAModelDirectoryAndACheckpoint() throws {
        let groove = CLI.repoRoot.appendingPathComponent("models/groove")
        let file = tmp.appendingPathComponent("g.safetensors").path
        let e = try CLI.run(["export", groove.path, "--format", "safetensors", "-o", file])
        XCTAssertEqual(e.status, 0, e.stderr)
        XCTAssertTrue(e.stdout.hasPrefix("exported \(groove.path) to \(file): safetensors, 2 LSTM layer(s) of 256"), e.stdout)
        let back = tmp.appendingPathComponent("back").path
        let i = try CLI.run(["import", file, "-o", back])
        XCTAssertEqual(i.status, 0, i.stderr)
        XCTAssertEqual(i.stdout, "imported \(file) to \(back): Wx.bin 1475×1024, Wx1.bin 513×1024, Wy.bin 257×710, model.json\n")
        for name in ["Wx.bin", "Wx1.bin", "Wy.bin", "model.json"] {
            XCTAssertEqual(try Data(contentsOf: groove.appendingPathComponent(name)),
                           try Data(contentsOf: URL(fileURLWithPath: back).appendingPathComponent(name)), name)
        }
        // A checkpoint: safetensors then import gives what `export` writes for it.
        try TrainCLITests.writeDataset(tmp.appendingPathComponent("data"), count: 120)
        let ckpts = tmp.appendingPathComponent("c").path
        let t = try CLI.run(["train", "--recipe", "original", "--data", tmp.appendingPathComponent("data").path, "--hidden", "6",
                             "--layers", "2", "--unroll", "8", "--steps", "3", "--checkpoint-dir", ckpts])
        XCTAssertEqual(t.status, 0, t.stderr)
        let direct = tmp.appendingPathComponent("direct").path, viaFile = tmp.appendingPathComponent("via").path
        let st = tmp.appendingPathComponent("c.safetensors").path
        XCTAssertEqual(try CLI.run(["export", ckpts, "-o", direct]).status, 0)
        let s = try CLI.run(["export", ckpts, "--step", "latest", "--format", "safetensors", "-o", st])
        XCTAssertEqual(s.status, 0, s.stderr)
        XCTAssertTrue(s.stdout.contains("(the latest"), s.stdout)
        XCTAssertEqual(try CLI.run(["import", st, "-o", viaFile]).status, 0)
        for name in ["Wx.bin", "Wx1.bin", "Wy.bin"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: direct).appendingPathComponent(name)),
                           try Data(contentsOf: URL(fileURLWithPath: viaFile).appendingPathComponent(name)), name)
        }
        // The same metadata (step, exporting version, the checkpoint's): the same model.json.
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: direct).appendingPathComponent("model.json")),
                       try Data(contentsOf: URL(fileURLWithPath: viaFile).appendingPathComponent("model.json")))
    }

    func testBadFilesAndOptionsAreRefused() throws {
        let junk = tmp.appendingPathComponent("junk.safetensors")
        try Data([9, 0, 0, 0, 0, 0, 0, 0, 0x7B, 0x7D]).write(to: junk)
        let r = try CLI.run(["import", junk.path, "-o", tmp.appendingPathComponent("m").path])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "error: \(junk.path): byte 0: header length 9 runs past the end of the file (10 bytes)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: tmp.appendingPathComponent("m").path), "nothing written")
        let missing = try CLI.run(["import", tmp.appendingPathComponent("none.safetensors").path])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("none.safetensors: no such file"), missing.stderr)
        let swift = try CLI.run(["export", CLI.repoRoot.appendingPathComponent("models/groove").path, "--format", "safetensors",
                                 "--swift", "x.swift"])
        XCTAssertEqual(swift.status, 64)
        XCTAssertTrue(swift.stderr.contains("--swift goes with --format model"), swift.stderr)
    }

    /// A file given to the command that does not take it is named as what it is, with the command
    /// that does: a checkpoint or an ONNX model to import, a safetensors file or an ONNX model to
    /// sample and eval. Nothing is written.
    func testAFileOfAnotherKindIsNamedWithTheCommandThatTakesIt() throws {
        let groove = CLI.repoRoot.appendingPathComponent("models/groove").path
        let st = tmp.appendingPathComponent("g.safetensors").path, onnx = tmp.appendingPathComponent("g.onnx").path
        XCTAssertEqual(try CLI.run(["export", groove, "--format", "safetensors", "-o", st]).status, 0)
        XCTAssertEqual(try CLI.run(["export", groove, "--format", "onnx", "-o", onnx]).status, 0)
        let data = tmp.appendingPathComponent("data")
        try TrainCLITests.writeDataset(data, count: 120)
        let ckpts = tmp.appendingPathComponent("c").path
        let t = try CLI.run(["train", "--recipe", "original", "--data", data.path, "--hidden", "6", "--unroll", "8", "--steps", "0",
                             "--checkpoint-dir", ckpts])
        XCTAssertEqual(t.status, 0, t.stderr)
        let ckpt = ckpts + "/ckpt-0.h5", out = tmp.appendingPathComponent("out").path
        let onnxSays = "it is an ONNX model (what drummer export --format onnx writes, for ONNX Runtime), which drummer does not read: "
        for (args, expected) in [
            (["import", ckpt, "-o", out], "error: \(ckpt): not a safetensors file: it is a drummer checkpoint: sample, eval and the "
                + "other commands that take a model read it as it is, and drummer export \(ckpt) -o DIR turns it into a model directory\n"),
            (["import", onnx, "-o", out], "error: \(onnx): not a safetensors file: " + onnxSays
                + "import the safetensors file of the same model (drummer export MODEL --format safetensors writes one)\n"),
            (["sample", st, "-o", out], "error: \(st): not a drummer checkpoint: it is a safetensors file: turn it into a model "
                + "directory with drummer import \(st) -o DIR\n"),
            (["eval", st, "--data", data.path], "error: \(st): not a drummer checkpoint: it is a safetensors file: turn it into a "
                + "model directory with drummer import \(st) -o DIR\n"),
            (["sample", onnx, "-o", out], "error: \(onnx): not a drummer checkpoint: " + onnxSays
                + "give the model directory or checkpoint it was exported from\n"),
        ] {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 1, "\(args)")
            XCTAssertEqual(r.stderr, expected, "\(args)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "\(args): nothing written")
        }
    }

    /// A changed weight byte is named by the file's own tensors (head.weight and head.bias, a
    /// layer's lstm tensors), not by the model directory's file that holds them.
    func testAChangedWeightNamesTheTensors() throws {
        let st = tmp.appendingPathComponent("g.safetensors")
        XCTAssertEqual(try CLI.run(["export", CLI.repoRoot.appendingPathComponent("models/groove").path, "--format", "safetensors",
                                    "-o", st.path]).status, 0)
        let original = try Data(contentsOf: st)
        let n = original.prefix(8).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        let header = try XCTUnwrap(JSONSerialization.jsonObject(with: original.subdata(in: 8..<(8 + n))) as? [String: Any])
        for (tensor, named) in [("head.bias", "head.weight and head.bias"),
                                ("lstm.bias_ih_l1", "lstm.weight_ih_l1, lstm.weight_hh_l1, lstm.bias_ih_l1 and lstm.bias_hh_l1")] {
            let entry = try XCTUnwrap(header[tensor] as? [String: Any], tensor)
            let begin = try XCTUnwrap((entry["data_offsets"] as? [Int])?.first, tensor)
            var changed = original
            changed[8 + n + begin] ^= 0x01
            try changed.write(to: st)
            let out = tmp.appendingPathComponent("m").path
            let r = try CLI.run(["import", st.path, "-o", out])
            XCTAssertEqual(r.status, 1, tensor)
            XCTAssertTrue(r.stderr.hasPrefix("error: \(st.path): the tensors \(named) do not match the SHA-256 model_json records "
                                             + "for them ("), r.stderr)
            XCTAssertFalse(r.stderr.contains(".bin do not match"), r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "nothing written")
        }
    }
}
