// Errors of the training core: bad settings, a state that does not fit its
// shape, events outside the vocabulary or too few for a chunk.
import DrummerCore

public enum TrainError: Error, CustomStringConvertible, Equatable {
    case badSetting(String)
    case stateMismatch(String)
    /// An event's index is outside the vocabulary: event number, which field, value, bound.
    case eventOutOfRange(event: Int, field: String, value: Int32, count: Int)
    case oddEventBuffer(count: Int)
    case tooFewEvents(events: Int, streams: Int, needed: Int)

    public var description: String {
        switch self {
        case .badSetting(let m): return "invalid training setting: \(m)"
        case .stateMismatch(let m): return "training state does not fit: \(m)"
        case .eventOutOfRange(let e, let f, let v, let n):
            return "event \(e): \(f) index \(v) is outside 0..<\(n)"
        case .oddEventBuffer(let n):
            return "event buffer holds \(n) values; expected (note, tick) pairs"
        case .tooFewEvents(let e, let s, let needed):
            return "\(e) events are too few for \(s) stream(s) of at least \(needed) events (unroll + 1) each"
        }
    }
}

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
