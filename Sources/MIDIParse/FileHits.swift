// One file's hits as the dataset, eval and the primer see them: absolute onsets at the
// target resolution (see HitExtractionSettings).

/// The hits of one file, in merge order, at the target PPQ (after channel selection,
/// rescaling, quantizing and note mapping), with each hit's velocity and its position in
/// its bar (from the file's time signatures; 4/4 where it has none).
public struct FileHits: Equatable, Sendable {
    /// Note numbers (after the note map).
    public var notes: [Int]
    /// Absolute onsets in target ticks from the file's start, non-decreasing.
    public var ticks: [Int]
    /// NOTE ON velocities, 1...127.
    public var velocities: [Int]
    /// Ticks (target resolution) from the hit's bar line to its (quantized) onset.
    public var tickInBar: [Int]
    /// Length in target ticks of the hit's bar: its meter's, or less for a bar cut short by
    /// an off-bar time-signature change (a pickup written as 4/4 restated mid-bar).
    public var barTicks: [Int]
    /// The meter most of the hits are in ("4/4" for a file without time signatures).
    public var meter: String
    /// "9" or "all" for `--channel auto`, else the selection itself.
    public var channelUsed: String
    public var warnings: [MIDIWarning]
    /// The file's first tempo in BPM (nil: it sets none), read with the hits so that a command
    /// taking the tempo of a primer or a beat does not read the file a second time.
    public var firstBPM: Double?
    /// The file's tempo changes at target ticks, in order (empty: it sets none; at equal ticks
    /// the last one stands).
    public var tempos: [MIDITempoChange] = []
    /// The file's meters at target ticks: where each run of bars in one meter starts (the
    /// meter map's segments: the first at tick 0, 4/4 when the file sets none there; a meter
    /// restated on a bar line is not a new run).
    public var meterRuns: [MIDITimeSignature] = [MIDITimeSignature(numerator: 4, denominator: 4)]
    /// Where the file ends, at target ticks (its last end-of-track on the merged time line, not
    /// quantized; 0 for hits not read from a file): a beat written again keeps its length.
    public var endTick = 0

    public var count: Int { notes.count }

    /// The meter at tick 0 and the meter runs after it that start at or before tick
    /// `through`: a file written from these hits keeps the beat's bar lines (a pickup bar, a
    /// bar of 2/4, a bar cut short).
    public func meters(through tick: Int) -> (first: MIDITimeSignature, later: [MIDITimeSignature]) {
        (meterRuns[0], Array(meterRuns.dropFirst().prefix { $0.tick <= tick }))
    }

    /// The tempo in force at target tick `tick` in BPM (before the first change, the first
    /// tempo); nil when the file sets none.
    public func bpm(at tick: Int) -> Double? { tempos.bpm(at: tick) ?? firstBPM }

    /// The tempo at target tick `start` (at 0 when `start` lies before the file) and the changes
    /// after it up to `end`, at ticks from `start`: a part of the file written as a file of its own.
    public func tempos(from start: Int, through end: Int) -> (bpm: Double?, later: [MIDITempoChange]) {
        let w = tempos.window(from: start, through: end)
        return (w.bpm ?? firstBPM, w.later)
    }

    /// The tempo changes after the first that change the tempo (at target ticks above 0).
    public var laterTempos: [MIDITempoChange] {
        tempos.audibleChanges(after: tempos.startMicrosecondsPerQuarter ?? tempos.first?.microsecondsPerQuarter)
    }

