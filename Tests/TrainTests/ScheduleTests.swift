// The learning-rate schedule: step decay, plateau decay, and their validation.
import XCTest
@testable import Checkpoints
@testable import Train
@testable import TrainRun

final class ScheduleTests: XCTestCase {
    func testStepDecay() {
        let s = LearningRateSchedule(factor: 0.5, every: 10)
        let p = ScheduleProgress()
        XCTAssertEqual(s.rate(base: 2, step: 0, progress: p), 2)
        XCTAssertEqual(s.rate(base: 2, step: 9, progress: p), 2)
        XCTAssertEqual(s.rate(base: 2, step: 10, progress: p), 1)
        XCTAssertEqual(s.rate(base: 2, step: 35, progress: p), 0.25)
        XCTAssertEqual(LearningRateSchedule().rate(base: 2, step: 1000, progress: p), 2)
    }

    func testPlateauDecayCountsEvaluationsWithoutImprovement() {
        let s = LearningRateSchedule(factor: 0.1, plateauPatience: 2)
        var p = ScheduleProgress()
        XCTAssertFalse(s.observe(loss: 3, progress: &p))
        XCTAssertFalse(s.observe(loss: 2, progress: &p))
        XCTAssertFalse(s.observe(loss: 2.5, progress: &p))
        XCTAssertTrue(s.observe(loss: 2.1, progress: &p))
        XCTAssertEqual(p.plateauDecays, 1)
        XCTAssertEqual(p.badEvaluations, 0)
        XCTAssertEqual(s.rate(base: 1, step: 0, progress: p), 0.1, accuracy: 1e-7)
        XCTAssertFalse(s.observe(loss: 1.9, progress: &p))
        XCTAssertEqual(p.bestMonitored, 1.9)
        // Step and plateau decays multiply.
        let both = LearningRateSchedule(factor: 0.5, every: 4, plateauPatience: 1)
        XCTAssertEqual(both.rate(base: 1, step: 8, progress: ScheduleProgress(plateauDecays: 1)), 0.125)
    }

    func testPlateauDecayLowersTheRateOfARun() throws {
        let root = try RunFixture.temporaryDirectory("plateau")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 100), validation: RunFixture.events(count: 30, seed: 4))
        var o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: 30, lr: 3)
        o.evalEvery = 1
        o.lrDecay = 0.5
        o.lrPlateauPatience = 1
        let sink = LineSink()
        let run = try TrainingRun(options: o, reporter: sink.reporter)
        _ = try run.run(shouldStop: { false })
        XCTAssertGreaterThan(run.schedule.plateauDecays, 0, "a rate of 3 should stall within 30 evaluations")
        XCTAssertEqual(run.currentLearningRate, 3 * pow(0.5, Float(run.schedule.plateauDecays)))
        XCTAssertTrue(sink.text.contains("learning rate decayed to"), sink.text)
        let c = try Checkpoint.read(path: root.appendingPathComponent("c/ckpt-30.h5").path)
        XCTAssertEqual(c.schedule, run.schedule)
        // An exported model records the schedule and the rate a resumed run goes on with.
        let m = try CheckpointReader.loadModel(path: root.appendingPathComponent("c/ckpt-30.h5").path).metadata
        XCTAssertEqual(m["learning_rate"], "3.0")
        XCTAssertEqual(m["lr_decay"], "0.5")
        XCTAssertEqual(m["lr_plateau_patience"], "1")
        XCTAssertNil(m["lr_decay_every"])
        XCTAssertEqual(m["learning_rate_current"], String(run.currentLearningRate))
    }

    func testInvalidSchedulesAreRefused() {
        assertThrows(["--lr-decay", "(0, 1]"]) { try LearningRateSchedule(factor: 1.5, every: 3).validate() }
        assertThrows(["--lr-decay needs --lr-decay-every N and/or --lr-plateau-patience P"]) {
            try LearningRateSchedule(factor: 0.5).validate()
        }
        assertThrows(["--lr-decay-every must be at least 1"]) { try LearningRateSchedule(factor: 0.5, every: 0).validate() }
    }
}
