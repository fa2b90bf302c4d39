// Humanize: a stiff (quantized, flat-velocity) beat keeps every hit's drum and bar position,
// and the model draws each hit's velocity and micro-timing, as it would when it plays
// (GrooVAE's humanize task, done with the autoregressive model itself).
//
// The model reads the hits one after another, exactly as the sampler feeds them (HitEncoder:
// note, tick, position in the bar, lookback, velocity bin). Before hit i (i ≥ 1) its logits
// predict the next hit; the note is the beat's own (the model's note prediction is not used),
//   tick     ~ softmax(y_tick / T) restricted to the tick values that put hit i within
//              ±window ticks of its place in the stiff beat (at or after hit i − 1's onset);
//              the closest tick value when none does
//   velocity ~ softmax(y_velocity / T), a bin, then a value of the training data's within it
// and hit i is fed with what was drawn. Hit 0 keeps its place; its velocity is drawn from the
// training data's velocities. h and c start as the sampler's do (uniform in ±initScale).
// Draws per hit: the tick, the velocity bin, the velocity value (hit 0: the value only).
import DrummerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct HumanizeOptions: Equatable, Sendable {
    /// How far a hit may move from its place in the stiff beat, in ticks of the model's PPQ.
    public var window: Int
    /// Softmax temperature of the tick and velocity draws (1: the model's distribution).
    public var temperature: Float
    /// The velocity draws' own temperature, and the timing draws' (tick, or a grid model's
    /// offset) (nil: `temperature`).
    public var velocityTemperature: Float?
    public var timingTemperature: Float?
    /// h and c start uniform in ±initScale.
    public var initScale: Float
    /// A grid model with a style input: the style it plays (nil: the likeliest for the beat,
    /// `Humanizer.likeliestStyle`).
    public var style: Int?

    public init(window: Int = 60, temperature: Float = 1, initScale: Float = 0.1) {
        self.window = window
        self.temperature = temperature
        self.initScale = initScale
    }
}

public enum HumanizeError: Error, CustomStringConvertible, Equatable {
    case modelLacksGroups(String)
    case notesOutsideVocabulary([Int])
    case badOption(String)

    public var description: String {
        switch self {
        case .modelLacksGroups(let m): return "the model cannot humanize: \(m)"
        case .notesOutsideVocabulary(let notes):
            return "notes \(notes.map(String.init).joined(separator: ", ")) are not in the model's vocabulary"
        case .badOption(let m): return m
        }
    }
}

/// One hit of a beat: its note, its onset and position in its bar (ticks at the model's PPQ).
public struct BeatHit: Hashable, Sendable {
    public var note: Int
    public var onset: Int
    public var velocity: Int
    /// Ticks from the hit's bar line, and the bar's length.
    public var tickInBar: Int
    public var barTicks: Int

    public init(note: Int, onset: Int, velocity: Int = 100, tickInBar: Int, barTicks: Int) {
        self.note = note
        self.onset = onset
        self.velocity = velocity
        self.tickInBar = tickInBar
        self.barTicks = barTicks
    }
}

/// Draws velocities and micro-timing for a beat's hits. Not thread-safe.
///
/// A beat's same note twice at one onset (which MIDI cannot hold) should be merged first
/// (`Humanizer.merged`); the humanizer never strikes one note twice at one onset.
public final class Humanizer {
    public let weights: LSTMWeights
    public let groups: ModelGroups
    let lstm: LSTMInference
    private var encoder: HitEncoder
    private let velocity: VelocityGroup
    private let tickColumns: Range<Int>, velocityColumns: Range<Int>

    /// A grid model's humanizer (GridSampler.humanize); nil for the event layouts.
    let grid: GridSampler?

