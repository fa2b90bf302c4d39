// A training dataset: the output of `drummer convert-midi` (events.npy + vocab.json,
// velocities.npy and positions.npy beside them, manifest.json, validation/ below) or an
// original-style directory (one-hot X.npy + ix_to_note.p / ix_to_tick.p or vocab.json).
// One-hot rows are validated and turned into index pairs while walking the memory-mapped
// file; no one-hot matrix is ever built.
//
// A model trains on features of each hit, one per group it has (ModelGroups): note
// index, tick index, position slot in the bar, velocity bin. `features(for:)` turns the
// dataset's arrays into the class matrix the trainer reads (one column per input group).
//
// Letters: E = events in the sequence, N = notes, K = tick values.

import DrummerCore
import Encode
import FileOutput
import Foundation
import MIDIParse

/// One split of a dataset: the training sequence, or validation/.
public struct DatasetSplit: Sendable, Equatable {
    /// Flat pairs: events[2e] = note index, events[2e + 1] = tick index. (2E)
    public let events: [Int32]
    /// Flat pairs per hit: ticks from its bar line, that bar's length (at the dataset's ppq,
    /// after quantizing), when the dataset has positions.npy. (2E)
    public let positions: [Int32]?
    /// NOTE ON velocity 1...127 per hit, when the dataset has velocities.npy. (E)
    public let velocities: [Int32]?
    /// Ticks from each hit's file's start, when the dataset has onsets.npy (convert-midi
    /// writes it; earlier datasets lack it). (E)
    public let onsets: [Int32]?
    /// The directory (for messages).
    public let path: String

    public var count: Int { events.count / 2 }

    public init(events: [Int32], positions: [Int32]? = nil, velocities: [Int32]? = nil, onsets: [Int32]? = nil, path: String) throws {
        if let p = positions, p.count != events.count {
            throw DatasetError.lengthMismatch(path: path + "/positions.npy", found: p.count / 2, expected: events.count / 2)
        }
        if let v = velocities, v.count * 2 != events.count {
            throw DatasetError.lengthMismatch(path: path + "/velocities.npy", found: v.count, expected: events.count / 2)
        }
        if let o = onsets, o.count * 2 != events.count {
            throw DatasetError.lengthMismatch(path: path + "/onsets.npy", found: o.count, expected: events.count / 2)
        }
        if let o = onsets, let i = o.firstIndex(where: { $0 < 0 }) {
            throw DatasetError.invalid(path: path + "/onsets.npy", reason: "hit \(i): onset \(o[i]) is below 0")
        }
        if let v = velocities, let i = v.firstIndex(where: { !(1...127).contains($0) }) {
            throw DatasetError.invalid(path: path + "/velocities.npy", reason: "hit \(i): velocity \(v[i]) is outside 1...127")
        }
        if let p = positions {
            var e = 0
            while e < p.count {
                if p[e + 1] < 1 || p[e] < 0 || p[e] >= p[e + 1] {
                    throw DatasetError.invalid(path: path + "/positions.npy", reason:
                        "hit \(e / 2): position \(p[e]) in a bar of \(p[e + 1]) ticks (expected 0 ≤ position < bar length)")
                }
                e += 2
            }
        }
        self.events = events
        self.positions = positions
        self.velocities = velocities
        self.onsets = onsets
        self.path = path
    }
}

/// A dataset with its vocabulary, ready for training or evaluation.
public struct TrainingData: Sendable {
    /// Where the training sequence came from (the directory given to `--data`).
    public let path: String
    public let vocabulary: Vocabulary
    public let training: DatasetSplit
    /// validation/, when it exists.
    public let validationSplit: DatasetSplit?
    /// Ticks per quarter note of the deltas and positions (manifest.json's settings.ppq; 480).
    public let ppq: Int
    /// The --quantize grid the dataset was made with (nil: none).
    public let quantize: Int?
    /// Training hits per meter ("4/4": 12345), from manifest.json's files (empty when unknown).
    package let meterHits: [String: Int]
    /// The source files and where their hits lie in each split's events (manifest.json's
    /// files; empty without a manifest).
    public let files: [DatasetFile]
    /// Which files the events were read from (for messages).
    public let source: String

    /// Training events, flat (note, tick) pairs.
    public var events: [Int32] { training.events }
    /// Validation events, flat pairs.
    public var validation: [Int32]? { validationSplit?.events }
    public var eventCount: Int { training.count }
    package var validationCount: Int { validationSplit?.count ?? 0 }
    /// Whether every split has positions / velocities.
    public var hasPositions: Bool { training.positions != nil && (validationSplit.map { $0.positions != nil } ?? true) }
    public var hasVelocities: Bool { training.velocities != nil && (validationSplit.map { $0.velocities != nil } ?? true) }

