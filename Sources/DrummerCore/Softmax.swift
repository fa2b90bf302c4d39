// Softmax, log-softmax and categorical draws on float32 logits.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum Softmax {
    /// probs = softmax(logits / temperature), computed stably (max subtracted).
    /// temperature must be > 0; one so small that its inverse overflows (below about 3e-39)
    /// gives the limit, all the mass on the largest logit (the first on ties), where
    /// 0 · ∞ made that class's probability NaN.
    public static func probabilities(
        _ logits: UnsafeBufferPointer<Float>, temperature: Float = 1,
        into probs: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(logits.count == probs.count && logits.count > 0, "softmax: size mismatch")
        precondition(temperature > 0, "softmax: temperature must be positive")
        var m = -Float.infinity
        for v in logits where v > m { m = v }
        let invT = 1 / temperature
        guard invT.isFinite else {
            let best = argmax(logits)
            for j in 0..<probs.count { probs[j] = j == best ? 1 : 0 }
            return
        }
        var sum: Float = 0
        for j in 0..<logits.count {
            let e = expf((logits[j] - m) * invT)
            probs[j] = e
            sum += e
        }
        let inv = 1 / sum
        for j in 0..<probs.count { probs[j] *= inv }
    }

    /// log(Σ exp(logits)), computed stably.
    public static func logSumExp(_ logits: UnsafeBufferPointer<Float>) -> Float {
        var m = -Float.infinity
        for v in logits where v > m { m = v }
        var s: Float = 0
        for v in logits { s += expf(v - m) }
        return m + logf(s)
    }

    /// Index of the largest value (the first one on ties).
    public static func argmax(_ v: UnsafeBufferPointer<Float>) -> Int {
        var best = 0
        for j in 1..<v.count where v[j] > v[best] { best = j }
        return best
    }

    /// Draws an index from `probs` (summing to ~1) with a uniform number u in [0, 1).
    /// Falls back to the last index with non-zero mass when rounding leaves u above the total.
    public static func draw(_ probs: UnsafeBufferPointer<Float>, uniform u: Double) -> Int {
        var acc: Double = 0
        var last = 0
        for j in 0..<probs.count {
            let p = Double(probs[j])
            if p > 0 { last = j }
            acc += p
            if u < acc { return j }
        }
        return last
    }

    /// Draws an index from weights summing to anything positive (unnormalised, e.g. exp(y − max)),
    /// with u in [0, 1): the first index whose running sum exceeds u · Σ weights. Falls back to
    /// the last index with non-zero weight when rounding leaves u · Σ above the running sum.
    public static func draw(_ weights: UnsafeBufferPointer<Double>, uniform u: Double) -> Int {
        var total = 0.0
        for x in weights { total += x }
        let target = u * total
        var acc = 0.0, last = 0
        for j in 0..<weights.count {
            if weights[j] > 0 { last = j }
            acc += weights[j]
            if target < acc { return j }
        }
        return last
    }

    /// Draws an index in 0..<count from whole-number counts (`count(i)`) with u in [0, 1): the
    /// first index whose running sum exceeds ⌊u · Σ⌋ (each index as often as its count says;
    /// clamped to Σ − 1 when u · Σ rounds up to Σ, so the index always has a count); nil when
    /// every count is 0. The velocity within a bin, a class's note and a file's style are drawn
    /// this way. Allocates nothing (the sampler's per-hit path).
    public static func draw(count: Int, counts: (Int) -> Int, uniform u: Double) -> Int? {
        var total = 0
        for i in 0..<count { total += counts(i) }
        guard total > 0 else { return nil }
        let target = min(Int(u * Double(total)), total - 1)
        var acc = 0
        for i in 0..<count {
            acc += counts(i)
            if target < acc { return i }
        }
        preconditionFailure("unreachable: target < total")
    }

}
