// The 16th-note grid layout: one model step is one 16th note of a 4/4 bar, and
// what it plays is the set of Magenta's 9 drum classes struck there (one of 512 hit sets, as
// drums_rnn encodes a step), with a velocity bin and a micro-timing offset class per class hit.
// An offset class is one of F offset bins for a single hit, or one of F more for two hits of
// the class in that 16th (a drag, a 32nd-note hi-hat): the first at the bin's offset, the
// second a 32nd note (ticksPerStep/2) later, at the same velocity.
// A model that reads one hit per step (the 2017 layout, and the event layout tried after it)
// does not hold a pattern over bars; a step grid with a lookback of bars before does
// (docs/research.md).
//
// Row s of the class matrix is the input for predicting step s + 1 (s = −1: the start of a
// file, nothing played yet). Input groups, in Wx row order (C = 9 classes, V velocity bins,
// F offset bins):
//   hits                 513  step s's hit set (bit c = class c hit), 512 = start of a file
//   velocity_<class>  C×(V+1) step s's velocity bin of each class, V = not hit
//   offset_<class>   C×(2F+1) step s's offset class of each class, 2F = not hit
//   position              16  the 16th of step s + 1 in its bar
//   phrase                 8  the bar of step s + 1 in its 8-bar phrase (bars counted from the file's first)
//   lookback_1           513  the hit set one bar before step s + 1 (512: before the start)
//   lookback_2           513  two bars before
//     (lookback classes: lookback_1_<class> and lookback_2_<class>, C×3 each instead: whether
//     the class was hit there, 0 no, 1 yes, 2 before the start; lookback velocities: the same
//     groups, C×(V+2) each: the velocity bin it was hit at, V not hit, V + 1 before the start;
//     `lookbackBars` [1, 2, 4]: a third set of groups, lookback_4…, four bars before)
//   repeat_1, repeat_2     2  whether step s's hit set equals the one a bar / two bars before it
//   style             styles  the file's style (only with a style input: GridStyles.swift)
// Output groups, in Wy column order: hits 512, velocity_<class> C×V, offset_<class> C×2F; each
// predicts the same-named input of row s + 1. A target equal to its output group's size (a
// class not hit, the start of the next file) is not predicted: it adds no loss and no gradient.
//
// Times are ticks at `ppq` (the dataset's). A step's hit of class c at offset o sounds at
// step·ticksPerStep + o ticks from the first bar line; o lies in [−ticksPerStep/2, ticksPerStep/2).

/// How a grid model reads the hit sets one and two bars back.
public enum GridLookback: String, CaseIterable, Sendable {
    /// One group of 513 per bar back: the hit set (one of 512) or "before the start". A set the
    /// training data hardly has gets a barely trained row (the first grid models).
    case hitSets = "hit-sets"
    /// One group of 3 per class and bar back (not hit, hit, before the start): 54 rows instead of
    /// 1,026, and copying a bar back is the same few weights for every set, rare ones included
    /// (the prototypes' multi-hot lookback).
    case classes
    /// One group of V + 2 per class and bar back (the velocity bin the class was hit at, not hit,
    /// before the start): the classes lookback that also tells how loud each hit was, so the
    /// touch of the bars before can be carried over as their pattern is.
    case velocities
}

/// The grid layout's tables: sizes, velocity bins, offset bins and the notes it writes.
public struct GridGroup: Equatable, Sendable {
    /// Drum classes (Magenta's 9: kick, snare, closed and open hi-hat, low, mid and high tom,
    /// crash, ride).
    public static let classCount = 9
    /// Hit sets: every subset of the classes.
    public static let hitSets = 1 << classCount
    /// The hits class meaning "start of a file" (inputs only).
    public static let startOfFile = hitSets
    /// 16ths per 4/4 bar.
    public static let stepsPerBar = 16
    /// Bars per phrase.
    public static let phraseBars = 8
    /// Whether bar `bar` (0-based, counted from the file's first) is a fill bar: the 4th or 8th
    /// of its phrase, where the corpus's drummers play their fills (`drummer stats`' fill figure).
    public static func isFillBar(_ bar: Int) -> Bool { bar % 4 == 3 }
    /// Names of the classes in group names ("velocity_kick", …).
    public static let classNames = ["kick", "snare", "hihat_closed", "hihat_open", "tom_low", "tom_mid", "tom_high",
                                    "crash", "ride"]

