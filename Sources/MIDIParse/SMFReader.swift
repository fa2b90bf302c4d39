// The reader's internals: one pass over the bytes with bounds-checked unsafe access.
// Every count read from the file is checked against the bytes remaining before use,
// and every loop iteration consumes at least one byte, so no input can make the
// reader allocate without bound or loop forever.
//
// The reader decodes and checks; what it decodes goes to a sink (SMFSink): the full
// model (MIDIFile, `EventCollector`) or only what hit extraction needs (`HitCollector`).
// Both see the same defects, warnings and recoveries, so every reader of a file agrees.

/// What a meta event's length check found.
enum SMFMetaCheck {
    /// A standard meta event of the right length, or a non-standard type.
    case valid
    /// A standard type of the wrong length, kept (lenient) as an unknown meta event.
    case keptAsUnknown
}

/// Receives the decoded events of a file, track by track, in file order.
/// Ranges index the reader's buffer, valid for the duration of the parse.
protocol SMFSink {
    mutating func beginTrack(offset: Int)
    /// A channel voice message; `status` is 0x80...0xEF.
    mutating func channel(tick: Int, status: UInt8, d1: UInt8, d2: UInt8)
    /// A meta event other than end-of-track.
    mutating func meta(tick: Int, type: UInt8, data: Range<Int>, check: SMFMetaCheck)
    mutating func sysex(tick: Int, escape: Bool, data: Range<Int>)
    /// The track's end-of-track event, read or supplied by a recovery; always the track's last call.
    mutating func endTrack(tick: Int)
}

struct SMFReader<Sink: SMFSink> {
    let buf: UnsafeBufferPointer<UInt8>
    let path: String
    let mode: MIDIParseMode
    var sink: Sink
    private(set) var warnings: [MIDIWarning] = []

    init(buffer: UnsafeBufferPointer<UInt8>, path: String, mode: MIDIParseMode, sink: Sink) {
        self.buf = buffer
        self.path = path
        self.mode = mode
        self.sink = sink
    }

    // MARK: Defects

    func error(_ offset: Int, _ defect: MIDIDefect) -> MIDIFileError {
        MIDIFileError(path: path, offset: offset, defect: defect)
    }

    /// A recoverable defect: throws in strict mode, records a warning in lenient mode, and in
    /// safe mode records a warning when `safe` (its recovery needs no guessing), else throws.
    mutating func recover(_ offset: Int, _ defect: MIDIDefect, _ recovery: String, safe: Bool = false) throws {
        switch mode {
        case .strict: throw error(offset, defect)
        case .safe: if !safe { throw error(offset, defect) }
        case .lenient: break
        }
        warnings.append(MIDIWarning(path: path, offset: offset, defect: defect, recovery: recovery))
    }

    // MARK: Primitive reads (callers check bounds)

    @inline(__always) func u16be(_ p: Int) -> Int { Int(buf[p]) << 8 | Int(buf[p + 1]) }
    @inline(__always) func u32be(_ p: Int) -> Int {
        Int(buf[p]) << 24 | Int(buf[p + 1]) << 16 | Int(buf[p + 2]) << 8 | Int(buf[p + 3])
    }
    @inline(__always) func u32le(_ p: Int) -> Int {
        Int(buf[p + 3]) << 24 | Int(buf[p + 2]) << 16 | Int(buf[p + 1]) << 8 | Int(buf[p])
    }
    func tag(_ p: Int, _ s: StaticString) -> Bool {
        let t = s.utf8Start
        return buf[p] == t[0] && buf[p + 1] == t[1] && buf[p + 2] == t[2] && buf[p + 3] == t[3]
    }
    func bytes(_ range: Range<Int>) -> [UInt8] { Array(buf[range]) }

