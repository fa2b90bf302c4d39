// Generated hits → a Standard MIDI File: format 0 at the model's PPQ, a tempo event, a time
// signature (4/4 unless told), notes on the General MIDI drum channel (index 9, status
// 0x99) at each hit's velocity (or one forced velocity).
//
// Onsets are exact: hit i starts at `startTick` plus the sum of the deltas up to i (ticks are
// deltas between consecutive onsets; simultaneous hits have delta 0). Each note
// lasts until the next later onset of any note, at most `maxDuration` ticks, at
// least 1 (MIDIWriter puts NOTE OFFs before NOTE ONs at a tick and never lets two
// notes of one key overlap), so reading the file back gives the same (note, delta)
// sequence. The one thing MIDI cannot express — the same key struck twice at the
// same tick — is written once: `deduplicated` says what a file will hold.

import DrummerCore
import Foundation
import MIDIParse
import FileOutput

public struct DrumMIDIOptions: Equatable, Sendable {
    /// Tempo in quarter notes per minute.
    public var bpm: Double
    /// NOTE ON velocity of every hit, 1...127 (nil: each hit's own).
    public var velocity: Int?
    /// Channel index 0...15 (9 is the General MIDI drum channel, "channel 10").
    public var channel: Int
    /// Ticks per quarter note of the file; hits' deltas are in these ticks.
    public var ppq: Int
    /// Longest note in ticks (a sixteenth at 480 PPQ).
    public var maxDuration: Int
    /// The time signature written at tick 0.
    public var meter: Meter
    /// Onset of the first hit's delta origin (the first hit is at startTick + its delta): a
    /// generator that started mid-bar keeps its bars aligned with the file's.
    public var startTick: Int
    /// Where the file ends (nil: at its last note's end): a note still sounding there stops at
    /// it, and the track's end is there, so a file of N bars is N bars long in a sequencer.
    /// Every onset lies before it.
    public var endTick: Int?
    /// Tempo changes after tick 0 (ticks of the file; `bpm` is the tempo from tick 0): a
    /// humanized beat keeps its input's tempo map.
    public var laterTempos: [MIDITempoChange] = []
    /// Time signatures after tick 0 (ticks of the file; `meter` is the one at tick 0): a
    /// humanized beat keeps its input's bar lines (a pickup bar, a bar of 2/4).
    public var laterMeters: [MIDITimeSignature] = []

    public init(bpm: Double = 120, velocity: Int? = nil, channel: Int = 9, ppq: Int = 480, maxDuration: Int = 120,
                meter: Meter = .common, startTick: Int = 0, endTick: Int? = nil) {
        self.bpm = bpm
        self.velocity = velocity
        self.channel = channel
        self.ppq = ppq
        self.maxDuration = maxDuration
        self.meter = meter
        self.startTick = startTick
        self.endTick = endTick
    }

    /// Microseconds per quarter note for `bpm`.
    public var microsecondsPerQuarter: Int { Int((60_000_000 / bpm).rounded()) }

    /// How `drummer sample` writes a model's files: at the model's PPQ, each note a sixteenth
    /// long, in bars of `meter` (4/4 unless told: humanize keeps its input's).
    public init(model groups: ModelGroups, meter: Meter = .common, bpm: Double = 120, startTick: Int = 0) {
        let ppq = groups.ticksPerQuarter
        self.init(bpm: bpm, ppq: ppq, maxDuration: max(1, ppq / 4), meter: meter, startTick: startTick)
    }
}

public struct DrumMIDIError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public enum DrumMIDI {
    /// The last tick a format-0 file's time line reaches (a delta is at most 4 bytes of 7 bits).
    public static let longestTimeLine = 0x0FFF_FFFF

    /// Removes a hit when the same note already sounds at the same onset (it has
    /// delta 0, so no other onset moves). Everything else is kept in order.
    public static func deduplicated(_ hits: [DrumHit]) -> [DrumHit] {
        var out: [DrumHit] = []
        out.reserveCapacity(hits.count)
        var notesAtOnset = Set<Int>()
        for h in hits {
            if h.delta != 0 { notesAtOnset.removeAll(keepingCapacity: true) }
            if h.delta == 0, notesAtOnset.contains(h.note), !out.isEmpty { continue }
            notesAtOnset.insert(h.note)
            out.append(h)
        }
        return out
    }