    /// Ticks per quarter note of the steps and offsets.
    public var ppq: Int
    /// Velocity bins, shared by every class (chosen from the training hits).
    public var velocity: VelocityGroup
    /// The offset written for each offset bin, in ticks (bin b covers
    /// [−T/2 + b·T/F, −T/2 + (b+1)·T/F) for T = ticksPerStep, F = offsets.count; its value is the
    /// training data's mean offset in it).
    public var offsets: [Int]
    /// Each class's own MIDI note (written when the class had no training hits).
    public var notes: [Int]
    /// How often each MIDI note 0...127 was the note of each class's training hits (classCount
    /// rows of 128): a written hit's note is drawn from its class's row, so that a kit's
    /// several snare or tom notes come back in the data's proportions.
    public var noteCounts: [[Int]]
    /// How often the classes hit in one step take their offsets together, in [0, 1]: the share of
    /// steps whose offsets the sampler draws with one uniform number for every class (classes
    /// with alike offset distributions then land on the same tick), the rest independently.
    /// Chosen from the training data so that two classes hit in one step share their offset bin
    /// as often as there (`TrainingData.gridGroup`).
    public var offsetCoupling: Double
    /// How the lookback inputs read the bars before (files without the key: hit sets).
    public var lookback: GridLookback
    /// The bars back the lookback inputs read, increasing (files without the key: 1 and 2).
    public var lookbackBars: [Int]
    /// The first grid models' bars back.
    public static let defaultLookbackBars = [1, 2]
    /// Whether `bars` can be a model's bars back: 1 to 8 increasing numbers, each 1...64.
    public static func validLookbackBars(_ bars: [Int]) -> Bool {
        !bars.isEmpty && bars.count <= 8 && bars.allSatisfy { (1...64).contains($0) } && zip(bars, bars.dropFirst()).allSatisfy { $0 < $1 }
    }
    /// The styles of the style input; nil: the model has none.
    public var styles: GridStyles?

    public init(ppq: Int, velocity: VelocityGroup, offsets: [Int], notes: [Int], noteCounts: [[Int]]? = nil,
                offsetCoupling: Double = 0, lookback: GridLookback = .hitSets, lookbackBars: [Int] = defaultLookbackBars,
                styles: GridStyles? = nil) throws {
        self.ppq = ppq
        self.lookback = lookback
        self.lookbackBars = lookbackBars
        self.styles = styles
        self.velocity = velocity
        self.offsets = offsets
        self.notes = notes
        self.offsetCoupling = offsetCoupling
        self.noteCounts = noteCounts ?? notes.map { n in (0..<128).map { $0 == n ? 1 : 0 } }
        try validate()
    }

    /// The note of a hit of class `c`, drawn from its training notes with a uniform u in [0, 1).
    public func note(class c: Int, uniform u: Double) -> Int {
        let row = noteCounts[c]
        return Softmax.draw(count: row.count, counts: { row[$0] }, uniform: u) ?? notes[c]
    }

    public var ticksPerStep: Int { ppq / 4 }
    public var velocityBins: Int { velocity.bins.count }
    public var offsetBins: Int { offsets.count }
    /// Offset classes: a single hit in each offset bin, then two hits from each bin.
    public var offsetClasses: Int { 2 * offsets.count }

    /// The offset class of a hit in bin `bin`, doubled or not.
    public func offsetClass(bin: Int, double: Bool) -> Int { double ? offsetBins + bin : bin }

    /// How many hits an offset class writes: one, or two a 32nd apart.
    public func onsetCount(offsetClass k: Int) -> Int { k < offsetBins ? 1 : 2 }

    /// Onset `i` (ticks from the step) of the `onsetCount` an offset class writes (no array: the
    /// sampler calls it once per hit, and a runtime step allocates nothing).
    public func onset(offsetClass k: Int, hit i: Int) -> Int {
        let f = offsetBins
        return k < f ? offsets[k] : offsets[k - f] + i * (ticksPerStep / 2)
    }