    /// SHA-256 over the vocabulary and the (note, tick) events of both splits: the dataset's
    /// identity for the original layout (see `fingerprint(for:)`).
    public var fingerprint: String { fingerprint(for: ModelGroups(vocabulary: vocabulary)) }

    public init(path: String, vocabulary: Vocabulary, training: DatasetSplit, validation: DatasetSplit?,
                ppq: Int = 480, quantize: Int? = nil, meterHits: [String: Int] = [:], files: [DatasetFile] = [],
                source: String) throws {
        try Self.checkIndices(training.events, vocabulary: vocabulary, file: training.path)
        if let v = validation { try Self.checkIndices(v.events, vocabulary: vocabulary, file: v.path) }
        self.path = path
        self.vocabulary = vocabulary
        self.training = training
        self.validationSplit = validation
        self.ppq = ppq
        self.quantize = quantize
        self.meterHits = meterHits
        self.files = files
        self.source = source
    }

    /// A dataset of (note, tick) pairs only (no positions or velocities).
    public init(path: String, vocabulary: Vocabulary, events: [Int32], validation: [Int32]?, source: String) throws {
        try self.init(path: path, vocabulary: vocabulary, training: try DatasetSplit(events: events, path: path),
                      validation: try validation.map { try DatasetSplit(events: $0, path: path + "/validation") },
                      source: source)
    }

    /// The fingerprint of what a model with `groups` trains on: SHA-256 over a tag, the
    /// vocabulary tables and the training and validation events (int32 little-endian pairs);
    /// for a model with a position or velocity group also the positions or velocities (a
    /// second tag). The same contents give the same fingerprint whatever files they were read
    /// from (events.npy or X.npy), and an original-layout fingerprint is the same as before
    /// those arrays existed. A model with a style input also reads each file's style, which its
    /// style rule takes from the file's path: the style of every listed file (a third tag;
    /// `styles: false` leaves it out, the fingerprint checkpoints were written with before).
    public func fingerprint(for groups: ModelGroups, styles includeStyles: Bool = true) -> String {
        var d = Data("drummer-dataset-v1\n".utf8)
        d.append(Data("ix_to_note \(vocabulary.ixToNote.map(String.init).joined(separator: ","))\n".utf8))
        d.append(Data("ix_to_tick \(vocabulary.ixToTick.map(String.init).joined(separator: ","))\n".utf8))
        func append(_ v: [Int32], _ label: String, _ rows: Int) {
            d.append(Data("\(label) \(rows)\n".utf8))
            #if _endian(little)
            v.withUnsafeBytes { d.append(contentsOf: $0) }
            #else
            for x in v { withUnsafeBytes(of: x.littleEndian) { d.append(contentsOf: $0) } }
            #endif
        }
        append(training.events, "events", training.count)
        if let v = validationSplit {
            d.append(Data("validation\n".utf8))
            append(v.events, "events", v.count)
        }
        if groups.grid != nil {
            // The grid reads the hits' places in their bars, their velocities and the file ranges.
            d.append(Data("drummer-dataset-grid-v1\n".utf8))
            for split in [training] + (validationSplit.map { [$0] } ?? []) {
                append(split.positions ?? [], "positions", split.count)
                append(split.velocities ?? [], "velocities", split.count)
                // The grid's steps come from onsets.npy where a dataset has one (an earlier
                // dataset without it keeps the fingerprint it had).
                if let o = split.onsets { append(o, "onsets", split.count) }
            }
            for f in files { d.append(Data("file \(f.validation ? "validation" : "training") \(f.offset) \(f.hits) \(f.meter ?? "")\n".utf8)) }
        }
        if includeStyles, let styles = groups.grid?.styles {
            d.append(Data("drummer-dataset-styles-v1 \(styles.rule.rawValue)\n".utf8))
            for f in files { d.append(Data("style \(styles.index(ofPath: f.path))\n".utf8)) }
        }
        return SHA256.hex(d)
    }

    /// Reads a dataset directory (see the file comment for the accepted layouts), again when
    /// another run's convert-midi -o swapped a new one in meanwhile (PathNames.readingWhole).
    public static func load(path: String) throws -> TrainingData {
        try PathNames.readingWhole(path) { try loadOnce(path: path) }
    }

