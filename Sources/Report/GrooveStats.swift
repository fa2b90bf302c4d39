// `drummer stats`: how much generated drum MIDI files are like a reference, in figures.
// Pure functions over HitTracks (one per file, all at one resolution R ticks per quarter
// note; a sixteenth is s = R / 4 ticks, 120 at 480 PPQ).
//
// Definitions (the README's `drummer stats` section and `drummer stats --help` say the same):
//
// Histograms, pooled over the files of a side, compared by Jensen–Shannon divergence in bits
// (base-2 logarithms: 0 identical … 1 disjoint; `Histogram.jensenShannonBits`):
// - notes: one bin per MIDI note number either side has;
// - deltas: ticks since the previous hit of the same file, 0 for simultaneous hits (the
//   dataset's events.npy definition; a file's first hit has none, as its delta in a dataset
//   is the gap it was glued on with). One bin per exact tick value: with --quantize 30 these
//   are the dataset's own tick values. Deltas of a whole 4/4 bar (4R) or more share one bin:
//   they are rests, whose exact length says nothing about the groove, and they include the
//   model's rare glue gaps;
// - velocities: 16 bins of 8 (0–7 … 120–127; `HitHistograms.velocities`), so a model that
//   draws from a few velocity levels is not penalised for the levels between them.
// Share of onsets on the 16th grid: distinct onsets per file (several hits at one tick count
//   once) whose position in the bar lies within the tolerance (default 1/8 of a sixteenth,
//   15 ticks at 480 PPQ; inclusive) of a sixteenth-note grid line counted from the bar line,
//   over all distinct onsets. 6/8 and other eighth-note meters use the same grid. The
//   uniform-random baseline is the share of the possible positions (every tick, or every
//   multiple of --quantize) that are on the grid: 31/120 = 0.258 unquantized, 0.25 with
//   --quantize 30.
// Bar periodicity: per file, x[k, d] = 1 when drum (note) d has an onset in sixteenth cell k
//   (cell = onset / s rounded to nearest, halves up; cells from the file's start, the matrix
//   spanning the first onset's cell to the last one's: K cells); L = the bar length in
//   sixteenths (rounded) of the meter most of the file's hits are in; μ_d = the mean of
//   x[·, d] over the K cells. Over k = 0 ..< K − L:
//     N = Σ_d Σ_k (x[k,d] − μ_d)(x[k+L,d] − μ_d), A = Σ_d Σ_k (x[k,d] − μ_d)²,
//     B = Σ_d Σ_k (x[k+L,d] − μ_d)²,
//   summed over the files of a side, r = ΣN / √(ΣA · ΣB) (files with K ≤ L add nothing).
//   This is the lag-one-bar autocorrelation normalised by the two overlapping stretches
//   (Pearson's form), so a pattern that repeats exactly gives 1 whatever the file's length
//   (the textbook form divides by the whole series, Σ_k over all K cells, and gives
//   (n − 1)/n for n identical bars); a pattern with no bar-to-bar relation gives about 0.
// Accent profile: mean velocity per sixteenth of the bar (nearest sixteenth from the bar
//   line; a hit nearest the next bar line counts as that bar's first), over the hits in
//   bars of one length: the length most of the reference's hits are in (the generated
//   files' when the reference has no bar positions); hits in bars of other lengths are
//   skipped and counted. Pearson correlation of the two profiles over the positions both
//   have hits at; n/a when fewer than 2 such positions or a profile is constant.
// Duplicate-onset rate: hits that repeat a note already struck at the same onset of the same
//   file (after rescaling and quantizing), over all hits. A MIDI file holds such pairs only
//   as overlapping NOTE ONs, which are counted as read.
// Counts: files, hits, bars (per file from the first hit's bar to the last hit's, both
//   included), hits per bar.
import Foundation
import MIDIParse

// MARK: One side's tallies

