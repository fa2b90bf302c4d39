// An independent reference for the sampler's numerics: the model equations
// written out literally in Double, with the full z = [x, h, 1] product (no
// one-hot shortcut, no BLAS, no layout helper of the production code: every index
// is computed here from N, K and H), and the same order of random draws.
import DrummerCore
@testable import Sample

#if canImport(Glibc)
import Glibc
#endif

struct ReferenceLSTM {
    let shape: ModelShape
    let wx: [Double]
    let wy: [Double]
    var h: [Double]
    var c: [Double]

    init(_ w: LSTMWeights) {
        shape = w.shape
        wx = w.wx.map(Double.init)
        wy = w.wy.map(Double.init)
        h = Array(repeating: 0, count: w.shape.hidden)
        c = h
    }

    mutating func step(note: Int, tick: Int) { step(classes: [note, tick]) }

    /// One step on an event given as one class per input group (in Wx row order): z is the
    /// one-hot of each group side by side (group g starts after the sizes of the groups
    /// before it), then h, then 1.
    mutating func step(classes: [Int]) {
        precondition(classes.count == shape.inputGroups.count, "one class per input group")
        let H = shape.hidden, G = 4 * H
        let I = shape.inputGroups.reduce(0, +)
        var z = [Double](repeating: 0, count: I + H + 1)
        var start = 0
        for (size, k) in zip(shape.inputGroups, classes) {
            precondition((0..<size).contains(k), "class \(k) outside a group of \(size)")
            z[start + k] = 1
            start += size
        }
        for j in 0..<H { z[I + j] = h[j] }
        z[I + H] = 1
        var gates = [Double](repeating: 0, count: G)
        for r in 0..<z.count where z[r] != 0 {
            for j in 0..<G { gates[j] += z[r] * wx[r * G + j] }
        }
        func sig(_ x: Double) -> Double { 1 / (1 + exp(-x)) }
        for j in 0..<H {
            c[j] = sig(gates[j]) * c[j] + sig(gates[H + j]) * tanh(gates[3 * H + j])
            h[j] = sig(gates[2 * H + j]) * tanh(c[j])
        }
    }

    /// The logits of every output group side by side (O = the sum of their sizes).
    func logits() -> [Double] {
        let H = shape.hidden, O = shape.outputGroups.reduce(0, +)
        var y = [Double](repeating: 0, count: O)
        for j in 0..<O {
            var s = wy[H * O + j]
            for k in 0..<H { s += h[k] * wy[k * O + j] }
            y[j] = s
        }
        return y
    }

    static func softmax(_ x: ArraySlice<Double>, _ t: Double) -> [Double] {
        let m = x.max() ?? 0
        let e = x.map { exp(($0 - m) / t) }
        let s = e.reduce(0, +)
        return e.map { $0 / s }
    }

    static func pick(_ p: [Double], _ u: Double) -> Int {
        var acc = 0.0
        for (j, v) in p.enumerated() {
            acc += v
            if u < acc { return j }
        }
        return p.count - 1
    }

    static func argmax(_ x: ArraySlice<Double>) -> Int {
        var best = x.startIndex
        for j in x.indices where x[j] > x[best] { best = j }
        return best - x.startIndex
    }

    /// The reference's own view of a model's groups (it does not use ModelGroups).
    struct Groups {
        /// The value (ticks since the previous onset) of each tick class.
        var tickValues: [Int]
        /// The position-in-bar input: the slot is the ticks after the bar line divided by
        /// `ticksPerSlot`, fed one-hot over `slots`, or in binary (one group of 2 per bit,
        /// lowest bit first); the generated bars are `barTicks` long.
        var position: (binary: Bool, slots: Int, ticksPerSlot: Int, barTicks: Int)?
        /// The velocity group: its bins (in and out) and how many training hits had each
        /// velocity (index v − 1).
        var velocity: (bins: [ClosedRange<Int>], histogram: [Int])?
    }

