// The bar-structure figures of `drummer stats`: does a drummer hold a pattern
// over bars and phrase it? Pure functions over HitTracks; sums that add over files.
//
// Definitions (the README's "Groove figures" and docs/report-and-stats.md say the same):
// - A file counts when every hit lies in a 4/4 bar (a bar of 4 quarter notes); other files
//   are left out of these figures and counted (`filesNot44`).
// - A bar is the set of (drum class, sixteenth) it hits: each hit whose note has one of
//   Magenta's 9 drum classes (`DrumClasses`) goes to the nearest sixteenth from its bar line
//   (halves up); the sixteenth after the last is the next bar's first. Bars are counted
//   from the file's first bar (a dataset's from its first hit's bar), and a file's bars run
//   from its first hit's bar to its last hit's, empty bars included.
// - Similarity at lag k: the mean, over every pair of bars k apart in a file, of the
//   Jaccard index |A ∩ B| / |A ∪ B| of their sets (two empty bars: 1).
// - Patterns per 16 bars: in each whole window of 16 bars (bars 1–16, 17–32, … of a
//   file), bars are taken in order and a bar is a new pattern unless its similarity to the
//   first bar of a pattern already seen is at least 0.8; the mean count over windows.
// - Fill figure: in each whole window of 8 bars, bars 4 and 8 (fill bars) against bars 2,
//   3, 6 and 7 (the bars inside a phrase that neither start it nor follow a fill): hits
//   per bar, the share of hits on toms and crash (hits of those classes over all hits with
//   a class) and the similarity to the previous bar; each as fill / other.
// - Share of simultaneous onsets: distinct onsets (ticks after rescaling and --quantize)
//   with two or more hits, over all distinct onsets; every file.
// - Mean velocity and soft-hit share (velocity below 50) over every hit; every file.
// - Grid share per drum class: the hits of that class within the grid tolerance of a
//   sixteenth line, over the hits of that class; every file with bar positions.
// - Mean velocity per drum class: the mean velocity of the hits of that class; every file
//   with velocities.
// - Touch within a bar (no target; what a bar classifier tells models apart by): hi-hat
//   velocity spread, the mean over bars with 4 or more closed hi-hat hits of the standard
//   deviation (population) of their velocities; loudness drift, the mean over files with 4
//   or more bars of 4 or more hits with a class of the standard deviation of those bars' mean
//   velocities. Bar figures' files and bars; files with velocities.
import DrummerCore
import Foundation
import MIDIParse

/// Sums of the bar-structure figures; every field adds over files.
public struct BarStructureSums: Equatable, Sendable {
    public static let lags = [1, 2, 4, 8]
    public static let sameBarSimilarity = 0.8

    /// Files measured for the bar figures (all hits in 4/4 bars), and those left out.
    public var files44 = 0
    public var filesNot44 = 0
    public var bars = 0
    /// Per lag of `lags`: sum of Jaccard indices and pairs.
    public var similaritySum = [Double](repeating: 0, count: lags.count)
    public var similarityPairs = [Int](repeating: 0, count: lags.count)
    public var patternSum = 0
    public var patternWindows = 0
    /// Fill bars (4 and 8 of an 8-bar window) and the others (2, 3, 6, 7).
    public var fill = PhraseBars()
    public var other = PhraseBars()
    /// Distinct onsets and those with two or more hits.
    public var onsets = 0
    public var simultaneousOnsets = 0
    /// Velocities (hits that have one).
    public var velocityHits = 0
    public var velocitySum = 0
    public var softHits = 0
    /// Per drum class: hits with a bar position, and those on the 16th grid.
    public var classHits = [Int](repeating: 0, count: DrumClasses.count)
    public var classOnGrid = [Int](repeating: 0, count: DrumClasses.count)
    /// Per drum class: hits with a velocity, and the sum of those velocities.
    public var classVelocityHits = [Int](repeating: 0, count: DrumClasses.count)
    public var classVelocitySum = [Int](repeating: 0, count: DrumClasses.count)
    /// Bars with 4+ closed hi-hat hits and the sum of their velocity standard deviations;
    /// files with 4+ bars of 4+ hits and the sum of the standard deviations of those bars' means.
    public var hatBars = 0
    public var hatSpreadSum = 0.0
    public var driftFiles = 0
    public var driftSum = 0.0

    public init() {}

    /// Bars of one kind in 8-bar windows.
    public struct PhraseBars: Equatable, Sendable {
        public var bars = 0
        public var hits = 0
        public var fillClassHits = 0
        public var similaritySum = 0.0

