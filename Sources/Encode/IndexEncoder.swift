// Class indices of note numbers and tick values for a vocabulary.
import DrummerCore

/// Note and tick value -> class index, by table lookup.
struct IndexEncoder {
    /// Tick values below this are looked up in a flat table, larger ones in a dictionary.
    static let flatTickLimit = 1 << 20
    private var noteIndex = [Int32](repeating: -1, count: 128)
    private var tickTable: [Int32]
    private var tickIndex: [Int: Int] = [:]

    init(_ vocab: Vocabulary) {
        for (i, n) in vocab.ixToNote.enumerated() where (0..<128).contains(n) { noteIndex[n] = Int32(i) }
        let flatMax = vocab.ixToTick.last { $0 < Self.flatTickLimit } ?? -1
        tickTable = [Int32](repeating: -1, count: flatMax + 1)
        for (i, t) in vocab.ixToTick.enumerated() {
            if t < Self.flatTickLimit { tickTable[t] = Int32(i) } else { tickIndex[t] = i }
        }
    }

    @inline(__always) func note(_ n: Int) -> Int? {
        guard (0..<128).contains(n) else { return nil }
        let i = noteIndex[n]
        return i < 0 ? nil : Int(i)
    }

    @inline(__always) func tick(_ t: Int) -> Int? {
        if t >= 0, t < tickTable.count {
            let i = tickTable[t]
            return i < 0 ? nil : Int(i)
        }
        return tickIndex[t]
    }

    /// The distinct values of `values`, ascending (sort and drop repeats: no hashing).
    static func sortedUnique(_ values: [Int]) -> [Int] {
        var sorted = values.sorted()
        var w = 0
        for r in sorted.indices where r == 0 || sorted[r] != sorted[w - 1] {
            sorted[w] = sorted[r]
            w += 1
        }
        sorted.removeLast(sorted.count - w)
        return sorted
    }
}
