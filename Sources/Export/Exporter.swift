// Checkpoint → deployable model directory (Wx.bin, Wy.bin, model.json; see
// DrummerCore's ModelDirectory) and, optionally, a Swift source file with the
// sizes and lookup tables for an app.

import DrummerCore
import Foundation

/// What an export wrote.
public struct ExportSummary: Equatable, Sendable {
    public let directory: String
    public let swiftFile: String?
    public let shape: ModelShape
    public let step: Int
}

public enum Exporter {
    /// Writes the model directory `dir` (replacing it atomically) and, when
    /// `swiftFile` is given, the Swift constants file. `metadata` is stored in
    /// model.json together with the training step and the exporting version.
    public static func export(
        weights: LSTMWeights, vocabulary: Vocabulary, step: Int, metadata: [String: String],
        to dir: String, swiftFile: String? = nil
    ) throws -> ExportSummary {
        var meta = metadata
        meta["step"] = String(step)
        meta["exported_by"] = "drummer \(DrummerVersion.string)"
        try ModelDirectory.write(weights: weights, vocabulary: vocabulary, to: dir, metadata: meta)
        if let swiftFile {
            let source = SwiftConstants.source(
                vocabulary: vocabulary, shape: weights.shape, step: step,
                typeName: SwiftConstants.typeName(forFile: swiftFile))
            try AtomicOutput.write(Data(source.utf8), to: swiftFile)
        }
        return ExportSummary(directory: dir, swiftFile: swiftFile, shape: weights.shape, step: step)
    }
}
