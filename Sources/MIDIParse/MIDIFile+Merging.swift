// Merging a file's tracks into one time line.
//
// Order (stable and documented): events are ordered by absolute tick, then by track
// index, then by their order within the track. Formats 0 and 1 start every track at
// tick 0 (simultaneous tracks). Format 2 tracks are independent patterns played one
// after the other (SMF 1.0: "a series of type-0 patterns"), so track k starts at the
// sum of the end ticks (end-of-track times) of tracks 0..<k.

/// An event of the merged time line, with the track it came from.
public struct MIDIMergedEvent: Equatable, Hashable, Sendable {
    public var tick: Int
    public var track: Int
    public var kind: MIDIEventKind
    public init(tick: Int, track: Int, kind: MIDIEventKind) {
        self.tick = tick
        self.track = track
        self.kind = kind
    }
}

extension MIDIFile {
    /// Tick at which each track starts on the merged time line (all 0 except in format 2).
    public var trackStartTicks: [Int] {
        guard format == 2 else { return [Int](repeating: 0, count: tracks.count) }
        var starts: [Int] = []
        starts.reserveCapacity(tracks.count)
        var t = 0
        for track in tracks {
            starts.append(t)
            t += track.endTick
        }
        return starts
    }

    /// Where the merged time line ends: the latest track end (end-of-track event), a format 2
    /// file's last track's.
    public var endTick: Int {
        zip(trackStartTicks, tracks).map { $0 + $1.endTick }.max() ?? 0
    }

    /// Every event of every track on one time line, ordered by (tick, track, order in track).
    public func mergedEvents() -> [MIDIMergedEvent] {
        let starts = trackStartTicks
        var out: [MIDIMergedEvent] = []
        out.reserveCapacity(tracks.reduce(0) { $0 + $1.events.count })
        for (t, track) in tracks.enumerated() {
            for e in track.events { out.append(MIDIMergedEvent(tick: e.tick + starts[t], track: t, kind: e.kind)) }
        }
        if tracks.count > 1 { Self.stableSortByTick(&out, tick: \.tick) }
        return out
    }

    /// NOTE ON events with velocity > 0 on the merged time line, in merge order.
    /// - Parameter channel: a channel index 0...15, or nil for every channel.
    public func hits(channel: Int? = nil) -> [MIDIHit] {
        let starts = trackStartTicks
        var out: [MIDIHit] = []
        for (t, track) in tracks.enumerated() {
            let base = starts[t]
            for e in track.events {
                if case .channel(.noteOn(let ch, let note, let velocity)) = e.kind,
                   channel == nil || Int(ch) == channel {
                    out.append(MIDIHit(tick: e.tick + base, channel: ch, note: note, velocity: velocity))
                }
            }
        }
        if tracks.count > 1 { Self.stableSortByTick(&out, tick: \.tick) }
        return out
    }

    /// True when some NOTE ON with velocity > 0 is on channel index `channel`.
    public func hasNotes(onChannel channel: Int) -> Bool {
        for track in tracks {
            for e in track.events {
                if case .channel(.noteOn(let ch, _, _)) = e.kind, Int(ch) == channel { return true }
            }
        }
        return false
    }

    /// Sorts by tick keeping the existing relative order of equal ticks (the input is
    /// concatenated in track order, so this yields tick, then track, then order in track).
    static func stableSortByTick<T>(_ items: inout [T], tick: (T) -> Int) {
        var keyed = items.enumerated().map { (tick: tick($0.element), index: $0.offset) }
        keyed.sort { $0.tick != $1.tick ? $0.tick < $1.tick : $0.index < $1.index }
        items = keyed.map { items[$0.index] }
    }
}
