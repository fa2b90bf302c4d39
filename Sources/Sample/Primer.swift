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

// For a model with the position group, each primer hit also carries its position in its
// bar (from the primer's own time signatures; 4/4 where it has none), and generation goes
// on from the last one's; a primer whose bars are longer than the model knows is an error
// naming its meter. For a model with the velocity group, each hit's velocity becomes its
// bin; a velocity outside the range the model learned is an error naming it.

import DrummerCore
import MIDIParse

public struct Primer: Equatable, Sendable {
    /// The primer in the model's classes, ready for `Sampler.generate(primer:)`.
    public let events: [Sampler.PrimerEvent]
    /// The hits as read (480 PPQ deltas), before mapping ticks.
    public let hits: [DrumHit]
    /// Hits whose delta was not a vocabulary tick value and was mapped to the nearest.
    public let mappedTicks: Int
    /// Channel index read (nil: every channel).
    public let channel: Int?
    /// The meter most of the primer's hits are in.
    public let meter: String
    /// The meter of the bar the primer's last hit is in (for a model with the position group:
    /// generation carries on in it unless told otherwise).
    public var lastMeter: Meter?
    /// Reader warnings (defects the parse policy recovered).
    public let warnings: [String]
    /// Each hit's bar: the tick (as read) of its bar line.
    public var barStarts: [Int] = []
    /// Whether each hit's delta was mapped to the nearest vocabulary tick.
    var mappedAt: [Bool] = []
    /// The primer's first tempo in BPM (nil: it sets none).
    public var bpm: Double?

    /// The primer's hits of its last `bars` bars (bars counted by their bar lines; every hit
    /// when it has fewer). The first kept hit keeps its delta from the hit before it (the model
    /// reads it as played).
    public func lastBars(_ bars: Int) -> Primer {
        var lines: [Int] = []
        for b in barStarts where lines.last != b { lines.append(b) }
        guard bars >= 1, lines.count > bars else { return self }
        let from = lines[lines.count - bars]
        let first = barStarts.firstIndex { $0 >= from } ?? 0
        let mappedKept = mappedAt.count == events.count ? mappedAt[first...].filter { $0 }.count : mappedTicks
        var kept = Primer(events: Array(events[first...]), hits: Array(hits[first...]), mappedTicks: mappedKept,
                          channel: channel, meter: meter, lastMeter: lastMeter, warnings: warnings)
        kept.barStarts = Array(barStarts[first...])
        if mappedAt.count == events.count { kept.mappedAt = Array(mappedAt[first...]) }
        kept.bpm = bpm
        return kept
    }
}

public enum PrimerError: Error, CustomStringConvertible, Equatable {
    case noHits(path: String)
    case notesOutsideVocabulary(path: String, notes: [Int], vocabulary: [Int])
    /// A velocity outside the range of the model's velocity bins.
    case velocityOutOfRange(path: String, hit: Int, velocity: Int, range: ClosedRange<Int>)
    /// Bars longer than the model's position slots.
    case meterTooLong(path: String, meter: String, barTicks: Int, longestBar: Int)

    public var description: String {
        switch self {
        case .noHits(let p):
            return "\(p): the primer has no notes (NOTE ON with velocity > 0)"
        case .notesOutsideVocabulary(let p, let n, let v):
            return "\(p): primer note(s) \(n.map(String.init).joined(separator: ", ")) are not in the model's "
                + "vocabulary (\(v.map(String.init).joined(separator: " ")))"
        case .velocityOutOfRange(let p, let hit, let v, let r):
            return "\(p): primer hit \(hit) has velocity \(v), outside the range \(r.lowerBound)...\(r.upperBound) the model learned"
        case .meterTooLong(let p, let meter, let bar, let longest):
            return "\(p): the primer is in \(meter), whose bars (\(bar) ticks) are longer than the model knows (\(longest) ticks)"
        }
    }
}

