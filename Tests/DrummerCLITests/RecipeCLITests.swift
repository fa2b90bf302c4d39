// `drummer train` with no training flag trains the event model's recipe (--recipe groove):
// the settings and groups it picks, its --help, --recipe original (the 2017 settings), and the
// refusal of --recipe with --resume. On a dataset converted from the repository's own corpus.
import Foundation
import XCTest

final class RecipeCLITests: XCTestCase {
    var root: URL!
    var data: URL!

    override func setUpWithError() throws {
        root = try CLI.temporaryDirectory("recipe-cli")
        data = root.appendingPathComponent("data")
        // 16 performances of the shipped corpus: enough hits for 16 streams of 100 steps.
        let src = root.appendingPathComponent("midi")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        let corpus = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer1/session1")
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path).filter { $0.hasSuffix(".mid") }.sorted()
        for f in files.prefix(16) {
            try FileManager.default.copyItem(at: corpus.appendingPathComponent(f), to: src.appendingPathComponent(f))
        }
        let r = try CLI.run(["convert-midi", src.path, "-o", data.path, "--quantize", "30", "--validation-fraction", "0.2"])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    /// model.json's metadata of `run`'s checkpoint at `step`.
    func metadata(_ run: String, step: Int) throws -> [String: String] {
        let out = root.appendingPathComponent("m-" + run).path
        let e = try CLI.run(["export", root.appendingPathComponent("\(run)/ckpt-\(step).h5").path, "-o", out])
        XCTAssertEqual(e.status, 0, e.stderr)
        return try CLI.modelMetadata(out)
    }

    func testNoFlagsTrainsTheGrooveRecipe() throws {
        // Only the size is made small (and the step budget, for the test's sake).
        let t = try CLI.run(["train", "--data", data.path, "--checkpoint-dir", root.appendingPathComponent("g").path,
                             "--hidden", "16", "--steps", "2"])
        XCTAssertEqual(t.status, 0, t.stderr)
        XCTAssertTrue(t.stdout.contains("lookback_note"), "the recipe adds the lookback group: \(t.stdout)")
        XCTAssertTrue(t.stdout.contains("input noise: 0.2 on note, tick, velocity, drawn from the model's predictions"), t.stdout)
        let m = try metadata("g", step: 2)
        XCTAssertEqual(m["optimizer"], "rmsprop")
        XCTAssertEqual(m["batch_size"], "16")
        XCTAssertEqual(m["unroll"], "100")
        XCTAssertEqual(m["learning_rate"], "0.002")
        XCTAssertEqual(m["input_noise_draw"], "model")
        XCTAssertEqual(m["early_stop"], "on")
        XCTAssertEqual(m["lr_decay"], "0.5")

        // --recipe original: the 2017 settings (SGD, batch 1, no noise, no lookback).
        let o = try CLI.run(["train", "--recipe", "original", "--data", data.path, "--checkpoint-dir",
                             root.appendingPathComponent("o").path, "--hidden", "16", "--unroll", "20", "--steps", "2"])
        XCTAssertEqual(o.status, 0, o.stderr)
        XCTAssertFalse(o.stdout.contains("lookback"), o.stdout)
        XCTAssertFalse(o.stdout.contains("input noise"), o.stdout)
        let mo = try metadata("o", step: 2)
        XCTAssertEqual(mo["optimizer"], "sgd")
        XCTAssertEqual(mo["batch_size"], "1")
        XCTAssertEqual(mo["learning_rate"], "1.0")
        XCTAssertNil(mo["early_stop"])
        XCTAssertNil(mo["input_noise"])

        let resumed = try CLI.run(["train", "--resume", root.appendingPathComponent("g/ckpt-2.h5").path, "--recipe", "groove"])
        XCTAssertEqual(resumed.status, 64)
        XCTAssertTrue(resumed.stderr.contains("--recipe groove cannot be combined with --resume"), resumed.stderr)
    }

    /// --help gives each setting's default under the default recipe and, where the recipe
    /// changes it, the 2017 one; the texts come from the settings table.
    func testHelpShowsTheRecipeDefaults() throws {
        let help = try CLI.run(["train", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for line in ["--lr <lr> Learning rate (default 0.002; --recipe original: 1.0)",
                     "--batch-size <batch-size> Contiguous streams B trained together (default 16; --recipe original: 1)",
                     "--steps <steps> Global step to train until (off: until interrupted) (default 6000; --recipe original: off)",
                     "--hidden <hidden> Hidden size H of every LSTM layer (default 200)",
                     "--early-stop/--no-early-stop"] {
            XCTAssertTrue(help.contains(line), "missing: \(line)\n\(help)")
        }
    }
}
