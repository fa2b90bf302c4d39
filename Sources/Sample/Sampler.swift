// The runtime sampler: the original 2017 algorithm, plus temperature, seed and primer, for a
// model of the 2017 layout; a grid model's steps are GridSampler's.
//
//   h, c  ← uniform in ±initScale (H each, drawn from the seeded generator: h then c, layer by layer)
//   x     ← the start event: the primer's last event, or a random (note, tick)
//   repeat n times:
//       h, c ← LSTM step on x's classes     (one row of Wx per input group + an H×4H GEMV)
//       y    ← [h, 1] · Wy                  (one block of logits per output group)
//       p    ← softmax(y_note / T), q ← softmax(y_tick / T)
//       note, tick ~ p × q, except pairs that repeat a note already struck at the current
//                onset (the tick value 0 with such a note): the joint is masked and
//                renormalised, so no hit is ever dropped and n hits are written
//       emit the hit; x ← (note, tick)
// Draws per hit, in order: the note, then the tick. With nothing to mask this is exactly the
// original's draw.
//
// A primer p₁…p_k sets the state: p₁…p_{k-1} are stepped through the model and p_k is the
// start event, so the first generated hit is conditioned on the whole primer and the
// primer's hits are not part of the output.
// H = hidden size, N = notes, K = ticks. The LSTM step is DrummerCore's LSTMInference (the
// same code `drummer eval` runs). Buffers are allocated once per sampler; generating a hit
// allocates nothing.

import DrummerCore
import MIDIParse
import ModelFiles
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How to sample.
public struct SamplingOptions: Equatable, Sendable {
    /// Softmax temperature of every output group: 1 samples the model's distribution,
    /// smaller is more conservative, 0 always takes the most likely class (argmax).
    public var temperature: Float
    /// h and c start uniform in ±initScale (the original used 0.1).
    public var initScale: Float

    /// Temperatures of the note and tick groups (nil: `temperature`).
    public var noteTemperature: Float?
    public var tickTemperature: Float?
    /// A grid model's temperatures of the hit set, of its velocity groups and of its offsets
    /// (nil: `temperature`).
    public var hitsTemperature: Float?
    public var velocityTemperature: Float?
    public var offsetTemperature: Float?
    /// A grid model's hit-set temperature in the fill bars, bars 4 and 8 of each 8-bar phrase
    /// counted from the first drawn bar (`GridGroup.isFillBar`; nil: `hitsTemperature`).
    public var fillsTemperature: Float?
    /// The style a grid model with a style input plays (an index into its styles; nil: drawn
    /// from them with the generator's first number, in proportion to their training steps).
    public var style: Int?

    public init(temperature: Float = 1, initScale: Float = 0.1) {
        self.temperature = temperature
        self.initScale = initScale
    }
}

public enum SamplerError: Error, CustomStringConvertible, Equatable {
    case badTemperature(Float)
    /// A grid model played no hit for this many steps.
    case silentGrid(steps: Int)
    /// Event primers given to a grid model, or a grid primer to a model of the 2017 layout.
    case gridPrimer
    /// A style index the model does not have.
    case badStyle(Int, styles: Int)
    /// Temperature 0 (argmax) for one of note and tick but not the other.
    case mixedArgmax
    case badInitScale(Float)
    case badCount(Int)
    case primerOutOfRange(position: Int, event: SampledEvent, notes: Int, ticks: Int)
    case vocabularyMismatch(String)

    public var description: String {
        switch self {
        case .silentGrid(let steps):
            return "the model played no hit for \(steps / 16) bars: giving up (a higher temperature of the hit set, or another checkpoint, may help)"
        case .gridPrimer:
            return "a grid-layout model reads its primer as grid steps (GridPrimer), and only a grid model does"
        case .badTemperature(let t):
            return "temperature \(t) is invalid: it must be a finite number ≥ 0"
        case .badStyle(let s, let n):
            return n == 0 ? "the model has no style input: it plays no chosen style" : "style \(s) is invalid: the model has styles 0..<\(n)"
        case .mixedArgmax:
            return "temperature 0 (always the most likely) applies to note and tick together: give both 0 or neither"
        case .badInitScale(let s):
            return "init scale \(s) is invalid: it must be a finite number ≥ 0"
        case .badCount(let n):
            return "cannot generate \(n) notes: the count must be ≥ 0"
        case .primerOutOfRange(let p, let e, let n, let k):
            return "primer event \(p) \(e) is outside the vocabulary (\(n) notes, \(k) ticks)"
        case .vocabularyMismatch(let m):
            return "vocabulary does not match the weights: \(m)"
        }
    }
}

