// Evaluation: run the model over a sequence from zero state (one stream),
// predicting event t+1 from events ≤ t. The recurrence is sequential (the
// inference step, a GEMV per step); the output layer runs as one GEMM per block.
import DrummerCore

public struct EvaluationResult: Sendable, Equatable {
    /// Predictions made: events − 1.
    public var predictions: Int
    /// Σ over predictions of NLL(note) + NLL(tick), nats.
    public var lossSum: Double
    public var correctNote: Int
    public var correctTick: Int
    /// Note and tick both right (the original's accuracy).
    public var correctBoth: Int
    /// NLL(note) + NLL(tick) of each prediction, when asked for (`recordSteps`).
    public var stepLosses: [Double]?

    public init(predictions: Int, lossSum: Double, correctNote: Int, correctTick: Int, correctBoth: Int) {
        self.predictions = predictions
        self.lossSum = lossSum
        self.correctNote = correctNote
        self.correctTick = correctTick
        self.correctBoth = correctBoth
    }

    /// Mean NLL(note) + NLL(tick) per prediction (0 when there are none).
    public var meanLoss: Double { predictions > 0 ? lossSum / Double(predictions) : 0 }
    /// Fraction with note and tick both right.
    public var accuracy: Double { fraction(correctBoth) }
    public var accuracyNote: Double { fraction(correctNote) }
    public var accuracyTick: Double { fraction(correctTick) }

    private func fraction(_ k: Int) -> Double { predictions > 0 ? Double(k) / Double(predictions) : 0 }
}

public enum Evaluator {
    /// Steps whose output layer runs as one GEMM.
    static let block = 256

    /// Evaluates `weights` on `events` (N×2: note index, tick index). Precondition:
    /// every index is inside the vocabulary (check with `EventValidation.check`).
    ///
    /// The recurrence is DrummerCore's `LSTMInference`, the step `drummer sample` runs, so h
    /// and c are bitwise the sampler's on the same sequence; only the output layer is batched
    /// (one GEMM per block of steps instead of one GEMV per step), which changes the logits by
    /// float32 rounding.
    public static func evaluate(weights: LSTMWeights, events: [Int32], recordSteps: Bool = false) -> EvaluationResult {
        let shape = weights.shape
        let H = shape.hidden, O = shape.outputWidth, N = shape.notes
        let n = events.count / 2
        var result = EvaluationResult(predictions: 0, lossSum: 0, correctNote: 0, correctTick: 0, correctBoth: 0)
        if recordSteps { result.stepLosses = [] }
        guard n >= 2 else { return result }
        if recordSteps { result.stepLosses?.reserveCapacity(n - 1) }
        precondition((try? EventValidation.check(events, shape: shape)) != nil,
                     "Evaluator.evaluate: events outside the vocabulary")
        let T = block
        let lstm = LSTMInference(weights: weights)
        let hBlock = FloatBuffer(count: T * H)  // h after each step of the block
        let logits = FloatBuffer(count: T * O)
        weights.wy.withUnsafeBufferPointer { wy in
            events.withUnsafeBufferPointer { ev in
                var start = 0
                while start < n - 1 {
                    let rows = min(T, n - 1 - start)
                    for s in 0..<rows {
                        let e = start + s
                        lstm.input[0] = Int(ev[2 * e])
                        lstm.input[1] = Int(ev[2 * e + 1])
                        lstm.step()
                        _ = hBlock.mutable(s * H, H).update(fromContentsOf: lstm.h)
                    }
                    // logits = [h, 1] · Wy for the block's rows.
                    for r in 0..<rows { _ = logits.mutable(r * O, O).update(fromContentsOf: wy[(H * O)...]) }
                    BLAS.sgemm(.none, .none, m: rows, n: O, k: H, alpha: 1, a: hBlock.buffer(0, rows * H),
                               lda: H, b: UnsafeBufferPointer(rebasing: wy[0..<(H * O)]), ldb: O, beta: 1,
                               c: logits.mutable(0, rows * O), ldc: O)
                    for r in 0..<rows {
                        let e = start + r + 1
                        let tn = Int(ev[2 * e]), tt = Int(ev[2 * e + 1])
                        let yn = logits.mutable(r * O, N), yt = logits.mutable(r * O + N, O - N)
                        let okN = Softmax.argmax(UnsafeBufferPointer(yn)) == tn
                        let okT = Softmax.argmax(UnsafeBufferPointer(yt)) == tt
                        let nllN = Kernels.negativeLogLikelihood(yn, target: tn)
                        let nllT = Kernels.negativeLogLikelihood(yt, target: tt)
                        result.lossSum += Double(nllN) + Double(nllT)
                        if recordSteps { result.stepLosses?.append(Double(nllN) + Double(nllT)) }
                        if okN { result.correctNote += 1 }
                        if okT { result.correctTick += 1 }
                        if okN && okT { result.correctBoth += 1 }
                    }
                    start += rows
                }
            }
        }
        result.predictions = n - 1
        return result
    }
}
