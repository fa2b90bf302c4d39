// Humanize: a stiff (quantized, flat-velocity) beat keeps every hit's drum and bar position,
// and a grid model draws each hit's velocity and micro-timing, as it would when it plays
// (GrooVAE's humanize task, done with the autoregressive model itself; GridSampler.humanize
// says how). h and c start as the sampler's do (uniform in ±initScale).
import DrummerCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct HumanizeOptions: Equatable, Sendable {
    /// Softmax temperature of the offset and velocity draws (1: the model's distribution).
    public var temperature: Float
    /// The velocity draws' own temperature, and the timing (offset) draws' (nil: `temperature`).
    public var velocityTemperature: Float?
    public var timingTemperature: Float?
    /// h and c start uniform in ±initScale.
    public var initScale: Float
    /// A grid model with a style input: the style it plays (nil: the likeliest for the beat,
    /// `Humanizer.likeliestStyle`).
    public var style: Int?

    public init(temperature: Float = 1, initScale: Float = 0.1) {
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
    /// The grid model's runtime, which humanizes (GridSampler.humanize).
    let grid: GridSampler

    public init(weights: LSTMWeights, groups: ModelGroups) throws {
        guard groups.shape(hidden: weights.shape.hidden, layers: weights.shape.layers) == weights.shape else {
            throw HumanizeError.modelLacksGroups("its weights do not match its groups")
        }
        guard let g = groups.grid else {
            throw HumanizeError.modelLacksGroups("a model of the 2017 layout has no velocity or timing to draw (a grid model does)")
        }
        self.weights = weights
        self.groups = groups
        grid = GridSampler(weights: weights, group: g)
        lstm = grid.lstm  // the grid humanizer steps there; no second copy of the parameters
    }

    /// For a grid model with a style input, the style under which it finds the beat's hit sets
    /// likeliest (what `humanize` plays when `HumanizeOptions.style` is nil), among the styles
    /// `among` (nil: all); nil for a model without one.
    public func likeliestStyle(_ beat: [BeatHit], among: [Int]? = nil) throws -> Int? { try grid.likeliestStyle(beat, among: among) }

    /// The beat's hits (onsets non-decreasing) with drawn onsets and velocities; notes and
    /// order kept.
    public func humanize(_ beat: [BeatHit], options: HumanizeOptions = HumanizeOptions(),
                         rng: inout SeededRNG) throws -> [BeatHit] {
        for t in [options.temperature, options.velocityTemperature, options.timingTemperature].compactMap({ $0 }) {
            guard t.isFinite, t > 0 else { throw HumanizeError.badOption("--temperature must be a positive number, got \(t)") }
        }
        let velocityT = options.velocityTemperature ?? options.temperature
        let timingT = options.timingTemperature ?? options.temperature
        if let s = options.style, !(0..<(grid.group.styles?.count ?? 0)).contains(s) {
            throw HumanizeError.badOption("style \(s): the model has " + (grid.group.styles.map { "styles 0..<\($0.count)" } ?? "no style input"))
        }
        return try grid.humanize(beat, velocityTemperature: velocityT, offsetTemperature: timingT,
                                 initScale: options.initScale, style: options.style, rng: &rng)
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
}
