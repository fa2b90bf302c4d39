// `drummer choose-step CKPT_DIR --reference DATA`: which checkpoint to ship, by what its samples
// play. Per checkpoint: the files `drummer sample CKPT-MODEL -n N --count C --seed S` would write
// (sampled in memory), measured as `drummer stats … --expected-hits N·C` would (Report.StatsRun),
// then Report.StepRule. models/groove/TRAINING.md, "Choosing the step", says how the shipped
// model was chosen by it.
import ArgumentParser
import Dispatch
import Checkpoints
import DrummerCore
import Export
import Foundation
import MIDIParse
import ModelFiles
import Report
import Sample
import FileOutput

struct ChooseStepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "choose-step",
        abstract: "Choose the checkpoint to export by the groove figures of files sampled from each.",
        discussion: """
            For each checkpoint ckpt-STEP.h5 of the directory (from --from to --to), samples --count \
            files of -n hits at temperature 1 (or --temperature) without a primer, seeds --seed, --seed + 1, … (the \
            files `drummer sample` writes with the same options), and measures them against \
            --reference as `drummer stats --expected-hits` does. The rule: \(StepRule.description). \
            Prints one line per checkpoint and the choice; --export DIR exports the chosen \
            checkpoint as `drummer export` does. Every checkpoint is read and checked before \
            any is sampled: a damaged one is an error naming it, before anything is measured. Exits 1 when no checkpoint meets the rule (the \
            figures are still printed, nothing is exported), unless --closest chooses the one \
            that misses the fewest targets. Use seeds you will not judge the \
            result on: the chosen checkpoint's figures on these files are its best case.
            """)

    @Argument(help: ArgumentHelp("Checkpoint directory of `drummer train` (its ckpt-STEP.h5 files).", valueName: "dir"))
    var checkpointDir: String

    @Option(help: ArgumentHelp("A convert-midi dataset, a folder of MIDI files or one MIDI file (as for stats).",
                               valueName: "data-or-midi-dir"))
    var reference: String

    @Option(parsing: .unconditional, help: "Snap onsets to a grid of this many ticks on both sides, as stats --quantize (default: a dataset reference's own, else none; 30 for the Groove corpus as MIDI files).")
    var quantize: Int?

    @Option(name: .customLong("from"), parsing: .unconditional, help: "First step to consider (default: the first checkpoint).")
    var fromStep: Int?

    @Option(name: .customLong("to"), parsing: .unconditional, help: "Last step to consider (default: the last checkpoint).")
    var toStep: Int?

    @Option(parsing: .unconditional, help: "Files to sample from each checkpoint.")
    var count = 100

    @Option(name: [.customShort("n"), .customLong("notes")], parsing: .unconditional, help: "Hits per file.")
    var notes = 1000

    @Option(parsing: .unconditional, help: "Seed of the first file (file k, counted from 0, uses seed + k, as sample --count does).")
    var seed: UInt64 = 1001

    @Flag(help: "Also require the bar-structure targets (similarity at lags 1, 2, 4, 8 >= 80% of the reference's, patterns per 16 bars <= 130%, the fill bumps) and the touch targets (hits per bar, simultaneous onsets, mean velocity and soft-hit share within 10%), and choose the checkpoint whose nearest such target is furthest from its limit (the widest margin).")
    var structure = false

    @Flag(help: "When no checkpoint meets the rule, choose the one that misses the fewest targets (groove, bar structure and touch; then the highest bar similarity) instead of none, and name what it misses.")
    var closest = false

    @Option(help: ArgumentHelp("Export the chosen checkpoint to this model directory.", valueName: "dir"))
    var export: String?

    @Option(parsing: .unconditional, help: "Sample at these temperatures (as sample --temperature: one number, or group=T pairs such as velocity=1.2; default 1); --export records them in model.json as the model's defaults.")
    var temperature: String?


    func validate() throws {
        guard !checkpointDir.isEmpty else { throw ValidationError("DIR must not be empty") }
        try StatsCommand.checkQuantize(quantize)
        guard (1...10_000).contains(count) else { throw ValidationError("--count must be between 1 and 10000, got \(count)") }
        try SampleCommand.checkSeeds(seed, count: count)
        guard (1...1_000_000).contains(notes) else { throw ValidationError("-n must be between 1 and 1000000, got \(notes)") }
        if let f = fromStep, f < 0 { throw ValidationError("--from must not be negative, got \(f)") }
        if let f = fromStep, let t = toStep, t < f { throw ValidationError("--to (\(t)) is before --from (\(f))") }
        if let e = export, e.isEmpty { throw ValidationError("--export must name a directory") }
        if let t = temperature { _ = try SampleCommand.setting(t) }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: checkpointDir, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("\(checkpointDir) is not a directory")
        }
    }

    func run() throws {
        InterruptCleanup.install()
        if let export {
            // Checked before the (long) measurements.
            // What the export would refuse (a file, a foreign folder, an unwritable place) too.
            try AtomicOutput.prepareDirectory(at: export, kind: .model).discard()
            try InputOverlap.check(output: export, directory: true, inputs: [
                .checkpointDirectory(checkpointDir), CommandInput(reference, role: "the reference")])
        }
        var chooser = StepChooser(checkpointDir: checkpointDir, reference: reference, quantize: quantize, fromStep: fromStep,
                                  toStep: toStep, count: count, notes: notes, seed: seed, structure: structure,
                                  closest: closest, temperature: temperature)
        chooser.nothingExported = export != nil
        let (rows, best) = try chooser.choose()
        if let export {
            let s = try Exporter.export(checkpoint: rows[best].path, sampling: chooser.sampling, to: export)
            print("exported \(rows[best].path) (\(s.stepDescription)) to \(s.directory)"
                  + (temperature == nil ? "" : ", sampling temperature \(TemperatureSetting.describe(chooser.sampling.temperatures)) recorded in model.json"))
        }
    }

    /// `s` right-aligned in `n` columns.
    static func pad(_ s: String, _ n: Int) -> String { String(repeating: " ", count: max(0, n - s.count)) + s }
    /// A column after the first: right-aligned in `n`, and one space before a value as wide as
    /// its column or wider, so that two values never run together ("n/a-1143%").
    static func column(_ s: String, _ n: Int) -> String { String(repeating: " ", count: max(1, n - s.count)) + s }

    static let header = "step      periodicity  note JS  delta JS  velocity JS    grid  accent r  similarity  patterns  fill  hits/bar  velocity  margin  rule"

    /// One row: figures as `drummer stats` prints them (n/a where one cannot be measured);
    /// similarity (the mean over lags 1, 2, 4, 8), patterns per 16 bars, the fill's tom + crash
    /// bump, hits per bar and mean velocity as shares of the reference's; the smallest margin of the
    /// bar-structure and touch targets (StepFigures.margin) in percent.
    static func line(_ f: StepFigures, structure: Bool) -> String {
        let pad = ChooseStepCommand.pad
        func percent(_ v: Double?) -> String { v.map { String(format: "%.1f%%", $0 * 100) } ?? "n/a" }
        func bits(_ v: Double?) -> String { v.map { String(format: "%.4f", $0) } ?? "n/a" }
        let rule = StepRule.meets(f, structure: structure) ? "✓"
            : f.targetsMet && (!structure || (f.structureMet && f.touchMet)) ? "targets met, margins not" : "✗"
        return pad(String(f.step), 4) + "  " + column(percent(f.periodicity), 15) + column(bits(f.noteJS), 9)
            + column(bits(f.deltaJS), 10) + column(bits(f.velocityJS), 13) + column(percent(f.grid), 8)
            + column(f.accent.map { String(format: "%.3f", $0) } ?? "n/a", 10) + column(percent(f.similarity), 12)
            + column(percent(f.patterns), 10) + column(f.fillBump.map { String(format: "%.0f%%", $0 * 100) } ?? "n/a", 6)
            + column(percent(f.hitsPerBar), 10) + column(percent(f.velocity), 10)
            + column(f.margin.map { $0.isFinite ? String(format: "%.1f%%", $0 * 100) : "-inf" } ?? "n/a", 8) + "  " + rule
    }

    /// The files `drummer sample MODEL -n notes --count count --seed seed` writes, read back
    /// as `drummer stats` reads them.
    static func sample(_ model: TrainedModel, count: Int, notes: Int, seed: UInt64,
                       sampling: SamplingDefaults = SamplingDefaults()) throws -> [DrumPerformance] {
        var drawn = SamplingOptions(temperature: 1)
        drawn.set(sampling.temperatures)
        let options = drawn
        let midi = DrumMIDIOptions(model: model.groups)
        // The files on both cores: file k on thread k mod 2, each thread with its own sampler
        // (a file depends only on its seed) whose steps run on that thread alone (a step split
        // over both cores as well would make four threads take turns on two), OpenBLAS on one
        // thread meanwhile.
        let threads = min(2, max(1, count))
        let samplers = try (0..<threads).map { _ in
            try Sampler(weights: model.weights, groups: model.groups, stepThreads: threads > 1 ? 1 : nil)
        }
        let results = UnsafeMutableBufferPointer<Result<DrumPerformance, Error>?>.allocate(capacity: max(1, count))
        results.initialize(repeating: nil)
        defer { results.deallocate() }
        let shared = SampledFiles(results: results, samplers: samplers)
        BLASRuntime.onOneThread {
            DispatchQueue.concurrentPerform(iterations: threads) { t in
                for k in stride(from: t, to: count, by: threads) {
                    shared.results[k] = Result {
                        var rng = SeededRNG(seed: seed &+ UInt64(k))
                        let hits: [DrumHit]
                        do {
                            hits = try shared.samplers[t].generate(count: notes, options: options, primer: [], rng: &rng).map(\.hit)
                        } catch let error as SamplerError {
                            throw StepSampleFailure(file: k + 1, seed: seed &+ UInt64(k), reason: error.description)
                        }
                        let name = "step-sample-\(k + 1).mid"
                        let (file, warnings) = try MIDIFile.parse(DrumMIDI.encode(hits, options: midi), path: name, mode: .safe)
                        return DrumPerformance(file: file, path: name, warnings: warnings)
                    }
                }
            }
        }
        // The first failure in file order, as one thread would have met it.
        return try (0..<count).map { try results[$0]!.get() }
    }

    /// What the sampling threads share: each writes its own files' slots, with its own sampler.
    private struct SampledFiles: @unchecked Sendable {
        let results: UnsafeMutableBufferPointer<Result<DrumPerformance, Error>?>
        let samplers: [Sampler]
    }
}