    private static func loadOnce(path: String) throws -> TrainingData {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw DatasetError.missing(path: path)
        }
        guard isDir.boolValue else { throw DatasetError.notADirectory(path: path) }
        let dir = URL(fileURLWithPath: path)
        let (vocabulary, training, source) = try readSplit(in: dir, vocabulary: nil)
        var validation: DatasetSplit?
        let vdir = dir.appendingPathComponent("validation")
        if FileManager.default.fileExists(atPath: vdir.path) {
            let (vv, split, _) = try readSplit(in: vdir, vocabulary: vocabulary)
            if let diff = vocabularyDifference(vocabulary, vv, aName: "the training set", bName: "validation/") {
                throw DatasetError.invalid(path: vdir.path, reason: "vocabulary differs from the training set's: \(diff)")
            }
            validation = split
        }
        let manifest = try readManifest(in: dir, vocabulary: vocabulary, training: training, validation: validation)
        return try TrainingData(path: path, vocabulary: vocabulary, training: training, validation: validation,
                                ppq: manifest?.ppq ?? 480, quantize: manifest?.quantize, meterHits: meterHits(manifest?.files ?? []),
                                files: manifest?.files ?? [], source: source)
    }

    /// Throws naming the first pair whose indices fall outside the vocabulary.
    static func checkIndices(_ events: [Int32], vocabulary: Vocabulary, file: String) throws {
        guard events.count % 2 == 0 else {
            throw DatasetError.invalid(path: file, reason: "event array has an odd number of values")
        }
        let n = Int32(vocabulary.notes), k = Int32(vocabulary.ticks)
        var e = 0
        while e < events.count {
            let note = events[e], tick = events[e + 1]
            if note < 0 || note >= n {
                throw DatasetError.invalid(path: file, reason:
                    "event \(e / 2): note index \(note) is outside the vocabulary's \(n) notes (0..<\(n))")
            }
            if tick < 0 || tick >= k {
                throw DatasetError.invalid(path: file, reason:
                    "event \(e / 2): tick index \(tick) is outside the vocabulary's \(k) tick values (0..<\(k))")
            }
            e += 2
        }
    }
}

/// Why a dataset cannot be used; every case names the file or directory at fault.
public enum DatasetError: Error, CustomStringConvertible, Equatable, Sendable {
    case missing(path: String)
    case notADirectory(path: String)
    /// A file the dataset needs is not there (`expected` says which).
    case missingFile(path: String, expected: String)
    case unreadable(path: String, reason: String)
    /// Contents that are not what the format says (shape, dtype, values).
    case invalid(path: String, reason: String)
    /// A per-hit array whose length disagrees with events.npy.
    case lengthMismatch(path: String, found: Int, expected: Int)
    /// Values a model does not know (eval of a dataset or a MIDI file with another model).
    case outsideVocabulary(path: String, notes: [Int], ticks: [Int])
    /// The groups asked for need arrays the dataset does not have.
    case missingGroup(path: String, group: String, file: String)
    /// Too few events to evaluate.
    case tooShort(path: String, events: Int)

    public var description: String {
        switch self {
        case .missing(let p): return "\(p): no such dataset directory"
        case .notADirectory(let p): return "\(p): is not a directory (expected the output of convert-midi)"
        case .missingFile(let p, let e): return "\(p): \(e)"
        case .unreadable(let p, let r): return "\(p): cannot read: \(r)"
        case .invalid(let p, let r): return "\(p): \(r)"
        case .lengthMismatch(let p, let found, let expected):
            return "\(p): holds \(found) hits but events.npy beside it holds \(expected): the files do not belong together"
        case .outsideVocabulary(let p, let notes, let ticks):
            var parts: [String] = []
            if !notes.isEmpty { parts.append("notes \(list(notes)) are not in the model's vocabulary") }
            if !ticks.isEmpty {
                parts.append("tick values \(list(ticks)) are not in the model's vocabulary"
                             + (p.lowercased().hasSuffix(".mid") || p.lowercased().hasSuffix(".midi")
                                ? " (read it with the model's dataset settings: eval's and encode's --quantize and --ppq)" : ""))
            }
            return "\(p): " + parts.joined(separator: "; ")
        case .missingGroup(let p, let group, let file):
            return "\(p): the \(group) group needs \(file), which this dataset lacks (convert it again with this drummer, or train without --\(group))"
        case .tooShort(let p, let n):
            return "\(p): \(n) event(s): evaluation needs at least 2 (one prediction)"
        }
    }
}
