// The runtime of a grid-layout model (DrummerCore/GridGroup.swift): one LSTM step per 16th
// note. Each step draws the next step's hit set (one of 512), then, for each class it hits, a
// velocity bin (and a velocity within it, as in the training data) and an offset class (one
// hit at the bin's offset, or two a 32nd apart). Hits come out in onset order, as deltas, like
// the 2017 sampler's. The first step follows the start-of-file row, at the first beat of bar 1.
//
// Temperatures: `hitsTemperature` (the pattern), `velocityTemperature`, `offsetTemperature`
// (nil: `temperature`); lowering one leaves the other groups' distributions as they were.
// `fillsTemperature` (nil: the hits') is the hit set's in the fill bars, bars 4 and 8 of each
// phrase counted as the phrase input counts them (from the first step drawn or read).
import DrummerCore
import Foundation
import MIDIParse

final class GridSampler {
    let weights: LSTMWeights
    let group: GridGroup
    private let encoder: GridEncoder
    /// The forward step; Sampler and Humanizer use this one for a grid model (one copy of the weights).
    let lstm: LSTMInference
    private let probs: UnsafeMutableBufferPointer<Float>
    private let row: UnsafeMutableBufferPointer<Int32>
    private let columns: [Range<Int>]

    /// `threads`: the threads a step runs on (nil: `stepThreads`' choice).
    init(weights: LSTMWeights, group: GridGroup, threads: Int? = nil) {
        self.weights = weights
        self.group = group
        encoder = GridEncoder(group: group)
        lstm = LSTMInference(weights: weights, threads: threads ?? Self.stepThreads(weights.shape), halves: true)
        probs = .allocate(capacity: weights.shape.outputWidth)
        probs.initialize(repeating: 0)
        row = .allocate(capacity: encoder.inputCount)
        row.initialize(repeating: 0)
        columns = weights.shape.parameters.head.outputColumns
    }

    /// Threads a step runs on: two on a machine with two cores or more for a model whose layers
    /// are wide enough that the halves' products outweigh meeting three times a step (from 128
    /// units; the shipped model's 256: `drummer sample models/groove -n 1000` on a 2-core
    /// Emerald Rapids spent 0.12 s in its steps on one thread, see docs/benchmarks.md), else one.
    static func stepThreads(_ shape: ModelShape) -> Int {
        CPUCount.available >= 2 && shape.hidden >= 128 ? 2 : 1
    }

    /// Steps without a hit after which generation gives up (64 bars).
    static let longestSilence = 64 * GridGroup.stepsPerBar

    deinit {
        probs.deallocate()
        row.deallocate()
    }

    /// The logits of the last step (every output group), computed once per step: a step's draws
    /// (the hit set, then each hit's velocity and offset) all read them.
    private var stepLogits = UnsafeBufferPointer<Float>(start: nil, count: 0)
    /// The streams `likeliestStyle` reads a beat with, made on its first use.
    private var scorer: BatchedInference?

    /// A BatchedInference of at least `streams` streams (one per style of the model).
    private func styleScorer(streams: Int) -> BatchedInference {
        if let scorer, scorer.streams >= streams { return scorer }
        let made = BatchedInference(weights: weights, streams: max(streams, group.styles?.count ?? 1))
        scorer = made
        return made
    }

    /// Feeds row `s` of `seq` (−1: the start row) to the model: one LSTM step, and its logits.
    private func step(row s: Int, of seq: GridSequence) {
        encoder.encode(row: s, of: seq, into: row)
        for g in 0..<encoder.inputCount { lstm.input[g] = row[g] }
        lstm.step()
        stepLogits = lstm.logits()
    }

    /// Draws one class of output group `g` at `temperature` (0: the most likely).
    private func draw(group g: Int, temperature: Float, rng: inout SeededRNG) -> Int {
        draw(columns: columns[g], temperature: temperature, uniform: rng.nextDouble())
    }