    /// What a reference run produces.
    struct Run: Equatable {
        /// The drawn classes (velocity: the bin, 0 without a velocity group).
        var events: [SampledEvent] = []
        /// The MIDI velocity of each drawn hit (100 without a velocity group).
        var velocities: [Int] = []
        /// Ticks after the bar line of the event fed to the model before each draw (0
        /// without a position group).
        var fed: [Int] = []
    }

    /// Ticks in a bar of `numerator`/`denominator` at `ppq` ticks per quarter note.
    static func barTicks(_ numerator: Int, _ denominator: Int, ppq: Int) -> Int { numerator * ppq * 4 / denominator }

    /// The class of each input group for an event `tickInBar` ticks after its bar line.
    static func inputClasses(_ e: SampledEvent, tickInBar: Int, groups: Groups) -> [Int] {
        var classes = [e.note, e.tick]
        if let p = groups.position {
            let slot = tickInBar / p.ticksPerSlot
            precondition(slot < p.slots, "tick \(tickInBar) is past the last slot")
            if p.binary {
                var bits = 1
                while 1 << bits < p.slots { bits += 1 }
                for b in 0..<bits { classes.append(slot / (1 << b) % 2) }
            } else {
                classes.append(slot)
            }
        }
        if groups.velocity != nil { classes.append(e.velocity) }
        return classes
    }

    /// A velocity of the bin `r` drawn with u from the histogram's velocities in it: the
    /// smallest v whose cumulative share of the bin's hits exceeds u (the bin's middle when
    /// the histogram has none there).
    static func velocity(in r: ClosedRange<Int>, histogram: [Int], uniform u: Double) -> Int {
        let total = r.reduce(0) { $0 + histogram[$1 - 1] }
        guard total > 0 else { return (r.lowerBound + r.upperBound) / 2 }
        var acc = 0
        for v in r {
            acc += histogram[v - 1]
            if u * Double(total) < Double(acc) { return v }
        }
        return r.upperBound
    }

    /// The sampler's algorithm, written independently: the joint distribution of (note, tick)
    /// without the pairs that repeat a note already struck at the current onset (the tick of
    /// value 0), renormalised; drawn as the note from its marginal, then the tick given the
    /// note; then the velocity bin from its own softmax and a velocity within it. The position
    /// fed with each event is its onset (the sum of the ticks drawn, from the primer's last
    /// event's place in its bar, or from a bar line) modulo the bar.
    /// `sounds`: the note written for each note index; notes written alike are struck together
    /// (nil: each note is its own).
    static func generate(
        _ w: LSTMWeights, groups: Groups, count: Int, temperature: Double, initScale: Double,
        primer: [(event: SampledEvent, tickInBar: Int)], seed: UInt64, sounds: [Int]? = nil
    ) -> Run {
        var rng = SeededRNG(seed: seed)
        var m = ReferenceLSTM(w)
        let H = w.shape.hidden, N = w.shape.notes, K = groups.tickValues.count
        let B = groups.velocity?.bins.count ?? 0
        let bar = groups.position?.barTicks ?? 1
        let zeroTick = groups.tickValues.firstIndex(of: 0)
        m.h = (0..<H).map { _ in Double(Float(rng.uniform(-initScale, initScale))) }
        m.c = (0..<H).map { _ in Double(Float(rng.uniform(-initScale, initScale))) }
        var x: SampledEvent
        var onset = 0
        if let last = primer.last {
            for p in primer.dropLast() { m.step(classes: inputClasses(p.event, tickInBar: p.tickInBar, groups: groups)) }
            x = last.event
            onset = last.tickInBar
        } else {
            x = SampledEvent(note: rng.index(below: N), tick: rng.index(below: K), velocity: B > 0 ? rng.index(below: B) : 0)
        }
        // A struck note strikes every note index written as the same note.
        func alike(_ n: Int) -> [Int] { sounds.map { s in (0..<N).filter { s[$0] == s[n] } } ?? [n] }
        var struck = Set(alike(x.note))
        var run = Run()
        for _ in 0..<count {
            let tickInBar = onset % bar
            run.fed.append(groups.position == nil ? 0 : tickInBar)
            m.step(classes: inputClasses(x, tickInBar: tickInBar, groups: groups))
            let y = m.logits()
            let note: Int, tick: Int
            if temperature == 0 {
                // The limit T → 0: the allowed pair with the largest summed logit (every pair tried).
                var best = (n: -1, t: -1, score: -Double.infinity)
                for n in 0..<N {
                    for t in 0..<K where !(struck.contains(n) && t == zeroTick) {
                        let score = y[n] + y[N + t]
                        if score > best.score { best = (n, t, score) }
                    }
                }
                (note, tick) = (best.n, best.t)
            } else {
                let p = softmax(y[..<N], temperature)
                let q = softmax(y[N..<(N + K)], temperature)
                let q0 = zeroTick.map { q[$0] } ?? 0
                let weights = (0..<N).map { struck.contains($0) ? p[$0] * (1 - q0) : p[$0] }
                let total = weights.reduce(0, +)
                note = pick(weights.map { $0 / total }, rng.nextDouble())
                var tickProbs = q
                if struck.contains(note), let z = zeroTick {
                    tickProbs[z] = 0
                    let rest = tickProbs.reduce(0, +)
                    tickProbs = tickProbs.map { $0 / rest }
                }
                tick = pick(tickProbs, rng.nextDouble())
            }
            if tick != zeroTick { struck = [] }
            struck.formUnion(alike(note))
            var bin = 0, velocity = 100
            if let v = groups.velocity {
                let yv = y[(N + K)..<(N + K + B)]
                bin = temperature == 0 ? argmax(yv) : pick(softmax(yv, temperature), rng.nextDouble())
                velocity = Self.velocity(in: v.bins[bin], histogram: v.histogram, uniform: rng.nextDouble())
            }
            onset += groups.tickValues[tick]
            x = SampledEvent(note: note, tick: tick, velocity: bin)
            run.events.append(x)
            run.velocities.append(velocity)
        }
        return run
    }

