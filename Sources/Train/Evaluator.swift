// Evaluation: run the model over a sequence from zero state (one stream),
// predicting event t+1 from events ≤ t. The recurrence is sequential (GEMV per
// step); the output layer runs as one GEMM per block of steps.
import Checkpoints
import CKernels
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
    public static func evaluate(weights: LSTMWeights, events: [Int32]) -> EvaluationResult {
        let shape = weights.shape
        let H = shape.hidden, G = 4 * H, V = shape.vocab, N = shape.notes
        let n = events.count / 2
        var result = EvaluationResult(predictions: 0, lossSum: 0, correctNote: 0, correctTick: 0, correctBoth: 0)
        guard n >= 2 else { return result }
        precondition((try? EventValidation.check(events, shape: shape)) != nil,
                     "Evaluator.evaluate: events outside the vocabulary")
        let T = block
        let hBlock = FloatBuffer(count: (T + 1) * H)  // row 0: h before the block
        let c = FloatBuffer(count: H), cNext = FloatBuffer(count: H), tanhC = FloatBuffer(count: H)
        let gates = FloatBuffer(count: G)
        let logits = FloatBuffer(count: T * V)
        weights.wx.withUnsafeBufferPointer { wxb in
            weights.wy.withUnsafeBufferPointer { wyb in
                events.withUnsafeBufferPointer { ev in
                    guard let wx = wxb.baseAddress, let wy = wyb.baseAddress else { return }
                    let rec = UnsafeBufferPointer(start: wx + shape.recurrentRow * G, count: H * G)
                    let bias = wx + shape.wxBiasRow * G
                    var start = 0
                    while start < n - 1 {
                        let rows = min(T, n - 1 - start)
                        for s in 0..<rows {
                            let e = start + s
                            let rn = wx + shape.noteRow(Int(ev[2 * e])) * G
                            let rt = wx + shape.tickRow(Int(ev[2 * e + 1])) * G
                            let g = gates.pointer
                            drummer_add3(Int32(G), rn, rt, bias, g)
                            BLAS.sgemv(.transposed, rows: H, cols: G, alpha: 1, a: rec, lda: G,
                                       x: hBlock.buffer(s * H, H), beta: 1, y: gates.mutable(0, G))
                            Kernels.cellForward(H: H, gates: g, cPrev: c.pointer, cNew: cNext.pointer,
                                                tanhC: tanhC.pointer, hNew: hBlock.pointer + (s + 1) * H)
                            c.pointer.update(from: cNext.pointer, count: H)
                        }
                        for r in 0..<rows { (logits.pointer + r * V).update(from: wy + H * V, count: V) }
                        BLAS.sgemm(.none, .none, m: rows, n: V, k: H, alpha: 1, a: hBlock.buffer(H, rows * H),
                                   lda: H, b: UnsafeBufferPointer(start: wy, count: H * V), ldb: V, beta: 1,
                                   c: logits.mutable(0, rows * V), ldc: V)
                        for r in 0..<rows {
                            let e = start + r + 1
                            let tn = Int(ev[2 * e]), tt = Int(ev[2 * e + 1])
                            let y = logits.pointer + r * V
                            let okN = Softmax.argmax(UnsafeBufferPointer(start: y, count: N)) == tn
                            let okT = Softmax.argmax(UnsafeBufferPointer(start: y + N, count: V - N)) == tt
                            let nllN = Kernels.negativeLogLikelihood(y, count: N, target: tn)
                            let nllT = Kernels.negativeLogLikelihood(y + N, count: V - N, target: tt)
                            result.lossSum += Double(nllN) + Double(nllT)
                            if okN { result.correctNote += 1 }
                            if okT { result.correctTick += 1 }
                            if okN && okT { result.correctBoth += 1 }
                        }
                        hBlock.pointer.update(from: hBlock.pointer + rows * H, count: H)
                        start += rows
                    }
                }
            }
        }
        result.predictions = n - 1
        return result
    }
}