    /// The offset bin of `offset` ticks from its step (clamped to the bins).
    public func offsetBin(of offset: Int) -> Int { Self.offsetBin(of: offset, ticksPerStep: ticksPerStep, bins: offsetBins) }

    /// The bin of `offset` among `bins` offset bins of a 16th of `T` ticks (clamped to the bins).
    public static func offsetBin(of offset: Int, ticksPerStep T: Int, bins f: Int) -> Int {
        min(max((offset + T / 2) * f / T, 0), f - 1)
    }

    /// The first whole tick of offset bin `b` of `bins` (a 16th of `T` ticks).
    public static func offsetBinStart(_ b: Int, ticksPerStep T: Int, bins f: Int) -> Int { -T / 2 + (b * T + f - 1) / f }

    public var inputGroups: [Int] {
        let c = Self.classCount
        let lookbacks: [Int]
        let bars = lookbackBars.count
        switch lookback {
        case .hitSets: lookbacks = [Int](repeating: Self.hitSets + 1, count: bars)
        case .classes: lookbacks = [Int](repeating: 3, count: bars * c)
        case .velocities: lookbacks = [Int](repeating: velocityBins + 2, count: bars * c)
        }
        return [Self.hitSets + 1] + [Int](repeating: velocityBins + 1, count: c) + [Int](repeating: offsetClasses + 1, count: c)
            + [Self.stepsPerBar, Self.phraseBars] + lookbacks + [2, 2] + (styles.map { [$0.count] } ?? [])
    }

    public var outputGroups: [Int] {
        let c = Self.classCount
        return [Self.hitSets] + [Int](repeating: velocityBins, count: c) + [Int](repeating: offsetClasses, count: c)
    }

    public var inputNames: [String] {
        ["hits"] + Self.classNames.map { "velocity_" + $0 } + Self.classNames.map { "offset_" + $0 }
            + ["position", "phrase"]
            + (lookback == .hitSets ? lookbackBars.map { "lookback_\($0)" }
                : lookbackBars.flatMap { k in Self.classNames.map { "lookback_\(k)_" + $0 } })
            + ["repeat_1", "repeat_2"] + (styles == nil ? [] : ["style"])
    }

    public var outputNames: [String] {
        ["hits"] + Self.classNames.map { "velocity_" + $0 } + Self.classNames.map { "offset_" + $0 }
    }

    /// Output group g predicts input column targetInputs[g] of the next row.
    public var targetInputs: [Int] { Array(0..<(1 + 2 * Self.classCount)) }

    public func validate() throws {
        guard ppq >= 4, ppq % 4 == 0, ppq <= 32_767 else {
            throw ModelGroupsError("grid ppq \(ppq): expected a multiple of 4 (a 16th note is ppq/4 ticks)")
        }
        try velocity.validate()
        guard (1...64).contains(offsets.count), offsets.count <= ticksPerStep else {
            throw ModelGroupsError("grid offset bins: \(offsets.count), expected 1...\(min(64, ticksPerStep))")
        }
        // Within the 16th first (offsetBin clamps, and would overflow on a huge value).
        for (b, o) in offsets.enumerated() where !(-ticksPerStep / 2..<(ticksPerStep - ticksPerStep / 2)).contains(o) || offsetBin(of: o) != b {
            throw ModelGroupsError("grid offset \(o) of bin \(b) lies outside that bin")
        }
        guard notes.count == Self.classCount, notes.allSatisfy({ (0...127).contains($0) }) else {
            throw ModelGroupsError("grid notes: expected \(Self.classCount) MIDI notes 0...127, got \(notes)")
        }
        // A note is one class's: the written MIDI reads back (tab, report, a primer) by note, and a
        // note two classes wrote would come back as one of them.
        for j in notes.indices {
            if let i = notes[..<j].firstIndex(of: notes[j]) {
                throw ModelGroupsError("grid notes: note \(notes[j]) is the note of both \(Self.classNames[i]) and \(Self.classNames[j])")
            }
        }
        guard offsetCoupling >= 0, offsetCoupling <= 1 else {
            throw ModelGroupsError("grid offset coupling \(offsetCoupling) outside [0, 1]")
        }
        guard noteCounts.count == Self.classCount, noteCounts.allSatisfy({ $0.count == 128 && $0.allSatisfy { (0...Int(Int32.max)).contains($0) } }) else {
            throw ModelGroupsError("grid note counts: expected \(Self.classCount) rows of 128 non-negative counts")
        }
        for n in 0..<128 {
            let classes = (0..<Self.classCount).filter { noteCounts[$0][n] > 0 }
            if classes.count > 1 {
                throw ModelGroupsError("grid note counts: note \(n) is counted for both \(Self.classNames[classes[0]]) and \(Self.classNames[classes[1]])")
            }
        }
        guard Self.validLookbackBars(lookbackBars) else {
            throw ModelGroupsError("grid lookback bars \(lookbackBars): expected 1 to 8 increasing numbers of bars back, each 1...64")
        }
        try styles?.validate()
    }
}

