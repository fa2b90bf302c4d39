// Reading the files of a dataset directory: events.npy (int32 [E, 2]) or a
// one-hot X.npy ([E, V]); velocities.npy (int32 [E]), positions.npy (int32 [E, 2]) and onsets.npy (int32 [E])
// when present; the vocabulary from vocab.json or the original's pickled lists
// ix_to_note.p / ix_to_tick.p; and a few settings from manifest.json.

import DrummerCore
import Encode
import Foundation
import FileOutput

extension TrainingData {
    /// The vocabulary and the flat (note, tick) index pairs of one directory.
    /// `vocabulary`, when given, is used if the directory has no tables of its own.
    static func readSplit(in dir: URL, vocabulary known: Vocabulary?) throws -> (Vocabulary, DatasetSplit, String) {
        let (vocabulary, events, source) = try readSequence(in: dir, vocabulary: known)
        let fm = FileManager.default
        let positionsURL = dir.appendingPathComponent("positions.npy")
        let velocitiesURL = dir.appendingPathComponent("velocities.npy")
        let onsetsURL = dir.appendingPathComponent("onsets.npy")
        var positions: [Int32]?, velocities: [Int32]?, onsets: [Int32]?
        if fm.fileExists(atPath: positionsURL.path) {
            positions = try readIntegers(positionsURL.path, columns: 2, what: "[hits, 2] (ticks from the bar line, bar length)")
        }
        if fm.fileExists(atPath: velocitiesURL.path) {
            velocities = try readIntegers(velocitiesURL.path, columns: nil, what: "[hits] (velocity 1...127)")
        }
        if fm.fileExists(atPath: onsetsURL.path) {
            onsets = try readIntegers(onsetsURL.path, columns: nil, what: "[hits] (ticks from the file's start)")
        }
        return (vocabulary, try DatasetSplit(events: events, positions: positions, velocities: velocities, onsets: onsets,
                                             path: dir.path), source)
    }

    /// An integer array of shape [rows, columns] (or [rows] when `columns` is nil), as Int32.
    static func readIntegers(_ path: String, columns: Int?, what: String) throws -> [Int32] {
        let a: NPYArray
        do { a = try NPY.read(path: path) } catch let e as NPYError { throw DatasetError.invalid(path: path, reason: e.reason) }
        let shapeOK = columns.map { a.shape.count == 2 && a.shape[1] == $0 } ?? (a.shape.count == 1)
        guard shapeOK else { throw DatasetError.invalid(path: path, reason: "shape \(a.shape) is not \(what)") }
        guard a.dtype == .int32 || a.dtype == .int64 else {
            throw DatasetError.invalid(path: path, reason: "dtype \(a.dtype.descr) is not an integer type (<i4 or <i8)")
        }
        do { return try a.int32Values() } catch let e as NPYError { throw DatasetError.invalid(path: path, reason: e.reason) }
    }

    /// A convert-midi dataset's manifest.json (DatasetManifest: ppq, quantize, files), its files
    /// checked to tile each split's events and to span what a MIDI file can; nil for an
    /// original-style dataset, which has none.
    static func readManifest(in dir: URL, vocabulary: Vocabulary, training: DatasetSplit, validation: DatasetSplit?) throws -> DatasetManifest? {
        do {
            guard let manifest = try DatasetManifest.read(directory: dir.path) else { return nil }
            try manifest.checkRows(validation: false, rows: training.count)
            try manifest.checkRows(validation: true, rows: validation?.count ?? 0)
            let ticks = vocabulary.ixToTick
            for f in manifest.files {
                guard let split = f.validation ? validation : training else { continue }
                try manifest.checkSpan(of: f) { ticks[Int(split.events[2 * $0 + 1])] }
            }
            return manifest
        } catch let e as DatasetManifestError {
            throw DatasetError.invalid(path: e.path, reason: e.reason)
        }
    }

    /// Training hits per meter ("4/4": 12345) of a manifest's files.
    static func meterHits(_ files: [DatasetFile]) -> [String: Int] {
        var meters: [String: Int] = [:]
        for f in files where !f.validation { if let m = f.meter { meters[m, default: 0] += f.hits } }
        return meters
    }

    static func readSequence(in dir: URL, vocabulary known: Vocabulary?)
        throws -> (Vocabulary, [Int32], String)
    {
        let fm = FileManager.default
        let eventsURL = dir.appendingPathComponent("events.npy")
        let onehotURL = dir.appendingPathComponent("X.npy")
        let vocabulary: Vocabulary
        if let v = try readVocabulary(in: dir) {
            vocabulary = v
        } else if let known {
            vocabulary = known
        } else {
            // The likeliest mistake: the folder of MIDI files given instead of its dataset.
            throw DatasetError.missingFile(path: dir.path, expected: MIDIDatasetConverter.midiFolderInsteadOfDataset(dir.path)
                                           ?? "no vocabulary: expected vocab.json, or ix_to_note.p and ix_to_tick.p")
        }
        if fm.fileExists(atPath: eventsURL.path) {
            let events = try readEvents(eventsURL.path)
            try checkIndices(events, vocabulary: vocabulary, file: eventsURL.path)
            return (vocabulary, events, eventsURL.path)
        }
        if fm.fileExists(atPath: onehotURL.path) {
            return (vocabulary, try readOneHot(onehotURL.path, vocabulary: vocabulary), onehotURL.path)
        }
        throw DatasetError.missingFile(path: dir.path, expected:
            "no events: expected events.npy (from drummer convert-midi) or X.npy (one-hot rows)")
    }

