// Export of a checkpoint read through the Train module.

import DrummerCore
import Checkpoints

extension Exporter {
    /// Exports a trained model; the checkpoint's own format keys are renamed
    /// `checkpoint_format` / `checkpoint_format_version` in model.json's metadata.
    public static func export(model: TrainedModel, to dir: String, swiftFile: String? = nil) throws -> ExportSummary {
        var meta = model.metadata
        for key in ["format", "format_version"] {
            if let v = meta.removeValue(forKey: key) { meta["checkpoint_" + key] = v }
        }
        return try export(weights: model.weights, groups: model.groups, step: model.step,
                          metadata: meta, to: dir, swiftFile: swiftFile)
    }

    /// Reads the checkpoint at `checkpoint` and exports it.
    public static func export(checkpoint: String, to dir: String, swiftFile: String? = nil) throws -> ExportSummary {
        try export(model: CheckpointReader.loadModel(path: checkpoint), to: dir, swiftFile: swiftFile)
    }
}