/// What a grid model has played so far: per step, its hit set and each class's velocity and
/// offset bin (−1 where the class is not hit). Built from a file by the dataset view and one
/// step at a time by the sampler; `GridEncoder` reads it. Steps are numbered from the first; a
/// sampler that plays for long drops the steps its model no longer reads (`forget(before:)`),
/// so that its memory does not grow with the file.
public struct GridSequence: Equatable, Sendable {
    /// The steps from `first` on, one after another.
    private var hitSets: [Int32] = []
    /// classCount per step.
    private var velocityBins: [Int32] = []
    /// Offset classes (GridGroup.offsetClass), classCount per step.
    private var offsetClasses: [Int32] = []
    /// The first step still kept (0 until steps are forgotten).
    public private(set) var first = 0
    /// The style the sequence plays (read only by a model with a style input).
    public var style: Int = 0

    public init(style: Int = 0) { self.style = style }

    /// Steps played (forgotten ones included).
    public var count: Int { first + hitSets.count }

    /// Appends a step: `velocity(c)` (a bin) and `offset(c)` (an offset class) are read for the
    /// classes in `hitSet` only.
    public mutating func append(hitSet: Int, velocity: (Int) -> Int, offset: (Int) -> Int) {
        precondition((0..<GridGroup.hitSets).contains(hitSet))
        hitSets.append(Int32(hitSet))
        for c in 0..<GridGroup.classCount {
            let hit = hitSet & (1 << c) != 0
            velocityBins.append(hit ? Int32(velocity(c)) : -1)
            offsetClasses.append(hit ? Int32(offset(c)) : -1)
        }
    }

    /// Drops the steps before `step` (those at or after it stay readable; nothing happens if they
    /// are gone already).
    public mutating func forget(before step: Int) {
        let n = min(step, count) - first
        guard n > 0 else { return }
        hitSets.removeFirst(n)
        velocityBins.removeFirst(n * GridGroup.classCount)
        offsetClasses.removeFirst(n * GridGroup.classCount)
        first += n
    }

    /// Keeps at least the last `steps` steps readable, forgetting older ones a window at a time
    /// (once twice `steps` are kept), so that a sampler's memory stays bounded at little copying.
    public mutating func keepLast(_ steps: Int) {
        if count - first >= 2 * steps { forget(before: count - steps) }
    }

    public func hitSet(step s: Int) -> Int32 { hitSets[s - first] }
    public func velocityBin(step s: Int, class c: Int) -> Int32 { velocityBins[(s - first) * GridGroup.classCount + c] }
    public func offsetClass(step s: Int, class c: Int) -> Int32 { offsetClasses[(s - first) * GridGroup.classCount + c] }
}

extension GridGroup {
    /// How many steps back from step s row s reads (s itself included): the lookback's bars back
    /// from s + 1, and the repeat flags' two bars back from s.
    public var stepsRead: Int { max((lookbackBars.last ?? 0) * Self.stepsPerBar - 1, 2 * Self.stepsPerBar) + 1 }
}

/// Turns a grid sequence into class-matrix rows (the trainer's and the sampler's inputs).
public struct GridEncoder: Sendable {
    public let group: GridGroup
    /// Columns per row.
    public let inputCount: Int

    public init(group: GridGroup) {
        self.group = group
        inputCount = group.inputGroups.count
    }

