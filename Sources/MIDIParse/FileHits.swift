// One file's hits as the dataset, eval and the primer see them: absolute onsets at the
// target resolution (see HitExtractionSettings).

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

    public init(notes: [Int], ticks: [Int], channelUsed: String, warnings: [MIDIWarning] = []) {
        self.notes = notes
        self.ticks = ticks
        self.channelUsed = channelUsed
        self.warnings = warnings
    }

    /// Ticks since the previous hit, the first hit's counted from the start of the file.
    public var deltas: [Int] {
        var previous = 0
        return ticks.map { t in
            defer { previous = t }
            return t - previous
        }
    }
}

extension FileHits {
    /// Largest onset, in target ticks, a file may have (2^40: about 36 years at 480 PPQ and 120 BPM).
    public static let maximumTick = 1 << 40

    /// Selects, rescales, quantizes and maps the hits of a parsed file.
    ///
    /// Time: a PPQ file's tick t becomes round(t × target / ppq) (halves round up); an SMPTE
    /// file's tick becomes round(quarter notes × target), its quarter notes taken from its
    /// frame rate and tempo map. Quantizing snaps each absolute onset to the nearest multiple
    /// of the grid (halves round up), before any delta is taken.
    ///
    /// - Throws: `HitExtractionError.hitTooLate` when a hit lies beyond `FileHits.maximumTick` target ticks
    ///   (only a crafted file gets there; the bound keeps all later arithmetic exact).
    public init(file: MIDIFile, path: String, settings: HitExtractionSettings, warnings: [MIDIWarning] = []) throws {
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
        let limit = Self.maximumTick
        switch file.division {
        case .ppq(let ppq):
            // tick ≤ limit × ppq / target keeps tick × target ≤ 2^40 × 2^15: no overflow.
            let sourceLimit = ppq >= target ? Int.max : limit / target * ppq
            for h in hits {
                guard h.tick <= sourceLimit else { throw HitExtractionError.hitTooLate(path: path, tick: h.tick) }
                ticks.append(ppq == target ? h.tick : (h.tick * target + ppq / 2) / ppq)
            }
            if let last = ticks.last, last > limit { throw HitExtractionError.hitTooLate(path: path, tick: hits[hits.count - 1].tick) }
        case .smpte:
            let map = file.tempoMap
            for h in hits {
                let t = (map.quarterNotes(atTick: h.tick) * Double(target)).rounded(.toNearestOrAwayFromZero)
                guard t.isFinite, t <= Double(limit) else { throw HitExtractionError.hitTooLate(path: path, tick: h.tick) }
                ticks.append(Int(t))
            }
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

extension FileHits {
    /// Reads, parses and extracts the hits of the file at `path`.
    /// - Throws: `MIDIReadError` (cannot read), `MIDIFileError` (not valid MIDI, with the byte
    ///   offset), `HitExtractionError` (a hit beyond `maximumTick`).
    public static func read(path: String, settings: HitExtractionSettings) throws -> FileHits {
        let (file, warnings) = try MIDIFile.read(path: path, mode: settings.lenient ? .lenient : .strict)
        return try FileHits(file: file, path: path, settings: settings, warnings: warnings)
    }
}
