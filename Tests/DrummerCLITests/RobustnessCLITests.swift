// Stopping and killing a run safely: every long phase honours a stop request, a killed run's lock is taken over, a
// live one is refused, and `train` says before the work how long it will take.
import Foundation
import XCTest

final class RobustnessCLITests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws {
        root = try CLI.temporaryDirectory("robust-cli")
        try TrainCLITests.writeDataset(root.appendingPathComponent("data"), count: 120)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    var checkpointDir: URL { root.appendingPathComponent("c") }

    func small(_ data: String = "data", hidden: Int = 6) -> [String] {
        ["--recipe", "original", "--data", root.appendingPathComponent(data).path, "--hidden", "\(hidden)", "--unroll", "8",
         "--checkpoint-dir", checkpointDir.path]
    }

    func dotFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: checkpointDir.path)) ?? []).filter { $0.hasPrefix(".") }.sorted()
    }

    // MARK: Locks

    func testALockLeftByAKilledRunIsTakenOverWithOneLine() throws {
        try FileManager.default.createDirectory(at: checkpointDir, withIntermediateDirectories: true)
        let pid = try CLI.deadPID()
        try Data("pid \(pid)\nstart 12345\nrun 0123456789abcdef\n".utf8).write(to: checkpointDir.appendingPathComponent(".drummer-train.lock"))
        let r = try CLI.run(["train"] + small() + ["--steps", "2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let notes = r.stdout.split(separator: "\n").filter { $0.hasPrefix("note: took over the lock") }
        XCTAssertEqual(notes, ["note: took over the lock of \(checkpointDir.path) left by run 0123456789abcdef (pid \(pid), no longer running)"])
        XCTAssertEqual(dotFiles(), [], "the run removes its lock file when it ends")
        // A clean run leaves nothing to take over: the next one says nothing about locks.
        let again = try CLI.run(["train", "--resume", checkpointDir.appendingPathComponent("ckpt-2.h5").path, "--steps", "3"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertFalse(again.stdout.contains("took over"), again.stdout)
    }

    /// A resumed run refuses a train_log.csv it cannot have written (another file's header, or
    /// bytes that are not text) and leaves it as it was; an older, shorter header is upgraded.
    func testAResumeRefusesALogItDidNotWrite() throws {
        let r = try CLI.run(["train"] + small() + ["--steps", "2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let log = checkpointDir.appendingPathComponent("train_log.csv")
        for bad in [Data("this,is,not\na,log\n".utf8), Data([0xFF, 0xFE, 0x00, 0x81, 0x0A])] {
            try bad.write(to: log)
            let again = try CLI.run(["train", "--resume", checkpointDir.appendingPathComponent("ckpt-2.h5").path, "--steps", "3"])
            XCTAssertEqual(again.status, 1, again.stderr)
            XCTAssertTrue(again.stderr.contains("\(log.path): ") && again.stderr.contains("not a drummer training log"), again.stderr)
            XCTAssertEqual(try Data(contentsOf: log), bad)
            XCTAssertFalse(FileManager.default.fileExists(atPath: checkpointDir.appendingPathComponent("ckpt-3.h5").path))
        }
        try Data("step,epoch,smoothed_loss,learning_rate\n1,0,3.5,0.002\n".utf8).write(to: log)
        let upgraded = try CLI.run(["train", "--resume", checkpointDir.appendingPathComponent("ckpt-2.h5").path, "--steps", "3"])
        XCTAssertEqual(upgraded.status, 0, upgraded.stderr)
        let header = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").first.map(String.init)
        XCTAssertEqual(header?.hasPrefix("step,epoch,smoothed_loss,learning_rate,train_loss,"), true, header ?? "")
    }

    /// A run.json that a run did not write (another program's JSON, or not JSON) is refused in
    /// a sentence naming it, and left alone.
    func testAForeignRunRecordIsRefusedInASentence() throws {
        try FileManager.default.createDirectory(at: checkpointDir, withIntermediateDirectories: true)
        let file = checkpointDir.appendingPathComponent("run.json")
        for foreign in [#"{"name": "my web app", "version": 3}"#, "not json", #"{"format": "drummer-run", "run_id": 7}"#] {
            try Data(foreign.utf8).write(to: file)
            let r = try CLI.run(["train"] + small() + ["--steps", "2"])
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains("\(file.path): cannot read the run record: not a drummer run record"), r.stderr)
            XCTAssertTrue(r.stderr.contains("move it away or choose another --checkpoint-dir"), r.stderr)
            XCTAssertFalse(r.stderr.contains("DecodingError") || r.stderr.contains("CodingKeys"), r.stderr)
            XCTAssertEqual(try String(contentsOf: file, encoding: .utf8), foreign)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: checkpointDir.path), ["run.json"])
        }
    }

    /// A run killed before its first checkpoint and evaluation leaves only run.json: the next
    /// run takes the directory over with a note; once it holds a checkpoint it is protected.
    func testADirectoryHoldingOnlyAKilledRunsClaimIsTakenOver() throws {
        try FileManager.default.createDirectory(at: checkpointDir, withIntermediateDirectories: true)
        let claim = #"{"format": "drummer-run", "run_id": "00112233445566778899aabbccddeeff", "created_by": "drummer 0.1.0"}"#
        try Data(claim.utf8).write(to: checkpointDir.appendingPathComponent("run.json"))
        let r = try CLI.run(["train"] + small() + ["--steps", "2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("note: \(checkpointDir.path) held only the claim of run 00112233445566778899aabbccddeeff, "
                                        + "which wrote no checkpoint and no evaluation: this run takes the directory over"), r.stdout)
        // Now the directory holds that run's checkpoints: a new run is refused, naming it.
        let again = try CLI.run(["train"] + small() + ["--steps", "2"])
        XCTAssertNotEqual(again.status, 0)
        XCTAssertTrue(again.stderr.contains("holds another run's checkpoints"), again.stderr)
    }

    func testALockHeldByALiveProcessIsRefusedAndLeftAlone() throws {
        try FileManager.default.createDirectory(at: checkpointDir, withIntermediateDirectories: true)
        let lock = checkpointDir.appendingPathComponent(".drummer-train.lock")
        try Data("pid 1\nrun fedcba9876543210\n".utf8).write(to: lock)
        // Another process holds an exclusive flock on the file (one process: Python's fcntl).
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["python3", "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'r+'); fcntl.flock(f, fcntl.LOCK_EX); "
                            + "print('held', flush=True); time.sleep(120)", lock.path]
        let said = Pipe()
        holder.standardOutput = said
        do { try holder.run() } catch { throw XCTSkip("python3 is not available to hold a lock: \(error)") }
        defer { holder.terminate(); holder.waitUntilExit() }
        let first = String(decoding: said.fileHandleForReading.availableData, as: UTF8.self)
        XCTAssertTrue(first.hasPrefix("held"), "the holder did not take the lock: \(first)")
        let r = try CLI.run(["train"] + small() + ["--steps", "2"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--checkpoint-dir \(checkpointDir.path) is in use by another training run (pid 1, run fedcba9876543210)"),
                      r.stderr)
        XCTAssertEqual(try String(contentsOf: lock, encoding: .utf8), "pid 1\nrun fedcba9876543210\n", "the holder's file is untouched")
        XCTAssertFalse(FileManager.default.fileExists(atPath: checkpointDir.appendingPathComponent("run.json").path))
    }

    // MARK: Stops

    /// The reproducer, small: one step of a wide model, then an evaluation long enough
    /// to be interrupted. SIGTERM during it saves the finished step and leaves no lock.
    func testSIGTERMDuringTheFinalEvaluationSavesTheStepFirst() throws {
        try TrainCLITests.writeDataset(root.appendingPathComponent("long"), count: 30_000)
        let run = try BackgroundRun(["train"] + small("long", hidden: 1500) + ["--steps", "1", "--log-every", "1"], in: root)
        // The step's progress line comes just before the final evaluation starts.
        XCTAssertTrue(run.wait(for: "step 1/1", seconds: 120), run.stdoutText)
        XCTAssertTrue(run.stdoutText.contains("estimate: "), "estimates come after the first steps, a one-step run too: \(run.stdoutText)")
        usleep(300_000)
        run.signal(SIGTERM)
        let (status, text, errText) = try run.finish()
        XCTAssertEqual(status, 0, errText)
        let ckpt = checkpointDir.appendingPathComponent("ckpt-1.h5").path
        XCTAssertTrue(text.contains("interrupted at step 1 during its evaluation: saved \(ckpt); a run resumed from it evaluates step 1 first"), text)
        XCTAssertFalse(text.contains("eval step 1"), "the evaluation was cut short, not finished: \(text)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: ckpt))
        XCTAssertEqual(dotFiles(), [], "no lock or temporary left")
        XCTAssertFalse(FileManager.default.fileExists(atPath: checkpointDir.appendingPathComponent("train_log.csv").path),
                       "no evaluation row for an evaluation that did not finish")
        XCTAssertTrue(errText.contains("drummer: interrupted at step 1: checkpoint saved to \(ckpt)"), errText)
    }

    /// `stats` and `report` read many files; a stop ends them at once through the cleanup
    /// handler (exit 128 + 15), leaving no output and no temporary.
    func testStatsAndReportStopAtOnceAndLeaveNothing() throws {
        let corpus = CLI.repoRoot.appendingPathComponent("corpus/groove").path
        let some = try FileManager.default.subpathsOfDirectory(atPath: corpus + "/drummer1").filter { $0.hasSuffix(".mid") }.sorted()
            .prefix(3).map { corpus + "/drummer1/" + $0 }
        let page = root.appendingPathComponent("page.html")
        for args in [["stats"] + some + ["--reference", corpus], ["report", "--reference", corpus] + some + ["-o", page.path]] {
            let p = Process()
            p.executableURL = CLI.binary
            p.arguments = args
            p.standardOutput = FileHandle.nullDevice
            let errPipe = Pipe()
            p.standardError = errPipe
            try p.run()
            usleep(150_000)
            let sent = Date()
            kill(p.processIdentifier, SIGTERM)
            p.waitUntilExit()
            let elapsed = Date().timeIntervalSince(sent)
            let errText = String(decoding: errPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTAssertEqual(p.terminationReason, .exit, "\(args[0]): \(errText)")
            XCTAssertEqual(p.terminationStatus, 128 + SIGTERM, "\(args[0]): \(errText)")
            // A hang check, not a timing test: reading the whole corpus takes far longer.
            XCTAssertLessThan(elapsed, 5, args[0])
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: page.path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.hasPrefix(".") }, [])
    }

    /// The terminal closing (SIGHUP) ends a command as SIGTERM does, through the same cleanup
    /// (exit 128 + 1, said as "hung up"). Under nohup it stays ignored: `train`'s and `play`'s
    /// tests check that, where the signal surely lands mid-run.
    func testSIGHUPEndsACommandAtOnce() throws {
        let corpus = CLI.repoRoot.appendingPathComponent("corpus/groove").path
        let some = try FileManager.default.subpathsOfDirectory(atPath: corpus + "/drummer1").filter { $0.hasSuffix(".mid") }.sorted()
            .prefix(3).map { corpus + "/drummer1/" + $0 }
        let args = ["stats"] + some + ["--reference", corpus]
        let hung = try BackgroundRun(args, in: root)
        usleep(150_000)
        hung.signal(SIGHUP)
        let (status, _, errText) = try hung.finish()
        XCTAssertEqual(status, 128 + SIGHUP, errText)
        XCTAssertTrue(errText.contains("drummer: hung up"), errText)
    }

    // MARK: Estimates

    func testEstimatesAndTheLongEvaluationWarning() throws {
        let r = try CLI.run(["train"] + small() + ["--steps", "5", "--eval-every", "2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let line = try XCTUnwrap(r.stdout.split(separator: "\n").first { $0.hasPrefix("estimate: ") }, r.stdout)
        // Every event is evaluated: 120 training events, no validation split.
        XCTAssertTrue(line.contains(" per step; one evaluation (120 training + 0 validation events) about "), String(line))
        // Evaluations at steps 4 and 5 (the end) remain after step 3.
        XCTAssertTrue(line.contains("; to step 5: about "), String(line))
        XCTAssertTrue(line.hasSuffix(" (2 evaluations)"), String(line))
        XCTAssertFalse(r.stdout.contains("warning: one evaluation will take"), r.stdout)
        let log = try String(contentsOf: checkpointDir.appendingPathComponent("train_log.csv"), encoding: .utf8)
        XCTAssertEqual(log.split(separator: "\n").count, 1 + 3, log)

        // The long-evaluation warning (its threshold lowered to 0 s) says how to make it shorter.
        try FileManager.default.removeItem(at: checkpointDir)
        let w = try CLI.run(["train"] + small() + ["--steps", "3"], environment: ["DRUMMER_EVAL_WARN_SECONDS": "0"])
        XCTAssertEqual(w.status, 0, w.stderr)
        let warning = try XCTUnwrap(w.stdout.split(separator: "\n").first { $0.hasPrefix("warning: one evaluation will take about ") },
                                    w.stdout)
        XCTAssertTrue(warning.hasSuffix("convert-midi with a smaller --validation-fraction"), String(warning))
        // A threshold that is no number of seconds is a usage error, not the default in silence.
        for bad in ["0.001abc", "nan", "-5"] {
            let b = try CLI.run(["train"] + small() + ["--steps", "3"], environment: ["DRUMMER_EVAL_WARN_SECONDS": bad])
            XCTAssertEqual(b.status, 64, b.stderr)
            XCTAssertTrue(b.stderr.contains("DRUMMER_EVAL_WARN_SECONDS must be a number of seconds, 0 or more (got \"\(bad)\")"), b.stderr)
        }
    }
}
