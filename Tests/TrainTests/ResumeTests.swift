// Exact resume: N steps straight equal K steps, then a resume to N, to the bit;
// what a resumed run may and may not change; dataset fingerprints.
import DrummerCore
import XCTest
@testable import Checkpoints
@testable import Train
@testable import TrainRun
import ModelFiles

final class ResumeTests: XCTestCase {
    /// A checkpoint whose run trained with a setting drummer no longer has (Settings.retired)
    /// is refused on resume, naming the setting; off, it resumes; both load for export.
    func testARetiredSettingInUseIsRefusedOnResume() throws {
        let root = try RunFixture.temporaryDirectory("retired")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 200))
        let run = try TrainingRun(options: RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: 2),
                                  reporter: LineSink().reporter)
        XCTAssertEqual(try run.run(shouldStop: { false }).step, 2)
        let checkpoint = try Checkpoint.read(path: root.appendingPathComponent("c/ckpt-2.h5").path)
        XCTAssertEqual(checkpoint.retiredSettingsInUse, [])
        let retired = try XCTUnwrap(Settings.retired.first { $0.name == "lookback_from_model" })
        for (value, refused) in [(0.25, true), (0.0, false)] {
            // The checkpoint as a drummer that had the setting wrote it: one more attribute (a
            // name of its own: ckpt-<step>.h5 must hold that step).
            let path = root.appendingPathComponent("c/retired-\(refused ? 3 : 4).h5").path
            try CheckpointArchive.create(path: path) { f in
                try checkpoint.encode(into: f)
                try f.setAttribute("/hyperparameters", retired.name, double: value)
            }
            let read = try Checkpoint.read(path: path)
            XCTAssertEqual(read.retiredSettingsInUse, refused ? ["--lookback-from-model 0.25"] : [], "\(value)")
            XCTAssertEqual(read.state.parameters, checkpoint.state.parameters, "the weights load as they are")
            let resume = RunOptions(steps: 6, resume: path)
            if refused {
                XCTAssertThrowsError(try TrainingRun(options: resume, reporter: LineSink().reporter)) { e in
                    XCTAssertEqual("\(e)", "\(path): its run trained with --lookback-from-model 0.25, which drummer no longer has "
                                   + "(docs/research.md): it cannot resume; export, sample or evaluate it as it is, or start a new run")
                }
            } else {
                XCTAssertNoThrow(try TrainingRun(options: resume, reporter: LineSink().reporter))
            }
        }
    }

    func straightAndResumed(batch: Int, optimizer: OptimizerKind, schedule: (Float?, Int?) = (nil, nil), layers: Int = 1,
                            dropout: Float = 0, weightDecay: Float = 0) throws
        -> (straight: Checkpoint, resumed: Checkpoint)
    {
        let root = try RunFixture.temporaryDirectory("resume")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        // 2 streams × 90 events: several epoch wraps in 20 steps of U = 8.
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 90 * batch),
                                    validation: RunFixture.events(count: 40, seed: 9))
        var a = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("a"), steps: 20,
                                   batch: batch, optimizer: optimizer)
        a.lrDecay = schedule.0
        a.lrDecayEvery = schedule.1
        if layers > 1 { a[Settings.layers] = layers }
        if dropout > 0 { a[Settings.dropout] = dropout }
        if weightDecay > 0 { a[Settings.weightDecay] = weightDecay }
        let straight = try TrainingRun(options: a, reporter: LineSink().reporter)
        XCTAssertEqual(try straight.run(shouldStop: { false }).step, 20)

        var b = a
        b.checkpointDirectory = root.appendingPathComponent("b").path
        b.steps = 10
        let first = try TrainingRun(options: b, reporter: LineSink().reporter)
        XCTAssertEqual(try first.run(shouldStop: { false }).step, 10)
        let resume = RunOptions(steps: 20, resume: root.appendingPathComponent("b/ckpt-10.h5").path)
        let second = try TrainingRun(options: resume, reporter: LineSink().reporter)
        XCTAssertEqual(second.snapshot().step, 10)
        XCTAssertEqual(try second.run(shouldStop: { false }).step, 20)

        // The train log of the resumed run equals the straight run's (evaluations at 5, 10, 15, 20).
        let logA = try String(contentsOf: root.appendingPathComponent("a/train_log.csv"), encoding: .utf8)
        let logB = try String(contentsOf: root.appendingPathComponent("b/train_log.csv"), encoding: .utf8)
        XCTAssertEqual(logA, logB)
        XCTAssertEqual(logA.split(separator: "\n").count, 5)

        let s = try Checkpoint.read(path: root.appendingPathComponent("a/ckpt-20.h5").path)
        let r = try Checkpoint.read(path: root.appendingPathComponent("b/ckpt-20.h5").path)
        XCTAssertGreaterThan(s.state.epoch, 0, "the run should wrap at least one epoch")
        return (s, r)
    }

    /// Two stacked layers resume to the bit like one (B = 2: one stream group; B = 17: two).
    func testResumeIsBitwiseExactTwoLayers() throws {
        for batch in [2, 17] {
            let (s, r) = try straightAndResumed(batch: batch, optimizer: .rmsprop, layers: 2)
            XCTAssertEqual(s.state.shape.layers, 2)
            XCTAssertEqual(s.configuration.layers, 2)
            XCTAssertEqual(s.formatVersion, 3, "a stacked model's checkpoint is version 3")
            XCTAssertEqual(s.state.h.count, 2 * batch * s.state.shape.hidden)
            assertBitwiseEqual(s, r)
        }
    }

    func testResumeIsBitwiseExactBatch1() throws {
        let (s, r) = try straightAndResumed(batch: 1, optimizer: .sgd)
        assertBitwiseEqual(s, r)
    }

    func testResumeIsBitwiseExactBatch3RMSPropWithStepDecay() throws {
        let (s, r) = try straightAndResumed(batch: 3, optimizer: .rmsprop, schedule: (0.5, 7))
        assertBitwiseEqual(s, r)
        XCTAssertEqual(s.state.optimizer.slots.keys.sorted(), ["ms"])
    }

    /// Dropout's masks are a function of the step: a resumed run replays them (B = 17: two
    /// stream groups draw what one would); and a run with dropout differs from one without.
    func testResumeIsBitwiseExactWithDropout() throws {
        let (s, r) = try straightAndResumed(batch: 17, optimizer: .rmsprop, layers: 2, dropout: 0.3)
        assertBitwiseEqual(s, r)
        let (plain, _) = try straightAndResumed(batch: 17, optimizer: .rmsprop, layers: 2)
        XCTAssertNotEqual(s.state.parameters, plain.state.parameters, "the dropout changed the training")
    }

    /// --weight-decay resumes alike (B = 17, Adam), the setting kept in the checkpoint; it
    /// changes the training.
    func testResumeIsBitwiseExactWithWeightDecay() throws {
        let (s, r) = try straightAndResumed(batch: 17, optimizer: .adam, weightDecay: 0.5)
        assertBitwiseEqual(s, r)
        XCTAssertEqual(s.configuration[Settings.weightDecay], 0.5)
        let (noDecay, _) = try straightAndResumed(batch: 17, optimizer: .adam)
        XCTAssertNotEqual(s.state.parameters, noDecay.state.parameters, "the weight decay changed the training")
    }

    /// Adam's two moments and its step count (the bias correction) resume exactly.
    func testResumeIsBitwiseExactBatch16Adam() throws {
        let (s, r) = try straightAndResumed(batch: 16, optimizer: .adam)
        assertBitwiseEqual(s, r)
        XCTAssertEqual(s.state.optimizer.slots.keys.sorted(), ["m", "v"])
    }

    func testResumeIsBitwiseExactBatch2Momentum() throws {
        let (s, r) = try straightAndResumed(batch: 2, optimizer: .momentum)
        assertBitwiseEqual(s, r)
    }

    /// B = 16: two stream groups of 8.
    func testResumeIsBitwiseExactBatch16StreamGroups() throws {
        let (s, r) = try straightAndResumed(batch: 16, optimizer: .sgd)
        assertBitwiseEqual(s, r)
    }

    /// An interrupted run resumed with `--resume` alone finishes its `--steps` and
    /// ends where an uninterrupted run does.
    func testInterruptedRunResumedAloneMatchesStraightRun() throws {
        let root = try RunFixture.temporaryDirectory("interrupt")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 150))
        let a = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("a"), steps: 16, batch: 2)
        let straight = try TrainingRun(options: a, reporter: LineSink().reporter)
        _ = try straight.run(shouldStop: { false })

        var b = a
        b.checkpointDirectory = root.appendingPathComponent("b").path
        let first = try TrainingRun(options: b, reporter: LineSink().reporter)
        let summary = try first.run(shouldStop: { first.trainer.progress.step == 7 })
        XCTAssertEqual(summary.ending, .interrupted)
        XCTAssertEqual(summary.step, 7)
        let second = try TrainingRun(options: RunOptions(resume: root.appendingPathComponent("b/ckpt-7.h5").path),
                                     reporter: LineSink().reporter)
        XCTAssertEqual(second.configuration.steps, 16)
        XCTAssertEqual(try second.run(shouldStop: { false }).step, 16)
        XCTAssertEqual(second.snapshot().parameters.map(\.bitPattern), straight.snapshot().parameters.map(\.bitPattern))
        XCTAssertEqual(second.smoothedLoss, straight.smoothedLoss)
        // Resuming a finished run has nothing to do and writes nothing.
        let done = try TrainingRun(options: RunOptions(resume: root.appendingPathComponent("b/ckpt-16.h5").path),
                                   reporter: LineSink().reporter)
        XCTAssertEqual(try done.run(shouldStop: { false }).ending, .nothingToDo)
    }

    /// A stop during an evaluation saves the step owing its evaluation; the run resumed from it
    /// evaluates that step first, so that the plateau schedule and the best step go on as in the
    /// uninterrupted run: the same weights, rate and best step at the end. Both an evaluation of
    /// the loop (step 6 of every 2nd) and the final one (step 13).
    func testAStopDuringAnEvaluationIsResumedByThatEvaluation() throws {
        let root = try RunFixture.temporaryDirectory("pending")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 150), validation: RunFixture.events(count: 40, seed: 4))
        var a = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("a"), steps: 13, batch: 2, lr: 3)
        a.evalEvery = 2
        a.lrDecay = 0.5
        a.lrPlateauPatience = 1
        let straight = try TrainingRun(options: a, reporter: LineSink().reporter)
        _ = try straight.run(shouldStop: { false })
        XCTAssertGreaterThan(straight.schedule.plateauDecays, 0, "the check needs a schedule the evaluations change")

        for stopAt in [6, 13] {
            var b = a
            b.checkpointDirectory = root.appendingPathComponent("b\(stopAt)").path
            let first = try TrainingRun(options: b, reporter: LineSink().reporter)
            // Asked after every step's evaluation and before every evaluated event: true from the
            // first evaluated event of step stopAt's evaluation on (step 13's is the final one,
            // after the loop's own check at step 13).
            var asked = 0
            let sink = LineSink()
            let stopped = try first.run(shouldStop: {
                guard first.trainer.progress.step == stopAt else { return false }
                asked += 1
                return stopAt == 6 || asked > 1
            })
            XCTAssertEqual(stopped.ending, .interrupted)
            let path = root.appendingPathComponent("b\(stopAt)/ckpt-\(stopAt).h5").path
            XCTAssertNotNil(try Checkpoint.read(path: path).pendingEvaluation, "step \(stopAt)'s checkpoint owes its evaluation")
            let second = try TrainingRun(options: RunOptions(resume: path), reporter: sink.reporter)
            XCTAssertEqual(try second.run(shouldStop: { false }).step, 13)
            XCTAssertTrue(sink.text.contains("step \(stopAt)'s evaluation was cut short when the run stopped: evaluating it first"), sink.text)
            XCTAssertTrue(sink.text.contains("eval step \(stopAt):"), sink.text)
            XCTAssertNil(try Checkpoint.read(path: path).pendingEvaluation, "saved again with its evaluation")
            XCTAssertEqual(second.snapshot().parameters.map(\.bitPattern), straight.snapshot().parameters.map(\.bitPattern), "stop at \(stopAt)")
            XCTAssertEqual(second.schedule, straight.schedule, "stop at \(stopAt)")
            XCTAssertEqual(second.bestStep, straight.bestStep, "stop at \(stopAt)")
            XCTAssertEqual(second.bestValidationLoss, straight.bestValidationLoss, "stop at \(stopAt)")
            let final = try Checkpoint.read(path: root.appendingPathComponent("b\(stopAt)/ckpt-13.h5").path)
            XCTAssertEqual(final.schedule, straight.schedule)
            XCTAssertEqual(final.bestStep, straight.bestStep)
        }
    }

    func testResumingFromAnEarlierCheckpointDropsLaterLogRowsAndSaysSo() throws {
        let root = try RunFixture.temporaryDirectory("rewind")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 100))
        let run = try TrainingRun(options: RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: 20),
                                  reporter: LineSink().reporter)
        _ = try run.run(shouldStop: { false })
        let log = root.appendingPathComponent("c/train_log.csv")
        let full = try String(contentsOf: log, encoding: .utf8)
        func steps() -> [Int] { CheckpointDirectory(path: root.appendingPathComponent("c").path).list().map(\.step) }
        XCTAssertEqual(steps(), [5, 10, 15, 20])
        // A resume with nothing to train changes nothing (it dropped the log's later rows).
        var idle = RunOptions(resume: root.appendingPathComponent("c/ckpt-10.h5").path)
        idle.steps = 10
        let quiet = LineSink()
        XCTAssertEqual(try TrainingRun(options: idle, reporter: quiet.reporter).run(shouldStop: { false }).ending, .nothingToDo)
        XCTAssertEqual(try String(contentsOf: log, encoding: .utf8), full)
        XCTAssertEqual(steps(), [5, 10, 15, 20])
        XCTAssertFalse(quiet.text.contains("dropped"), quiet.text)
        // One that trains branches from its step: the later checkpoints and log rows go, said so
        // (the checkpoints stayed, past a run that stopped short of them, with no log rows).
        let sink = LineSink()
        _ = try TrainingRun(options: RunOptions(resume: root.appendingPathComponent("c/ckpt-10.h5").path), reporter: sink.reporter)
        XCTAssertTrue(sink.text.contains("removed 2 checkpoint(s) past step 10 from \(root.appendingPathComponent("c").path) "
                                         + "(ckpt-15.h5, ckpt-20.h5), of a run that went further: this run goes on from step 10"), sink.text)
        XCTAssertTrue(sink.text.contains("dropped 2 row(s) after step 10"), sink.text)
        XCTAssertEqual(steps(), [5, 10])
        let cut = try String(contentsOf: log, encoding: .utf8)
        XCTAssertEqual(cut.split(separator: "\n"), Array(full.split(separator: "\n").prefix(3)))
    }

    func testSameSeedSameWeightsDifferentSeedDifferentWeights() throws {
        let root = try RunFixture.temporaryDirectory("seed")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 100))
        func weights(seed: UInt64, dir: String) throws -> [UInt32] {
            var o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent(dir), steps: 6)
            o.seed = seed
            let run = try TrainingRun(options: o, reporter: LineSink().reporter)
            _ = try run.run(shouldStop: { false })
            return run.snapshot().parameters.map(\.bitPattern)
        }
        let a = try weights(seed: 3, dir: "a"), b = try weights(seed: 3, dir: "b"), c = try weights(seed: 4, dir: "c")
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(a, c)
    }

    /// Makes a 10-step checkpoint; returns (root, data dir, checkpoint path).
    func tenStepCheckpoint() throws -> (URL, URL, String) {
        let root = try RunFixture.temporaryDirectory("refuse")
        let data = root.appendingPathComponent("data")
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 100))
        let run = try TrainingRun(options: RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: 10),
                                  reporter: LineSink().reporter)
        _ = try run.run(shouldStop: { false })
        return (root, data, root.appendingPathComponent("c/ckpt-10.h5").path)
    }

    func testResumeRefusesFixedSettingsAndAcceptsChangeableOnes() throws {
        let (root, _, ckpt) = try tenStepCheckpoint()
        defer { try? FileManager.default.removeItem(at: root) }
        let refused: [(RunOptions, String)] = [
            (RunOptions(hidden: 7, resume: ckpt), "--hidden 7 differs from the checkpoint's hidden size 6"),
            (RunOptions(unroll: 9, resume: ckpt), "--unroll 9 differs from the checkpoint's unroll 8"),
            (RunOptions(batchSize: 2, resume: ckpt), "--batch-size 2 differs from the checkpoint's batch size 1"),
            (RunOptions(optimizer: .rmsprop, resume: ckpt), "--optimizer rmsprop differs from the checkpoint's optimizer sgd"),
            (RunOptions(initScheme: .original, resume: ckpt), "--init original differs"),
            (RunOptions(seed: 1, resume: ckpt), "--seed 1 differs"),
        ]
        for (o, message) in refused {
            assertThrows([message, "cannot change it"]) { try TrainingRun(options: o, reporter: LineSink().reporter) }
        }
        // The same values as the checkpoint's are accepted, and changeable ones override.
        var ok = RunOptions(hidden: 6, unroll: 8, batchSize: 1, optimizer: .sgd, resume: ckpt)
        ok.learningRate = 0.25
        ok.clip = 1
        ok.steps = 12
        ok.logEvery = 3
        let run = try TrainingRun(options: ok, reporter: LineSink().reporter)
        XCTAssertEqual(run.configuration.learningRate, 0.25)
        XCTAssertEqual(run.configuration.clip, 1)
        XCTAssertEqual(run.configuration.steps, 12)
        XCTAssertEqual(run.configuration.logEvery, 3)
        XCTAssertEqual(run.configuration.hidden, 6)
        XCTAssertEqual(run.configuration.checkpointDirectory, (ckpt as NSString).deletingLastPathComponent)
    }

    func testChangedDatasetRefused() throws {
        let (root, data, ckpt) = try tenStepCheckpoint()
        defer { try? FileManager.default.removeItem(at: root) }
        var events = RunFixture.events(count: 100)
        events[21] = events[21] == 0 ? 1 : 0  // one tick changed
        try RunFixture.writeDataset(data, events: events)
        assertThrows(["\(data.path): contents differ from the data \(ckpt) was trained on",
                      "resume on the data it was trained on, or start a new run on the new data"]) {
            try TrainingRun(options: RunOptions(resume: ckpt), reporter: LineSink().reporter)
        }
    }

    func testDifferentVocabularyRefused() throws {
        let (root, data, ckpt) = try tenStepCheckpoint()
        defer { try? FileManager.default.removeItem(at: root) }
        let v = try Vocabulary(ixToNote: [36, 38, 42, 51], ixToTick: [0, 12, 24, 48, 96])
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 100), vocabulary: v)
        assertThrows(["vocabulary", "only in the checkpoint: 46", "only in the dataset: 51"]) {
            try TrainingRun(options: RunOptions(resume: ckpt), reporter: LineSink().reporter)
        }
    }
}
