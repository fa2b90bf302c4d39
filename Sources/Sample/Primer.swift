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

import DrummerCore
import MIDIParse

public struct Primer: Equatable, Sendable {
    /// The primer in the model's indices, ready for `Sampler.generate(primer:)`.
    public let events: [SampledEvent]
    /// The hits as read (480 PPQ deltas), before mapping ticks.
    public let hits: [DrumHit]
    /// Hits whose delta was not a vocabulary tick value and was mapped to the nearest.
    public let mappedTicks: Int
    /// Channel index read (nil: every channel).
    public let channel: Int?
    /// Reader warnings (defects the parse policy recovered).
    public let warnings: [String]
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
    /// Reads `path` with `settings` (convert-midi's defaults unless given) and maps it
    /// to `vocabulary`. MIDI errors are MIDIParse's typed errors (file, byte offset, defect).
    public static func load(
        path: String, vocabulary: Vocabulary, settings: HitExtractionSettings = HitExtractionSettings()
    ) throws -> Primer {
        let fileHits = try FileHits.read(path: path, settings: settings)
        let hits = zip(fileHits.notes, fileHits.deltas).map { DrumHit(note: $0, delta: $1) }
        return try make(hits: hits, channel: fileHits.channelUsed == "9" ? 9 : nil, path: path,
                        vocabulary: vocabulary, warnings: fileHits.warnings.map(\.description))
    }

    static func make(hits: [DrumHit], channel: Int?, path: String, vocabulary: Vocabulary,
                     warnings: [String]) throws -> Primer {
        guard !hits.isEmpty else { throw PrimerError.noHits(path: path) }
        let index = VocabularyIndex(vocabulary)
        let unknown = Set(hits.map(\.note).filter { index.note($0) == nil }).sorted()
        guard unknown.isEmpty else {
            throw PrimerError.notesOutsideVocabulary(path: path, notes: unknown, vocabulary: vocabulary.ixToNote)
        }
        var mapped = 0
        let events = hits.map { h -> SampledEvent in
            let (tick, exact) = index.nearestTick(h.delta)
            if !exact { mapped += 1 }
            return SampledEvent(note: index.note(h.note) ?? 0, tick: tick)
        }
        return Primer(events: events, hits: hits, mappedTicks: mapped, channel: channel, warnings: warnings)
    }
}
