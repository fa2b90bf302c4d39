// `drummer train --recipe grid` end to end through the built binary: train on three
// Groove files (a 5/4 one left out), resume bit for bit, export (model.json's grid tables),
// sample (exact hit counts, bars, the classes' own notes, one seed one file, checkpoint and
// export alike), eval, and what a grid model refuses.
import Checkpoints
import Foundation
import CKernels
import XCTest

final class GridCLITests: XCTestCase {
    var root: URL!
    var data: URL!

    override func setUpWithError() throws {
        root = try CLI.temporaryDirectory("grid-cli")
        data = root.appendingPathComponent("data")
        let r = try CLI.run(["convert-midi", CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src").path, "-o", data.path,
                             "--quantize", "30", "--onset-order", "note"])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    func train(_ dir: String, _ extra: [String]) throws -> CLIResult {
        try CLI.run(["train", "--recipe", "grid", "--data", data.path, "--hidden", "8", "--unroll", "8", "--batch-size", "2",
                     "--checkpoint-every", "3", "--eval-every", "3", "--checkpoint-dir", root.appendingPathComponent(dir).path] + extra)
    }

    /// Ctrl-C while `train -o MODEL` chooses the step (sampling the checkpoints, minutes on a real
    /// run) was noticed only after the export had replaced MODEL, exit 0. It ends the command at
    /// once: MODEL as it was, status 130, and the line saying how to choose and export later.
    func testCtrlCWhileChoosingExportsNothing() throws {
        let model = root.appendingPathComponent("model")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        let run = try BackgroundRun(["train", "--recipe", "grid", "--data", data.path, "--hidden", "8", "--unroll", "8",
                                     "--batch-size", "2", "--checkpoint-every", "3", "--eval-every", "3", "--steps", "6",
                                     "--checkpoint-dir", root.appendingPathComponent("c").path, "-o", model.path], in: root)
        XCTAssertTrue(run.wait(for: "choose-step: 2 checkpoints of", seconds: 120), run.stdoutText)
        run.signal(SIGINT)
        let (status, _, err) = try run.finish()
        XCTAssertEqual(status, 130, err)
        let last = root.appendingPathComponent("c/ckpt-6.h5").path
        XCTAssertTrue(err.contains("drummer: interrupted: nothing exported to \(model.path); drummer train --resume \(last) -o \(model.path) "
                                   + "chooses the step and exports"), err)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: model.path), [], "the model directory as it was")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.contains("drummer-tmp") }, [])
        // What the line says does it: nothing to train, then the choice and the export.
        let resumed = try CLI.run(["train", "--resume", last, "-o", model.path])
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        XCTAssertTrue(resumed.stdout.contains("nothing to train"), resumed.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: model.appendingPathComponent("model.json").path))
    }

    /// `train -o MODEL`: after the run, the checkpoints of its second half play files measured
    /// against the training data, the rule (or the closest) chooses one and it is exported, as
    /// `choose-step --structure --closest --export` of the same checkpoints does; the model plays.
    func testTrainDashOChoosesAStepAndExports() throws {
        let model = root.appendingPathComponent("model").path
        let r = try train("o", ["--steps", "6", "-o", model])
        XCTAssertEqual(r.status, 0, r.stderr)
        // The estimate counts the choice: the 2 checkpoints of the second half (3 and 6).
        let estimate = try XCTUnwrap(r.stdout.split(separator: "\n").first { $0.hasPrefix("estimate: ") }, r.stdout)
        XCTAssertNotNil(estimate.range(of: #"; then -o plays 2 checkpoints to choose one: about [0-9hms ]+ \(up to [0-9hms ]+ when none meets the rule as the model plays\)$"#,
                                       options: .regularExpression), String(estimate))
        XCTAssertTrue(r.stdout.contains("choose-step: 2 checkpoints of \(root.appendingPathComponent("o").path), 100 files × 1000 hits each "
                                        + "(seeds 30001…30100), against \(data.path)"), r.stdout)
        XCTAssertTrue(r.stdout.contains(ChooseStepCommandHeader.text), r.stdout)
        let chosen = try XCTUnwrap(r.stdout.split(separator: "\n").first { $0.hasPrefix("chosen: step ") || $0.hasPrefix("no checkpoint meets the rule; closest: step ") },
                                   r.stdout)
        let step = try XCTUnwrap(chosen.split(separator: " ").first { Int($0) != nil }.flatMap { Int($0) })
        XCTAssertTrue([3, 6].contains(step), String(chosen))
        // So small a run meets no target: its checkpoints are measured again with the fill bars
        // drawn at 1.05, then 1.1, meet the rule there neither, and the closest as the model
        // plays is exported, with no sampling settings in model.json.
        for line in ["no checkpoint meets the rule as the model plays; measuring again with the fill bars drawn at temperature 1.05 (fills=1.05)",
                     "temperature: fills=1.05 (as sample --temperature)",
                     "no checkpoint meets the rule there; measuring again with the fill bars drawn at temperature 1.1 (fills=1.1)",
                     "temperature: fills=1.1 (as sample --temperature)", "none meets it there either; the closest as the model plays:"] {
            XCTAssertTrue(r.stdout.contains("\n" + line + "\n"), "\(line)\n\(r.stdout)")
        }
        XCTAssertEqual(r.stdout.components(separatedBy: ChooseStepCommandHeader.text).count, 4, "three tables: \(r.stdout)")
        XCTAssertTrue(r.stdout.contains("exported \(root.appendingPathComponent("o/ckpt-\(step).h5").path) (step \(step)) to \(model)"), r.stdout)
        // The same choice as choose-step's, and the export its checkpoint's.
        let c = try CLI.run(["choose-step", root.appendingPathComponent("o").path, "--reference", data.path, "--from", "3",
                             "--count", "100", "--seed", "30001", "--structure", "--closest"])
        XCTAssertEqual(c.stdout.split(separator: "\n").filter { $0.hasPrefix("chosen") || $0.hasPrefix("no checkpoint") },
                       [chosen], c.stdout)
        let again = root.appendingPathComponent("again").path
        XCTAssertEqual(try CLI.run(["export", root.appendingPathComponent("o/ckpt-\(step).h5").path, "-o", again]).status, 0)
        for file in ["Wx.bin", "Wx1.bin", "Wy.bin"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: model + "/" + file)),
                           try Data(contentsOf: URL(fileURLWithPath: again + "/" + file)), file)
        }
        let manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: model + "/model.json"))) as? [String: Any])
        XCTAssertNil(manifest["sampling"], "the closest as the model plays carries no temperatures")
        let s = try CLI.run(["sample", model, "-n", "50", "--seed", "1", "-o", root.appendingPathComponent("o.mid").path])
        XCTAssertEqual(s.status, 0, s.stderr)
        checkRefused(try train("z5", ["--steps", "1", "-o", ""]), "-o must name a model directory", wrote: "z5")
        // An -o the export would refuse is refused before the run: no checkpoint written.
        let file = root.appendingPathComponent("a-file").path
        try Data("mine".utf8).write(to: URL(fileURLWithPath: file))
        let refused = try train("z6", ["--steps", "1", "-o", file])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        checkRefused(refused, "\(file): exists and is not a directory", wrote: "z6")
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), "mine")
    }

    /// A grid run's log: the accuracy columns are the hit set's (the first group's), the figure
    /// the evaluation line prints, so that a report's "validation accuracy" is that.
    func testTheLogsAccuracyIsTheHitSets() throws {
        let r = try train("acc", ["--steps", "3", "--log-every", "1"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let log = try String(contentsOf: root.appendingPathComponent("acc/train_log.csv"), encoding: .utf8)
        let rows = log.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let header = rows[0]
        let evaluated = try XCTUnwrap(rows.dropFirst().last { !$0[header.firstIndex(of: "train_loss")!].isEmpty })
        for side in ["train", "validation"] where !evaluated[header.firstIndex(of: "\(side)_loss")!].isEmpty {
            let all = try XCTUnwrap(Double(evaluated[header.firstIndex(of: "\(side)_accuracy")!]))
            let hitSet = try XCTUnwrap(Double(evaluated[header.firstIndex(of: "\(side)_accuracy_note")!]))
            XCTAssertEqual(all, hitSet, side)
        }
        let printed = try XCTUnwrap(r.stdout.split(separator: "\n").last { $0.hasPrefix("eval step 3") })
        XCTAssertTrue(printed.contains(String(format: "accuracy %.4f", Double(evaluated[header.firstIndex(of: "train_accuracy")!])!)), String(printed))
        XCTAssertGreaterThan(Double(evaluated[header.firstIndex(of: "train_accuracy")!])!, 0, "the hit set's, not both first groups'")

        // A grid run's smoothed loss starts at its first step's loss (the 2017 layout's uniform
        // guess over every output group is about ten times it), then moves by 0.1% a step.
        let first = try XCTUnwrap(rows.dropFirst().first { $0[0] == "1" }, log)
        let stepLoss = try XCTUnwrap(Double(first[header.firstIndex(of: "step_loss")!]))
        XCTAssertEqual(try XCTUnwrap(Double(first[header.firstIndex(of: "smoothed_loss")!])), stepLoss, accuracy: 1e-5)
    }

    /// A grid run given no --styles takes a style input from the data when it carries two styles
    /// of 10 files or more (here the folders a/ and b/, 10 files each), says which in one line,
    /// and none otherwise (the fixture's 3 files) or with --styles none.
    func testStylesComeFromTheData() throws {
        let src = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session1")
        let files = try FileManager.default.contentsOfDirectory(atPath: src.path).filter { $0.hasSuffix(".mid") }.sorted()
        let folders = root.appendingPathComponent("folders")
        for style in ["a", "b"] {
            let dir = folders.appendingPathComponent(style)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for i in 0..<10 {
                try FileManager.default.copyItem(at: src.appendingPathComponent(files[i % 2]), to: dir.appendingPathComponent("beat\(i).mid"))
            }
        }
        let styled = root.appendingPathComponent("styled-data").path
        XCTAssertEqual(try CLI.run(["convert-midi", folders.path, "-o", styled, "--quantize", "30"]).status, 0)
        func run(_ dir: String, _ data: String, _ extra: [String] = []) throws -> CLIResult {
            try CLI.run(["train", "--recipe", "grid", "--data", data, "--hidden", "8", "--unroll", "8", "--batch-size", "2",
                         "--steps", "1", "--checkpoint-dir", root.appendingPathComponent(dir).path] + extra)
        }
        let found = try run("st1", styled)
        XCTAssertEqual(found.status, 0, found.stderr)
        XCTAssertTrue(found.stdout.contains("styles: from the data (the folders the files lie in): 2 styles of 10 training files or more, "
                                            + "the rest \"other\" (--styles folders; --styles none leaves it out)"), found.stdout)
        XCTAssertTrue(found.stdout.contains(", style 3"), "a style input of a, b and other: \(found.stdout)")
        let none = try run("st2", styled, ["--styles", "none"])
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertFalse(none.stdout.contains("styles: "), none.stdout)
        XCTAssertFalse(none.stdout.contains(", style "), none.stdout)
        let few = try run("st3", data.path)
        XCTAssertTrue(few.stdout.contains("styles: none (the data's names and folders give fewer than two styles of 10 training files "
                                          + "or more; --styles chooses a rule)"), few.stdout)
    }

    func testTrainResumeExportSampleEval() throws {
        let straight = try train("a", ["--steps", "6"])
        XCTAssertEqual(straight.status, 0, straight.stderr)
        XCTAssertTrue(straight.stdout.contains("grid training: 3 files in 4/4, "), straight.stdout)
        XCTAssertTrue(straight.stdout.contains("1 file left out (first: drummer1/session2/111_rock-prog_110_beat_5-4.mid: meter 5/4)"), straight.stdout)
        XCTAssertTrue(straight.stdout.contains("inputs hits 513, velocity_kick "), straight.stdout)
        XCTAssertTrue(straight.stdout.contains("2 layers of 8"), "the grid recipe's two layers: \(straight.stdout)")
        XCTAssertTrue(straight.stdout.contains("eval step 6: train (every file: 3 of 3 files, "), straight.stdout)
        let half = try train("b", ["--steps", "3"])
        XCTAssertEqual(half.status, 0, half.stderr)
        let resumed = try CLI.run(["train", "--resume", root.appendingPathComponent("b/ckpt-3.h5").path, "--steps", "6"])
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        var weights: [Data] = []
        for run in ["a", "b"] {
            let out = root.appendingPathComponent("m-" + run).path
            let e = try CLI.run(["export", root.appendingPathComponent(run + "/ckpt-6.h5").path, "-o", out])
            XCTAssertEqual(e.status, 0, e.stderr)
            XCTAssertTrue(e.stdout.contains("(grid layout: 512 hit sets, hidden 8, 2 layers)"), e.stdout)
            weights.append(try ["Wx.bin", "Wx1.bin", "Wy.bin"].reduce(Data()) { $0 + (try Data(contentsOf: URL(fileURLWithPath: out + "/" + $1))) })
        }
        XCTAssertEqual(weights[0], weights[1], "the resumed run's weights equal the straight run's")

        let model = root.appendingPathComponent("m-a").path
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: model + "/model.json"))) as? [String: Any])
        let groups = try XCTUnwrap(json["groups"] as? [String: Any])
        let grid = try XCTUnwrap(groups["grid"] as? [String: Any])
        XCTAssertNil(groups["position"])
        XCTAssertEqual(grid["offsets"] as? [Int], [-60, -30, 0, 30], "--quantize 30: four offset bins, each at its one value")
        let noteCounts = try XCTUnwrap(grid["note_counts"] as? [[Int]])
        XCTAssertEqual(noteCounts.map(\.count), [Int](repeating: 128, count: 9))
        let coupling = try XCTUnwrap(grid["offset_coupling"] as? Double)
        XCTAssertTrue(coupling >= 0 && coupling <= 1, "\(coupling)")
        XCTAssertEqual((groups["outputs"] as? [[String: Any]])?.first?["name"] as? String, "hits")
        XCTAssertEqual(grid["lookback"] as? String, "velocities", "new runs read the bars back per class with their velocity bins")
        let inputs = try XCTUnwrap(groups["inputs"] as? [[String: Any]])
        let velocityBins = try XCTUnwrap((grid["velocity"] as? [String: Any])?["bins"] as? [Any]).count
        XCTAssertEqual(inputs.filter { ($0["name"] as? String)?.hasPrefix("lookback_") == true }.map { $0["size"] as? Int },
                       [Int?](repeating: velocityBins + 2, count: 27), "each class's bin one, two and four bars back, not hit, before the start")
        XCTAssertEqual(grid["lookback_bars"] as? [Int], [1, 2, 4], "the recipe's bars back")

        // Exactly -n hits, in onset order; notes of the classes the training data played.
        let played = Set(noteCounts.flatMap { row in row.indices.filter { row[$0] > 0 } })
        let s1 = root.appendingPathComponent("s1.mid").path
        var r = try CLI.run(["sample", model, "-n", "300", "--seed", "5", "-o", s1, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let out = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let events = try XCTUnwrap(((out["files"] as? [[String: Any]])?.first?["events"]) as? [[Int]])
        XCTAssertEqual(events.count, 300)
        XCTAssertTrue(events.allSatisfy { $0[1] >= 0 }, "onsets never go back")
        XCTAssertTrue(Set(events.map { $0[0] }).isSubset(of: played.map { $0 == 22 ? 42 : $0 == 26 ? 46 : $0 }), "notes: \(Set(events.map { $0[0] }))")
        // The checkpoint samples the same file as its export; the same seed, the same bytes.
        let s2 = root.appendingPathComponent("s2.mid").path, s3 = root.appendingPathComponent("s3.mid").path
        r = try CLI.run(["sample", root.appendingPathComponent("a/ckpt-6.h5").path, "-n", "300", "--seed", "5", "-o", s2])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(["sample", model, "-n", "300", "--seed", "5", "-o", s3])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: s1)), try Data(contentsOf: URL(fileURLWithPath: s2)))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: s1)), try Data(contentsOf: URL(fileURLWithPath: s3)))
        // --bars: the file ends at the bar line.
        let bars = root.appendingPathComponent("bars.mid").path
        r = try CLI.run(["sample", model, "--bars", "4", "--seed", "2", "-o", bars, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let barEvents = try XCTUnwrap(((try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])["files"]
            as? [[String: Any]])?.first?["events"]) as? [[Int]])
        let lastOnset = barEvents.reduce(0) { $0 + $1[1] }
        XCTAssertTrue((3 * 1920..<4 * 1920).contains(lastOnset), "the last hit lies in bar 4: \(lastOnset)")
        // Temperatures by the grid's groups; the 2017 layout's names are refused.
        r = try CLI.run(["sample", model, "-n", "50", "--seed", "1", "--temperature", "hits=0.8,velocity=1,offset=0.5", "-o", bars])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(["sample", model, "-n", "50", "--temperature", "note=0.8", "-o", bars])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--temperature names note, which this model does not predict (its temperature groups: hits, velocity, offset, fills)"), r.stderr)
        // A primer: its last 2 bars read as steps and kept at the start; 2 bars follow.
        let beatFile = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session1/100_neworleans-secondline_94_beat_4-4.mid").path
        r = try CLI.run(["sample", model, "--primer", beatFile, "--keep-primer", "--bars", "2", "--seed", "3", "-o", bars, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let primed = try XCTUnwrap(((try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])["files"]
            as? [[String: Any]])?.first?["events"]) as? [[Int]])
        let said = try CLI.run(["sample", model, "--primer", beatFile, "--keep-primer", "--bars", "2", "--seed", "3", "-o", bars])
        XCTAssertTrue(said.stdout.contains("primer \(beatFile): ") && said.stdout.contains("(its last 2 bar(s) of "), said.stdout)
        let kept = Int(try XCTUnwrap(said.stdout.split(separator: "\n").first { $0.hasPrefix("primer ") }?
            .split(separator: ":").last?.split(separator: " ").first))!
        XCTAssertGreaterThan(primed.count, kept, "hits follow the primer's \(kept)")
        XCTAssertTrue(primed.allSatisfy { $0[1] >= 0 })
        // A grid model humanizes: every hit kept, on its 16th give or take half of one.
        let human = root.appendingPathComponent("human.mid").path
        r = try CLI.run(["humanize", beatFile, "--model", model, "--seed", "4", "-o", human])
        XCTAssertEqual(r.status, 0, r.stderr)
        // A performance, not a stiff beat: its hits off the 16th grid are said to be read on it.
        XCTAssertTrue(r.stdout.hasPrefix("note: ") && r.stdout.contains("hits lie off the 16th grid"), r.stdout)
        XCTAssertTrue(r.stdout.contains("\nhumanized \(beatFile): "), r.stdout)
        let before = try CLI.run(["tab", beatFile]), after = try CLI.run(["tab", human])
        func hitCount(_ t: String) -> String? { t.split(separator: "\n").first?.split(separator: ",").last.map(String.init) }
        XCTAssertEqual(hitCount(before.stdout), hitCount(after.stdout), after.stdout)

        // eval: the dataset, a 4/4 file, and a 5/4 file it cannot read.
        r = try CLI.run(["eval", model, "--data", data.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("model \(model): grid layout, hidden size 8"), r.stdout)
        XCTAssertTrue(r.stdout.contains("nats per step (hit set + velocity and offset of each hit)"), r.stdout)
        XCTAssertTrue(r.stdout.contains("hits per bar by class, the model reading the data: predicted / data\n  kick "), r.stdout)
        XCTAssertTrue(r.stdout.contains("\n  all "), r.stdout)
        XCTAssertTrue(r.stdout.contains("velocity by class, the model reading the data (mean of the bins' midpoints): predicted / data, hits\n  kick "),
                      r.stdout)
        // A grid model reads each of the 3 kept files from a zero state, --each-file or not: no
        // prediction from one file to the next (a row fewer than the file's rows each).
        func predictions(_ out: String) -> Int? {
            out.split(separator: "\n").first { $0.hasPrefix("predictions ") }.flatMap { Int($0.split(separator: " ")[1]) }
        }
        XCTAssertTrue(r.stdout.contains("data \(data.path) (3 files, each from a zero state; 1 left out)"), r.stdout)
        let each = try XCTUnwrap(predictions(r.stdout), r.stdout)
        r = try CLI.run(["eval", model, "--data", data.path, "--each-file"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("data \(data.path) (3 files, each from a zero state; 1 left out)"), r.stdout)
        XCTAssertEqual(predictions(r.stdout), each, r.stdout)
        // A file of S 16th steps has S + 1 rows (its start row first) and makes S predictions:
        // the training split's steps, as the run counted them.
        let counted = straight.stdout.components(separatedBy: "grid training: 3 files in 4/4, ").dropFirst().first?
            .split(separator: " ").first.flatMap { Int($0) }
        XCTAssertEqual(each, try XCTUnwrap(counted, straight.stdout))
        // A 2017-layout model's files are the manifest's four (the 5/4 one too).
        let originalRun = root.appendingPathComponent("ev")
        let noteAndTick = try OriginalLayoutCLITests.noteAndTickCopy(of: data, to: root.appendingPathComponent("note-tick"))
        r = try CLI.run(["train", "--recipe", "original", "--data", noteAndTick.path, "--hidden", "8", "--unroll", "8", "--steps", "1",
                         "--checkpoint-dir", originalRun.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(["eval", originalRun.appendingPathComponent("ckpt-1.h5").path, "--data", data.path])
        let originalWhole = try XCTUnwrap(predictions(r.stdout), r.stdout + r.stderr)
        r = try CLI.run(["eval", originalRun.appendingPathComponent("ckpt-1.h5").path, "--data", data.path, "--each-file"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("(4 files, each from a zero state)"), r.stdout)
        XCTAssertEqual(predictions(r.stdout), originalWhole - 3, r.stdout)
        // An original X.npy dataset lists no files: refused, naming it.
        let onehot = root.appendingPathComponent("onehot"), xOnly = root.appendingPathComponent("x-only")
        r = try CLI.run(["convert-midi", CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src").path, "-o", onehot.path,
                         "--quantize", "30", "--onset-order", "note", "--onehot"])
        XCTAssertEqual(r.status, 0, r.stderr)
        try FileManager.default.createDirectory(at: xOnly, withIntermediateDirectories: true)
        for name in ["X.npy", "vocab.json"] {
            try FileManager.default.copyItem(at: onehot.appendingPathComponent(name), to: xOnly.appendingPathComponent(name))
        }
        r = try CLI.run(["eval", originalRun.appendingPathComponent("ckpt-1.h5").path, "--data", xOnly.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(["eval", originalRun.appendingPathComponent("ckpt-1.h5").path, "--data", xOnly.path, "--each-file"])
        XCTAssertEqual(r.status, 1, r.stdout)
        XCTAssertTrue(r.stderr.contains("\(xOnly.path): lists no files (no manifest.json, as in an original X.npy dataset): --each-file cuts"), r.stderr)

        // A dataset's validation split (DIR/validation) is read through DIR's manifest; --json adds velocity_by_class.
        let split = root.appendingPathComponent("split")
        r = try CLI.run(["convert-midi", CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src").path, "-o", split.path,
                         "--quantize", "30", "--onset-order", "note", "--validation-fraction", "0.3"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(["eval", model, "--data", split.appendingPathComponent("validation").path, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let evaluated = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertNotNil(evaluated["loss"], r.stdout)
        // The grid's keys, as its text output names them: no note, tick or joint figures of the 2017 layout.
        XCTAssertEqual(Set(evaluated.keys), ["events", "loss", "loss_all", "loss_hits", "accuracy_hits", "hits_by_class",
                                             "velocity_by_class", "files", "left_out"])
        // The split's 5/4 file is left out, and said so (it was dropped unsaid).
        XCTAssertEqual(evaluated["files"] as? Int, 2)
        XCTAssertEqual((evaluated["left_out"] as? [[String: String]])?.map { $0["path"] ?? "" }, ["drummer1/session2/111_rock-prog_110_beat_5-4.mid"])
        XCTAssertTrue(r.stderr.contains("note: 1 file of \(split.appendingPathComponent("validation").path) left out: "
                                        + "drummer1/session2/111_rock-prog_110_beat_5-4.mid: meter 5/4\n"), r.stderr)
        XCTAssertEqual(evaluated["loss_all"] as? Double ?? .nan, evaluated["loss"] as? Double ?? .nan, accuracy: 1e-9)
        XCTAssertTrue((0.0...1.0).contains(evaluated["accuracy_hits"] as? Double ?? -1), r.stdout)
        XCTAssertLessThan(evaluated["loss_hits"] as? Double ?? .nan, evaluated["loss"] as? Double ?? .nan)
        // A split whose dataset lost its manifest.json: the error names that file (it named
        // validation/manifest.json); an events.npy that is a directory says so.
        let bare = root.appendingPathComponent("bare")
        try FileManager.default.copyItem(at: split, to: bare)
        try FileManager.default.removeItem(at: bare.appendingPathComponent("manifest.json"))
        let noManifest = try CLI.run(["eval", model, "--data", bare.appendingPathComponent("validation").path])
        XCTAssertEqual(noManifest.status, 1, noManifest.stderr)
        XCTAssertEqual(noManifest.stderr, "error: \(bare.appendingPathComponent("manifest.json").path): no such file: a grid model reads "
                       + "the validation split's files from its dataset's manifest.json; convert the dataset again with this drummer\n")
        let hollow = root.appendingPathComponent("hollow")
        try FileManager.default.copyItem(at: split, to: hollow)
        let hollowEvents = hollow.appendingPathComponent("events.npy")
        try FileManager.default.removeItem(at: hollowEvents)
        try FileManager.default.createDirectory(at: hollowEvents, withIntermediateDirectories: false)
        let directory = try CLI.run(["eval", model, "--data", hollow.appendingPathComponent("validation").path])
        XCTAssertEqual(directory.status, 1, directory.stderr)
        XCTAssertTrue(directory.stderr.contains("\(hollowEvents.path): byte 0: cannot read: is a directory"), directory.stderr)
        let hitsByClass = try XCTUnwrap(evaluated["hits_by_class"] as? [[String: Any]], r.stdout)
        XCTAssertEqual(hitsByClass.compactMap { $0["class"] as? String }, GridGroupNames.all)
        for h in hitsByClass {
            for key in ["predicted", "data"] {
                XCTAssertTrue((0.0...16.0).contains((h[key] as? NSNumber)?.doubleValue ?? -1), "\(key) \(h)")
            }
        }
        XCTAssertGreaterThan(hitsByClass.compactMap { ($0["data"] as? NSNumber)?.doubleValue }.reduce(0, +), 0)
        let byClass = try XCTUnwrap(evaluated["velocity_by_class"] as? [[String: Any]], r.stdout)
        XCTAssertFalse(byClass.isEmpty)
        for v in byClass {
            XCTAssertTrue(GridGroupNames.all.contains(v["class"] as? String ?? ""), "\(v)")
            XCTAssertGreaterThan(v["hits"] as? Int ?? 0, 0)
            for key in ["predicted", "data"] {
                XCTAssertTrue((1.0...127.0).contains((v[key] as? NSNumber)?.doubleValue ?? 0), "\(key) \(v)")
            }
        }
        let src = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1")
        r = try CLI.run(["eval", model, "--data", src.appendingPathComponent("session1/103_funk_95_fill_4-4.mid").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(["eval", model, "--data", src.appendingPathComponent("session2/111_rock-prog_110_beat_5-4.mid").path])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("111_rock-prog_110_beat_5-4.mid: the grid model reads 4/4 beats only (a pickup and a shorter last bar allowed): hit 0 (at tick 0 from the file's start, 480 ticks per quarter note) lies in a bar of 2400 ticks, not 4/4's 1920"), r.stderr)
    }

    /// Exports run `dir`'s step-6 checkpoint: its two layers' Wx and Wy, and the model directory.
    func exportedWeights(_ dir: String, step: Int = 6) throws -> (weights: Data, model: String) {
        let out = root.appendingPathComponent("m-" + dir).path
        let e = try CLI.run(["export", root.appendingPathComponent(dir + "/ckpt-\(step).h5").path, "-o", out])
        XCTAssertEqual(e.status, 0, e.stderr)
        return (try ["Wx.bin", "Wx1.bin", "Wy.bin"].reduce(Data()) { $0 + (try Data(contentsOf: URL(fileURLWithPath: out + "/" + $1))) }, out)
    }

    /// A grid training flag fixed for a run (`flag`): the first line's training split names it
    /// (`line`, once), a resumed run keeps it bit for bit, model.json's metadata lists it
    /// (`key`: "on"), it trains another model than without it; refused with the 2017 layout
    /// and when resuming a run trained without it (`noun`: the setting as the refusal names it).
    /// `train` runs a grid training into a directory of `root`.
    func checkFixedGridFlag(_ flag: String, line: String, key: String, noun: String, changesTheModel: Bool = true,
                            steps: Int = 6, train: (String, [String]) throws -> CLIResult) throws {
        let half = steps / 2
        let straight = try train("f1", ["--steps", "\(steps)", flag])
        XCTAssertEqual(straight.status, 0, straight.stderr)
        XCTAssertTrue(straight.stdout.contains("grid training: 3 files in 4/4 \(line), "), straight.stdout)
        XCTAssertEqual(straight.stdout.components(separatedBy: line).count, 2, "the training line only: \(straight.stdout)")
        let first = try train("f2", ["--steps", "\(half)", flag])
        XCTAssertEqual(first.status, 0, first.stderr)
        let resumed = try CLI.run(["train", "--resume", root.appendingPathComponent("f2/ckpt-\(half).h5").path, "--steps", "\(steps)"])
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        XCTAssertTrue(resumed.stdout.contains("grid training: 3 files in 4/4 \(line), "), resumed.stdout)
        let plain = try train("f3", ["--steps", "\(steps)"])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        var weights: [Data] = []
        for run in ["f1", "f2", "f3"] {
            let (w, out) = try exportedWeights(run, step: steps)
            weights.append(w)
            XCTAssertEqual(try CLI.modelMetadata(out)[key], run == "f3" ? nil : "on", run)
        }
        XCTAssertEqual(weights[0], weights[1], "the resumed run's weights equal the straight run's")
        if changesTheModel { XCTAssertNotEqual(weights[0], weights[2], "\(flag) changed what was trained") }

        let r = try CLI.run(["train", "--resume", root.appendingPathComponent("f3/ckpt-\(half).h5").path, "--steps", "\(steps)", flag])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("\(flag) on differs from the checkpoint's \(noun) off"), r.stderr)
        checkRefused(try CLI.run(["train", "--recipe", "original", "--data", data.path, flag, "--steps", "1",
                                  "--checkpoint-dir", root.appendingPathComponent("z").path]),
                     "\(flag) needs ", wrote: "z")
    }

    /// --shuffle-files: the training files in an order shuffled with the seed.
    func testShuffleFilesResumesBitForBit() throws {
        try checkFixedGridFlag("--shuffle-files", line: "(shuffled with seed 3)", key: "shuffle_files", noun: "shuffle files", train: train)
    }

    /// A refused run: a non-zero exit, `message` in its error, nothing written into `dir` under root.
    func checkRefused(_ r: CLIResult, _ message: String, wrote dir: String, file: StaticString = #filePath, line: UInt = #line) {
        assertRefused(r, message, nothingAt: root.appendingPathComponent(dir).path, file: file, line: line)
    }

    /// --weight-decay (a regularizer against the grid runs' over-fitting): trains another model,
    /// is listed in model.json's metadata; out of range refused.
    func testWeightDecay() throws {
        let decayed = try train("r1", ["--steps", "6", "--weight-decay", "0.5"])
        XCTAssertEqual(decayed.status, 0, decayed.stderr)
        XCTAssertTrue(decayed.stdout.contains("regularization: dropout 0.3 between the layers, weight decay 0.5 (decoupled) (training only)"),
                      decayed.stdout)
        let plain = try train("r2", ["--steps", "6"])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        let (w1, out) = try exportedWeights("r1"), (w2, out2) = try exportedWeights("r2")
        XCTAssertNotEqual(w1, w2, "the weight decay changed what was trained")
        XCTAssertEqual(try CLI.modelMetadata(out)["weight_decay"], "0.5")
        XCTAssertNil(try CLI.modelMetadata(out2)["weight_decay"], "no decay, not listed")
        checkRefused(try train("z6", ["--steps", "1", "--weight-decay", "-0.1"]), "--weight-decay must not be negative (0 = off), got -0.1", wrote: "z6")
        checkRefused(try train("z7", ["--steps", "1", "--lr", "0.1", "--weight-decay", "10"]),
                     "--weight-decay times --lr must be below 1", wrote: "z7")
    }

    /// The kernels' AVX2 level trains the AVX-512 level's bits: with OpenBLAS's kernels the
    /// same (OPENBLAS_CORETYPE=SkylakeX on both), DRUMMER_MAX_ISA=avx2 exports the same weights
    /// byte for byte: an AVX2-only CPU's run differs from an AVX-512 one's only by OpenBLAS.
    /// (16 streams: two stream groups of 8, on the kernels' own recurrent product.)
    func testTheAVX2LevelTrainsTheAVX512LevelsBits() throws {
        try XCTSkipUnless(drummer_kernels_cpu_isa() == Int32(DRUMMER_ISA_AVX512), "this CPU has no AVX-512")
        for (dir, isa) in [("k512", "avx512"), ("k2", "avx2")] {
            let r = try CLI.run(["train", "--recipe", "grid", "--data", data.path, "--hidden", "8", "--unroll", "8",
                                 "--batch-size", "16", "--steps", "6", "--checkpoint-every", "3", "--eval-every", "3",
                                 "--checkpoint-dir", root.appendingPathComponent(dir).path],
                                environment: ["DRUMMER_MAX_ISA": isa, "OPENBLAS_CORETYPE": "SkylakeX"])
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let (w512, _) = try exportedWeights("k512"), (w2, _) = try exportedWeights("k2")
        XCTAssertFalse(w512.isEmpty)
        XCTAssertEqual(w512, w2, "the AVX2 kernels trained other weights than the AVX-512 ones")
    }

    /// choose-step measures the checkpoints it can: one whose files cannot be played (here a
    /// copy whose hit-set bias makes every step a rest, so that it goes silent) gets a row naming
    /// the file, its seed and why, and is neither chosen nor the closest; with no other
    /// checkpoint nothing is chosen.
    func testChooseStepGoesOnPastACheckpointThatGoesSilent() throws {
        let t = try train("q", ["--steps", "3"])
        XCTAssertEqual(t.status, 0, t.stderr)
        let dir = root.appendingPathComponent("q").path
        var silent = try Checkpoint.read(path: dir + "/ckpt-3.h5")
        // The hit set's empty set is the first output column; the bias is Wy's last row.
        let count = silent.state.parameters.count, outputs = silent.state.shape.outputWidth
        silent.state.parameters[count - outputs] += 1000
        silent.state.step = 6
        try silent.write(to: dir + "/ckpt-6.h5")

        var r = try CLI.run(["choose-step", dir, "--reference", data.path, "--count", "3", "-n", "50", "--seed", "5", "--closest"])
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.filter { $0.hasPrefix("   3 ") }.count, 1, r.stdout)
        XCTAssertTrue(lines.contains("   6  not measured: file 1 (seed 5): the model played no hit for 64 bars: giving up "
                                     + "(a higher temperature of the hit set, or another checkpoint, may help)  ✗"), r.stdout)
        XCTAssertTrue(r.stdout.contains("closest: step 3 (\(dir)/ckpt-3.h5)"), r.stdout)

        r = try CLI.run(["choose-step", dir, "--reference", data.path, "--count", "3", "-n", "50", "--seed", "5", "--from", "6", "--closest"])
        XCTAssertEqual(r.status, 1, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("   6  not measured: file 1 (seed 5): "), r.stdout)
        XCTAssertTrue(r.stderr.contains("error: no checkpoint meets the rule; nothing chosen"), r.stderr)
    }

}

/// The grid's class names as model.json and `eval` write them.
enum GridGroupNames {
    static let all = ["kick", "snare", "hihat_closed", "hihat_open", "tom_low", "tom_mid", "tom_high", "crash", "ride"]
}

/// choose-step's table header, as the train command prints it with -o.
enum ChooseStepCommandHeader {
    static let text = "step      periodicity  note JS  delta JS  velocity JS    grid  accent r  similarity  patterns  fill  hits/bar  velocity  margin  rule"
}