/// choose-step's procedure, for `drummer choose-step` and `drummer train -o`: for each
/// checkpoint of a directory in the steps asked for, the files `drummer sample` writes with
/// these options, measured against the reference as `drummer stats` measures them, one line
/// each; then the rule's choice (or with `closest`, the checkpoint that misses the fewest
/// targets). Prints as it goes.
struct StepChooser {
    var checkpointDir: String
    let reference: String
    let quantize: Int?
    var fromStep: Int?
    var toStep: Int?
    var count: Int
    var notes: Int
    var seed: UInt64
    var structure: Bool
    var closest: Bool
    var temperature: String?
    /// The sampling settings of the files (temperatures as the last checkpoint's groups read them).
    private(set) var sampling = SamplingDefaults()
    /// The refusal says nothing was exported (a run that was asked to export).
    var nothingExported = false
    /// The reference as the first measurement read it (`reference` and `quantize` do not change).
    private var referenceSet: ReferenceSet?

    init(checkpointDir: String, reference: String, quantize: Int?, fromStep: Int?, toStep: Int?, count: Int, notes: Int,
         seed: UInt64, structure: Bool, closest: Bool, temperature: String? = nil) {
        self.checkpointDir = checkpointDir
        self.reference = reference
        self.quantize = quantize
        self.fromStep = fromStep
        self.toStep = toStep
        self.count = count
        self.notes = notes
        self.seed = seed
        self.structure = structure
        self.closest = closest
        self.temperature = temperature
    }

