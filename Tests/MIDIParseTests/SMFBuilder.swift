// Builds small Standard MIDI Files byte by byte for the unit tests (an independent
// encoder: it does not use MIDIWriter).

enum SMF {
    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { be32(v).reversed() }

    static func header(format: Int = 0, tracks: Int = 1, division: Int = 96) -> [UInt8] {
        Array("MThd".utf8) + be32(6) + [0, UInt8(format), UInt8(tracks >> 8), UInt8(tracks & 0xFF),
                                        UInt8(division >> 8 & 0xFF), UInt8(division & 0xFF)]
    }

    static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] { Array(type.utf8) + be32(body.count) + body }

    static func track(_ body: [UInt8], endOfTrack: Bool = true) -> [UInt8] {
        chunk("MTrk", body + (endOfTrack ? [0x00, 0xFF, 0x2F, 0x00] : []))
    }

    /// A whole format-0 file with one track holding `body` (+ end of track).
    static func file(_ body: [UInt8], division: Int = 96) -> [UInt8] { header(division: division) + track(body) }
}
