// The step loop of a training run, its evaluations and checkpoints.
import Checkpoints
import DrummerCore
import Foundation
import Train

extension TrainingRun {
    /// Trains until `--steps` or until `shouldStop()` (checked after each step).
    public func run(shouldStop: () -> Bool = { StopSignal.requested }) throws -> RunSummary {
        // The checkpoint directory stays locked while this run trains, and is released when
        // it returns (another run, e.g. a resumed one, may then use the directory).
        try lock.acquire()
        defer { lock.release() }
        do {
            return try runLocked(shouldStop: shouldStop)
        } catch {
            // A run that failed before its first checkpoint (a full disk) left only its claim
            // and log rows, nothing to resume: they go, so that the same command can run again.
            if checkpoints.forgetRunWithoutCheckpoints(lock: lock) {
                reporter.line("note: no checkpoint was written; this run's \(TrainLog.fileName) and run.json in \(checkpoints.path) were removed")
            }
            throw error
        }
    }

    private func runLocked(shouldStop: () -> Bool) throws -> RunSummary {
        let c = configuration
        let U = c.unroll, B = c.batchSize
        // A step whose evaluation a stop request cut short: evaluated first, as the run that was
        // stopped would have, before anything reads what it decides (the best step, the
        // plateau schedule, early stopping).
        if let pending = pendingEvaluation, !shouldStop() {
            let step = trainer.progress.step
            reporter.line("step \(step)'s evaluation was cut short when the run stopped: evaluating it first")
            let lr = c.schedule.rate(base: c.learningRate, step: step - 1, progress: schedule)
            let stepLoss = pending.stepLoss.map(Float.init)
            // The step's checkpoint on disk owes this evaluation: it is written again once done.
            savedStep = nil
            if step % c.evalEvery == 0 {
                if let end = try evaluateInLoop(step: step, learningRate: lr, stepLoss: stepLoss, shouldStop: shouldStop).end {
                    return end
                }
            } else if let end = try evaluateAtEnd(step: step, learningRate: lr, stepLoss: stepLoss, shouldStop: shouldStop) {
                return end
            }
            // The step's checkpoint again, with what its evaluation decided.
            if savedStep != step { try save() }
        }
        if let target = c.steps, trainer.progress.step >= target {
            reporter.line("already at step \(trainer.progress.step) (--steps \(target)): nothing to train")
            // A new run with --steps 0 still leaves its initial state as a checkpoint.
            if savedStep != trainer.progress.step { try save() }
            return RunSummary(ending: .nothingToDo, step: trainer.progress.step, lastCheckpoint: lastCheckpoint)
        }
        let startStep = trainer.progress.step
        warnAboutValidationSplit()
        let clock = RunClock()
        // Timesteps/s counts time inside steps only (evaluations and checkpoints
        // are excluded); the ETA uses wall-clock time, which includes them.
        var windowSeconds = 0.0, windowSteps = 0
        var lastBar = -1.0
        var lastLoss: Float = .nan
        // Estimates after the first few steps (after the last one of a shorter run).
        let estimateAt = startStep + min(Self.estimateAfterSteps, max(1, (c.steps ?? .max) - startStep))
        if shouldStop() {
            // Stopped before the first step (while the data loaded): nothing trained, nothing to save.
            reporter.line("interrupted before step \(trainer.progress.step + 1): nothing trained")
            return RunSummary(ending: .interrupted, step: trainer.progress.step, lastCheckpoint: lastCheckpoint)
        }
        while true {
            let step = trainer.progress.step
            if let target = c.steps, step >= target { break }
            let before = clock.seconds
            let (loss, lr) = try advance()
            windowSeconds += clock.seconds - before
            let now = trainer.progress.step
            lastLoss = loss
            windowSteps += 1
            if now == estimateAt {
                printEstimates(secondsPerStep: windowSeconds / Double(windowSteps), step: now)
            }

            if now % c.logEvery == 0 {
                let t = clock.seconds
                let rate = Double(windowSteps * U * B) / max(windowSeconds, 1e-9)
                clearBar()
                reporter.line(progressLine(step: now, loss: loss, lr: lr, timestepsPerSecond: rate,
                                           stepsPerSecond: Double(now - startStep) / max(t, 1e-9)))
                windowSeconds = 0
                windowSteps = 0
                // The running loss at every logged step (an evaluation's row holds it at its own
                // steps and at the last one, which the final evaluation logs).
                if now % c.evalEvery != 0, now != c.steps {
                    try TrainLog.append(progress: ProgressRecord(step: now, epoch: trainer.progress.epoch, smoothedLoss: smoothedLoss,
                                                                 learningRate: lr, stepLoss: Double(loss)),
                                        directory: configuration.checkpointDirectory)
                }
            } else if let bar = reporter.bar {
                let t = clock.seconds
                if t - lastBar >= 0.2 {
                    lastBar = t
                    bar(barLine(step: now, loss: loss, stepsPerSecond: Double(now - startStep) / max(t, 1e-9)))
                }
            }
            // The last step's checkpoint waits for the evaluation after the loop when one follows
            // (the step is not a multiple of --eval-every): saved before it, the checkpoint would
            // miss that evaluation's best step, and choosing or resuming by it would go wrong.
            var saveNow = now % c.checkpointEvery == 0 && !(now == c.steps && now % c.evalEvery != 0)
            if now % c.evalEvery == 0 {
                let (end, best) = try evaluateInLoop(step: now, learningRate: lr, stepLoss: loss, shouldStop: shouldStop)
                if let end { return end }
                if best { saveNow = true }
            }
            var interrupted = shouldStop()
            if (saveNow || interrupted) && savedStep != now {
                try save()
                // A stop that came during the save: the run ends at this step, saved, rather
                // than train one more step and save that too.
                interrupted = interrupted || shouldStop()
            }
            if interrupted {
                clearBar()
                reporter.line("interrupted at step \(now): saved \(lastCheckpoint ?? "nothing")")
                return RunSummary(ending: .interrupted, step: now, lastCheckpoint: lastCheckpoint)
            }
        }
        clearBar()
        let end = trainer.progress.step
        if end % c.logEvery != 0, lastLoss.isFinite {
            let t = clock.seconds
            reporter.line(progressLine(step: end, loss: lastLoss, lr: currentLearningRate,
                                       timestepsPerSecond: Double(windowSteps * U * B) / max(windowSeconds, 1e-9),
                                       stepsPerSecond: Double(end - startStep) / max(t, 1e-9)))
        }
        if evaluatedStep != end, let stopped = try evaluateAtEnd(step: end, learningRate: currentLearningRate,
                                                                 stepLoss: lastLoss.isFinite ? lastLoss : nil, shouldStop: shouldStop) {
            return stopped
        }
        if savedStep != end { try save() }
        return RunSummary(ending: .reachedSteps, step: end, lastCheckpoint: lastCheckpoint)
    }

