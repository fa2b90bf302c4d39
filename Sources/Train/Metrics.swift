// Loss and accuracies of a model over a sequence, as printed by `drummer eval`
// and logged during training.

import DrummerCore

/// Loss and accuracies of a model over one sequence (from zero state). `loss` is what the
/// run reports and chooses on (the 2017 layout: note + tick; a grid model: every output group,
/// per 16th step); `loss_all` is what training minimises (every output group's NLL).
public struct Metrics: Sendable, Equatable, Codable {
    /// Predictions made (events − 1).
    public var events: Int
    /// Mean NLL of note + tick, nats per prediction.
    public var loss: Double
    /// Fraction with both note and tick right.
    public var accuracy: Double
    public var accuracyNote: Double
    public var accuracyTick: Double
    /// Mean NLL of the note and of the tick alone.
    public var lossNote: Double
    public var lossTick: Double
    /// Mean NLL summed over every output group.
    public var lossAll: Double

    enum CodingKeys: String, CodingKey {
        case events, loss, accuracy
        case accuracyNote = "accuracy_note"
        case accuracyTick = "accuracy_tick"
        case lossNote = "loss_note"
        case lossTick = "loss_tick"
        case lossAll = "loss_all"
    }

    public init(_ r: EvaluationResult) {
        events = r.predictions
        loss = r.meanLoss
        accuracy = r.accuracy
        accuracyNote = r.accuracyNote
        accuracyTick = r.accuracyTick
        lossNote = r.meanLoss(group: 0)
        lossTick = r.meanLoss(group: 1)
        lossAll = (0..<r.lossSums.count).reduce(0) { $0 + r.meanLoss(group: $1) }
    }

    /// Runs `Evaluator` over `events` (the class matrix of the model's input groups).
    public static func evaluate(weights: LSTMWeights, events: [Int32]) -> Metrics {
        Metrics(Evaluator.evaluate(weights: weights, events: events))
    }

    /// The same with the sequence cut into files of `fileRows` rows each (in order, summing to
    /// the rows of `events`), each run from its own zero state: the predictions within each
    /// file, none from one file to the next (many files side by side on two threads:
    /// Evaluator.evaluateFiles).
    public static func evaluate(weights: LSTMWeights, events: [Int32], fileRows: [Int]) -> Metrics {
        Metrics(Evaluator.evaluateFiles(weights: weights, events: events, fileRows: fileRows)!)
    }

    /// The same over at most the first `maxEvents` events (all when nil), asking `shouldStop`
    /// before every step: nil when it answered true.
    public static func evaluate(weights: LSTMWeights, events: [Int32], maxEvents: Int?, shouldStop: (() -> Bool)?) -> Metrics? {
        let k = weights.shape.inputGroups.count
        let rows = maxEvents.map { min($0, events.count / k) } ?? events.count / k
        let slice = rows * k == events.count ? events : Array(events.prefix(rows * k))
        return Evaluator.evaluate(weights: weights, events: slice, shouldStop: shouldStop).map(Metrics.init)
    }
}
