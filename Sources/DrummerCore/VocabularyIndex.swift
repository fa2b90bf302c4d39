// Note number and tick value → class index for a vocabulary: the one lookup the
// toolchain uses (convert-midi's encoding, eval's mapping of a dataset or MIDI file into
// a model's vocabulary, the sampler's primer).

/// Class indices of note numbers and tick values, by table lookup (built once per vocabulary).
public struct VocabularyIndex: Sendable {
    /// Tick values below this are looked up in a flat table, larger ones in a dictionary.
    public static let flatTickLimit = 1 << 20
    private var noteTable = [Int32](repeating: -1, count: 128)
    private var tickTable: [Int32]
    private var largeTicks: [Int: Int] = [:]
    /// (value, index) by increasing value, for `nearestTick`.
    private let ticksByValue: [(value: Int, index: Int)]

    public init(_ vocabulary: Vocabulary) {
        for (i, n) in vocabulary.ixToNote.enumerated() where (0..<128).contains(n) { noteTable[n] = Int32(i) }
        let flatMax = vocabulary.ixToTick.filter { $0 < Self.flatTickLimit }.max() ?? -1
        tickTable = [Int32](repeating: -1, count: flatMax + 1)
        for (i, t) in vocabulary.ixToTick.enumerated() {
            if t < Self.flatTickLimit { tickTable[t] = Int32(i) } else { largeTicks[t] = i }
        }
        ticksByValue = vocabulary.ixToTick.enumerated().map { ($0.element, $0.offset) }.sorted { $0.value < $1.value }
    }

    /// The class index of MIDI note `n`, nil when the vocabulary lacks it.
    @inline(__always) public func note(_ n: Int) -> Int? {
        guard (0..<128).contains(n) else { return nil }
        let i = noteTable[n]
        return i < 0 ? nil : Int(i)
    }

    /// The class index of tick value `t`, nil when the vocabulary lacks it.
    @inline(__always) public func tick(_ t: Int) -> Int? {
        if t >= 0, t < tickTable.count {
            let i = tickTable[t]
            return i < 0 ? nil : Int(i)
        }
        return largeTicks[t]
    }

    /// The class index of the tick value nearest `t` (the smaller value on a tie), and whether
    /// it is `t` itself.
    public func nearestTick(_ t: Int) -> (index: Int, exact: Bool) {
        if let i = tick(t) { return (i, true) }
        var lo = 0, hi = ticksByValue.count  // first value ≥ t
        while lo < hi {
            let mid = (lo + hi) / 2
            if ticksByValue[mid].value < t { lo = mid + 1 } else { hi = mid }
        }
        if lo == 0 { return (ticksByValue[0].index, false) }
        if lo == ticksByValue.count { return (ticksByValue[lo - 1].index, false) }
        let below = ticksByValue[lo - 1], above = ticksByValue[lo]
        return (t - below.value <= above.value - t ? below.index : above.index, false)
    }
}
