// What a model's input and output groups mean. Every model has the note and tick groups
// of the original (the vocabulary's lookup tables); a groove model also has
//   - a position-in-bar input group: where the hit falls in its bar, in slots of
//     `ticksPerSlot` ticks from the bar line (one-hot over the slots, or the slot number in
//     binary, one 2-row group per bit), so the model always knows where the beat is;
//   - a velocity group, in and out: the hit's velocity, binned (bins chosen from the
//     training data so that each holds about the same share of its hits); the input is the
//     current hit's bin, the output the next hit's, and a written velocity is drawn from the
//     training data's velocities within the sampled bin.
//   - a lookback input (two groups, see Lookback.swift): the hit that came next one bar ago,
//     at the same place in the bar, so that repeating the last bar is easy to learn.
// The order is fixed: inputs [note | tick | position | lookback note | lookback tick | velocity],
// outputs [note | tick | velocity] (Wx rows and Wy columns; see ModelLayout.swift).

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

/// How the position in the bar is fed to the model.
public enum PositionEncoding: String, Sendable, CaseIterable {
    /// One one-hot group over the slots.
    case oneHot = "onehot"
    /// The slot number in binary: one group of 2 (bit clear, bit set) per bit, lowest bit first
    /// (like the binary step counters of Magenta's drums_rnn).
    case binary
}

/// The position-in-bar input group.
public struct PositionGroup: Equatable, Sendable {
    public var encoding: PositionEncoding
    /// Positions per bar the model knows: slot s covers ticks [s·ticksPerSlot, (s+1)·ticksPerSlot)
    /// after the bar line.
    public var slots: Int
    public var ticksPerSlot: Int
    /// Ticks per quarter note the positions are measured in (the dataset's --ppq).
    public var ppq: Int
    /// The training data's most common meter: what the sampler assumes unless told.
    public var meter: Meter

    public init(encoding: PositionEncoding, slots: Int, ticksPerSlot: Int, ppq: Int, meter: Meter) {
        self.encoding = encoding
        self.slots = slots
        self.ticksPerSlot = ticksPerSlot
        self.ppq = ppq
        self.meter = meter
    }

    /// Bits of a slot number (binary encoding).
    public var bits: Int { max(1, Int.bitWidth - (slots - 1).leadingZeroBitCount) }

    /// The input group sizes this group adds.
    public var inputGroups: [Int] {
        encoding == .oneHot ? [slots] : [Int](repeating: 2, count: bits)
    }

    /// The slot a hit `tickInBar` ticks after its bar line is read as: the last slot when the bar
    /// is longer than the model knows (`clamped`), the first before the bar line.
    @inline(__always)
    func inputSlot(tickInBar: Int) -> (slot: Int, clamped: Bool) {
        guard tickInBar >= 0 else { return (0, false) }
        let s = tickInBar / ticksPerSlot
        return s < slots ? (s, false) : (slots - 1, true)
    }

    /// The slot of a hit `tickInBar` ticks after its bar line; nil when the bar is longer than
    /// the model knows.
    public func slot(tickInBar: Int) -> Int? {
        guard tickInBar >= 0 else { return nil }
        let s = tickInBar / ticksPerSlot
        return s < slots ? s : nil
    }

    /// The longest bar the model knows, in ticks.
    public var longestBar: Int { slots * ticksPerSlot }

    /// Whether bars of `meter` fit the model's slots.
    public func fits(_ meter: Meter) -> Bool { meter.barTicks(ppq: ppq) <= longestBar }

    public func validate() throws {
        guard (1...65_536).contains(slots) else { throw ModelGroupsError("position slots \(slots) outside 1...65536") }
        guard ticksPerSlot >= 1, ppq >= 1, ppq <= 32_767 else {
            throw ModelGroupsError("position ticks per slot \(ticksPerSlot) or ppq \(ppq) out of range")
        }
    }
}

