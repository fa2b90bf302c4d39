// The inference forward of the LSTM: one stream, one event at a time. The sampler
// (`drummer sample`) and evaluation (`drummer eval`, and the evaluations during
// training) both run this code, so the same model gives the same h, c and logits in
// both: the input block and the cell are CKernels' (the trainer's own kernels), the
// recurrent products and the output layer OpenBLAS GEMVs. The trainer's chunked forward
// and backward are in Train/LSTMLayer.swift.
//
// Letters (see ModelLayout.swift): H hidden size, G = 4H, O output width, k input
// groups, L layers; h^l, c^l the state of layer l.
//
//   layer 0:  a = Σ_g Wx_0[row of class_g] + bias_0 + h⁰ · W_rec⁰           a: G
//   layer l:  a = bias_l + [h^{l−1}, h^l] · Wx_l[0..<2H]                      a: G
//             f, i, o = σ(a_f), σ(a_i), σ(a_o);  g = tanh(a_g)
//             c^l ← f ⊙ c^l + i ⊙ g;   h^l ← o ⊙ tanh(c^l)                   c, h: H
//   head:     y = h^{L−1} · W_out + bias                                      y: O (logits)
//
// The h of the layers lie side by side in one buffer [h⁰ | h¹ | … | h^{L−1}], so the input
// of layer l ≥ 1, [h^{l−1} (this step), h^l (the last step)], is one contiguous 2H vector
// and its input and recurrent products are one GEMV over Wx_l's first 2H rows.
//
// Real-time safe: every buffer is allocated in `init`; `step()` and `logits()` allocate
// nothing, take no lock and do a fixed amount of work.
//
// Split in two (`threads: 2`): a second thread, started in `init`, computes half of every
// layer's units (their four gate columns and their cell) and half of the logits while the
// calling thread computes the other half; they meet once per layer and once for the logits
// (a spin on an atomic ticket, no lock). Each thread then reads half of every weight matrix, so
// a step of the shipped model (3.7 MB of weights) reads 1.9 MB per core, which the cores' own
// caches can hold, where one thread streams all of it from the shared cache every step. The
// halves give the same values up to float32 rounding (the layers above the first run their
// input and recurrent products as two GEMVs). `halves: true` runs the two halves one after the
// other on the calling thread: the same calls on the same operands, so the same bits as the
// split step (a grid model's sampler steps this way on one core, and `drummer sample` writes a
// seed's file alike on one core and on two).
import Foundation
import Synchronization
import CKernels
#if canImport(Glibc)
import Glibc
#endif

/// One LSTM stream run forward event by event, with buffers allocated once.
/// Not thread-safe: one instance per thread.
public final class LSTMInference {
    public let shape: ModelShape
    let H: Int, G: Int, O: Int, L: Int
    let layout: ParameterLayout
    /// A copy of the flat parameters (every Wx, then Wy).
    private let params: UnsafeMutableBufferPointer<Float>
    /// h of every layer side by side (L·H); c and the next c (L·H each, swapped every step),
    /// tanh(c) (H), gates (G), logits (O).
    private var hs: UnsafeMutableBufferPointer<Float>
    private var cs: UnsafeMutableBufferPointer<Float>, cNext: UnsafeMutableBufferPointer<Float>
    private let tanhC: UnsafeMutableBufferPointer<Float>, gates: UnsafeMutableBufferPointer<Float>
    private let y: UnsafeMutableBufferPointer<Float>
    /// Wx_0 rows of the current input (k), and each input group's first row and size (k each).
    private let rows: UnsafeMutableBufferPointer<Int32>
    private let groupOffset: UnsafeMutableBufferPointer<Int>, groupSize: UnsafeMutableBufferPointer<Int>

    /// The class index of each input group for the next `step()` (k entries, group order
    /// of `ModelShape.inputGroups`); set them, then call `step()`.
    public let input: UnsafeMutableBufferPointer<Int32>

    /// Split steps: the second thread, the next step's h of every layer (the halves read hs and
    /// write it), and each half's gates (4 × its units) and tanh(c) scratch.
    private var worker: SplitWorker?
    /// How the split stages ran so far: both halves on this thread because the worker had not
    /// begun (`taken`) or because it was late before (`alone`); zeros without a worker.
    package var splitStages: (taken: Int, alone: Int) { (worker?.taken ?? 0, worker?.alone ?? 0) }
    private var hsNext: UnsafeMutableBufferPointer<Float>
    private let halfGates: UnsafeMutableBufferPointer<Float>, halfTanh: UnsafeMutableBufferPointer<Float>
    /// Each half's units, [0, H/2) and [H/2, H), and logits, [0, O/2) and [O/2, O).
    private let unitSplit: Int, logitSplit: Int