        mutating func add(_ o: PhraseBars) {
            bars += o.bars
            hits += o.hits
            fillClassHits += o.fillClassHits
            similaritySum += o.similaritySum
        }

        public var hitsPerBar: Double? { bars > 0 ? Double(hits) / Double(bars) : nil }
        public var fillClassShare: Double? { hits > 0 ? Double(fillClassHits) / Double(hits) : nil }
        public var similarityToPrevious: Double? { bars > 0 ? similaritySum / Double(bars) : nil }
    }

    public mutating func add(_ o: BarStructureSums) {
        files44 += o.files44
        filesNot44 += o.filesNot44
        bars += o.bars
        for i in similaritySum.indices {
            similaritySum[i] += o.similaritySum[i]
            similarityPairs[i] += o.similarityPairs[i]
        }
        patternSum += o.patternSum
        patternWindows += o.patternWindows
        fill.add(o.fill)
        other.add(o.other)
        onsets += o.onsets
        simultaneousOnsets += o.simultaneousOnsets
        velocityHits += o.velocityHits
        velocitySum += o.velocitySum
        softHits += o.softHits
        for c in classHits.indices {
            classHits[c] += o.classHits[c]
            classOnGrid[c] += o.classOnGrid[c]
            classVelocityHits[c] += o.classVelocityHits[c]
            classVelocitySum[c] += o.classVelocitySum[c]
        }
        hatBars += o.hatBars
        hatSpreadSum += o.hatSpreadSum
        driftFiles += o.driftFiles
        driftSum += o.driftSum
    }

    // MARK: Figures (nil when nothing was measured)

    public func similarity(lag: Int) -> Double? {
        guard let i = Self.lags.firstIndex(of: lag), similarityPairs[i] > 0 else { return nil }
        return similaritySum[i] / Double(similarityPairs[i])
    }
    public var patternsPer16Bars: Double? { patternWindows > 0 ? Double(patternSum) / Double(patternWindows) : nil }
    public var simultaneousShare: Double? { onsets > 0 ? Double(simultaneousOnsets) / Double(onsets) : nil }
    public var velocityMean: Double? { velocityHits > 0 ? Double(velocitySum) / Double(velocityHits) : nil }
    public var softShare: Double? { velocityHits > 0 ? Double(softHits) / Double(velocityHits) : nil }
    public func gridShare(drumClass c: Int) -> Double? { classHits[c] > 0 ? Double(classOnGrid[c]) / Double(classHits[c]) : nil }
    /// Class `c`'s share of the hits with a bar position (the class mix).
    public func hitShare(drumClass c: Int) -> Double? {
        let total = classHits.reduce(0, +)
        return total > 0 ? Double(classHits[c]) / Double(total) : nil
    }
    public func velocityMean(drumClass c: Int) -> Double? {
        classVelocityHits[c] > 0 ? Double(classVelocitySum[c]) / Double(classVelocityHits[c]) : nil
    }
    public var hatVelocitySpread: Double? { hatBars > 0 ? hatSpreadSum / Double(hatBars) : nil }
    public var loudnessDrift: Double? { driftFiles > 0 ? driftSum / Double(driftFiles) : nil }

    static func ratio(_ a: Double?, _ b: Double?) -> Double? {
        guard let a, let b, b != 0 else { return nil }
        return a / b
    }
    /// A fill figure's ratio as its target reads it: fill / other; +∞ when only the fill bars
    /// hold it (the others' figure is 0: toms and crashes only in fills), 1 when neither does
    /// (no bump); nil when a side is not measured.
    static func targetRatio(_ fill: Double?, _ other: Double?) -> Double? {
        guard let fill, let other else { return nil }
        if other == 0 { return fill > 0 ? .infinity : 1 }
        return fill / other
    }
    public var fillClassTargetRatio: Double? { Self.targetRatio(fill.fillClassShare, other.fillClassShare) }
    public var fillSimilarityTargetRatio: Double? { Self.targetRatio(fill.similarityToPrevious, other.similarityToPrevious) }
    public var fillHitsRatio: Double? { Self.ratio(fill.hitsPerBar, other.hitsPerBar) }
    public var fillClassRatio: Double? { Self.ratio(fill.fillClassShare, other.fillClassShare) }
    public var fillSimilarityRatio: Double? { Self.ratio(fill.similarityToPrevious, other.similarityToPrevious) }
}