    /// One of the logit `columns` (a group, or its first classes) with the uniform number given
    /// (inverse-CDF: the class where the cumulative probability passes u).
    private func draw(columns c: Range<Int>, temperature: Float, uniform u: Double) -> Int {
        let y = UnsafeBufferPointer(rebasing: stepLogits[c])
        if temperature == 0 { return Softmax.argmax(y) }
        let r = UnsafeMutableBufferPointer(rebasing: probs[c])
        Softmax.probabilities(y, temperature: temperature, into: r)
        return Softmax.draw(UnsafeBufferPointer(r), uniform: u)
    }

    /// Generates `count` hits, handing each to `emit`. A hit's note is drawn from its class's
    /// training notes, then made audible on a General MIDI kit.
    func generate(count: Int, options: SamplingOptions, primer: GridPrimer? = nil, rng: inout SeededRNG,
                  emit: (GeneratedHit) throws -> Void) throws {
        let hitsT = options.effective(options.hitsTemperature), velocityT = options.effective(options.velocityTemperature)
        let offsetT = options.effective(options.offsetTemperature)
        let fillsT = options.fillsTemperature.map { options.effective($0) } ?? hitsT
        // A style input's style: the one asked for, or drawn first (Sampler.drawStyle).
        let style = group.styles.map { options.style ?? $0.draw(uniform: rng.nextDouble()) } ?? 0
        lstm.setRandomState(initScale: options.initScale, rng: &rng)
        guard count > 0 else { return }
        var seq = primer?.sequence ?? GridSequence()
        seq.style = style
        // The primer's steps are read (rows −1 ..< P − 1); generation starts after its last step.
        for s in -1..<(seq.count - 1) { step(row: s, of: seq) }
        let C = GridGroup.classCount, T = group.ticksPerStep
        // Hits drawn but not yet emitted; a later step's hits start at least T/2 ticks before
        // that step, so a hit is emitted once no later one can precede it.
        let pending = PendingHits(capacity: 8 * C)
        var emitted = 0, last = primer?.lastOnset ?? seq.count * T
        // No generated hit before the primer's last (nor before the start).
        let floor = last
        var struck = NoteSet()
        var velocity = [Int](repeating: 0, count: C), offset = [Int](repeating: 0, count: C)
        func flush(before bound: Int) throws -> Bool {
            var n = 0
            while n < pending.count, pending[n].onset < bound {
                let h = pending[n]
                n += 1
                // A note already struck at this onset (a double's second hit meeting the next
                // step's hit of the class) sounds once: it is not written twice.
                if h.onset == last, emitted > 0, struck.contains(h.note) { continue }
                if h.onset != last { struck.removeAll() }
                struck.insert(h.note)
                try emit(GeneratedHit(event: SampledEvent(note: h.drumClass, tick: 0),
                                      hit: DrumHit(note: h.note, delta: h.onset - last, velocity: h.velocity),
                                      offsetFromStep: h.onset - h.line))
                last = h.onset
                emitted += 1
                if emitted == count { return true }
            }
            pending.removeFirst(n)
            return false
        }
        var s = seq.count - 1, silent = 0
        let window = group.stepsRead
        while true {
            step(row: s, of: seq)
            let fill = GridGroup.isFillBar((s + 1) / GridGroup.stepsPerBar)
            let set = draw(columns: columns[0], temperature: fill ? fillsT : hitsT, uniform: rng.nextDouble())
            // With probability offsetCoupling, one uniform number for the offsets of every class
            // of the step (each class keeps its own distribution; classes with alike
            // distributions land on one tick, as a drummer's often do); else one per class.
            let coupled = rng.nextDouble() < group.offsetCoupling, uOffset = rng.nextDouble()
            for c in 0..<C where set & (1 << c) != 0 {
                velocity[c] = draw(group: 1 + c, temperature: velocityT, rng: &rng)
                offset[c] = coupled
                    ? draw(columns: columns[1 + C + c], temperature: offsetT, uniform: uOffset)
                    : draw(group: 1 + C + c, temperature: offsetT, rng: &rng)
                let v = group.velocity.velocity(bin: velocity[c], uniform: rng.nextDouble())
                let note = GeneralMIDIDrums.audible(note: group.note(class: c, uniform: rng.nextDouble()))
                for i in 0..<group.onsetCount(offsetClass: offset[c]) {
                    pending.insert(PendingHits.Hit(onset: max(floor, (s + 1) * T + group.onset(offsetClass: offset[c], hit: i)),
                                                   drumClass: c, note: note, velocity: v, line: (s + 1) * T))
                }
            }
            silent = set == 0 ? silent + 1 : 0
            guard silent < Self.longestSilence else { throw SamplerError.silentGrid(steps: silent) }
            seq.append(hitSet: set, velocity: { velocity[$0] }, offset: { offset[$0] })
            s += 1
            seq.keepLast(window)  // the steps the next rows read
            // Step s + 1's hits start at (s + 1)·T − T/2 at the earliest.
            if try flush(before: (s + 1) * T - T / 2) { return }
        }
    }
}

