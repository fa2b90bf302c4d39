// --early-stop: a run stops once its best validation loss is --early-stop-patience
// evaluations old, saving its last step and naming the best checkpoint; it resumes into the
// same stop; the warnings about a rising validation loss and a small validation split.
import DrummerCore
import Foundation
import XCTest
@testable import Checkpoints
@testable import Train
@testable import TrainRun

final class EarlyStopTests: XCTestCase {
    /// Training data that repeats one pattern; validation data of other, random events: a
    /// large learning rate learns the pattern and the validation loss soon rises.
    func overfittingRun(_ root: URL, patience: Int, earlyStop: Bool = true, steps: Int = 60) throws -> (TrainingRun, LineSink) {
        let data = root.appendingPathComponent("data")
        var rng = SeededRNG(seed: 3)
        let validation: [Int32] = (0..<300).flatMap { _ in [Int32(rng.index(below: 4)), Int32(rng.index(below: 5))] }
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 400), validation: validation)
        var o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: steps,
                                   optimizer: .rmsprop, lr: 0.05)
        o.evalEvery = 2
        o.checkpointEvery = 1000
        o[Settings.earlyStop] = earlyStop
        o[Settings.earlyStopPatience] = patience
        let sink = LineSink()
        return (try TrainingRun(options: o, reporter: sink.reporter), sink)
    }

    func testStopsWhenTheBestValidationLossIsPatienceEvaluationsOld() throws {
        let root = try RunFixture.temporaryDirectory("early-stop")
        defer { try? FileManager.default.removeItem(at: root) }
        let (run, sink) = try overfittingRun(root, patience: 3)
        let summary = try run.run(shouldStop: { false })
        XCTAssertEqual(summary.ending, .earlyStopped, sink.text)
        XCTAssertLessThan(summary.step, 60, "it stopped before --steps")
        XCTAssertGreaterThanOrEqual(run.bestStep, 2)
        XCTAssertEqual(summary.step - run.bestStep, 3 * 2, "three evaluations of every 2 steps after the best")
        XCTAssertTrue(sink.text.contains("early stop at step \(summary.step)"), sink.text)
        XCTAssertTrue(sink.text.contains("ckpt-\(run.bestStep).h5"), sink.text)
        let saved = root.appendingPathComponent("c/ckpt-\(summary.step).h5").path
        XCTAssertEqual(summary.lastCheckpoint, saved)
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("c/ckpt-\(run.bestStep).h5").path))
        // The validation loss rose at two evaluations in a row before the stop: warned once.
        XCTAssertEqual(sink.lines.filter { $0.hasPrefix("warning: the validation loss has risen") }.count, 1, sink.text)
        // The validation split is small (300 hits): warned once, at the start.
        XCTAssertEqual(sink.lines.filter { $0.hasPrefix("warning: the validation split holds only 300 hits") }.count, 1, sink.text)

        // Without --early-stop the same run trains to --steps.
        let other = root.appendingPathComponent("off")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let (plain, _) = try overfittingRun(other, patience: 3, earlyStop: false)
        XCTAssertEqual(try plain.run(shouldStop: { false }), RunSummary(ending: .reachedSteps, step: 60,
                                                                       lastCheckpoint: other.appendingPathComponent("c/ckpt-60.h5").path))
    }

    /// The rule reads only the checkpointed best step: a run resumed before the stop stops at the
    /// same step as the straight run.
    func testResumedRunStopsWhereTheStraightOneDoes() throws {
        let root = try RunFixture.temporaryDirectory("early-stop-resume")
        defer { try? FileManager.default.removeItem(at: root) }
        let (straight, _) = try overfittingRun(root, patience: 3)
        let end = try straight.run(shouldStop: { false }).step
        let second = root.appendingPathComponent("b")
        try FileManager.default.createDirectory(at: second, withIntermediateDirectories: true)
        let (first, _) = try overfittingRun(second, patience: 3)
        // shouldStop is asked before the first step, after each step and during evaluations:
        // stop once step end − 3 is done.
        _ = try first.run(shouldStop: { first.trainer.progress.step == end - 3 })
        let resumed = try TrainingRun(options: RunOptions(resume: second.appendingPathComponent("c/ckpt-\(end - 3).h5").path),
                                      reporter: LineSink().reporter)
        let summary = try resumed.run(shouldStop: { false })
        XCTAssertEqual(summary.ending, .earlyStopped)
        XCTAssertEqual(summary.step, end)
    }
}
