// Typed errors and warnings of the reader: every one names the file, the byte
// offset and what was expected there.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What is wrong at a place in a file. In strict mode any defect is thrown as a
/// `MIDIFileError`; in safe and lenient mode the ones they recover become `MIDIWarning`s.
public enum MIDIDefect: Equatable, Hashable, Sendable {
    /// The file has no bytes.
    case emptyFile
    /// The first four bytes are not "MThd" (nor "RIFF" wrapping one).
    case notMIDI(found: [UInt8])
    /// A RIFF file whose form type is not "RMID".
    case riffNotRMID(found: [UInt8])
    /// A RIFF RMID file without a "data" chunk.
    case riffWithoutData
    /// The data ended where `expected` should have been.
    case truncated(expected: String)
    /// The MThd length is below 6.
    case headerTooShort(length: Int)
    /// Format other than 0, 1, 2.
    case unsupportedFormat(Int)
    /// PPQ division of 0 ticks per quarter note.
    case zeroPPQ
    /// SMPTE division with a frame rate other than 24, 25, 29, 30, or 0 ticks per frame.
    case badSMPTEDivision(framesPerSecond: Int, ticksPerFrame: Int)
    /// Format 0 must hold exactly one track.
    case format0TrackCount(Int)
    /// The header's track count differs from the MTrk chunks found.
    case trackCountMismatch(declared: Int, found: Int)
    /// A chunk's length runs past the end of the file.
    case chunkPastEnd(declared: Int, available: Int)
    /// An MTrk chunk ends without an end-of-track meta event (FF 2F 00).
    case missingEndOfTrack
    /// Bytes follow the end-of-track event inside its chunk.
    case dataAfterEndOfTrack(bytes: Int)
    /// A variable-length quantity longer than 4 bytes.
    case vlqTooLong
    /// A data byte where a status byte was needed and no running status is in effect.
    case noRunningStatus(found: UInt8)
    /// A data byte relying on running status right after a meta or sysex event, which cancel it.
    case runningStatusCancelled(found: UInt8)
    /// A system common or real-time status (F1-F6, F8-FE), which SMF track data cannot hold.
    case illegalStatus(UInt8)
    /// A status byte where a data byte (< 0x80) was needed.
    case dataByteExpected(found: UInt8)
    /// A standard meta event whose length is not the one the specification gives.
    case badMetaLength(type: UInt8, length: Int, expected: Int)
    /// A time signature that gives no meter: a numerator of 0, or a denominator past 2^7.
    case badTimeSignature(numerator: Int, denominatorPower: Int)
    /// Bytes after the last chunk that do not form a chunk.
    case trailingGarbage(bytes: Int)

    /// One line: what was expected and what was found.
    public var message: String {
        switch self {
        case .emptyFile: return "empty file, expected an \"MThd\" header"
        case .notMIDI(let f):
            return "not a MIDI file: starts with \(Self.quoted(f))expected \"MThd\" or \"RIFF\""
        case .riffNotRMID(let f): return "RIFF file: expected form type \"RMID\", found \(Self.show(f))"
        case .riffWithoutData: return "RIFF RMID file: expected a \"data\" chunk holding the MIDI file, found none"
        case .truncated(let e): return "unexpected end of data, expected \(e)"
        case .headerTooShort(let l): return "MThd length \(l), expected at least 6"
        case .unsupportedFormat(let f): return "format \(f), expected 0, 1 or 2"
        case .zeroPPQ: return "division of 0 ticks per quarter note, expected at least 1"
        case .badSMPTEDivision(let fps, let tpf):
            return "SMPTE division \(fps) fps × \(tpf) ticks per frame, expected 24, 25, 29 or 30 fps and at least 1 tick"
        case .format0TrackCount(let n): return "format 0 with \(n) tracks, expected exactly 1"
        case .trackCountMismatch(let d, let f): return "expected \(d) MTrk chunks as the header declares, found \(f)"
        case .chunkPastEnd(let d, let a): return "chunk length \(d) runs past the end of the file, expected at most \(a)"
        case .missingEndOfTrack: return "track ends without an end-of-track event, expected FF 2F 00"
        case .dataAfterEndOfTrack(let n): return "\(n) bytes after the end-of-track event, expected the end of the chunk"
        case .vlqTooLong: return "variable-length quantity longer than 4 bytes, expected at most 4"
        case .noRunningStatus(let b):
            return "data byte \(Self.hex(b)) with no running status in effect, expected a status byte"
        case .runningStatusCancelled(let b):
            return "data byte \(Self.hex(b)) after a meta or sysex event (which cancel running status), expected a status byte"
        case .illegalStatus(let b):
            return "system common or real-time status \(Self.hex(b)), expected a channel, sysex (F0/F7) or meta (FF) event"
        case .dataByteExpected(let b): return "status byte \(Self.hex(b)), expected a data byte (< 0x80)"
        case .badMetaLength(let t, let l, let e):
            return "meta event \(Self.hex(t)) of length \(l), expected \(e)"
        case .trailingGarbage(let n): return "\(n) bytes after the last chunk that do not form a chunk, expected the end of the file"
        case .badTimeSignature(let n, let p):
            return "time signature \(n)/2^\(p), no meter: expected a numerator of 1 or more and a denominator of 2^0 to 2^7"
        }
    }

