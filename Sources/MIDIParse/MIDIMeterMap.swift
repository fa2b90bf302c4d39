// Meter map: the time-signature counterpart of MIDITempoMap. Says which bar a tick of the
// merged time line falls in, where in that bar, and where bars start.
//
// Rules:
// - 4/4 from tick 0 until the first time signature (SMF 1.0's default).
// - A time signature takes effect at its tick; at equal ticks the last one wins.
// - A change on a bar line starts its first bar there. A change that does not fall on a
//   bar line (a defect some files have) starts a new bar at its tick: the bar it
//   interrupts is cut short.
// - Bar length in ticks = numerator × ticksPerQuarter × 4 / denominator, rounded to the
//   nearest tick (exact for every PPQ divisible by denominator / 4), at least 1 tick.
// - PPQ files work in their own ticks. SMPTE files have no ticks per quarter note; they
//   are treated as having a nominal one: their ticks per second × the tempo at tick 0 (the
//   default 120 BPM when there is none). Later tempo changes do not move bar lines there.
// - Time signatures with a numerator of 0 or a denominator above 128 (2^7) are ignored.
// - Ticks before 0 are read as tick 0. Positions never overflow: bar indices divide.

/// Where a tick lies in the bar structure.
public struct MIDIBarPosition: Equatable, Sendable {
    /// 0-based bar index.
    public var bar: Int
    /// Ticks since the start of the bar, 0 ..< barTicks.
    public var tickInBar: Int
    /// Length of a whole bar of this meter in ticks (a bar cut short by an off-bar
    /// time-signature change still reports its meter's full length).
    public var barTicks: Int
    /// Length of this bar in ticks: `barTicks`, or less for a bar cut short by an off-bar
    /// time-signature change (it ends where the change is).
    public var length: Int
    public var numerator: Int
    public var denominator: Int

    public init(bar: Int, tickInBar: Int, barTicks: Int, length: Int? = nil, numerator: Int, denominator: Int) {
        self.bar = bar
        self.tickInBar = tickInBar
        self.barTicks = barTicks
        self.length = length ?? barTicks
        self.numerator = numerator
        self.denominator = denominator
    }

    /// Position within the bar as a fraction 0 ..< 1.
    public var fraction: Double { Double(tickInBar) / Double(barTicks) }
}

public struct MIDIMeterMap: Sendable {
    /// A run of bars of one meter: bars startBar, startBar + 1, ... start at startTick,
    /// startTick + barTicks, ... until the next segment.
    public struct Segment: Equatable, Sendable {
        public var startTick: Int
        var startBar: Int
        public var barTicks: Int
        public var numerator: Int
        public var denominator: Int
    }

    /// Ticks per quarter note used for bar lengths (the PPQ, or the SMPTE nominal value).
    public let ticksPerQuarter: Int
    /// At least one segment; the first starts at tick 0, bar 0.
    public let segments: [Segment]

    /// - Parameters:
    ///   - ticksPerQuarter: resolution (values below 1 are read as 1).
    ///   - changes: time signatures in any order; equal ticks keep their given order, so the
    ///     last one given wins.
    public init(ticksPerQuarter: Int, changes: [(tick: Int, numerator: Int, denominator: Int)]) {
        let tpq = max(1, ticksPerQuarter)
        self.ticksPerQuarter = tpq
        func barTicks(_ num: Int, _ den: Int) -> Int {
            // num ≤ 2^20 and tpq ≤ Int.max / 2^23 keep this product in range.
            let (whole, overflow) = (num * 4).multipliedReportingOverflow(by: tpq)
            guard !overflow else { return Int.max }
            return max(1, (whole + den / 2) / den)
        }
        var segs = [Segment(startTick: 0, startBar: 0, barTicks: barTicks(4, 4), numerator: 4, denominator: 4)]
        let valid = changes.enumerated()
            .filter { (1...(1 << 20)).contains($0.element.numerator) && (1...128).contains($0.element.denominator) }
            .sorted { $0.element.tick != $1.element.tick ? $0.element.tick < $1.element.tick : $0.offset < $1.offset }
            .map(\.element)
        for c in valid {
            let t = max(0, c.tick)
            let ticks = barTicks(c.numerator, c.denominator)
            let last = segs[segs.count - 1]
            if t == last.startTick {
                segs[segs.count - 1] = Segment(startTick: t, startBar: last.startBar, barTicks: ticks,
                                               numerator: c.numerator, denominator: c.denominator)
                continue
            }
            let elapsed = t - last.startTick
            let onBarLine = elapsed % last.barTicks == 0
            if onBarLine, last.numerator == c.numerator, last.denominator == c.denominator { continue }
            let bar = last.startBar + elapsed / last.barTicks + (onBarLine ? 0 : 1)
            segs.append(Segment(startTick: t, startBar: bar, barTicks: ticks,
                                numerator: c.numerator, denominator: c.denominator))
        }
        // A change replaced at its own tick may now repeat the meter before it on a bar line.
        var merged: [Segment] = [segs[0]]
        for s in segs.dropFirst() {
            let p = merged[merged.count - 1]
            if p.numerator == s.numerator, p.denominator == s.denominator,
               (s.startTick - p.startTick) % p.barTicks == 0,
               s.startBar == p.startBar + (s.startTick - p.startTick) / p.barTicks {
                continue
            }
            merged.append(s)
        }
        segments = merged
    }