    /// Reads a variable-length quantity (at most 4 bytes, so at most 0x0FFFFFFF) at `p` before `end`.
    @inline(__always)
    func vlq(_ p: inout Int, end: Int, what: String) throws -> Int {
        let start = p
        var value = 0
        for _ in 0..<4 {
            guard p < end else { throw error(p, .truncated(expected: what)) }
            let b = buf[p]
            p += 1
            value = value << 7 | Int(b & 0x7F)
            if b & 0x80 == 0 { return value }
        }
        throw error(start, .vlqTooLong)
    }

    // MARK: File

    /// Reads the whole file into the sink; returns its format and division.
    mutating func readFile() throws -> (format: Int, division: MIDIDivision) {
        let n = buf.count
        guard n > 0 else { throw error(0, .emptyFile) }
        if n >= 4, tag(0, "RIFF") { return try readRIFF() }
        return try readSMF(start: 0, end: n)
    }

    /// RIFF RMID: "RIFF" size "RMID", then little-endian chunks, one of them "data" holding the SMF.
    mutating func readRIFF() throws -> (format: Int, division: MIDIDivision) {
        let n = buf.count
        guard n >= 12 else { throw error(n, .truncated(expected: "the RIFF size and form type")) }
        guard tag(8, "RMID") else { throw error(8, .riffNotRMID(found: bytes(8..<12))) }
        var end = n
        let declared = u32le(4)
        if declared > n - 8 {
            try recover(4, .chunkPastEnd(declared: declared, available: n - 8), "read the RIFF chunk up to the end of the file",
                        safe: true)
        } else {
            end = 8 + declared
        }
        var p = 12
        while end - p >= 8 {
            let size = u32le(p + 4)
            let body = p + 8
            if tag(p, "data") {
                var dataEnd = body + size
                if size > end - body {
                    try recover(p + 4, .chunkPastEnd(declared: size, available: end - body),
                                "read the data chunk up to the end of the file", safe: true)
                    dataEnd = end
                }
                return try readSMF(start: body, end: dataEnd)
            }
            guard size <= end - body else { break }
            p = body + size + (size & 1)  // RIFF chunks are padded to an even length
        }
        throw error(12, .riffWithoutData)
    }

    /// A Standard MIDI File occupying buf[start..<end] (offsets stay file offsets).
    mutating func readSMF(start: Int, end: Int) throws -> (format: Int, division: MIDIDivision) {
        let available = end - start
        guard available >= 4, tag(start, "MThd") else {
            let found = bytes(start..<min(end, start + 4))
            let prefix = Array("MThd".utf8.prefix(found.count))
            if available < 4, found == prefix {
                throw error(end, .truncated(expected: "the \"MThd\" header"))
            }
            throw error(start, .notMIDI(found: found))
        }
        guard available >= 8 else { throw error(end, .truncated(expected: "the MThd length")) }
        let headerLength = u32be(start + 4)
        guard headerLength >= 6 else { throw error(start + 4, .headerTooShort(length: headerLength)) }
        guard available >= 14 else { throw error(end, .truncated(expected: "the 6 bytes of header data")) }
        guard headerLength <= available - 8 else {
            throw error(start + 4, .chunkPastEnd(declared: headerLength, available: available - 8))
        }
        let format = u16be(start + 8)
        let declaredTracks = u16be(start + 10)
        let divisionWord = u16be(start + 12)
        guard format <= 2 else { throw error(start + 8, .unsupportedFormat(format)) }
        let division: MIDIDivision
        if divisionWord & 0x8000 != 0 {
            let fps = -Int(Int8(bitPattern: UInt8(divisionWord >> 8)))
            let tpf = divisionWord & 0xFF
            guard [24, 25, 29, 30].contains(fps), tpf > 0 else {
                throw error(start + 12, .badSMPTEDivision(framesPerSecond: fps, ticksPerFrame: tpf))
            }
            division = .smpte(framesPerSecond: fps, ticksPerFrame: tpf)
        } else {
            guard divisionWord > 0 else { throw error(start + 12, .zeroPPQ) }
            division = .ppq(divisionWord)
        }

        var trackCount = 0
        var p = start + 8 + headerLength
        while p < end {
            let remaining = end - p
            guard remaining >= 8, isChunkTag(p) else {
                try recover(p, .trailingGarbage(bytes: remaining), "ignored them", safe: true)
                break
            }
            var length = u32be(p + 4)
            if length > remaining - 8 {
                // Safe: an MTrk's events are then checked up to the end of the file (an event
                // cut short is still an error); an alien chunk is skipped either way, unless
                // skipping it to the end would swallow an MTrk chunk after it (its length is
                // then the defect, not the tracks found missing).
                let isTrack = tag(p, "MTrk")
                try recover(p + 4, .chunkPastEnd(declared: length, available: remaining - 8),
                            "read the chunk up to the end of the file",
                            safe: isTrack || !containsTrackTag(from: p + 8, to: end))
                length = remaining - 8
            }
            if tag(p, "MTrk") {
                try readTrack(chunk: p, start: p + 8, end: p + 8 + length)
                trackCount += 1
            }
            // Any other chunk type is alien: the specification says to skip it.
            p += 8 + length
        }
        if format == 0, trackCount != 1 {
            try recover(start + 10, .format0TrackCount(trackCount), "read the tracks as in format 1")
        } else if trackCount != declaredTracks {
            try recover(start + 10, .trackCountMismatch(declared: declaredTracks, found: trackCount),
                        "used the \(trackCount) tracks found", safe: trackCount > 0)
        }
        return (format, division)
    }

