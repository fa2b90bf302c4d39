// What the sampler produces and consumes: one drum hit as a pair of vocabulary
// indices, and the same hit as MIDI values (note number, ticks since the previous hit).

import DrummerCore

/// One hit as vocabulary indices: `note` into `ix_to_note`, `tick` into `ix_to_tick`.
public struct SampledEvent: Hashable, Sendable, CustomStringConvertible {
    public var note: Int
    public var tick: Int

    public init(note: Int, tick: Int) {
        self.note = note
        self.tick = tick
    }

    public var description: String { "(\(note), \(tick))" }
}

/// One hit as MIDI values: the note number and the delta in ticks (480 PPQ) from the
/// previous hit's onset (0 for simultaneous hits; the first hit's delta counts from 0).
public struct DrumHit: Hashable, Sendable, CustomStringConvertible {
    public var note: Int
    public var delta: Int

    public init(note: Int, delta: Int) {
        self.note = note
        self.delta = delta
    }

    public var description: String { "(\(note), +\(delta))" }
}

extension Vocabulary {
    /// The MIDI values of sampled events (indices must be in range, as the sampler makes them).
    public func hits(_ events: [SampledEvent]) -> [DrumHit] {
        events.map { DrumHit(note: ixToNote[$0.note], delta: ixToTick[$0.tick]) }
    }
}