    /// The evaluation of `step` (the current step, a multiple of --eval-every) and what it
    /// decides: the best step, the plateau schedule, the rising-loss warning, an early stop.
    /// Returns the run's end when it ends here (stopped during the evaluation, or early), and
    /// whether the step is the best so far (its checkpoint is then kept).
    func evaluateInLoop(step: Int, learningRate: Float, stepLoss: Float?, shouldStop: () -> Bool) throws
        -> (end: RunSummary?, best: Bool)
    {
        let c = configuration
        guard let record = try evaluate(learningRate: learningRate, stepLoss: stepLoss, shouldStop: shouldStop) else {
            return (try stoppedDuringEvaluation(step: step, stepLoss: stepLoss), false)
        }
        let best = recordBest(record, step: step)
        let monitored = record.validation?.loss ?? smoothedLoss
        if c.schedule.factor != 1, c.schedule.observe(loss: monitored, progress: &schedule) {
            reporter.line("learning rate decayed to \(currentLearningRate) (no improvement in \(c.schedule.plateauPatience ?? 0) evaluations)")
        }
        watchValidation(record.validation?.loss)
        if shouldStopEarly(at: step) {
            if savedStep != step { try save() }
            clearBar()
            reporter.line("early stop at step \(step): the validation loss has not improved for \(c[Settings.earlyStopPatience]) evaluations; the best, \(String(format: "%.4f", bestValidationLoss)), is step \(bestStep)'s checkpoint (\(checkpoints.file(step: bestStep))); --no-early-stop trains on")
            return (RunSummary(ending: .earlyStopped, step: step, lastCheckpoint: lastCheckpoint), best)
        }
        return (nil, best)
    }

