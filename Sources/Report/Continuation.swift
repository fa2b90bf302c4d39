// How a drummer carries on from a primer: for each bar after the primer, its similarity to the
// primer's bar it is most like (the Jaccard index of their (drum class, sixteenth) sets, as the
// bar-structure figures read bars: BarStructure), and whether it repeats one (a similarity of
// 0.8 or more, the figures' "same bar"). `drummer continuation` measures a model's bars after
// the first bars of the reference files against the drummers' own bars after them: a player that
// answers a musician should carry on from what it heard as a drummer does.

import MIDIParse

/// Sums of the continuation figures; every field adds over files.
public struct ContinuationSums: Equatable, Sendable {
    public var files = 0
    public var bars = 0
    /// Σ over the bars after the primer of the best similarity to a primer bar.
    public var similaritySum = 0.0
    /// Bars after the primer that repeat a primer bar.
    public var repeats = 0

    public init() {}

    /// The mean best similarity of a bar after the primer to the primer's bars.
    public var similarity: Double? { bars > 0 ? similaritySum / Double(bars) : nil }
    /// The share of the bars after the primer that repeat a primer bar.
    public var repeatShare: Double? { bars > 0 ? Double(repeats) / Double(bars) : nil }

    /// Adds one file: the primer's bars and the bars after them.
    public mutating func add(primer: [BarStructure.BarSet], after: [BarStructure.BarSet]) {
        files += 1
        for bar in after {
            let best = primer.map { $0.jaccard(bar) }.max() ?? 0
            similaritySum += best
            bars += 1
            if best >= BarStructureSums.sameBarSimilarity { repeats += 1 }
        }
    }
}

extension BarStructure {
    /// The bar sets of `hits` (MIDI note, onset in ticks from a bar line at tick 0, at
    /// `ticksPerQuarter`, in 4/4) for bars `range`: each hit whose note has a drum class at the
    /// nearest sixteenth from its bar line (halves up; past the last, the next bar's first), as
    /// `bars(_:)` places them.
    public static func barSets(notes: [Int], onsets: [Int], ticksPerQuarter: Int, bars range: Range<Int>) -> [BarSet] {
        var out = [BarSet](repeating: BarSet(), count: range.count)
        let barTicks = 4 * ticksPerQuarter
        for (note, onset) in zip(notes, onsets) {
            guard let c = DrumClasses.of(note: note), onset >= 0 else { continue }
            let (next, cell) = sixteenth(tickInBar: onset % barTicks, ticksPerQuarter: ticksPerQuarter)
            let bar = onset / barTicks + next
            guard range.contains(bar) else { continue }
            out[bar - range.lowerBound].insert(drumClass: c, sixteenth: cell)
        }
        return out
    }
}