public enum BarStructure {
    /// A bar's (class, sixteenth) set as bits: class × 16 + sixteenth (9 × 16 = 144 bits).
    public struct BarSet: Equatable, Hashable, Sendable {
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        public init() {}
        public mutating func insert(drumClass: Int, sixteenth: Int) {
            let bit = drumClass * 16 + sixteenth
            switch bit >> 6 {
            case 0: words.0 |= 1 << UInt64(bit & 63)
            case 1: words.1 |= 1 << UInt64(bit & 63)
            default: words.2 |= 1 << UInt64(bit & 63)
            }
        }
        public var count: Int { words.0.nonzeroBitCount + words.1.nonzeroBitCount + words.2.nonzeroBitCount }
        public static func == (a: BarSet, b: BarSet) -> Bool { a.words == b.words }
        public func hash(into h: inout Hasher) {
            h.combine(words.0)
            h.combine(words.1)
            h.combine(words.2)
        }
        /// |A ∩ B| / |A ∪ B|; 1 for two empty sets.
        public func jaccard(_ o: BarSet) -> Double {
            let i = (words.0 & o.words.0).nonzeroBitCount + (words.1 & o.words.1).nonzeroBitCount + (words.2 & o.words.2).nonzeroBitCount
            let u = (words.0 | o.words.0).nonzeroBitCount + (words.1 | o.words.1).nonzeroBitCount + (words.2 | o.words.2).nonzeroBitCount
            return u == 0 ? 1 : Double(i) / Double(u)
        }
    }

    /// One bar of a file: its set, hits with a class, and hits on toms and crash; the sum and
    /// count of those hits' velocities and the closed hi-hat's velocities (files with velocities).
    public struct Bar: Equatable, Sendable {
        public var set = BarSet()
        public var hits = 0
        public var fillClassHits = 0
        public var velocitySum = 0
        public var velocityCount = 0
        public var hatVelocities: [Int] = []
    }

    /// The closed hi-hat's class (hi-hat velocity spread).
    static let closedHiHat = DrumClasses.names.firstIndex(of: "closed hi-hat")!
    /// Hits a bar needs for the touch figures (closed hi-hat hits; hits with a class), and bars a file.
    static let touchMinimum = 4

    /// The population standard deviation.
    static func standardDeviation(_ xs: [Double]) -> Double {
        let mean = xs.reduce(0, +) / Double(xs.count)
        return (xs.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(xs.count)).squareRoot()
    }

    /// The sixteenth a hit `tickInBar` ticks after its bar line is read at: the nearest (halves
    /// up), and `next` 1 where that is past the bar's last, the next bar's first (else 0).
    static func sixteenth(tickInBar: Int, ticksPerQuarter: Int) -> (next: Int, cell: Int) {
        let cell = Int((Double(tickInBar) / (Double(ticksPerQuarter) / 4) + 0.5).rounded(.down))
        return cell >= 16 ? (1, cell - 16) : (0, cell)
    }

    /// The bars of a file whose hits all lie in 4/4 bars, from its first hit's bar to its
    /// last hit's, with the index of the first (counted from the file's first bar); nil
    /// for a file without bar positions or with a hit in another meter. A pickup is the end
    /// of a 4/4 bar and a shorter last bar the start of one, as the grid model counts them
    /// (`GridGroup.countBars`).
    public static func bars(_ t: HitTrack) -> (first: Int, bars: [Bar])? {
        guard let slots = t.countedBars, !slots.isEmpty else { return nil }
        let barTicks = 4 * t.ticksPerQuarter
        guard slots.allSatisfy({ $0.barTicks == barTicks }) else { return nil }
        var placed: [(bar: Int, cell: Int, drumClass: Int, velocity: Int?)] = []
        for (i, (slot, note)) in zip(slots, t.notes).enumerated() {
            guard let c = DrumClasses.of(note: note) else { continue }
            let (next, cell) = sixteenth(tickInBar: slot.tickInBar, ticksPerQuarter: t.ticksPerQuarter)
            placed.append((slot.bar + next, cell, c, t.velocities?[i]))
        }
        let first = slots.map(\.bar).min()!, last = max(slots.map(\.bar).max()!, placed.map(\.bar).max() ?? first)
        var out = [Bar](repeating: Bar(), count: last - first + 1)
        for p in placed {
            out[p.bar - first].set.insert(drumClass: p.drumClass, sixteenth: p.cell)
            out[p.bar - first].hits += 1
            if DrumClasses.fillClasses.contains(p.drumClass) { out[p.bar - first].fillClassHits += 1 }
            if let v = p.velocity {
                out[p.bar - first].velocitySum += v
                out[p.bar - first].velocityCount += 1
                if p.drumClass == closedHiHat { out[p.bar - first].hatVelocities.append(v) }
            }
        }
        return (first, out)
    }

