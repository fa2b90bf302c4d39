// The runtime sampler: the original 2017 algorithm, plus temperature, seed, primer, and
// for a groove model the position in the bar and the velocity.
//
//   h, c  ← uniform in ±initScale (H each, drawn from the seeded generator: h then c, layer by layer)
//   x     ← the start event: the primer's last event, or a random (note, tick[, velocity
//           bin]) at the first beat of a bar
//   repeat n times:
//       h, c ← LSTM step on x's classes     (one row of Wx per input group + an H×4H GEMV)
//       y    ← [h, 1] · Wy                  (one block of logits per output group)
//       p    ← softmax(y_note / T), q ← softmax(y_tick / T)[, r ← softmax(y_velocity / T)]
//       note, tick ~ p × q, except pairs that repeat a note already struck at the current
//                onset (the tick value 0 with such a note): the joint is masked and
//                renormalised, so no hit is ever dropped and n hits are written
//       velocity bin ~ r, and a velocity drawn within it from the training data's velocities
//       position ← (position + tick value) mod the bar's length
//       emit the hit; x ← (note, tick, position slot, velocity bin)
// Draws per hit, in order: the note, the tick, then (velocity group) the bin and the value.
// With nothing to mask this is exactly the original's draw (note, then tick).
//
// A primer p₁…p_k sets the state: p₁…p_{k-1} are stepped through the model and p_k is the
// start event, so the first generated hit is conditioned on the whole primer and the
// primer's hits are not part of the output; generation continues from p_k's position.
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
    /// The meter of the generated bars, for a model with the position group (nil: the
    /// meter the model's training data was mostly in).
    public var meter: Meter?

    /// Temperatures of the note, tick and velocity groups (nil: `temperature`). Lowering the
    /// note and tick temperature alone leaves the velocity draw at its own.
    public var noteTemperature: Float?
    public var tickTemperature: Float?
    public var velocityTemperature: Float?
    /// A grid model's temperatures of the hit set and of the offsets (nil: `temperature`); its
    /// velocity groups take `velocityTemperature`.
    public var hitsTemperature: Float?
    public var offsetTemperature: Float?
    /// A grid model's hit-set temperature in the fill bars, bars 4 and 8 of each 8-bar phrase
    /// counted from the first drawn bar (`GridGroup.isFillBar`; nil: `hitsTemperature`).
    public var fillsTemperature: Float?
    /// Nucleus sampling: each group draws from its smallest set of most likely classes that
    /// holds at least this share of the probability (1: every class). A grid model's hit set
    /// keeps the empty set's probability and cuts among the others (`Softmax.nucleus(keeping:)`).
    public var topP: Double = 1
    /// Top-p of each group (nil: `topP`), named as the temperatures are.
    public var noteTopP: Double?
    public var tickTopP: Double?
    public var velocityTopP: Double?
    public var hitsTopP: Double?
    public var offsetTopP: Double?
    /// Which notes are written: General MIDI drum notes (the default: every hit sounds on a GM
    /// kit), or the training data's own.
    public var noteOutput: NoteOutput = .generalMIDI
    /// The style a grid model with a style input plays (an index into its styles; nil: drawn
    /// from them with the generator's first number, in proportion to their training steps).
    public var style: Int?
    /// A grid model without a primer: bars drawn and not written before the first written bar
    /// (0: the output starts where the random state does). Its state, lookback and phrase carry
    /// on into the written bars; the draws are the same, so the output is the one without
    /// warm-up from this bar on.
    public var warmupBars: Int = 0

    public init(temperature: Float = 1, initScale: Float = 0.1, meter: Meter? = nil) {
        self.temperature = temperature
        self.initScale = initScale
        self.meter = meter
    }
}

