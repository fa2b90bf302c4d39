// `drummer train` and `drummer eval` end to end with the built binary: Ctrl-C
// and SIGTERM save and exit 0, refused resume flags, eval's JSON.
import Foundation
import XCTest

final class TrainCLITests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws {
        root = try CLI.temporaryDirectory("train-cli")
        try Self.writeDataset(root.appendingPathComponent("data"), count: 120)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    /// events.npy (int32 [count, 2], numpy v1.0 layout) and vocab.json: 4 notes, 5 ticks.
    static func writeDataset(_ dir: URL, count: Int) throws {
        let pattern: [(Int32, Int32)] = [(0, 2), (2, 1), (1, 3), (2, 1), (3, 4)]
        try TestDataset.write(dir, pairs: (0..<count).map { pattern[$0 % pattern.count] },
                              vocabJSON: "{\"ix_to_note\": [36, 38, 42, 46], \"ix_to_tick\": [0, 12, 24, 48, 96]}")
    }

    /// A tiny run with the 2017 settings (the default recipe needs more data than this).
    var small: [String] {
        ["--recipe", "original", "--data", root.appendingPathComponent("data").path, "--hidden", "6", "--unroll", "8",
         "--checkpoint-dir", root.appendingPathComponent("c").path]
    }

    func checkpointSteps() -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("c").path)) ?? []
        return names.compactMap { n in
            n.hasPrefix("ckpt-") && n.hasSuffix(".h5") ? Int(n.dropFirst(5).dropLast(3)) : nil
        }.sorted()
    }

    /// Sends `sig` `times` times, milliseconds apart, once the first checkpoint is written.
    func interrupt(with sig: Int32, times: Int = 1) throws {
        let run = try BackgroundRun(["train"] + small + ["--checkpoint-every", "50", "--log-every", "1000", "--eval-every", "100000"],
                                    in: root)
        XCTAssertTrue(run.wait(for: "checkpoint ", seconds: 30, poll: 10_000), "no checkpoint line before the deadline: \(run.stdoutText)")
        for k in 0..<times {
            // Signals sent before the first is delivered merge into one: send the next as soon
            // as the handler has answered (milliseconds after the first).
            if k > 0 { run.wait(for: "stopping after this step", inStandardError: true, seconds: 5, poll: 200) }
            run.signal(sig)
        }
        let (status, text, errText) = try run.finish()
        XCTAssertEqual(status, 0, errText)
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("interrupted at step ") }) else {
            return XCTFail("no interrupted line: \(text)")
        }
        let step = Int(line.dropFirst("interrupted at step ".count).prefix { $0.isNumber }) ?? -1
        XCTAssertGreaterThanOrEqual(step, 50)
        XCTAssertTrue(checkpointSteps().contains(step), "\(checkpointSteps()) lacks \(step)")
        XCTAssertTrue(text.contains("checkpoint \(root.appendingPathComponent("c/ckpt-\(step).h5").path)"), text)
        XCTAssertTrue(errText.contains("drummer: interrupted at step \(step): checkpoint saved to "
            + root.appendingPathComponent("c/ckpt-\(step).h5").path), errText)
        if times == 2 { XCTAssertTrue(errText.contains("press Ctrl-C once more to quit without saving"), errText) }
        // The saved state resumes.
        let r = try CLI.run(["train", "--resume", root.appendingPathComponent("c/ckpt-\(step).h5").path,
                             "--steps", "\(step + 3)"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(checkpointSteps().contains(step + 3))
    }

    func testCtrlCFinishesTheStepSavesAndExitsZero() throws { try interrupt(with: SIGINT) }

    func testSIGTERMFinishesTheStepSavesAndExitsZero() throws { try interrupt(with: SIGTERM) }

    /// -o naming the checkpoint directory the run is yet to make, or a folder holding it, is refused
    /// before anything is written (it trained the whole run, then refused to export).
    func testOutputThatIsOrHoldsANewCheckpointDirectoryIsRefusedFirst() throws {
        let data = root.appendingPathComponent("data").path
        for (checkpoints, output, what) in [("fresh", "fresh", "is"), ("nest/ck", "nest", "holds")] {
            let ck = root.appendingPathComponent(checkpoints).path, out = root.appendingPathComponent(output).path
            let r = try CLI.run(["train", "--recipe", "original", "--data", data, "--hidden", "6", "--unroll", "8", "--steps", "2",
                                 "--checkpoint-dir", ck, "-o", out])
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains("\(out): \(what) the checkpoint directory \(ck) the run writes; export elsewhere"), r.stderr)
            XCTAssertFalse(r.stdout.contains("step 1"), r.stdout)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "nothing written")
        }
    }

    /// The terminal closing (SIGHUP) used to kill the run where it stood, its last steps unsaved.
    func testSIGHUPFinishesTheStepSavesAndExitsZero() throws { try interrupt(with: SIGHUP) }

    /// Under nohup SIGHUP stays ignored: the run goes on past it, and stops on SIGTERM as ever.
    func testSIGHUPUnderNohupIsIgnored() throws {
        let run = try BackgroundRun(["train"] + small + ["--checkpoint-every", "50", "--log-every", "1000", "--eval-every", "100000"],
                                    in: root, underNohup: true)
        XCTAssertTrue(run.wait(for: "checkpoint ", seconds: 30, poll: 10_000), "no checkpoint line before the deadline: \(run.stdoutText)")
        run.signal(SIGHUP)
        let before = checkpointSteps().max() ?? 0
        // Still training: a later checkpoint comes, and no stop was announced.
        XCTAssertTrue(run.wait(seconds: 30, poll: 10_000) { (checkpointSteps().max() ?? 0) > before }, run.stderrText)
        XCTAssertFalse(run.stderrText.contains("stopping after this step"), run.stderrText)
        run.signal(SIGTERM)
        let (status, text, errText) = try run.finish()
        XCTAssertEqual(status, 0, errText)
        XCTAssertTrue(text.contains("interrupted at step "), text)
    }

    /// A second Ctrl-C within milliseconds used to exit 130 without the final save.
    func testSecondCtrlCStillSavesAndSaysSo() throws { try interrupt(with: SIGINT, times: 2) }

    /// A third Ctrl-C quits at once without saving (status 130), and says so. Steps
    /// here take a good part of a second (H = 400, U = 400), so all three signals,
    /// each sent once the handler has answered the one before, land in one step.
    func testThirdCtrlCQuitsWithoutSaving() throws {
        let data = root.appendingPathComponent("long")
        try Self.writeDataset(data, count: 4000)
        let run = try BackgroundRun(["train", "--recipe", "original", "--data", data.path, "--hidden", "400", "--unroll", "400",
                                     "--checkpoint-dir", root.appendingPathComponent("c").path,
                                     "--checkpoint-every", "1000000", "--log-every", "1", "--eval-every", "1000000"], in: root)
        // Training (and its signal handler) has started once a progress line is out.
        run.wait(for: "step 1", seconds: 60, poll: 200)
        run.signal(SIGINT)
        run.wait(for: "stopping after this step", inStandardError: true, seconds: 5, poll: 200)
        run.signal(SIGINT)
        run.wait(for: "already stopping", inStandardError: true, seconds: 5, poll: 200)
        run.signal(SIGINT)
        let (status, _, errText) = try run.finish()
        XCTAssertEqual(status, 130, errText)
        XCTAssertTrue(errText.contains("drummer: quitting without saving a checkpoint"), errText)
        XCTAssertFalse(errText.contains("checkpoint saved to"), errText)
    }

    /// A checkpoint's temporary left by kill -9 (`.ckpt-N.h5.drummer-tmp-*`): the next run in
    /// the checkpoint directory removes it at start and says so.
    func testStaleCheckpointTemporariesAreRemovedAtStart() throws {
        let pid = try CLI.deadPID()
        let dir = root.appendingPathComponent("c")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for name in [".ckpt-500.h5.drummer-tmp-\(pid)-1-3141abcd", ".train_log.csv.drummer-tmp-\(pid)-1-0000abcd", "notes.txt"] {
            try Data("x".utf8).write(to: dir.appendingPathComponent(name))
        }
        let r = try CLI.run(["train"] + small + ["--steps", "2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("drummer: removed 2 stale temporary output(s) (files or folders) from a killed run in \(dir.path)"), r.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        // Nothing starting with a dot is left: the run removes its lock file when it ends.
        XCTAssertEqual(names.filter { $0.hasPrefix(".") }, [])
        XCTAssertTrue(names.contains("notes.txt"))
    }

    func testRefusedResumeFlagsAndBadOptions() throws {
        let first = try CLI.run(["train"] + small + ["--steps", "4", "--checkpoint-every", "2"])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(checkpointSteps(), [2, 4])
        XCTAssertTrue(first.stdout.contains("checkpoint \(root.appendingPathComponent("c/ckpt-4.h5").path)"), first.stdout)
        let ckpt = root.appendingPathComponent("c/ckpt-4.h5").path
        for (flag, value) in [("--hidden", "7"), ("--unroll", "9"), ("--batch-size", "2"), ("--optimizer", "rmsprop")] {
            let r = try CLI.run(["train", "--resume", ckpt, flag, value])
            XCTAssertNotEqual(r.status, 0, flag)
            XCTAssertTrue(r.stderr.contains("\(flag) \(value) differs from the checkpoint's"), r.stderr)
        }
        let bad = try CLI.run(["train", "--recipe", "original", "--optimizer", "adagrad"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("The value 'adagrad' is invalid for '--optimizer <optimizer>'. Please provide one of 'sgd', 'momentum', 'rmsprop' or 'adam'."), bad.stderr)
        let corrupt = root.appendingPathComponent("bad.h5")
        try Data("nope".utf8).write(to: corrupt)
        let c = try CLI.run(["train", "--resume", corrupt.path])
        XCTAssertNotEqual(c.status, 0)
        XCTAssertTrue(c.stderr.contains("\(corrupt.path): not a drummer checkpoint: not an HDF5 file"), c.stderr)
        let nan = try CLI.run(["train", "--resume", ckpt, "--lr", "3e38", "--steps", "100"])
        XCTAssertNotEqual(nan.status, 0)
        XCTAssertTrue(nan.stderr.contains("training stopped at step"), nan.stderr)
    }

    /// train_log.csv holds a row at every logged step between evaluations (step, epoch, the
    /// running loss the progress line prints, the rate; evaluation fields empty), so that the
    /// report's loss curve has a point per logged step; none at an evaluation's step.
    func testTheLogHoldsEveryLoggedStep() throws {
        try Self.writeDataset(root.appendingPathComponent("data"), count: 200)
        let r = try CLI.run(["train", "--recipe", "original", "--data", root.appendingPathComponent("data").path, "--hidden", "4", "--unroll", "8",
                             "--steps", "6", "--log-every", "2", "--eval-every", "3", "--checkpoint-dir", root.appendingPathComponent("c").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = try String(contentsOf: root.appendingPathComponent("c/train_log.csv"), encoding: .utf8).split(separator: "\n")
        let header = lines[0].split(separator: ",").map(String.init)
        let rows = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        XCTAssertEqual(rows.map { $0[0] }, ["2", "3", "4", "6"], "logged steps 2 and 4, evaluations at 3 and 6")
        let trainLoss = try XCTUnwrap(header.firstIndex(of: "train_loss")), smoothed = try XCTUnwrap(header.firstIndex(of: "smoothed_loss"))
        XCTAssertEqual(rows.map { $0[trainLoss].isEmpty }, [true, false, true, false])
        XCTAssertTrue(rows.allSatisfy { $0.count == header.count && Double($0[smoothed]) != nil })
        // The row holds the losses the progress line printed at that step: its batch's and the smoothed one.
        let progress = try XCTUnwrap(r.stdout.split(separator: "\n").first { $0.hasPrefix("step 4/6 ") })
        func printed(_ word: String) -> Double? {
            progress.split(separator: " ", omittingEmptySubsequences: true).drop { $0 != word }.dropFirst().first.flatMap { Double($0) }
        }
        let stepLoss = try XCTUnwrap(header.firstIndex(of: "step_loss"))
        XCTAssertEqual(Double(rows[2][smoothed]) ?? .nan, printed("smoothed") ?? .nan, accuracy: 1e-4)
        XCTAssertEqual(Double(rows[2][stepLoss]) ?? .nan, printed("loss") ?? .nan, accuracy: 1e-4)
        XCTAssertTrue(rows.allSatisfy { Double($0[stepLoss]) != nil }, "every row trained here has its step's loss")
        let page = root.appendingPathComponent("r.html").path
        let report = try CLI.run(["report", "--checkpoints", root.appendingPathComponent("c").path, "-o", page])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertTrue(try String(contentsOfFile: page, encoding: .utf8).contains("2 evaluation(s) and the running loss at 2 more logged step(s), steps 2 to 6"))
    }

    func testEvalJSONMatchesTheTrainingLogsEvaluation() throws {
        let t = try CLI.run(["train"] + small + ["--steps", "6", "--eval-every", "6"])
        XCTAssertEqual(t.status, 0, t.stderr)
        let ckpt = root.appendingPathComponent("c/ckpt-6.h5").path
        let r = try CLI.run(["eval", ckpt, "--data", root.appendingPathComponent("data").path, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        // Today's note + tick figures, and each group's (this dataset has no velocities: no velocity keys).
        XCTAssertEqual(Set(obj.keys), ["events", "loss", "accuracy", "accuracy_note", "accuracy_tick", "loss_note", "loss_tick", "loss_all"])
        XCTAssertEqual(obj["loss"] as? Double ?? .nan, (obj["loss_note"] as? Double ?? .nan) + (obj["loss_tick"] as? Double ?? .nan), accuracy: 1e-9)
        XCTAssertEqual(obj["loss_all"] as? Double ?? .nan, obj["loss"] as? Double ?? .nan, accuracy: 1e-9)
        XCTAssertEqual(obj["events"] as? Int, 119)
        // train_log.csv's row for step 6 holds the same evaluation (6 decimals).
        let log = try String(contentsOf: root.appendingPathComponent("c/train_log.csv"), encoding: .utf8)
        let header = log.split(separator: "\n")[0].split(separator: ",").map(String.init)
        let row = try XCTUnwrap(log.split(separator: "\n").last).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        func logged(_ name: String) -> Double { Double(row[header.firstIndex(of: name) ?? 0]) ?? .nan }
        XCTAssertEqual(row[0], "6")
        XCTAssertEqual(obj["loss"] as? Double ?? .nan, logged("train_loss"), accuracy: 1e-6)
        XCTAssertEqual(obj["accuracy"] as? Double ?? .nan, logged("train_accuracy"), accuracy: 1e-6)
        XCTAssertEqual(obj["accuracy_note"] as? Double ?? .nan, logged("train_accuracy_note"), accuracy: 1e-6)
        XCTAssertEqual(obj["accuracy_tick"] as? Double ?? .nan, logged("train_accuracy_tick"), accuracy: 1e-6)
        let plain = try CLI.run(["eval", ckpt, "--data", root.appendingPathComponent("data").path])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        for s in ["predictions 119", "loss ", "accuracy ", "accuracy_note ", "accuracy_tick "] {
            XCTAssertTrue(plain.stdout.contains(s), plain.stdout)
        }
        let missing = try CLI.run(["eval", root.appendingPathComponent("none.h5").path, "--data", root.path])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("none.h5: no such checkpoint file"), missing.stderr)
        let missingDir = try CLI.run(["eval", root.appendingPathComponent("nomodel").path, "--data", root.path])
        XCTAssertEqual(missingDir.status, 1)
        XCTAssertTrue(missingDir.stderr.contains("nomodel: no such model directory"), missingDir.stderr)
    }

    /// The original 2017 model (../shared) over its own generated demo.mid: the MIDI
    /// file read directly and the same file through convert-midi give the same
    /// numbers; random.mid's unknown tick values are named.
    func testEvalOfAMIDIFileMatchesItsConvertedDataset() throws {
        let original = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/rnn-drummer")
        guard FileManager.default.fileExists(atPath: original.appendingPathComponent("Wx.bin").path) else {
            throw VendoredFixtureMissing()
        }
        let model = root.appendingPathComponent("original")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        for f in ["Wx.bin", "Wy.bin"] {
            try FileManager.default.copyItem(at: original.appendingPathComponent(f), to: model.appendingPathComponent(f))
        }
        try FileManager.default.copyItem(at: original.appendingPathComponent("vocab.json"), to: model.appendingPathComponent("model.json"))
        let midi = root.appendingPathComponent("midi")
        try FileManager.default.createDirectory(at: midi, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: original.appendingPathComponent("demo.mid"), to: midi.appendingPathComponent("demo.mid"))
        let converted = root.appendingPathComponent("converted").path
        let c = try CLI.run(["convert-midi", midi.path, "--output", converted])
        XCTAssertEqual(c.status, 0, c.stderr)

        let direct = try CLI.run(["eval", model.path, "--data", midi.appendingPathComponent("demo.mid").path, "--json"])
        XCTAssertEqual(direct.status, 0, direct.stderr)
        let viaDataset = try CLI.run(["eval", model.path, "--data", converted, "--json"])
        XCTAssertEqual(viaDataset.status, 0, viaDataset.stderr)
        XCTAssertEqual(direct.stdout, viaDataset.stdout)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(direct.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(obj["events"] as? Int, 199)
        // The model generated demo.mid itself: it predicts much of it.
        XCTAssertGreaterThan(obj["accuracy"] as? Double ?? 0, 0.3)

        let random = try CLI.run(["eval", model.path, "--data", original.appendingPathComponent("random.mid").path])
        XCTAssertNotEqual(random.status, 0)
        XCTAssertTrue(random.stderr.contains("random.mid: tick values"), random.stderr)
        XCTAssertTrue(random.stderr.contains("are not in the model's vocabulary"), random.stderr)
    }
}