    /// The measured checkpoints and the index of the chosen one.
    mutating func choose() throws -> (rows: [StepFigures], chosen: Int) {
        let rows = try measure()
        return (rows, try decide(rows))
    }

    /// Every checkpoint in the steps asked for, sampled and measured (the table, printed as it
    /// goes); `sampling` holds the settings the files were drawn at.
    mutating func measure() throws -> [StepFigures] {
        let all = CheckpointDirectory(path: checkpointDir).list()
        let chosenRange = all.filter { ($0.step >= (fromStep ?? 0)) && ($0.step <= (toStep ?? Int.max)) }
        guard !chosenRange.isEmpty else {
            let steps = all.isEmpty ? "none" : all.map { String($0.step) }.joined(separator: ", ")
            throw CommandFailure("\(checkpointDir): no checkpoint (ckpt-STEP.h5) in the steps asked for (its checkpoints: \(steps))")
        }
        var request = StatsRequest(generated: [], reference: reference)
        request.quantize = quantize
        request.expectedHits = count * notes
        // A damaged checkpoint is refused before any is sampled (each takes minutes), naming it.
        for (_, path) in chosenRange {
            try ModelSource.checkRoom(path)
            try CheckpointReader.check(path: path)
        }
        let referenceSet = try loadedReference()

        print("choose-step: \(chosenRange.count) checkpoint\(chosenRange.count == 1 ? "" : "s") of \(checkpointDir), "
              + "\(count) file\(count == 1 ? "" : "s") × \(notes) hits each (seeds \(seed)…\(seed &+ UInt64(count - 1))), "
              + "against \(reference)" + (quantize.map { " (--quantize \($0))" } ?? ""))
        sampling = SamplingDefaults()
        if let temperature { print("temperature: \(temperature) (as sample --temperature)") }
        print("rule: \(StepRule.description)" + (structure ? "; " + StepRule.structureDescription : ""))
        print(ChooseStepCommand.header)
        // Each row out as it is measured (a minute apart), to a pipe or a log as to a terminal.
        fflush(nil)
        var rows: [StepFigures] = []
        for (step, path) in chosenRange {
            try ModelSource.checkRoom(path)
            let model = try CheckpointReader.loadModel(path: path)
            sampling.temperatures = try SampleCommand.temperatures(temperature, for: model.groups, defaults: [:]).resolved
            let performances: [DrumPerformance]
            do {
                performances = try ChooseStepCommand.sample(model, count: count, notes: notes, seed: seed, sampling: sampling)
            } catch let failure as StepSampleFailure {
                // A checkpoint that cannot play the files (a grid model gone silent) has no figures
                // and cannot be chosen; the others are still measured.
                print(ChooseStepCommand.pad(String(step), 4) + "  not measured: file \(failure.file) (seed \(failure.seed)): \(failure.reason)  ✗")
                fflush(nil)
                continue
            }
            let run = StatsRun.measure(performances, against: referenceSet, request: request)
            let figures = StepFigures(step: step, path: path, result: run.result)
            rows.append(figures)
            print(ChooseStepCommand.line(figures, structure: structure))
            fflush(nil)
        }
        return rows
    }

