// Evaluation against the double-precision forward: loss and accuracies over a
// sequence longer than one output block.
import DrummerCore
@testable import Sample
import ReferenceModel
import XCTest
@testable import Checkpoints
@testable import Train
@testable import TrainRun

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

/// `drummer eval` and `drummer sample` run the same forward (DrummerCore.LSTMInference):
/// on the same sequence, eval's loss per step equals the loss computed from the sampler's
/// own probabilities.
final class EvalSamplerAgreementTests: XCTestCase {
    func testEvalStepLossEqualsSamplerProbabilities() throws {
        let vocab = try Vocabulary(ixToNote: [35, 36, 38, 42, 46], ixToTick: [0, 30, 60, 120, 240, 480, 960])
        let shape = vocab.shape(hidden: 12)
        var rng = SeededRNG(seed: 41)
        let w = try LSTMWeights(shape: shape, wx: Problem.uniform(shape.wxCount, 1.2, rng: &rng),
                                wy: Problem.uniform(shape.wyCount, 1.2, rng: &rng))
        let events = Problem.events(count: Evaluator.block + 77, shape: shape, rng: &rng)
        let eval = Evaluator.evaluate(weights: w, events: events, recordSteps: true)
        let sampler = try Sampler(weights: w, vocabulary: vocab)
        let sequence = stride(from: 0, to: events.count, by: 2).map {
            SampledEvent(note: Int(events[$0]), tick: Int(events[$0 + 1]))
        }
        let fromSampler = try sampler.negativeLogLikelihoods(of: sequence)
        let steps = try XCTUnwrap(eval.stepLosses)
        XCTAssertEqual(steps.count, sequence.count - 1)
        XCTAssertEqual(fromSampler.count, steps.count)
        var worst = 0.0
        for (k, (e, s)) in zip(steps, fromSampler).enumerated() {
            let d = abs(e - (s.note + s.tick))
            worst = max(worst, d)
            // Same h and c bit for bit; the logits differ only by GEMM-vs-GEMV rounding and the
            // softmaxes by float32 exp implementations.
            XCTAssertEqual(e, s.note + s.tick, accuracy: 2e-5 * max(1, e), "step \(k)")
        }
        XCTAssertGreaterThan(steps.reduce(0, +), 0)
        print("eval vs sampler per-step loss: worst absolute difference \(worst) over \(steps.count) steps")
    }
}

/// The share of its rows a run reads (TrainingRun.readShare), as Trainer.step walks them: each
/// stream's chunks of U + 1 rows from its segment's start, again from the start when the next
/// chunk would reach the segment's end.
final class ReadShareTests: XCTestCase {
    func testTheSharesAgainstAWalkOfTheTrainersPointer() {
        for (rows, batch, unroll) in [(3200, 32, 64), (3200, 24, 64), (298_400, 32, 64), (22, 1, 21), (1000, 3, 10), (130, 1, 64), (129, 1, 64)] {
            // The trainer's walk: a chunk at `pointer` reads rows pointer … pointer + unroll.
            let segment = rows / batch
            var pointer = 0, read = Set<Int>()
            for _ in 0..<(4 * segment) {
                read.formUnion(pointer...(pointer + unroll))
                pointer += unroll
                if pointer + unroll + 1 >= segment { pointer = 0 }
            }
            XCTAssertEqual(TrainingRun.readShare(rows: rows, batch: batch, unroll: unroll), Double(batch * read.count) / Double(rows),
                           accuracy: 1e-12, "\(rows) rows, \(batch) × \(unroll)")
        }
        XCTAssertEqual(TrainingRun.readShare(rows: 3200, batch: 32, unroll: 64), 0.65, accuracy: 1e-12)
        XCTAssertGreaterThan(TrainingRun.readShare(rows: 298_400, batch: 32, unroll: 64), 0.99, "the recipe reads the corpus nearly whole")
    }
}

extension Sampler {
    /// The negative log-likelihood (nats) of each event of `sequence` after the first, given
    /// the ones before it, under this sampler's own distributions at temperature 1 (its step,
    /// its softmax), from h = c = 0: `(note, tick)` per prediction. What `drummer eval`
    /// computes for a model of the 2017 layout, from the runtime's side. (The test's own: the
    /// runtime carries only what sampling uses.)
    func negativeLogLikelihoods(of sequence: [SampledEvent]) throws -> [(note: Double, tick: Double)] {
        for (i, e) in sequence.enumerated() where !(0..<N).contains(e.note) || !(0..<K).contains(e.tick) {
            throw SamplerError.primerOutOfRange(position: i, event: e, notes: N, ticks: K)
        }
        lstm.resetState()
        var out: [(note: Double, tick: Double)] = []
        out.reserveCapacity(max(0, sequence.count - 1))
        for (e, next) in zip(sequence, sequence.dropFirst()) {
            step(e)
            let logits = lstm.logits()
            let noteProbs = UnsafeMutableBufferPointer(rebasing: probs[noteColumns])
            let tickProbs = UnsafeMutableBufferPointer(rebasing: probs[tickColumns])
            Softmax.probabilities(UnsafeBufferPointer(rebasing: logits[noteColumns]), into: noteProbs)
            Softmax.probabilities(UnsafeBufferPointer(rebasing: logits[tickColumns]), into: tickProbs)
            out.append((-log(Double(noteProbs[next.note])), -log(Double(tickProbs[next.tick]))))
        }
        return out
    }
}