    /// The final evaluation, of `step`, the last one trained when it is no multiple of
    /// --eval-every: the best step only. Returns the run's end when a stop request cut it short.
    func evaluateAtEnd(step: Int, learningRate: Float, stepLoss: Float?, shouldStop: () -> Bool) throws -> RunSummary? {
        guard let record = try evaluate(learningRate: learningRate, stepLoss: stepLoss, shouldStop: shouldStop) else {
            return try stoppedDuringEvaluation(step: step, stepLoss: stepLoss)
        }
        recordBest(record, step: step)
        return nil
    }

    /// Whether `record`'s validation loss is the lowest yet: then `step` is the best step.
    @discardableResult
    private func recordBest(_ record: EvaluationRecord, step: Int) -> Bool {
        guard let v = record.validation, v.loss < bestValidationLoss else { return false }
        bestValidationLoss = v.loss
        bestStep = step
        return true
    }

    /// Steps timed before `printEstimates` runs.
    static let estimateAfterSteps = 3
    /// A projected evaluation longer than this gets a warning (DRUMMER_EVAL_WARN_SECONDS
    /// sets another threshold: `evaluationWarningSetting` checks it).
    static var longEvaluationSeconds: Double { (try? evaluationWarningSetting()) ?? nil ?? 180 }

    /// DRUMMER_EVAL_WARN_SECONDS when set (nil: not set), refused unless a number of seconds, 0
    /// or more: a typo would otherwise leave the default in force without a word.
    public static func evaluationWarningSetting() throws -> Double? {
        guard let text = ProcessInfo.processInfo.environment["DRUMMER_EVAL_WARN_SECONDS"], !text.isEmpty else { return nil }
        guard let s = Double(text), s.isFinite, s >= 0 else {
            throw SettingError(option: "DRUMMER_EVAL_WARN_SECONDS", message: "must be a number of seconds, 0 or more (got \"\(text)\")")
        }
        return s
    }

    /// The rows one evaluation reads: the training figure's and the validation split's.
    var evaluationEvents: (train: Int, validation: Int) {
        let k = groups.inputNames.count
        return (evaluationSets.train.rows(inputs: k), evaluationSets.validation?.rows(inputs: k) ?? 0)
    }

    /// Seconds per evaluated row at this model size: a timed evaluation of the first rows of the
    /// training set as the evaluations read it (a grid run: 64 files' first 16 rows side by
    /// side; the 2017 layout: one stream), for at most about 0.3 s.
    func secondsPerEvaluatedEvent() -> Double? {
        guard let w = try? weights() else { return nil }
        let k = max(1, groups.inputNames.count)
        let set = evaluationSets.train
        if let fileRows = set.fileRows {
            var events: [Int32] = [], rows: [Int] = []
            var start = 0
            for n in fileRows {
                defer { start += n }
                guard rows.count < 64, n >= 16 else { continue }
                events += set.events[(start * k)..<((start + 16) * k)]
                rows.append(16)
            }
            guard !rows.isEmpty else { return nil }
            let clock = RunClock()
            _ = Evaluator.evaluateFiles(weights: w, events: events, fileRows: rows)
            return clock.seconds / Double(rows.count * 16)
        }
        let n = min(512, set.events.count / k)
        guard n >= 2 else { return nil }
        let clock = RunClock()
        var steps = 0
        _ = Evaluator.evaluate(weights: w, events: Array(set.events.prefix(n * k)), shouldStop: {
            if steps >= 8, clock.seconds > 0.3 { return true }
            steps += 1
            return false
        })
        return steps > 0 ? clock.seconds / Double(steps) : nil
    }