    /// The original layout: (note, tick) in and out, tick class `zeroTick` the one of value 0.
    static func generate(
        _ w: LSTMWeights, zeroTick: Int, count: Int, temperature: Double, initScale: Double,
        primer: [SampledEvent], seed: UInt64, sounds: [Int]? = nil
    ) -> [SampledEvent] {
        // Without a position group only which tick is 0 matters.
        let values = (0..<w.shape.ticks).map { $0 == zeroTick ? 0 : $0 + 1 }
        return generate(w, groups: Groups(tickValues: values), count: count, temperature: temperature,
                        initScale: initScale, primer: primer.map { ($0, 0) }, seed: seed, sounds: sounds).events
    }
}

enum TestModels {
    /// A small random model (N=4, K=6, H=8) with weights large enough that the
    /// distributions are far from uniform.
    static func small(seed: UInt64 = 3, scale: Double = 1.5) throws -> (LSTMWeights, Vocabulary) {
        let vocab = try Vocabulary(ixToNote: [36, 38, 42, 46], ixToTick: [0, 30, 60, 120, 240, 480])
        let shape = vocab.shape(hidden: 8)
        var rng = SeededRNG(seed: seed)
        let wx = (0..<shape.wxCount).map { _ in Float(rng.uniform(-scale, scale)) }
        let wy = (0..<shape.wyCount).map { _ in Float(rng.uniform(-scale, scale)) }
        return (try LSTMWeights(shape: shape, wx: wx, wy: wy), vocab)
    }

    /// The velocity histogram of the groove test models: none below 21, none at the velocities
    /// ending in 3, uneven counts elsewhere (peaks at multiples of 10).
    static let grooveHistogram: [Int] = (1...127).map { v in v <= 20 || v % 10 == 3 ? 0 : (v * 37) % 11 + 1 + (v % 10 == 0 ? 30 : 0) }

