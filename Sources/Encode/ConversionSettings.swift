// Settings of `drummer convert-midi`: which notes become hits and how time is encoded.
import Foundation

/// Which channel's notes a file contributes.
public enum ChannelSelection: Equatable, Sendable, CustomStringConvertible {
    /// Channel index 9 (General MIDI drums, "channel 10") when the file has notes there, else every channel.
    case auto
    /// Every channel.
    case all
    /// One channel index 0...15.
    case index(Int)

    /// Parses "auto", "all" or a channel index 0...15.
    public init?(argument: String) {
        switch argument.lowercased() {
        case "auto": self = .auto
        case "all": self = .all
        default:
            guard let n = Int(argument), (0...15).contains(n) else { return nil }
            self = .index(n)
        }
    }

    public var description: String {
        switch self {
        case .auto: return "auto"
        case .all: return "all"
        case .index(let n): return String(n)
        }
    }
}

/// How note numbers are rewritten before they enter the vocabulary.
public struct NoteMap: Equatable, Sendable {
    /// Where the table came from: "none", "original" or the JSON file as given.
    public let name: String
    /// Source note -> target note.
    public let table: [Int: Int]

    public init(name: String, table: [Int: Int]) {
        self.name = name
        self.table = table
    }

    public static let none = NoteMap(name: "none", table: [:])

    /// The original 2017 project's table for its non-General-MIDI notes.
    public static let original = NoteMap(name: "original", table: [
        21: 44, 22: 42, 24: 46, 25: 46, 26: 46, 60: 46, 62: 44, 63: 42, 75: 41, 80: 47, 82: 48,
    ])

    /// A JSON object of note numbers, e.g. `{"21": 44, "22": 42}`.
    public static func load(path: String) throws -> NoteMap {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConversionError.noteMap(path: path, message: "cannot read: \(error.localizedDescription)")
        }
        let raw: [String: Int]
        do {
            raw = try JSONDecoder().decode([String: Int].self, from: data)
        } catch {
            throw ConversionError.noteMap(path: path, message: "expected a JSON object of note numbers such as {\"21\": 44}: \(error)")
        }
        var table: [Int: Int] = [:]
        for (k, v) in raw {
            guard let from = Int(k), (0...127).contains(from) else {
                throw ConversionError.noteMap(path: path, message: "key \"\(k)\" is not a note number 0...127")
            }
            guard (0...127).contains(v) else {
                throw ConversionError.noteMap(path: path, message: "note \(k) maps to \(v), outside 0...127")
            }
            table[from] = v
        }
        return NoteMap(name: path, table: table)
    }

    @inline(__always) public func apply(_ note: Int) -> Int { table[note] ?? note }
}

public struct ConversionSettings: Equatable, Sendable {
    public var channel: ChannelSelection = .auto
    /// Target ticks per quarter note.
    public var ppq: Int = 480
    /// Grid in target ticks that absolute onsets snap to (nil: no quantizing).
    public var quantize: Int?
    /// Largest delta in target ticks; longer gaps are clamped (nil: no clamping).
    public var maxDelta: Int?
    public var noteMap: NoteMap = .none
    /// Also write X.npy (one-hot rows).
    public var oneHot = false
    /// Fraction of files (by a stable hash of their relative path) held out for validation.
    public var validationFraction = 0.0
    /// Parse files leniently (recover defects, with warnings) instead of skipping defective ones.
    public var lenient = false

    public init() {}
}

/// Errors that stop a conversion.
public enum ConversionError: Error, Equatable, CustomStringConvertible {
    case notADirectory(String)
    case noMIDIFiles(String)
    case noHits(String)
    /// One line per unreadable file ("path: byte N: what was expected").
    case badFiles([String])
    case noteMap(path: String, message: String)
    case output(path: String, message: String)

    public var description: String {
        switch self {
        case .notADirectory(let d): return "\(d): not a directory"
        case .noMIDIFiles(let d): return "\(d): no .mid, .midi or .rmi files found"
        case .noHits(let d): return "\(d): no hits (NOTE ON with velocity > 0 on the selected channels) in any file"
        case .badFiles(let lines): return "\(lines.count) file(s) could not be read; --strict writes nothing"
        case .noteMap(let p, let m): return "\(p): note map: \(m)"
        case .output(let p, let m): return "\(p): \(m)"
        }
    }
}