/// What the figures need from one side (the generated files or the reference), gathered
/// file by file. Every field can be summed over files.
public struct GrooveTally: Equatable, Sendable {
    public var ticksPerQuarter: Int
    public var files = 0
    public var hits = 0
    /// Sum of the files' bar spans; nil when a file has no bar positions.
    public var bars: Int? = 0
    public var noteCounts: [Int: Int] = [:]
    /// Deltas in ticks (those of `deltaCap` or more under `deltaCap`).
    public var deltaCounts: [Int: Int] = [:]
    /// 16 bins of 8 velocities; nil when a file has no velocities.
    public var velocityCounts: [Int]? = [Int](repeating: 0, count: 16)
    /// Distinct onsets and those on the 16th grid; nil without bar positions.
    public var grid: GridCounts? = GridCounts()
    /// Sums of the bar periodicity of the onset pattern (every drum together) and of each
    /// drum's pattern; nil without bar positions.
    public var periodicity: PeriodicitySums? = PeriodicitySums()
    public var periodicityPerDrum: PeriodicitySums? = PeriodicitySums()
    /// Accent sums per bar length in ticks; nil without velocities or bar positions.
    public var accents: [Int: AccentSums]? = [:]
    public var duplicates = 0
    /// The bar-structure sums (BarStructure).
    public var structure = BarStructureSums()

    public init(ticksPerQuarter: Int) { self.ticksPerQuarter = ticksPerQuarter }

    /// Deltas of a whole 4/4 bar or more share one bin.
    var deltaCap: Int { 4 * ticksPerQuarter }

    /// Adds one file (at this tally's resolution) with the grid tolerance in sixteenths.
    public mutating func add(_ t: HitTrack, tolerance: Double) {
        precondition(t.ticksPerQuarter == ticksPerQuarter, "\(t.path): read at \(t.ticksPerQuarter) PPQ, the tally is at \(ticksPerQuarter)")
        files += 1
        hits += t.hits
        for n in t.notes { noteCounts[n, default: 0] += 1 }
        for d in GrooveStats.deltas(t.onsets) { deltaCounts[min(d, deltaCap), default: 0] += 1 }
        if var counts = velocityCounts, let v = t.velocities {
            for x in v { counts[min(15, max(0, x / 8))] += 1 }
            velocityCounts = counts
        } else {
            velocityCounts = nil
        }
        duplicates += GrooveStats.duplicateOnsets(notes: t.notes, onsets: t.onsets)
        structure.add(BarStructure.measure(t, tolerance: tolerance))
        guard let slots = t.bars else {
            bars = nil
            grid = nil
            periodicity = nil
            periodicityPerDrum = nil
            accents = nil
            return
        }
        bars = bars.map { $0 + (t.barSpan ?? 0) }
        grid?.add(GrooveStats.gridCounts(onsets: t.onsets, bars: slots, ticksPerQuarter: ticksPerQuarter, tolerance: tolerance))
        periodicity?.add(GrooveStats.periodicity(t, perDrum: false))
        periodicityPerDrum?.add(GrooveStats.periodicity(t, perDrum: true))
        if var sums = accents, let v = t.velocities {
            // A pickup's hits in the 4/4 profile, as the bar figures count them.
            for (slot, velocity) in zip(t.countedBars ?? slots, v) {
                let pos = HitSample.sixteenth(tickInBar: slot.tickInBar, barTicks: slot.barTicks, ticksPerQuarter: Double(ticksPerQuarter))
                let cells = GrooveStats.sixteenths(barTicks: slot.barTicks, ticksPerQuarter: ticksPerQuarter)
                sums[slot.barTicks, default: AccentSums(positions: cells)].add(position: pos, velocity: velocity)
            }
            accents = sums
        } else {
            accents = nil
        }
    }

    var hitsPerBar: Double? { bars.flatMap { $0 > 0 ? Double(hits) / Double($0) : nil } }
    public var gridShare: Double? { grid?.share }
    public var duplicateRate: Double? { hits > 0 ? Double(duplicates) / Double(hits) : nil }
}

