// The inference forward for B streams side by side: LSTMInference's step (same letters,
// same kernels for the input block and the cell), with the products of the B streams as one
// GEMM each instead of B GEMVs. Evaluation runs it over many files at once, each stream one
// file from its own zero state (Train/Evaluator+Files.swift).
//
//   layer 0:  A = gather(Wx_0 rows of each stream's classes) + bias_0 + H⁰ · W_rec⁰     A: n×G
//   layer l:  A = bias_l + [H^{l−1}, H^l] · Wx_l[0..<2H]                                A: n×G
//             then each stream's cell, as LSTMInference's
//   head:     Y = H^{L−1} · W_out + bias                                                Y: n×O
//
// n ≤ B is the number of streams stepped (the first n; the caller keeps the streams still
// running first). The h of a stream's layers lie side by side in one row of hs (B × L·H), so
// layer l's input [h^{l−1}, h^l] is one 2H-wide slice of each row (lda = L·H).
//
// The products: CKernels' own kernel (AVX-512 or AVX2) where the CPU has one (it reads the
// weights in place, where OpenBLAS re-packs them on every call: at a few dozen rows, and at
// the one or two streams left while the longest files end, that packing was most of an
// evaluation's time); at the baseline level, OpenBLAS: a GEMV per stream for a few streams,
// else one GEMM.
//
// Every buffer is allocated in `init`; `step` and `logits` allocate nothing.

/// B LSTM streams run forward one row at a time. Not thread-safe: one instance per thread.
public final class BatchedInference {
    public let shape: ModelShape
    /// B: the most streams stepped together.
    public let streams: Int
    let H: Int, G: Int, O: Int, L: Int, k: Int
    let layout: ParameterLayout
    /// The parameters (every Wx, then Wy), a copy.
    private let params: UnsafeMutableBufferPointer<Float>
    /// B × L·H: each stream's h of every layer; c and the next c alike (swapped every step).
    private let hs: UnsafeMutableBufferPointer<Float>
    private var cs: UnsafeMutableBufferPointer<Float>, cNext: UnsafeMutableBufferPointer<Float>
    /// B × G gates, H of tanh(c) scratch, B × O logits, B × k Wx_0 rows.
    private let gates: UnsafeMutableBufferPointer<Float>, tanhC: UnsafeMutableBufferPointer<Float>
    private let y: UnsafeMutableBufferPointer<Float>
    private let rows: UnsafeMutableBufferPointer<Int32>
    private let groupOffset: [Int], groupSize: [Int]

    /// The classes of each stream's next row (B × k, stream-major); set them, then `step(count:)`.
    public let input: UnsafeMutableBufferPointer<Int32>

    public init(weights: LSTMWeights, streams: Int) {
        precondition(streams >= 1, "BatchedInference: at least one stream")
        let s = weights.shape
        shape = s
        self.streams = streams
        layout = s.parameters
        H = s.hidden; G = 4 * s.hidden; O = s.outputWidth; L = s.layers; k = s.inputGroups.count
        params = InferenceBuffers.parameters(of: weights)
        hs = InferenceBuffers.make(streams * L * H, 0); cs = InferenceBuffers.make(streams * L * H, 0); cNext = InferenceBuffers.make(streams * L * H, 0)
        gates = InferenceBuffers.make(streams * G, 0); tanhC = InferenceBuffers.make(H, 0); y = InferenceBuffers.make(streams * O, 0)
        rows = InferenceBuffers.make(streams * k, 0)
        input = InferenceBuffers.make(streams * k, 0)
        groupOffset = layout.layers[0].inputGroupRows.map(\.lowerBound)
        groupSize = layout.layers[0].inputGroupRows.map(\.count)
    }

    deinit {
        for b in [params, hs, cs, cNext, gates, tanhC, y] { b.baseAddress?.deallocate() }
        rows.baseAddress?.deallocate()
        input.baseAddress?.deallocate()
    }

    /// h = c = 0 in every layer of stream `b` (a file starts there).
    public func resetState(stream b: Int) {
        let r = (b * L * H)..<((b + 1) * L * H)
        UnsafeMutableBufferPointer(rebasing: hs[r]).update(repeating: 0)
        UnsafeMutableBufferPointer(rebasing: cs[r]).update(repeating: 0)
    }

    private func view(_ r: Range<Int>) -> UnsafeBufferPointer<Float> { UnsafeBufferPointer(rebasing: params[r]) }

    /// Streams up to which OpenBLAS runs a GEMV per stream rather than one GEMM (which packs the
    /// weights on every call).
    static let gemvStreams = 4

