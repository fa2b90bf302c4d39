// `drummer train --layers 2` end to end through the built binary: train, resume (bitwise,
// and a refused change of --layers), export (Wx.bin, Wx1.bin, Wy.bin, model.json listing the
// layers), eval and sample; a bad --layers value.
import Foundation
import XCTest

final class LayersCLITests: XCTestCase {
    var root: URL!
    var data: URL!

    override func setUpWithError() throws {
        root = try CLI.temporaryDirectory("layers-cli")
        data = root.appendingPathComponent("data")
        let src = root.appendingPathComponent("midi")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        for (i, hits) in OriginalLayoutCLITests.songs.enumerated() {
            try TinySMF.drums(hits, meter: (4, 2)).write(to: src.appendingPathComponent("song\(i).mid"))
        }
        let converted = root.appendingPathComponent("converted")
        let r = try CLI.run(["convert-midi", src.path, "-o", converted.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        // The 2017 layout's files alone: --recipe original trains note and tick.
        data = try OriginalLayoutCLITests.noteAndTickCopy(of: converted, to: root.appendingPathComponent("data"))
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    func train(_ dir: String, _ extra: [String]) throws -> CLIResult {
        try CLI.run(["train", "--recipe", "original", "--data", data.path, "--hidden", "8", "--unroll", "8", "--layers", "2",
                     "--checkpoint-every", "3", "--checkpoint-dir", root.appendingPathComponent(dir).path] + extra)
    }

    func testTwoLayersTrainResumeExportEvalSample() throws {
        let straight = try train("a", ["--steps", "6"])
        XCTAssertEqual(straight.status, 0, straight.stderr)
        XCTAssertTrue(straight.stdout.contains("2 layers of 8"), straight.stdout)
        let half = try train("b", ["--steps", "3"])
        XCTAssertEqual(half.status, 0, half.stderr)
        let b3 = root.appendingPathComponent("b/ckpt-3.h5").path
        let refused = try CLI.run(["train", "--resume", b3, "--layers", "3", "--steps", "6"])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--layers 3") && refused.stderr.contains("layers 2"), refused.stderr)
        let resumed = try CLI.run(["train", "--resume", b3, "--layers", "2", "--steps", "6"])
        XCTAssertEqual(resumed.status, 0, resumed.stderr)

        var exported: [String: Data] = [:]
        for run in ["a", "b"] {
            let out = root.appendingPathComponent("m-" + run).path
            let e = try CLI.run(["export", root.appendingPathComponent(run + "/ckpt-6.h5").path, "-o", out])
            XCTAssertEqual(e.status, 0, e.stderr)
            XCTAssertTrue(e.stdout.contains("Wx1.bin 17×32"), e.stdout)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(),
                           ["Wx.bin", "Wx1.bin", "Wy.bin", "model.json"])
            for f in ["Wx.bin", "Wx1.bin", "Wy.bin"] {
                let d = try Data(contentsOf: URL(fileURLWithPath: out + "/" + f))
                if let other = exported[f] { XCTAssertTrue(d == other, "\(f): the resumed run differs from the straight one") }
                exported[f] = d
            }
        }
        let out = root.appendingPathComponent("m-a").path
        // A stacked model's export replaces its own earlier export (Wx1.bin is drummer's too),
        // not a file drummer does not write there.
        let again = try CLI.run(["export", root.appendingPathComponent("b/ckpt-6.h5").path, "-o", out])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out + "/Wx1.bin")), exported["Wx1.bin"])
        try Data("mine".utf8).write(to: URL(fileURLWithPath: out + "/Wx1.txt"))
        let foreign = try CLI.run(["export", root.appendingPathComponent("b/ckpt-6.h5").path, "-o", out])
        XCTAssertEqual(foreign.status, 1, foreign.stderr)
        XCTAssertTrue(foreign.stderr.contains("not replacing it: it also holds Wx1.txt, which drummer does not write there"), foreign.stderr)
        try FileManager.default.removeItem(atPath: out + "/Wx1.txt")
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/model.json"))) as? [String: Any])
        XCTAssertEqual(json["format_version"] as? Int, 3)
        XCTAssertEqual((json["layers"] as? [[String: Any]])?.count, 2)
        XCTAssertEqual((json["metadata"] as? [String: Any])?["layers"] as? String, "2")

        // model.json listing fewer layers than the directory holds ran the cut-down model in
        // silence (an evaluation of 11.2 nats where the model has 4.4): the directory and
        // model.json must agree, by the files and by the checksums.
        let cut = root.appendingPathComponent("m-cut").path
        try FileManager.default.copyItem(atPath: out, toPath: cut)
        var cutJSON = json
        cutJSON["layers"] = Array((json["layers"] as? [[String: Any]] ?? []).prefix(1))
        try JSONSerialization.data(withJSONObject: cutJSON).write(to: URL(fileURLWithPath: cut + "/model.json"))
        let extraFile = try CLI.run(["eval", cut, "--data", data.path])
        XCTAssertEqual(extraFile.status, 1, extraFile.stderr)
        XCTAssertEqual(extraFile.stderr, "error: \(cut)/model.json: it gives 1 layer(s), but Wx1.bin is in the directory too: "
                       + "model.json and the weight files disagree; export the model again\n")
        try FileManager.default.removeItem(atPath: cut + "/Wx1.bin")
        let extraSum = try CLI.run(["sample", cut, "-n", "10", "-o", root.appendingPathComponent("cut.mid").path])
        XCTAssertEqual(extraSum.status, 1, extraSum.stderr)
        XCTAssertTrue(extraSum.stderr.contains("\(cut)/model.json: sha256 lists Wx1.bin, which is not one of the model's files "
                                               + "(Wx.bin, Wy.bin for its 1 layer(s))"), extraSum.stderr)

        let eval = try CLI.run(["eval", out, "--data", data.path])
        XCTAssertEqual(eval.status, 0, eval.stderr)
        let evalCkpt = try CLI.run(["eval", root.appendingPathComponent("a/ckpt-6.h5").path, "--data", data.path])
        XCTAssertEqual(evalCkpt.status, 0, evalCkpt.stderr)
        XCTAssertEqual(eval.stdout, evalCkpt.stdout.replacingOccurrences(of: root.appendingPathComponent("a/ckpt-6.h5").path, with: out),
                       "the model directory and its checkpoint evaluate alike")
        let mid = root.appendingPathComponent("g.mid").path
        let s = try CLI.run(["sample", out, "-n", "50", "--seed", "3", "-o", mid])
        XCTAssertEqual(s.status, 0, s.stderr)
        XCTAssertGreaterThan(try Data(contentsOf: URL(fileURLWithPath: mid)).count, 100)
    }

    func testBadLayersValueIsRefusedBeforeAnythingIsWritten() throws {
        for bad in ["0", "17"] {
            let r = try train("c", ["--layers", bad, "--steps", "1"])
            XCTAssertEqual(r.status, 64, r.stderr)
            XCTAssertTrue(r.stderr.contains("--layers must be between 1 and 16"), r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("c").path))
        }
        // --help reads the flag and its text from the settings table (its default, the default
        // recipe's, in RecipeCLITests).
        let help = try CLI.run(["train", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        XCTAssertTrue(help.contains("--layers <layers> Stacked LSTM layers L (each of hidden size H) (default "), help)
    }
}
