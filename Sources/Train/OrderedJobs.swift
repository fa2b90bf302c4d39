// A helper thread for the chunk pipeline that never makes the caller wait for a
// core it cannot get: jobs run one at a time in submission order, on the helper
// thread, or on the caller itself when it drains the queue and the helper has not
// taken the next job yet (a busy machine). Results do not depend on who runs what.
// Jobs are small values (no closures), so submitting allocates nothing once the
// queue has grown to a chunk's worth.

import CKernels
import Foundation

/// What a job runs on: the chunk pipeline.
protocol OrderedJobExecutor: AnyObject {
    func run(_ job: ChunkJob)
}

enum ChunkJob: Sendable {
    /// Output layer and output-side gradients of a block.
    case output(block: Int)
    /// A layer's Wx gradients of a block (the last block overwrites, the others accumulate),
    /// and for a layer above 0 the gradient reaching the layer below's h.
    case gradient(layer: Int, block: Int)
    /// The input product of a block of a layer above 0 (its x · W_in + bias).
    case inputProduct(layer: Int, block: Int)
    /// A whole chunk of a stream group (forward, backward, block work inline).
    case chunk
    /// W_recᵀ of every layer, packed for the backward recurrent products.
    case packTransposedRecurrent
    /// A part of the optimizer update (the range the pipeline set).
    case update
}

final class OrderedJobs: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending: [ChunkJob] = []
    private var head = 0
    private var running = false
    private var stopping = false
    /// Set by the owner; weak so that the helper thread does not keep it alive.
    weak var executor: OrderedJobExecutor?

    init() {
        pending.reserveCapacity(64)
        let thread = Thread { [self] in
            drummer_name_this_thread("drummer-train")  // as top -H shows it
            helperLoop()
        }
        thread.qualityOfService = .userInitiated
        thread.start()
    }

    /// Ends the helper thread (after the job it is running, if any).
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    func submit(_ job: ChunkJob) {
        condition.lock()
        pending.append(job)
        condition.broadcast()
        condition.unlock()
    }

    /// Returns when every submitted job has run, running the ones the helper has not taken.
    func drain() {
        condition.lock()
        while head < pending.count || running {
            if !running {
                runNextJobLocked()
            } else {
                condition.wait()
            }
        }
        pending.removeAll(keepingCapacity: true)
        head = 0
        condition.unlock()
    }

    private func helperLoop() {
        condition.lock()
        while true {
            while !stopping && (running || head == pending.count) { condition.wait() }
            if stopping { break }
            runNextJobLocked()
        }
        condition.unlock()
    }

    /// Takes the next pending job and runs it outside the lock. Called, and returns,
    /// with `condition` locked; the caller has checked that a job is pending and none runs.
    private func runNextJobLocked() {
        let job = pending[head]
        head += 1
        running = true
        condition.unlock()
        executor?.run(job)
        condition.lock()
        running = false
        condition.broadcast()
    }
}
