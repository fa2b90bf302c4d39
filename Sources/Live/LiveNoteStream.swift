// Hits as they are drawn → the timed NOTE ONs and NOTE OFFs a file of them holds, one hit at a
// time (DrumMIDI's rule, streamed): a note already struck at an onset is not struck twice there;
// each note lasts until the next later onset of any note, at most `maxDuration` ticks, at
// least 1; NOTE OFFs come before the NOTE ONs of their tick. A group's NOTE OFFs are known once
// the next later onset is, so they are handed out then, never after a later event: what comes
// out is in tick order, as the output ring needs it.
import CJackLive

/// A timed MIDI event for the output ring: ticks from the first bar line.
public struct LiveEvent: Equatable, Sendable {
    public var tick: Int
    /// Status, note, velocity; status 0 marks the end of the performance.
    public var status: UInt8, data1: UInt8, data2: UInt8

    public init(tick: Int, status: UInt8, data1: UInt8, data2: UInt8) {
        self.tick = tick
        self.status = status
        self.data1 = data1
        self.data2 = data2
    }

    public static func end(at tick: Int) -> LiveEvent { LiveEvent(tick: tick, status: 0, data1: 0, data2: 0) }
    public var isEnd: Bool { status == 0 }
    public var isNoteOn: Bool { status & 0xF0 == 0x90 && data2 > 0 }

    /// The ring's C record.
    var record: drummer_live_event {
        var e = drummer_live_event()
        e.tick = Int64(tick)
        e.kind = UInt8(isEnd ? DRUMMER_LIVE_END : DRUMMER_LIVE_MIDI)
        e.size = isEnd ? 0 : 3
        e.bytes = (status, data1, data2)
        return e
    }
}

public struct LiveNoteStream {
    public let maxDuration: Int
    public let channel: UInt8
    /// The onset of the notes whose NOTE OFFs are still to come (-1: none), and those notes.
    private var groupOnset = -1
    private var group: [UInt8] = []

    public init(maxDuration: Int, channel: UInt8 = 9) {
        self.maxDuration = max(1, maxDuration)
        self.channel = channel & 0x0F
        group.reserveCapacity(128)
    }

    /// The events that a hit at `onset` (non-decreasing from call to call) makes due.
    public mutating func hit(onset: Int, note: Int, velocity: Int, _ out: (LiveEvent) throws -> Void) rethrows {
        let n = UInt8(clamping: note) & 0x7F, v = UInt8(clamping: max(1, min(127, velocity)))
        if onset != groupOnset {
            try closeGroup(before: onset, out)
            groupOnset = onset
        } else if group.contains(n) {
            return
        }
        group.append(n)
        try out(LiveEvent(tick: onset, status: 0x90 | channel, data1: n, data2: v))
    }

    /// The last notes' NOTE OFFs ( `maxDuration` after their onset); the tick of the last one
    /// (nil when there was no hit).
    @discardableResult
    public mutating func finish(_ out: (LiveEvent) throws -> Void) rethrows -> Int? {
        guard groupOnset >= 0 else { return nil }
        let end = groupOnset + maxDuration
        try closeGroup(before: Int.max, out)
        groupOnset = -1
        return end
    }

    private mutating func closeGroup(before next: Int, _ out: (LiveEvent) throws -> Void) rethrows {
        guard groupOnset >= 0 else { return }
        let gap = next == Int.max ? maxDuration : next - groupOnset
        let off = groupOnset + max(1, min(maxDuration, gap))
        for n in group { try out(LiveEvent(tick: off, status: 0x80 | channel, data1: n, data2: 0)) }
        group.removeAll(keepingCapacity: true)
    }
}
