// One file's hits as `drummer stats` measures them: notes, onsets at one resolution (after
// convert-midi's rescaling and optional quantizing), velocities and the bar each onset lies
// in. Made from a MIDI file (read exactly as convert-midi reads it: FileHits) or from one
// file's rows of a convert-midi dataset (ReferenceSet).
import Foundation
import MIDIParse

/// Where an onset lies in its bar, at the track's resolution.
public struct BarSlot: Equatable, Sendable {
    /// Index of the bar, counted from the file's first bar (MIDI) or from the first hit's
    /// bar (a dataset). Only differences between bars of one track are used.
    public var bar: Int
    /// Ticks since the bar line, 0 ..< barTicks.
    public var tickInBar: Int
    /// Length of the bar's meter in ticks (a 4/4 bar is 4 × ticksPerQuarter).
    public var barTicks: Int

    public init(bar: Int, tickInBar: Int, barTicks: Int) {
        self.bar = bar
        self.tickInBar = tickInBar
        self.barTicks = barTicks
    }
}

public struct HitTrack: Equatable, Sendable {
    /// The file (or, for a dataset, "DATASET: file" from its manifest).
    public var path: String
    /// Ticks per quarter note of `onsets` and `bars`.
    public var ticksPerQuarter: Int
    /// MIDI note of each hit.
    public var notes: [Int]
    /// Onset of each hit in ticks, non-decreasing; equal onsets are simultaneous hits. From a
    /// MIDI file: ticks from the file's start. From a dataset: from the first hit's bar line
    /// when bar positions are known, else from the first hit.
    public var onsets: [Int]
    /// NOTE ON velocity (1...127) of each hit; nil when the source has none.
    public var velocities: [Int]?
    /// Bar position of each hit; nil when the source has none.
    public var bars: [BarSlot]?

    public init(path: String, ticksPerQuarter: Int, notes: [Int], onsets: [Int], velocities: [Int]?, bars: [BarSlot]?) {
        precondition(notes.count == onsets.count && velocities.map { $0.count == notes.count } != false
                     && bars.map { $0.count == notes.count } != false, "one value per hit")
        self.path = path
        self.ticksPerQuarter = ticksPerQuarter
        self.notes = notes
        self.onsets = onsets
        self.velocities = velocities
        self.bars = bars
    }

    public var hits: Int { notes.count }

    /// Bars from the first hit's bar to the last hit's, both included (nil without bar
    /// positions, 0 without hits).
    public var barSpan: Int? {
        guard let bars else { return nil }
        guard let first = bars.first, let last = bars.last else { return 0 }
        return last.bar - first.bar + 1
    }
}

extension HitTrack {
    /// The hits of a parsed MIDI file as convert-midi reads them with `settings` (channel,
    /// rescaling to `settings.ppq`, `--quantize`, note map: `FileHits`), with each hit's
    /// velocity and its bar position on the file's time signatures (4/4 when it has none).
    /// The bar lines are those of `MIDIMeterMap` moved to the target resolution the way
    /// onsets are (a PPQ file: round(t × ppq / source PPQ); SMPTE: through the tempo map);
    /// positions are taken after quantizing.
    /// - Throws: `HitExtractionError.hitTooLate` (see `FileHits`).
    public init(file: MIDIFile, path: String, settings: HitExtractionSettings) throws {
        let extracted = try FileHits(file: file, path: path, settings: settings)
        // Bar numbers from FileHits' meters, already at the target resolution (its rescaling).
        let map = MIDIMeterMap(ticksPerQuarter: settings.ppq,
                               changes: extracted.meterRuns.map { (tick: $0.tick, numerator: $0.numerator, denominator: $0.denominator) })
        self.init(path: path, ticksPerQuarter: settings.ppq, notes: extracted.notes, onsets: extracted.ticks,
                  velocities: extracted.velocities,
                  bars: extracted.ticks.map { t in
                      let p = map.position(atTick: t)
                      return BarSlot(bar: p.bar, tickInBar: p.tickInBar, barTicks: p.length)
                  })
    }
}