/// Distinct onsets, and those on the 16th grid.
public struct GridCounts: Equatable, Sendable {
    public var onGrid = 0
    public var onsets = 0

    public init(onGrid: Int = 0, onsets: Int = 0) {
        self.onGrid = onGrid
        self.onsets = onsets
    }

    public mutating func add(_ o: GridCounts) {
        onGrid += o.onGrid
        onsets += o.onsets
    }

    public var share: Double? { onsets > 0 ? Double(onGrid) / Double(onsets) : nil }
}

/// Sums of the bar-periodicity figure (see the header): r = numerator / √(a · b).
public struct PeriodicitySums: Equatable, Sendable {
    public var numerator = 0.0
    public var a = 0.0
    public var b = 0.0
    /// Files that added a term (K > L).
    public var files = 0

    public init(numerator: Double = 0, a: Double = 0, b: Double = 0, files: Int = 0) {
        self.numerator = numerator
        self.a = a
        self.b = b
        self.files = files
    }

    public mutating func add(_ o: PeriodicitySums) {
        numerator += o.numerator
        a += o.a
        b += o.b
        files += o.files
    }

    /// Nil when no file added a term or either stretch has no variance (all cells equal).
    public var r: Double? {
        guard a > 0, b > 0 else { return nil }
        return max(-1, min(1, numerator / (a * b).squareRoot()))
    }
}

/// Velocity sums and hit counts per sixteenth of one bar length.
public struct AccentSums: Equatable, Sendable {
    public var sums: [Int]
    public var counts: [Int]

    public init(positions: Int) {
        sums = [Int](repeating: 0, count: positions)
        counts = [Int](repeating: 0, count: positions)
    }

    public mutating func add(position: Int, velocity: Int) {
        guard sums.indices.contains(position) else { return }
        sums[position] += velocity
        counts[position] += 1
    }

    public var hits: Int { counts.reduce(0, +) }
    /// Mean velocity per position (nil where no hit).
    package var means: [Double?] { zip(sums, counts).map { $1 > 0 ? Double($0) / Double($1) : nil } }
}

// MARK: The figures

public enum GrooveStats {
    /// Ticks since the previous hit, one per hit after the first (0 for simultaneous hits).
    public static func deltas(_ onsets: [Int]) -> [Int] {
        guard onsets.count > 1 else { return [] }
        return (1..<onsets.count).map { onsets[$0] - onsets[$0 - 1] }
    }

    /// Hits whose note was already struck at the same onset (onsets non-decreasing).
    public static func duplicateOnsets(notes: [Int], onsets: [Int]) -> Int {
        var seen = Set<Int>(), duplicates = 0
        for i in notes.indices {
            if i > 0, onsets[i] != onsets[i - 1] { seen.removeAll(keepingCapacity: true) }
            if !seen.insert(notes[i]).inserted { duplicates += 1 }
        }
        return duplicates
    }

    /// Sixteenths in a bar of `barTicks` (a partial last sixteenth counts).
    public static func sixteenths(barTicks: Int, ticksPerQuarter: Int) -> Int {
        max(1, Int((Double(barTicks) / (Double(ticksPerQuarter) / 4) - 1e-9).rounded(.up)))
    }

    /// Whether a position in the bar lies within `tolerance` sixteenths of a 16th grid line.
    public static func onGrid(tickInBar: Int, ticksPerQuarter: Int, tolerance: Double) -> Bool {
        let s = Double(ticksPerQuarter) / 4
        let r = Double(tickInBar).truncatingRemainder(dividingBy: s)
        return min(r, s - r) <= tolerance * s + 1e-9
    }

    /// Distinct onsets of one file and those on the 16th grid.
    public static func gridCounts(onsets: [Int], bars: [BarSlot], ticksPerQuarter: Int, tolerance: Double) -> GridCounts {
        var on = 0, all = 0
        for i in onsets.indices where i == 0 || onsets[i] != onsets[i - 1] {
            all += 1
            if onGrid(tickInBar: bars[i].tickInBar, ticksPerQuarter: ticksPerQuarter, tolerance: tolerance) { on += 1 }
        }
        return GridCounts(onGrid: on, onsets: all)
    }

