// A training dataset as (note index, tick index) pairs: read from the output of
// `drummer convert-midi` (events.npy + vocab.json, validation/ beside them) or
// from an original-style directory (one-hot X.npy + ix_to_note.p / ix_to_tick.p
// or vocab.json). One-hot rows are validated and turned into index pairs while
// walking the memory-mapped file; no one-hot matrix is ever built.
//
// Letters: E = events in the sequence, N = notes, K = tick values, V = N + K.
import Checkpoints
import DrummerCore
import Encode
import Foundation

/// A sequence of events with its vocabulary, ready for training or evaluation.
public struct TrainingData: Sendable {
    /// Where the training sequence came from (the directory given to `--data`).
    public let path: String
    public let vocabulary: Vocabulary
    /// Training events, flat pairs: events[2e] = note index, events[2e + 1] = tick index. (2E)
    public let events: [Int32]
    /// Validation events (same layout and vocabulary), when `validation/` exists.
    public let validation: [Int32]?
    /// SHA-256 (hex) over the vocabulary and the events; see `fingerprint(...)`.
    public let fingerprint: String
    /// Which files the events were read from (for messages).
    public let source: String

    public var eventCount: Int { events.count / 2 }
    public var validationCount: Int { (validation?.count ?? 0) / 2 }

    public init(path: String, vocabulary: Vocabulary, events: [Int32], validation: [Int32]?,
                source: String) throws {
        try Self.checkIndices(events, vocabulary: vocabulary, file: path)
        if let v = validation { try Self.checkIndices(v, vocabulary: vocabulary, file: path + " (validation)") }
        self.path = path
        self.vocabulary = vocabulary
        self.events = events
        self.validation = validation
        self.source = source
        self.fingerprint = Self.fingerprint(vocabulary: vocabulary, events: events, validation: validation)
    }

    /// Reads a dataset directory (see the file comment for the accepted layouts).
    public static func load(path: String) throws -> TrainingData {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw TrainingDataError(path: path, message: "no such dataset directory")
        }
        guard isDir.boolValue else {
            throw TrainingDataError(path: path, message: "is not a directory (expected the output of convert-midi)")
        }
        let dir = URL(fileURLWithPath: path)
        let (vocabulary, events, source) = try readSequence(in: dir, vocabulary: nil)
        var validation: [Int32]?
        let vdir = dir.appendingPathComponent("validation")
        if FileManager.default.fileExists(atPath: vdir.path) {
            let (vv, ve, _) = try readSequence(in: vdir, vocabulary: vocabulary)
            if let diff = vocabularyDifference(vocabulary, vv, aName: "the training set", bName: "validation/") {
                throw TrainingDataError(path: vdir.path, message: "vocabulary differs from the training set's: \(diff)")
            }
            validation = ve
        }
        return try TrainingData(path: path, vocabulary: vocabulary, events: events, validation: validation,
                                source: source)
    }

    /// The fingerprint of a dataset's contents: SHA-256 over a tag, the
    /// vocabulary tables, the training events (int32 little-endian pairs) and the
    /// validation events. The same contents give the same fingerprint whatever
    /// the files they were read from (events.npy or X.npy).
    public static func fingerprint(vocabulary: Vocabulary, events: [Int32], validation: [Int32]?) -> String {
        var d = Data("drummer-dataset-v1\n".utf8)
        d.append(Data("ix_to_note \(vocabulary.ixToNote.map(String.init).joined(separator: ","))\n".utf8))
        d.append(Data("ix_to_tick \(vocabulary.ixToTick.map(String.init).joined(separator: ","))\n".utf8))
        func append(_ v: [Int32]) {
            d.append(Data("events \(v.count / 2)\n".utf8))
            #if _endian(little)
            v.withUnsafeBytes { d.append(contentsOf: $0) }
            #else
            for x in v { withUnsafeBytes(of: x.littleEndian) { d.append(contentsOf: $0) } }
            #endif
        }
        append(events)
        if let validation {
            d.append(Data("validation\n".utf8))
            append(validation)
        }
        return SHA256.hex(d)
    }

    /// Throws naming the first pair whose indices fall outside the vocabulary.
    static func checkIndices(_ events: [Int32], vocabulary: Vocabulary, file: String) throws {
        guard events.count % 2 == 0 else {
            throw TrainingDataError(path: file, message: "event array has an odd number of values")
        }
        let n = Int32(vocabulary.notes), k = Int32(vocabulary.ticks)
        var e = 0
        while e < events.count {
            let note = events[e], tick = events[e + 1]
            if note < 0 || note >= n {
                throw TrainingDataError(path: file, message:
                    "event \(e / 2): note index \(note) is outside the vocabulary's \(n) notes (0..<\(n))")
            }
            if tick < 0 || tick >= k {
                throw TrainingDataError(path: file, message:
                    "event \(e / 2): tick index \(tick) is outside the vocabulary's \(k) tick values (0..<\(k))")
            }
            e += 2
        }
    }
}

/// A dataset that cannot be used, naming the file and what is wrong.
public struct TrainingDataError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let message: String
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path): \(message)" }
}
