// One file's hits as the dataset sees them: absolute onsets at the target resolution.
import MIDIParse

/// The hits of one file, in merge order, at the target PPQ (after channel selection,
/// rescaling, quantizing and note mapping).
public struct FileHits: Equatable, Sendable {
    /// Note numbers (after the note map).
    public var notes: [Int]
    /// Absolute onsets in target ticks from the file's start, non-decreasing.
    public var ticks: [Int]
    /// "9" or "all" for `--channel auto`, else the selection itself.
    public var channelUsed: String
    public var warnings: [MIDIWarning]

    public var count: Int { notes.count }
}

extension FileHits {
    /// Selects, rescales, quantizes and maps the hits of a parsed file.
    ///
    /// Time: a PPQ file's tick t becomes round(t × target / ppq) (halves round up); an SMPTE
    /// file's tick becomes round(quarter notes × target), its quarter notes taken from its
    /// frame rate and tempo map. Quantizing snaps each absolute onset to the nearest multiple
    /// of the grid (halves round up), before any delta is taken.
    public init(file: MIDIFile, settings: ConversionSettings, warnings: [MIDIWarning] = []) {
        let channel: Int?
        switch settings.channel {
        case .all:
            channel = nil
            channelUsed = "all"
        case .index(let n):
            channel = n
            channelUsed = String(n)
        case .auto:
            channel = file.hasNotes(onChannel: 9) ? 9 : nil
            channelUsed = channel == nil ? "all" : "9"
        }
        let hits = file.hits(channel: channel)
        let target = settings.ppq
        var ticks: [Int] = []
        ticks.reserveCapacity(hits.count)
        switch file.division {
        case .ppq(let ppq):
            if ppq == target {
                for h in hits { ticks.append(h.tick) }
            } else {
                for h in hits { ticks.append((h.tick * target + ppq / 2) / ppq) }
            }
        case .smpte:
            let map = file.tempoMap
            for h in hits { ticks.append(Int((map.quarterNotes(atTick: h.tick) * Double(target)).rounded(.toNearestOrAwayFromZero))) }
        }
        if let q = settings.quantize, q > 1 {
            for i in ticks.indices { ticks[i] = (ticks[i] + q / 2) / q * q }
        }
        var notes: [Int] = []
        notes.reserveCapacity(hits.count)
        if settings.noteMap.table.isEmpty {
            for h in hits { notes.append(Int(h.note)) }
        } else {
            for h in hits { notes.append(settings.noteMap.apply(Int(h.note))) }
        }
        self.notes = notes
        self.ticks = ticks
        self.warnings = warnings
    }
}
