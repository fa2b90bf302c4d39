// The runtime sampler: the original 2017 algorithm, plus temperature, seed and primer.
//
//   h, c  ← uniform in ±initScale (H each, drawn from the seeded generator: h then c)
//   x     ← the start event: the primer's last event, or a random (note, tick)
//   repeat n times:
//       h, c ← LSTM step on one-hot(x)     (two rows of Wx + an H×4H GEMV)
//       y    ← [h, 1] · Wy                 (V logits: N note logits | K tick logits)
//       note ~ softmax(y[..<N] / T), tick ~ softmax(y[N...] / T)   (T = 0: argmax)
//       emit (note, tick); x ← (note, tick)
//
// A primer p₁…p_k sets the state: p₁…p_{k-1} are stepped through the model and
// p_k is the start event, so the first generated hit is conditioned on the whole
// primer and the primer's hits are not part of the output.
// H = hidden size, N = notes, K = ticks, V = N + K. The LSTM step is DrummerCore's
// LSTMInference (the same code `drummer eval` runs). Buffers are allocated once per
// sampler; generating a hit allocates nothing (the array-returning `generate` grows
// only its output, reserved up front).

import DrummerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How to sample.
public struct SamplingOptions: Equatable, Sendable {
    /// Softmax temperature: 1 samples the model's distribution, smaller is more
    /// conservative, 0 always takes the most likely note and tick (argmax).
    public var temperature: Float
    /// h and c start uniform in ±initScale (the original used 0.1).
    public var initScale: Float

    public init(temperature: Float = 1, initScale: Float = 0.1) {
        self.temperature = temperature
        self.initScale = initScale
    }
}

public enum SamplerError: Error, CustomStringConvertible, Equatable {
    case badTemperature(Float)
    case badInitScale(Float)
    case badCount(Int)
    case primerOutOfRange(position: Int, event: SampledEvent, notes: Int, ticks: Int)
    case vocabularyMismatch(String)