    /// After the first steps: the time per step, of one evaluation, and to --steps; a warning
    /// when one evaluation will take minutes.
    func printEstimates(secondsPerStep: Double, step: Int) {
        guard let perEvent = secondsPerEvaluatedEvent() else { return }
        let c = configuration
        let events = evaluationEvents
        let evalSeconds = perEvent * Double(events.train + events.validation)
        let unit = groups.grid != nil ? "steps" : "events"
        var line = "estimate: " + Self.duration(secondsPerStep, fine: true) + " per step; one evaluation ("
            + "\(events.train) training + \(events.validation) validation \(unit)) about " + Self.duration(evalSeconds, fine: true)
        if let target = c.steps, target > step {
            let evaluations = target / c.evalEvery - step / c.evalEvery + (target % c.evalEvery == 0 ? 0 : 1)
            let total = Double(target - step) * secondsPerStep + Double(evaluations) * evalSeconds
            line += "; to step \(target): about " + Self.duration(total, fine: false)
                + " (\(evaluations) evaluation\(evaluations == 1 ? "" : "s"))"
            if let choice, groups.grid != nil, data.eventCount > 0, let w = try? weights(), let perStep = choice.secondsPerStep(w) {
                // The steps a file of the choice's hits takes: the data's steps per hit (a trained
                // model plays about as densely as its data; an early one several hits a step).
                let perHit = perStep * Double(trainingClasses.count / max(1, groups.inputNames.count)) / Double(data.eventCount)
                // The checkpoints of the second half: every --checkpoint-every from half the last
                // step on, and the last; as many as --keep keeps.
                let from = (target / 2 + c.checkpointEvery - 1) / c.checkpointEvery, to = target / c.checkpointEvery
                let checkpoints = min(c.keep, max(0, to - from + 1) + (target % c.checkpointEvery == 0 ? 0 : 1))
                let once = Double(checkpoints * choice.hitsPerCheckpoint) * perHit / Double(max(1, choice.threads))
                line += "; then -o plays \(checkpoints) checkpoint\(checkpoints == 1 ? "" : "s") to choose one: about "
                    + Self.duration(once, fine: false)
                    + (choice.measurements > 1 ? " (up to " + Self.duration(once * Double(choice.measurements), fine: false)
                       + " when none meets the rule as the model plays)" : "")
            }
        }
        clearBar()
        reporter.line(line)
        if evalSeconds > Self.longEvaluationSeconds {
            reporter.line("warning: one evaluation will take about \(Self.duration(evalSeconds, fine: false)) at this size: "
                          + "a larger --eval-every evaluates less often, or convert-midi with a smaller --validation-fraction")
        }
    }

    /// "0.42 s", "3m20s", "1h05m".
    static func duration(_ seconds: Double, fine: Bool) -> String {
        if fine, seconds < 10 { return String(format: seconds < 0.1 ? "%.3f s" : "%.2f s", seconds) }
        let secs = Int(seconds.rounded())
        if secs >= 3600 { return "\(secs / 3600)h\(String(format: "%02d", secs % 3600 / 60))m" }
        if secs >= 60 { return "\(secs / 60)m\(String(format: "%02d", secs % 60))s" }
        return "\(secs) s"
    }

    /// A stop request during the evaluation at `step`: the finished step is saved, marked as
    /// owing its evaluation (which the run resumed from it does first, so that it goes on as
    /// the uninterrupted run), and the run ends as interrupted.
    func stoppedDuringEvaluation(step: Int, stepLoss: Float?) throws -> RunSummary {
        pendingEvaluation = PendingEvaluation(stepLoss: stepLoss.map(Double.init))
        if savedStep != step { try save() }
        clearBar()
        reporter.line("interrupted at step \(step) during its evaluation: saved \(lastCheckpoint ?? "nothing"); "
                      + "a run resumed from it evaluates step \(step) first")
        return RunSummary(ending: .interrupted, step: step, lastCheckpoint: lastCheckpoint)
    }

