// A model where the commands expect one: a model directory (`drummer export`'s), a training
// checkpoint file, or a checkpoint directory with `--step best|latest|N` (default best).
import ArgumentParser
import Checkpoints
import DrummerCore
import FileOutput
import Foundation
import ModelFiles
import TrainRun

struct ModelSource {
    let weights: LSTMWeights
    let groups: ModelGroups
    /// Which file the model came from, for status lines ("checkpoints/ckpt-4000.h5, the best …").
    let origin: String
    /// The sampling defaults a model directory carries (model.json "sampling"; a checkpoint: none).
    var sampling = SamplingDefaults()

    var vocabulary: Vocabulary { groups.vocabulary }

    static func load(_ path: String, step: CheckpointChoice?) throws -> ModelSource {
        try checkRoom(path)
        var isDir: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDir)
        if exists, isDir.boolValue {
            if let checkpoints = CheckpointDirectory.inPlaceOfModel(path) {
                let (file, why) = try checkpoints.checkpoint(step ?? .best)
                try checkRoom(file)
                let m = try CheckpointReader.loadModel(path: file)
                return ModelSource(weights: m.weights, groups: m.groups, origin: "\(file) (\(why))")
            }
            if let step {
                throw CheckpointChoiceError(description: "--step \(step) applies to a checkpoint directory; \(path) is a model directory")
            }
            let m = try ModelDirectory.load(path: path)
            return ModelSource(weights: m.weights, groups: m.groups, origin: path, sampling: m.sampling)
        }
        if exists {
            if let step {
                throw CheckpointChoiceError(description: "--step \(step) applies to a checkpoint directory; \(path) is a checkpoint file")
            }
            let m = try CheckpointReader.loadModel(path: path)
            return ModelSource(weights: m.weights, groups: m.groups, origin: path)
        }
        // Absent: the model directory's own error names it.
        let m = try ModelDirectory.load(path: path)
        return ModelSource(weights: m.weights, groups: m.groups, origin: path)
    }
}

extension ModelSource {
    /// The model at `path` as inputs the outputs must not overwrite: a checkpoint directory
    /// (as `load` reads it) owns its checkpoints and logs, and so does the one a checkpoint file
    /// lies in; a model directory is one path.
    static func inputs(_ path: String) -> [CommandInput] {
        if CheckpointDirectory.inPlaceOfModel(path) != nil { return [.checkpointDirectory(path)] }
        var isDirectory: ObjCBool = false
        let holding = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            ? CommandInput.checkpointDirectory(holding: path) : nil
        return [CommandInput(path, role: "the model")] + (holding.map { [$0] } ?? [])
    }
}

extension CheckpointChoice {
    /// `--step`'s parser: the choice, or an error that says what --step takes.
    static func argument(_ text: String) throws -> CheckpointChoice {
        guard let choice = CheckpointChoice(text) else {
            throw ValidationError("--step must be best, latest or a step number of 0 or more, got \(text)")
        }
        return choice
    }
}

extension ModelSource {
    /// Refuses a model the address-space limit (`ulimit -v`) cannot hold while it is read and
    /// run (`ModelLimits.addressSpaceShortfall(reading:)`): it hung or crashed there.
    static func checkRoom(_ path: String) throws {
        if let shortfall = ModelLimits.addressSpaceShortfall(reading: path) {
            throw CommandFailure("\(path): reading this model would \(shortfall)")
        }
    }
}
