// `drummer continuation MODEL --reference DIR`: how a grid model carries on from the first bars
// of the reference files, against how their drummers carried on (Report/Continuation.swift).
// Each file's model side is what `drummer sample MODEL --primer FILE --primer-bars P --bars N
// --seed S+k` plays after its first P bars (sampled in memory, the style the model finds
// likeliest for the primer), read as `drummer stats` reads bars.
import ArgumentParser
import DrummerCore
import FileOutput
import Foundation
import MIDIParse
import ModelFiles
import Report
import Sample

struct ContinuationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "continuation",
        abstract: "How a grid model carries on from the first bars of the reference files, against their drummers.",
        discussion: """
            For each of the first --count reference files in 4/4 with --primer-bars + --bars bars or \
            more: its first --primer-bars bars are the primer; the drummer's continuation is the \
            file's next --bars bars, the model's the --bars bars it plays after that primer (file k, \
            counted from 0, with seed --seed + k, as `drummer sample --primer` of those bars alone plays them, at its temperatures). Each bar after the \
            primer is read as the set of (drum class, sixteenth) it hits, as `drummer stats` reads \
            bars; its similarity to the primer is the Jaccard index with the primer's bar it is \
            most like, and it repeats the primer when that is 0.8 or more. Prints both sides' mean \
            similarity and repeat share, and the model's as a share of the drummers': a player that \
            answers a musician should be within 10% of them on both.
            """)

    @Argument(help: ArgumentHelp("A grid model: a model directory, an installed model's name (groove), or a checkpoint.", valueName: "model"))
    var model: String = ModelLocator.defaultModel

    @Option(help: ArgumentHelp("A folder of MIDI files, one MIDI file or a convert-midi dataset (as for stats).", valueName: "data-or-midi-dir"))
    var reference: String

    @Option(help: "Rows of a dataset reference, as stats --split: training (the dataset directory), validation (its validation/: files the model did not train on), or all (default training).")
    var split: String?

    @Option(parsing: .unconditional, help: "Snap MIDI onsets to a grid of this many ticks, as stats --quantize (default: a dataset reference's own, else none; 30 for the Groove corpus as MIDI files, as models/groove was trained).")
    var quantize: Int?

    @Option(parsing: .unconditional, help: "Files to measure (the first in the reference's order that are long enough).")
    var count = 100

    @Option(name: .customLong("primer-bars"), parsing: .unconditional, help: "Bars of each file that prime the model.")
    var primerBars = 4

    @Option(parsing: .unconditional, help: "Bars after the primer to compare.")
    var bars = 8

    @Option(parsing: .unconditional, help: "Temperature, as sample --temperature takes it (default: as sample --primer plays, the temperatures model.json carries, else 1, with a grid model's hits at 0.8).")
    var temperature: String?

    @Option(parsing: .unconditional, help: "Seed of the first file (file k, counted from 0, uses seed + k, as sample --count does).")
    var seed: UInt64 = 1

    func validate() throws {
        try StatsCommand.checkQuantize(quantize)
        try StatsCommand.checkSplit(split, reference: reference)
        guard (1...10_000).contains(count) else { throw ValidationError("--count must be between 1 and 10000, got \(count)") }
        try SampleCommand.checkSeeds(seed, count: count)
        guard (1...64).contains(primerBars) else { throw ValidationError("--primer-bars must be between 1 and 64, got \(primerBars)") }
        guard (1...64).contains(bars) else { throw ValidationError("--bars must be between 1 and 64, got \(bars)") }
    }

    func run() throws {
        InterruptCleanup.install()
        BLASRuntime.setThreads(1)
        let loaded = try ModelSource.load(try ModelLocator.resolve(model), step: nil)
        guard let grid = loaded.groups.grid else {
            throw CommandFailure("\(model) is a model of the 2017 layout: continuation measures a grid model's bars")
        }
        let ppq = loaded.groups.ticksPerQuarter, barTicks = 4 * ppq
        var settings = HitExtractionSettings()
        settings.ppq = ppq
        settings.quantize = quantize
        let referenceSet = try ReferenceSet.load(path: reference, settings: settings,
                                                 split: split.flatMap(DatasetSplit.init(rawValue:)) ?? .training,
                                                 splitOption: "--split")
        // What was recovered reading it and which files were left out, as stats and choose-step say.
        for w in referenceSet.readingWarnings { Console.writeError(Data("warning: \(w)\n".utf8)) }
        if referenceSet.ticksPerQuarter != ppq {
            throw CommandFailure("--reference \(reference) is at \(referenceSet.ticksPerQuarter) PPQ; the model reads \(ppq)")
        }
        let sampler = try Sampler(weights: loaded.weights, groups: loaded.groups)
        // The temperatures `drummer sample` plays with by default: the ones model.json carries.
        let temperatures = try SampleCommand.temperatures(temperature, for: loaded.groups, defaults: loaded.sampling.temperatures,
                                                             continuing: true).resolved
        var continuing = SamplingOptions(temperature: 1)
        continuing.set(temperatures)
        var model = ContinuationSums(), drummer = ContinuationSums()
        var measured = 0, tooShort = 0
        for track in referenceSet.tracks where measured < count {
            // The file's bars from its first hit's bar (every hit in 4/4, or the file is left out).
            guard let (first, fileBars) = BarStructure.bars(track), fileBars.count >= primerBars + bars,
                  let slots = track.countedBars else {
                tooShort += 1
                continue
            }
            let primerSets = fileBars[0..<primerBars].map(\.set)
            drummer.add(primer: primerSets, after: fileBars[primerBars..<(primerBars + bars)].map(\.set))
            // The primer: the hits of its first bars, as `sample --primer` reads them (a pickup
            // counted as the end of the first bar, as the bars above are).
            let primer = track.notes.indices.filter { slots[$0].bar - first < primerBars }.map { i in
                BeatHit(note: track.notes[i], onset: track.onsets[i], velocity: track.velocities?[i] ?? 100,
                        tickInBar: slots[i].tickInBar, barTicks: slots[i].barTicks)
            }
            let gridPrimer: GridPrimer
            do { gridPrimer = try GridPrimer(beat: primer, group: grid) } catch {
                throw CommandFailure("\(track.path): \(error)")
            }
            var rng = SeededRNG(seed: seed &+ UInt64(measured))
            var options = continuing
            // As `sample --primer`: the file's first number draws a style, the one played is the
            // likeliest for the primer.
            let drawn = sampler.drawStyle(rng: &rng)
            options.style = drawn == nil ? nil : try sampler.likeliestStyle(primer) ?? drawn
            // Onsets from the primer's first bar line; generation ends at the last bar's end.
            let end = (primerBars + bars) * barTicks
            var onset = gridPrimer.lastOnset, notes: [Int] = [], onsets: [Int] = []
            do {
                try sampler.generate(count: SampleCommand.maxNotes, options: options, gridPrimer: gridPrimer, rng: &rng) { h in
                    onset += h.hit.delta
                    if onset >= end { throw SampleCommand.BarsWritten() }
                    // As `sample --bars`: a hit of the step on the end's bar line played early
                    // is the next bar's.
                    guard h.drawn(before: end, soundingAt: onset) else { return }
                    notes.append(h.hit.note)
                    onsets.append(onset)
                }
            } catch is SampleCommand.BarsWritten {}
            model.add(primer: primerSets, after: BarStructure.barSets(notes: notes, onsets: onsets, ticksPerQuarter: ppq,
                                                                       bars: primerBars..<(primerBars + bars)))
            measured += 1
        }
        guard measured > 0 else {
            throw CommandFailure("--reference \(reference): no file in 4/4 with \(primerBars + bars) bars or more")
        }
        print("continuation: \(measured) file\(measured == 1 ? "" : "s") of \(reference)"
              + (tooShort > 0 ? " (\(tooShort) passed over: not all 4/4, or shorter than \(primerBars + bars) bars)" : "")
              + ", the first \(primerBars) bar(s) of each as the primer, the \(bars) after; seeds \(seed)…\(seed &+ UInt64(measured - 1))"
              + "; temperature " + TemperatureSetting.describe(temperatures))
        print("figure                                  model   drummers   model / drummers   target")
        func row(_ name: String, _ m: Double?, _ d: Double?, percent: Bool) -> String {
            let f = { (x: Double?) in x.map { percent ? String(format: "%.1f%%", $0 * 100) : String(format: "%.3f", $0) } ?? "n/a" }
            let ratio = m.flatMap { m in d.flatMap { d in d > 0 ? m / d : nil } }
            let meets = ratio.map { abs($0 - 1) <= 0.1 ? "✓" : "✗" } ?? ""
            return name.padding(toLength: 38, withPad: " ", startingAt: 0) + ChooseStepCommand.pad(f(m), 7)
                + ChooseStepCommand.pad(f(d), 11) + ChooseStepCommand.pad(ratio.map { String(format: "%.0f%%", $0 * 100) } ?? "n/a", 19)
                + "   within 10%  " + meets
        }
        print(row("similarity to the primer (best bar)", model.similarity, drummer.similarity, percent: false))
        print(row("bars repeating a primer bar (≥ 0.8)", model.repeatShare, drummer.repeatShare, percent: true))
    }
}
