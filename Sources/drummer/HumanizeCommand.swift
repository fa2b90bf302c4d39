// `drummer humanize STIFF.mid -o OUT.mid`: keeps every hit's drum and place of a quantized
// beat; the model draws each hit's velocity and micro-timing (Sample/Humanizer.swift).
import ArgumentParser
import DrummerCore
import FileOutput
import Foundation
import MIDIParse
import ModelFiles
import Report
import Sample

struct HumanizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "humanize",
        abstract: "Give a stiff (quantized) drum beat a drummer's velocity and micro-timing, drawn by a model.",
        discussion: """
            Every hit keeps its drum (note) and its place in the bar; the model draws each hit's \
            velocity and how far it sits before or after its place. A grid model (such as the \
            shipped groove; 4/4 beats) reads the beat 16th by 16th and draws, for every drum hit in \
            a 16th, a velocity and an offset from the grid line (within half a 16th); hits of one \
            drum within one 16th (a flam, a roll) share its velocity and keep their spacing, and no \
            hit lands on another of its note. A hit off the 16th grid (a triplet, a swung 8th, a \
            32nd half a 16th after a line) is read on its nearest 16th, and its timing drawn from \
            there: the feel of 16ths, said on a note with how many hits. A note with no drum class \
            (outside the model's kit) is kept as written, and counted on a note. The output holds \
            the drums alone, on channel 10, and keeps the input's length (a hit drawn late past the \
            end ends the file at that hit's note), tempo changes (unless --bpm) and meters, at the \
            PPQ of the model. The same --seed gives the same file. Repeated hits of one drum at one \
            onset (after --quantize) are merged into one, and said so.
            """)

    @Argument(help: "The beat to humanize: a MIDI file (drums on channel 10, or on every channel when it has none there; --channel picks one).")
    var input: String

    @Option(name: .shortAndLong, help: "The MIDI file to write (- for standard output).")
    var output: String

    @Option(help: "Model directory, the name of an installed one (found from any folder: see docs/install.md), a training checkpoint (.h5), or a checkpoint directory (its best checkpoint); groove is the shipped model.")
    var model: String = ModelLocator.defaultModel

    @Option(parsing: .unconditional, help: "Temperatures of the velocity and timing draws (below 1 closer to the model's likeliest touch, above 1 looser): one number for both, or velocity=T and offset=T pairs (velocity=0.9,offset=1.1), each above 0 and at most 100; a group not named keeps the model's (default: the temperatures the model carries in model.json's sampling, else 1).")
    var temperature: String?

    @Option(help: "For a model with a style input: the style to play the beat in, one of the model's, or a part of their names (\"drummer5\": the likeliest of the model's drummer5 styles); default: the one under which the model finds the beat likeliest.")
    var style: String?

    @Option(parsing: .unconditional, help: "Random seed (default: a random one, printed).")
    var seed: UInt64?

    @Option(parsing: .unconditional, help: "Tempo of the output in BPM, 4 to 1000, throughout (default: the input's tempo and its changes, else 120).")
    var bpm: Double?

    @Option(parsing: .unconditional, help: "Snap the input's onsets to a grid of this many ticks (at the model's PPQ; 120 = 16ths at 480) before humanizing (default: as written).")
    var quantize: Int?

    @Option(parsing: .unconditional, help: "Channel of the drums: auto (MIDI channel 10, index 9, if the file has notes there, else every channel), all, or a channel index 0-15 (MIDI channels 1-16 counted from 0: 9 is channel 10).")
    var channel = "auto"

    func validate() throws {
        _ = try StatsCommand.channel(channel)
        try StatsCommand.checkQuantize(quantize)
        if let t = temperature { _ = try Self.temperatureSetting(t) }
        if let b = bpm, !(b.isFinite && b >= 4 && b <= 1000) { throw ValidationError("--bpm must be between 4 and 1000, got \(b)") }
    }

    /// The output groups humanize draws: a hit's velocity and its timing (offset).
    static let drawnGroups = ["velocity", "offset"]

    /// --temperature's text: sample's syntax, over the groups humanize draws, each above 0.
    static func temperatureSetting(_ text: String) throws -> TemperatureSetting {
        let setting = try SampleCommand.setting(text)
        if let name = setting.groups.keys.sorted().first(where: { !drawnGroups.contains($0) }) {
            throw ValidationError("--temperature names \(name): humanize keeps the beat's hits and draws only velocity and offset")
        }
        if let t = setting.all, t == 0 { throw ValidationError("--temperature must be above 0 (humanize draws), got \(t)") }
        if let name = setting.groups.keys.sorted().first(where: { setting.groups[$0] == 0 }) {
            throw ValidationError("--temperature \(name) must be above 0 (humanize draws), got \(setting.groups[name]!)")
        }
        return setting
    }

    func run() throws {
        InterruptCleanup.install()
        BLASRuntime.setThreads(1)
        let destination = try AtomicOutput.resolve(output, options: .userFile)
        let status = Console.statusLines(besideOutputTo: destination)
        let path = try ModelLocator.resolve(model)
        try InputOverlap.check(output: output, inputs: [CommandInput(input, role: "the beat to humanize")] + ModelSource.inputs(path))
        // A model directory, a training checkpoint, or a checkpoint directory's best, as sample takes.
        let loaded = try ModelSource.load(path, step: nil)
        if loaded.origin != model { status("model: \(loaded.origin)") }
        let ppq = loaded.groups.ticksPerQuarter
        var settings = HitExtractionSettings()
        settings.ppq = ppq
        settings.quantize = quantize
        settings.channel = try StatsCommand.channel(channel)
        let hits = try FileHits.read(path: input, settings: settings)
        guard hits.count > 0 else {
            throw CommandFailure("\(input): no hits (NOTE ON with velocity > 0 not found\(settings.channel.givenIndexNote))")
        }
        if channel == "auto", hits.channelUsed == "all" {
            status("note: \(input) has no notes on channel 10: every channel is read as drums (--channel picks one)")
        }
        // The model reads every step of the beat, empty bars too: a refusal now, not minutes of silence.
        try hits.checkBarSpan(path: input)
        // The tempo that stands at tick 0 (of several there, the last, as a player reads them).
        let tempo = bpm ?? hits.bpm(at: 0) ?? 120
        if bpm == nil { try SampleCommand.checkTempo(tempo, of: input) }
        let (beat, dropped) = Humanizer.merged((0..<hits.count).map {
            BeatHit(note: hits.notes[$0], onset: hits.ticks[$0], velocity: hits.velocities[$0],
                    tickInBar: hits.tickInBar[$0], barTicks: hits.barTicks[$0])
        })
        if dropped > 0 { status("note: \(dropped) repeated hit(s) of one drum at one onset merged") }
        // What the model reads otherwise than written: hits off the 16th grid (farther from a
        // line than stats' default tolerance, an eighth of a 16th), notes outside its kit.
        if let T = loaded.groups.grid?.ticksPerStep, T > 0 {
            let tolerance = StatsRequest.defaultTolerance * Double(T)
            let off = beat.filter { h in let o = h.tickInBar % T; return Double(min(o, T - o)) > tolerance }.count
            if off > 0 {
                status("note: \(off) of \(beat.count) hits lie off the 16th grid (more than an eighth of a 16th from a line: "
                       + "triplets, swing or 32nds): each is read on its nearest 16th, its timing drawn from there")
            }
        }
        let classless = beat.filter { DrumClasses.of(note: $0.note) == nil }
        if !classless.isEmpty {
            status("note: \(classless.count) hit(s) of notes with no drum class (\(Set(classless.map(\.note)).sorted().map(String.init).joined(separator: ", "))) kept as written")
        }
        let s = seed ?? UInt64.random(in: 0...UInt64(UInt32.max))
        var rng = SeededRNG(seed: s)
        let humanizer: Humanizer
        do { humanizer = try Humanizer(weights: loaded.weights, groups: loaded.groups) } catch let e as HumanizeError {
            throw CommandFailure("\(loaded.origin): \(e)")
        }
        // --temperature's groups over the model's own sampling temperatures (velocity, and the
        // timing group, offset), else 1.
        let setting = try temperature.map(Self.temperatureSetting)
        let chosen = { (group: String) in setting?.all ?? setting?.groups[group] }
        // Humanize draws; a model chosen at temperature 0 (always the most likely) says so in
        // its model.json, which is the model's to fix or --temperature's to override.
        if let group = Self.drawnGroups.first(where: { chosen($0) == nil && loaded.sampling.temperatures[$0] == 0 }) {
            throw CommandFailure("\(model): model.json's sampling gives \(group) temperature 0 (always the most likely), and humanize draws: give --temperature (1: the model's own distribution)")
        }
        var options = HumanizeOptions(temperature: 1)
        options.velocityTemperature = chosen("velocity") ?? loaded.sampling.temperatures["velocity"]
        options.timingTemperature = chosen("offset") ?? loaded.sampling.temperatures["offset"]
        // --style (refused for a model without a style input), else the likeliest for the beat.
        let given = try style.map { try SampleCommand.style($0, in: loaded.groups, model: model) }
        var styleNote = ""
        let out: [BeatHit]
        do {
            if let names = loaded.groups.grid?.styles?.names {
                // A --style that stands for several styles: the likeliest of them.
                options.style = try given.flatMap { $0.count == 1 ? $0[0] : nil } ?? humanizer.likeliestStyle(beat, among: given)
                if let s = options.style { styleNote = ", style \(names[s])" + (given?.count == 1 ? "" : " (likeliest for the beat)") }
            }
            out = try humanizer.humanize(beat, options: options, rng: &rng)
        } catch let e as HumanizeError {
            // What the model cannot read in the beat (a bar not in 4/4, a drum it does not know).
            throw CommandFailure("\(input): \(e)")
        }
        var previous = 0
        // In onset order (a grid model may move a hit of one class past another's in its 16th).
        let ordered = out.enumerated().sorted { ($0.element.onset, $0.offset) < ($1.element.onset, $1.offset) }.map(\.element)
        let drumHits = ordered.map { h -> DrumHit in
            defer { previous = h.onset }
            return DrumHit(note: h.note, delta: h.onset - previous, velocity: h.velocity)
        }
        // The beat's length, meters and tempo changes, where they were (the tempo unless --bpm):
        // its bar lines, its pickup and the rest after its last hit stay where the beat has
        // them, so a loop of N bars stays N bars long. (A hit drawn late past the beat's end
        // ends the file at its note's end.)
        let lastOut = ordered.last?.onset ?? 0
        let end = min(hits.endTick, DrumMIDI.longestTimeLine)
        let through = max(end, lastOut, hits.ticks.last ?? 0), meters = hits.meters(through: through)
        var midi = DrumMIDIOptions(model: loaded.groups, bpm: tempo)
        midi.meter = Meter(numerator: meters.first.numerator, denominator: meters.first.denominator) ?? .common
        midi.laterMeters = meters.later
        if bpm == nil { midi.laterTempos = hits.laterTempos.filter { $0.tick <= through } }
        if end > lastOut { midi.endTick = end }
        try DrumMIDI.write(drumHits, to: output, options: midi)
        let moved = zip(beat, out).filter { $0.onset != $1.onset }.count
        status("humanized \(input): \(out.count) hits (\(moved) moved, velocities \(out.map(\.velocity).min()!)–\(out.map(\.velocity).max()!)), seed \(s)\(styleNote), to \(output)")
    }
}
