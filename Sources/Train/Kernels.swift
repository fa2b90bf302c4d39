// Elementwise kernels of the LSTM layer on raw buffers: the cell forward and
// backward of one stream at one step, and the two softmax cross-entropies of
// one output row. H = hidden size, G = 4H; gate blocks f, i, o, g.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum Kernels {
    /// Cell forward. `gates` (G) holds pre-activations in and σ(f), σ(i), σ(o), tanh(g) out;
    /// cPrev (H) → cNew (H), tanhC (H) = tanh(cNew), hNew (H) = σ(o)·tanh(cNew).
    @inline(__always)
    static func cellForward(
        H: Int, gates: UnsafeMutablePointer<Float>, cPrev: UnsafePointer<Float>,
        cNew: UnsafeMutablePointer<Float>, tanhC: UnsafeMutablePointer<Float>,
        hNew: UnsafeMutablePointer<Float>
    ) {
        FastMath.sigmoid(gates, count: 3 * H)
        FastMath.tanh(gates + 3 * H, count: H)
        let f = gates, i = gates + H, o = gates + 2 * H, g = gates + 3 * H
        for j in 0..<H { cNew[j] = f[j] * cPrev[j] + i[j] * g[j] }
        for j in 0..<H { tanhC[j] = cNew[j] }
        FastMath.tanh(tanhC, count: H)
        for j in 0..<H { hNew[j] = o[j] * tanhC[j] }
    }

    /// Cell backward. dh (H): gradient reaching h_t (from the output and from step t+1);
    /// dc (H): in, the gradient reaching c_t from step t+1; out, the gradient reaching c_{t−1}.
    /// `acts` are the forward activations, dGates (G) receives the pre-activation gradients.
    @inline(__always)
    static func cellBackward(
        H: Int, acts: UnsafePointer<Float>, cPrev: UnsafePointer<Float>, tanhC: UnsafePointer<Float>,
        dhOut: UnsafePointer<Float>, dhNext: UnsafePointer<Float>, dc: UnsafeMutablePointer<Float>,
        dGates: UnsafeMutablePointer<Float>
    ) {
        let f = acts, i = acts + H, o = acts + 2 * H, g = acts + 3 * H
        let df = dGates, di = dGates + H, dO = dGates + 2 * H, dg = dGates + 3 * H
        for j in 0..<H {
            let dh = dhOut[j] + dhNext[j]
            let tc = tanhC[j]
            let oj = o[j], fj = f[j], ij = i[j], gj = g[j]
            let dcj = dc[j] + dh * oj * (1 - tc * tc)
            dO[j] = dh * tc * oj * (1 - oj)
            df[j] = dcj * cPrev[j] * fj * (1 - fj)
            di[j] = dcj * gj * ij * (1 - ij)
            dg[j] = dcj * ij * (1 - gj * gj)
            dc[j] = dcj * fj
        }
    }

    /// log Σ exp over `n` logits, and their exponentials (shifted by the max) left in `e`.
    @inline(__always)
    static func logSumExp(_ y: UnsafeMutablePointer<Float>, count n: Int) -> (lse: Float, max: Float) {
        var m = y[0]
        for j in 1..<n where y[j] > m { m = y[j] }
        var s: Float = 0
        for j in 0..<n { s += expf(y[j] - m) }
        return (m + logf(s), m)
    }

    /// Cross-entropy of a softmax over `n` logits against `target`, replacing the logits
    /// by scale·(softmax − onehot(target)). Returns the cross-entropy.
    @inline(__always)
    static func softmaxCrossEntropy(
        _ y: UnsafeMutablePointer<Float>, count n: Int, target: Int, scale: Float
    ) -> Float {
        var m = y[0]
        for j in 1..<n where y[j] > m { m = y[j] }
        let yt = y[target]
        for j in 0..<n { y[j] -= m }
        FastMath.exp(y, count: n)
        var s: Float = 0
        for j in 0..<n { s += y[j] }
        let loss = m + logf(s) - yt
        let k = scale / s
        for j in 0..<n { y[j] *= k }
        y[target] -= scale
        return loss
    }
}