/// The hits a grid sampler has drawn and not yet written, in (onset, class) order: an insert
/// goes after the hits of an equal key, as a stable sort of the hits in the order drawn would
/// put it. One buffer, allocated once (it doubles only past its capacity, which the hits of a
/// few steps never reach), and nothing generic over the hits in the loop: a step allocates
/// nothing, in an unoptimized build too.
final class PendingHits {
    struct Hit {
        /// `line`: the tick of the grid line of the step the hit was drawn at.
        var onset: Int, drumClass: Int, note: Int, velocity: Int, line: Int
    }

    private var storage: UnsafeMutablePointer<Hit>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        storage = .allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    subscript(i: Int) -> Hit {
        precondition(i >= 0 && i < count, "PendingHits: index out of range")
        return storage[i]
    }

    func insert(_ h: Hit) {
        if count == capacity {
            let bigger = UnsafeMutablePointer<Hit>.allocate(capacity: 2 * capacity)
            bigger.moveInitialize(from: storage, count: count)
            storage.deallocate()
            storage = bigger
            capacity *= 2
        }
        var i = count
        while i > 0, storage[i - 1].onset > h.onset || (storage[i - 1].onset == h.onset && storage[i - 1].drumClass > h.drumClass) {
            storage[i] = storage[i - 1]
            i -= 1
        }
        storage[i] = h
        count += 1
    }

    /// Drops the first `n` hits.
    func removeFirst(_ n: Int) {
        precondition(n >= 0 && n <= count, "PendingHits: removing more than it holds")
        var i = 0
        while i + n < count {
            storage[i] = storage[i + n]
            i += 1
        }
        count -= n
    }
}

/// A set of MIDI notes (0...127) as two words of bits: the notes struck at one onset.
struct NoteSet {
    private var low: UInt64 = 0, high: UInt64 = 0

    func contains(_ note: Int) -> Bool {
        guard (0..<128).contains(note) else { return false }
        return note < 64 ? low & (1 << UInt64(note)) != 0 : high & (1 << UInt64(note - 64)) != 0
    }

    mutating func insert(_ note: Int) {
        guard (0..<128).contains(note) else { return }
        if note < 64 { low |= 1 << UInt64(note) } else { high |= 1 << UInt64(note - 64) }
    }

    mutating func removeAll() { low = 0; high = 0 }
}

/// A beat's hits on the grid (GridPrimer and GridSampler.humanize read beats alike): its first
/// bar line, and the hits of notes with a drum class as cells. Every bar must be 4/4, but for
/// a pickup before the first bar line and a short last bar (`GridGroup.countBars`).
struct GridBeat {
    /// The beat's first bar line (its grid's tick 0), ticks.
    let start: Int
    /// Indices in the beat of the hits with a drum class, their onsets from `start`, and each
    /// one's cell in `cells`.
    let mapped: [Int], onsets: [Int], cellOf: [Int]
    let cells: [GridHit]

