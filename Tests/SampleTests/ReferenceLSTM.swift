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

    /// The sampler's algorithm, written independently: the joint distribution of (note, tick)
    /// without the pairs that repeat a note already struck at the current onset (tick class
    /// `zeroTick`, of value 0), renormalised; drawn as the note from its marginal, then the tick
    /// given the note. `sounds`: the note written for each note index; notes written alike are
    /// struck together (nil: each note is its own).
    static func generate(
        _ w: LSTMWeights, zeroTick: Int?, count: Int, temperature: Double, initScale: Double,
        primer: [SampledEvent], seed: UInt64, sounds: [Int]? = nil
    ) -> [SampledEvent] {
        var rng = SeededRNG(seed: seed)
        var m = ReferenceLSTM(w)
        let H = w.shape.hidden, N = w.shape.notes, K = w.shape.ticks
        m.h = (0..<H).map { _ in Double(Float(rng.uniform(-initScale, initScale))) }
        m.c = (0..<H).map { _ in Double(Float(rng.uniform(-initScale, initScale))) }
        var x: SampledEvent
        if let last = primer.last {
            for p in primer.dropLast() { m.step(classes: [p.note, p.tick]) }
            x = last
        } else {
            x = SampledEvent(note: rng.index(below: N), tick: rng.index(below: K))
        }
        // A struck note strikes every note index written as the same note.
        func alike(_ n: Int) -> [Int] { sounds.map { s in (0..<N).filter { s[$0] == s[n] } } ?? [n] }
        var struck = Set(alike(x.note))
        var out: [SampledEvent] = []
        for _ in 0..<count {
            m.step(classes: [x.note, x.tick])
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
            x = SampledEvent(note: note, tick: tick)
            out.append(x)
        }
        return out
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
}
