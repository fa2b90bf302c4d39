// Export of a checkpoint read through the Train module.

import DrummerCore
import Checkpoints
import FileOutput
import ModelFiles

extension Exporter {
    /// Exports a trained model; the checkpoint's own format keys are renamed
    /// `checkpoint_format` / `checkpoint_format_version` in model.json's metadata.
    /// `sampling` becomes model.json's sampling defaults.
    public static func export(model: TrainedModel, sampling: SamplingDefaults = SamplingDefaults(), to dir: String,
                              swiftFile: String? = nil) throws -> ExportSummary {
        try export(weights: model.weights, groups: model.groups, step: model.step,
                   metadata: renamingFormatKeys(model.metadata), sampling: sampling, to: dir, swiftFile: swiftFile)
    }

    /// A checkpoint's metadata with its own format keys renamed `checkpoint_format` and
    /// `checkpoint_format_version`.
    static func renamingFormatKeys(_ metadata: [String: String]) -> [String: String] {
        var meta = metadata
        for key in ["format", "format_version"] {
            if let v = meta.removeValue(forKey: key) { meta["checkpoint_" + key] = v }
        }
        return meta
    }

    /// Reads the checkpoint at `checkpoint` and exports it.
    public static func export(checkpoint: String, sampling: SamplingDefaults = SamplingDefaults(), to dir: String,
                              swiftFile: String? = nil) throws -> ExportSummary {
        try export(model: CheckpointReader.loadModel(path: checkpoint), sampling: sampling, to: dir, swiftFile: swiftFile)
    }
}

extension Exporter {
    /// The model.json metadata an export of `model` records: the checkpoint's, its format keys
    /// renamed, the step and the exporting version.
    static func metadata(of model: TrainedModel) -> [String: String] {
        exportMetadata(renamingFormatKeys(model.metadata), step: model.step)
    }

    /// The model of the checkpoint at `checkpoint` with the model.json metadata `export`
    /// records for it (for single-file formats: safetensors, ONNX).
    public static func model(checkpoint: String) throws -> (weights: LSTMWeights, groups: ModelGroups, metadata: [String: String]) {
        let model = try CheckpointReader.loadModel(path: checkpoint)
        return (model.weights, model.groups, metadata(of: model))
    }

    /// The model.json a model directory of this model holds.
    public static func manifest(weights: LSTMWeights, groups: ModelGroups, metadata: [String: String],
                                sampling: SamplingDefaults = SamplingDefaults(), path: String) throws -> String {
        let files = try ModelDirectory.encode(weights: weights, groups: groups, metadata: metadata, sampling: sampling, path: path)
        guard let manifest = files.first(where: { $0.name == ModelDirectory.manifestFile })?.data else {
            preconditionFailure("ModelDirectory.encode writes model.json")
        }
        return String(decoding: manifest, as: UTF8.self)
    }
}