    /// `reading` says what the model does with the beat, for the 4/4 error ("reads", "humanizes").
    init(_ beat: [BeatHit], group: GridGroup, reading: String) throws {
        let bar = 4 * group.ppq
        var tickInBar = beat.map(\.tickInBar), barTicks = beat.map(\.barTicks)
        switch GridGroup.countBars(onsets: beat.map(\.onset), tickInBar: &tickInBar, barTicks: &barTicks, bar: bar) {
        case nil: break
        case .notFourFour(let i, let length):
            throw HumanizeError.badOption("the grid model \(reading) 4/4 beats only (a pickup and a shorter last bar allowed): the hit at tick \(beat[i].onset) (\(group.ppq) per quarter note) lies in a bar of \(length) ticks, not \(bar)")
        case .offTheBarLines(let i):
            throw HumanizeError.badOption("the grid model \(reading) 4/4 beats only: the hit at tick \(beat[i].onset) (\(group.ppq) per quarter note) lies in a bar off the 4/4 bar lines before it (an empty bar of another length lies between)")
        }
        start = beat.isEmpty ? 0 : beat[0].onset - tickInBar[0]
        var mapped: [Int] = [], onsets: [Int] = [], classes: [Int] = [], velocities: [Int] = [], notes: [Int] = []
        for (i, h) in beat.enumerated() {
            guard let c = DrumClasses.of(note: h.note) else { continue }
            mapped.append(i)
            onsets.append(h.onset - start)
            classes.append(c)
            velocities.append(h.velocity)
            notes.append(h.note)
        }
        (cells, cellOf) = GridGroup.cells(ticksPerStep: group.ticksPerStep, onsets: onsets, classes: classes,
                                          velocities: velocities, notes: notes)
        self.mapped = mapped
        self.onsets = onsets
    }

    /// Steps up to the last cell's.
    var steps: Int { (cells.last?.step ?? -1) + 1 }
}

/// A primer for a grid model: its hits on the grid (the last bars of a beat), read before
/// generating; generated onsets are ticks from the primer's first bar line.
public struct GridPrimer: Equatable, Sendable {
    public var sequence: GridSequence
    /// Onsets of the primer's first and last hits, ticks from its first bar line (as the grid
    /// counts its bars: a pickup is the end of a 4/4 bar).
    public var firstOnset: Int, lastOnset: Int
    /// Hits whose notes have no drum class (not read).
    public var unmapped: Int

    /// The grid of `beat` (onsets non-decreasing, ticks at the model's PPQ; bar lines from
    /// tickInBar): every bar must be 4/4. Its first bar line is the grid's start.
    public init(beat: [BeatHit], group: GridGroup) throws {
        guard let last = beat.last else { throw HumanizeError.badOption("the primer has no hits") }
        let grid = try GridBeat(beat, group: group, reading: "reads")
        unmapped = beat.count - grid.mapped.count
        sequence = group.sequence(grid.cells, steps: grid.steps)
        firstOnset = beat[0].onset - grid.start
        lastOnset = last.onset - grid.start
    }
}

