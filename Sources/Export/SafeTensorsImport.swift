// `drummer import`: a safetensors file (TorchModel's layout) → the model directory `export`
// writes.
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
                                   ? "cannot read: \(ErrorText.reading(error, path: file))" : "no such file")
        }
        let model = try TorchModel.decode(data, path: file)
        try ModelDirectory.write(weights: model.weights, groups: model.groups, to: dir, metadata: model.metadata,
                                  sampling: model.sampling)
        return model.weights.shape
    }


}