/// One generated hit: its classes and its MIDI values.
public struct GeneratedHit: Hashable, Sendable {
    public var event: SampledEvent
    public var hit: DrumHit
    /// Ticks from the grid line of the step the hit was drawn at to the hit (a grid model's
    /// offset, plus a 32nd for a double's second hit; 0 in the 2017 layout): a hit played early
    /// sounds before its step's line, and belongs to that step's bar all the same.
    public var offsetFromStep: Int = 0

    /// Whether the hit, sounding at `tick`, was drawn at a step before the bar line `end`: one
    /// of the step on that line played early sounds before it, and is the next bar's.
    public func drawn(before end: Int, soundingAt tick: Int) -> Bool { tick - offsetFromStep < end }
}

extension LSTMInference {
    /// h and c of every layer uniform in ±initScale: how the 2017 sampler starts, and a grid
    /// model without a primer.
    func setRandomState(initScale: Float, rng: inout SeededRNG) {
        let scale = Double(initScale), H = shape.hidden
        for layer in 0..<shape.layers {
            setState(layer: layer, h: (0..<H).map { _ in Float(rng.uniform(-scale, scale)) },
                     c: (0..<H).map { _ in Float(rng.uniform(-scale, scale)) })
        }
    }
}

/// Generates drum hits from an LSTM model. Not thread-safe: one sampler per thread.
public final class Sampler {
    public let weights: LSTMWeights
    public let groups: ModelGroups
    public var vocabulary: Vocabulary { groups.vocabulary }
    public var shape: ModelShape { weights.shape }

    /// The forward step (shared with evaluation) and the probabilities of every output group (O).
    let lstm: LSTMInference
    /// A grid model's runtime (GridSampler.swift); nil for the 2017 layout.
    let grid: GridSampler?
    let probs: UnsafeMutableBufferPointer<Float>
    /// Note weights after masking (N), as Double; tick logits with the masked ones at −∞ (K).
    private let noteWeights: UnsafeMutableBufferPointer<Double>
    private let tickScratch: UnsafeMutableBufferPointer<Float>
    /// Notes struck at the current onset: bit n of word n / 64.
    private var struck: (UInt64, UInt64) = (0, 0)
    /// For each note index, the note indices written as the same General MIDI note (itself at
    /// least): striking one strikes them all (N).
    private let sameNote: UnsafeMutableBufferPointer<(UInt64, UInt64)>
    /// The note written for each vocabulary note: one a General MIDI kit sounds.
    private let writtenNotes: [Int]
    /// Tick indices whose value is 0 (simultaneous hits), as a list and as a flag per index (K).
    private let zeroTicks: [Int]
    private let isZeroTick: UnsafeMutableBufferPointer<Bool>
    /// Tests: sees the input classes of every step (nil in use).
    var inputObserver: ((UnsafeMutableBufferPointer<Int32>) -> Void)?
    let N: Int, K: Int
    /// Each output group's logits in y (the layout's head columns).
    let noteColumns: Range<Int>, tickColumns: Range<Int>

