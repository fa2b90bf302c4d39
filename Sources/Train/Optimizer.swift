// The parameter update: elementwise clipping of the gradient to ±clip, then SGD,
// momentum (TF1 MomentumOptimizer) or RMSProp (TF1, no momentum).
#if canImport(Glibc)

import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum Optimizer {
    /// Updates `params` (P) in place from `grad` (P); `slot` is the velocity
    /// (momentum) or the mean square (rmsprop), nil for sgd.
    static func update(
        _ config: OptimizerConfig, params: UnsafeMutablePointer<Float>, grad: UnsafePointer<Float>,
        slot: UnsafeMutablePointer<Float>?, count n: Int
    ) {
        let lr = config.learningRate, hi = config.clip, lo = -config.clip
        switch config.kind {
        case .sgd:
            for k in 0..<n {
                let g = min(max(grad[k], lo), hi)
                params[k] -= lr * g
            }
        case .momentum:
            guard let v = slot else { return }
            let m = config.momentum
            for k in 0..<n {
                let g = min(max(grad[k], lo), hi)
                let vk = m * v[k] + g
                v[k] = vk
                params[k] -= lr * vk
            }
        case .rmsprop:
            guard let ms = slot else { return }
            let d = config.decay, e = config.epsilon, d1 = 1 - config.decay
            for k in 0..<n {
                let g = min(max(grad[k], lo), hi)
                let s = d * ms[k] + d1 * (g * g)
                ms[k] = s
                params[k] -= lr * g / (s + e).squareRoot()
            }
        }
    }
}