    static func hex(_ b: UInt8) -> String {
        let s = String(b, radix: 16, uppercase: true)
        return "0x" + (s.count < 2 ? "0" + s : s)
    }

    /// `"<!DO" (3C 21 44 4F), ` when the bytes are printable ASCII, else `3C 21 44 4F, `.
    static func quoted(_ bytes: [UInt8]) -> String {
        if !bytes.isEmpty, bytes.allSatisfy({ (0x20...0x7E).contains($0) }) {
            return "\"\(String(decoding: bytes, as: UTF8.self))\" (\(show(bytes))), "
        }
        return show(bytes) + ", "
    }

    /// What kind of problem this is, for summaries: "not MIDI", "empty", "truncated" or "malformed".
    public var kind: String {
        switch self {
        case .emptyFile: return "empty"
        case .notMIDI, .riffNotRMID, .riffWithoutData: return "not MIDI"
        case .truncated, .chunkPastEnd: return "truncated"
        default: return "malformed"
        }
    }

    static func show(_ bytes: [UInt8]) -> String {
        bytes.map { b in
            let s = String(b, radix: 16, uppercase: true)
            return s.count < 2 ? "0" + s : s
        }.joined(separator: " ")
    }
}

/// A defect that stops the reading of a file.
public struct MIDIFileError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    public let path: String
    /// Byte offset in the file (RIFF wrapping included).
    public let offset: Int
    public let defect: MIDIDefect

    public init(path: String, offset: Int, defect: MIDIDefect) {
        self.path = path
        self.offset = offset
        self.defect = defect
    }

    public var description: String { "\(path): \(reason)" }

    /// The description without the path: "byte N: what was expected, found", "truncated at
    /// byte N: expected …", or for a file that is not MIDI at all "not a MIDI file: starts with …".
    public var reason: String {
        switch defect {
        case .truncated(let expected): return "truncated at byte \(offset): expected \(expected)"
        case .notMIDI where offset == 0, .emptyFile: return defect.message
        default: return "byte \(offset): \(defect.message)"
        }
    }
}

/// A defect recovered from in safe or lenient mode, with what the reader did about it.
public struct MIDIWarning: Equatable, Hashable, Sendable, CustomStringConvertible {
    public let path: String
    public let offset: Int
    public let defect: MIDIDefect
    public let recovery: String

    public init(path: String, offset: Int, defect: MIDIDefect, recovery: String) {
        self.path = path
        self.offset = offset
        self.defect = defect
        self.recovery = recovery
    }

    public var description: String { "\(path): byte \(offset): \(defect.message) (\(recovery))" }
}

/// A file that cannot be read at all (missing, unreadable, or too large).
public struct MIDIReadError: Error, Equatable, Sendable, CustomStringConvertible {
    public let path: String
    public let message: String
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path): \(message)" }
}