public enum SamplerError: Error, CustomStringConvertible, Equatable {
    case badTemperature(Float)
    /// A grid model played no hit for this many steps.
    case silentGrid(steps: Int)
    /// Event primers given to a grid model, or a grid primer to an event model.
    case gridPrimer
    case badTopP(Double)
    /// A style index the model does not have.
    case badStyle(Int, styles: Int)
    /// Temperature 0 (argmax) for one of note and tick but not the other.
    case mixedArgmax
    case badInitScale(Float)
    case badCount(Int)
    case primerOutOfRange(position: Int, event: SampledEvent, notes: Int, ticks: Int)
    case vocabularyMismatch(String)
    /// A meter whose bars are longer than the model's position slots.
    case meterTooLong(meter: Meter, slots: Int, longestBar: Int)
    /// Warm-up bars below 0, for an event model, or beside a primer.
    case badWarmup(String)

    public var description: String {
        switch self {
        case .silentGrid(let steps):
            return "the model played no hit for \(steps / 16) bars: giving up (a lower temperature of the hit set, or another checkpoint, may help)"
        case .gridPrimer:
            return "a grid-layout model reads its primer as grid steps (GridPrimer), and only a grid model does"
        case .badTemperature(let t):
            return "temperature \(t) is invalid: it must be a finite number ≥ 0"
        case .badTopP(let p):
            return "top-p \(p) is invalid: it must be above 0 and at most 1"
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
        case .meterTooLong(let m, let slots, let longest):
            return "meter \(m) has bars longer than the model knows (\(slots) position slots, bars of at most \(longest) ticks)"
        case .badWarmup(let m):
            return "warm-up bars: \(m)"
        }
    }
}

/// One generated hit: its classes and its MIDI values.
public struct GeneratedHit: Hashable, Sendable {
    public var event: SampledEvent
    public var hit: DrumHit
}

/// The notes a sampler writes.
public enum NoteOutput: String, Sendable, CaseIterable {
    /// `GeneralMIDIDrums.audible`: 22 → 42, 26 → 46, other notes outside 35…81 → their drum
    /// class's GM note (or the nearest GM note). Two vocabulary notes that become one GM note
    /// are never struck together (the sampler masks them as one), so no hit is lost.
    case generalMIDI = "gm"
    /// The training data's notes as they are (`sample --raw-notes`).
    case raw