    /// `stepThreads`: the threads a grid model's step runs on (nil: two on a machine with two
    /// cores for a wide model; 1 where several samplers already share the cores).
    public init(weights: LSTMWeights, groups: ModelGroups, stepThreads: Int? = nil) throws {
        let s = weights.shape
        guard groups.shape(hidden: s.hidden, layers: s.layers) == s else {
            throw SamplerError.vocabularyMismatch(
                "weights have input groups \(s.inputGroups) and output groups \(s.outputGroups), the model's tables "
                    + "\(groups.shape(hidden: s.hidden).inputGroups) and \(groups.shape(hidden: s.hidden).outputGroups)")
        }
        self.weights = weights
        self.groups = groups
        let grid = groups.grid.map { GridSampler(weights: weights, group: $0, threads: stepThreads) }
        self.grid = grid
        // A grid model steps in its GridSampler: no second copy of the parameters.
        lstm = grid?.lstm ?? LSTMInference(weights: weights)
        probs = .allocate(capacity: s.outputWidth)
        probs.initialize(repeating: 0)
        N = s.notes
        K = s.ticks
        let columns = s.parameters.head.outputColumns
        noteColumns = columns[0]
        tickColumns = columns[1]
        noteWeights = .allocate(capacity: N)
        noteWeights.initialize(repeating: 0)
        tickScratch = .allocate(capacity: K)
        tickScratch.initialize(repeating: 0)
        zeroTicks = groups.vocabulary.ixToTick.indices.filter { groups.vocabulary.ixToTick[$0] == 0 }
        isZeroTick = .allocate(capacity: K)
        isZeroTick.initialize(repeating: false)
        for t in zeroTicks { isZeroTick[t] = true }
        let notes = groups.vocabulary.ixToNote.map(GeneralMIDIDrums.audible(note:))
        writtenNotes = notes
        // The note masks of the 2017 layout's draw (a grid model draws in its GridSampler).
        let masked = grid == nil ? N : 0
        sameNote = .allocate(capacity: max(1, masked))
        for n in 0..<masked {
            var mask: (UInt64, UInt64) = (0, 0)
            for m in 0..<N where notes[m] == notes[n] {
                if m < 64 { mask.0 |= 1 << UInt64(m) } else { mask.1 |= 1 << UInt64(m - 64) }
            }
            (sameNote.baseAddress! + n).initialize(to: mask)
        }
    }

    /// A sampler for the original layout: (note, tick) in and out.
    public convenience init(weights: LSTMWeights, vocabulary: Vocabulary) throws {
        try self.init(weights: weights, groups: ModelGroups(vocabulary: vocabulary))
    }

    public convenience init(model: LoadedModel) throws {
        try self.init(weights: model.weights, groups: model.groups)
    }

    deinit {
        probs.deallocate()
        noteWeights.deallocate()
        tickScratch.deallocate()
        isZeroTick.deallocate()
        sameNote.deallocate()
    }

    /// The style a grid model with a style input would draw as the first use of `rng` when
    /// `SamplingOptions.style` is nil (nil for other models; `rng` is then not used). Drawing it
    /// here and passing it as `style` samples what generating with `style` nil samples.
    /// With `among` (style indices, not empty), the draw is among those styles, with the same
    /// random number (`GridStyles.draw(uniform:among:)`).
    public func drawStyle(rng: inout SeededRNG, among: [Int]? = nil) -> Int? {
        grid?.group.styles.map { $0.draw(uniform: rng.nextDouble(), among: among) }
    }

    /// For a grid model with a style input, the style under which it finds `beat`'s hit sets
    /// likeliest (its first 16 bars, all 4/4; see GridSampler.likeliestStyle), among the styles
    /// `among` (nil: all); nil for other models.
    public func likeliestStyle(_ beat: [BeatHit], among: [Int]? = nil) throws -> Int? { try grid?.likeliestStyle(beat, among: among) }

    /// Generates `count` hits. Without a primer the start event is drawn uniformly from the
    /// vocabulary with `rng` (after h and c); with one, see the file header.
    public func generate(
        count: Int, options: SamplingOptions = SamplingOptions(), primer: [SampledEvent] = [], rng: inout SeededRNG
    ) throws -> [GeneratedHit] {
        var out: [GeneratedHit] = []
        out.reserveCapacity(max(0, count))
        try generate(count: count, options: options, primer: primer, rng: &rng) { out.append($0) }
        return out
    }

    /// Generates `count` hits, handing each to `emit` as it is drawn. Allocates nothing per
    /// hit (the real-time path: an app can play each hit as it comes).
    public func generate(
        count: Int, options: SamplingOptions = SamplingOptions(),
        primer: [SampledEvent] = [], rng: inout SeededRNG, emit: (GeneratedHit) throws -> Void
    ) throws {
        try generate(count: count, options: options, primer: primer, gridPrimer: nil, rng: &rng, emit: emit)
    }

    /// The same for a grid model with a primer read as grid steps (`GridPrimer`); generated
    /// hits' deltas continue from the primer's last hit.
    public func generate(
        count: Int, options: SamplingOptions = SamplingOptions(), gridPrimer: GridPrimer, rng: inout SeededRNG,
        emit: (GeneratedHit) throws -> Void
    ) throws {
        try generate(count: count, options: options, primer: [], gridPrimer: gridPrimer, rng: &rng, emit: emit)
    }

