// The runtime of a grid-layout model (DrummerCore/GridGroup.swift): one LSTM step per 16th
// note. Each step draws the next step's hit set (one of 512), then, for each class it hits, a
// velocity bin (and a velocity within it, as in the training data) and an offset class (one
// hit at the bin's offset, or two a 32nd apart). Hits come out in onset order, as deltas, like
// the event sampler's. The first step follows the start-of-file row, at the first beat of bar 1.
//
// Temperatures: `hitsTemperature` (the pattern), `velocityTemperature`, `offsetTemperature`
// (nil: `temperature`); lowering one leaves the other groups' distributions as they were.
import DrummerCore
import MIDIParse

final class GridSampler {
    let weights: LSTMWeights
    let group: GridGroup
    private let encoder: GridEncoder
    private let lstm: LSTMInference
    private let probs: UnsafeMutableBufferPointer<Float>
    private let order: UnsafeMutableBufferPointer<Int>
    private let row: UnsafeMutableBufferPointer<Int32>
    private let columns: [Range<Int>]

    init(weights: LSTMWeights, group: GridGroup) {
        self.weights = weights
        self.group = group
        encoder = GridEncoder(group: group)
        lstm = LSTMInference(weights: weights)
        probs = .allocate(capacity: weights.shape.outputWidth)
        probs.initialize(repeating: 0)
        order = .allocate(capacity: weights.shape.outputWidth)
        order.initialize(repeating: 0)
        row = .allocate(capacity: encoder.inputCount)
        row.initialize(repeating: 0)
        columns = weights.shape.parameters.head.outputColumns
    }

    /// Steps without a hit after which generation gives up (64 bars).
    static let longestSilence = 64 * GridGroup.stepsPerBar

    deinit {
        probs.deallocate()
        order.deallocate()
        row.deallocate()
    }

    /// Draws one class of output group `g` at `temperature` (0: the most likely) and top-p `p`.
    private func draw(group g: Int, temperature: Float, p: Double, rng: inout SeededRNG) -> Int {
        draw(group: g, temperature: temperature, p: p, uniform: rng.nextDouble())
    }

    /// The same with the uniform number given (inverse-CDF: the class where the cumulative
    /// probability passes u).
    private func draw(group g: Int, temperature: Float, p: Double, uniform u: Double) -> Int {
        let y = UnsafeBufferPointer(rebasing: lstm.logits()[columns[g]])
        if temperature == 0 { return Softmax.argmax(y) }
        let r = UnsafeMutableBufferPointer(rebasing: probs[columns[g]])
        Softmax.probabilities(y, temperature: temperature, into: r)
        Softmax.nucleus(r, p: p, order: order)
        return Softmax.draw(UnsafeBufferPointer(r), uniform: u)
    }

    /// Generates `count` hits, handing each to `emit`. A hit's note is drawn from its class's
    /// training notes (then made audible on a GM kit unless `options.noteOutput` is raw).
    func generate(count: Int, options: SamplingOptions, rng: inout SeededRNG, emit: (GeneratedHit) throws -> Void) throws {
        func effective(_ t: Float?) -> Float {
            let v = t ?? options.temperature
            return (1 / v).isFinite ? v : 0
        }
        let hitsT = effective(options.hitsTemperature), velocityT = effective(options.velocityTemperature)
        let offsetT = effective(options.offsetTemperature)
        let scale = Double(options.initScale), H = weights.shape.hidden
        for layer in 0..<weights.shape.layers {
            lstm.setState(layer: layer, h: (0..<H).map { _ in Float(rng.uniform(-scale, scale)) },
                          c: (0..<H).map { _ in Float(rng.uniform(-scale, scale)) })
        }
        guard count > 0 else { return }
        let C = GridGroup.classCount, T = group.ticksPerStep
        var seq = GridSequence()
        // Hits drawn but not yet emitted: (onset, class, velocity); a later step's hits start at
        // least T/2 ticks before that step, so a hit is emitted once no later one can precede it.
        var pending: [(onset: Int, drumClass: Int, note: Int, velocity: Int)] = []
        var emitted = 0, last = 0
        var struck = Set<Int>()
        var velocity = [Int](repeating: 0, count: C), offset = [Int](repeating: 0, count: C)
        func flush(before bound: Int) throws -> Bool {
            pending.sort { ($0.onset, $0.drumClass) < ($1.onset, $1.drumClass) }
            var n = 0
            for h in pending where h.onset < bound {
                n += 1
                // A note already struck at this onset (a double's second hit meeting the next
                // step's hit of the class) sounds once: it is not written twice.
                if h.onset == last, emitted > 0, struck.contains(h.note) { continue }
                if h.onset != last { struck.removeAll(keepingCapacity: true) }
                struck.insert(h.note)
                try emit(GeneratedHit(event: SampledEvent(note: h.drumClass, tick: 0, velocity: 0),
                                      hit: DrumHit(note: h.note, delta: h.onset - last, velocity: h.velocity)))
                last = h.onset
                emitted += 1
                if emitted == count { return true }
            }
            pending.removeFirst(n)
            return false
        }
        var s = -1, silent = 0
        while true {
            encoder.encode(row: s, of: seq, into: row)
            for g in 0..<encoder.inputCount { lstm.input[g] = row[g] }
            lstm.step()
            let set = draw(group: 0, temperature: hitsT, p: options.topP, rng: &rng)
            // With probability offsetCoupling, one uniform number for the offsets of every class
            // of the step (each class keeps its own distribution; classes with alike
            // distributions land on one tick, as a drummer's often do); else one per class.
            let coupled = rng.nextDouble() < group.offsetCoupling, uOffset = rng.nextDouble()
            for c in 0..<C where set & (1 << c) != 0 {
                velocity[c] = draw(group: 1 + c, temperature: velocityT, p: options.topP, rng: &rng)
                offset[c] = coupled
                    ? draw(group: 1 + C + c, temperature: offsetT, p: options.topP, uniform: uOffset)
                    : draw(group: 1 + C + c, temperature: offsetT, p: options.topP, rng: &rng)
                let v = group.velocity.velocity(bin: velocity[c], uniform: rng.nextDouble())
                let raw = group.note(class: c, uniform: rng.nextDouble())
                let note = options.noteOutput == .raw ? raw : GeneralMIDIDrums.audible(note: raw)
                for o in group.onsets(offsetClass: offset[c]) {
                    pending.append((max(0, (s + 1) * T + o), c, note, v))
                }
            }
            silent = set == 0 ? silent + 1 : 0
            guard silent < Self.longestSilence else { throw SamplerError.silentGrid(steps: silent) }
            seq.append(hitSet: set, velocity: { velocity[$0] }, offset: { offset[$0] })
            s += 1
            // Step s + 1's hits start at (s + 1)·T − T/2 at the earliest.
            if try flush(before: (s + 1) * T - T / 2) { return }
        }
    }
}
