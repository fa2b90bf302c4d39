// Checkpoint → deployable model directory (Wx.bin, Wy.bin, model.json; see
// DrummerCore's ModelDirectory) and, optionally, a Swift source file with the
// sizes and lookup tables for an app.

import DrummerCore
import Foundation
import FileOutput
import ModelFiles

/// What an export wrote.
public struct ExportSummary: Equatable, Sendable {
    public let directory: String
    public let swiftFile: String?
    public let shape: ModelShape
    /// The training step model.json records (nil: none, as for a model imported from PyTorch).
    public let step: Int?

    /// "step N", or that none is recorded.
    public var stepDescription: String { step.map { "step \($0)" } ?? "no training step recorded" }
}

public enum Exporter {
    /// `metadata` with what every export records: the training step (when known) and the
    /// exporting version.
    static func exportMetadata(_ metadata: [String: String], step: Int?) -> [String: String] {
        var meta = metadata
        if let step { meta["step"] = String(step) }
        meta["exported_by"] = "drummer \(DrummerVersion.string)"
        return meta
    }

    /// Exports a model of the original layout (note and tick in and out).
    public static func export(
        weights: LSTMWeights, vocabulary: Vocabulary, step: Int, metadata: [String: String],
        to dir: String, swiftFile: String? = nil
    ) throws -> ExportSummary {
        try export(weights: weights, groups: ModelGroups(vocabulary: vocabulary), step: step, metadata: metadata,
                   to: dir, swiftFile: swiftFile)
    }

    /// Writes the model directory `dir` (replacing it atomically) and, when
    /// `swiftFile` is given, the Swift constants file. `metadata` is stored in
    /// model.json together with the training step (nil: the metadata's, if any) and the
    /// exporting version.
    ///
    /// Both outputs are checked before either is written: the destinations are
    /// resolved and their temporaries created (a directory that is not a model
    /// directory, or an unwritable --swift path, fails here with nothing written).
    /// If the Swift file still fails after the model directory was put in place,
    /// the error says so.
    public static func export(
        weights: LSTMWeights, groups: ModelGroups, step: Int?, metadata: [String: String],
        sampling: SamplingDefaults = SamplingDefaults(), to dir: String, swiftFile: String? = nil
    ) throws -> ExportSummary {
        let step = step ?? metadata["step"].flatMap { Int($0) }
        let files = try ModelDirectory.encode(weights: weights, groups: groups, metadata: exportMetadata(metadata, step: step),
                                              sampling: sampling, path: dir)
        let source = swiftFile.map {
            SwiftConstants.source(groups: groups, shape: weights.shape, step: step,
                                  typeName: SwiftConstants.typeName(forFile: $0))
        }
        // Resolve both before creating anything (a missing parent directory, a temporary).
        _ = try AtomicOutput.resolveDirectory(dir, kind: .model)
        if let swiftFile { _ = try AtomicOutput.resolve(swiftFile, options: .userFile) }
        let directory = try AtomicOutput.prepareDirectory(at: dir, kind: .model)
        let swift: PendingFile?
        do { swift = try swiftFile.map { try AtomicOutput.prepare($0, options: .userFile) } } catch {
            directory.discard()
            throw error
        }
        do {
            try ModelDirectory.write(files, into: directory.url, path: dir)
            try directory.commit()
        } catch {
            swift?.discard()
            throw error
        }
        if let swift, let source {
            do { try swift.commit(Data(source.utf8)) } catch let e as OutputError {
                throw OutputError(path: e.path, message: e.message
                    + " (the model directory \(dir) was written; the Swift file was not)")
            }
        }
        return ExportSummary(directory: dir, swiftFile: swiftFile, shape: weights.shape, step: step)
    }
}
