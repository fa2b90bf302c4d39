// Elementwise kernels of the LSTM layer on raw buffers: the cell forward and
// backward of one stream at one step, and the two softmax cross-entropies of
// one output row. H = hidden size, G = 4H; gate blocks f, i, o, g. The loops are
// C (CKernels), where each is compiled per instruction set; see drummer_kernels.h.
import Checkpoints
import CKernels

enum Kernels {
    /// Cell forward. `gates` (G) holds pre-activations in and σ(f), σ(i), σ(o), tanh(g) out;
    /// cPrev (H) → cNew (H), tanhC (H) = tanh(cNew), hNew (H) = σ(o)·tanh(cNew).
    @inline(__always)
    static func cellForward(
        H: Int, gates: UnsafeMutablePointer<Float>, cPrev: UnsafePointer<Float>,
        cNew: UnsafeMutablePointer<Float>, tanhC: UnsafeMutablePointer<Float>,
        hNew: UnsafeMutablePointer<Float>
    ) {
        drummer_cell_forward(Int32(H), gates, cPrev, cNew, tanhC, hNew)
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
        drummer_cell_backward(Int32(H), acts, cPrev, tanhC, dhOut, dhNext, dc, dGates)
    }

    /// −log softmax(y)[target] over `n` logits; overwrites the logits with exp(y − max).
    @inline(__always)
    static func negativeLogLikelihood(_ y: UnsafeMutablePointer<Float>, count n: Int, target: Int) -> Float {
        drummer_negative_log_likelihood(y, Int32(n), Int32(target))
    }

    /// Cross-entropy of a softmax over `n` logits against `target`, replacing the logits
    /// by scale·(softmax − onehot(target)). Returns the cross-entropy.
    @inline(__always)
    static func softmaxCrossEntropy(
        _ y: UnsafeMutablePointer<Float>, count n: Int, target: Int, scale: Float
    ) -> Float {
        drummer_softmax_cross_entropy(y, Int32(n), Int32(target), scale)
    }
}