    /// The note written for each vocabulary note.
    public func notes(_ vocabulary: Vocabulary) -> [Int] {
        self == .raw ? vocabulary.ixToNote : vocabulary.ixToNote.map(GeneralMIDIDrums.audible(note:))
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
    /// A grid model's runtime (GridSampler.swift); nil for the event layouts.
    let grid: GridSampler?
    private let probs: UnsafeMutableBufferPointer<Float>
    /// Note weights after masking (N), as Double; tick logits with the masked ones at −∞ (K).
    private let noteWeights: UnsafeMutableBufferPointer<Double>
    private let tickScratch: UnsafeMutableBufferPointer<Float>
    /// Scratch for nucleus sampling (one index per class of the widest group), and each group's p.
    private let order: UnsafeMutableBufferPointer<Int>
    private var noteTopP = 1.0, tickTopP = 1.0, velocityTopP = 1.0
    /// Notes struck at the current onset: bit n of word n / 64.
    private var struck: (UInt64, UInt64) = (0, 0)
    /// For each note index, the note indices written as the same note (itself at least):
    /// striking one strikes them all. Set per `generate` from its options (N).
    private let sameNote: UnsafeMutableBufferPointer<(UInt64, UInt64)>
    /// Tick indices whose value is 0 (simultaneous hits), as a list and as a flag per index (K).
    private let zeroTicks: [Int]
    private let isZeroTick: UnsafeMutableBufferPointer<Bool>
    /// The input encoding of a hit (shared with training), with the lookback group's memory of
    /// the hits fed so far (its ring is allocated here, once).
    private var encoder: HitEncoder
    /// Tests: sees the input classes of every step (nil in use).
    var inputObserver: ((UnsafeMutableBufferPointer<Int32>) -> Void)?
    private let N: Int, K: Int, B: Int
    /// Each output group's logits in y (the layout's head columns; velocity empty without it).
    private let noteColumns: Range<Int>, tickColumns: Range<Int>, velocityColumns: Range<Int>

    public init(weights: LSTMWeights, groups: ModelGroups) throws {
        let s = weights.shape
        guard groups.shape(hidden: s.hidden, layers: s.layers) == s else {
            throw SamplerError.vocabularyMismatch(
                "weights have input groups \(s.inputGroups) and output groups \(s.outputGroups), the model's tables "
                    + "\(groups.shape(hidden: s.hidden).inputGroups) and \(groups.shape(hidden: s.hidden).outputGroups)")
        }
        self.weights = weights
        self.groups = groups
        let grid = groups.grid.map { GridSampler(weights: weights, group: $0) }
        self.grid = grid
        // A grid model steps in its GridSampler: no second copy of the parameters.
        lstm = grid?.lstm ?? LSTMInference(weights: weights)
        probs = .allocate(capacity: s.outputWidth)
        probs.initialize(repeating: 0)
        N = s.notes
        K = s.ticks
        B = groups.velocity?.bins.count ?? 0
        let columns = s.parameters.head.outputColumns
        noteColumns = columns[0]
        tickColumns = columns[1]
        velocityColumns = columns.count > 2 ? columns[2] : columns[1].upperBound..<columns[1].upperBound
        noteWeights = .allocate(capacity: N)
        noteWeights.initialize(repeating: 0)
        tickScratch = .allocate(capacity: K)
        tickScratch.initialize(repeating: 0)
        order = .allocate(capacity: max(1, s.outputWidth))
        order.initialize(repeating: 0)
        zeroTicks = groups.vocabulary.ixToTick.indices.filter { groups.vocabulary.ixToTick[$0] == 0 }
        isZeroTick = .allocate(capacity: K)
        isZeroTick.initialize(repeating: false)
        for t in zeroTicks { isZeroTick[t] = true }
        encoder = HitEncoder(groups: groups)
        sameNote = .allocate(capacity: N)
        sameNote.initialize(repeating: (0, 0))
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
        order.deallocate()
        isZeroTick.deallocate()
        sameNote.deallocate()
    }

    /// A primer event: its classes, and (for the position group) where it lies in its bar.
    public struct PrimerEvent: Hashable, Sendable {
        public var event: SampledEvent
        /// Ticks from the bar line (at the position group's ppq), and the bar's length.
        public var tickInBar: Int
        public var barTicks: Int

        public init(event: SampledEvent, tickInBar: Int = 0, barTicks: Int = 1920) {
            self.event = event
            self.tickInBar = tickInBar
            self.barTicks = barTicks
        }
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
    /// vocabulary with `rng` (after h and c) at the first beat of a bar; with one, see the file header.
    public func generate(
        count: Int, options: SamplingOptions = SamplingOptions(),
        primer: [PrimerEvent] = [], rng: inout SeededRNG
    ) throws -> [GeneratedHit] {
        var out: [GeneratedHit] = []
        out.reserveCapacity(max(0, count))
        try generate(count: count, options: options, primer: primer, rng: &rng) { out.append($0) }
        return out
    }

    /// Generates `count` hits after a primer given as classes only (every primer event at the
    /// first beat of a bar: for models without the position group); returns their classes.
    public func generate(
        count: Int, options: SamplingOptions = SamplingOptions(), primer: [SampledEvent], rng: inout SeededRNG
    ) throws -> [SampledEvent] {
        try generate(count: count, options: options, primer: Self.primer(primer), rng: &rng).map(\.event)
    }

    /// The primer events of a sequence of classes (positions unknown: every event at the
    /// first beat; for models without the position group, and tests).
    public static func primer(_ events: [SampledEvent]) -> [PrimerEvent] { events.map { PrimerEvent(event: $0) } }

    /// Generates `count` hits, handing each to `emit` as it is drawn. Allocates nothing per
    /// hit (the real-time path: an app can play each hit as it comes).
    public func generate(
        count: Int, options: SamplingOptions = SamplingOptions(),
        primer: [PrimerEvent] = [], rng: inout SeededRNG, emit: (GeneratedHit) throws -> Void
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
        count: Int, options: SamplingOptions, primer: [PrimerEvent], gridPrimer: GridPrimer?, rng: inout SeededRNG,
        emit: (GeneratedHit) throws -> Void
    ) throws {
        guard count >= 0 else { throw SamplerError.badCount(count) }
        for t in [options.temperature, options.noteTemperature, options.tickTemperature, options.velocityTemperature,
                  options.hitsTemperature, options.offsetTemperature, options.fillsTemperature].compactMap({ $0 }) {
            guard t.isFinite, t >= 0 else { throw SamplerError.badTemperature(t) }
        }
        for p in [options.topP, options.noteTopP, options.tickTopP, options.velocityTopP, options.hitsTopP,
                  options.offsetTopP].compactMap({ $0 }) {
            guard p > 0, p <= 1 else { throw SamplerError.badTopP(p) }
        }
        if let s = options.style {
            let n = grid?.group.styles?.count ?? 0
            guard (0..<n).contains(s) else { throw SamplerError.badStyle(s, styles: n) }
        }
        guard options.initScale.isFinite, options.initScale >= 0 else {
            throw SamplerError.badInitScale(options.initScale)
        }
        if options.warmupBars != 0 {
            guard options.warmupBars > 0 else { throw SamplerError.badWarmup("\(options.warmupBars) is below 0") }
            guard grid != nil else { throw SamplerError.badWarmup("an event model has no bars to draw ahead (a grid model does)") }
            guard gridPrimer == nil else { throw SamplerError.badWarmup("a primer sets the state: give one or the other") }
        }
        if let grid {
            guard primer.isEmpty else { throw SamplerError.gridPrimer }
            try grid.generate(count: count, options: options, primer: gridPrimer, rng: &rng, emit: emit)
            return
        }
        guard gridPrimer == nil else { throw SamplerError.gridPrimer }
        for (i, p) in primer.enumerated() {
            let e = p.event
            if !(0..<N).contains(e.note) || !(0..<K).contains(e.tick) || (B > 0 && !(0..<B).contains(e.velocity)) {
                throw SamplerError.primerOutOfRange(position: i, event: e, notes: N, ticks: K)
            }
        }
        // The bar the generated hits are placed in (position group only).
        var barTicks = 1
        if let p = groups.position {
            let meter = options.meter ?? p.meter
            guard p.fits(meter) else { throw SamplerError.meterTooLong(meter: meter, slots: p.slots, longestBar: p.longestBar) }
            barTicks = meter.barTicks(ppq: p.ppq)
        }
        let scale = Double(options.initScale)
        let H = shape.hidden
        for layer in 0..<shape.layers {
            lstm.setState(layer: layer, h: (0..<H).map { _ in Float(rng.uniform(-scale, scale)) },
                          c: (0..<H).map { _ in Float(rng.uniform(-scale, scale)) })
        }
        var x: SampledEvent
        var position = 0
        // Onset of the event fed next, in ticks from the start (for the lookback group).
        var onset = 0
        encoder.reset()
        let ticks = groups.vocabulary.ixToTick, notes = options.noteOutput.notes(groups.vocabulary)
        for n in 0..<N {
            var mask: (UInt64, UInt64) = (0, 0)
            for m in 0..<N where notes[m] == notes[n] {
                if m < 64 { mask.0 |= 1 << UInt64(m) } else { mask.1 |= 1 << UInt64(m - 64) }
            }
            sameNote[n] = mask
        }
        if let last = primer.last {
            for p in primer.dropLast() {
                onset += ticks[p.event.tick]
                step(p.event, tickInBar: p.tickInBar, onset: onset, barTicks: p.barTicks)
            }
            x = last.event
            onset += ticks[last.event.tick]
            position = last.tickInBar % barTicks
        } else {
            x = SampledEvent(note: rng.index(below: N), tick: rng.index(below: K), velocity: B > 0 ? rng.index(below: B) : 0)
        }
        struck = (0, 0)
        mark(x.note)
        // T = 0, or a T so small that 1/T overflows, is argmax (the limit T → 0).
        func effective(_ t: Float?) -> Float {
            let v = t ?? options.temperature
            return (1 / v).isFinite ? v : 0
        }
        let noteT = effective(options.noteTemperature), tickT = effective(options.tickTemperature)
        let velocityT = effective(options.velocityTemperature)
        guard (noteT == 0) == (tickT == 0) else { throw SamplerError.mixedArgmax }
        noteTopP = options.noteTopP ?? options.topP
        tickTopP = options.tickTopP ?? options.topP
        velocityTopP = options.velocityTopP ?? options.topP
        for _ in 0..<count {
            step(x, tickInBar: position, onset: onset, barTicks: barTicks)
            let logits = lstm.logits()
            var next = draw(logits, noteTemperature: noteT, tickTemperature: tickT, rng: &rng)
            let delta = ticks[next.tick]
            if delta != 0 { struck = (0, 0) }
            mark(next.note)
            position = (position + delta % barTicks) % barTicks
            onset += delta
            var velocity = 100
            if let v = groups.velocity {
                next.velocity = drawVelocityBin(logits, temperature: velocityT, rng: &rng)
                velocity = v.velocity(bin: next.velocity, uniform: rng.nextDouble())
            }
            try emit(GeneratedHit(event: next, hit: DrumHit(note: notes[next.note], delta: delta, velocity: velocity)))
            x = next
        }
    }

    /// One LSTM step on an event at `tickInBar` in its bar (a bar of `barTicks`, the event at
    /// `onset` ticks from the start), updating h and c.
    private func step(_ e: SampledEvent, tickInBar: Int, onset: Int, barTicks: Int) {
        _ = encoder.encode(note: Int32(e.note), tick: Int32(e.tick), onset: onset, tickInBar: tickInBar,
                           barTicks: barTicks, velocityBin: Int32(e.velocity), into: lstm.input)
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
            Softmax.nucleus(noteWeights, p: noteTopP, order: order)
            note = Softmax.draw(UnsafeBufferPointer(noteWeights), uniform: rng.nextDouble())
        } else {
            Softmax.probabilities(noteLogits, temperature: noteTemperature, into: noteProbs)
            Softmax.nucleus(noteProbs, p: noteTopP, order: order)
            note = Softmax.draw(UnsafeBufferPointer(noteProbs), uniform: rng.nextDouble())
        }
        if masked, isStruck(note) {
            // The later ticks only: their logits, with −∞ for tick value 0.
            for t in 0..<K { tickScratch[t] = isZeroTick[t] ? -Float.infinity : tickLogits[t] }
            Softmax.probabilities(UnsafeBufferPointer(tickScratch), temperature: temperature, into: tickProbs)
        } else {
            Softmax.probabilities(tickLogits, temperature: temperature, into: tickProbs)
        }
        Softmax.nucleus(tickProbs, p: tickTopP, order: order)
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

    /// The velocity bin from its softmax.
    private func drawVelocityBin(_ logits: UnsafeBufferPointer<Float>, temperature: Float, rng: inout SeededRNG) -> Int {
        let y = UnsafeBufferPointer(rebasing: logits[velocityColumns])
        if temperature == 0 { return Softmax.argmax(y) }
        let r = UnsafeMutableBufferPointer(rebasing: probs[velocityColumns])
        Softmax.probabilities(y, temperature: temperature, into: r)
        Softmax.nucleus(r, p: velocityTopP, order: order)
        return Softmax.draw(UnsafeBufferPointer(r), uniform: rng.nextDouble())
    }

    private func argmax(_ w: UnsafeBufferPointer<Double>) -> Int {
        var best = 0
        for j in 1..<w.count where w[j] > w[best] { best = j }
        return best
    }


    /// The negative log-likelihood (nats) of each event of `sequence` after the first, given
    /// the ones before it, under this sampler's own distributions at temperature 1 (its step,
    /// its softmax), from h = c = 0: `(note, tick)` per prediction. What `drummer eval`
    /// computes, from the runtime's side (original layout or the position-less part: positions
    /// are taken as 0).
    public func negativeLogLikelihoods(of sequence: [SampledEvent]) throws -> [(note: Double, tick: Double)] {
        for (i, e) in sequence.enumerated() where !(0..<N).contains(e.note) || !(0..<K).contains(e.tick) {
            throw SamplerError.primerOutOfRange(position: i, event: e, notes: N, ticks: K)
        }
        lstm.resetState()
        encoder.reset()
        var out: [(note: Double, tick: Double)] = []
        out.reserveCapacity(max(0, sequence.count - 1))
        var onset = 0
        // The model's meter (the bar length matters only to the lookback group, which needs positions).
        let barTicks = groups.position.map { $0.meter.barTicks(ppq: $0.ppq) } ?? 1
        for (e, next) in zip(sequence, sequence.dropFirst()) {
            onset += groups.vocabulary.ixToTick[e.tick]
            step(e, tickInBar: 0, onset: onset, barTicks: barTicks)
            let logits = lstm.logits()
            let noteProbs = UnsafeMutableBufferPointer(rebasing: probs[noteColumns])
            let tickProbs = UnsafeMutableBufferPointer(rebasing: probs[tickColumns])
            Softmax.probabilities(UnsafeBufferPointer(rebasing: logits[noteColumns]), into: noteProbs)
            Softmax.probabilities(UnsafeBufferPointer(rebasing: logits[tickColumns]), into: tickProbs)
            out.append((-log(Double(noteProbs[next.note])), -log(Double(tickProbs[next.tick]))))
        }
        return out
    }

    /// The original's baseline: notes and ticks drawn uniformly from the vocabulary (note
    /// first, then tick, per hit), velocity 100; like the sampler it never strikes a note twice
    /// at one onset, so that -n hits are written: a pair that would is drawn again (uniform over
    /// the pairs allowed; when none is, as with a vocabulary whose only tick is 0, the pair stands).
    public static func randomBaseline(
        count: Int, vocabulary: Vocabulary, noteOutput: NoteOutput = .generalMIDI, rng: inout SeededRNG
    ) throws -> [GeneratedHit] {
        guard count >= 0 else { throw SamplerError.badCount(count) }
        var out: [GeneratedHit] = []
        out.reserveCapacity(count)
        let hasLaterTick = vocabulary.ixToTick.contains { $0 != 0 }
        let notes = noteOutput.notes(vocabulary), distinct = Set(notes).count
        // Written notes struck at this onset.
        var struck = Set<Int>()
        for _ in 0..<count {
            var e: SampledEvent
            repeat {
                e = SampledEvent(note: rng.index(below: vocabulary.notes), tick: rng.index(below: vocabulary.ticks))
            } while vocabulary.ixToTick[e.tick] == 0 && struck.contains(notes[e.note])
                && (hasLaterTick || struck.count < distinct)
            if vocabulary.ixToTick[e.tick] != 0 { struck.removeAll(keepingCapacity: true) }
            struck.insert(notes[e.note])
            out.append(GeneratedHit(event: e, hit: DrumHit(note: notes[e.note], delta: vocabulary.ixToTick[e.tick])))
        }
        return out
    }
}

extension SamplingOptions {
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

    /// Sets each group's top-p from `shares` (by output group name, as `TopPSetting.resolved`
    /// gives them); groups not named keep `topP`.
    public mutating func set(topP shares: [String: Double]) {
        noteTopP = shares["note"]
        tickTopP = shares["tick"]
        velocityTopP = shares["velocity"]
        hitsTopP = shares["hits"]
        offsetTopP = shares["offset"]
    }
}
