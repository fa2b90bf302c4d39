// The parameter update: elementwise clipping of the gradient to ±clip, then SGD,
// momentum (TF1 MomentumOptimizer), RMSProp (TF1, no momentum) or Adam (PyTorch's), each
// after the decoupled weight decay when there is one (OptimizerConfig).
import CKernels
import DrummerCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum Optimizer {
    /// Updates `params` (P) in place from `grad` (P), plus `addend` (P) when there is one (the
    /// other stream group's gradient: grad + addend, as if added into grad first); `slot` is the
    /// velocity (momentum), the mean square (rmsprop) or the first moment (adam), nil for sgd;
    /// `slot2` adam's second moment. Adam reads the sum where it reads the gradient; the other
    /// rules add addend into grad first.
    static func update(
        _ config: OptimizerConfig, params: UnsafeMutablePointer<Float>, grad: UnsafeMutablePointer<Float>,
        adding addend: UnsafePointer<Float>? = nil, slot: UnsafeMutablePointer<Float>?,
        slot2: UnsafeMutablePointer<Float>? = nil, count n: Int
    ) {
        if let addend, config.kind != .adam {
            Kernels.accumulate(UnsafeBufferPointer(start: addend, count: n), into: UnsafeMutableBufferPointer(start: grad, count: n))
        }
        let lr = config.learningRate, hi = config.clip, lo = -config.clip
        if config.weightDecay > 0 {
            // p ← p·(1 − lr·λ), the factor worked out in double and rounded once, as PyTorch does.
            let keep = Float(1 - Double(lr) * Double(config.weightDecay))
            for k in 0..<n { params[k] *= keep }
        }
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
        case .adam:
            guard let m = slot, let v = slot2 else { return }
            // 1 − β and the bias corrections are worked out in double and rounded once, as
            // PyTorch does with its Python-float hyperparameters.
            let beta1 = OptimizerConfig.adamBeta1, beta2 = OptimizerConfig.adamBeta2
            let b1 = Float(beta1), b2 = Float(beta2), e = Float(OptimizerConfig.adamEpsilon)
            let d1 = Float(1 - beta1), d2 = Float(1 - beta2)
            let t = Double(max(1, config.step))
            let c1 = Float(1 - Foundation.pow(beta1, t)), c2 = Float(1 - Foundation.pow(beta2, t))
            // Per parameter, each operation rounded on its own:
            //   g = min(max(grad, lo), hi); m = b1·m + d1·g; v = b2·v + d2·g²;
            //   p −= lr·(m / c1) / (√(v / c2) + e)
            // in C so that it vectorises (Swift's loop ran one element at a time).
            drummer_adam(n, params, grad, addend, m, v, lr, lo, hi, b1, b2, d1, d2, c1, c2, e)
        }
    }
}
