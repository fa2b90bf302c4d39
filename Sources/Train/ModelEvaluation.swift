// `drummer eval`: a model (exported directory or checkpoint) run over a dataset's
// sequence from zero state. The dataset's events are mapped through its own
// vocabulary to MIDI note numbers and tick values, then to the model's indices;
// values the model does not know are an error naming them.
import Checkpoints
import DrummerCore
import Encode
import Foundation
import MIDIParse

/// A model to evaluate, from either kind of file.
public struct EvaluatedModel: Sendable {
    public let weights: LSTMWeights
    public let vocabulary: Vocabulary
    public let source: String

    /// A directory is read as an exported model (Wx.bin, Wy.bin, model.json),
    /// a file as a training checkpoint.
    public static func load(path: String) throws -> EvaluatedModel {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw CheckpointError(path: path, message: "no such model directory or checkpoint")
        }
        if isDir.boolValue {
            let m = try ModelDirectory.load(path: path)
            return EvaluatedModel(weights: m.weights, vocabulary: m.vocabulary, source: path)
        }
        let m = try CheckpointReader.loadModel(path: path)
        return EvaluatedModel(weights: m.weights, vocabulary: m.vocabulary, source: path)
    }
}

public enum ModelEvaluation {
    /// Maps (MIDI note, tick value) pairs to the model's class indices; throws
    /// naming every note and tick value outside its vocabulary.
    public static func indices(notes: [Int], ticks: [Int], vocabulary: Vocabulary, source: String) throws -> [Int32] {
        precondition(notes.count == ticks.count, "notes and ticks must pair up")
        let index = VocabularyIndex(vocabulary)
        var out = [Int32]()
        out.reserveCapacity(2 * notes.count)
        var badNotes = Set<Int>(), badTicks = Set<Int>()
        for (n, t) in zip(notes, ticks) {
            let a = index.note(n), b = index.tick(t)
            if a == nil { badNotes.insert(n) }
            if b == nil { badTicks.insert(t) }
            out.append(Int32(a ?? 0))
            out.append(Int32(b ?? 0))
        }
        guard badNotes.isEmpty && badTicks.isEmpty else {
            var parts: [String] = []
            if !badNotes.isEmpty { parts.append("notes \(list(badNotes.sorted())) are not in the model's vocabulary") }
            if !badTicks.isEmpty { parts.append("tick values \(list(badTicks.sorted())) are not in the model's vocabulary") }
            throw TrainingDataError(path: source, message: parts.joined(separator: "; "))
        }
        return out
    }

    /// The events of a dataset directory, in the model's indices.
    public static func events(of data: TrainingData, for model: EvaluatedModel) throws -> [Int32] {
        if data.vocabulary == model.vocabulary { return data.events }
        var notes: [Int] = [], ticks: [Int] = []
        notes.reserveCapacity(data.eventCount)
        ticks.reserveCapacity(data.eventCount)
        for e in 0..<data.eventCount {
            notes.append(data.vocabulary.ixToNote[Int(data.events[2 * e])])
            ticks.append(data.vocabulary.ixToTick[Int(data.events[2 * e + 1])])
        }
        return try indices(notes: notes, ticks: ticks, vocabulary: model.vocabulary, source: data.path)
    }

    /// The hits of one MIDI file, converted with the default `convert-midi`
    /// settings (as a one-file dataset would be), in the model's indices.
    public static func events(midiFile path: String, for model: EvaluatedModel) throws -> [Int32] {
        let hits = try FileHits.read(path: path, settings: HitExtractionSettings())
        return try indices(notes: hits.notes, ticks: hits.deltas, vocabulary: model.vocabulary, source: path)
    }

    /// Runs the model over `events` (model indices) from zero state.
    public static func evaluate(_ model: EvaluatedModel, events: [Int32], source: String) throws -> Metrics {
        guard events.count / 2 >= 2 else {
            throw TrainingDataError(path: source, message:
                "\(events.count / 2) event(s): evaluation needs at least 2 (one prediction)")
        }
        return Metrics.evaluate(weights: model.weights, events: events)
    }
}