    /// Whether the bytes from..<to hold the tag "MTrk".
    func containsTrackTag(from: Int, to: Int) -> Bool {
        var q = from
        while q + 4 <= to {
            if buf[q] == 0x4D, tag(q, "MTrk") { return true }
            q += 1
        }
        return false
    }

    /// A chunk type is four printable ASCII characters.
    func isChunkTag(_ p: Int) -> Bool {
        for i in 0..<4 where !(0x20...0x7E).contains(buf[p + i]) { return false }
        return true
    }

    // MARK: Track

    /// Data bytes after each channel status nibble 8...E.
    @inline(__always) static func dataLength(_ status: UInt8) -> Int {
        let kind = status & 0xF0
        return kind == 0xC0 || kind == 0xD0 ? 1 : 2
    }

    /// MIDI 1.0 data-byte counts of system common and real-time messages (F1...FE),
    /// used in lenient mode to step over them.
    static func systemDataLength(_ status: UInt8) -> Int {
        switch status {
        case 0xF1, 0xF3: return 1
        case 0xF2: return 2
        default: return 0
        }
    }

    mutating func readTrack(chunk: Int, start: Int, end: Int) throws {
        sink.beginTrack(offset: chunk)
        var p = start
        var tick = 0
        var running: UInt8 = 0       // running status in effect, 0 when none
        var cancelled: UInt8 = 0     // the status a meta or sysex event cancelled
        var ended = false
        do {
            while p < end {
                tick += try vlq(&p, end: end, what: "a delta time")
                guard p < end else { throw error(p, .truncated(expected: "an event after the delta time")) }
                let b = buf[p]
                if b == 0xFF {
                    let metaStart = p
                    p += 1
                    guard p < end else { throw error(p, .truncated(expected: "a meta event type")) }
                    let type = buf[p]
                    p += 1
                    let length = try vlq(&p, end: end, what: "a meta event length")
                    guard length <= end - p else {
                        throw error(p, .truncated(expected: "\(length) bytes of meta event data"))
                    }
                    let check = try checkMeta(type: type, length: length, eventStart: metaStart, dataStart: p)
                    let data = p..<(p + length)
                    p += length
                    if running != 0 { cancelled = running }
                    running = 0
                    if let check {
                        sink.meta(tick: tick, type: type, data: data, check: check)
                    } else {
                        ended = true
                        sink.endTrack(tick: tick)
                        if p < end {
                            try recover(p, .dataAfterEndOfTrack(bytes: end - p), "ignored them", safe: true)
                        }
                        break
                    }
                } else if b == 0xF0 || b == 0xF7 {
                    p += 1
                    let length = try vlq(&p, end: end, what: "a sysex length")
                    guard length <= end - p else {
                        throw error(p, .truncated(expected: "\(length) bytes of sysex data"))
                    }
                    sink.sysex(tick: tick, escape: b == 0xF7, data: p..<(p + length))
                    p += length
                    if running != 0 { cancelled = running }
                    running = 0
                } else if b > 0xF0 {
                    try recover(p, .illegalStatus(b), "skipped it and its MIDI 1.0 data bytes")
                    p += 1
                    var skip = Self.systemDataLength(b)
                    while skip > 0, p < end, buf[p] < 0x80 {
                        p += 1
                        skip -= 1
                    }
                } else {
                    var status = b
                    if b >= 0x80 {
                        p += 1
                        running = b
                        cancelled = 0
                    } else if running != 0 {
                        status = running
                    } else if cancelled != 0 {
                        try recover(p, .runningStatusCancelled(found: b),
                                    "continued with the running status \(MIDIDefect.hex(cancelled))")
                        status = cancelled
                        running = cancelled
                        cancelled = 0
                    } else {
                        throw error(p, .noRunningStatus(found: b))
                    }
                    let count = Self.dataLength(status)
                    guard count <= end - p else {
                        throw error(end, .truncated(expected: "\(count) data bytes of a channel message"))
                    }
                    let d1 = buf[p]
                    guard d1 < 0x80 else { throw error(p, .dataByteExpected(found: d1)) }
                    var d2: UInt8 = 0
                    if count == 2 {
                        d2 = buf[p + 1]
                        guard d2 < 0x80 else { throw error(p + 1, .dataByteExpected(found: d2)) }
                    }
                    p += count
                    sink.channel(tick: tick, status: status, d1: d1, d2: d2)
                }
            }
        } catch let e as MIDIFileError where mode == .lenient && !ended {
            // An event that cannot be decoded: keep what came before it, drop the rest of the chunk.
            warnings.append(MIDIWarning(path: path, offset: e.offset, defect: e.defect,
                                        recovery: "dropped the rest of the track"))
            sink.endTrack(tick: tick)
            return
        }
        if !ended {
            try recover(end, .missingEndOfTrack, "ended the track at the end of its chunk", safe: true)
            sink.endTrack(tick: tick)
        }
    }

