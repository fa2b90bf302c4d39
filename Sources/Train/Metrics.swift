// Loss and accuracies of a model over a sequence, as printed by `drummer eval`
// and logged during training.
import Checkpoints
import DrummerCore

/// Loss and accuracies of a model over one sequence (from zero state).
public struct Metrics: Sendable, Equatable, Codable {
    /// Predictions made (events − 1).
    public var events: Int
    /// Mean NLL of note + tick, nats per prediction.
    public var loss: Double
    /// Fraction with both note and tick right.
    public var accuracy: Double
    public var accuracyNote: Double
    public var accuracyTick: Double

    enum CodingKeys: String, CodingKey {
        case events, loss, accuracy
        case accuracyNote = "accuracy_note"
        case accuracyTick = "accuracy_tick"
    }

    public init(_ r: EvaluationResult) {
        events = r.predictions
        loss = r.meanLoss
        accuracy = r.accuracy
        accuracyNote = r.accuracyNote
        accuracyTick = r.accuracyTick
    }

    /// Runs `Evaluator` over `events` (flat note/tick index pairs).
    public static func evaluate(weights: LSTMWeights, events: [Int32]) -> Metrics {
        Metrics(Evaluator.evaluate(weights: weights, events: events))
    }
}