    /// Writes row `s` (−1 ..< seq.count): the input for predicting step s + 1.
    public func encode(row s: Int, of seq: GridSequence, into out: UnsafeMutableBufferPointer<Int32>) {
        let C = GridGroup.classCount, V = Int32(group.velocityBins), F = Int32(group.offsetClasses)
        let start = Int32(GridGroup.startOfFile)
        precondition(s >= -1 && s < seq.count && out.count >= inputCount)
        if s < 0 {
            out[0] = start
            for c in 0..<C {
                out[1 + c] = V
                out[1 + C + c] = F
            }
        } else {
            out[0] = seq.hitSet(step: s)
            for c in 0..<C {
                let v = seq.velocityBin(step: s, class: c), o = seq.offsetClass(step: s, class: c)
                out[1 + c] = v < 0 ? V : v
                out[1 + C + c] = o < 0 ? F : o
            }
        }
        let next = s + 1, k = 1 + 2 * C
        out[k] = Int32(next % GridGroup.stepsPerBar)
        out[k + 1] = Int32((next / GridGroup.stepsPerBar) % GridGroup.phraseBars)
        let bar = GridGroup.stepsPerBar
        var r = k + 2
        // (Indices, not `for back in`: an array's iterator allocates in an unoptimized build, and
        // the sampler encodes a row per step.)
        for i in group.lookbackBars.indices {
            let t = next - group.lookbackBars[i] * bar
            switch group.lookback {
            case .hitSets:
                out[r] = t >= 0 ? seq.hitSet(step: t) : start
                r += 1
            case .classes:
                for c in 0..<C { out[r + c] = t >= 0 ? (seq.hitSet(step: t) >> Int32(c)) & 1 : 2 }
                r += C
            case .velocities:
                for c in 0..<C {
                    let v = t >= 0 ? seq.velocityBin(step: t, class: c) : -1
                    out[r + c] = t < 0 ? V + 1 : v < 0 ? V : v
                }
                r += C
            }
        }
        out[r] = s >= bar && seq.hitSet(step: s) == seq.hitSet(step: s - bar) ? 1 : 0
        out[r + 1] = s >= 2 * bar && seq.hitSet(step: s) == seq.hitSet(step: s - 2 * bar) ? 1 : 0
        if let styles = group.styles {
            precondition((0..<styles.count).contains(seq.style))
            out[r + 2] = Int32(seq.style)
        }
    }

    /// Rows −1 ..< seq.count, one after another.
    public func rows(of seq: GridSequence) -> [Int32] {
        let k = inputCount
        var out = [Int32](repeating: 0, count: (seq.count + 1) * k)
        out.withUnsafeMutableBufferPointer { o in
            for s in -1..<seq.count {
                encode(row: s, of: seq, into: UnsafeMutableBufferPointer(rebasing: o[((s + 1) * k)..<((s + 2) * k)]))
            }
        }
        return out
    }
}

/// A hit placed on the grid: class `drumClass` at `step` with its velocity, offset (ticks from
/// the step) and note; `double` when more hits of the class fall in that 16th.
public struct GridHit: Equatable, Sendable {
    public var step: Int
    public var drumClass: Int
    public var velocity: Int
    public var offset: Int
    public var note: Int
    public var double: Bool = false
    /// Index of the hit in the list it came from (the first of its cell's).
    public var source: Int = 0

    public init(step: Int, drumClass: Int, velocity: Int, offset: Int, note: Int, double: Bool = false, source: Int = 0) {
        self.step = step
        self.drumClass = drumClass
        self.velocity = velocity
        self.offset = offset
        self.note = note
        self.double = double
        self.source = source
    }
}

extension GridGroup {
    /// The cells of hits given as (onset ticks from the grid's first bar line, class, velocity,
    /// note), onsets non-decreasing: step = ⌊(onset + T/2) / T⌋ for T = ticksPerStep; the first
    /// hit of a class in a step gives the cell its velocity, offset and note, and any further
    /// one makes it a double. `cell[i]` is the index (in the result) of hit i's cell.
    public static func cells(ticksPerStep T: Int, onsets: [Int], classes: [Int], velocities: [Int], notes: [Int])
        -> (hits: [GridHit], cell: [Int])
    {
        var hits: [GridHit] = [], cell: [Int] = []
        var slot: [Int: Int] = [:]
        for i in onsets.indices {
            let q = (onsets[i] + T / 2) / T
            let key = q * classCount + classes[i]
            if let j = slot[key] {
                hits[j].double = true
                cell.append(j)
                continue
            }
            slot[key] = hits.count
            cell.append(hits.count)
            hits.append(GridHit(step: q, drumClass: classes[i], velocity: velocities[i], offset: onsets[i] - q * T,
                                note: notes[i], source: i))
        }
        return (hits, cell)
    }