extension GridPrimer {
    /// A primer file's hits as beats, bars as the grid counts them (a pickup is a 4/4 bar's end,
    /// a short last bar the start of one): `whole`, and `read`, its last `bars` bars, which end
    /// with the last hit's bar. Empty bars among them count (at the last bar's length: the model
    /// reads 4/4 bars only), so hits far before them are neither read nor stepped through. A bar
    /// the model cannot read is refused by `init(beat:group:)` if it lies among those read.
    /// `hits` is not empty.
    public static func lastBars(_ bars: Int, of hits: FileHits, barTicks bar: Int) -> (whole: [BeatHit], read: [BeatHit]) {
        var tickInBar = hits.tickInBar, barTicks = hits.barTicks
        _ = GridGroup.countBars(onsets: hits.ticks, tickInBar: &tickInBar, barTicks: &barTicks, bar: bar)
        let barLines = (0..<hits.count).map { hits.ticks[$0] - tickInBar[$0] }
        let from = PrimerWindow.start(ofLast: bars, barLines: Array(Set(barLines)).sorted(), lastBarLength: barTicks[hits.count - 1])
        let whole = (0..<hits.count).map { BeatHit(note: hits.notes[$0], onset: hits.ticks[$0], velocity: hits.velocities[$0],
                                                   tickInBar: tickInBar[$0], barTicks: barTicks[$0]) }
        return (whole, (0..<hits.count).filter { barLines[$0] >= from }.map { whole[$0] })
    }
}

extension GridSampler {
    /// Steps of a beat `likeliestStyle` reads (16 bars: a style shows in a few bars, and each
    /// style costs one pass).
    static let styleScoringSteps = 16 * GridGroup.stepsPerBar

    /// For a model with a style input, the style under which the model finds the beat's hit sets
    /// likeliest (the sum of the log-probabilities of its first 16 bars' hit sets, each step read
    /// as the beat plays it, from h = c = 0); ties go to the commoner style. nil without a style
    /// input. `among` limits the styles weighed (nil: all). What it reads does not depend on a
    /// random number.
    func likeliestStyle(_ beat: [BeatHit], among: [Int]? = nil) throws -> Int? {
        guard group.styles != nil, !beat.isEmpty else { return nil }
        return likeliestStyle(of: try GridBeat(beat, group: group, reading: "reads"), among: among)
    }

    /// `likeliestStyle` of a beat already on the grid: the candidate styles read the beat side
    /// by side, one stream each (BatchedInference: each step's products as one GEMM over the
    /// streams instead of a pass per style; an answer in `play` waits on this).
    private func likeliestStyle(of grid: GridBeat, among: [Int]? = nil) -> Int? {
        guard let styles = group.styles else { return nil }
        // Among the styles training files had: an empty "other" plays what the model never learned.
        let candidates = among ?? styles.trained
        guard !candidates.isEmpty else { return 0 }
        let scores = styleScores(of: grid, candidates: candidates)
        var best = 0
        for b in 1..<candidates.count where scores[b] > scores[best] { best = b }
        return candidates[best]
    }

    /// For each candidate style (not empty), the sum of the log-probabilities of the beat's hit
    /// sets that `likeliestStyle` weighs.
    func styleScores(of grid: GridBeat, candidates: [Int]) -> [Double] {
        var seq = group.sequence(grid.cells, steps: min(grid.steps, Self.styleScoringSteps))
        let scorer = styleScorer(streams: candidates.count)
        let n = candidates.count, k = encoder.inputCount, O = weights.shape.outputWidth, hits = columns[0]
        for b in 0..<n { scorer.resetState(stream: b) }
        var scores = [Double](repeating: 0, count: n)
        for s in -1..<(seq.count - 1) {
            for (b, style) in candidates.enumerated() {
                seq.style = style
                encoder.encode(row: s, of: seq, into: row)
                for g in 0..<k { scorer.input[b * k + g] = row[g] }
            }
            scorer.step(count: n)
            let y = scorer.logits(count: n), target = Int(seq.hitSet(step: s + 1))
            for b in 0..<n {
                let hitLogits = UnsafeBufferPointer(rebasing: y[(b * O + hits.lowerBound)..<(b * O + hits.upperBound)])
                scores[b] += Double(hitLogits[target] - Softmax.logSumExp(hitLogits))
            }
        }
        return scores
    }

