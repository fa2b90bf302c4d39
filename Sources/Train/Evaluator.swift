// Evaluation: run the model over a sequence from zero state (one stream),
// predicting event t+1 from events ≤ t. The recurrence is sequential (the
// inference step, a GEMV per step); the output layer runs as one GEMM per block.
import DrummerCore

public struct EvaluationResult: Sendable, Equatable {
    /// Predictions made: events − 1.
    public var predictions: Int
    /// Per output group (note, tick, then velocity when the model has it): Σ over predictions
    /// of the group's NLL (nats), and how often its most likely class was right.
    var lossSums: [Double]
    var correct: [Int]
    /// Note and tick both right (the original's accuracy).
    public var correctBoth: Int
    /// The leading groups whose NLLs make `lossSum` (ModelShape.lossGroups).
    public var lossGroups: Int
    /// NLL(note) + NLL(tick) of each prediction, when asked for (`recordSteps`).
    public var stepLosses: [Double]?

    public init(groups: Int, lossGroups: Int = 2) {
        predictions = 0
        self.lossGroups = lossGroups
        lossSums = [Double](repeating: 0, count: groups)
        correct = [Int](repeating: 0, count: groups)
        correctBoth = 0
    }

    /// Σ NLL(note) + NLL(tick): the 2017 layout's loss; for
    /// the grid layout Σ over every group (a step's hit set, and the velocity and offset of
    /// each class it hits).
    public var lossSum: Double { lossSums[0..<lossGroups].reduce(0, +) }
    public var correctNote: Int { correct[0] }
    public var correctTick: Int { correct[1] }
    /// Mean NLL(note) + NLL(tick) per prediction (0 when there are none).
    public var meanLoss: Double { predictions > 0 ? lossSum / Double(predictions) : 0 }
    /// Mean NLL of output group g per prediction.
    public func meanLoss(group g: Int) -> Double { predictions > 0 ? lossSums[g] / Double(predictions) : 0 }
    /// Fraction with note and tick both right.
    public var accuracy: Double { fraction(correctBoth) }
    public var accuracyNote: Double { fraction(correctNote) }
    public var accuracyTick: Double { fraction(correctTick) }
    public func accuracy(group g: Int) -> Double { fraction(correct[g]) }

    private func fraction(_ k: Int) -> Double { predictions > 0 ? Double(k) / Double(predictions) : 0 }

    /// Adds `other`'s predictions (another file run from its own zero state): the sums add, the
    /// step losses follow on.
    public mutating func add(_ other: EvaluationResult) {
        precondition(other.lossSums.count == lossSums.count && other.lossGroups == lossGroups, "EvaluationResult.add: other groups")
        predictions += other.predictions
        for g in lossSums.indices {
            lossSums[g] += other.lossSums[g]
            correct[g] += other.correct[g]
        }
        correctBoth += other.correctBoth
        stepLosses = stepLosses.flatMap { a in other.stepLosses.map { a + $0 } }
    }
}

public enum Evaluator {
    /// Steps whose output layer runs as one GEMM.
    static let block = 256

    /// Evaluates `weights` on `events`, the class matrix (one row per event, one column per
    /// input group; for the original layout (note index, tick index) pairs). Precondition:
    /// every class is inside its group (check with `EventValidation.check`).
    ///
    /// The recurrence is DrummerCore's `LSTMInference`, the step `drummer sample` runs, so h
    /// and c are bitwise the sampler's on the same sequence; only the output layer is batched
    /// (one GEMM per block of steps instead of one GEMV per step), which changes the logits by
    /// float32 rounding.
    public static func evaluate(weights: LSTMWeights, events: [Int32], recordSteps: Bool = false) -> EvaluationResult {
        evaluate(weights: weights, events: events, recordSteps: recordSteps, shouldStop: nil)!
    }

    /// The same, asking `shouldStop` before every step: nil once it answers true (a stop
    /// request is honoured within one step, however long the sequence). OpenBLAS runs on one
    /// thread meanwhile, so the figures do not depend on the machine's cores.
    public static func evaluate(weights: LSTMWeights, events: [Int32], recordSteps: Bool = false,
                                shouldStop: (() -> Bool)?) -> EvaluationResult? {
        BLASRuntime.onOneThread {
            evaluateSteps(weights: weights, events: events, recordSteps: recordSteps, shouldStop: shouldStop)
        }
    }

    private static func evaluateSteps(weights: LSTMWeights, events: [Int32], recordSteps: Bool,
                                      shouldStop: (() -> Bool)?) -> EvaluationResult? {
        let shape = weights.shape
        let H = shape.hidden, O = shape.outputWidth, k = shape.inputGroups.count, m = shape.outputGroups.count
        let n = events.count / k
        var result = EvaluationResult(groups: m, lossGroups: shape.lossGroups)
        let lossGroups = shape.lossGroups
        if recordSteps { result.stepLosses = [] }
        guard n >= 2 else { return result }
        if recordSteps { result.stepLosses?.reserveCapacity(n - 1) }
        precondition((try? EventValidation.check(events, shape: shape)) != nil,
                     "Evaluator.evaluate: events outside the model's groups")
        let targets = targetColumns(of: shape)
        let head = shape.parameters.head
        let columns = head.outputColumns
        let T = block
        let lstm = LSTMInference(weights: weights)
        let hBlock = FloatBuffer(count: T * H)  // h after each step of the block
        let logits = FloatBuffer(count: T * O)
        var stopped = false
        weights.wy.withUnsafeBufferPointer { wy in
            events.withUnsafeBufferPointer { ev in
                var start = 0
                while start < n - 1 {
                    let rows = min(T, n - 1 - start)
                    for s in 0..<rows {
                        if let shouldStop, shouldStop() {
                            stopped = true
                            return
                        }
                        let e = start + s
                        for g in 0..<k { lstm.input[g] = ev[e * k + g] }
                        lstm.step()
                        _ = hBlock.mutable(s * H, H).update(fromContentsOf: lstm.h)
                    }
                    // logits = [h, 1] · Wy for the block's rows.
                    OutputLayer.logits(rows: rows, h: hBlock.buffer(0, rows * H), wy: wy, hidden: H,
                                       into: logits.mutable(0, rows * O))
                    for r in 0..<rows {
                        let e = start + r + 1
                        var noteRight = false, tickRight = false
                        var noteTick = 0.0
                        for g in 0..<m {
                            let target = Int(ev[e * k + targets[g]])
                            // A target equal to the group's size (the grid's "not hit") is not predicted.
                            if target >= columns[g].count { continue }
                            let y = logits.mutable(r * O + columns[g].lowerBound, columns[g].count)
                            let ok = Softmax.argmax(UnsafeBufferPointer(y)) == target
                            let nll = Double(Kernels.negativeLogLikelihood(y, target: target))
                            result.lossSums[g] += nll
                            if ok { result.correct[g] += 1 }
                            if g == 0 { noteRight = ok }
                            if g == 1 { tickRight = ok }
                            if g < lossGroups { noteTick += nll }
                        }
                        if noteRight && tickRight { result.correctBoth += 1 }
                        if recordSteps { result.stepLosses?.append(noteTick) }
                    }
                    start += rows
                }
            }
        }
        if stopped { return nil }
        result.predictions = n - 1
        return result
    }
}
