// Errors of the training core: bad settings, a state that does not fit its
// shape, events outside the vocabulary or too few for a chunk.

public enum TrainError: Error, CustomStringConvertible, Equatable {
    case badSetting(String)
    case stateMismatch(String)
    /// An event's index is outside the vocabulary: event number, which field, value, bound.
    case eventOutOfRange(event: Int, field: String, value: Int32, count: Int)
    case oddEventBuffer(count: Int, columns: Int)
    case tooFewEvents(events: Int, streams: Int, needed: Int)

    public var description: String {
        switch self {
        case .badSetting(let m): return "invalid training setting: \(m)"
        case .stateMismatch(let m): return "training state does not fit: \(m)"
        case .eventOutOfRange(let e, let f, let v, let n):
            return "event \(e): \(f) index \(v) is outside 0..<\(n)"
        case .oddEventBuffer(let n, let k):
            return "event buffer holds \(n) values; expected rows of \(k) classes (one per input group)"
        case .tooFewEvents(let e, let s, let needed):
            return "\(e) events are too few for \(s) stream(s) of at least \(needed) events (unroll + 1) each"
        }
    }
}
