// Determinism, in-memory state round trip, schedule and input validation of Trainer.
import DrummerCore
import XCTest
@testable import Checkpoints
@testable import Train

final class TrainerStateTests: XCTestCase {
    let shape = ModelShape(notes: 3, ticks: 4, hidden: 6)

    func makeProblem(batch: Int, kind: OptimizerKind, seed: UInt64 = 21) throws -> (TrainingState, [Int32], OptimizerConfig) {
        var rng = SeededRNG(seed: seed)
        var state = try Problem.state(shape: shape, unroll: 5, batch: batch, kind: kind, scale: 0.3, rng: &rng)
        state.h = [Float](repeating: 0, count: state.h.count)
        state.c = state.h
        let events = Problem.events(count: 23 * batch + 1, shape: shape, rng: &rng)
        return (state, events, OptimizerConfig(kind: kind, learningRate: kind == .rmsprop ? 0.01 : 0.3))
    }

    func testSameInputsGiveBitwiseIdenticalParameters() throws {
        for (batch, kind) in [(1, OptimizerKind.sgd), (3, .rmsprop), (2, .momentum), (17, .sgd)] {
            let (state, events, config) = try makeProblem(batch: batch, kind: kind)
            let a = try Trainer(state: state, events: events, optimizer: config)
            let b = try Trainer(state: state, events: events, optimizer: config)
            var lossesA: [Float] = [], lossesB: [Float] = []
            for _ in 0..<12 { lossesA.append(a.step()) }
            for _ in 0..<12 { lossesB.append(b.step()) }
            XCTAssertEqual(lossesA.map(\.bitPattern), lossesB.map(\.bitPattern), "losses, B=\(batch) \(kind)")
            XCTAssertEqual(a.snapshot().parameters.map(\.bitPattern), b.snapshot().parameters.map(\.bitPattern),
                           "parameters, B=\(batch) \(kind)")
            XCTAssertEqual(a.snapshot(), b.snapshot())
            XCTAssertNotEqual(a.snapshot().parameters, state.parameters, "training changed the weights")
        }
    }

    /// The helper thread changes timing, never results.
    func testHelperThreadGivesIdenticalBits() throws {
        // B = 17: two stream groups (8 + 9 streams), group 1's chunk and half of the update on
        // the helper thread or inline.
        for (batch, kind) in [(1, OptimizerKind.rmsprop), (3, .sgd), (17, .momentum), (17, .adam)] {
            let (state, events, config) = try makeProblem(batch: batch, kind: kind, seed: 23)
            let a = try Trainer(state: state, events: events, optimizer: config)
            let b = try Trainer(state: state, events: events, optimizer: config)
            XCTAssertEqual(a.streamGroupCount, batch >= 16 ? 2 : 1)
            a.usesHelperThread = true
            b.usesHelperThread = false
            for _ in 0..<9 { XCTAssertEqual(a.step().bitPattern, b.step().bitPattern) }
            XCTAssertEqual(a.snapshot(), b.snapshot(), "B=\(batch) \(kind)")
        }
    }

    /// Stopping after k steps, rebuilding a trainer from `state`, and continuing gives the
    /// same weights, state and losses, bit for bit, as running straight through.
    func testRestoredStateContinuesIdentically() throws {
        for (batch, kind) in [(1, OptimizerKind.rmsprop), (2, .sgd), (2, .momentum), (17, .rmsprop)] {
            let (state, events, config) = try makeProblem(batch: batch, kind: kind, seed: 22)
            let straight = try Trainer(state: state, events: events, optimizer: config)
            var lossesStraight: [Float] = []
            for _ in 0..<14 { lossesStraight.append(straight.step()) }
            let first = try Trainer(state: state, events: events, optimizer: config)
            for _ in 0..<7 { first.step() }
            let saved = first.snapshot()
            let resumed = try Trainer(state: saved, events: events, optimizer: config)
            XCTAssertEqual(resumed.snapshot(), saved, "state round trip through Trainer")
            var lossesResumed: [Float] = []
            for _ in 0..<7 { lossesResumed.append(resumed.step()) }
            XCTAssertEqual(lossesResumed.map(\.bitPattern), lossesStraight[7...].map(\.bitPattern))
            XCTAssertEqual(resumed.snapshot(), straight.snapshot(), "B=\(batch) \(kind)")
        }
    }

    func testScheduleWrapsAndResetsState() throws {
        // B=2, 47 events: L = 23; U = 5: chunks at p = 0, 5, 10, 15, then 20 + 6 ≥ 23 wraps.
        let (state, events, config) = try makeProblem(batch: 2, kind: .sgd)
        XCTAssertEqual(events.count / 2, 47)
        let t = try Trainer(state: state, events: events, optimizer: config)
        var pointers: [Int] = [], epochs: [Int] = []
        for _ in 0..<7 {
            t.step()
            pointers.append(t.snapshot().pointer)
            epochs.append(t.snapshot().epoch)
            if t.snapshot().pointer == 0 {
                XCTAssertTrue(t.snapshot().h.allSatisfy { $0 == 0 } && t.snapshot().c.allSatisfy { $0 == 0 }, "state reset on wrap")
            } else {
                XCTAssertTrue(t.snapshot().h.contains { $0 != 0 }, "state carried between chunks")
            }
        }
        XCTAssertEqual(pointers, [5, 10, 15, 0, 5, 10, 15])
        XCTAssertEqual(epochs, [0, 0, 0, 1, 1, 1, 1])
        XCTAssertEqual(t.snapshot().step, 7)
    }

    func testChangingLearningRateKeepsSlots() throws {
        let (state, events, config) = try makeProblem(batch: 1, kind: .rmsprop)
        let t = try Trainer(state: state, events: events, optimizer: config)
        t.step()
        let ms = t.snapshot().optimizer.slots["ms"]
        t.optimizerConfig.learningRate = 0.001
        XCTAssertEqual(t.snapshot().optimizer.slots["ms"], ms)
        XCTAssertEqual(t.optimizerConfig.learningRate, 0.001)
    }

    func testRejectsBadInputs() throws {
        let (state, events, config) = try makeProblem(batch: 1, kind: .rmsprop)
        func rejects(_ s: TrainingState, _ e: [Int32], _ c: OptimizerConfig, _ what: String) {
            XCTAssertThrowsError(try Trainer(state: s, events: e, optimizer: c), what) { err in
                XCTAssertFalse(String(describing: err).isEmpty)
            }
        }
        var bad = events
        bad[2 * 7 + 1] = Int32(shape.ticks)
        rejects(state, bad, config, "tick index out of range")
        bad = events
        bad[0] = -1
        rejects(state, bad, config, "negative note index")
        rejects(state, Array(events.prefix(11)), config, "odd buffer")
        rejects(state, Array(events.prefix(2 * 5)), config, "fewer than U+1 events")
        var s = state
        s.optimizer.slots = [:]
        rejects(s, events, config, "missing RMSProp slot")
        s = state
        s.h.removeLast()
        rejects(s, events, config, "h of the wrong size")
        s = state
        s.parameters[3] = .nan
        rejects(s, events, config, "NaN parameter")
        s = state
        s.pointer = events.count / 2 - 5
        rejects(s, events, config, "pointer leaves no chunk")
        s = state
        s.unroll = 1 << 40
        rejects(s, events, config, "buffers beyond the limit")
        var c = config
        c.learningRate = 0
        rejects(state, events, c, "zero learning rate")
        XCTAssertEqual(String(describing: TrainError.eventOutOfRange(event: 7, field: "tick", value: 4, count: 4)),
                       "event 7: tick index 4 is outside 0..<4")
    }
}
