// `drummer train --recipe`: the settings the grid recipe (the default) and the original one (the
// 2017 settings and layout) pick, --help, the refusal of --recipe with --resume, and the options
// retired with the event layout. On a dataset converted from the repository's own corpus.
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

    /// Trains 2 steps of a small model into `run` with `extra`.
    func train(_ run: String, _ extra: [String]) throws -> CLIResult {
        try CLI.run(["train", "--data", data.path, "--checkpoint-dir", root.appendingPathComponent(run).path,
                     "--hidden", "16", "--steps", "2"] + extra)
    }

    func testTheGridAndOriginalRecipes() throws {
        // Only the size is made small (and the step budget, for the test's sake).
        let t = try train("g", ["--recipe", "grid"])
        XCTAssertEqual(t.status, 0, t.stderr)
        XCTAssertTrue(t.stdout.contains("grid training: "), t.stdout)
        XCTAssertTrue(t.stdout.contains("2 layers of 16"), "the grid recipe's two layers: \(t.stdout)")
        let m = try metadata("g", step: 2)
        XCTAssertEqual(m["optimizer"], "adam")
        XCTAssertEqual(m["layers"], "2")
        // The recipe's 32 streams would read half of these 13 files' rows (129 a stream, a chunk of
        // 65 each): fitted to 31, and said.
        XCTAssertTrue(t.stdout.contains("data: the recipe's 32 streams would leave 50% of the 4152 training rows"), t.stdout)
        XCTAssertEqual(m["batch_size"], "31")
        XCTAssertEqual(m["unroll"], "64")
        XCTAssertEqual(m["learning_rate"], "0.002")
        XCTAssertEqual(m["lr_decay"], "0.5")
        XCTAssertEqual(m["lr_decay_every"], "1500")
        XCTAssertEqual(m["dropout"], "0.3")
        XCTAssertEqual(m["seed"], "3")

        // --recipe original: the 2017 settings (SGD, batch 1, one layer, no lookback).
        let o = try train("o", ["--recipe", "original", "--unroll", "20"])
        XCTAssertEqual(o.status, 0, o.stderr)
        XCTAssertFalse(o.stdout.contains("lookback"), o.stdout)
        XCTAssertFalse(o.stdout.contains("grid training"), o.stdout)
        let mo = try metadata("o", step: 2)
        XCTAssertEqual(mo["optimizer"], "sgd")
        XCTAssertEqual(mo["batch_size"], "1")
        XCTAssertEqual(mo["learning_rate"], "1.0")
        XCTAssertEqual(mo["layers"], "1")
        XCTAssertNil(mo["dropout"])
        XCTAssertNil(mo["early_stop"])

        let resumed = try CLI.run(["train", "--resume", root.appendingPathComponent("g/ckpt-2.h5").path, "--recipe", "grid"])
        XCTAssertEqual(resumed.status, 64)
        XCTAssertTrue(resumed.stderr.contains("--recipe grid cannot be combined with --resume"), resumed.stderr)
    }

    /// --help gives each setting's default under the default recipe and, where the recipe
    /// changes it, the 2017 one; the texts come from the settings table.
    func testHelpShowsTheRecipeDefaults() throws {
        let help = try CLI.run(["train", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for line in ["--lr <lr> Learning rate (default 0.002; --recipe original: 1.0)",
                     "--early-stop/--no-early-stop"] {
            XCTAssertTrue(help.contains(line), "missing: \(line)\n\(help)")
        }
    }

    // MARK: After the event layout's removal (these fail on the code before it)

    /// No --recipe is --recipe grid: the same settings in model.json and the grid's values as
    /// --help's defaults; --recipe original trains the 2017 layout (note and tick) on a dataset
    /// that has velocities and positions.
    func testTheDefaultRecipeIsTheGridAndOriginalIsThe2017Layout() throws {
        let g = try train("g", ["--recipe", "grid"]), d = try train("d", [])
        XCTAssertEqual(g.status, 0, g.stderr)
        XCTAssertEqual(d.status, 0, d.stderr)
        XCTAssertTrue(d.stdout.contains("grid training: "), d.stdout)
        let mg = try metadata("g", step: 2), md = try metadata("d", step: 2)
        for key in ["optimizer", "layers", "batch_size", "unroll", "learning_rate", "lr_decay", "lr_decay_every", "clip", "dropout"] {
            XCTAssertEqual(md[key], mg[key], key)
        }
        let help = try CLI.run(["train", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for line in ["--hidden <hidden> Hidden size H of every LSTM layer (default 256; --recipe original: 200)",
                     "--layers <layers> Stacked LSTM layers L (each of hidden size H) (default 2; --recipe original: 1)",
                     "--batch-size <batch-size> Contiguous streams B trained together (default 32; --recipe original: 1)",
                     "--steps <steps> Global step to train until (off, --recipe original's default: until interrupted; the grid recipe always has a last step) (default 10000; --recipe original: off)"] {
            XCTAssertTrue(help.contains(line), "missing: \(line)\n\(help)")
        }

        // One layer: the recipe's dropout between layers goes with the second layer; a dropout
        // given with one layer is refused, saying how to run it.
        let one = try train("one", ["--layers", "1", "--steps", "0"])
        XCTAssertEqual(one.status, 0, one.stderr)
        let dropped = try train("drop", ["--layers", "1", "--dropout", "0.3", "--steps", "0"])
        XCTAssertNotEqual(dropped.status, 0, dropped.stdout)
        XCTAssertTrue(dropped.stderr.contains("give --layers 2 or more, or --dropout 0"), dropped.stderr)

        let o = try train("o", ["--recipe", "original", "--unroll", "20"])
        XCTAssertEqual(o.status, 0, o.stderr)
        XCTAssertTrue(o.stdout.contains("groups: inputs note "), o.stdout)
        XCTAssertFalse(o.stdout.contains("position"), o.stdout)
        XCTAssertFalse(o.stdout.contains("velocity"), o.stdout)
    }

    /// The options of the event layout and the sampler's experiments are gone: argument-parser
    /// names them unknown, and --recipe groove is not a recipe. (Each run is given a step budget
    /// of 0 and a directory of its own, so that the code before the removal, which takes them,
    /// writes nothing outside the test's directory.)
    func testRetiredOptionsAreUnknown() throws {
        let grid = CLI.repoRoot.appendingPathComponent("models/groove").path
        let out = root.appendingPathComponent("x.mid").path, ck = root.appendingPathComponent("x").path
        let train = ["train", "--data", data.path, "--steps", "0", "--checkpoint-dir", ck]
        for (args, option, path) in [(train + ["--recipe", "grid", "--lookback"], "--lookback", ck),
                                     (train + ["--recipe", "original", "--input-noise", "0.2"], "--input-noise", ck),
                                     (train + ["--recipe", "grid", "--grid-lookback-bars", "1,2,4"], "--grid-lookback-bars", ck),
                                     (["sample", grid, "-n", "10", "--top-p", "0.9", "-o", out], "--top-p", out),
                                     (["sample", grid, "-n", "10", "--warmup-bars", "2", "-o", out], "--warmup-bars", out)] {
            assertRefused(try CLI.run(args), "Unknown option '\(option)'", status: 64, nothingAt: path)
        }
        assertRefused(try CLI.run(train + ["--recipe", "groove"]), "The value 'groove' is invalid for '--recipe <recipe>'",
                      status: 64, nothingAt: ck)
    }

    /// One drummer, one recipe: `train` offers at most 30 options and `sample` at most 15 (-h and
    /// --version not counted), each listed once in --help. The counts are the user's surface: a
    /// lever that does not ship does not get a flag (docs/research.md keeps its figures).
    func testOptionCounts() throws {
        for (command, limit, expected) in [("train", 30, ["--data", "--recipe", "--styles", "--resume", "--output", "--steps",
                                                          "--lr", "--dropout", "--early-stop", "--shuffle-files"]),
                                           ("sample", 15, ["--notes", "--bars", "--primer", "--style", "--temperature",
                                                           "--seed", "--count", "--output", "--wav", "--json"])] {
            let r = try CLI.run([command, "--help"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let options = r.stdout.split(separator: "\n").filter { $0.hasPrefix("  -") }.compactMap { line -> String? in
                // "  -o, --output <model> …", "  --early-stop/--no-early-stop", "  --lr <lr> …": the long name.
                line.split(separator: " ").map(String.init).first { $0.hasPrefix("--") }?.components(separatedBy: "/").first
            }.filter { $0 != "--help" && $0 != "--version" }
            XCTAssertEqual(Set(options).count, options.count, "\(command): an option listed twice: \(options)")
            XCTAssertLessThanOrEqual(options.count, limit, "\(command) has \(options.count) options: \(options)")
            for name in expected { XCTAssertTrue(options.contains(name), "\(command) lacks \(name): \(options)") }
        }
    }
}