    /// Humanizes `beat` (onsets non-decreasing, ticks at the model's PPQ, 4/4 bars): the model
    /// reads the beat's steps one after another, and for each step it draws, for every class
    /// the beat hits there, a velocity (bin, then value) and an offset among the single-hit
    /// bins, at `temperature`; what it drew is what it reads next (GridSampler's step with the
    /// hit sets given). A hit moves to its 16th's grid line plus the drawn offset; a second hit
    /// of its class in that 16th keeps its distance from the first, and no hit moves onto or
    /// before its note's hit before it (a fast roll keeps every hit). Hits of notes without a
    /// drum class keep their onset and velocity. Returns the hits in the beat's order.
    /// With a style input, plays `style` (nil: the likeliest for the beat, `likeliestStyle`).
    func humanize(_ beat: [BeatHit], velocityTemperature: Float, offsetTemperature: Float, initScale: Float,
                  style: Int? = nil, rng: inout SeededRNG) throws -> [BeatHit] {
        guard !beat.isEmpty else { return [] }
        let T = group.ticksPerStep, C = GridGroup.classCount, F = group.offsetBins
        let grid = try GridBeat(beat, group: group, reading: "humanizes")
        let cells = grid.cells
        let chosen = style ?? likeliestStyle(of: grid) ?? 0
        lstm.setRandomState(initScale: initScale, rng: &rng)
        var seq = GridSequence(style: chosen)
        let window = group.stepsRead
        var drawnVelocity = [Int](repeating: 0, count: cells.count), drawnOffset = drawnVelocity
        var velocity = [Int](repeating: 0, count: C), offset = velocity
        var c0 = 0
        for s in -1..<(grid.steps - 1) {
            step(row: s, of: seq)
            var set = 0
            let coupled = rng.nextDouble() < group.offsetCoupling, uOffset = rng.nextDouble()
            while c0 < cells.count, cells[c0].step == s + 1 {
                let h = cells[c0], c = h.drumClass
                set |= 1 << c
                velocity[c] = draw(group: 1 + c, temperature: velocityTemperature, rng: &rng)
                // Offsets among the bins of as many hits as the beat has in the cell: one, or two a
                // 32nd apart (a roll's, which the model places as it learned them: drawn among
                // the single-hit bins, a roll of 32nds moved a 32nd late).
                let offsets = columns[1 + C + c]
                let bin = draw(columns: h.double ? offsets.dropFirst(F) : offsets.prefix(F), temperature: offsetTemperature,
                               uniform: coupled ? uOffset : rng.nextDouble())
                offset[c] = group.offsetClass(bin: bin, double: h.double)
                drawnVelocity[c0] = group.velocity.velocity(bin: velocity[c], uniform: rng.nextDouble())
                drawnOffset[c0] = group.offsets[bin]
                c0 += 1
            }
            seq.append(hitSet: set, velocity: { velocity[$0] }, offset: { offset[$0] })
            seq.keepLast(window)
        }
        var out = beat
        for (k, i) in grid.mapped.enumerated() {
            let j = grid.cellOf[k], cell = cells[j]
            let first = grid.start + cell.step * T + drawnOffset[j]
            // A later hit of the cell keeps its distance from the cell's first hit.
            let onset = max(0, first + (grid.onsets[k] - grid.onsets[cell.source]))
            out[i].onset = onset
            out[i].velocity = drawnVelocity[j]
        }
        // A hit never lands on or before the hit of its note before it (a roll's 16th drawn
        // earlier than the 16th before it): MIDI holds one note once at an onset, and the later
        // hits would be lost. It follows that hit by half their distance in the beat (1 tick at
        // least), so every hit is written, in the beat's order.
        var lastIn = [Int](repeating: 0, count: 128), lastOut = [Int](repeating: -1, count: 128)
        for i in out.indices where (0..<128).contains(out[i].note) {
            let n = out[i].note
            if lastOut[n] >= 0, out[i].onset <= lastOut[n] {
                out[i].onset = lastOut[n] + max(1, (beat[i].onset - lastIn[n]) / 2)
            }
            (lastIn[n], lastOut[n]) = (beat[i].onset, out[i].onset)
        }
        return out
    }
}
