// Distributions of hits, as pure functions over plain arrays so other commands (a later
// `drummer stats`) can compute the same figures: notes, deltas, velocities, position in
// bar. A `HitSample` gathers those arrays from MIDI files or a dataset.
import Foundation
import MIDIParse

/// Hits of one source (generated files, a reference), reduced to what the histograms read.
public struct HitSample: Equatable, Sendable {
    /// MIDI note of each hit.
    public var notes: [Int] = []
    /// Time from the previous hit of the same file, in quarter notes (one fewer per file
    /// than hits; simultaneous hits give 0).
    public var deltas: [Double] = []
    /// NOTE ON velocity of each hit; nil when the source has none (a convert-midi dataset).
    public var velocities: [Int]? = []
    /// Position in its bar of each hit, in sixteenth notes from the bar line (nearest;
    /// a hit nearest the next bar line counts as 0); nil when the source has no bars.
    public var positions: [Int]? = []
    public var files = 0
    /// Bars spanned by the files (up to each file's last hit); nil when unknown.
    public var bars: Int? = 0

    public init() {}

    public init(notes: [Int], deltas: [Double], velocities: [Int]?, positions: [Int]?, files: Int, bars: Int?) {
        self.notes = notes
        self.deltas = deltas
        self.velocities = velocities
        self.positions = positions
        self.files = files
        self.bars = bars
    }

    /// Adds the hits of one file.
    public mutating func append(_ p: DrumPerformance) {
        files += 1
        guard !p.hits.isEmpty else { return }
        let tpq = Double(p.meter.ticksPerQuarter)
        var previous: Double?
        for h in p.hits {
            notes.append(Int(h.note))
            velocities?.append(Int(h.velocity))
            let q = p.tempo.quarterNotes(atTick: h.tick)
            if let previous { deltas.append(max(0, q - previous)) }
            previous = q
            let pos = p.meter.position(atTick: h.tick)
            positions?.append(Self.sixteenth(tickInBar: pos.tickInBar, barTicks: pos.barTicks, ticksPerQuarter: tpq))
        }
        bars = bars.map { $0 + p.barCount }
    }

    /// Adds the hits of one track (read with the extraction settings, `--quantize` included):
    /// the same figures as `append(_: DrumPerformance)`, from the track's onsets and bars.
    public mutating func append(track t: HitTrack) {
        files += 1
        guard t.hits > 0 else { return }
        let tpq = Double(t.ticksPerQuarter)
        notes += t.notes
        if let v = t.velocities { velocities? += v } else { velocities = nil }
        for i in 1..<max(1, t.onsets.count) { deltas.append(Double(max(0, t.onsets[i] - t.onsets[i - 1])) / tpq) }
        if let b = t.bars {
            positions? += b.map { Self.sixteenth(tickInBar: $0.tickInBar, barTicks: $0.barTicks, ticksPerQuarter: tpq) }
        } else {
            positions = nil
        }
        bars = bars.flatMap { total in t.barSpan.map { total + $0 } }
    }

    /// Nearest sixteenth note from the bar line; 0 when nearest to the next bar line.
    public static func sixteenth(tickInBar: Int, barTicks: Int, ticksPerQuarter: Double) -> Int {
        let perSixteenth = ticksPerQuarter / 4
        let cell = Int((Double(tickInBar) / perSixteenth).rounded())
        let cells = Int((Double(barTicks) / perSixteenth - 1e-9).rounded(.up))
        return cell >= cells ? 0 : cell
    }

    public var hits: Int { notes.count }
}

/// Counts per bin, with labels.
public struct Histogram: Equatable, Sendable {
    public var labels: [String]
    public var counts: [Int]

    public init(labels: [String], counts: [Int]) {
        self.labels = labels
        self.counts = counts
    }

    public var total: Int { counts.reduce(0, +) }

    /// Each count over the total (all 0 when empty).
    public var fractions: [Double] {
        let t = Double(total)
        return counts.map { t > 0 ? Double($0) / t : 0 }
    }