    /// Steps run as the split step's two halves (on the worker and this thread, or one after
    /// the other on this one).
    private let halved: Bool

    /// `threads`: 1, or 2 to split each step with a second thread (see the file header);
    /// `halves`: on one thread, compute the step as the split step's two halves (same bits).
    public init(weights: LSTMWeights, threads: Int = 1, halves: Bool = false) {
        let s = weights.shape
        shape = s
        layout = s.parameters
        H = s.hidden; G = 4 * s.hidden; O = s.outputWidth; L = s.layers
        params = InferenceBuffers.parameters(of: weights)
        hs = InferenceBuffers.make(L * H, 0); cs = InferenceBuffers.make(L * H, 0); cNext = InferenceBuffers.make(L * H, 0); tanhC = InferenceBuffers.make(H, 0)
        gates = InferenceBuffers.make(G, 0); y = InferenceBuffers.make(O, 0)
        let groups = s.inputGroups
        rows = InferenceBuffers.make(groups.count, 0)
        groupOffset = InferenceBuffers.make(groups.count, 0)
        groupSize = InferenceBuffers.make(groups.count, 0)
        input = InferenceBuffers.make(groups.count, 0)
        for (g, r) in layout.layers[0].inputGroupRows.enumerated() {
            groupOffset[g] = r.lowerBound
            groupSize[g] = r.count
        }
        unitSplit = H / 2
        logitSplit = O / 2
        halved = threads >= 2 || halves
        hsNext = InferenceBuffers.make(halved ? L * H : 0, 0)
        halfGates = InferenceBuffers.make(halved ? 2 * 4 * (H - H / 2) : 0, 0)
        halfTanh = InferenceBuffers.make(halved ? 2 * (H - H / 2) : 0, 0)
        if threads >= 2 { worker = SplitWorker(self) }
    }

    deinit {
        worker?.finish()
        for b in [params, hs, cs, cNext, tanhC, gates, y, hsNext, halfGates, halfTanh] { b.baseAddress?.deallocate() }
        rows.baseAddress?.deallocate()
        groupOffset.baseAddress?.deallocate()
        groupSize.baseAddress?.deallocate()
        input.baseAddress?.deallocate()
    }

    /// The hidden state h of the top layer (H): what the output layer reads.
    public var h: UnsafeBufferPointer<Float> { UnsafeBufferPointer(rebasing: hs[((L - 1) * H)...]) }
    /// The cell state c of the top layer (H).
    public var c: UnsafeBufferPointer<Float> { UnsafeBufferPointer(rebasing: cs[((L - 1) * H)...]) }

    /// Sets h and c of layer `layer` (H values each).
    public func setState<S: Sequence<Float>, T: Sequence<Float>>(layer: Int = 0, h: S, c: T) {
        precondition((0..<L).contains(layer), "LSTMInference.setState: no layer \(layer)")
        let r = (layer * H)..<((layer + 1) * H)
        let (_, nh) = UnsafeMutableBufferPointer(rebasing: hs[r]).initialize(from: h)
        let (_, nc) = UnsafeMutableBufferPointer(rebasing: cs[r]).initialize(from: c)
        precondition(nh == H && nc == H, "LSTMInference.setState: h and c need \(H) values each")
    }

    /// h = c = 0 in every layer.
    package func resetState() {
        hs.update(repeating: 0)
        cs.update(repeating: 0)
    }

    private func view(_ r: Range<Int>) -> UnsafeBufferPointer<Float> { UnsafeBufferPointer(rebasing: params[r]) }

