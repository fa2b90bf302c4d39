// What the sampler produces and consumes: one drum hit as the model's classes (note and
// tick indices), and the same hit as MIDI values (note number, ticks since the previous hit,
// velocity).

import DrummerCore

/// One hit as the model's classes: `note` into `ix_to_note`, `tick` into `ix_to_tick` (a grid
/// model's hit: its drum class and tick 0).
public struct SampledEvent: Hashable, Sendable, CustomStringConvertible {
    public var note: Int
    public var tick: Int

    public init(note: Int, tick: Int) {
        self.note = note
        self.tick = tick
    }

    public var description: String { "(\(note), \(tick))" }
}

/// One hit as MIDI values: the note number, the delta in ticks (480 PPQ) from the previous
/// hit's onset (0 for simultaneous hits; the first hit's delta counts from 0), the velocity.
public struct DrumHit: Hashable, Sendable, CustomStringConvertible {
    public var note: Int
    public var delta: Int
    public var velocity: Int

    public init(note: Int, delta: Int, velocity: Int = 100) {
        self.note = note
        self.delta = delta
        self.velocity = velocity
    }

    public var description: String { "(\(note), +\(delta), v\(velocity))" }
}

extension Vocabulary {
    /// The MIDI values of sampled events (indices must be in range, as the sampler makes them),
    /// at velocity 100.
    public func hits(_ events: [SampledEvent]) -> [DrumHit] {
        events.map { DrumHit(note: ixToNote[$0.note], delta: ixToTick[$0.tick]) }
    }
}
