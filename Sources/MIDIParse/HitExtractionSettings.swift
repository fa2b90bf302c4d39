// How the hits of a drum MIDI file are extracted: which channel's notes count, the
// resolution they are rescaled to, the grid they snap to and how note numbers are
// rewritten. Shared by `convert-midi` (the dataset), `eval --data FILE.mid` and the
// sampler's primer, so that all three read a file the same way.
import FileOutput
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

    /// Where a file's hits were looked for, for a message: "on any channel", "on channel index 3".
    public var searched: String {
        switch self {
        case .auto, .all: return "on any channel"
        case .index(let n): return "on channel index \(n), as --channel \(n) asks; --channel auto reads the drum channel, index 9"
        }
    }

    /// " on channel index N, as --channel N asks; …" for a channel given by index, else "" (a
    /// message's tail where the channel searched is not the obvious one).
    public var givenIndexNote: String {
        if case .index = self { return " " + searched }
        return ""
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
        func bad(_ message: String) -> HitExtractionError { .noteMap(path: path, message: message) }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw bad("cannot read: \(ErrorText.reading(error, path: path))")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw bad("not valid JSON: \(ErrorText.jsonSyntax(error, in: data))")
        }
        guard let raw = object as? [String: Any] else {
            throw bad("expected a JSON object of note numbers such as {\"21\": 44}, found \(jsonKind(object))")
        }
        var table: [Int: Int] = [:]
        for k in raw.keys.sorted(by: { (Int($0) ?? Int.max, $0) < (Int($1) ?? Int.max, $1) }) {
            guard let from = Int(k), (0...127).contains(from) else {
                throw bad("key \"\(k)\" is not a note number 0...127")
            }
            let value = raw[k]!
            guard let number = value as? NSNumber, !isJSONBoolean(number), let v = Int(exactly: number.doubleValue) else {
                throw bad("note \(k) maps to \(jsonKind(value)), not a note number 0...127")
            }
            guard (0...127).contains(v) else { throw bad("note \(k) maps to \(v), outside 0...127") }
            table[from] = v
        }
        return NoteMap(name: path, table: table)
    }

    @inline(__always) public func apply(_ note: Int) -> Int { table[note] ?? note }
}

/// JSONSerialization's true and false are NSNumbers of type char ("c"); its numbers never
/// are (a 0 or 1 is "i" or "q"), while `as? Bool` would take a 0 or 1 for one too.
private func isJSONBoolean(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

/// What a JSON value is, for an error: "an array", "a string (\"x\")", "the number 44.5".
private func jsonKind(_ value: Any) -> String {
    switch value {
    case is [Any]: return "an array"
    case is [String: Any]: return "an object"
    case let s as String: return "a string (\"\(s)\")"
    case let n as NSNumber: return isJSONBoolean(n) ? "\(n.boolValue)" : "the number \(n)"
    case is NSNull: return "null"
    default: return "\(type(of: value))"
    }
}

/// The order of the hits at one onset (one tick after rescaling and quantizing).
public enum OnsetOrder: String, Sendable, CaseIterable {
    /// As the file has them: by their ticks before quantizing, then track, then order in the
    /// track (convert-midi's order since its first version).
    case time
    /// By note number, lowest first (a stable sort: the same note keeps its order). One
    /// canonical order for a chord of drums, whatever the player's timing within the grid step.
    case note
}

/// Settings of hit extraction (convert-midi's flags of the same names).
public struct HitExtractionSettings: Equatable, Sendable {
    public var channel: ChannelSelection = .auto
    /// Target ticks per quarter note.
    public var ppq: Int = 480
    /// Grid in target ticks that absolute onsets snap to (nil: no quantizing).
    public var quantize: Int?
    public var noteMap: NoteMap = .none
    /// The order of hits that share an onset (after quantizing).
    public var onsetOrder: OnsetOrder = .time
    /// How defects are treated: `.safe` (the default) recovers only the defects that need no
    /// guessing, `.strict` refuses any, `.lenient` recovers all it can; each recovery is a warning.
    public var parseMode: MIDIParseMode = .safe

    public init() {}
}

/// Why hits could not be extracted (apart from the file not being valid MIDI, which is
/// a `MIDIFileError`, or not being readable, a `MIDIReadError`).
public enum HitExtractionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A hit too far from the start of its file to be encoded; `tick` is in the file's own division.
    case hitTooLate(path: String, tick: Int)
    /// A note map file that cannot be used.
    case noteMap(path: String, message: String)
    /// Hits spanning more bars than a grid model reads of one file (`FileHits.maximumBarsRead`).
    case tooManyBars(path: String, bars: Int, limit: Int)

    public var description: String {
        switch self {
        case .hitTooLate(let p, let t):
            return "\(p): a hit at its tick \(t) (in the file's own resolution) lies beyond \(FileHits.maximumTick) ticks once rescaled to the target resolution"
        case .noteMap(let p, let m):
            return "\(p): note map: \(m)"
        case .tooManyBars(let p, let bars, let limit):
            return "\(p): its hits span \(bars) bars (empty bars included), more than the \(limit) a grid model "
                + "reads of one file (hours of music); cut it into shorter files"
        }
    }
}
