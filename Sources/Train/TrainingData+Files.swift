// Reading the files of a dataset directory: events.npy (int32 [E, 2]) or a
// one-hot X.npy ([E, V]), and the vocabulary from vocab.json or the original's
// pickled lists ix_to_note.p / ix_to_tick.p.
import Checkpoints
import DrummerCore
import Encode
import Foundation

extension TrainingData {
    /// The vocabulary and the flat (note, tick) index pairs of one directory.
    /// `vocabulary`, when given, is used if the directory has no tables of its own.
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
            throw TrainingDataError(path: dir.path, message:
                "no vocabulary: expected vocab.json, or ix_to_note.p and ix_to_tick.p")
        }
        if fm.fileExists(atPath: eventsURL.path) {
            let events = try readEvents(eventsURL.path)
            try checkIndices(events, vocabulary: vocabulary, file: eventsURL.path)
            return (vocabulary, events, eventsURL.path)
        }
        if fm.fileExists(atPath: onehotURL.path) {
            return (vocabulary, try readOneHot(onehotURL.path, vocabulary: vocabulary), onehotURL.path)
        }
        throw TrainingDataError(path: dir.path, message:
            "no events: expected events.npy (from drummer convert-midi) or X.npy (one-hot rows)")
    }

    static func readVocabulary(in dir: URL) throws -> Vocabulary? {
        let json = dir.appendingPathComponent("vocab.json")
        if FileManager.default.fileExists(atPath: json.path) {
            let data: Data
            do { data = try Data(contentsOf: json) } catch {
                throw TrainingDataError(path: json.path, message: "cannot read: \(error.localizedDescription)")
            }
            do { return try JSONDecoder().decode(Vocabulary.self, from: data) } catch let e as DecodingError {
                throw TrainingDataError(path: json.path, message: "not a vocabulary: \(decodingMessage(e))")
            }
        }
        let notesURL = dir.appendingPathComponent("ix_to_note.p")
        let ticksURL = dir.appendingPathComponent("ix_to_tick.p")
        let hasNotes = FileManager.default.fileExists(atPath: notesURL.path)
        let hasTicks = FileManager.default.fileExists(atPath: ticksURL.path)
        guard hasNotes || hasTicks else { return nil }
        guard hasNotes && hasTicks else {
            throw TrainingDataError(path: (hasNotes ? ticksURL : notesURL).path, message:
                "missing: the pickled tables come in pairs (ix_to_note.p and ix_to_tick.p)")
        }
        let notes = try PickleIntList.read(path: notesURL.path)
        let ticks = try PickleIntList.read(path: ticksURL.path)
        do { return try Vocabulary(ixToNote: notes, ixToTick: ticks) } catch let e as VocabularyError {
            throw TrainingDataError(path: dir.path, message: "pickled tables are not a vocabulary: \(e)")
        }
    }

    static func readEvents(_ path: String) throws -> [Int32] {
        let a = try NPY.read(path: path)
        guard a.shape.count == 2, a.shape[1] == 2 else {
            throw TrainingDataError(path: path, message:
                "shape \(a.shape) is not [events, 2] (note index, tick index)")
        }
        guard a.dtype == .int32 || a.dtype == .int64 else {
            throw TrainingDataError(path: path, message: "dtype \(a.dtype.descr) is not an integer type (<i4 or <i8)")
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
            throw TrainingDataError(path: path, message:
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
                    throw TrainingDataError(path: path, message:
                        "row \(r), column \(j): value \(x) in a one-hot row (expected 0 or 1)")
                }
                if j < n {
                    guard note < 0 else {
                        throw TrainingDataError(path: path, message:
                            "row \(r): more than one note column is set (\(note) and \(j))")
                    }
                    note = j
                } else {
                    guard tick < 0 else {
                        throw TrainingDataError(path: path, message:
                            "row \(r): more than one tick column is set (\(n + tick) and \(j))")
                    }
                    tick = j - n
                }
            }
            guard note >= 0 else { throw TrainingDataError(path: path, message: "row \(r): no note column is set") }
            guard tick >= 0 else { throw TrainingDataError(path: path, message: "row \(r): no tick column is set") }
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

/// A short message for a JSON decoding failure.
func decodingMessage(_ e: DecodingError) -> String {
    switch e {
    case let .dataCorrupted(c): return c.debugDescription
    case let .keyNotFound(k, _): return "missing key \"\(k.stringValue)\""
    case let .typeMismatch(_, c): return "wrong type at \(c.codingPath.map(\.stringValue).joined(separator: ".")): \(c.debugDescription)"
    case let .valueNotFound(_, c): return "missing value at \(c.codingPath.map(\.stringValue).joined(separator: "."))"
    @unknown default: return "\(e)"
    }
}