/// The velocity group (input and output).
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
        if let i = histogram.firstIndex(where: { $0 < 0 }) {
            throw ModelGroupsError("velocity histogram: the count of velocity \(i + 1) is \(histogram[i]), expected a non-negative count")
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
    public var position: PositionGroup?
    /// Needs the position group (bar lengths come with positions).
    public var lookback: LookbackGroup?
    public var velocity: VelocityGroup?
    /// The 16th-note grid layout (GridGroup.swift): when set, the model's groups are the grid's
    /// and none of the event layout's (the vocabulary is kept as the dataset's identity).
    public var grid: GridGroup?

    public init(vocabulary: Vocabulary, position: PositionGroup? = nil, lookback: LookbackGroup? = nil,
                velocity: VelocityGroup? = nil) {
        self.vocabulary = vocabulary
        self.position = position
        self.lookback = lookback
        self.velocity = velocity
    }

    /// A grid-layout model over a dataset with `vocabulary`.
    public init(vocabulary: Vocabulary, grid: GridGroup) {
        self.vocabulary = vocabulary
        self.grid = grid
    }

    /// The original 2017 layout: (note, tick) in and out.
    public var isOriginalLayout: Bool { position == nil && lookback == nil && velocity == nil && grid == nil }

    /// Ticks per quarter note of the model's tick values: its dataset's PPQ, recorded with the
    /// position or grid group; a model without one is taken to be at 480 (convert-midi's default).
    public var ticksPerQuarter: Int { grid?.ppq ?? position?.ppq ?? 480 }

    /// The meter the sampler assumes unless told: the training data's most common one,
    /// recorded with the position group; 4/4 without one.
    public var defaultMeter: Meter { position?.meter ?? .common }

    /// The model's sizes at hidden size `hidden` with `layers` stacked LSTM layers.
    public func shape(hidden: Int, layers: Int = 1) -> ModelShape {
        if let grid {
            return ModelShape(inputGroups: grid.inputGroups, outputGroups: grid.outputGroups, hidden: hidden, layers: layers,
                              targetColumns: grid.targetInputs, lossGroups: grid.outputGroups.count)
        }
        var inputs = [vocabulary.notes, vocabulary.ticks], outputs = inputs
        if let p = position { inputs += p.inputGroups }
        if lookback != nil { inputs += [vocabulary.notes + 1, vocabulary.ticks + 1] }
        if let v = velocity {
            inputs.append(v.bins.count)
            outputs.append(v.bins.count)
        }
        return ModelShape(inputGroups: inputs, outputGroups: outputs, hidden: hidden, layers: layers)
    }

    /// Names of the input groups in Wx row order ("note", "tick", "position" or
    /// "position_bit0", "position_bit1", …, "lookback_note", "lookback_tick", "velocity").
    public var inputNames: [String] {
        if let grid { return grid.inputNames }
        var names = ["note", "tick"]
        if let p = position {
            names += p.encoding == .oneHot ? ["position"] : (0..<p.bits).map { "position_bit\($0)" }
        }
        if lookback != nil { names += ["lookback_note", "lookback_tick"] }
        if velocity != nil { names.append("velocity") }
        return names
    }

    /// Names of the output groups in Wy column order ("note", "tick", "velocity").
    public var outputNames: [String] {
        if let grid { return grid.outputNames }
        return velocity == nil ? ["note", "tick"] : ["note", "tick", "velocity"]
    }

    /// For each output group, the input group (column of the class matrix) holding its target:
    /// note and tick are inputs 0 and 1; the velocity output is the last input.
    var targetInputs: [Int] {
        if let grid { return grid.targetInputs }
        let k = inputNames.count
        return velocity == nil ? [0, 1] : [0, 1, k - 1]
    }

    public func validate() throws {
        if let grid {
            guard position == nil, lookback == nil, velocity == nil else {
                throw ModelGroupsError("the grid layout has no position, lookback or velocity group of the event layout")
            }
            try grid.validate()
        }
        try position?.validate()
        try lookback?.validate()
        if lookback != nil, position == nil { throw ModelGroupsError("the lookback group needs the position group") }
        try velocity?.validate()
    }
}