    /// The time signatures of all tracks on the merged time line (see the rules above).
    public init(file: MIDIFile) {
        let changes = file.timeSignatureChanges
        let tpq: Int
        switch file.division {
        case .ppq(let ppq):
            tpq = ppq
        case .smpte:
            let perSecond = file.division.smpteTicksPerSecond ?? 1
            let tempo = file.tempoMap
            let us = tempo.changes.last(where: { $0.tick <= 0 && $0.microsecondsPerQuarter > 0 })?.microsecondsPerQuarter
                ?? MIDITempoMap.defaultMicrosecondsPerQuarter
            tpq = max(1, Int((perSecond * Double(us) / 1e6).rounded()))
        }
        self.init(ticksPerQuarter: tpq, changes: changes)
    }

    /// Index of the segment holding `tick` (the last one starting at or before it).
    private func segmentIndex(tick: Int) -> Int {
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if segments[mid].startTick <= tick { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    public func position(atTick tick: Int) -> MIDIBarPosition {
        let t = max(0, tick)
        let k = segmentIndex(tick: t), s = segments[k]
        let elapsed = t - s.startTick, tickInBar = elapsed % s.barTicks
        // The next segment may start before this bar's end (an off-bar change cuts it short).
        let left = k + 1 < segments.count ? segments[k + 1].startTick - (t - tickInBar) : Int.max
        return MIDIBarPosition(bar: s.startBar + elapsed / s.barTicks, tickInBar: tickInBar,
                               barTicks: s.barTicks, length: min(s.barTicks, left), numerator: s.numerator, denominator: s.denominator)
    }

    /// The tick where bar `bar` (0-based) starts; Int.max when that lies beyond Int's range.
    public func startTick(ofBar bar: Int) -> Int {
        let b = max(0, bar)
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if segments[mid].startBar <= b { lo = mid } else { hi = mid - 1 }
        }
        let s = segments[lo]
        let (offset, o1) = (b - s.startBar).multipliedReportingOverflow(by: s.barTicks)
        let (tick, o2) = s.startTick.addingReportingOverflow(offset)
        return o1 || o2 ? Int.max : tick
    }

    /// Start ticks of every bar that starts at or before `tick`, in order (bar 0 at tick 0
    /// first). The array has one entry per bar: bound `tick` by what you draw.
    public func barStartTicks(through tick: Int) -> [Int] {
        guard tick >= 0 else { return [] }
        var out: [Int] = []
        var bar = 0
        while true {
            let t = startTick(ofBar: bar)
            guard t <= tick, t != Int.max else { break }
            out.append(t)
            bar += 1
        }
        return out
    }
}

extension MIDIFile {
    /// The time signatures of all tracks on the merged time line, in (tick, track, order in
    /// track) order: (tick, numerator, denominator = 2^power). Signatures with a power above 7
    /// are left out.
    var timeSignatureChanges: [(tick: Int, numerator: Int, denominator: Int)] {
        let starts = trackStartTicks
        var changes: [(tick: Int, numerator: Int, denominator: Int)] = []
        for (t, track) in tracks.enumerated() {
            for e in track.events {
                if case .meta(.timeSignature(let num, let power, _, _)) = e.kind, power <= 7 {
                    changes.append((e.tick + starts[t], Int(num), 1 << Int(power)))
                }
            }
        }
        if tracks.count > 1 { MIDIFile.stableSortByTick(&changes, tick: \.tick) }
        return changes
    }
}