    /// Hits from their parts; velocity 100 and positions in 4/4 at 480 PPQ unless given.
    public init(notes: [Int], ticks: [Int], velocities: [Int]? = nil, tickInBar: [Int]? = nil, barTicks: [Int]? = nil,
                meter: String = "4/4", channelUsed: String, warnings: [MIDIWarning] = [], firstBPM: Double? = nil) {
        self.notes = notes
        self.ticks = ticks
        self.velocities = velocities ?? [Int](repeating: 100, count: notes.count)
        self.tickInBar = tickInBar ?? ticks.map { $0 % 1920 }
        self.barTicks = barTicks ?? [Int](repeating: 1920, count: notes.count)
        self.meter = meter
        self.channelUsed = channelUsed
        self.warnings = warnings
        self.firstBPM = firstBPM
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
    /// Largest onset, in target ticks, a file may have (2^31 − 1: about 26 days at 480 PPQ and
    /// 120 BPM). The bound keeps every onset and every within-file delta an Int32.
    public static let maximumTick = Int(Int32.max)

    /// Selects, rescales, quantizes and maps the hits of a parsed file.
    ///
    /// Time: a PPQ file's tick t becomes round(t × target / ppq) (halves round up); an SMPTE
    /// file's tick becomes round(quarter notes × target), its quarter notes taken from its
    /// frame rate and tempo map. Quantizing snaps each absolute onset to the nearest multiple
    /// of the grid (halves round up), before any delta is taken.
    ///
    /// - Throws: `HitExtractionError.hitTooLate` when a hit lies beyond `FileHits.maximumTick` target
    ///   ticks, quantized or not (only a crafted file gets there; the bound keeps all later arithmetic exact).
    public init(file: MIDIFile, path: String, settings: HitExtractionSettings, warnings: [MIDIWarning] = []) throws {
        let channel = Self.channel(settings.channel, hasChannel9Notes: file.hasNotes(onChannel: 9))
        let hits = file.hits(channel: channel)
        try self.init(division: file.division, ticks: hits.map(\.tick), notes: hits.map(\.note),
                      velocities: hits.map(\.velocity), timeSignatures: file.timeSignatureChanges,
                      tempoMap: file.tempoMap, endTick: file.endTick, channelUsed: channel == nil ? "all" : String(channel!),
                      path: path, settings: settings, warnings: warnings)
    }

    /// The channel index `selection` reads (nil: every channel).
    static func channel(_ selection: ChannelSelection, hasChannel9Notes: Bool) -> Int? {
        switch selection {
        case .all: return nil
        case .index(let n): return n
        case .auto: return hasChannel9Notes ? 9 : nil
        }
    }

    /// The shared core: `ticks` and `notes` are the selected hits on the merged time line,
    /// in merge order, in the file's own division; `tempoMap` gives the first tempo, and an
    /// SMPTE file's onsets and meters.
    init(division: MIDIDivision, ticks sourceTicks: [Int], notes sourceNotes: [UInt8], velocities sourceVelocities: [UInt8],
         timeSignatures: [(tick: Int, numerator: Int, denominator: Int)], tempoMap tempo: MIDITempoMap, endTick fileEnd: Int,
         channelUsed: String, path: String, settings: HitExtractionSettings, warnings: [MIDIWarning]) throws {
        let target = settings.ppq
        var ticks: [Int] = []
        ticks.reserveCapacity(sourceTicks.count)
        let limit = Self.maximumTick
        switch division {
        case .ppq(let ppq):
            // tick ≤ (limit / target + 1) × ppq keeps tick × target ≤ (2^31 + 2^15) × 2^15: no
            // overflow; onsets past the limit after rescaling are caught below.
            let sourceLimit = (limit / target + 1) * ppq
            for t in sourceTicks {
                guard t <= sourceLimit else { throw HitExtractionError.hitTooLate(path: path, tick: t) }
                ticks.append(ppq == target ? t : (t * target + ppq / 2) / ppq)
            }
        case .smpte:
            let map = tempo
            for t in sourceTicks {
                let q = (map.quarterNotes(atTick: t) * Double(target)).rounded(.toNearestOrAwayFromZero)
                guard q.isFinite, q <= Double(limit) else { throw HitExtractionError.hitTooLate(path: path, tick: t) }
                ticks.append(Int(q))
            }
        }
        if let q = settings.quantize, q > 1 {
            for i in ticks.indices { ticks[i] = (ticks[i] + q / 2) / q * q }
        }
        // Onsets are non-decreasing: the last is the largest.
        if let last = ticks.last, last > limit, let first = ticks.firstIndex(where: { $0 > limit }) {
            throw HitExtractionError.hitTooLate(path: path, tick: sourceTicks[first])
        }
        var notes: [Int] = []
        notes.reserveCapacity(sourceNotes.count)
        if settings.noteMap.table.isEmpty {
            for n in sourceNotes { notes.append(Int(n)) }
        } else {
            for n in sourceNotes { notes.append(settings.noteMap.apply(Int(n))) }
        }
        var velocities = sourceVelocities.map(Int.init)
        if settings.onsetOrder == .note { Self.sortByNoteWithinOnsets(ticks: ticks, notes: &notes, velocities: &velocities) }
        self.notes = notes
        self.ticks = ticks
        self.velocities = velocities
        // A meta event's file tick at the target resolution, as onsets move (not quantized: bar
        // lines and tempo changes stay where the file puts them), at most `limit`.
        func targetTick(_ tick: Int) -> Int {
            switch division {
            case .ppq(let ppq):
                let t = min(max(0, tick), (limit / target + 1) * ppq)
                return (t * target + ppq / 2) / ppq
            case .smpte:
                let q = (tempo.quarterNotes(atTick: max(0, tick)) * Double(target)).rounded(.toNearestOrAwayFromZero)
                return q.isFinite ? Int(min(q, Double(limit))) : limit
            }
        }
        // Positions: the time signatures at the target resolution, then each quantized onset
        // looked up in that meter map.
        let changes = timeSignatures.map { (tick: targetTick($0.tick), numerator: $0.numerator, denominator: $0.denominator) }
        let meters = MIDIMeterMap(ticksPerQuarter: target, changes: changes)
        var inBar: [Int] = [], bars: [Int] = []
        inBar.reserveCapacity(ticks.count)
        bars.reserveCapacity(ticks.count)
        var meterHits: [String: Int] = [:]
        var lastMeter = (0, 0), lastName = ""
        for t in ticks {
            let p = meters.position(atTick: t)
            inBar.append(p.tickInBar)
            bars.append(p.length)
            if (p.numerator, p.denominator) != lastMeter {
                lastMeter = (p.numerator, p.denominator)
                lastName = "\(p.numerator)/\(p.denominator)"
            }
            meterHits[lastName, default: 0] += 1
        }
        tickInBar = inBar
        barTicks = bars
        // Most hits; on a tie the meter of the first segment that has that many.
        let first = meters.segments[0]
        meter = meterHits.max { a, b in a.value != b.value ? a.value < b.value : a.key > b.key }?.key
            ?? "\(first.numerator)/\(first.denominator)"
        self.channelUsed = channelUsed
        self.warnings = warnings
        firstBPM = tempo.firstBPM
        tempos = tempo.changes.map { MIDITempoChange(tick: targetTick($0.tick), microsecondsPerQuarter: $0.microsecondsPerQuarter) }
        meterRuns = meters.segments.map { MIDITimeSignature(tick: $0.startTick, numerator: $0.numerator, denominator: $0.denominator) }
        endTick = targetTick(fileEnd)
    }
}

extension FileHits {
    /// Sorts each run of equal ticks by note number (stably), keeping each velocity with its note.
    static func sortByNoteWithinOnsets(ticks: [Int], notes: inout [Int], velocities: inout [Int]) {
        var start = 0
        while start < ticks.count {
            var end = start + 1
            while end < ticks.count, ticks[end] == ticks[start] { end += 1 }
            if end - start > 1 {
                // Insertion sort: onsets hold a few hits.
                for i in (start + 1)..<end {
                    var j = i
                    while j > start, notes[j - 1] > notes[j] {
                        notes.swapAt(j - 1, j)
                        velocities.swapAt(j - 1, j)
                        j -= 1
                    }
                }
            }
            start = end
        }
    }

