// Validation of a (note index, tick index) event sequence against a model shape.
import Checkpoints
import DrummerCore

/// Checks of an event sequence against a model shape.
public enum EventValidation {
    /// Throws unless `events` is (note, tick) pairs inside `shape`'s vocabulary.
    public static func check(_ events: [Int32], shape: ModelShape) throws {
        guard events.count % 2 == 0 else { throw TrainError.oddEventBuffer(count: events.count) }
        for e in 0..<(events.count / 2) {
            let n = events[2 * e], t = events[2 * e + 1]
            if n < 0 || Int(n) >= shape.notes {
                throw TrainError.eventOutOfRange(event: e, field: "note", value: n, count: shape.notes)
            }
            if t < 0 || Int(t) >= shape.ticks {
                throw TrainError.eventOutOfRange(event: e, field: "tick", value: t, count: shape.ticks)
            }
        }
    }
}
