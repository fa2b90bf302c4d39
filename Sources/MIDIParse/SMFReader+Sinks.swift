// The two sinks of the reader: the full model (every event, as MIDIFile) and the
// compact one hit extraction reads (NOTE ONs, tempo changes and track ends only).

/// Builds the full model: every event of every track.
struct EventCollector: SMFSink {
    let buf: UnsafeBufferPointer<UInt8>
    var tracks: [MIDITrack] = []
    private var events: [MIDIEvent] = []
    private var offset = 0

    init(buffer: UnsafeBufferPointer<UInt8>) { buf = buffer }

    func bytes(_ range: Range<Int>) -> [UInt8] { Array(buf[range]) }

    mutating func beginTrack(offset: Int) {
        self.offset = offset
        events = []
    }

    mutating func channel(tick: Int, status: UInt8, d1: UInt8, d2: UInt8) {
        events.append(MIDIEvent(tick: tick, kind: .channel(Self.channelMessage(status, d1, d2))))
    }

    mutating func meta(tick: Int, type: UInt8, data: Range<Int>, check: SMFMetaCheck) {
        let p = data.lowerBound
        let meta: MIDIMetaEvent
        if check == .keptAsUnknown {
            meta = .unknown(type: type, bytes: bytes(data))
        } else {
            switch type {
            case 0x00: meta = .sequenceNumber(data.isEmpty ? nil : Int(buf[p]) << 8 | Int(buf[p + 1]))
            case 0x01...0x0F: meta = .text(type: type, bytes: bytes(data))
            case 0x20: meta = .channelPrefix(buf[p])
            case 0x21: meta = .port(buf[p])
            case 0x51: meta = .tempo(microsecondsPerQuarter: Int(buf[p]) << 16 | Int(buf[p + 1]) << 8 | Int(buf[p + 2]))
            case 0x54:
                meta = .smpteOffset(hours: buf[p], minutes: buf[p + 1], seconds: buf[p + 2],
                                    frames: buf[p + 3], hundredths: buf[p + 4])
            case 0x58:
                meta = .timeSignature(numerator: buf[p], denominatorPower: buf[p + 1],
                                      clocksPerClick: buf[p + 2], thirtySecondsPerQuarter: buf[p + 3])
            case 0x59: meta = .keySignature(sharpsOrFlats: Int8(bitPattern: buf[p]), minor: buf[p + 1] != 0)
            case 0x7F: meta = .sequencerSpecific(bytes(data))
            default: meta = .unknown(type: type, bytes: bytes(data))
            }
        }
        events.append(MIDIEvent(tick: tick, kind: .meta(meta)))
    }

    mutating func sysex(tick: Int, escape: Bool, data: Range<Int>) {
        events.append(MIDIEvent(tick: tick, kind: escape ? .sysexEscape(bytes(data)) : .sysex(bytes(data))))
    }

    mutating func endTrack(tick: Int) {
        events.append(MIDIEvent(tick: tick, kind: .meta(.endOfTrack)))
        tracks.append(MIDITrack(events: events, offset: offset))
        events = []
    }

    @inline(__always)
    static func channelMessage(_ status: UInt8, _ d1: UInt8, _ d2: UInt8) -> MIDIChannelMessage {
        let ch = status & 0x0F
        switch status & 0xF0 {
        case 0x80: return .noteOff(channel: ch, note: d1, velocity: d2)
        case 0x90: return d2 == 0 ? .noteOff(channel: ch, note: d1, velocity: 0) : .noteOn(channel: ch, note: d1, velocity: d2)
        case 0xA0: return .polyPressure(channel: ch, note: d1, pressure: d2)
        case 0xB0: return .controlChange(channel: ch, controller: d1, value: d2)
        case 0xC0: return .programChange(channel: ch, program: d1)
        case 0xD0: return .channelPressure(channel: ch, pressure: d1)
        default: return .pitchBend(channel: ch, value: UInt16(d2) << 7 | UInt16(d1))
        }
    }
}

/// Keeps only what hit extraction needs, in the order `MIDIFile.hits(channel:)`,
/// `MIDIFile.tempoMap` and `MIDIFile.timeSignatureChanges` see it: per track, the NOTE ONs
/// with velocity > 0, the tempo changes, the time signatures and the end tick. No event
/// payload is copied.
struct HitCollector: SMFSink {
    /// A NOTE ON with velocity > 0; `tick` relative to its track's start.
    struct Hit {
        var tick: Int
        var channel: UInt8
        var note: UInt8
        var velocity: UInt8
    }
    /// Every hit, track after track.
    var hits: [Hit] = []
    /// Index into `hits` of each track's first hit (one entry per track).
    var trackFirstHit: [Int] = []
    var trackEndTicks: [Int] = []
    var tempoTicks: [Int] = []
    var tempoValues: [Int] = []
    /// Index into the tempo arrays of each track's first tempo change.
    var trackFirstTempo: [Int] = []
    /// Time signatures (tick in the track, numerator, denominator), every track's in turn.
    var signatures: [(tick: Int, numerator: Int, denominator: Int)] = []
    /// Index into `signatures` of each track's first time signature.
    var trackFirstSignature: [Int] = []
    var hasChannel9Notes = false
    let buf: UnsafeBufferPointer<UInt8>

    init(buffer: UnsafeBufferPointer<UInt8>, capacity: Int) {
        buf = buffer
        hits.reserveCapacity(capacity)
    }

    mutating func beginTrack(offset: Int) {
        trackFirstHit.append(hits.count)
        trackFirstTempo.append(tempoTicks.count)
        trackFirstSignature.append(signatures.count)
    }

    @inline(__always)
    mutating func channel(tick: Int, status: UInt8, d1: UInt8, d2: UInt8) {
        guard status & 0xF0 == 0x90, d2 != 0 else { return }
        let ch = status & 0x0F
        if ch == 9 { hasChannel9Notes = true }
        hits.append(Hit(tick: tick, channel: ch, note: d1, velocity: d2))
    }

    mutating func meta(tick: Int, type: UInt8, data: Range<Int>, check: SMFMetaCheck) {
        guard check == .valid else { return }
        let p = data.lowerBound
        if type == 0x51 {
            tempoTicks.append(tick)
            tempoValues.append(Int(buf[p]) << 16 | Int(buf[p + 1]) << 8 | Int(buf[p + 2]))
        } else if type == 0x58, buf[p + 1] <= 7 {
            signatures.append((tick, Int(buf[p]), 1 << Int(buf[p + 1])))
        }
    }

    mutating func sysex(tick: Int, escape: Bool, data: Range<Int>) {}

    mutating func endTrack(tick: Int) { trackEndTicks.append(tick) }
}