    /// The grid share of onsets drawn uniformly over every tick (or every multiple of
    /// `quantize`) of the bar: the share of one period of those positions that is on the grid.
    public static func uniformGridShare(ticksPerQuarter: Int, quantize: Int?, tolerance: Double) -> Double {
        let q = max(1, quantize ?? 1)
        let s = max(1, ticksPerQuarter / 4)
        // Positions 0, q, 2q, ... repeat modulo a sixteenth every lcm(q, s) ticks.
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let period = q / gcd(q, s) * s
        var on = 0, all = 0
        var t = 0
        while t < period {
            all += 1
            if onGrid(tickInBar: t % s, ticksPerQuarter: ticksPerQuarter, tolerance: tolerance) { on += 1 }
            t += q
        }
        return Double(on) / Double(all)
    }

    /// The bar-periodicity sums of one file (see the header): of its onset pattern (every drum
    /// together), or with `perDrum` of each drum's; zero sums when the file has no bar
    /// positions or spans no more than one bar's cells.
    public static func periodicity(_ t: HitTrack, perDrum: Bool) -> PeriodicitySums {
        guard let slots = t.bars, !t.onsets.isEmpty else { return PeriodicitySums() }
        // The bar length most hits are in (the shorter on a tie).
        var byLength: [Int: Int] = [:]
        for s in slots { byLength[s.barTicks, default: 0] += 1 }
        guard let barTicks = byLength.max(by: { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key })?.key else {
            return PeriodicitySums()
        }
        let s = Double(t.ticksPerQuarter) / 4
        let lag = Int((Double(barTicks) / s).rounded())
        let cells = t.onsets.map { Int((Double($0) / s + 0.5).rounded(.down)) }
        return periodicity(cells: cells, drums: perDrum ? t.notes : [Int](repeating: 0, count: cells.count), lag: lag)
    }

    /// The sums for onsets already in cells: `cells[i]` holds drum `drums[i]`; `lag` cells
    /// make one bar.
    public static func periodicity(cells: [Int], drums: [Int], lag: Int) -> PeriodicitySums {
        guard lag >= 1, let first = cells.min(), let last = cells.max() else { return PeriodicitySums() }
        let k = last - first + 1
        guard k > lag else { return PeriodicitySums() }
        var rows: [Int: [Bool]] = [:]
        for (c, d) in zip(cells, drums) { rows[d, default: [Bool](repeating: false, count: k)][c - first] = true }
        var out = PeriodicitySums(files: 1)
        for (_, x) in rows.sorted(by: { $0.key < $1.key }) {
            let mu = Double(x.lazy.filter { $0 }.count) / Double(k)
            for i in 0..<(k - lag) {
                let u = (x[i] ? 1 : 0) - mu, v = (x[i + lag] ? 1 : 0) - mu
                out.numerator += u * v
                out.a += u * u
                out.b += v * v
            }
        }
        return out
    }

    /// Pearson's correlation of two equally long series; nil when shorter than 2 or either
    /// is constant.
    public static func pearson(_ x: [Double], _ y: [Double]) -> Double? {
        guard x.count == y.count, x.count >= 2 else { return nil }
        let n = Double(x.count)
        let mx = x.reduce(0, +) / n, my = y.reduce(0, +) / n
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for (a, b) in zip(x, y) {
            sxy += (a - mx) * (b - my)
            sxx += (a - mx) * (a - mx)
            syy += (b - my) * (b - my)
        }
        // A constant series (up to rounding of its mean) has no correlation.
        guard sxx > 1e-9 * max(1, mx * mx) * n, syy > 1e-9 * max(1, my * my) * n else { return nil }
        return max(-1, min(1, sxy / (sxx * syy).squareRoot()))
    }
}