    /// One step on the event in `input`: updates h and c of every layer. Each class must be
    /// inside its group.
    public func step() {
        for g in 0..<rows.count {
            let k = Int(input[g])
            precondition(k >= 0 && k < groupSize[g], "LSTMInference.step: class \(k) outside input group \(g) (size \(groupSize[g]))")
            rows[g] = Int32(groupOffset[g] + k)
        }
        if halved {
            for l in 0..<L { run(stage: l) }
            swap(&hs, &hsNext)
            swap(&cs, &cNext)
            return
        }
        // Layer 0: a = Σ input rows + bias;  a += h⁰ · W_rec  (1×H · H×G)
        let first = layout.layers[0]
        Kernels.inputBlock(wx: view(first.inputBlock), G: G, rows: UnsafeBufferPointer(rows), bias: view(first.bias),
                           out: gates)
        BLAS.sgemv(.transposed, rows: H, cols: G, alpha: 1, a: view(first.recurrent), lda: G,
                   x: UnsafeBufferPointer(rebasing: hs[0..<H]), beta: 1, y: gates)
        cell(layer: 0)
        for l in 1..<L {
            // a = bias + [h^{l−1}, h^l] · Wx_l[0..<2H]  (1×2H · 2H×G)
            let layer = layout.layers[l]
            _ = gates.update(fromContentsOf: view(layer.bias))
            BLAS.sgemv(.transposed, rows: 2 * H, cols: G, alpha: 1, a: view(layer.wx.rows(0..<(2 * H))), lda: G,
                       x: UnsafeBufferPointer(rebasing: hs[((l - 1) * H)..<((l + 1) * H)]), beta: 1, y: gates)
            cell(layer: l)
        }
        swap(&cs, &cNext)
    }

    /// The cell of layer `l` on the gates' pre-activations: c^l, tanh(c^l), h^l.
    private func cell(layer l: Int) {
        let r = (l * H)..<((l + 1) * H)
        Kernels.cellForward(H: H, gates: gates, cPrev: UnsafeBufferPointer(rebasing: cs[r]),
                            cNew: UnsafeMutableBufferPointer(rebasing: cNext[r]), tanhC: tanhC,
                            hNew: UnsafeMutableBufferPointer(rebasing: hs[r]))
    }

    /// The logits y = [h, 1] · Wy of the top layer's h (O values; output group g is
    /// `shape.parameters.head.outputColumns[g]`). Valid until the next call.
    public func logits() -> UnsafeBufferPointer<Float> {
        if halved {
            run(stage: L)
            return UnsafeBufferPointer(y)
        }
        OutputLayer.logits(rows: 1, h: h, wy: view(layout.head.wy.range), hidden: H, into: y)
        return UnsafeBufferPointer(y)
    }

    // MARK: split steps

    /// Both halves of `stage`: on the two threads, or one after the other on this one.
    private func run(stage: Int) {
        if let worker {
            worker.run(stage: stage)
        } else {
            half(stage: stage, part: 0)
            half(stage: stage, part: 1)
        }
    }

