// Errors of the run layer (options, resume, training stops); one-line messages.

public enum RunError: Error, CustomStringConvertible, Equatable {
    /// A flag that a resumed run may not change.
    case refusedOverride(option: String, requested: String, checkpoint: String, path: String)
    /// The dataset's contents differ from the ones the checkpoint was trained on.
    case datasetChanged(dataset: String, expected: String, found: String, checkpoint: String)
    /// The data's files take other styles (from their paths, by the model's style rule) than the run trained with.
    case stylesChanged(dataset: String, checkpoint: String, difference: String)
    /// The dataset's vocabulary differs from the model's.
    case vocabularyMismatch(source: String, difference: String)
    /// The loss or the weights became NaN or infinite.
    case nonFinite(step: Int, what: String, lastCheckpoint: String?)
    /// The numerics refused the data or the state.
    case trainerRejected(String)
    /// A stop request arrived while the data loaded, before the run claimed its directory.
    case interruptedBeforeTraining
    /// The training split is too small for the batch and unroll given (the message names flags that fit).
    case tooLittleData(dataset: String, message: String)
    /// The checkpoint's run trained with a setting drummer no longer has.
    case retiredSetting(checkpoint: String, setting: String)

    public var description: String {
        switch self {
        case let .refusedOverride(option, requested, checkpoint, path):
            return "\(option)\(requested.isEmpty ? "" : " " + requested) differs from the checkpoint's \(checkpoint) (\(path)); "
                + "a resumed run cannot change it: start a new run instead"
        case let .datasetChanged(dataset, expected, found, checkpoint):
            return "\(dataset): contents differ from the data \(checkpoint) was trained on "
                + "(fingerprint \(found.prefix(16))…, expected \(expected.prefix(16))…); "
                + "resume on the data it was trained on, or start a new run on the new data"
        case let .stylesChanged(dataset, checkpoint, difference):
            return "\(dataset): its files' styles differ from the ones \(checkpoint) was trained with (\(difference)); "
                + "the style input reads each file's path: resume on the data it was trained on, or start a new run on the new data"
        case let .vocabularyMismatch(source, difference):
            return "vocabulary of \(source) differs from the dataset's: \(difference)"
        case let .nonFinite(step, what, last):
            let keep = last.map { "; the last good checkpoint is \($0)" } ?? "; no checkpoint was written in this run"
            return "training stopped at step \(step): \(what)\(keep)"
        case let .trainerRejected(message):
            return message
        case .interruptedBeforeTraining:
            return "interrupted while loading, before any training: nothing was written"
        case let .tooLittleData(dataset, message):
            return "\(dataset): \(message)"
        case let .retiredSetting(checkpoint, setting):
            return "\(checkpoint): its run trained with \(setting), which drummer no longer has (docs/research.md): "
                + "it cannot resume; export, sample or evaluate it as it is, or start a new run"

        }
    }
}

import Checkpoints
import DrummerCore
