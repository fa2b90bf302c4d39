// Checkpoint files: round trip, damaged files, pruning, NaN stops, interrupts,
// and readability by the HDF5 tools (when installed).
import DrummerCore
import Foundation
import XCTest
@testable import Checkpoints
@testable import Train
@testable import TrainRun

final class CheckpointTests: XCTestCase {
    var root: URL!
    var data: URL!

    override func setUpWithError() throws {
        root = try RunFixture.temporaryDirectory("ckpt")
        data = root.appendingPathComponent("data")
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 100),
                                    validation: RunFixture.events(count: 30, seed: 3))
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: root)
    }

    func train(steps: Int, dir: String = "c", configure: (inout RunOptions) -> Void = { _ in }) throws -> (TrainingRun, LineSink) {
        var o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent(dir), steps: steps)
        configure(&o)
        let sink = LineSink()
        let run = try TrainingRun(options: o, reporter: sink.reporter)
        _ = try run.run(shouldStop: { false })
        return (run, sink)
    }

    func testRoundTripKeepsEveryField() throws {
        let (run, sink) = try train(steps: 7) { o in
            o.optimizer = .momentum
            o.momentum = 0.8
            o.lrDecay = 0.5
            o.lrDecayEvery = 100
            o.lrPlateauPatience = 3
            o.seed = 12345678901234567890
        }
        let path = root.appendingPathComponent("c/ckpt-7.h5").path
        XCTAssertTrue(sink.text.contains("checkpoint \(path)"), sink.text)
        let c = try Checkpoint.read(path: path)
        XCTAssertEqual(c.configuration, run.configuration)
        XCTAssertEqual(c.state, run.snapshot())
        XCTAssertEqual(c.vocabulary, RunFixture.vocabulary)
        XCTAssertEqual(c.rngState, run.rngState)
        XCTAssertEqual(c.datasetFingerprint, run.data.fingerprint)
        XCTAssertEqual(c.datasetPath, data.standardizedFileURL.path)
        XCTAssertEqual(c.datasetEvents, 100)
        XCTAssertEqual(c.validationEvents, 30)
        XCTAssertEqual(c.smoothedLoss, run.smoothedLoss)
        XCTAssertEqual(c.configuration.seed, 12345678901234567890)
        XCTAssertEqual(c.state.optimizer.slots.keys.sorted(), ["velocity"])
        // The train log: a header and the evaluations at step 5 and at the end (7).
        let log = try String(contentsOf: root.appendingPathComponent("c/train_log.csv"), encoding: .utf8)
        let rows = log.split(separator: "\n")
        XCTAssertEqual(rows.first.map(String.init), TrainLog.header)
        XCTAssertEqual(rows.dropFirst().map { $0.split(separator: ",").first.map(String.init) ?? "" }, ["5", "7"])
        XCTAssertEqual(rows.last?.split(separator: ",", omittingEmptySubsequences: false).count, 19)
        // The model view for export/eval.
        let m = try CheckpointReader.loadModel(path: path)
        XCTAssertEqual(m.step, 7)
        XCTAssertEqual(m.weights.wx + m.weights.wy, run.snapshot().parameters)
        XCTAssertEqual(m.metadata["optimizer"], "momentum")
        XCTAssertEqual(m.metadata["hidden"], "6")
        XCTAssertEqual(m.metadata["dataset_fingerprint"], run.data.fingerprint)
        XCTAssertNil(m.metadata["input_noise"], "a retired setting is not listed")
    }

    func testTruncatedAndCorruptCheckpointsAreClearErrors() throws {
        _ = try train(steps: 5)
        let good = root.appendingPathComponent("c/ckpt-5.h5")
        let bytes = try Data(contentsOf: good)
        let cases: [(String, Data, String)] = [
            ("truncated.h5", bytes.prefix(bytes.count / 2), "the checkpoint is corrupt: it holds \(bytes.count / 2 - 512) bytes after its header where \(bytes.count - 512) were written (truncated or appended to)"),
            ("header-only.h5", bytes.prefix(600), "the checkpoint is corrupt: it holds 88 bytes after its header"),
            ("seal-only.h5", bytes.prefix(300), "the checkpoint is corrupt: the file ends inside its 512-byte header (truncated)"),
            ("empty.h5", Data(), "not a drummer checkpoint: the file is empty"),
            ("text.h5", Data("not a checkpoint\n".utf8), "not a drummer checkpoint: not an HDF5 file"),
        ]
        for (name, content, message) in cases {
            let p = root.appendingPathComponent(name).path
            try content.write(to: URL(fileURLWithPath: p))
            assertThrows([p + ": " + message]) { try Checkpoint.read(path: p) }
            assertThrows([p]) { try CheckpointReader.loadModel(path: p) }
            assertThrows([p]) { try TrainingRun(options: RunOptions(resume: p), reporter: LineSink().reporter) }
        }
        // 64 flipped bytes in the middle: the seal's SHA-256 refuses the file before libhdf5
        // reads it (CheckpointIntegrityTests flips single bits everywhere).
        var flipped = bytes
        for i in stride(from: bytes.count / 3, to: bytes.count / 3 + 64, by: 1) { flipped[i] ^= 0xFF }
        let p = root.appendingPathComponent("flipped.h5").path
        try flipped.write(to: URL(fileURLWithPath: p))
        assertThrows([p + ": the checkpoint is corrupt: its contents do not match the SHA-256 recorded when it was written"]) {
            try Checkpoint.read(path: p)
        }
        assertThrows(["no such checkpoint file"]) { try Checkpoint.read(path: root.appendingPathComponent("none.h5").path) }
    }

    /// A checkpoint directory chooses by the file names: a file named for another step than it
    /// holds is refused, naming both; under a name of no step it reads.
    func testACheckpointNamedForAnotherStepIsRefused() throws {
        _ = try train(steps: 5)
        let good = root.appendingPathComponent("c/ckpt-5.h5")
        let renamed = root.appendingPathComponent("c/ckpt-9223372036854775807.h5")
        try FileManager.default.copyItem(at: good, to: renamed)
        assertThrows([renamed.path + ": /state attribute step is 5, but the file is named for step 9223372036854775807",
                      "rename it ckpt-5.h5"]) { try Checkpoint.read(path: renamed.path) }
        // The directory's latest by name is that file; loading it is the refusal, not the wrong model.
        XCTAssertEqual(try CheckpointDirectory(path: root.appendingPathComponent("c").path).checkpoint(.latest).path, renamed.path)
        assertThrows([renamed.path + ": /state attribute step is 5"]) { try CheckpointReader.loadModel(path: renamed.path) }
        let other = root.appendingPathComponent("kept.h5")
        try FileManager.default.copyItem(at: good, to: other)
        XCTAssertEqual(try Checkpoint.read(path: other.path).state.step, 5)
    }

    func testAnotherHDF5FileIsNotACheckpoint() throws {
        // A checkpoint whose format attribute is rewritten is refused by name.
        let (run, _) = try train(steps: 5)
        var c = run.checkpoint()
        c.createdBy = "test"
        let p = root.appendingPathComponent("other.h5").path
        try CheckpointArchive.create(path: p) { f in
            try f.setAttribute("/", "format", string: "something-else")
            try f.setAttribute("/", "format_version", int64: 1)
        }
        assertThrows([p + ": not a drummer checkpoint: its format attribute is \"something-else\", not \"drummer-checkpoint\""]) {
            try Checkpoint.read(path: p)
        }
        try c.write(to: p)
        XCTAssertEqual(try Checkpoint.read(path: p).createdBy, "test")
    }

    func testKeepsTheLastKAndTheBestByValidationLoss() throws {
        let (run, _) = try train(steps: 20) { o in
            o.checkpointEvery = 1
            o.keep = 3
        }
        let steps = CheckpointDirectory(path: root.appendingPathComponent("c").path).list().map(\.step)
        let best = run.bestStep
        XCTAssertGreaterThan(best, 0)
        XCTAssertEqual(Set(steps), Set([18, 19, 20, best]))
        let bestFile = try Checkpoint.read(path: root.appendingPathComponent("c/ckpt-\(best).h5").path)
        XCTAssertEqual(bestFile.bestStep, best)
        XCTAssertEqual(bestFile.bestValidationLoss, run.bestValidationLoss)
    }

    func testPruneWithoutValidationKeepsLastK() throws {
        let dir = try RunFixture.temporaryDirectory("prune")
        defer { try? FileManager.default.removeItem(at: dir) }
        for s in [1, 2, 10, 30, 200] { try Data().write(to: dir.appendingPathComponent("ckpt-\(s).h5")) }
        try Data().write(to: dir.appendingPathComponent("notes.txt"))
        let d = CheckpointDirectory(path: dir.path)
        XCTAssertEqual(d.prune(keep: 2, protect: []).count, 3)
        XCTAssertEqual(d.list().map(\.step), [30, 200])
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("notes.txt").path))
    }

    func testNonFiniteLossStopsAndKeepsTheLastGoodCheckpoint() throws {
        _ = try train(steps: 5)
        let good = root.appendingPathComponent("c/ckpt-5.h5").path
        let before = try Data(contentsOf: URL(fileURLWithPath: good))
        // A rate near Float.greatestFiniteMagnitude blows the weights up within a few steps.
        var o = RunOptions(learningRate: 3e38, steps: 40, resume: good)
        o.checkpointEvery = 1
        let sink = LineSink()
        let run = try TrainingRun(options: o, reporter: sink.reporter)
        var failedAt = -1, reported: String?
        do {
            _ = try run.run(shouldStop: { false })
            XCTFail("expected the run to stop")
        } catch let e as RunError {
            guard case let .nonFinite(step, _, last) = e else { return XCTFail("\(e)") }
            failedAt = step
            reported = last
            XCTAssertTrue("\(e)".contains("training stopped at step \(step)"), "\(e)")
        }
        XCTAssertGreaterThan(failedAt, 5)
        XCTAssertLessThan(failedAt, 40)
        // Every checkpoint on disk is from before the failure, finite, and the
        // error names the newest one.
        let files = CheckpointDirectory(path: root.appendingPathComponent("c").path).list()
        XCTAssertEqual(files.map(\.step), Array(5..<failedAt), "no checkpoint of a bad state may be written")
        XCTAssertEqual(reported, files.last?.path)
        for f in files { XCTAssertNoThrow(try Checkpoint.read(path: f.path).weights().checkFinite(), f.path) }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: good)), before)
    }

    /// A stop that arrives while a periodic checkpoint is written ends the run at that step: it
    /// trained one more step and saved that one too.
    func testAStopDuringACheckpointWriteEndsTheRunThere() throws {
        var o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: nil)
        o.checkpointEvery = 5
        let first = root.appendingPathComponent("c/ckpt-5.h5").path
        let sink = LineSink()
        let run = try TrainingRun(options: o, reporter: sink.reporter)
        // True from the moment the step-5 checkpoint is on disk: the stop came during its write.
        let summary = try run.run(shouldStop: { FileManager.default.fileExists(atPath: first) })
        XCTAssertEqual(summary.ending, .interrupted)
        XCTAssertEqual(summary.step, 5)
        XCTAssertEqual(CheckpointDirectory(path: root.appendingPathComponent("c").path).list().map(\.step), [5])
        XCTAssertTrue(sink.text.contains("interrupted at step 5"), sink.text)
    }

    func testStopRequestFinishesTheStepSavesAndReturns() throws {
        var o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: nil)
        o.checkpointEvery = 1000
        let sink = LineSink()
        let run = try TrainingRun(options: o, reporter: sink.reporter)
        let summary = try run.run(shouldStop: { run.trainer.progress.step == 3 })
        XCTAssertEqual(summary.ending, .interrupted)
        XCTAssertEqual(summary.step, 3)
        XCTAssertEqual(CheckpointDirectory(path: root.appendingPathComponent("c").path).list().map(\.step), [3])
        XCTAssertTrue(sink.text.contains("interrupted at step 3"), sink.text)
    }

    /// --steps 20 --checkpoint-every 10 --eval-every 15: the last step is a checkpoint's but not an
    /// evaluation's, so the run evaluates it after the loop. Its checkpoint was written before that
    /// evaluation and held no best step (best_step -1, the loss inf): `sample`/`export` of the
    /// directory then had no validation loss to choose by, and a resume lost the best.
    func testTheLastCheckpointHoldsTheFinalEvaluation() throws {
        var o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: 20)
        o.checkpointEvery = 10
        o.evalEvery = 15
        let sink = LineSink()
        let run = try TrainingRun(options: o, reporter: sink.reporter)
        XCTAssertEqual(try run.run(shouldStop: { false }).ending, .reachedSteps)
        XCTAssertEqual(CheckpointDirectory(path: root.appendingPathComponent("c").path).list().last?.step, 20)
        let last = try Checkpoint.read(path: root.appendingPathComponent("c/ckpt-20.h5").path)
        XCTAssertEqual(last.bestStep, run.bestStep)
        XCTAssertTrue([15, 20].contains(last.bestStep), "best step \(last.bestStep)")
        XCTAssertEqual(last.bestValidationLoss, run.bestValidationLoss)
        XCTAssertTrue(last.bestValidationLoss.isFinite)
        // Saved once, after the evaluation.
        let order = sink.lines.filter { $0.hasPrefix("eval step 20") || $0.hasSuffix("ckpt-20.h5") }
        XCTAssertEqual(order.count, 2, sink.text)
        XCTAssertTrue(order.first?.hasPrefix("eval step 20") == true, sink.text)
    }

    func testProgressLinesCarryTheOriginalsSmoothedLoss() throws {
        let (run, sink) = try train(steps: 10)
        // Smoothed loss starts at -log(1/notes) - log(1/ticks) and moves by 0.001 of each loss.
        XCTAssertLessThan(abs(run.smoothedLoss - (log(4.0) + log(5.0))), 0.05)
        let lines = sink.lines.filter { $0.hasPrefix("step ") }
        XCTAssertEqual(lines.count, 2, sink.text)
        for l in lines {
            for field in ["epoch", "loss", "smoothed", "lr 0.5", "timesteps/s", "ETA"] {
                XCTAssertTrue(l.contains(field), l)
            }
        }
        XCTAssertTrue(lines[0].hasPrefix("step 5/10"), lines[0])
    }

    // MARK: External tools

    func testH5dumpReadsTheLayout() throws {
        guard let h5dump = ["/usr/bin/h5dump", "/usr/local/bin/h5dump"].first(where: FileManager.default.isExecutableFile) else {
            throw XCTSkip("h5dump is not installed")
        }
        _ = try train(steps: 5)
        let out = try runTool(h5dump, ["-H", root.appendingPathComponent("c/ckpt-5.h5").path])
        for name in ["GROUP \"model\"", "DATASET \"Wx\"", "DATASET \"Wy\"", "DATASET \"h\"", "DATASET \"ix_to_note\"",
                     "GROUP \"hyperparameters\"", "ATTRIBUTE \"fingerprint\"", "ATTRIBUTE \"format_version\"",
                     "DATASET \"state\"", "ATTRIBUTE \"smoothed_loss\""] {
            XCTAssertTrue(out.contains(name), "h5dump output lacks \(name)")
        }
        XCTAssertTrue(out.contains("( 16, 24 )"), "Wx should be (V+H+1) x 4H = 16 x 24")
    }

    func testH5pyReadsTheCheckpoint() throws {
        guard (try? runTool("/usr/bin/env", ["python3", "-c", "import h5py, numpy"])) != nil else {
            throw XCTSkip("python3 with h5py is not installed")
        }
        let (run, _) = try train(steps: 5)
        let script = """
            import h5py, sys
            f = h5py.File(sys.argv[1], 'r')
            def text(v): return v.decode() if isinstance(v, bytes) else v
            print(text(f.attrs['format']), int(f.attrs['format_version']))
            print(f['model/Wx'].shape, f['model/Wx'].dtype, f['model/Wy'].shape)
            print(int(f['state'].attrs['step']), [int(x) for x in f['vocabulary/ix_to_note'][()]])
            print(repr(float(f['model/Wx'][0, 0])))
            print(text(f['hyperparameters'].attrs['optimizer']), int(f['hyperparameters'].attrs['hidden']))
            """
        let out = try runTool("/usr/bin/env", ["python3", "-c", script, root.appendingPathComponent("c/ckpt-5.h5").path])
        let lines = out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 5, out)
        XCTAssertEqual(lines[0], "drummer-checkpoint 2")
        XCTAssertEqual(lines[1], "(16, 24) float32 (7, 9)")
        XCTAssertEqual(lines[2], "5 [36, 38, 42, 46]")
        XCTAssertEqual(Float(lines[3]), run.snapshot().parameters[0])
        XCTAssertEqual(lines[4], "sgd 6")
    }

    func runTool(_ tool: String, _ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        let out = root.appendingPathComponent("tool-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        let h = try FileHandle(forWritingTo: out)
        p.standardOutput = h
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        try h.close()
        guard p.terminationStatus == 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "\(tool) exited \(p.terminationStatus)"]) }
        return try String(contentsOf: out, encoding: .utf8)
    }
}