    /// c (n×cols, ldc) += a (n×k, lda) · w (k×cols, ldw).
    private func accumulateProduct(n: Int, cols: Int, k: Int, a: UnsafeBufferPointer<Float>, lda: Int,
                                   w: UnsafeBufferPointer<Float>, ldw: Int, c: UnsafeMutableBufferPointer<Float>, ldc: Int) {
        if Kernels.haveGEMM, n > Self.gemvStreams {
            Kernels.gemm(m: n, n: cols, k: k, a: a, lda: lda, w: w, ldw: ldw, c: c, ldc: ldc, accumulate: true)
        } else if n <= Self.gemvStreams {
            for b in 0..<n {
                BLAS.sgemv(.transposed, rows: k, cols: cols, alpha: 1, a: w, lda: ldw,
                           x: UnsafeBufferPointer(rebasing: a[(b * lda)..<(b * lda + k)]), beta: 1,
                           y: UnsafeMutableBufferPointer(rebasing: c[(b * ldc)..<(b * ldc + cols)]))
            }
        } else {
            BLAS.sgemm(.none, .none, m: n, n: cols, k: k, alpha: 1, a: a, lda: lda, b: w, ldb: ldw, beta: 1, c: c, ldc: ldc)
        }
    }

    /// One step of streams 0..<n on their rows in `input`. Each class must be inside its group.
    public func step(count n: Int) {
        precondition((1...streams).contains(n), "BatchedInference.step: 1 to \(streams) streams")
        let LH = L * H
        for i in 0..<(n * k) {
            let g = i % k, c = Int(input[i])
            precondition(c >= 0 && c < groupSize[g], "BatchedInference.step: class \(c) outside input group \(g)")
            rows[i] = Int32(groupOffset[g] + c)
        }
        // Layer 0: A = gathered rows + bias;  A += H⁰ · W_rec  (n×H · H×G)
        let first = layout.layers[0]
        for b in 0..<n {
            Kernels.inputBlock(wx: view(first.inputBlock), G: G, rows: UnsafeBufferPointer(rebasing: rows[(b * k)..<((b + 1) * k)]),
                               bias: view(first.bias), out: UnsafeMutableBufferPointer(rebasing: gates[(b * G)..<((b + 1) * G)]))
        }
        accumulateProduct(n: n, cols: G, k: H, a: UnsafeBufferPointer(hs), lda: LH, w: view(first.recurrent), ldw: G,
                          c: gates, ldc: G)
        cells(layer: 0, count: n)
        for l in 1..<L {
            // A = bias + [H^{l−1}, H^l] · Wx_l[0..<2H]  (n×2H · 2H×G)
            let layer = layout.layers[l]
            for b in 0..<n { _ = UnsafeMutableBufferPointer(rebasing: gates[(b * G)..<((b + 1) * G)]).update(fromContentsOf: view(layer.bias)) }
            accumulateProduct(n: n, cols: G, k: 2 * H, a: UnsafeBufferPointer(rebasing: hs[((l - 1) * H)...]), lda: LH,
                              w: view(layer.wx.rows(0..<(2 * H))), ldw: G, c: gates, ldc: G)
            cells(layer: l, count: n)
        }
        swap(&cs, &cNext)
    }

    /// Each stream's cell of layer `l` on its gates: c^l, h^l.
    private func cells(layer l: Int, count n: Int) {
        for b in 0..<n {
            let r = (b * L * H + l * H)..<(b * L * H + (l + 1) * H)
            Kernels.cellForward(H: H, gates: UnsafeMutableBufferPointer(rebasing: gates[(b * G)..<((b + 1) * G)]),
                                cPrev: UnsafeBufferPointer(rebasing: cs[r]), cNew: UnsafeMutableBufferPointer(rebasing: cNext[r]),
                                tanhC: tanhC, hNew: UnsafeMutableBufferPointer(rebasing: hs[r]))
        }
    }

    /// The logits of streams 0..<n (n × O, stream-major): [h, 1] · Wy of each stream's top layer.
    /// Valid until the next call.
    public func logits(count n: Int) -> UnsafeMutableBufferPointer<Float> {
        let wy = view(layout.head.wy.range)
        let bias = UnsafeBufferPointer(rebasing: wy[(H * O)...]), wOut = UnsafeBufferPointer(rebasing: wy[0..<(H * O)])
        for b in 0..<n { _ = UnsafeMutableBufferPointer(rebasing: y[(b * O)..<((b + 1) * O)]).update(fromContentsOf: bias) }
        accumulateProduct(n: n, cols: O, k: H, a: UnsafeBufferPointer(rebasing: hs[((L - 1) * H)...]), lda: L * H,
                          w: wOut, ldw: O, c: y, ldc: O)
        return UnsafeMutableBufferPointer(rebasing: y[0..<(n * O)])
    }
}
