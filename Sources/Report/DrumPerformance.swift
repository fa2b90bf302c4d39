// A drum MIDI file as the report and the tab read it: its hits (channel index 9 when the
// file has notes there, else every channel: convert-midi's `--channel auto`), its bars and
// its tempo.
import Foundation
import MIDIParse

public struct DrumPerformance: Sendable {
    public let path: String
    public let file: MIDIFile
    /// NOTE ONs with velocity > 0 of the selected channel(s), in merge order.
    public let hits: [MIDIHit]
    /// The channel index the hits come from, nil for every channel.
    public let channel: Int?
    public let meter: MIDIMeterMap
    public let tempo: MIDITempoMap
    /// Defects recovered while reading (lenient mode only).
    public let warnings: [MIDIWarning]

    public init(file: MIDIFile, path: String, channel selection: ChannelSelection = .auto, warnings: [MIDIWarning] = []) {
        self.path = path
        self.file = file
        switch selection {
        case .auto: channel = file.hasNotes(onChannel: 9) ? 9 : nil
        case .all: channel = nil
        case .index(let n): channel = n
        }
        hits = file.hits(channel: channel)
        meter = MIDIMeterMap(file: file)
        tempo = file.tempoMap
        self.warnings = warnings
    }

    /// Reads `path` in parse mode `mode` (convert-midi's default, `.safe`, recovers only what
    /// needs no guessing; `.lenient` everything it can, with a warning each).
    /// - Throws: `ReportError.unreadableMIDI` naming the file and the defect.
    public static func load(path: String, channel: ChannelSelection = .auto, mode: MIDIParseMode = .safe) throws -> DrumPerformance {
        do {
            let (file, warnings) = try MIDIFile.read(path: path, mode: mode)
            return DrumPerformance(file: file, path: path, channel: channel, warnings: warnings)
        } catch let e as MIDIFileError {
            throw ReportError.unreadableMIDI(path: path, message: "byte \(e.offset): \(e.defect.message)")
        } catch let e as MIDIReadError {
            throw ReportError.unreadableMIDI(path: path, message: e.message)
        }
    }

    /// "channel 10" or "all channels" (1-based, as musicians count channels).
    var channelDescription: String { channel.map { "channel \($0 + 1)" } ?? "all channels" }

    /// Number of bars up to and including the last hit's bar (0 without hits).
    var barCount: Int {
        guard let last = hits.map(\.tick).max() else { return 0 }
        return meter.position(atTick: last).bar + 1
    }

    /// The tempo the file starts at in beats per minute, as it plays: of its tempo events at
    /// tick 0 the last (120 without one there).
    var initialBPM: Double {
        60_000_000 / Double(tempo.changes.startMicrosecondsPerQuarter ?? MIDITempoMap.defaultMicrosecondsPerQuarter)
    }
}

extension DrumPerformance {
    /// The file's tempos in beats per minute, in order: `initialBPM`, then each change to another
    /// tempo (of changes at one tick the last, the one that plays).
    var tempos: [Double] {
        let start = tempo.changes.startMicrosecondsPerQuarter ?? MIDITempoMap.defaultMicrosecondsPerQuarter
        return [initialBPM] + tempo.changes.audibleChanges(after: start).map { 60_000_000 / Double($0.microsecondsPerQuarter) }
    }
}

/// What went wrong with one input of `drummer report` or `drummer tab`; each names the file.
public enum ReportError: Error, Equatable, CustomStringConvertible {
    case missingPath(path: String, what: String)
    case unreadableMIDI(path: String, message: String)
    /// No hit on the channels read (`channels`: ChannelSelection.searched).
    case noDrums(path: String, channels: String = ChannelSelection.all.searched)
    case noTrainLog(directory: String)
    case emptyLog(path: String)
    case badModel(path: String, message: String)
    case badReference(path: String, message: String)
    case nothingToDraw
    case output(path: String, message: String)

    public var description: String {
        switch self {
        case .missingPath(let p, let what): return "\(p): no such \(what)"
        case .unreadableMIDI(let p, let m): return "\(p): not a readable MIDI file: \(m)"
        case .noDrums(let p, let c): return "\(p): no drum hits (no NOTE ON with velocity > 0 \(c))"
        case .noTrainLog(let d):
            return "\(d): no \(TrainingLog.fileName) here (the checkpoint directory of `drummer train` holds it)"
        case .emptyLog(let p): return "\(p): no evaluation rows yet (only a header); no curves to draw"
        case .badModel(let p, let m): return "\(p): \(m)"
        case .badReference(let p, let m): return "\(p): \(m)"
        case .nothingToDraw: return "nothing could be drawn from the inputs given; no page written"
        case .output(let p, let m): return "\(p): \(m)"
        }
    }
}
