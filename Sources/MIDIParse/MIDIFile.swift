// Standard MIDI File model: what the reader produces and the writer consumes.
//
// Reference: "Standard MIDI Files 1.0" (MIDI Manufacturers Association, RP-001),
// and the RIFF-based RMID wrapper (Microsoft "RIFF MIDI", RP-029).

/// Time division of a file (the header's `division` word).
public enum MIDIDivision: Equatable, Hashable, Sendable {
    /// Ticks per quarter note (bit 15 clear).
    case ppq(Int)
    /// SMPTE time: frames per second (24, 25, 29 for 30 drop-frame, 30) and ticks per frame
    /// (bit 15 set; the high byte is the negative frame rate).
    case smpte(framesPerSecond: Int, ticksPerFrame: Int)

    /// Ticks per second for SMPTE divisions (29 means 30000/1001 frames per second).
    public var smpteTicksPerSecond: Double? {
        guard case .smpte(let fps, let tpf) = self else { return nil }
        let rate = fps == 29 ? 30000.0 / 1001.0 : Double(fps)
        return rate * Double(tpf)
    }
}

/// How the reader treats defects: three policies, from refusing everything to recovering
/// everything it can. Every recovered defect is reported as a `MIDIWarning`.
public enum MIDIParseMode: String, Sendable, CaseIterable {
    /// Any departure from the specification is an error.
    case strict
    /// The default of `convert-midi`, `eval` and the primer: recovers only the defects whose
    /// recovery needs no guessing, because no event is lost or invented (as midly does by
    /// default):
    /// - bytes after the last chunk, or after a track's end-of-track event (ignored);
    /// - a missing end-of-track event when the track's events end cleanly at the end of its chunk;
    /// - a chunk length (MTrk, unknown chunk, RIFF or its data chunk) that runs past the end of the
    ///   file, when the events up to the end of the file decode cleanly (the last event whole);
    /// - a header track count that differs from the MTrk chunks found, when at least one is found;
    /// - a time signature of no meter (numerator 0, denominator past 2^7): left out.
    ///
    /// Everything else (a track count other than 1 in format 0, illegal or cancelled status bytes,
    /// a meta event of the wrong length, an event cut short) is refused as in `.strict`.
    case safe
    /// Recovers what can be recovered, also by guessing (dropping the rest of a track at an
    /// undecodable event, reading format 0 with several tracks as format 1, skipping illegal
    /// status bytes, continuing a cancelled running status).
    case lenient
}

/// One channel voice message, decoded. `channel` is the index 0...15 (MIDI channel 1...16).
public enum MIDIChannelMessage: Equatable, Hashable, Sendable {
    case noteOff(channel: UInt8, note: UInt8, velocity: UInt8)
    /// Velocity is always > 0: a NOTE ON with velocity 0 is read as `noteOff` (SMF/MIDI 1.0).
    case noteOn(channel: UInt8, note: UInt8, velocity: UInt8)
    case polyPressure(channel: UInt8, note: UInt8, pressure: UInt8)
    case controlChange(channel: UInt8, controller: UInt8, value: UInt8)
    case programChange(channel: UInt8, program: UInt8)
    case channelPressure(channel: UInt8, pressure: UInt8)
    /// 14-bit value 0...16383, 8192 is the centre.
    case pitchBend(channel: UInt8, value: UInt16)

    public var channel: UInt8 {
        switch self {
        case .noteOff(let c, _, _), .noteOn(let c, _, _), .polyPressure(let c, _, _),
             .controlChange(let c, _, _), .programChange(let c, _), .channelPressure(let c, _),
             .pitchBend(let c, _):
            return c
        }
    }
}

/// Meta events (status FF), with the standard ones decoded.
public enum MIDIMetaEvent: Equatable, Hashable, Sendable {
    /// FF 00 02 ssss (or FF 00 00: number omitted).
    case sequenceNumber(Int?)
    /// FF 01...0F: text, copyright, track name, instrument, lyric, marker, cue point, ...
    case text(type: UInt8, bytes: [UInt8])
    /// FF 20 01 cc
    case channelPrefix(UInt8)
    /// FF 21 01 pp
    case port(UInt8)
    /// FF 2F 00
    case endOfTrack
    /// FF 51 03 tttttt: microseconds per quarter note.
    case tempo(microsecondsPerQuarter: Int)
    /// FF 54 05 hr mn se fr ff
    case smpteOffset(hours: UInt8, minutes: UInt8, seconds: UInt8, frames: UInt8, hundredths: UInt8)
    /// FF 58 04 nn dd cc bb: numerator, denominator as a power of two, MIDI clocks per
    /// metronome click, notated 32nd notes per MIDI quarter note.
    case timeSignature(numerator: UInt8, denominatorPower: UInt8, clocksPerClick: UInt8, thirtySecondsPerQuarter: UInt8)
    /// FF 59 02 sf mi: sharps (> 0) or flats (< 0), minor when true.
    case keySignature(sharpsOrFlats: Int8, minor: Bool)
    /// FF 7F len data
    case sequencerSpecific([UInt8])
    /// Any other meta type, kept verbatim.
    case unknown(type: UInt8, bytes: [UInt8])
}

/// The payload of one track event.
public enum MIDIEventKind: Equatable, Hashable, Sendable {
    case channel(MIDIChannelMessage)
    /// F0 <len> <bytes>: the bytes after F0 (normally ending with F7).
    case sysex([UInt8])
    /// F7 <len> <bytes>: an escape (continuation packet or arbitrary bytes).
    case sysexEscape([UInt8])
    case meta(MIDIMetaEvent)
}

/// One event with its absolute time in ticks from the start of its track.
public struct MIDIEvent: Equatable, Hashable, Sendable {
    public var tick: Int
    public var kind: MIDIEventKind
    public init(tick: Int, kind: MIDIEventKind) {
        self.tick = tick
        self.kind = kind
    }
}

/// One MTrk chunk: its events in file order (ticks are absolute within the track).
public struct MIDITrack: Equatable, Sendable {
    public var events: [MIDIEvent]
    /// Byte offset of the chunk's "MTrk" tag in the file.
    public var offset: Int
    public init(events: [MIDIEvent], offset: Int = 0) {
        self.events = events
        self.offset = offset
    }

    /// Tick of the track's last event (its end-of-track when present).
    public var endTick: Int { events.last?.tick ?? 0 }
}

/// A parsed Standard MIDI File.
public struct MIDIFile: Equatable, Sendable {
    /// 0 (one track), 1 (simultaneous tracks) or 2 (independent, sequential patterns).
    public var format: Int
    public var division: MIDIDivision
    public var tracks: [MIDITrack]

    public init(format: Int, division: MIDIDivision, tracks: [MIDITrack]) {
        self.format = format
        self.division = division
        self.tracks = tracks
    }
}

/// A NOTE ON with velocity > 0, at its absolute merged tick.
public struct MIDIHit: Equatable, Hashable, Sendable {
    public var tick: Int
    public var channel: UInt8
    public var note: UInt8
    public var velocity: UInt8
    public init(tick: Int, channel: UInt8, note: UInt8, velocity: UInt8) {
        self.tick = tick
        self.channel = channel
        self.note = note
        self.velocity = velocity
    }
}
