// The model part of a checkpoint, for `drummer export` and `drummer eval`.
import DrummerCore
import Train

/// Weights, vocabulary and a description of the run that produced them.
public struct TrainedModel: Sendable {
    public let weights: LSTMWeights
    public let groups: ModelGroups
    public var vocabulary: Vocabulary { groups.vocabulary }
    /// Updates done when the checkpoint was written.
    public let step: Int
    /// Hyperparameters and provenance as strings (hidden, unroll, batch_size,
    /// optimizer, learning_rate, init, seed, epoch, dataset, dataset_fingerprint, ...).
    public let metadata: [String: String]

    public init(weights: LSTMWeights, groups: ModelGroups, step: Int, metadata: [String: String]) {
        self.weights = weights
        self.groups = groups
        self.step = step
        self.metadata = metadata
    }
}

public enum CheckpointReader {
    /// Checks the checkpoint at `path` as `loadModel` reads it (its seal: size and SHA-256,
    /// then HDF5's checksums and every field), keeping nothing: for a command that reads
    /// several checkpoints one after another to refuse a damaged one before any work.
    /// Errors are `CheckpointError`s naming it.
    public static func check(path: String) throws {
        _ = try loadModel(path: path)
    }

    /// Reads the checkpoint at `path`; errors are `CheckpointError`s naming it.
    public static func loadModel(path: String) throws -> TrainedModel {
        let ckpt = try Checkpoint.read(path: path)
        let weights: LSTMWeights
        do { weights = try ckpt.weights() } catch {
            throw CheckpointError.invalid(path: path, field: "/model", reason: "\(error)")
        }
        let c = ckpt.configuration
        var m: [String: String] = [
            "format": Checkpoint.formatName,
            "format_version": String(ckpt.formatVersion),
            "created_by": ckpt.createdBy,
            "checkpoint": path,
            "step": String(ckpt.state.step),
            "epoch": String(ckpt.state.epoch),
            "dataset": ckpt.datasetPath,
            "dataset_fingerprint": ckpt.datasetFingerprint,
            "smoothed_loss": String(ckpt.smoothedLoss),
        ]
        // The training settings model.json lists (the settings table says which).
        for setting in Settings.all {
            if let v = setting.metadata(of: c) { m[setting.name] = v }
        }
        if !ckpt.runID.isEmpty { m["run_id"] = ckpt.runID }
        if ckpt.bestValidationLoss.isFinite { m["best_validation_loss"] = String(ckpt.bestValidationLoss) }
        if c.schedule.isActive {
            // learning_rate is the base rate; with a schedule, also the rate a resumed run would go
            // on with (learning_rate_current).
            m["learning_rate_current"] = String(c.schedule.rate(base: c.learningRate, step: ckpt.state.step,
                                                                progress: ckpt.schedule))
        }
        return TrainedModel(weights: weights, groups: ckpt.groups, step: ckpt.state.step, metadata: m)
    }
}