    /// A small random groove model (N=4, K=6, H=8): a position group of 16 slots of 120 ticks
    /// at 480 PPQ (4/4 bars, `encoding` one-hot or binary) and 4 velocity bins, the first of
    /// which holds no training velocity. Tick values 90 and 1000 are not whole slots.
    static func groove(encoding: PositionEncoding = .oneHot, seed: UInt64 = 5, scale: Double = 1.5,
                       meter: Meter = .common) throws -> (LSTMWeights, ModelGroups) {
        let vocab = try Vocabulary(ixToNote: [36, 38, 42, 46], ixToTick: [0, 90, 120, 240, 480, 1000])
        let groups = ModelGroups(
            vocabulary: vocab,
            position: PositionGroup(encoding: encoding, slots: 16, ticksPerSlot: 120, ppq: 480, meter: meter),
            velocity: try VelocityGroup(bins: [1...20, 21...60, 61...100, 101...127], histogram: grooveHistogram))
        let shape = groups.shape(hidden: 8)
        var rng = SeededRNG(seed: seed)
        let wx = (0..<shape.wxCount).map { _ in Float(rng.uniform(-scale, scale)) }
        let wy = (0..<shape.wyCount).map { _ in Float(rng.uniform(-scale, scale)) }
        return (try LSTMWeights(shape: shape, wx: wx, wy: wy), groups)
    }

    /// A model that names the position and the velocity bin it is fed: notes 40, 41, … (one per
    /// slot), 2 velocity bins, H = the bits of a slot number + 1. The forget gate is shut, so
    /// each step's cell is set afresh: unit k < bits to about +1 when bit k of the slot fed is
    /// set, −1 otherwise, and the last unit to +1 for velocity bin 1, −1 for bin 0. Note n's
    /// logit is 20·Σ_k h_k·(+1 if bit k of n is set, else −1), the bins' ∓20·h_last. The note
    /// whose index is the slot fed beats every other by at least e^30, so the drawn note is the
    /// slot of the event fed (masking only moves its tick), and the drawn bin is the one fed
    /// (by e^30). Ticks are uniform.
    static func positionEcho(encoding: PositionEncoding, slots: Int = 16, ticksPerSlot: Int = 120,
                             ticks: [Int], meter: Meter = .common) throws -> (LSTMWeights, ModelGroups) {
        let vocab = try Vocabulary(ixToNote: Array(40..<(40 + slots)), ixToTick: ticks)
        let groups = ModelGroups(
            vocabulary: vocab,
            position: PositionGroup(encoding: encoding, slots: slots, ticksPerSlot: ticksPerSlot, ppq: 480, meter: meter),
            velocity: try VelocityGroup(bins: [1...63, 64...127], histogram: [Int](repeating: 1, count: 127)))
        var bits = 1
        while 1 << bits < slots { bits += 1 }
        let N = slots, K = ticks.count, H = bits + 1, G = 4 * H, B = 2
        let positionRows = encoding == .oneHot ? slots : 2 * bits
        let I = N + K + positionRows + B, O = N + K + B
        var wx = [Float](repeating: 0, count: (I + H + 1) * G)
        var wy = [Float](repeating: 0, count: (H + 1) * O)
        // Gate blocks f, i, o, g; the bias row is the last.
        for k in 0..<H {
            wx[(I + H) * G + k] = -30          // f: forget everything
            wx[(I + H) * G + H + k] = 30       // i: open
            wx[(I + H) * G + 2 * H + k] = 30   // o: open
            wx[(I + H) * G + 3 * H + k] = -20  // g: −1 unless the input says the bit is set
        }
        let position = N + K, velocity = N + K + positionRows
        wx[(velocity + 1) * G + 3 * H + bits] += 40  // velocity bin 1
        wy[bits * O + N + K] = -20
        wy[bits * O + N + K + 1] = 20
        for k in 0..<bits {
            if encoding == .oneHot {
                for s in 0..<slots where s >> k & 1 == 1 { wx[(position + s) * G + 3 * H + k] += 40 }
            } else {
                wx[(position + 2 * k + 1) * G + 3 * H + k] += 40  // the "set" row of bit k's group
            }
            for n in 0..<N { wy[k * O + n] = n >> k & 1 == 1 ? 20 : -20 }
        }
        let shape = groups.shape(hidden: H)
        precondition(shape.wxCount == wx.count && shape.wyCount == wy.count)
        return (try LSTMWeights(shape: shape, wx: wx, wy: wy), groups)
    }
}
