// Evaluation against the double-precision forward: loss and accuracies over a
// sequence longer than one output block.
import DrummerCore
import XCTest
@testable import Checkpoints
@testable import Train

final class EvaluatorTests: XCTestCase {
    func testMatchesDoubleForward() throws {
        let shape = ModelShape(notes: 4, ticks: 5, hidden: 7)
        var rng = SeededRNG(seed: 31)
        let w = try LSTMWeights(shape: shape, wx: Problem.uniform(shape.wxCount, 0.8, rng: &rng),
                                wy: Problem.uniform(shape.wyCount, 0.8, rng: &rng))
        // Biased events so that argmax accuracy is informative.
        var events: [Int32] = []
        for k in 0..<(Evaluator.block + 90) {
            events.append(Int32(k % 3 == 0 ? 1 : rng.index(below: 4)))
            events.append(Int32(k % 2 == 0 ? 2 : rng.index(below: 5)))
        }
        let got = Evaluator.evaluate(weights: w, events: events)
        let model = DoubleModel(shape: shape, params: (w.wx + w.wy).map(Double.init))
        var h = [Double](repeating: 0, count: 7), c = h
        var loss = 0.0, okN = 0, okT = 0, okBoth = 0
        let n = events.count / 2
        for e in 0..<(n - 1) {
            (h, c) = model.cell(note: Int(events[2 * e]), tick: Int(events[2 * e + 1]), h: h, c: c)
            let r = model.nll(model.logits(h), note: Int(events[2 * e + 2]), tick: Int(events[2 * e + 3]))
            loss += r.loss
            if r.okNote { okN += 1 }
            if r.okTick { okT += 1 }
            if r.okNote && r.okTick { okBoth += 1 }
        }
        XCTAssertEqual(got.predictions, n - 1)
        XCTAssertEqual(got.lossSum, loss, accuracy: 1e-5 * loss)
        XCTAssertEqual(got.correctNote, okN)
        XCTAssertEqual(got.correctTick, okT)
        XCTAssertEqual(got.correctBoth, okBoth)
        XCTAssertGreaterThan(okBoth, 0)
        XCTAssertEqual(got.meanLoss, loss / Double(n - 1), accuracy: 1e-5)
        XCTAssertEqual(got.accuracy, Double(okBoth) / Double(n - 1), accuracy: 1e-12)
    }

    /// From zero state at p = 0, the trainer's first chunk loss is the evaluator's mean loss
    /// over the first U predictions.
    func testAgreesWithTrainerChunkLoss() throws {
        let shape = ModelShape(notes: 3, ticks: 5, hidden: 6)
        var rng = SeededRNG(seed: 32)
        let U = 9
        let w = try LSTMWeights(shape: shape, wx: Problem.uniform(shape.wxCount, 0.6, rng: &rng),
                                wy: Problem.uniform(shape.wyCount, 0.6, rng: &rng))
        let events = Problem.events(count: 30, shape: shape, rng: &rng)
        let trainer = try Trainer(state: TrainingState(weights: w, unroll: U, batch: 1, optimizer: .sgd),
                                  events: events, optimizer: OptimizerConfig(learningRate: 0.1))
        let (loss, _) = trainer.chunkGradient()
        let r = Evaluator.evaluate(weights: w, events: Array(events.prefix(2 * (U + 1))))
        XCTAssertEqual(r.predictions, U)
        XCTAssertEqual(r.meanLoss, Double(loss), accuracy: 1e-5)
    }

    func testTooShortSequenceMakesNoPredictions() throws {
        let shape = ModelShape(notes: 2, ticks: 2, hidden: 3)
        let w = try LSTMWeights(shape: shape, wx: [Float](repeating: 0.1, count: shape.wxCount),
                                wy: [Float](repeating: 0.1, count: shape.wyCount))
        let r = Evaluator.evaluate(weights: w, events: [1, 1])
        XCTAssertEqual(r.predictions, 0)
        XCTAssertEqual(r.meanLoss, 0)
        XCTAssertEqual(r.accuracy, 0)
    }
}