    /// Half `part` (0 or 1) of stage `stage`: layer `stage`'s units of that half (stage < L),
    /// or that half of the logits (stage L, after the step). Runs on either thread.
    fileprivate func half(stage: Int, part: Int) {
        if stage == L {
            let o0 = part == 0 ? 0 : logitSplit, o1 = part == 0 ? logitSplit : O
            guard o1 > o0 else { return }
            let wy = view(layout.head.wy.range)
            _ = UnsafeMutableBufferPointer(rebasing: y[o0..<o1]).update(fromContentsOf: wy[(H * O + o0)..<(H * O + o1)])
            BLAS.sgemv(.transposed, rows: H, cols: o1 - o0, alpha: 1, a: UnsafeBufferPointer(rebasing: wy[o0...]), lda: O,
                       x: h, beta: 1, y: UnsafeMutableBufferPointer(rebasing: y[o0..<o1]))
            return
        }
        let l = stage, u0 = part == 0 ? 0 : unitSplit, u1 = part == 0 ? unitSplit : H, n = u1 - u0
        guard n > 0 else { return }
        let layer = layout.layers[l], wx = view(layer.wx.range)
        let half = H - H / 2
        let g4 = UnsafeMutableBufferPointer(rebasing: halfGates[(part * 4 * half)..<(part * 4 * half + 4 * n)])
        let bias = view(layer.bias)
        // Gate block q of these units: columns q·H + u0 ..< q·H + u1 of Wx, at q·n in g4.
        for q in 0..<4 {
            _ = UnsafeMutableBufferPointer(rebasing: g4[(q * n)..<((q + 1) * n)]).update(fromContentsOf: bias[(q * H + u0)..<(q * H + u1)])
        }
        func product(rows r: Range<Int>, x: UnsafeBufferPointer<Float>) {
            for q in 0..<4 {
                BLAS.sgemv(.transposed, rows: r.count, cols: n, alpha: 1,
                           a: UnsafeBufferPointer(rebasing: wx[(r.lowerBound * G + q * H + u0)...]), lda: G,
                           x: x, beta: 1, y: UnsafeMutableBufferPointer(rebasing: g4[(q * n)..<((q + 1) * n)]))
            }
        }
        if l == 0 {
            // The input's one-hot rows, then h⁰ of the last step · W_rec.
            for g in 0..<rows.count {
                let r = Int(rows[g]) * G
                for q in 0..<4 {
                    Kernels.accumulate(UnsafeBufferPointer(rebasing: wx[(r + q * H + u0)..<(r + q * H + u1)]),
                                       into: UnsafeMutableBufferPointer(rebasing: g4[(q * n)..<((q + 1) * n)]))
                }
            }
            let recurrent = layer.recurrent.lowerBound - layer.wx.range.lowerBound
            product(rows: (recurrent / G)..<(recurrent / G + H), x: UnsafeBufferPointer(rebasing: hs[0..<H]))
        } else {
            // h^{l−1} of this step (both halves written), then h^l of the last step.
            product(rows: 0..<H, x: UnsafeBufferPointer(rebasing: hsNext[((l - 1) * H)..<(l * H)]))
            product(rows: H..<(2 * H), x: UnsafeBufferPointer(rebasing: hs[(l * H)..<((l + 1) * H)]))
        }
        let r = (l * H + u0)..<(l * H + u1)
        Kernels.cellForward(H: n, gates: g4, cPrev: UnsafeBufferPointer(rebasing: cs[r]),
                            cNew: UnsafeMutableBufferPointer(rebasing: cNext[r]),
                            tanhC: UnsafeMutableBufferPointer(rebasing: halfTanh[(part * half)..<(part * half + n)]),
                            hNew: UnsafeMutableBufferPointer(rebasing: hsNext[r]))
    }
}

/// The buffers of the inference steps (LSTMInference, BatchedInference), allocated once.
enum InferenceBuffers {
    /// `n` values `v` (capacity at least 1, so that every buffer has an address to deallocate).
    static func make<T>(_ n: Int, _ v: T) -> UnsafeMutableBufferPointer<T> {
        let b = UnsafeMutableBufferPointer<T>.allocate(capacity: max(1, n))
        b.initialize(repeating: v)
        return UnsafeMutableBufferPointer(rebasing: b[0..<n])
    }

    /// A copy of `weights`' flat parameters (every Wx, then Wy), in the layout's order.
    static func parameters(of weights: LSTMWeights) -> UnsafeMutableBufferPointer<Float> {
        let params = make(weights.shape.parameters.count, Float(0))
        for (m, values) in weights.namedMatrices {
            _ = UnsafeMutableBufferPointer(rebasing: params[m.range]).update(fromContentsOf: values)
        }
        return params
    }
}

/// The second thread of a split LSTMInference. The calling thread posts a stage with a ticket
/// (ticket · 16 + stage, one atomic store) and runs its own half; the worker spins for the next
/// ticket, then naps while none comes (50 µs doubling to 1.6 ms: a player that draws a bar ahead
/// leaves it idle most of the time). The second half goes to whichever thread claims the ticket first: the
/// worker when it sees it, or the calling thread when its own half is done and the worker has not
/// begun (napping, or descheduled on a busy machine), so a step is never slower than on one
/// thread for want of the worker. The calling thread waits only for a half the worker has begun.
/// Either way each half is the same calls on the same operands: the same bits.
///
/// A ticket the worker read and could not claim before the calling thread took it and moved on
/// (the worker descheduled between the two) is refused it (TicketClaim): the worker never runs a
/// half of a stage that is over.
///
/// A worker that begins a half and is then descheduled (a busy machine) would hold the calling
/// thread for a scheduler slice. A wait over `lateAfter` makes the calling thread run the next
/// stages alone (`solo`, 1,024 stages, doubled after each late probe up to about a second's worth,
/// reset by a probe that is not late), leaving the worker asleep and its core to the other load.
private final class SplitWorker: @unchecked Sendable {
    private let posted = Atomic<Int>(0)
    private let claimed = TicketClaim()
    private let finished = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let exited = Atomic<Bool>(false)
    private var ticket = 0
    /// Stages the calling thread still runs alone, and the run of stages to take after the next
    /// late wait (see the class comment).
    private var solo = 0, soloRun = SplitWorker.soloFirst
    /// Stages whose second half this thread took, and stages it ran alone.
    private(set) var taken = 0, alone = 0
    static let soloFirst = 1 << 10, soloMost = 1 << 16
    /// The idle worker's naps in µs: 50 at first, doubling to 1.6 ms. A player drawing a bar
    /// ahead leaves it idle for most of each bar: 50 µs naps alone woke it about 7,000 times a
    /// second (6% of a core); the calling thread takes the halves it sleeps through.
    static let napFirst: useconds_t = 50, napMost: useconds_t = 1_600
    /// A wait for the worker's half longer than this is late (a half takes a few µs).
    static let lateAfter: UInt64 = 200_000
    /// The inference, not retained (it owns this worker and stops it in its deinit).
    private unowned(unsafe) let inference: LSTMInference
    /// Stages a ticket can name: a layer or the logits.
    static let stages = 16

