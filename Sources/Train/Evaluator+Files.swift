// Evaluation of many files at once: each file from its own zero state (as `drummer sample`
// starts one), predicting row t+1 of the file from its rows ≤ t. Files are independent, so they
// run side by side: `threads` threads, each stepping `batch` streams with BatchedInference (one
// GEMM per layer per step for all its streams instead of a GEMV per stream).
//
// Schedule, fixed by the file lengths alone (so the figures do not depend on timing): the files,
// longest first, each go to the stream with the fewest rows so far; a thread owns `batch`
// streams and steps them in lockstep, a stream taking its next file (from a zero state) when
// one ends. Its streams are ordered longest queue first, so the streams still running are
// always the first n and the products shrink to n rows as the queues end.
//
// Each file's sums are its own EvaluationResult, added in file order at the end: the total is
// what `Metrics.evaluate(weights:events:fileRows:)` sums file by file, up to float32 rounding
// of the batched products.
import Dispatch
import DrummerCore
import Synchronization

extension Evaluator {
    /// Streams per thread (enough rows per GEMM; more leaves streams idle at the end).
    public static let fileBatch = 32

    /// Evaluates `weights` on `events` cut into files of `fileRows` rows (in order, summing to
    /// the rows of `events`), each from its own zero state; nil when `shouldStop` answered true
    /// (asked once per step by the first thread only, which tells the others). OpenBLAS runs on
    /// one thread meanwhile.
    public static func evaluateFiles(weights: LSTMWeights, events: [Int32], fileRows: [Int], batch: Int = fileBatch,
                                     threads: Int = 2, shouldStop: (() -> Bool)? = nil) -> EvaluationResult? {
        guard let each = evaluateEachFile(weights: weights, events: events, fileRows: fileRows, batch: batch, threads: threads,
                                          shouldStop: shouldStop) else { return nil }
        return sum(each, of: weights.shape)
    }

    /// The sum of `results` (files' own results) in their order.
    public static func sum(_ results: some Sequence<EvaluationResult>, of shape: ModelShape) -> EvaluationResult {
        var total = EvaluationResult(groups: shape.outputGroups.count, lossGroups: shape.lossGroups)
        for r in results { total.add(r) }
        return total
    }

    /// The same, each file's own result (in file order): several sets evaluated in one call
    /// (a run's training sample and validation split) overlap their longest files, whose steps
    /// are the evaluation's critical path.
    public static func evaluateEachFile(weights: LSTMWeights, events: [Int32], fileRows: [Int], batch: Int = fileBatch,
                                        threads: Int = 2, shouldStop: (() -> Bool)? = nil) -> [EvaluationResult]? {
        let shape = weights.shape, k = shape.inputGroups.count, m = shape.outputGroups.count
        precondition(fileRows.reduce(0, +) * k == events.count && fileRows.allSatisfy { $0 >= 0 }, "evaluateFiles: file rows")
        precondition(batch >= 1 && threads >= 1, "evaluateFiles: batch and threads")
        precondition((try? EventValidation.check(events, shape: shape)) != nil, "evaluateFiles: events outside the model's groups")
        var offsets = [Int](repeating: 0, count: fileRows.count)
        for f in fileRows.indices.dropFirst() { offsets[f] = offsets[f - 1] + fileRows[f - 1] }
        let starts = offsets
        // Files that make a prediction, longest first (then in order), onto the emptiest stream.
        let files = fileRows.indices.filter { fileRows[$0] >= 2 }.sorted { (fileRows[$0], $1) > (fileRows[$1], $0) }
        let streamCount = threads * batch
        var queues = [[Int]](repeating: [], count: streamCount), load = [Int](repeating: 0, count: streamCount)
        for f in files {
            var best = 0
            for s in 1..<streamCount where load[s] < load[best] { best = s }
            queues[best].append(f)
            load[best] += fileRows[f]
        }
        let perFile = UnsafeMutableBufferPointer<EvaluationResult>.allocate(capacity: max(1, fileRows.count))
        perFile.initialize(repeating: EvaluationResult(groups: m, lossGroups: shape.lossGroups))
        defer { perFile.deallocate() }
        let (plan, loads) = (queues, load)
        let stop = StopFlag()
        BLASRuntime.onOneThread {
            withoutActuallyEscaping(shouldStop ?? { false }) { ask in
                events.withUnsafeBufferPointer { ev in
                    // Each thread writes its own files' results; the first asks `shouldStop`.
                    let shared = Shared(events: ev, perFile: perFile, ask: ask)
                    DispatchQueue.concurrentPerform(iterations: threads) { t in
                        // This thread's streams, longest queue first.
                        let own = (t * batch..<((t + 1) * batch)).sorted { (loads[$0], $1) > (loads[$1], $0) }
                        run(weights: weights, events: shared.events, starts: starts, fileRows: fileRows,
                            queues: own.map { plan[$0] }, loads: own.map { loads[$0] }, into: shared.perFile) {
                            if t == 0, shared.ask() { stop.value.store(true, ordering: .relaxed) }
                            return stop.value.load(ordering: .relaxed)
                        }
                    }
                }
            }
        }
        if stop.value.load(ordering: .relaxed) { return nil }
        return Array(perFile[0..<fileRows.count])
    }