extension Primer {
    /// A primer for a model of the original layout over `vocabulary`.
    public static func load(
        path: String, vocabulary: Vocabulary, settings: HitExtractionSettings = HitExtractionSettings()
    ) throws -> Primer {
        try load(path: path, groups: ModelGroups(vocabulary: vocabulary), settings: settings)
    }

    /// Reads `path` with `settings` (convert-midi's defaults unless given) and maps it to the
    /// model's `groups`. MIDI errors are MIDIParse's typed errors (file, byte offset, defect).
    public static func load(
        path: String, groups: ModelGroups, settings: HitExtractionSettings = HitExtractionSettings()
    ) throws -> Primer {
        let f = try FileHits.read(path: path, settings: settings)
        let hits = (0..<f.count).map { DrumHit(note: f.notes[$0], delta: f.deltas.isEmpty ? 0 : f.deltas[$0], velocity: f.velocities[$0]) }
        guard !hits.isEmpty else { throw PrimerError.noHits(path: path) }
        let index = VocabularyIndex(groups.vocabulary)
        let unknown = Set(hits.map(\.note).filter { index.note($0) == nil }).sorted()
        guard unknown.isEmpty else {
            throw PrimerError.notesOutsideVocabulary(path: path, notes: unknown, vocabulary: groups.vocabulary.ixToNote)
        }
        var mapped = 0
        var mappedAt: [Bool] = []
        var events: [Sampler.PrimerEvent] = []
        events.reserveCapacity(hits.count)
        for (i, h) in hits.enumerated() {
            let (tick, exact) = index.nearestTick(h.delta)
            if !exact { mapped += 1 }
            mappedAt.append(!exact)
            var bin = 0
            if let v = groups.velocity {
                guard let b = v.bin(of: h.velocity) else {
                    throw PrimerError.velocityOutOfRange(path: path, hit: i, velocity: h.velocity, range: v.range)
                }
                bin = b
            }
            var tickInBar = 0, barTicks = 1920
            if let p = groups.position {
                // Positions at the model's resolution (the primer is read at settings.ppq).
                tickInBar = f.tickInBar[i] * p.ppq / settings.ppq
                barTicks = f.barTicks[i] * p.ppq / settings.ppq
                guard barTicks <= p.longestBar else {
                    throw PrimerError.meterTooLong(path: path, meter: meterName(barTicks: barTicks, ppq: p.ppq, main: f.meter),
                                                   barTicks: barTicks, longestBar: p.longestBar)
                }
            }
            events.append(Sampler.PrimerEvent(event: SampledEvent(note: index.note(h.note) ?? 0, tick: tick, velocity: bin),
                                              tickInBar: tickInBar, barTicks: barTicks))
        }
        var lastMeter: Meter?
        if let p = groups.position, let last = events.last {
            lastMeter = Meter(meterName(barTicks: last.barTicks, ppq: p.ppq, main: f.meter))
        }
        var primer = Primer(events: events, hits: hits, mappedTicks: mapped, channel: f.channelUsed == "9" ? 9 : nil,
                            meter: f.meter, lastMeter: lastMeter, warnings: f.warnings.map(\.description))
        primer.barStarts = zip(f.ticks, f.tickInBar).map { $0 - $1 }
        primer.mappedAt = mappedAt
        primer.bpm = (try? MIDIFile.read(path: path))?.file.tempoMap.firstBPM
        return primer
    }

    /// The meter of a bar `barTicks` long (at `ppq`) for an error: the primer's main meter when
    /// its bars are that long, otherwise (the primer changes meter) the N/4, N/8, … meter of
    /// that length.
    static func meterName(barTicks: Int, ppq: Int, main: String) -> String {
        if let m = Meter(main), m.barTicks(ppq: ppq) == barTicks { return main }
        for d in [4, 8, 16, 32, 64] where barTicks * d % (4 * ppq) == 0 { return "\(barTicks * d / (4 * ppq))/\(d)" }
        return main
    }
}