    public init(weights: LSTMWeights, groups: ModelGroups) throws {
        guard groups.shape(hidden: weights.shape.hidden, layers: weights.shape.layers) == weights.shape else {
            throw HumanizeError.modelLacksGroups("its weights do not match its groups")
        }
        if let g = groups.grid {
            self.weights = weights
            self.groups = groups
            let grid = GridSampler(weights: weights, group: g)
            self.grid = grid
            velocity = g.velocity
            lstm = grid.lstm  // the grid humanizer steps there; no second copy of the parameters
            encoder = HitEncoder(groups: ModelGroups(vocabulary: groups.vocabulary))
            tickColumns = 0..<0
            velocityColumns = 0..<0
            return
        }
        grid = nil
        guard groups.position != nil else { throw HumanizeError.modelLacksGroups("it has no position group (train it on a dataset with positions)") }
        guard let v = groups.velocity else { throw HumanizeError.modelLacksGroups("it has no velocity group") }
        self.weights = weights
        self.groups = groups
        velocity = v
        lstm = LSTMInference(weights: weights)
        encoder = HitEncoder(groups: groups)
        let columns = weights.shape.parameters.head.outputColumns
        tickColumns = columns[1]
        velocityColumns = columns[2]
    }

    /// For a grid model with a style input, the style under which it finds the beat's hit sets
    /// likeliest (what `humanize` plays when `HumanizeOptions.style` is nil), among the styles
    /// `among` (nil: all); nil for other models.
    public func likeliestStyle(_ beat: [BeatHit], among: [Int]? = nil) throws -> Int? { try grid?.likeliestStyle(beat, among: among) }

    /// The beat's hits (onsets non-decreasing) with drawn onsets and velocities; notes and
    /// order kept.
    public func humanize(_ beat: [BeatHit], options: HumanizeOptions = HumanizeOptions(),
                         rng: inout SeededRNG) throws -> [BeatHit] {
        guard options.window >= 0 else { throw HumanizeError.badOption("--window must not be negative, got \(options.window)") }
        for t in [options.temperature, options.velocityTemperature, options.timingTemperature].compactMap({ $0 }) {
            guard t.isFinite, t > 0 else { throw HumanizeError.badOption("--temperature must be a positive number, got \(t)") }
        }
        let velocityT = options.velocityTemperature ?? options.temperature
        let timingT = options.timingTemperature ?? options.temperature
        if let grid {
            if let s = options.style, !(0..<(grid.group.styles?.count ?? 0)).contains(s) {
                throw HumanizeError.badOption("style \(s): the model has " + (grid.group.styles.map { "styles 0..<\($0.count)" } ?? "no style input"))
            }
            return try grid.humanize(beat, velocityTemperature: velocityT, offsetTemperature: timingT,
                                     initScale: options.initScale, style: options.style, rng: &rng)
        }
        let index = VocabularyIndex(groups.vocabulary)
        let unknown = Set(beat.map(\.note).filter { index.note($0) == nil }).sorted()
        guard unknown.isEmpty else { throw HumanizeError.notesOutsideVocabulary(unknown) }
        guard !beat.isEmpty else { return [] }
        let ticks = groups.vocabulary.ixToTick
        let scale = Double(options.initScale), H = weights.shape.hidden
        for layer in 0..<weights.shape.layers {
            lstm.setState(layer: layer, h: (0..<H).map { _ in Float(rng.uniform(-scale, scale)) },
                          c: (0..<H).map { _ in Float(rng.uniform(-scale, scale)) })
        }
        encoder.reset()
        var out: [BeatHit] = []
        out.reserveCapacity(beat.count)
        var onset = 0, velocityBin = 0
        // Notes struck at the current onset: a note is never struck twice at one onset.
        var struck = Set<Int>()
        for (i, hit) in beat.enumerated() {
            var h = hit
            if i == 0 {
                onset = hit.onset
                h.velocity = velocity.velocity(bin: drawBin(rng: &rng), uniform: rng.nextDouble())
            } else {
                let logits = lstm.logits()
                let delta = drawDelta(logits, from: onset, to: hit.onset, window: options.window,
                                      sameOnsetAllowed: !struck.contains(hit.note),
                                      temperature: timingT, ticks: ticks, rng: &rng)
                if delta != 0 { struck.removeAll(keepingCapacity: true) }
                onset += delta
                velocityBin = drawFromLogits(logits, velocityColumns, temperature: velocityT, rng: &rng)
                h.velocity = velocity.velocity(bin: velocityBin, uniform: rng.nextDouble())
                // The hit's place in its bar moves with it (within its bar's length).
                h.tickInBar = ((hit.tickInBar + onset - hit.onset) % hit.barTicks + hit.barTicks) % hit.barTicks
                h.onset = onset
            }
            if i == 0 { velocityBin = velocity.bin(of: h.velocity) ?? 0 }
            struck.insert(hit.note)
            let deltaClass = index.tick(i == 0 ? 0 : onset - out[i - 1].onset) ?? closestTick(to: i == 0 ? 0 : onset - out[i - 1].onset, ticks)
            _ = encoder.encode(note: Int32(index.note(hit.note)!), tick: Int32(deltaClass), onset: onset,
                               tickInBar: h.tickInBar, barTicks: hit.barTicks, velocityBin: Int32(velocityBin),
                               into: lstm.input)
            lstm.step()
            out.append(h)
        }
        return out
    }