    private func generate(
        count: Int, options: SamplingOptions, primer: [SampledEvent], gridPrimer: GridPrimer?, rng: inout SeededRNG,
        emit: (GeneratedHit) throws -> Void
    ) throws {
        guard count >= 0 else { throw SamplerError.badCount(count) }
        for t in [options.temperature, options.noteTemperature, options.tickTemperature, options.velocityTemperature,
                  options.hitsTemperature, options.offsetTemperature, options.fillsTemperature].compactMap({ $0 }) {
            guard t.isFinite, t >= 0 else { throw SamplerError.badTemperature(t) }
        }
        if let s = options.style {
            let n = grid?.group.styles?.count ?? 0
            guard (0..<n).contains(s) else { throw SamplerError.badStyle(s, styles: n) }
        }
        guard options.initScale.isFinite, options.initScale >= 0 else {
            throw SamplerError.badInitScale(options.initScale)
        }
        if let grid {
            guard primer.isEmpty else { throw SamplerError.gridPrimer }
            try grid.generate(count: count, options: options, primer: gridPrimer, rng: &rng, emit: emit)
            return
        }
        guard gridPrimer == nil else { throw SamplerError.gridPrimer }
        for (i, e) in primer.enumerated() where !(0..<N).contains(e.note) || !(0..<K).contains(e.tick) {
            throw SamplerError.primerOutOfRange(position: i, event: e, notes: N, ticks: K)
        }
        lstm.setRandomState(initScale: options.initScale, rng: &rng)
        var x: SampledEvent
        let ticks = groups.vocabulary.ixToTick
        if let last = primer.last {
            for e in primer.dropLast() { step(e) }
            x = last
        } else {
            x = SampledEvent(note: rng.index(below: N), tick: rng.index(below: K))
        }
        struck = (0, 0)
        mark(x.note)
        let noteT = options.effective(options.noteTemperature), tickT = options.effective(options.tickTemperature)
        guard (noteT == 0) == (tickT == 0) else { throw SamplerError.mixedArgmax }
        for _ in 0..<count {
            step(x)
            let next = draw(lstm.logits(), noteTemperature: noteT, tickTemperature: tickT, rng: &rng)
            let delta = ticks[next.tick]
            if delta != 0 { struck = (0, 0) }
            mark(next.note)
            try emit(GeneratedHit(event: next, hit: DrumHit(note: writtenNotes[next.note], delta: delta, velocity: 100)))
            x = next
        }
    }

    /// One LSTM step on an event's (note, tick) classes, updating h and c.
    func step(_ e: SampledEvent) {
        lstm.input[0] = Int32(e.note)
        lstm.input[1] = Int32(e.tick)
        inputObserver?(lstm.input)
        lstm.step()
    }

    @inline(__always) private func isStruck(_ n: Int) -> Bool {
        n < 64 ? struck.0 & (1 << UInt64(n)) != 0 : struck.1 & (1 << UInt64(n - 64)) != 0
    }

    @inline(__always) private func mark(_ n: Int) {
        struck.0 |= sameNote[n].0
        struck.1 |= sameNote[n].1
    }

