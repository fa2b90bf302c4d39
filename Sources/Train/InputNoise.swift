// Input noise (`drummer train --input-noise P`): while training, each input class of the
// chosen groups is replaced, with probability P, by a class drawn uniformly from its group.
// Only the inputs change: the targets, the validation loss, `drummer eval` and the sampler
// never see noise.
//
// `--input-noise-draw model` takes the replacement from the model instead: before each chunk's
// forward and backward pass, a forward pass over the chunk's true inputs gives the model's
// prediction of every input (its softmax at temperature 1 given the true events before it and
// the carried state), and a replaced class is drawn from that prediction. That is the parallel
// form of scheduled sampling (Bengio et al. 2015; Duckworth et al. 2019): the wrong inputs the
// model is trained on are the slips it makes itself when it samples, not any class at all.
// It costs one more forward sweep per chunk.
//
// `--input-noise-draw drop` feeds a hit as "not hit" (a grid model's per-class groups only):
// the slip a free-running grid model makes most. Sampling on its own bars, a model that copies
// the bars before through its lookback copies the hits it happened to leave out too, and soft
// hits, once left out, seldom come back (docs/research.md, *What drifts*). Trained
// on lookbacks that miss some of the hits the bar holds, it learns to play what a bar back
// left out.
//
// Why: a model trained on true inputs only has never seen an input it got wrong, and when it
// samples, its own slips are its next inputs. It learns to lean on the previous hit and, after
// a slip, loses the groove. Trained on inputs that are sometimes wrong, it learns to lean on
// what stays right (its state, the position in the bar, the bar before) and keeps the pattern.
// Measured on the Groove corpus (see models/groove-events/TRAINING.md): bar periodicity of sampled
// files from 64% to 80% of the corpus's.
//
// A class its group's output does not predict (a grid model's "not hit" velocity or offset
// class: the input group has one class more than the output predicting it) is never
// replaced, and is never a replacement: noise changes how a class was hit, not whether.
//
// The draws are a pure function of (run seed, step, event index, group): no generator state,
// so a resumed run replays them bit for bit, and the stream groups and threads that split a
// batch draw the same values as one thread would.

import DrummerCore
import Foundation

