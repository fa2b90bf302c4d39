// `drummer import`: a safetensors file (TorchModel's layout) → the model directory `export`
// writes, and a model directory → safetensors.
import DrummerCore
import Foundation
import FileOutput
import ModelFiles

public enum SafeTensorsImport {
    /// Reads `file` and writes its model directory at `dir` (replaced atomically, as `export`
    /// replaces one). Returns the model's shape.
    public static func importModel(_ file: String, to dir: String) throws -> ModelShape {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: file)) } catch {
            throw SafeTensorsError(file, FileManager.default.fileExists(atPath: file)
                                   ? "cannot read: \(ErrorText.describe(error))" : "no such file")
        }
        let model = try TorchModel.decode(data, path: file)
        try ModelDirectory.write(weights: model.weights, groups: model.groups, to: dir, metadata: model.metadata)
        return model.weights.shape
    }

    /// Writes the model directory at `dir` as a safetensors file at `file`.
    public static func exportModelDirectory(_ dir: String, to file: String) throws -> ModelShape {
        let model = try ModelDirectory.load(path: dir)
        let data = try TorchModel.encode(weights: model.weights, groups: model.groups, metadata: model.metadata, path: file)
        try AtomicOutput.write(data, to: file, options: .userFile)
        return model.weights.shape
    }
}