    /// Distinct patterns in a run of bars: a bar is a new pattern unless its similarity to
    /// the first bar of a pattern already seen is at least `sameBarSimilarity`.
    public static func patterns(_ bars: ArraySlice<BarSet>) -> Int {
        var seen: [BarSet] = []
        for b in bars where !seen.contains(where: { $0.jaccard(b) >= BarStructureSums.sameBarSimilarity }) { seen.append(b) }
        return seen.count
    }

    /// The sums of one file, with the grid tolerance in sixteenths.
    public static func measure(_ t: HitTrack, tolerance: Double) -> BarStructureSums {
        var out = BarStructureSums()
        // Every file: simultaneous onsets, velocities.
        var i = 0
        while i < t.onsets.count {
            var j = i + 1
            while j < t.onsets.count, t.onsets[j] == t.onsets[i] { j += 1 }
            out.onsets += 1
            if j - i >= 2 { out.simultaneousOnsets += 1 }
            i = j
        }
        if let v = t.velocities {
            out.velocityHits = v.count
            out.velocitySum = v.reduce(0, +)
            out.softHits = v.lazy.filter { $0 < 50 }.count
            for (note, velocity) in zip(t.notes, v) {
                guard let c = DrumClasses.of(note: note) else { continue }
                out.classVelocityHits[c] += 1
                out.classVelocitySum[c] += velocity
            }
        }
        if let slots = t.bars {
            for (slot, note) in zip(slots, t.notes) {
                guard let c = DrumClasses.of(note: note) else { continue }
                out.classHits[c] += 1
                if GrooveStats.onGrid(tickInBar: slot.tickInBar, ticksPerQuarter: t.ticksPerQuarter, tolerance: tolerance) {
                    out.classOnGrid[c] += 1
                }
            }
        }
        guard t.bars != nil, !t.onsets.isEmpty else { return out }
        guard let (first, bars) = bars(t) else {
            out.filesNot44 = 1
            return out
        }
        out.files44 = 1
        out.bars = bars.count
        for b in bars where b.hatVelocities.count >= touchMinimum {
            out.hatBars += 1
            out.hatSpreadSum += standardDeviation(b.hatVelocities.map(Double.init))
        }
        let means = bars.filter { $0.velocityCount >= touchMinimum }.map { Double($0.velocitySum) / Double($0.velocityCount) }
        if means.count >= touchMinimum {
            out.driftFiles = 1
            out.driftSum = standardDeviation(means)
        }
        let sets = bars.map(\.set)
        for (li, lag) in BarStructureSums.lags.enumerated() where sets.count > lag {
            for k in 0..<(sets.count - lag) {
                out.similaritySum[li] += sets[k].jaccard(sets[k + lag])
                out.similarityPairs[li] += 1
            }
        }
        // Windows aligned to the file's bar 1; index into `bars` is file bar − first.
        func windows(_ size: Int) -> [Int] {
            let last = first + bars.count - 1
            var start = (first + size - 1) / size * size   // the first window start at or after `first`
            var out: [Int] = []
            while start + size - 1 <= last {
                out.append(start - first)
                start += size
            }
            return out
        }
        for w in windows(16) {
            out.patternSum += patterns(sets[w..<(w + 16)])
            out.patternWindows += 1
        }
        for w in windows(8) {
            for (offset, fill) in [(3, true), (7, true), (1, false), (2, false), (5, false), (6, false)] {
                let k = w + offset
                let bar = BarStructureSums.PhraseBars(bars: 1, hits: bars[k].hits, fillClassHits: bars[k].fillClassHits,
                                                      similaritySum: sets[k].jaccard(sets[k - 1]))
                if fill { out.fill.add(bar) } else { out.other.add(bar) }
            }
        }
        return out
    }
}

extension HitTrack {
    /// `bars` as the grid model counts them when it reads the beat (a pickup the end of a 4/4
    /// bar, a shorter last bar the start of one: `GridGroup.countBars`), else as they are.
    public var countedBars: [BarSlot]? {
        guard var slots = bars else { return nil }
        var inBar = slots.map(\.tickInBar), lengths = slots.map(\.barTicks)
        if GridGroup.countBars(onsets: onsets, tickInBar: &inBar, barTicks: &lengths, bar: 4 * ticksPerQuarter) == nil {
            for i in slots.indices { (slots[i].tickInBar, slots[i].barTicks) = (inBar[i], lengths[i]) }
        }
        return slots
    }
}
