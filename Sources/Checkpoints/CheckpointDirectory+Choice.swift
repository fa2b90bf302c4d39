// Which checkpoint of a directory a model is taken from (`drummer export DIR --step`,
// `drummer sample DIR --step`): the best by validation loss, the latest, or a given step.
import DrummerCore

/// `--step best|latest|N`.
public enum CheckpointChoice: Equatable, Sendable, CustomStringConvertible {
    /// The checkpoint with the lowest validation loss the run recorded (the latest when it
    /// recorded none: a dataset without a validation split).
    case best
    case latest
    case step(Int)

    /// Parses "best", "latest" or a step number ≥ 0.
    public init?(_ text: String) {
        switch text {
        case "best": self = .best
        case "latest": self = .latest
        default:
            guard let n = Int(text), n >= 0 else { return nil }
            self = .step(n)
        }
    }

    public var description: String {
        switch self {
        case .best: return "best"
        case .latest: return "latest"
        case .step(let n): return String(n)
        }
    }
}

public struct CheckpointChoiceError: Error, CustomStringConvertible, Equatable, Sendable {
    public let description: String
    public init(description: String) { self.description = description }
}

extension CheckpointDirectory {
    /// The path of the checkpoint `choice` names, and a sentence saying which it is.
    public func checkpoint(_ choice: CheckpointChoice) throws -> (path: String, why: String) {
        let all = list()
        guard let latest = all.last else {
            throw CheckpointChoiceError(description: "\(path): holds no checkpoint (ckpt-<step>.h5)")
        }
        let steps = all.map { String($0.step) }.joined(separator: ", ")
        switch choice {
        case .latest:
            return (latest.path, "the latest, step \(latest.step)")
        case .step(let n):
            guard let c = all.first(where: { $0.step == n }) else {
                throw CheckpointChoiceError(description: "\(path): has no checkpoint of step \(n) (it has steps \(steps))")
            }
            return (c.path, "step \(n)")
        case .best:
            // The run records its best step in every checkpoint; the latest knows the last word.
            let best = try Checkpoint.read(path: latest.path).bestStep
            if best >= 0, let c = all.first(where: { $0.step == best }) {
                return (c.path, "the best by validation loss, step \(best)")
            }
            if best >= 0 {
                throw CheckpointChoiceError(description: "\(path): its best step \(best) has no checkpoint any more (it has steps \(steps)); give --step")
            }
            return (latest.path, "the latest, step \(latest.step) (the run has no validation loss to choose by)")
        }
    }
}