    static func readVocabulary(in dir: URL) throws -> Vocabulary? {
        let json = dir.appendingPathComponent("vocab.json")
        if FileManager.default.fileExists(atPath: json.path) {
            let data: Data
            do { data = try Data(contentsOf: json) } catch {
                throw DatasetError.unreadable(path: json.path, reason: ErrorText.reading(error, path: json.path))
            }
            do { return try JSONDecoder().decode(Vocabulary.self, from: data) } catch let e as DecodingError {
                throw DatasetError.invalid(path: json.path, reason: ErrorText.notDecoded(data, as: "a vocabulary", error: e))
            }
        }
        let notesURL = dir.appendingPathComponent("ix_to_note.p")
        let ticksURL = dir.appendingPathComponent("ix_to_tick.p")
        let hasNotes = FileManager.default.fileExists(atPath: notesURL.path)
        let hasTicks = FileManager.default.fileExists(atPath: ticksURL.path)
        guard hasNotes || hasTicks else { return nil }
        guard hasNotes && hasTicks else {
            throw DatasetError.invalid(path: (hasNotes ? ticksURL : notesURL).path, reason:
                "missing: the pickled tables come in pairs (ix_to_note.p and ix_to_tick.p)")
        }
        let notes = try PickleIntList.read(path: notesURL.path)
        let ticks = try PickleIntList.read(path: ticksURL.path)
        do { return try Vocabulary(ixToNote: notes, ixToTick: ticks) } catch let e as VocabularyError {
            throw DatasetError.invalid(path: dir.path, reason: "pickled tables are not a vocabulary: \(e)")
        }
    }

    static func readEvents(_ path: String) throws -> [Int32] {
        let a = try NPY.read(path: path)
        guard a.shape.count == 2, a.shape[1] == 2 else {
            throw DatasetError.invalid(path: path, reason:
                "shape \(a.shape) is not [events, 2] (note index, tick index)")
        }
        guard a.dtype == .int32 || a.dtype == .int64 else {
            throw DatasetError.invalid(path: path, reason: "dtype \(a.dtype.descr) is not an integer type (<i4 or <i8)")
        }
        return try a.int32Values()
    }

    /// Walks the one-hot rows of X.npy, checking each holds exactly one 1 among
    /// the N note columns and one among the K tick columns (every other value 0),
    /// and returns the index pairs.
    static func readOneHot(_ path: String, vocabulary: Vocabulary) throws -> [Int32] {
        let a = try NPY.read(path: path)
        let n = vocabulary.notes, v = vocabulary.notes + vocabulary.ticks
        guard a.shape.count == 2, a.shape[1] == v else {
            throw DatasetError.invalid(path: path, reason:
                "shape \(a.shape) is not [events, \(v)] (\(n) notes + \(vocabulary.ticks) ticks of the vocabulary)")
        }
        let rows = a.shape[0]
        var out = [Int32]()
        out.reserveCapacity(2 * rows)
        func decode(_ r: Int, _ value: (Int) -> Double) throws {
            var note = -1, tick = -1
            for j in 0..<v {
                let x = value(j)
                if x == 0 { continue }
                guard x == 1 else {
                    throw DatasetError.invalid(path: path, reason:
                        "row \(r), column \(j): value \(x) in a one-hot row (expected 0 or 1)")
                }
                if j < n {
                    guard note < 0 else {
                        throw DatasetError.invalid(path: path, reason:
                            "row \(r): more than one note column is set (\(note) and \(j))")
                    }
                    note = j
                } else {
                    guard tick < 0 else {
                        throw DatasetError.invalid(path: path, reason:
                            "row \(r): more than one tick column is set (\(n + tick) and \(j))")
                    }
                    tick = j - n
                }
            }
            guard note >= 0 else { throw DatasetError.invalid(path: path, reason: "row \(r): no note column is set") }
            guard tick >= 0 else { throw DatasetError.invalid(path: path, reason: "row \(r): no tick column is set") }
            out.append(Int32(note))
            out.append(Int32(tick))
        }
        if a.dtype == .float32 {
            try a.withFloat32Rows { r, row in try decode(r, { Double(row[$0]) }) }
            return out
        }
        let size = a.dtype.itemSize
        let dtype = a.dtype
        try a.withUnsafeDataBytes { raw in
            for r in 0..<rows {
                let base = r * v * size
                try decode(r) { j in
                    let o = base + j * size
                    switch dtype {
                    case .float32:
                        return Double(Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: UInt32.self))))
                    case .float64:
                        return Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: UInt64.self)))
                    case .int32:
                        return Double(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: Int32.self)))
                    case .int64:
                        return Double(Int64(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: Int64.self)))
                    case .bool, .uint8:
                        return Double(raw[o])
                    }
                }
            }
        }
        return out
    }
}

