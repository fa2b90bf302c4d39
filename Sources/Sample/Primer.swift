// A primer from a MIDI file, read exactly as `drummer convert-midi` reads a file with
// its default settings (MIDIParse's FileHits): the safe parse policy (only defects that need
// no guessing are recovered, with warnings), channel auto
// (channel index 9 when the file has notes there, otherwise every channel), onsets
// rescaled to 480 PPQ (halves round up), no quantizing, no note map; hits are
// (note, delta since the previous onset) in file order, the first delta being the
// first onset. Then mapped to the model's vocabulary: a note the model does not know
// is an error naming it; a delta that is not one of the model's tick values becomes
// the nearest one (the smaller on a tie), and the count of such hits is reported. The
// primer only sets the sampler's state, so a mapped tick cannot move a generated onset.
// (A grid model reads its primer as grid steps: GridPrimer.)

import DrummerCore
import MIDIParse

public struct Primer: Equatable, Sendable {
    /// The primer in the model's classes, ready for `Sampler.generate(primer:)`.
    public let events: [SampledEvent]
    /// The hits as read (480 PPQ deltas), before mapping ticks.
    public let hits: [DrumHit]
    /// Hits whose delta was not a vocabulary tick value and was mapped to the nearest.
    public let mappedTicks: Int
    /// Channel index read (nil: every channel).
    public let channel: Int?
    /// The meter most of the primer's hits are in.
    public let meter: String
    /// Reader warnings (defects the parse policy recovered).
    public let warnings: [String]
    /// Each hit's bar: the tick (as read) of its bar line.
    public var barStarts: [Int] = []
    /// Each hit's bar length in ticks (as read).
    public var barLengths: [Int] = []
    /// Whether each hit's delta was mapped to the nearest vocabulary tick.
    var mappedAt: [Bool] = []
    /// The primer's first tempo in BPM (nil: it sets none).
    public var bpm: Double?
    /// Each hit's onset (480 PPQ, from the file's start) and the file's tempo changes at those
    /// ticks: the kept hits' tempos (`keptTempo`).
    public var onsets: [Int] = []
    public var tempos: [MIDITempoChange] = []

    /// The tempo at the first hit (the start of a file that keeps the primer) and its changes
    /// through the last, at ticks from the first hit: the kept hits play as recorded.
    public var keptTempo: (bpm: Double?, later: [MIDITempoChange]) {
        let w = tempos.window(from: onsets.first ?? 0, through: onsets.last ?? 0)
        return (w.bpm ?? bpm, w.later)
    }

    /// The primer's hits of its last `bars` bars, which end with the last hit's bar (empty bars
    /// among them count, at the last bar's length; every hit when it has fewer). The first kept
    /// hit keeps its delta from the hit before it (the model reads it as played).
    public func lastBars(_ bars: Int) -> Primer {
        var lines: [Int] = []
        for b in barStarts where lines.last != b { lines.append(b) }
        guard bars >= 1, !lines.isEmpty else { return self }
        let from = PrimerWindow.start(ofLast: bars, barLines: lines, lastBarLength: barLengths.count == barStarts.count ? barLengths.last : nil)
        guard from > lines[0] else { return self }
        let first = barStarts.firstIndex { $0 >= from } ?? 0
        let mappedKept = mappedAt.count == events.count ? mappedAt[first...].filter { $0 }.count : mappedTicks
        var kept = Primer(events: Array(events[first...]), hits: Array(hits[first...]), mappedTicks: mappedKept,
                          channel: channel, meter: meter, warnings: warnings)
        kept.barStarts = Array(barStarts[first...])
        if barLengths.count == barStarts.count { kept.barLengths = Array(barLengths[first...]) }
        if mappedAt.count == events.count { kept.mappedAt = Array(mappedAt[first...]) }
        kept.bpm = bpm
        if onsets.count == events.count { kept.onsets = Array(onsets[first...]) }
        kept.tempos = tempos
        return kept
    }
}

/// Where a primer's last bars begin, for both layouts' primers (`Primer.lastBars`,
/// `GridPrimer.lastBars`).
enum PrimerWindow {
    /// The first of the last `bars` bar lines of `lines` (ascending, distinct; `bars` ≥ 1), which
    /// end with the last one; empty bars among them count, at `lastBarLength` when it is known,
    /// so that hits far before them are neither read nor stepped through.
    static func start(ofLast bars: Int, barLines lines: [Int], lastBarLength: Int?) -> Int {
        var from = lines[max(0, lines.count - bars)]
        if let length = lastBarLength {
            let (back, overflow) = (bars - 1).multipliedReportingOverflow(by: length)
            if !overflow { from = max(from, lines[lines.count - 1] - back) }
        }
        return from
    }
}

public enum PrimerError: Error, CustomStringConvertible, Equatable {
    case noHits(path: String)
    case notesOutsideVocabulary(path: String, notes: [Int], vocabulary: [Int])

    public var description: String {
        switch self {
        case .noHits(let p):
            return "\(p): the primer has no notes (NOTE ON with velocity > 0)"
        case .notesOutsideVocabulary(let p, let n, let v):
            return "\(p): primer note(s) \(n.map(String.init).joined(separator: ", ")) are not in the model's "
                + "vocabulary (\(v.map(String.init).joined(separator: " ")))"
        }
    }
}

extension Primer {
    /// Reads `path` with `settings` (convert-midi's defaults unless given) and maps it to a
    /// model of the original layout over `vocabulary`. MIDI errors are MIDIParse's typed errors
    /// (file, byte offset, defect).
    public static func load(
        path: String, vocabulary: Vocabulary, settings: HitExtractionSettings = HitExtractionSettings()
    ) throws -> Primer {
        let f = try FileHits.read(path: path, settings: settings)
        let hits = (0..<f.count).map { DrumHit(note: f.notes[$0], delta: f.deltas.isEmpty ? 0 : f.deltas[$0], velocity: f.velocities[$0]) }
        guard !hits.isEmpty else { throw PrimerError.noHits(path: path) }
        let index = VocabularyIndex(vocabulary)
        let unknown = Set(hits.map(\.note).filter { index.note($0) == nil }).sorted()
        guard unknown.isEmpty else {
            throw PrimerError.notesOutsideVocabulary(path: path, notes: unknown, vocabulary: vocabulary.ixToNote)
        }
        var mapped = 0
        var mappedAt: [Bool] = []
        var events: [SampledEvent] = []
        events.reserveCapacity(hits.count)
        for h in hits {
            let (tick, exact) = index.nearestTick(h.delta)
            if !exact { mapped += 1 }
            mappedAt.append(!exact)
            events.append(SampledEvent(note: index.note(h.note) ?? 0, tick: tick))
        }
        var primer = Primer(events: events, hits: hits, mappedTicks: mapped, channel: f.channelUsed == "9" ? 9 : nil,
                            meter: f.meter, warnings: f.warnings.map(\.description))
        primer.barStarts = zip(f.ticks, f.tickInBar).map { $0 - $1 }
        primer.barLengths = f.barTicks
        primer.mappedAt = mappedAt
        primer.bpm = f.bpm(at: f.ticks.last ?? 0)  // the tempo it ends in
        primer.onsets = f.ticks
        primer.tempos = f.tempos
        return primer
    }
}