    /// The notes to write for `hits` (after `deduplicated`).
    public static func notes(_ hits: [DrumHit], options: DrumMIDIOptions = DrumMIDIOptions()) throws -> [MIDINote] {
        try validate(options)
        let kept = deduplicated(hits)
        var onsets: [Int] = []
        onsets.reserveCapacity(kept.count)
        var t = options.startTick
        for (i, h) in kept.enumerated() {
            guard h.delta >= 0 else { throw DrumMIDIError("hit \(i) has a negative delta \(h.delta)") }
            guard (0...127).contains(h.note) else { throw DrumMIDIError("hit \(i) has note \(h.note), outside 0...127") }
            guard (1...127).contains(h.velocity) else { throw DrumMIDIError("hit \(i) has velocity \(h.velocity), outside 1...127") }
            let (sum, overflow) = t.addingReportingOverflow(h.delta)
            guard !overflow, sum <= longestTimeLine else { throw DrumMIDIError("hit \(i) lies beyond the longest MIDI time line") }
            t = sum
            if let end = options.endTick, t >= end { throw DrumMIDIError("hit \(i) at tick \(t) lies at or past the file's end, tick \(end)") }
            onsets.append(t)
        }
        var out: [MIDINote] = []
        out.reserveCapacity(kept.count)
        var nextLater = Int.max  // the next onset strictly after the current one
        for i in stride(from: kept.count - 1, through: 0, by: -1) {
            if i + 1 < kept.count, onsets[i + 1] > onsets[i] { nextLater = onsets[i + 1] }
            let gap = min(nextLater == Int.max ? options.maxDuration : nextLater - onsets[i], (options.endTick ?? Int.max) - onsets[i])
            out.append(MIDINote(tick: onsets[i], note: UInt8(kept[i].note), velocity: UInt8(options.velocity ?? kept[i].velocity),
                                channel: UInt8(options.channel), duration: max(1, min(options.maxDuration, gap))))
        }
        out.reverse()
        return out
    }

    /// The bytes of a format-0 file holding `hits`.
    public static func encode(_ hits: [DrumHit], options: DrumMIDIOptions = DrumMIDIOptions()) throws -> [UInt8] {
        let notes = try notes(hits, options: options)
        do {
            return try MIDIWriter.format0(
                ppq: options.ppq,
                tempos: [MIDITempoChange(tick: 0, microsecondsPerQuarter: options.microsecondsPerQuarter)]
                    + options.laterTempos.filter { $0.tick > 0 && (1...16_777_215).contains($0.microsecondsPerQuarter) },
                timeSignatures: [MIDITimeSignature(numerator: options.meter.numerator, denominator: options.meter.denominator)]
                    + options.laterMeters.filter { $0.tick > 0 },
                notes: notes, endTick: options.endTick)
        } catch let e as MIDIWriteError {
            throw DrumMIDIError(e.description)
        }
    }

    /// Writes `hits` to `path` by the output rules of `AtomicOutput` (with `.userFile`:
    /// `-` is standard output, a device or FIFO is written through, a regular file is
    /// replaced through a temporary file renamed into place).
    public static func write(_ hits: [DrumHit], to path: String, options: DrumMIDIOptions = DrumMIDIOptions(),
                             output: OutputOptions = .userFile) throws {
        try AtomicOutput.write(Data(encode(hits, options: options)), to: path, options: output)
    }

    /// Whether a tempo event can hold `bpm`: 1...16777215 µs per quarter note.
    public static func canWrite(bpm: Double) -> Bool {
        bpm.isFinite && bpm >= 60_000_000 / 16_777_215 && bpm <= 60_000_000
    }

    static func validate(_ o: DrumMIDIOptions) throws {
        guard canWrite(bpm: o.bpm) else {
            throw DrumMIDIError("tempo \(o.bpm) BPM cannot be written: it must be in 3.58...60000000")
        }
        if let v = o.velocity, !(1...127).contains(v) { throw DrumMIDIError("velocity \(v) is outside 1...127") }
        guard o.startTick >= 0, o.startTick <= longestTimeLine else { throw DrumMIDIError("start tick \(o.startTick) is outside 0...268435455") }
        guard (0...15).contains(o.channel) else { throw DrumMIDIError("channel index \(o.channel) is outside 0...15") }
        guard (1...0x7FFF).contains(o.ppq) else { throw DrumMIDIError("PPQ \(o.ppq) is outside 1...32767") }
        guard o.maxDuration >= 1 else { throw DrumMIDIError("note length \(o.maxDuration) is below 1 tick") }
    }
}

extension DrumMIDI {
    /// The (note, delta) sequence of a file's NOTE ONs on `channel` (every channel
    /// when nil), in file order, at the file's own resolution: what a sampler file holds.
    public static func hits(in file: MIDIFile, channel: Int? = nil) -> [DrumHit] {
        var last = 0
        return file.hits(channel: channel).map { h in
            defer { last = h.tick }
            return DrumHit(note: Int(h.note), delta: h.tick - last, velocity: Int(h.velocity))
        }
    }
}