    /// Reads a beat's bars as the grid model's 4/4 bars, as a drummer counts them in: in a beat
    /// with a 4/4 bar, a first bar shorter than 4/4 (a pickup: a shorter meter, or a 4/4 bar
    /// cut short by a time signature restated mid-bar), with bars after it, is the end of a 4/4
    /// bar, its hits at the same distance before its end; a last bar shorter than 4/4 is the
    /// start of one. Hits in onset order (`onsets` non-decreasing, ticks); `tickInBar` and
    /// `barTicks` are each hit's position in its bar and that bar's length as it is (a bar cut
    /// short reports its own length: `FileHits`), rewritten in place; `bar` is 4/4's length.
    /// Returns the first hit the model cannot read: a bar of another length (every bar of a
    /// beat without a 4/4 bar), or a bar line off the beat's 4/4 bar lines.
    public static func countBars(onsets: [Int], tickInBar: inout [Int], barTicks: inout [Int], bar: Int) -> GridBarProblem? {
        let n = onsets.count
        guard n > 0 else { return nil }
        precondition(tickInBar.count == n && barTicks.count == n, "countBars: one position per hit")
        // A beat all in a shorter meter (a 3/4 song of two bars) is not a 4/4 beat with a pickup.
        guard barTicks.contains(bar) else { return .notFourFour(index: 0, barTicks: barTicks[0]) }
        func line(_ i: Int) -> Int { onsets[i] - tickInBar[i] }
        let firstLine = line(0)
        var firstEnd = 1
        while firstEnd < n, line(firstEnd) == firstLine { firstEnd += 1 }
        if firstEnd < n, barTicks[0] < bar {
            // A pickup: its bar ends at its own length (empty bars may follow).
            let end = firstLine + barTicks[0]
            for i in 0..<firstEnd {
                tickInBar[i] = bar - (end - onsets[i])
                barTicks[i] = bar
            }
        }
        var lastStart = n - 1
        while lastStart > 0, line(lastStart - 1) == line(n - 1) { lastStart -= 1 }
        if lastStart >= firstEnd, barTicks[n - 1] < bar {
            for i in lastStart..<n { barTicks[i] = bar }
        }
        let anchor = line(0)
        for i in 0..<n {
            guard barTicks[i] == bar else { return .notFourFour(index: i, barTicks: barTicks[i]) }
            guard (line(i) - anchor) % bar == 0 else { return .offTheBarLines(index: i) }
        }
        return nil
    }

    /// The sequence of `hits` (cells in step order, from `cells`) over `steps` steps.
    public func sequence(_ hits: [GridHit], steps: Int, style: Int = 0) -> GridSequence {
        var seq = GridSequence(style: style)
        var velocity = [Int](repeating: 0, count: Self.classCount), offset = velocity
        var i = 0
        for s in 0..<steps {
            var set = 0
            while i < hits.count, hits[i].step == s {
                let h = hits[i]
                set |= 1 << h.drumClass
                velocity[h.drumClass] = self.velocity.bin(of: h.velocity)
                    ?? (h.velocity < self.velocity.range.lowerBound ? 0 : velocityBins - 1)
                offset[h.drumClass] = offsetClass(bin: offsetBin(of: h.offset), double: h.double)
                i += 1
            }
            seq.append(hitSet: set, velocity: { velocity[$0] }, offset: { offset[$0] })
        }
        return seq
    }
}

/// What keeps the grid model from reading a beat's bars (`GridGroup.countBars`).
public enum GridBarProblem: Equatable, Sendable {
    /// Hit `index` lies in a bar of `barTicks` ticks, not 4/4's.
    case notFourFour(index: Int, barTicks: Int)
    /// Hit `index`'s bar line is off the beat's 4/4 bar lines (an empty bar of another length
    /// lies before it).
    case offTheBarLines(index: Int)
}
