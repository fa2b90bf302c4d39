// Standard MIDI File writer: format 0, one track, PPQ division.
//
// Layout of the track, per tick: tempo and time-signature meta events first, then every
// NOTE OFF due at that tick, then the NOTE ONs (in the order given). So a note that ends
// where the next one starts never cuts it off, and no onset ever moves.
//
// A note's NOTE OFF goes at `tick + duration`, or earlier at the next onset of the same
// key (same channel and note) when that comes first, so notes on one key never overlap.
// A caller who wants each note to stop at the next onset of any key (the sampler's
// `min(onset + length, next onset)`) passes that as the duration. Two notes on the same
// key at the same tick are written once (the first one given).
import Foundation

/// A note to write: absolute onset tick, key, velocity 1...127, channel index 0...15, duration ≥ 1 tick.
public struct MIDINote: Equatable, Hashable, Sendable {
    public var tick: Int
    public var note: UInt8
    public var velocity: UInt8
    public var channel: UInt8
    public var duration: Int
    public init(tick: Int, note: UInt8, velocity: UInt8, channel: UInt8, duration: Int) {
        self.tick = tick
        self.note = note
        self.velocity = velocity
        self.channel = channel
        self.duration = duration
    }
}

/// A time signature to write, e.g. 4/4 is numerator 4, denominator 4.
public struct MIDITimeSignature: Equatable, Hashable, Sendable {
    public var tick: Int
    public var numerator: Int
    /// A power of two, 1...128.
    public var denominator: Int
    public var clocksPerClick: Int
    public var thirtySecondsPerQuarter: Int
    public init(tick: Int = 0, numerator: Int, denominator: Int, clocksPerClick: Int = 24, thirtySecondsPerQuarter: Int = 8) {
        self.tick = tick
        self.numerator = numerator
        self.denominator = denominator
        self.clocksPerClick = clocksPerClick
        self.thirtySecondsPerQuarter = thirtySecondsPerQuarter
    }
}

public struct MIDIWriteError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public enum MIDIWriter {
    /// Velocity written on NOTE OFF (the specification's default when velocity is not sensed).
    public static let noteOffVelocity: UInt8 = 64

    /// Encodes a format-0 file.
    /// - Throws: `MIDIWriteError` for a value outside its MIDI range.
    /// `endTick`: where the track ends (its end-of-track event), at or after every event; nil:
    /// at the last event.
    public static func format0(ppq: Int, tempos: [MIDITempoChange] = [], timeSignatures: [MIDITimeSignature] = [],
                               notes: [MIDINote], endTick: Int? = nil) throws -> [UInt8] {
        guard (1...0x7FFF).contains(ppq) else { throw MIDIWriteError("PPQ \(ppq) is outside 1...32767") }
        // (tick, rank, sequence, bytes): rank 0 meta, 1 note off, 2 note on. Events are kept
        // inline (at most 7 bytes each) so that writing allocates nothing per note.
        var items: [Event] = []
        items.reserveCapacity(tempos.count + timeSignatures.count + 2 * notes.count)
        var seq = 0
        func add(_ tick: Int, _ rank: UInt8, _ bytes: UInt8...) {
            items.append(Event(tick: tick, rank: rank, seq: seq, bytes: bytes))
            seq += 1
        }
        func add3(_ tick: Int, _ rank: UInt8, _ b0: UInt8, _ b1: UInt8, _ b2: UInt8) {
            items.append(Event(tick: tick, rank: rank, seq: seq, b0: b0, b1: b1, b2: b2))
            seq += 1
        }
        for t in tempos {
            guard t.tick >= 0 else { throw MIDIWriteError("tempo at negative tick \(t.tick)") }
            guard (1...0xFF_FFFF).contains(t.microsecondsPerQuarter) else {
                throw MIDIWriteError("tempo \(t.microsecondsPerQuarter) µs per quarter is outside 1...16777215")
            }
            let v = t.microsecondsPerQuarter
            add(t.tick, 0, 0xFF, 0x51, 0x03, UInt8(v >> 16), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF))
        }
        for s in timeSignatures {
            guard s.tick >= 0 else { throw MIDIWriteError("time signature at negative tick \(s.tick)") }
            guard (1...255).contains(s.numerator) else { throw MIDIWriteError("time signature numerator \(s.numerator) is outside 1...255") }
            guard (1...128).contains(s.denominator), s.denominator & (s.denominator - 1) == 0 else {
                throw MIDIWriteError("time signature denominator \(s.denominator) is not a power of two in 1...128")
            }
            guard (0...255).contains(s.clocksPerClick), (0...255).contains(s.thirtySecondsPerQuarter) else {
                throw MIDIWriteError("time signature clocks per click or 32nds per quarter outside 0...255")
            }
            add(s.tick, 0, 0xFF, 0x58, 0x04, UInt8(s.numerator), UInt8(s.denominator.trailingZeroBitCount),
                UInt8(s.clocksPerClick), UInt8(s.thirtySecondsPerQuarter))
        }
        for n in notes {
            guard n.tick >= 0 else { throw MIDIWriteError("note at negative tick \(n.tick)") }
            guard n.note < 128 else { throw MIDIWriteError("note number \(n.note) is outside 0...127") }
            guard (1...127).contains(n.velocity) else { throw MIDIWriteError("velocity \(n.velocity) is outside 1...127") }
            guard n.channel < 16 else { throw MIDIWriteError("channel index \(n.channel) is outside 0...15") }
            guard n.duration >= 1 else { throw MIDIWriteError("note duration \(n.duration) is below 1 tick") }
        }
        // Per key, onsets in time order (stable), duplicates at one tick dropped, offs clipped.
        let order = notes.indices.sorted {
            let a = notes[$0], b = notes[$1]
            if a.channel != b.channel { return a.channel < b.channel }
            if a.note != b.note { return a.note < b.note }
            return a.tick != b.tick ? a.tick < b.tick : $0 < $1
        }
        var keep = [Bool](repeating: false, count: notes.count)
        var offTick = [Int](repeating: 0, count: notes.count)
        var k = 0
        while k < order.count {
            let i = order[k]
            var next = k + 1
            while next < order.count, notes[order[next]].channel == notes[i].channel,
                  notes[order[next]].note == notes[i].note, notes[order[next]].tick == notes[i].tick {
                next += 1  // same key, same tick: written once
            }
            keep[i] = true
            var off = notes[i].tick + notes[i].duration
            if next < order.count, notes[order[next]].channel == notes[i].channel, notes[order[next]].note == notes[i].note {
                off = min(off, notes[order[next]].tick)
            }
            offTick[i] = off
            k = next
        }
        for (i, n) in notes.enumerated() where keep[i] {
            add3(n.tick, 2, 0x90 | n.channel, n.note, n.velocity)
            add3(offTick[i], 1, 0x80 | n.channel, n.note, noteOffVelocity)
        }
        items.sort { $0.tick != $1.tick ? $0.tick < $1.tick : ($0.rank != $1.rank ? $0.rank < $1.rank : $0.seq < $1.seq) }