    init(_ inference: LSTMInference) {
        precondition(inference.L < Self.stages, "LSTMInference: at most \(Self.stages - 1) layers split")
        self.inference = inference
        let thread = Thread { [self] in loop() }
        thread.start()
    }

    /// Runs `stage` on both threads; returns when both halves are done.
    func run(stage: Int) {
        if solo > 0 {
            solo -= 1
            alone += 1
            inference.half(stage: stage, part: 0)
            inference.half(stage: stage, part: 1)
            return
        }
        ticket += 1
        let value = ticket * Self.stages + stage
        posted.store(value, ordering: .releasing)
        inference.half(stage: stage, part: 0)
        if claimed.claim(value) {
            taken += 1
            inference.half(stage: stage, part: 1)
            return
        }
        var spins = 0, start: UInt64 = 0, late = false
        while finished.load(ordering: .acquiring) != value {
            spins += 1
            if spins & 1023 == 0 {
                let now = Self.nanoseconds()
                if start == 0 { start = now } else if now - start > Self.lateAfter { late = true }
            }
            if spins > 1_000_000 { sched_yield() }
        }
        if late {
            solo = soloRun
            soloRun = min(2 * soloRun, Self.soloMost)
        } else if spins > 0 {
            soloRun = Self.soloFirst
        }
    }

    /// CLOCK_MONOTONIC in nanoseconds (a vDSO read, no system call).
    private static func nanoseconds() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }

    private func loop() {
        drummer_name_this_thread("drummer-step")
        var seen = 0, idle = 0, nap = Self.napFirst
        while true {
            let value = posted.load(ordering: .acquiring)
            if value == seen {
                if stopping.load(ordering: .acquiring) { break }
                idle += 1
                if idle > 20_000 {
                    usleep(nap)
                    nap = min(2 * nap, Self.napMost)
                }
                continue
            }
            idle = 0
            nap = Self.napFirst
            seen = value
            guard claimed.claim(value) else { continue }
            inference.half(stage: value % Self.stages, part: 1)
            finished.store(value, ordering: .releasing)
        }
        exited.store(true, ordering: .releasing)
    }

    /// Stops the thread and waits until it has left its loop.
    func finish() {
        stopping.store(true, ordering: .releasing)
        while !exited.load(ordering: .acquiring) { usleep(10) }
    }
}

/// Which thread takes a split stage's second half: the first to claim its ticket. Tickets only
/// grow, so a ticket at or below the newest one claimed is refused: a worker that read ticket t,
/// was descheduled, and woke after the calling thread had taken t's half and posted later
/// tickets would otherwise win t (an exchange sees a value other than t) and run a half of a
/// stage that is over, over the buffers of the stages now running: a step's bits then depended
/// on the scheduler (`drummer sample` wrote another file for the same seed on a busy machine).
package final class TicketClaim: Sendable {
    /// The newest ticket claimed (0: none).
    private let newest = Atomic<Int>(0)

    package init() {}

    /// True when this thread now holds `ticket` (> 0): no claim of it or of a later ticket came
    /// first. Acquires what the thread that posted it released.
    package func claim(_ ticket: Int) -> Bool {
        var current = newest.load(ordering: .acquiring)
        while current < ticket {
            let (exchanged, original) = newest.compareExchange(expected: current, desired: ticket,
                                                               ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }
}