    /// Reads, parses and extracts the hits of the file at `path` with `settings.parseMode`.
    /// Reads only what extraction needs (no full event list); gives exactly what
    /// `init(file:path:settings:)` gives for the file `MIDIFile.read` returns.
    /// - Throws: `MIDIReadError` (cannot read), `MIDIFileError` (not valid MIDI, with the byte
    ///   offset), `HitExtractionError` (a hit beyond `maximumTick`).
    public static func read(path: String, settings: HitExtractionSettings) throws -> FileHits {
        try parse(MIDIFile.readBytes(path: path), path: path, settings: settings)
    }

    /// Extracts the hits of the file `bytes`; see `read(path:settings:)`.
    public static func parse(_ bytes: [UInt8], path: String, settings: HitExtractionSettings) throws -> FileHits {
        try bytes.withUnsafeBufferPointer { buf in
            var reader = SMFReader(buffer: buf, path: path, mode: settings.parseMode,
                                   sink: HitCollector(buffer: buf, capacity: min(buf.count / 8, 1 << 14)))
            let (format, division) = try reader.readFile()
            let c = reader.sink
            let channel = channel(settings.channel, hasChannel9Notes: c.hasChannel9Notes)
            let (ticks, notes, velocities) = c.mergedHits(format: format, channel: channel)
            return try FileHits(division: division, ticks: ticks, notes: notes, velocities: velocities,
                                timeSignatures: c.timeSignatureChanges(format: format),
                                tempoMap: c.tempoMap(format: format, division: division), endTick: c.endTick(format: format),
                                channelUsed: channel == nil ? "all" : String(channel!),
                                path: path, settings: settings, warnings: reader.warnings)
        }
    }
}

extension HitCollector {
    /// Tick at which each track starts on the merged time line (as `MIDIFile.trackStartTicks`).
    func trackStarts(format: Int) -> [Int] {
        guard format == 2 else { return [Int](repeating: 0, count: trackEndTicks.count) }
        var starts: [Int] = []
        starts.reserveCapacity(trackEndTicks.count)
        var t = 0
        for end in trackEndTicks {
            starts.append(t)
            t += end
        }
        return starts
    }

