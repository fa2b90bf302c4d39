// Input noise (`drummer train --input-noise P`): while training, each input class of the
// chosen groups is replaced, with probability P, by a class drawn uniformly from its group.
// Only the inputs change: the targets, the validation loss, `drummer eval` and the sampler
// never see noise.
//
// Why: a model trained on true inputs only has never seen an input it got wrong, and when it
// samples, its own slips are its next inputs. It learns to lean on the previous hit and, after
// a slip, loses the groove. Trained on inputs that are sometimes wrong, it learns to lean on
// what stays right (its state, the position in the bar, the bar before) and keeps the pattern.
// Measured on the Groove corpus (see models/groove/TRAINING.md): bar periodicity of sampled
// files from 64% to 80% of the corpus's.
//
// The draws are a pure function of (run seed, step, event index, group): no generator state,
// so a resumed run replays them bit for bit, and the stream groups and threads that split a
// batch draw the same values as one thread would.
import Checkpoints
import DrummerCore

struct InputNoise: Sendable, Equatable {
    /// P, in (0, 1).
    let probability: Double
    /// Input group indices (columns of the class matrix) that get noise, and their sizes.
    let groups: [Int]
    let sizes: [Int]
    let seed: UInt64

    /// The noise `configuration` asks for on a model of `modelGroups`, or nil when it asks
    /// for none. Throws when `--input-noise-groups` names a group the model does not have
    /// (with or without --input-noise).
    init?(configuration c: RunConfiguration, modelGroups: ModelGroups, shape: ModelShape) throws {
        let names = modelGroups.inputNames
        var indices: [Int] = []
        for name in c.inputNoiseGroupNames(modelInputs: names) {
            guard let i = names.firstIndex(of: name) else {
                throw SettingError(option: "--input-noise-groups", message:
                    "names \"\(name)\", which this model does not have (its inputs: \(names.joined(separator: ", ")))")
            }
            if !indices.contains(i) { indices.append(i) }
        }
        guard c.inputNoise > 0, !indices.isEmpty else { return nil }
        probability = Double(c.inputNoise)
        groups = indices
        sizes = indices.map { shape.inputGroups[$0] }
        seed = c.seed
    }

    /// The class fed instead of the true one for group `groups[j]` of event `event` at step
    /// `step`, or nil to feed the true class. With probability P a draw, uniform over the
    /// group's `sizes[j]` classes (it can be the true class).
    @inline(__always)
    func replacement(step: Int, event: Int, slot j: Int) -> Int? {
        var z = InputNoise.mix(seed ^ 0x6E6F_6973_6520_696E)  // "noise in"
        z = InputNoise.mix(z ^ UInt64(truncatingIfNeeded: step))
        z = InputNoise.mix(z ^ UInt64(truncatingIfNeeded: event))
        z = InputNoise.mix(z ^ UInt64(truncatingIfNeeded: groups[j]))
        guard Double(z >> 11) * 0x1.0p-53 < probability else { return nil }
        let w = InputNoise.mix(z ^ 0x9E37_79B9_7F4A_7C15)
        return Int(w.multipliedFullWidth(by: UInt64(sizes[j])).high)
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