    /// The reference, read (and its left-out files warned of) on the first measurement only.
    private mutating func loadedReference() throws -> ReferenceSet {
        if let referenceSet { return referenceSet }
        var settings = HitExtractionSettings()
        settings.quantize = quantize
        let loaded = try ReferenceSet.load(path: reference, settings: settings, split: .training)
        for w in loaded.readingWarnings { Console.writeError(Data("warning: \(w)\n".utf8)) }
        referenceSet = loaded
        return loaded
    }

    /// The rule's choice among `rows`, printed; nil (nothing printed) when none meets the rule.
    func ruleChoice(_ rows: [StepFigures]) -> Int? {
        guard let b = StepRule.choose(rows, structure: structure) else { return nil }
        let qualified = rows.filter { StepRule.meets($0, structure: structure) }.count
        print("chosen: step \(rows[b].step) (\(rows[b].path)): "
              + (qualified == 1 ? "the only checkpoint that meets the rule"
                                : "the \(structure ? "widest margin" : "highest periodicity") of the \(qualified) checkpoints that meet the rule"))
        return b
    }

    /// The rule's choice among `rows`, else with `closest` the checkpoint that misses the fewest
    /// targets (printed); throws when neither.
    func decide(_ rows: [StepFigures]) throws -> Int {
        if let b = ruleChoice(rows) { return b }
        if closest, let b = StepRule.closest(rows) {
            let f = rows[b]
            print("no checkpoint meets the rule; closest: step \(f.step) (\(f.path)) misses \(f.missed.count) target"
                  + (f.missed.count == 1 ? "" : "s") + (f.missed.isEmpty ? " (only margins)" : ": " + f.missed.joined(separator: ", ")))
            return b
        }
        throw CommandFailure("no checkpoint meets the rule; nothing chosen" + (nothingExported ? ", nothing exported" : ""))
    }
}

/// A checkpoint's file `file` (of --count, sampled with `seed`) could not be played.
struct StepSampleFailure: Error {
    let file: Int
    let seed: UInt64
    let reason: String
}