    /// Total variation distance between two distributions over the same bins:
    /// ½ Σ |p − q|, from 0 (identical) to 1 (disjoint). Nil when either is empty.
    public static func totalVariation(_ a: Histogram, _ b: Histogram) -> Double? {
        guard a.counts.count == b.counts.count, a.total > 0, b.total > 0 else { return nil }
        return zip(a.fractions, b.fractions).reduce(0) { $0 + abs($1.0 - $1.1) } / 2
    }
}

public enum HitHistograms {
    /// Hits per note, bins in `order` (e.g. the union of notes of the sources, in display
    /// order), labelled with short tab names.
    public static func notes(_ notes: [Int], order: [Int]) -> Histogram {
        let index = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($0.element, $0.offset) })
        var counts = [Int](repeating: 0, count: order.count)
        for n in notes { if let i = index[n] { counts[i] += 1 } }
        return Histogram(labels: order.map { GeneralMIDIDrums.shortName(note: $0) }, counts: counts)
    }

    /// Deltas in thirty-second notes: bin k holds deltas nearest k/8 of a quarter note, for
    /// k = 0 ... 15; the last bin holds a half note and longer. Labels are fractions of a
    /// whole note ("0", "1/32", "1/16", ..., "≥1/2").
    public static let deltaBins = 17

    public static func deltas(_ quarters: [Double]) -> Histogram {
        var counts = [Int](repeating: 0, count: deltaBins)
        for q in quarters where q.isFinite {
            let k = min(deltaBins - 1, max(0, Int((q * 8).rounded())))
            counts[k] += 1
        }
        let labels = (0..<deltaBins).map { k -> String in
            if k == 0 { return "0" }
            if k == deltaBins - 1 { return "≥1/2" }
            var n = k, d = 32
            while n % 2 == 0, d > 1 { n /= 2; d /= 2 }
            return "\(n)/\(d)"
        }
        return Histogram(labels: labels, counts: counts)
    }

    /// Velocities in 16 bins of 8 (0-7 ... 120-127).
    public static func velocities(_ values: [Int]) -> Histogram {
        var counts = [Int](repeating: 0, count: 16)
        for v in values { counts[min(15, max(0, v / 8))] += 1 }
        return Histogram(labels: (0..<16).map { "\($0 * 8)-\($0 * 8 + 7)" }, counts: counts)
    }

    /// Positions in sixteenths from the bar line; at least 16 bins (a 4/4 bar), more when a
    /// longer bar has hits further in. Labels count the bar: 1 e & a 2 e & a ...
    public static func positions(_ sixteenths: [Int], minimumBins: Int = 16) -> Histogram {
        let bins = max(minimumBins, (sixteenths.max() ?? -1) + 1)
        var counts = [Int](repeating: 0, count: bins)
        for s in sixteenths where s >= 0 { counts[s] += 1 }
        return Histogram(labels: DrumTab.countLabels(cells: bins, denominator: 4, grid: 16), counts: counts)
    }
}

extension Histogram {
    /// Jensen–Shannon divergence between two distributions over the same bins, in bits:
    /// JS(P, Q) = ½ KL(P ‖ M) + ½ KL(Q ‖ M) with M = (P + Q) / 2 and base-2 logarithms
    /// (0 · log 0 = 0), so 0 for identical distributions and 1 for disjoint ones. Counts are
    /// normalised to shares first. Nil when either histogram is empty or the bins differ.
    public static func jensenShannonBits(_ a: Histogram, _ b: Histogram) -> Double? {
        guard a.counts.count == b.counts.count, a.total > 0, b.total > 0 else { return nil }
        var sum = 0.0
        for (p, q) in zip(a.fractions, b.fractions) {
            let m = (p + q) / 2
            if p > 0 { sum += p * log2(p / m) }
            if q > 0 { sum += q * log2(q / m) }
        }
        return min(1, max(0, sum / 2))
    }
}

extension HitHistograms {
    /// Two histograms over exact values: one bin per value either side has, ascending.
    public static func exact(_ a: [Int: Int], _ b: [Int: Int], label: (Int) -> String = { String($0) })
        -> (Histogram, Histogram)
    {
        let keys = Set(a.keys).union(b.keys).sorted()
        return (Histogram(labels: keys.map(label), counts: keys.map { a[$0] ?? 0 }),
                Histogram(labels: keys.map(label), counts: keys.map { b[$0] ?? 0 }))
    }
}