    public var description: String {
        switch self {
        case .badTemperature(let t):
            return "temperature \(t) is invalid: it must be a finite number ≥ 0"
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

/// Generates drum hits from an LSTM model. Not thread-safe: one sampler per thread.
public final class Sampler {
    public let weights: LSTMWeights
    public let vocabulary: Vocabulary
    public var shape: ModelShape { weights.shape }

    /// The forward step (shared with evaluation) and the probabilities of the two groups (O).
    private let lstm: LSTMInference
    private let probs: UnsafeMutableBufferPointer<Float>

    public init(weights: LSTMWeights, vocabulary: Vocabulary) throws {
        let s = weights.shape
        guard s.notes == vocabulary.notes, s.ticks == vocabulary.ticks else {
            throw SamplerError.vocabularyMismatch(
                "weights have \(s.notes) notes and \(s.ticks) ticks, "
                    + "the vocabulary \(vocabulary.notes) and \(vocabulary.ticks)")
        }
        self.weights = weights
        self.vocabulary = vocabulary
        lstm = LSTMInference(weights: weights)
        probs = .allocate(capacity: s.outputWidth)
        probs.initialize(repeating: 0)
    }

    public convenience init(model: LoadedModel) throws {
        try self.init(weights: model.weights, vocabulary: model.vocabulary)
    }

    deinit { probs.deallocate() }

    /// Generates `count` hits. Without a primer the start event is drawn uniformly
    /// from the vocabulary with `rng` (after h and c); with one, see the file header.
    public func generate(
        count: Int, options: SamplingOptions = SamplingOptions(),
        primer: [SampledEvent] = [], rng: inout SeededRNG
    ) throws -> [SampledEvent] {
        var out: [SampledEvent] = []
        out.reserveCapacity(max(0, count))
        try generate(count: count, options: options, primer: primer, rng: &rng) { out.append($0) }
        return out
    }

    /// Generates `count` hits, handing each to `emit` as it is drawn. Allocates nothing
    /// per hit (the real-time path: an app can play each hit as it comes).
    public func generate(
        count: Int, options: SamplingOptions = SamplingOptions(),
        primer: [SampledEvent] = [], rng: inout SeededRNG, emit: (SampledEvent) throws -> Void
    ) throws {
        guard count >= 0 else { throw SamplerError.badCount(count) }
        guard options.temperature.isFinite, options.temperature >= 0 else {
            throw SamplerError.badTemperature(options.temperature)
        }
        guard options.initScale.isFinite, options.initScale >= 0 else {
            throw SamplerError.badInitScale(options.initScale)
        }
        let N = shape.notes, K = shape.ticks
        for (i, e) in primer.enumerated() where !(0..<N).contains(e.note) || !(0..<K).contains(e.tick) {
            throw SamplerError.primerOutOfRange(position: i, event: e, notes: N, ticks: K)
        }
        let scale = Double(options.initScale)
        let H = shape.hidden
        lstm.setState(h: (0..<H).map { _ in Float(rng.uniform(-scale, scale)) },
                      c: (0..<H).map { _ in Float(rng.uniform(-scale, scale)) })
        var x: SampledEvent
        if let last = primer.last {
            for e in primer.dropLast() { step(e) }
            x = last
        } else {
            x = SampledEvent(note: rng.index(below: N), tick: rng.index(below: K))
        }
        // T = 0, or a T so small that 1/T overflows, is argmax (the limit T → 0).
        let temperature: Float = (1 / options.temperature).isFinite ? options.temperature : 0
        for _ in 0..<count {
            step(x)
            x = draw(temperature: temperature, rng: &rng)
            try emit(x)
        }
    }

    /// One LSTM step on the one-hot event, updating h and c.
    private func step(_ e: SampledEvent) {
        lstm.input[0] = e.note
        lstm.input[1] = e.tick
        lstm.step()
    }

    /// Output layer, two softmaxes, one draw each (note first, then tick).
    private func draw(temperature: Float, rng: inout SeededRNG) -> SampledEvent {
        let N = shape.notes, O = shape.outputWidth
        let logits = lstm.logits()
        let noteLogits = UnsafeBufferPointer(rebasing: logits[0..<N])
        let tickLogits = UnsafeBufferPointer(rebasing: logits[N..<O])
        if temperature == 0 {
            return SampledEvent(note: Softmax.argmax(noteLogits), tick: Softmax.argmax(tickLogits))
        }
        let noteProbs = UnsafeMutableBufferPointer(rebasing: probs[0..<N])
        let tickProbs = UnsafeMutableBufferPointer(rebasing: probs[N..<O])
        Softmax.probabilities(noteLogits, temperature: temperature, into: noteProbs)
        Softmax.probabilities(tickLogits, temperature: temperature, into: tickProbs)
        let note = Softmax.draw(UnsafeBufferPointer(noteProbs), uniform: rng.nextDouble())
        let tick = Softmax.draw(UnsafeBufferPointer(tickProbs), uniform: rng.nextDouble())
        return SampledEvent(note: note, tick: tick)
    }

    /// The negative log-likelihood (nats) of each event of `sequence` after the first, given
    /// the ones before it, under this sampler's own distributions at temperature 1 (its step,
    /// its softmax), from h = c = 0: `(note, tick)` per prediction. What `drummer eval`
    /// computes, from the runtime's side.
    public func negativeLogLikelihoods(of sequence: [SampledEvent]) throws -> [(note: Double, tick: Double)] {
        let N = shape.notes, K = shape.ticks, O = shape.outputWidth
        for (i, e) in sequence.enumerated() where !(0..<N).contains(e.note) || !(0..<K).contains(e.tick) {
            throw SamplerError.primerOutOfRange(position: i, event: e, notes: N, ticks: K)
        }
        lstm.resetState()
        var out: [(note: Double, tick: Double)] = []
        out.reserveCapacity(max(0, sequence.count - 1))
        for (e, next) in zip(sequence, sequence.dropFirst()) {
            step(e)
            let logits = lstm.logits()
            let noteProbs = UnsafeMutableBufferPointer(rebasing: probs[0..<N])
            let tickProbs = UnsafeMutableBufferPointer(rebasing: probs[N..<O])
            Softmax.probabilities(UnsafeBufferPointer(rebasing: logits[0..<N]), into: noteProbs)
            Softmax.probabilities(UnsafeBufferPointer(rebasing: logits[N..<O]), into: tickProbs)
            out.append((-log(Double(noteProbs[next.note])), -log(Double(tickProbs[next.tick]))))
        }
        return out
    }

    /// The original's baseline: notes and ticks drawn uniformly from the vocabulary
    /// (note first, then tick, per hit).
    public static func randomBaseline(
        count: Int, vocabulary: Vocabulary, rng: inout SeededRNG
    ) throws -> [SampledEvent] {
        guard count >= 0 else { throw SamplerError.badCount(count) }
        var out: [SampledEvent] = []
        out.reserveCapacity(count)
        for _ in 0..<count {
            let note = rng.index(below: vocabulary.notes)
            out.append(SampledEvent(note: note, tick: rng.index(below: vocabulary.ticks)))
        }
        return out
    }
}