    /// Where the merged time line ends (as `MIDIFile.endTick`).
    func endTick(format: Int) -> Int {
        zip(trackStarts(format: format), trackEndTicks).map { $0 + $1 }.max() ?? 0
    }

    /// The hits on `channel` (nil: all) on the merged time line, ordered by (tick, track, order
    /// in track), as `MIDIFile.hits(channel:)`.
    func mergedHits(format: Int, channel: Int?) -> (ticks: [Int], notes: [UInt8], velocities: [UInt8]) {
        let starts = trackStarts(format: format)
        var outTicks: [Int] = [], outNotes: [UInt8] = [], outVelocities: [UInt8] = []
        outTicks.reserveCapacity(hits.count)
        outNotes.reserveCapacity(hits.count)
        outVelocities.reserveCapacity(hits.count)
        var sorted = true
        var last = Int.min
        for track in starts.indices {
            let base = starts[track]
            let end = track + 1 < trackFirstHit.count ? trackFirstHit[track + 1] : hits.count
            for i in trackFirstHit[track]..<end where channel == nil || Int(hits[i].channel) == channel {
                let t = hits[i].tick + base
                if t < last { sorted = false }
                last = t
                outTicks.append(t)
                outNotes.append(hits[i].note)
                outVelocities.append(hits[i].velocity)
            }
        }
        // A stable sort by tick of what is in track order; most files are in order already.
        if !sorted {
            let order = outTicks.indices.sorted { outTicks[$0] != outTicks[$1] ? outTicks[$0] < outTicks[$1] : $0 < $1 }
            outTicks = order.map { outTicks[$0] }
            outNotes = order.map { outNotes[$0] }
            outVelocities = order.map { outVelocities[$0] }
        }
        return (outTicks, outNotes, outVelocities)
    }

    /// The time signatures of the merged time line (as `MIDIFile.timeSignatureChanges`).
    func timeSignatureChanges(format: Int) -> [(tick: Int, numerator: Int, denominator: Int)] {
        let starts = trackStarts(format: format)
        var changes: [(tick: Int, numerator: Int, denominator: Int)] = []
        for track in starts.indices {
            let end = track + 1 < trackFirstSignature.count ? trackFirstSignature[track + 1] : signatures.count
            for i in trackFirstSignature[track]..<end {
                let s = signatures[i]
                changes.append((s.tick + starts[track], s.numerator, s.denominator))
            }
        }
        if starts.count > 1 { MIDIFile.stableSortByTick(&changes, tick: \.tick) }
        return changes
    }

    /// The tempo map of the merged time line (as `MIDIFile.tempoMap`).
    func tempoMap(format: Int, division: MIDIDivision) -> MIDITempoMap {
        let starts = trackStarts(format: format)
        var changes: [MIDITempoChange] = []
        for track in starts.indices {
            let end = track + 1 < trackFirstTempo.count ? trackFirstTempo[track + 1] : tempoTicks.count
            for i in trackFirstTempo[track]..<end {
                changes.append(MIDITempoChange(tick: tempoTicks[i] + starts[track], microsecondsPerQuarter: tempoValues[i]))
            }
        }
        if starts.count > 1 { MIDIFile.stableSortByTick(&changes, tick: \.tick) }
        return MIDITempoMap(division: division, changes: changes)
    }
}