    /// Note and tick from the output layer, never repeating a struck note at this onset.
    ///
    /// The masked joint is worked out in log space, so that it stays right at low temperatures
    /// (where float probabilities underflow): with Z_t = Σ_t e^(y_t/T) and Z_later the same sum
    /// without tick value 0, a struck note's weight is p(note)·Z_later/Z_t; the tick of a struck
    /// note is drawn from the softmax of the later ticks only.
    private func draw(_ logits: UnsafeBufferPointer<Float>, noteTemperature: Float, tickTemperature: Float,
                      rng: inout SeededRNG) -> SampledEvent {
        let noteLogits = UnsafeBufferPointer(rebasing: logits[noteColumns])
        let tickLogits = UnsafeBufferPointer(rebasing: logits[tickColumns])
        if tickTemperature == 0 { return argmaxPair(noteLogits, tickLogits) }
        let temperature = tickTemperature
        let noteProbs = UnsafeMutableBufferPointer(rebasing: probs[noteColumns])
        let tickProbs = UnsafeMutableBufferPointer(rebasing: probs[tickColumns])
        // log(Z_later / Z_t), or nil when no tick has value 0 or none is later.
        var logLater: Double?
        if !zeroTicks.isEmpty, zeroTicks.count < K {
            let invT = 1 / Double(temperature)
            var all = -Double.infinity, later = -Double.infinity
            for t in 0..<K {
                let y = Double(tickLogits[t])
                all = max(all, y)
                if !isZeroTick[t] { later = max(later, y) }
            }
            var sumAll = 0.0, sumLater = 0.0
            for t in 0..<K {
                let y = Double(tickLogits[t])
                sumAll += exp((y - all) * invT)
                if !isZeroTick[t] { sumLater += exp((y - later) * invT) }
            }
            logLater = (later - all) * invT + log(sumLater) - log(sumAll)
        }
        // Something to mask: a note struck at this onset (there always is one: the last hit's)
        // and some probability of "same onset".
        let masked = (logLater ?? 0) < 0 && (struck.0 | struck.1) != 0
        let note: Int
        if masked, let l = logLater {
            // Note weights ∝ e^(y_n/T) · (Z_later/Z_t if struck), normalised from their maximum.
            let invT = 1 / Double(noteTemperature)
            var top = -Double.infinity
            for n in 0..<N {
                let a = Double(noteLogits[n]) * invT + (isStruck(n) ? l : 0)
                noteWeights[n] = a
                top = max(top, a)
            }
            for n in 0..<N { noteWeights[n] = exp(noteWeights[n] - top) }
            note = Softmax.draw(UnsafeBufferPointer(noteWeights), uniform: rng.nextDouble())
        } else {
            Softmax.probabilities(noteLogits, temperature: noteTemperature, into: noteProbs)
            note = Softmax.draw(UnsafeBufferPointer(noteProbs), uniform: rng.nextDouble())
        }
        if masked, isStruck(note) {
            // The later ticks only: their logits, with −∞ for tick value 0.
            for t in 0..<K { tickScratch[t] = isZeroTick[t] ? -Float.infinity : tickLogits[t] }
            Softmax.probabilities(UnsafeBufferPointer(tickScratch), temperature: temperature, into: tickProbs)
        } else {
            Softmax.probabilities(tickLogits, temperature: temperature, into: tickProbs)
        }
        return SampledEvent(note: note, tick: Softmax.draw(UnsafeBufferPointer(tickProbs), uniform: rng.nextDouble()))
    }

    /// Temperature 0 (the limit T → 0 of the masked joint): the allowed (note, tick) pair with
    /// the largest note logit + tick logit. The most likely note with the most likely tick,
    /// unless that repeats a struck note at this onset; then the better of that note at its
    /// best later tick and the best unstruck note at this onset.
    private func argmaxPair(_ noteLogits: UnsafeBufferPointer<Float>, _ tickLogits: UnsafeBufferPointer<Float>) -> SampledEvent {
        let n0 = Softmax.argmax(noteLogits), t0 = Softmax.argmax(tickLogits)
        guard isStruck(n0), isZeroTick[t0] else { return SampledEvent(note: n0, tick: t0) }
        var laterTick = -1, otherNote = -1
        for t in 0..<K where !isZeroTick[t] && (laterTick < 0 || tickLogits[t] > tickLogits[laterTick]) { laterTick = t }
        for n in 0..<N where !isStruck(n) && (otherNote < 0 || noteLogits[n] > noteLogits[otherNote]) { otherNote = n }
        let later = laterTick < 0 ? -Float.infinity : noteLogits[n0] + tickLogits[laterTick]
        let other = otherNote < 0 ? -Float.infinity : noteLogits[otherNote] + tickLogits[t0]
        if other > later { return SampledEvent(note: otherNote, tick: t0) }
        return SampledEvent(note: n0, tick: laterTick < 0 ? t0 : laterTick)
    }
}

extension SamplingOptions {
    /// A group's temperature as drawn with: its own, else `temperature`; T = 0, or a T so small
    /// that 1/T overflows, is argmax (the limit T → 0).
    func effective(_ t: Float?) -> Float {
        let v = t ?? temperature
        return (1 / v).isFinite ? v : 0
    }

    /// Sets each group's temperature from `temperatures` (by output group name, as
    /// `TemperatureSetting.resolved` gives them); groups not named keep `temperature`.
    public mutating func set(_ temperatures: [String: Float]) {
        noteTemperature = temperatures["note"]
        tickTemperature = temperatures["tick"]
        velocityTemperature = temperatures["velocity"]
        hitsTemperature = temperatures["hits"]
        offsetTemperature = temperatures["offset"]
        fillsTemperature = temperatures[TemperatureSetting.fills]
    }
}