    /// Whether --early-stop ends the run after the evaluation at `step`: the best validation loss
    /// is `earlyStopPatience` evaluations old (a pure function of the checkpointed best step, so
    /// a resumed run stops where the straight one does).
    func shouldStopEarly(at step: Int) -> Bool {
        let c = configuration
        guard c[Settings.earlyStop], validationClasses != nil, bestStep >= 0 else { return false }
        return step - bestStep >= c[Settings.earlyStopPatience] * c.evalEvery
    }

    /// Warns, once per run, when the validation loss has risen at two evaluations in a row above
    /// its best (the model is learning the training data by heart).
    func watchValidation(_ loss: Double?) {
        guard let loss else { return }
        defer { previousValidationLoss = loss }
        guard let previous = previousValidationLoss, loss > previous, loss > bestValidationLoss else {
            risingEvaluations = 0
            return
        }
        risingEvaluations += 1
        if risingEvaluations == 2, !warnedRising {
            warnedRising = true
            clearBar()
            reporter.line(String(format: "warning: the validation loss has risen at 2 evaluations in a row (%.4f, best %.4f at step %d): the model may be over-fitting; step %d's checkpoint is kept as the best", loss, bestValidationLoss, bestStep, bestStep))
        }
    }

    /// Warns, once, when the validation split is too small for its loss to mean much (or absent).
    func warnAboutValidationSplit() {
        guard !warnedSplit else { return }
        warnedSplit = true
        let n = (validationClasses?.count ?? 0) / max(1, groups.inputNames.count)
        if validationClasses == nil {
            // An empty split was noted where it was read.
            if configuration[Settings.earlyStop], data.validationSplit == nil {
                reporter.line("note: the dataset has no validation split: --early-stop has nothing to watch (convert-midi --validation-fraction makes one)")
            }
        } else if n < Self.smallValidationSplit {
            reporter.line("warning: the validation split holds only \(n) \(groups.grid != nil ? "16th steps" : "hits"): its loss (and --early-stop, the best checkpoint) means little; convert-midi with a larger --validation-fraction or more files")
        }
    }

    /// Validation splits of fewer hits than this get a warning.
    static let smallValidationSplit = 2000

    /// One step of the loop: the scheduled learning rate, one update, the smoothed loss.
    /// Returns the chunk's loss and the rate it was trained with; a NaN/Inf loss stops the
    /// run (`RunError.nonFinite`). Reads the run's progress without copying any state.
    package func advance() throws -> (loss: Float, learningRate: Float) {
        let lr = currentLearningRate
        trainer.optimizerConfig = configuration.optimizerConfig(learningRate: lr)
        let loss = trainer.step()
        guard loss.isFinite else {
            throw RunError.nonFinite(step: trainer.progress.step, what: "the loss is \(loss) (try a lower --lr or --clip)",
                                     lastCheckpoint: lastCheckpoint)
        }
        // A grid run's smoothed loss starts at its first step's: the 2017 layout's uniform guess
        // over every output group (the original's start) is about ten times a grid step's
        // loss, whose groups are predicted only where their class is hit, and took thousands
        // of steps to forget.
        if groups.grid != nil, trainer.progress.step == 1 {
            smoothedLoss = Double(loss)
        } else {
            smoothedLoss = 0.999 * smoothedLoss + 0.001 * Double(loss)
        }
        return (loss, lr)
    }