    /// Checks the length of meta event `type` (bounds already checked), and that a time
    /// signature gives a meter. Returns nil for the end-of-track event (also a lenient FF 2F of
    /// the wrong length, taken as one).
    mutating func checkMeta(type: UInt8, length: Int, eventStart: Int, dataStart: Int) throws -> SMFMetaCheck? {
        let expected: Int?
        switch type {
        case 0x00: expected = length == 0 ? 0 : 2
        case 0x20, 0x21: expected = 1
        case 0x2F: expected = 0
        case 0x51: expected = 3
        case 0x54: expected = 5
        case 0x58: expected = 4
        case 0x59: expected = 2
        default: expected = nil
        }
        if let expected, expected != length {
            if type == 0x2F {
                try recover(eventStart, .badMetaLength(type: type, length: length, expected: 0),
                            "took it as the end of the track")
                return nil
            }
            try recover(eventStart, .badMetaLength(type: type, length: length, expected: expected),
                        "kept it as an unknown meta event")
            return .keptAsUnknown
        }
        // A time signature of no meter is left out (the bars keep the meter before it), said
        // where it is: no event of the notes is lost, so the safe mode recovers it.
        if type == 0x58, buf[dataStart] == 0 || buf[dataStart + 1] > 7 {
            try recover(eventStart, .badTimeSignature(numerator: Int(buf[dataStart]), denominatorPower: Int(buf[dataStart + 1])),
                        "left it out: the meter before it goes on", safe: true)
            return .keptAsUnknown
        }
        return type == 0x2F ? nil : .valid
    }
}