package struct InputNoise: Sendable, Equatable {
    /// P, in (0, 1).
    let probability: Double
    /// Input group indices (columns of the class matrix) that get noise, and their sizes.
    package let groups: [Int]
    let sizes: [Int]
    let seed: UInt64
    package let draw: InputNoiseDraw
    /// With draw == .model: the output group (Wy column block) that predicts input group
    /// `groups[j]`, for each j.
    let outputGroups: [Int]
    /// For each j: the class of `groups[j]` its output does not predict (its last), or nil.
    let unpredicted: [Int?]
    /// With draw == .drop: for each j, the classes of `groups[j]` that mean a hit and the one
    /// fed instead (GridGroup.hitClasses).
    let dropClasses: [GridHitClasses]

    /// The noise `configuration` asks for on a model of `modelGroups`, or nil when it asks
    /// for none. Throws when `--input-noise-groups` names a group the model does not have
    /// (with or without --input-noise).
    package init?(configuration c: RunConfiguration, modelGroups: ModelGroups, shape: ModelShape) throws {
        let names = modelGroups.inputNames
        var indices: [Int] = []
        for name in c.inputNoiseGroupNames(modelInputs: names) {
            guard let i = names.firstIndex(of: name) else {
                throw SettingError(option: "--input-noise-groups", message:
                    "names \"\(name)\", which this model does not have (its inputs: \(names.joined(separator: ", ")))")
            }
            if !indices.contains(i) { indices.append(i) }
        }
        // Output group g predicts the input group in column targetColumns[g] of the next event.
        let predicting = targetColumns(of: shape)
        var outputs: [Int] = []
        // An input group one class larger than the output predicting it: its last class is not predicted.
        let unpredicted = indices.map { i in
            predicting.firstIndex(of: i).flatMap { o in shape.outputGroups[o] + 1 == shape.inputGroups[i] ? shape.outputGroups[o] : nil }
        }
        if c.inputNoiseDraw == .model {
            for (j, i) in indices.enumerated() {
                guard let o = predicting.firstIndex(of: i), shape.outputGroups[o] == shape.inputGroups[i] || unpredicted[j] != nil else {
                    let drawable = predicting.map { names[$0] }
                    throw SettingError(option: "--input-noise-groups", message:
                        "names \"\(names[i])\", which the model does not predict, so --input-noise-draw model cannot draw it (it predicts: \(drawable.joined(separator: ", ")))")
                }
                outputs.append(o)
            }
        }
        var drops: [GridHitClasses] = []
        if c.inputNoiseDraw == .drop {
            let classes = modelGroups.grid?.hitClasses
            for i in indices {
                guard let d = classes?[i] else {
                    throw SettingError(option: "--input-noise-groups", message:
                        "names \"\(names[i])\", which is not one drum class's, so --input-noise-draw drop cannot drop its hits "
                        + "(it takes a grid model's velocity_…, offset_… and, with --grid-lookback classes or velocities, lookback_…_… groups)")
                }
                drops.append(d)
            }
        }
        guard c.inputNoise > 0, !indices.isEmpty else { return nil }
        probability = Double(c.inputNoise)
        groups = indices
        sizes = indices.map { shape.inputGroups[$0] }
        seed = c.seed
        draw = c.inputNoiseDraw
        outputGroups = outputs
        self.unpredicted = unpredicted
        dropClasses = drops
    }

    /// The class fed instead of the true class `current` for group `groups[j]` of event `event`
    /// at step `step`, or nil to feed the true class. With probability P a draw, uniform over
    /// the group's predicted classes (it can be the true class); never for an unpredicted one.
    /// With draw == .drop, with probability P the not-hit class in place of a hit class.
    @inline(__always)
    func replacement(step: Int, event: Int, slot j: Int, current: Int) -> Int? {
        if draw == .drop {
            let d = dropClasses[j]
            guard d.hit.contains(current), replacementWord(step: step, event: event, slot: j, current: current) != nil else { return nil }
            return d.notHit
        }
        guard let w = replacementWord(step: step, event: event, slot: j, current: current) else { return nil }
        return Int(w.multipliedFullWidth(by: UInt64(unpredicted[j] ?? sizes[j])).high)
    }

    /// Whether group `groups[j]` of event `event` at step `step`, holding class `current`, is
    /// replaced: nil when not (always for its unpredicted class), else a random word that
    /// picks the replacement (`replacement`, or `draw(from:_:)`).
    @inline(__always)
    func replacementWord(step: Int, event: Int, slot j: Int, current: Int) -> UInt64? {
        if let u = unpredicted[j], current == u { return nil }
        let z = InputNoise.key(seed, 0x6E6F_6973_6520_696E, step, event, groups[j])  // "noise in"
        guard Double(z >> 11) * 0x1.0p-53 < probability else { return nil }
        return InputNoise.mix(z ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// The class that random word `w` picks from softmax(`logits`): the first class whose
    /// cumulative probability exceeds u = w's top 53 bits as a fraction of 1 (weights
    /// exp(y − max) in float64; Softmax.draw).
    static func draw(from logits: UnsafeBufferPointer<Float>, _ w: UInt64) -> Int {
        var top = -Float.infinity
        for v in logits where v > top { top = v }
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: logits.count) { weights in
            for (c, v) in logits.enumerated() { weights[c] = Double(expf(v - top)) }
            return Softmax.draw(UnsafeBufferPointer(weights), uniform: Double(w >> 11) * 0x1.0p-53)
        }
    }

    /// The training draws' keys (input noise, dropout, the model's lookback bars): a pure
    /// function of the run's seed, a tag naming the draw and the integers it depends on (a
    /// training step, an event, a group …), mix(…mix(mix(seed ^ tag) ^ a) ^ b …).
    @inline(__always)
    static func key(_ seed: UInt64, _ tag: UInt64, _ a: Int, _ b: Int) -> UInt64 {
        mix(mix(mix(seed ^ tag) ^ UInt64(truncatingIfNeeded: a)) ^ UInt64(truncatingIfNeeded: b))
    }

    @inline(__always)
    static func key(_ seed: UInt64, _ tag: UInt64, _ a: Int, _ b: Int, _ c: Int) -> UInt64 {
        mix(key(seed, tag, a, b) ^ UInt64(truncatingIfNeeded: c))
    }

    /// SplitMix64's finaliser: a bijection of 64-bit words whose outputs pass as random.
    @inline(__always)
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
