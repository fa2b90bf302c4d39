// What a model's input and output groups mean. Every model has the note and tick groups
// of the original (the vocabulary's lookup tables): the 2017 layout reads and predicts just
// those; a grid model (GridGroup.swift) keeps the vocabulary as its dataset's identity and has
// the grid's groups instead.

/// A meter, e.g. 4/4 or 6/8: `numerator` beats of a 1/`denominator` note per bar.
public struct Meter: Equatable, Hashable, Sendable, CustomStringConvertible {
    public let numerator: Int
    /// A power of two.
    public let denominator: Int

    public init?(numerator: Int, denominator: Int) {
        guard (1...64).contains(numerator), (1...64).contains(denominator), denominator & (denominator - 1) == 0 else {
            return nil
        }
        self.numerator = numerator
        self.denominator = denominator
    }

    /// Parses "N/D".
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]) else { return nil }
        self.init(numerator: n, denominator: d)
    }

    public static let common = Meter(numerator: 4, denominator: 4)!

    /// Ticks in one bar at `ppq` ticks per quarter note.
    public func barTicks(ppq: Int) -> Int { numerator * ppq * 4 / denominator }

    public var description: String { "\(numerator)/\(denominator)" }
}

/// Velocity bins (a grid model's per-class velocity groups).
public struct VelocityGroup: Equatable, Sendable {
    /// Bin b holds velocities bins[b]: consecutive, ascending, within 1...127.
    public var bins: [ClosedRange<Int>]
    /// How many hits of the training data had each velocity 1...127 (index v − 1).
    public var histogram: [Int]

    public init(bins: [ClosedRange<Int>], histogram: [Int]) throws {
        self.bins = bins
        self.histogram = histogram
        try validate()
    }

    public func validate() throws {
        guard !bins.isEmpty, bins.count <= 127 else { throw ModelGroupsError("velocity bins: \(bins.count), expected 1...127") }
        guard histogram.count == 127 else {
            throw ModelGroupsError("velocity histogram: \(histogram.count) counts, expected 127 non-negative counts")
        }
        // At most 2^31 − 1 each (as a checkpoint stores them): the sampler's draw adds them up.
        if let i = histogram.firstIndex(where: { !(0...Int(Int32.max)).contains($0) }) {
            throw ModelGroupsError("velocity histogram: the count of velocity \(i + 1) is \(histogram[i]), expected a count 0...\(Int32.max)")
        }
        guard bins.first!.lowerBound >= 1, bins.last!.upperBound <= 127 else {
            throw ModelGroupsError("velocity bins must lie within 1...127")
        }
        for (a, b) in zip(bins, bins.dropFirst()) where b.lowerBound != a.upperBound + 1 {
            throw ModelGroupsError("velocity bins \(a) and \(b) are not consecutive")
        }
    }

    /// The velocities the bins cover (the training data's range).
    public var range: ClosedRange<Int> { bins.first!.lowerBound...bins.last!.upperBound }

    /// The bin holding `velocity`, nil outside `range`.
    public func bin(of velocity: Int) -> Int? {
        guard range.contains(velocity) else { return nil }
        var lo = 0, hi = bins.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if bins[mid].upperBound < velocity { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// A velocity of bin `b` drawn from the training data's velocities in it with a uniform
    /// number u in [0, 1) (the bin's middle when the data had none there).
    public func velocity(bin b: Int, uniform u: Double) -> Int {
        let r = bins[b]
        guard let i = Softmax.draw(count: r.count, counts: { histogram[r.lowerBound + $0 - 1] }, uniform: u) else {
            return (r.lowerBound + r.upperBound) / 2
        }
        return r.lowerBound + i
    }

    /// Up to `count` bins over the velocities of `histogram`, each holding about the same share of
    /// the hits (quantiles; a velocity is never split between bins, so very common values may
    /// make fewer, wider bins), covering the lowest to the highest velocity seen.
    public static func quantileBins(histogram: [Int], count: Int) throws -> VelocityGroup {
        precondition(histogram.count == 127 && count >= 1)
        let total = histogram.reduce(0, +)
        guard total > 0, let low = histogram.firstIndex(where: { $0 > 0 }), let high = histogram.lastIndex(where: { $0 > 0 }) else {
            throw ModelGroupsError("no velocities to choose bins from")
        }
        var bins: [ClosedRange<Int>] = []
        var start = low + 1, acc = 0
        for v in (low + 1)...(high + 1) {
            acc += histogram[v - 1]
            // Close a bin once it reaches the next quantile (and leave the rest for the last bin).
            if bins.count < count - 1, v < high + 1, Double(acc) >= Double(total) * Double(bins.count + 1) / Double(count) {
                bins.append(start...v)
                start = v + 1
            }
        }
        bins.append(start...(high + 1))
        return try VelocityGroup(bins: bins, histogram: histogram)
    }
}

public struct ModelGroupsError: Error, CustomStringConvertible, Equatable, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The groups of a model and their tables.
public struct ModelGroups: Equatable, Sendable {
    public var vocabulary: Vocabulary
    /// The 16th-note grid layout (GridGroup.swift): when set, the model's groups are the grid's;
    /// nil: the 2017 layout's (note, tick).
    public var grid: GridGroup?

    /// The original 2017 layout: (note, tick) in and out.
    public init(vocabulary: Vocabulary) {
        self.vocabulary = vocabulary
    }

    /// A grid-layout model over a dataset with `vocabulary`.
    public init(vocabulary: Vocabulary, grid: GridGroup) {
        self.vocabulary = vocabulary
        self.grid = grid
    }

    /// The original 2017 layout: (note, tick) in and out.
    public var isOriginalLayout: Bool { grid == nil }

    /// Ticks per quarter note of the model's tick values: its dataset's PPQ, recorded with the
    /// grid group; a model without one is taken to be at 480 (convert-midi's default).
    public var ticksPerQuarter: Int { grid?.ppq ?? 480 }

    /// The model's sizes at hidden size `hidden` with `layers` stacked LSTM layers.
    public func shape(hidden: Int, layers: Int = 1) -> ModelShape {
        if let grid {
            return ModelShape(inputGroups: grid.inputGroups, outputGroups: grid.outputGroups, hidden: hidden, layers: layers,
                              targetColumns: grid.targetInputs, lossGroups: grid.outputGroups.count)
        }
        let groups = [vocabulary.notes, vocabulary.ticks]
        return ModelShape(inputGroups: groups, outputGroups: groups, hidden: hidden, layers: layers)
    }

    /// Names of the input groups in Wx row order ("note", "tick" for the 2017 layout).
    public var inputNames: [String] { grid?.inputNames ?? ["note", "tick"] }

    /// Names of the output groups in Wy column order ("note", "tick" for the 2017 layout).
    public var outputNames: [String] { grid?.outputNames ?? ["note", "tick"] }

    /// For each output group, the input group (column of the class matrix) holding its target.
    var targetInputs: [Int] { grid?.targetInputs ?? [0, 1] }

    public func validate() throws {
        try grid?.validate()
    }
}