        var track: [UInt8] = []
        track.reserveCapacity(items.count * 8 + 4)
        var last = 0
        for item in items {
            try appendVLQ(item.tick - last, to: &track)
            item.append(to: &track)
            last = item.tick
        }
        if let endTick {
            guard endTick >= last else { throw MIDIWriteError("end of track at tick \(endTick), before an event at tick \(last)") }
            try appendVLQ(endTick - last, to: &track)
        } else {
            track.append(0x00)
        }
        track.append(contentsOf: [0xFF, 0x2F, 0x00] as [UInt8])
        guard track.count <= 0xFFFF_FFFF else { throw MIDIWriteError("track of \(track.count) bytes exceeds the 32-bit chunk length") }

        var out: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, UInt8(ppq >> 8), UInt8(ppq & 0xFF)]
        out += Array("MTrk".utf8)
        let len = track.count
        out += [UInt8(len >> 24), UInt8((len >> 16) & 0xFF), UInt8((len >> 8) & 0xFF), UInt8(len & 0xFF)]
        out += track
        return out
    }

    /// Appends a variable-length quantity (0...0x0FFFFFFF).
    static func appendVLQ(_ value: Int, to out: inout [UInt8]) throws {
        guard (0...0x0FFF_FFFF).contains(value) else {
            throw MIDIWriteError("delta time \(value) is outside the SMF range 0...268435455")
        }
        var shift = 21
        while shift > 0, value >> shift == 0 { shift -= 7 }
        while shift > 0 {
            out.append(UInt8((value >> shift) & 0x7F) | 0x80)
            shift -= 7
        }
        out.append(UInt8(value & 0x7F))
    }

    /// One track event with its sort keys; its bytes (1...7) are stored inline.
    struct Event {
        var tick: Int
        var rank: UInt8
        var seq: Int
        var count: UInt8
        var b: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)

        init(tick: Int, rank: UInt8, seq: Int, b0: UInt8, b1: UInt8, b2: UInt8) {
            self.tick = tick
            self.rank = rank
            self.seq = seq
            count = 3
            b = (b0, b1, b2, 0, 0, 0, 0)
        }

        init(tick: Int, rank: UInt8, seq: Int, bytes: [UInt8]) {
            precondition(!bytes.isEmpty && bytes.count <= 7, "MIDIWriter.Event holds 1...7 bytes")
            self.tick = tick
            self.rank = rank
            self.seq = seq
            count = UInt8(bytes.count)
            b = (0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &b) { raw in
                for (i, x) in bytes.enumerated() { raw[i] = x }
            }
        }

        func append(to out: inout [UInt8]) {
            withUnsafeBytes(of: b) { raw in out.append(contentsOf: raw.prefix(Int(count))) }
        }
    }
}