    /// A tick value for the hit after one at `onset`, placed within ±window of `target` (and not
    /// at `onset` itself unless `sameOnsetAllowed`).
    private func drawDelta(_ logits: UnsafeBufferPointer<Float>, from onset: Int, to target: Int, window: Int,
                           sameOnsetAllowed: Bool, temperature: Float, ticks: [Int], rng: inout SeededRNG) -> Int {
        let y = UnsafeBufferPointer(rebasing: logits[tickColumns])
        let lo = max(target - window, sameOnsetAllowed ? onset : onset + 1), hi = max(lo, target + window)
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: y.count) { w in
            var top = -Double.infinity
            for k in 0..<y.count where (lo...hi).contains(onset + ticks[k]) { top = max(top, Double(y[k])) }
            guard top > -Double.infinity else { return ticks[closestTick(to: max(lo, target) - onset, ticks)] }
            let invT = 1 / Double(temperature)
            for k in 0..<y.count {
                w[k] = (lo...hi).contains(onset + ticks[k]) ? exp((Double(y[k]) - top) * invT) : 0
            }
            return ticks[Softmax.draw(UnsafeBufferPointer(w), uniform: rng.nextDouble())]
        }
    }

    /// A class of the output group at `columns`, from its softmax at `temperature`.
    private func drawFromLogits(_ logits: UnsafeBufferPointer<Float>, _ columns: Range<Int>, temperature: Float,
                                rng: inout SeededRNG) -> Int {
        let y = UnsafeBufferPointer(rebasing: logits[columns])
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: y.count) { w in
            var top = -Double.infinity
            for v in y { top = max(top, Double(v)) }
            for k in 0..<y.count { w[k] = exp((Double(y[k]) - top) / Double(temperature)) }
            return Softmax.draw(UnsafeBufferPointer(w), uniform: rng.nextDouble())
        }
    }

    /// A velocity bin drawn from the training data's velocity histogram.
    private func drawBin(rng: inout SeededRNG) -> Int {
        let counts = velocity.bins.map { r in r.reduce(0) { $0 + velocity.histogram[$1 - 1] } }
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: counts.count) { w in
            for (k, c) in counts.enumerated() { w[k] = Double(c) + 1e-9 }
            return Softmax.draw(UnsafeBufferPointer(w), uniform: rng.nextDouble())
        }
    }

    /// The beat without its repeats of one note at one onset (the first is kept), and how many
    /// were dropped.
    public static func merged(_ beat: [BeatHit]) -> (beat: [BeatHit], dropped: Int) {
        struct Key: Hashable { let note: Int, onset: Int }
        var seen = Set<Key>(minimumCapacity: beat.count), out: [BeatHit] = []
        out.reserveCapacity(beat.count)
        for h in beat where seen.insert(Key(note: h.note, onset: h.onset)).inserted { out.append(h) }
        return (out, beat.count - out.count)
    }

    private func closestTick(to delta: Int, _ ticks: [Int]) -> Int {
        ticks.indices.min { abs(ticks[$0] - delta) < abs(ticks[$1] - delta) } ?? 0
    }
}