    /// The buffers the threads share: the events (read), and per file and per thread the slots
    /// that only one thread writes.
    private struct Shared: @unchecked Sendable {
        let events: UnsafeBufferPointer<Int32>
        let perFile: UnsafeMutableBufferPointer<EvaluationResult>
        /// The caller's stop request, asked by one thread only.
        let ask: () -> Bool
    }

    /// Set once a stop is asked for; every thread reads it each step.
    private final class StopFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// One thread's streams: stream j plays the files of `queues[j]` one after the other
    /// (`loads` rows in all, non-increasing in j). Writes each file's result; ends early when
    /// `stopped` answers true (asked once per step).
    private static func run(weights: LSTMWeights, events ev: UnsafeBufferPointer<Int32>, starts: [Int], fileRows: [Int],
                            queues: [[Int]], loads: [Int], into perFile: UnsafeMutableBufferPointer<EvaluationResult>,
                            stopped: () -> Bool) {
        guard let longest = loads.first, longest > 0 else { return }
        let shape = weights.shape, k = shape.inputGroups.count, O = shape.outputWidth, m = shape.outputGroups.count
        let targets = targetColumns(of: shape), columns = shape.parameters.head.outputColumns
        let lstm = BatchedInference(weights: weights, streams: queues.count)
        var file = [Int](repeating: 0, count: queues.count)  // index into the stream's queue
        var row = [Int](repeating: 0, count: queues.count)   // the next row of its current file
        for step in 0..<longest {
            if stopped() { return }
            // Streams still running: those with more rows than `step` (the first n).
            var n = 0
            while n < loads.count, loads[n] > step { n += 1 }
            for j in 0..<n {
                let f = queues[j][file[j]]
                if row[j] == 0 { lstm.resetState(stream: j) }
                let e = starts[f] + row[j]
                for g in 0..<k { lstm.input[j * k + g] = ev[e * k + g] }
            }
            lstm.step(count: n)
            let y = lstm.logits(count: n)
            for j in 0..<n {
                let f = queues[j][file[j]]
                let next = starts[f] + row[j] + 1
                if row[j] + 1 < fileRows[f] {
                    var noteRight = false, tickRight = false
                    for g in 0..<m {
                        let target = Int(ev[next * k + targets[g]])
                        // A target equal to the group's size (the grid's "not hit") is not predicted.
                        if target >= columns[g].count { continue }
                        let logits = UnsafeMutableBufferPointer(rebasing: y[(j * O + columns[g].lowerBound)..<(j * O + columns[g].upperBound)])
                        let ok = Softmax.argmax(UnsafeBufferPointer(logits)) == target
                        perFile[f].lossSums[g] += Double(Kernels.negativeLogLikelihood(logits, target: target))
                        if ok { perFile[f].correct[g] += 1 }
                        if g == 0 { noteRight = ok }
                        if g == 1 { tickRight = ok }
                    }
                    if noteRight && tickRight { perFile[f].correctBoth += 1 }
                    perFile[f].predictions += 1
                }
                row[j] += 1
                if row[j] == fileRows[f] {
                    row[j] = 0
                    file[j] += 1
                }
            }
        }
    }
}
