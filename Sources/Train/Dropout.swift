// Dropout between stacked layers (`drummer train --dropout P`, with --layers ≥ 2): while
// training, each unit of the h a layer passes to the layer above is zeroed with probability P
// and the others scaled by 1/(1 − P) (inverted dropout), so that evaluation, `drummer eval`
// and the sampler, which never drop anything, see the same expected input. Layer 0's one-hot
// input is never dropped, and neither is the top layer's h on its way to the output layer.
//
// The masks are a pure function of (run seed, step, layer, event index, unit): a resumed run
// replays them bit for bit, and the stream groups that split a batch draw what one thread would.

import DrummerCore

package struct Dropout: Sendable, Equatable {
    /// P, in (0, 1).
    package let probability: Float
    let seed: UInt64
    /// 1/(1 − P): the scale of a kept unit.
    let keepScale: Float
    /// A unit is dropped when the top 24 bits of its word are below this.
    let threshold: UInt32

    /// Nil for P = 0 (no dropout).
    package init?(probability: Float, seed: UInt64) {
        guard probability > 0 else { return nil }
        precondition(probability < 1, "dropout probability must be below 1")
        self.probability = probability
        self.seed = seed
        keepScale = 1 / (1 - probability)
        threshold = UInt32((Double(probability) * 16_777_216).rounded())
    }

    /// The factor of unit `unit` of event `event`'s h entering layer `layer` (≥ 1) at `step`:
    /// 0 or 1/(1 − P).
    @inline(__always)
    package func scale(step: Int, layer: Int, event: Int, unit: Int) -> Float {
        scale(row: rowKey(step: step, layer: layer, event: event), unit: unit)
    }

    /// The part of the key shared by every unit of one event's h entering `layer` at `step`
    /// (computed once per row, not per unit).
    @inline(__always)
    func rowKey(step: Int, layer: Int, event: Int) -> UInt64 {
        Dropout.key(seed, 0x6472_6F70_6F75_7400, step, layer, event)  // "dropout"
    }

    /// The factor of `unit` in the row keyed `row` (`rowKey`): the definition, unit by unit.
    /// The trainer fills whole rows with `fillRow` (the same integers in CKernels, on lanes);
    /// the tests and the gradient check's reference read the masks through this.
    @inline(__always)
    func scale(row: UInt64, unit: Int) -> Float {
        let z = Dropout.mix(row ^ UInt64(truncatingIfNeeded: unit))
        return UInt32(truncatingIfNeeded: z >> 40) < threshold ? 0 : keepScale
    }

    /// scale(row: key, unit: j) for every unit j of `out` (CKernels' loop on lanes).
    @inline(__always)
    func fillRow(key: UInt64, _ out: UnsafeMutableBufferPointer<Float>) {
        Kernels.dropoutRow(key: key, threshold: threshold, keep: keepScale, out: out)
    }

    /// A word keyed by (seed, tag, a, b, c): SplitMix64's finaliser applied to each in turn.
    @inline(__always)
    static func key(_ seed: UInt64, _ tag: UInt64, _ a: Int, _ b: Int, _ c: Int) -> UInt64 {
        mix(mix(mix(mix(seed ^ tag) ^ UInt64(truncatingIfNeeded: a)) ^ UInt64(truncatingIfNeeded: b))
            ^ UInt64(truncatingIfNeeded: c))
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

/// One chunk's dropout of a layer's R×H input: each row's mask
/// (0 or 1/(1 − P) per unit; ChunkPipeline fills it) and the masked input x ⊙ mask, which
/// the product and the weight gradient read; the gradient reaching x is masked alike.
final class DropoutMask: @unchecked Sendable {
    let width: Int
    let mask: FloatBuffer
    private let masked: FloatBuffer

    init(rows: Int, width: Int) {
        self.width = width
        mask = FloatBuffer(count: rows * width)
        masked = FloatBuffer(count: rows * width)
    }

    /// Dropout turned on (`current`, or new buffers when there is none) or off (nil).
    static func toggled(_ current: DropoutMask?, on: Bool, rows: Int, width: Int) -> DropoutMask? {
        on ? current ?? DropoutMask(rows: rows, width: width) : nil
    }

    /// x ⊙ mask for `rows` (x: those rows of the input, rows.count × width), kept for
    /// `maskedRows`; returns them.
    @discardableResult
    func apply(_ x: UnsafeBufferPointer<Float>, rows: Range<Int>) -> UnsafeBufferPointer<Float> {
        let n = rows.count * width, o = rows.lowerBound * width
        let m = mask.buffer(o, n), out = masked.mutable(o, n)
        for i in 0..<n { out[i] = x[i] * m[i] }
        return maskedRows(rows)
    }

    /// The masked input of `rows` (after `apply`).
    func maskedRows(_ rows: Range<Int>) -> UnsafeBufferPointer<Float> {
        masked.buffer(rows.lowerBound * width, rows.count * width)
    }

    /// dx ⊙ mask in place, for `rows` (dx: those rows of the input's gradient).
    func maskGradient(_ dx: UnsafeMutableBufferPointer<Float>, rows: Range<Int>) {
        let m = mask.buffer(rows.lowerBound * width, rows.count * width)
        for i in 0..<(rows.count * width) { dx[i] *= m[i] }
    }
}