    /// Evaluates on the training figure's rows and the validation set (TrainingRun.evaluationSets),
    /// prints and logs the result; nil when `shouldStop` asked to stop (checked before every
    /// evaluated step).
    func evaluate(learningRate: Float, stepLoss: Float? = nil, shouldStop: () -> Bool = { false }) throws -> EvaluationRecord? {
        let w = try finiteWeights()
        let s = trainer.progress
        let clock = RunClock()
        let train: Metrics?, validation: Metrics?
        let sets = evaluationSets
        (train, validation) = withoutActuallyEscaping(shouldStop) { stop in
            EvaluationSet.evaluate(sets.train, sets.validation, w, shouldStop: stop)
        }
        guard let train, sets.validation == nil || validation != nil else { return nil }
        let record = EvaluationRecord(
            step: s.step, epoch: s.epoch, smoothedLoss: smoothedLoss, learningRate: learningRate,
            train: train, validation: validation, stepLoss: stepLoss.map(Double.init))
        let grid = groups.grid != nil
        func fmt(_ m: Metrics) -> String {
            // A grid model: the loss per 16th step (hit set, and velocity and offset of each hit).
            if grid { return String(format: "loss %.4f (hit set %.4f, accuracy %.4f)", m.loss, m.lossNote, m.accuracyNote) }
            return String(format: "loss %.4f, accuracy %.4f (note %.4f, tick %.4f)", m.loss, m.accuracy, m.accuracyNote, m.accuracyTick)
        }
        clearBar()
        var text = "eval step \(s.step): train\(sets.train.description) \(fmt(record.train))"
        if let v = record.validation { text += "; validation \(fmt(v))" }
        text += String(format: " (%.1f s)", clock.seconds)
        reporter.line(text)
        // The log's accuracy columns are the first groups' (TrainLog.header): a grid model's is its
        // hit set's, the accuracy the line above prints (its "both first groups right" is no figure).
        var logged = record
        if grid {
            logged.train.accuracy = record.train.accuracyNote
            logged.validation?.accuracy = record.validation?.accuracyNote ?? 0
        }
        try TrainLog.append(logged, directory: configuration.checkpointDirectory)
        evaluatedStep = s.step
        pendingEvaluation = nil  // done: the step owes no evaluation
        return record
    }

    /// Writes `ckpt-<step>.h5` and prunes old checkpoints.
    func save() throws {
        _ = try finiteWeights()
        let step = trainer.progress.step
        let path = checkpoints.file(step: step)
        try checkpoint().write(to: path)
        lastCheckpoint = path
        savedStep = step
        clearBar()
        reporter.line("checkpoint \(path)")
        checkpoints.prune(keep: configuration.keep, protect: bestStep >= 0 ? [bestStep] : [])
    }

    /// The current weights, refusing NaN/Inf (the run stops; nothing is written).
    func finiteWeights() throws -> LSTMWeights {
        let w = try weights()
        do { try w.checkFinite() } catch {
            throw RunError.nonFinite(step: trainer.progress.step, what: "\(error)", lastCheckpoint: lastCheckpoint)
        }
        return w
    }

    func clearBar() { reporter.bar?("") }

    func progressLine(step: Int, loss: Float, lr: Float, timestepsPerSecond: Double, stepsPerSecond: Double) -> String {
        var s = "step \(step)"
        if let t = configuration.steps { s += "/\(t)" }
        s += String(format: "  epoch %d  loss %.4f  smoothed %.4f  lr %g  %.0f timesteps/s",
                    trainer.progress.epoch, loss, smoothedLoss, Double(lr), timestepsPerSecond)
        if let eta = eta(step: step, stepsPerSecond: stepsPerSecond) { s += "  ETA \(eta)" }
        return s
    }

    func barLine(step: Int, loss: Float, stepsPerSecond: Double) -> String {
        var s = ""
        if let t = configuration.steps, t > 0 {
            let width = 30, done = min(width, width * step / t)
            s += "[" + String(repeating: "#", count: done) + String(repeating: ".", count: width - done) + "] "
            s += "\(step)/\(t)"
        } else {
            s += "step \(step)"
        }
        s += String(format: "  loss %.4f  smoothed %.4f", loss, smoothedLoss)
        if let eta = eta(step: step, stepsPerSecond: stepsPerSecond) { s += "  ETA \(eta)" }
        return s
    }

    func eta(step: Int, stepsPerSecond: Double) -> String? {
        guard let t = configuration.steps, stepsPerSecond > 0, stepsPerSecond.isFinite else { return nil }
        let secs = Int((Double(max(0, t - step)) / stepsPerSecond).rounded())
        if secs >= 3600 { return "\(secs / 3600)h\(String(format: "%02d", secs % 3600 / 60))m" }
        if secs >= 60 { return "\(secs / 60)m\(String(format: "%02d", secs % 60))s" }
        return "\(secs)s"
    }
}

/// Monotonic seconds since creation.
struct RunClock {
    let start = DispatchTime.now().uptimeNanoseconds
    var seconds: Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
}
