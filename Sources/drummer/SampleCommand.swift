// `drummer sample`: generate drum MIDI files from an exported model.
import ArgumentParser
import Checkpoints
import DrummerCore
import Foundation
import MIDIParse
import Report
import Sample
import FileOutput
import ModelFiles

struct SampleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample",
        abstract: "Generate drum MIDI files from a model (an exported model directory or a training checkpoint).",
        discussion: """
            Each file: format 0, at the model's PPQ (480 for the 2017 layout; a primer is read at it \
            too), a tempo event, a 4/4 time signature, notes on the General MIDI drum channel \
            (channel 10, index 9), each one a General MIDI kit sounds. A grid model (the shipped \
            groove) plays 16th-note bars with each hit's velocity and timing; a model of the 2017 \
            layout plays (note, delta) events at velocity 100. The model's memory (its LSTM state) \
            starts at small random values drawn from the seed; \
            without a primer a 2017-layout model's first input event is drawn uniformly from its \
            vocabulary. The same seed, model and options give the same files; with --count K, file k \
            uses seed S + k - 1. Exactly -n hits are written: a note already struck at the current \
            onset is never drawn again at that onset.

            --temperature T applies to every output group; --temperature hits=0.9 sets groups one by \
            one (the others stay at the model's), so that a safer pattern keeps the model's touch. A \
            model directory may carry the temperatures it was chosen at (model.json "sampling", \
            written by choose-step --temperature or export --temperature); they are the default, and \
            --temperature 1 samples the model's own distribution. After a --primer a grid model's \
            hits draw at 0.8 unless --temperature sets them: at 1 it carries on a beat less closely \
            than drummers do, at 0.8 as closely (`drummer continuation` measures it).

            Outputs: -o - (or /dev/stdout) writes the MIDI bytes to standard output (the status \
            lines then go to standard error); a character device or FIFO (-o /dev/null, a named \
            pipe) is written through, never replaced; a symbolic link is followed and its target \
            replaced; an existing file is replaced atomically; a directory, the model, the primer \
            or a path inside the model directory is refused. With --count K, every file (and \
            --wav's) is checked before sampling and all are put in place at the end: a failure \
            leaves none of them written. Ctrl-C removes the files being written and exits with \
            status 130.
            """)

    @Argument(help: ArgumentHelp("Model directory (Wx.bin, Wy.bin, model.json) as `drummer export` writes it, the name of an installed one (found from any folder: see docs/install.md), a training checkpoint (.h5), or a checkpoint directory (see --step); groove is the shipped model.",
                                 valueName: "model"))
    var model: String = ModelLocator.defaultModel

    @Option(parsing: .unconditional, help: "With a checkpoint directory: which checkpoint, best (lowest validation loss), latest or a step number (default best).", transform: CheckpointChoice.argument)
    var step: CheckpointChoice?

    @Option(name: [.customShort("n"), .customLong("notes")], parsing: .unconditional, help: "Hits to generate per file, 1 to 10,000,000 (default 1000; see --bars).")
    var notesOption: Int?

    @Option(parsing: .unconditional, help: "Generate whole 4/4 bars (1 to 100,000) instead of -n hits: the file ends at the bar line N bars after the one where generation starts; after a grid model's --primer, N bars after the primer's last bar (the rest of that bar is played too).")
    var bars: Int?

    @Option(name: .customLong("primer-bars"), parsing: .unconditional, help: "Use only the primer's last this many bars, empty ones included (1 to 10000; default 2).")
    var primerBarsOption: Int?

    /// --primer-bars, 2 unless given.
    var primerBars: Int { primerBarsOption ?? 2 }

    @Flag(name: .customLong("keep-primer"), help: "Write the primer's hits (its last --primer-bars bars) at the start of the output, at the tempos they were recorded at (unless --bpm).")
    var keepPrimer = false

    @Option(parsing: .unconditional, help: "Random seed (default: a random one, printed so the run can be repeated).")
    var seed: UInt64?

    @Option(parsing: .unconditional, help: "Temperature (below 1 plainer and steadier, above 1 busier and looser): one number for every output group, or group=T pairs (a grid model: hits, which drums play in each 16th; velocity; offset, the timing; and fills, the hits in bars 4 and 8 of each phrase; as hits=0.9,velocity=1.2; the 2017 layout: note, tick); each from 0 to 100: 1 = the model's distribution, lower = safer, 0 = always the most likely (default: the temperatures model.json carries, else 1; a grid model's hits 0.8 after a --primer).")
    var temperature: String?

    @Option(help: "For a model with a style input (trained with --styles): the style every file plays, one of the model's (drummer report --model lists them), or a part of their names (\"latin\" or \"drummer5\" for a model of \"drummer5-latin\"…: drawn per file among those that have it); default: drawn per file in proportion to the training data's styles, or after --primer the one under which the model finds the primer likeliest.")
    var style: String?

    /// The indices of the styles of `groups` that `name` stands for (GridStyles.indices(matching:);
    /// a usage error naming them when it is none).
    static func style(_ name: String, in groups: ModelGroups, model: String) throws -> [Int] {
        guard let styles = groups.grid?.styles else {
            throw ValidationError("--style needs a model with a style input (trained with --styles); \(model) has none")
        }
        // A style no training file had (an empty "other") plays what the model never learned.
        let trained = styles.trained
        let found = styles.indices(matching: name).filter(trained.contains)
        guard !found.isEmpty else {
            let untrained = styles.indices(matching: name).isEmpty ? "" : " (no training file was \(name))"
            throw ValidationError("--style \(name): \(model) knows the styles " + trained.map { styles.names[$0] }.joined(separator: ", ") + untrained)
        }
        return found
    }

    /// --temperature parsed (its errors are usage errors).
    /// A MIDI file's first tempo, which the output takes when no --bpm is given, refused when
    /// no tempo event can hold it (a tempo of 0 µs per quarter note reads as inf BPM).
    static func checkTempo(_ bpm: Double, of file: String) throws {
        guard DrumMIDI.canWrite(bpm: bpm) else {
            throw CommandFailure("\(file): its first tempo, \(bpm) BPM, is outside what a MIDI file can hold (3.58 to 60,000,000 BPM): give --bpm")
        }
    }

    static func setting(_ text: String) throws -> TemperatureSetting {
        do { return try TemperatureSetting(parsing: text) } catch { throw ValidationError(error.description) }
    }

    /// --temperature's `text` (nil: not given) over a model's `defaults`, checked against the
    /// model's groups (its errors are usage errors): the setting and each group's temperature.
    /// File k's seed is S + k − 1 (here and in choose-step and continuation): past the largest
    /// seed it would wrap to 0 unsaid.
    static func checkSeeds(_ seed: UInt64, count: Int) throws {
        if seed > UInt64.max - UInt64(max(0, count - 1)) {
            throw ValidationError("--seed \(seed) with --count \(count): the files' seeds S … S + \(count - 1) must stay within 0 … \(UInt64.max)")
        }
    }

    /// `continuing`: the model carries on a beat it heard (TemperatureSetting.continuationHits).
    static func temperatures(_ text: String?, for groups: ModelGroups, defaults: [String: Float], continuing: Bool = false) throws
        -> (setting: TemperatureSetting, resolved: [String: Float])
    {
        let setting = try text.map(Self.setting) ?? TemperatureSetting()
        do { try setting.check(for: groups) } catch { throw ValidationError(error.description) }
        return (setting, setting.resolved(for: groups, defaults: defaults, continuing: continuing))
    }

    @Option(help: "MIDI file whose hits are run through the model first to set its state (not repeated in the output unless --keep-primer). A grid model's file starts at the bar line of the primer's last bar, whose rest it plays: placed there in a sequencer, it carries on where the primer stops (that bar is silent when the primer fills it).")
    var primer: String?

    @Option(parsing: .unconditional, help: "Tempo of the output, in beats (quarter notes) per minute, 4 to 1000 (default: the tempo the primer ends in, else 120).")
    var bpm: Double?

    @Option(parsing: .unconditional, help: "Number of files, 1 to 10000: with K > 1, -o NAME.mid writes NAME-1.mid ... NAME-K.mid.")
    var count: Int = 1

    @Option(name: [.customShort("o"), .customLong("output")], help: "Output MIDI file; - for standard output.")
    var output: String = "generated.mid"

    @Option(help: "Also render each MIDI file to this WAV file through FluidSynth and a General MIDI soundfont (skipped with a message when they are not installed).")
    var wav: String?

    @Option(help: "Soundfont for --wav (default: Debian's fluid-soundfont-gm).")
    var soundfont: String?

    @Flag(help: "Print one JSON object instead: files, each with path, wav (with --wav), seed, style (for a model with a style input), events ([note, delta ticks] as written: the first from the file's start) and velocities (one per event).")
    var json = false

    static let maxNotes = 10_000_000

    /// -n, 1000 unless given.
    var notes: Int { notesOption ?? 1000 }

    /// Ends generation once --bars are written.
    struct BarsWritten: Error {}

    func validate() throws {
        guard !model.isEmpty else { throw ValidationError("MODEL must not be empty") }
        if let n = notesOption, !(1...Self.maxNotes).contains(n) {
            throw ValidationError("-n must be between 1 and \(Self.maxNotes), got \(n)")
        }
        if let b = bars {
            guard (1...100_000).contains(b) else { throw ValidationError("--bars must be between 1 and 100000, got \(b)") }
            guard notesOption == nil else { throw ValidationError("-n and --bars both say how much to generate: give one") }
        }
        // A grid model steps through every primer bar, empty ones too: no more than it reads of any file.
        guard (1...FileHits.maximumBarsRead).contains(primerBars) else {
            throw ValidationError("--primer-bars must be between 1 and \(FileHits.maximumBarsRead), got \(primerBars)")
        }
        if keepPrimer, primer == nil { throw ValidationError("--keep-primer needs --primer") }
        if primerBarsOption != nil, primer == nil { throw ValidationError("--primer-bars needs --primer") }
        if let t = temperature { _ = try Self.setting(t) }
        if let bpm { guard bpm.isFinite, bpm >= 4, bpm <= 1000 else { throw ValidationError("--bpm must be between 4 and 1000, got \(bpm)") } }
        guard (1...10_000).contains(count) else { throw ValidationError("--count must be between 1 and 10000, got \(count)") }
        if let seed { try Self.checkSeeds(seed, count: count) }
        guard !output.isEmpty, !output.hasSuffix("/") else { throw ValidationError("-o must name a file, got \"\(output)\"") }
        if output == "-" {
            guard count == 1 else { throw ValidationError("-o - writes one file to standard output: --count must be 1") }
            guard !json else { throw ValidationError("--json prints to standard output, where -o - writes the MIDI file; name a file with -o") }
        }
        if wav == "-" {
            guard count == 1 else { throw ValidationError("--wav - writes one file to standard output: --count must be 1") }
            guard output != "-" else { throw ValidationError("-o - and --wav - cannot both write to standard output") }
            guard !json else { throw ValidationError("--json prints to standard output, where --wav - writes the audio; name a file with --wav") }
        }
        if let p = primer, p.isEmpty { throw ValidationError("--primer must name a MIDI file") }
        if let w = wav, w.isEmpty || w.hasSuffix("/") { throw ValidationError("--wav must name a file") }
        if soundfont != nil, wav == nil { throw ValidationError("--soundfont is used with --wav") }
    }

    func run() throws {
        InterruptCleanup.install()
        // These GEMVs are small: one BLAS thread is several times faster than two (bench sample).
        BLASRuntime.setThreads(1)
        // Where the files go, checked before any sampling.
        let destination = try AtomicOutput.resolve(Self.outputPath(output, index: 1, of: count), options: .userFile)
        let wavDestination = try wav.map { try AtomicOutput.resolve(Self.outputPath($0, index: 1, of: count), options: .userFile) }
        if count > 1 {
            // NAME-1.mid ... are files: a device, FIFO or descriptor cannot be numbered.
            for (given, flag) in [(output, "-o")] + (wav.map { [($0, "--wav")] } ?? []) {
                if let d = try? AtomicOutput.resolve(given, options: .userFile), !d.isRegularFile {
                    throw OutputError(path: given, message: "not a regular file: --count \(count) writes "
                        + "\(count) files named after \(flag) (NAME-1 ... NAME-\(count)); name a file")
                }
            }
            for (given, d) in [(output, destination), (wav ?? "", wavDestination ?? destination)] where !d.isRegularFile {
                throw OutputError(path: Self.outputPath(given, index: 1, of: count),
                                  message: "not a regular file (--count \(count) writes \(count) files named after \(given))")
            }
        }
        let toStandardOutput = destination.isStandardOutput || wavDestination?.isStandardOutput == true
        if toStandardOutput, json {
            throw OutputError(path: output, message: "is standard output, where --json prints; name a file")
        }
        // Status lines go to standard error when a file goes to standard output.
        let status = Console.statusLines(toStandardError: toStandardOutput)
        let modelPath = try ModelLocator.resolve(model)
        // Every file of the run (and its --wav file) is checked before the model is read, and
        // prepared before any sampling; all are put in place at the end: a failure leaves none
        // of them written.
        let inputs = ModelSource.inputs(modelPath) + [CommandInput(primer ?? "", role: "the primer"),
                                                      CommandInput(soundfont ?? "", role: "the soundfont")]
        let paths = (1...count).map { k in
            [Self.outputPath(output, index: k, of: count)] + (wav.map { [Self.outputPath($0, index: k, of: count)] } ?? [])
        }
        for path in paths.joined() {
            _ = try AtomicOutput.resolve(path, options: .userFile)
            try InputOverlap.check(output: path, inputs: inputs)
        }
        let loaded = try ModelSource.load(modelPath, step: step)
        if loaded.origin != model, !json { status("model: \(loaded.origin)") }
        // Files are written, and primers read, at the model's PPQ, in 4/4 bars.
        let ppq = loaded.groups.ticksPerQuarter
        let barLength = Meter.common.barTicks(ppq: ppq)
        var primerEvents: [SampledEvent] = []
        var primerHits: [DrumHit] = []
        var primerTempo: Double?
        // --keep-primer: the kept part's tempo at its start (a grid primer's first bar line, the
        // 2017 layout's first kept hit) and its changes within it, at the output's ticks (it
        // plays as recorded).
        var keptTempo: (bpm: Double?, later: [MIDITempoChange])?
        var startTick = 0
        var gridPrimer: GridPrimer?
        // The whole primer as a beat (a style model plays the style it finds likeliest for it),
        // and the bars of it read.
        var primerBeat: [BeatHit] = [], primerRead: [BeatHit] = []
        if let p = primer, let grid = loaded.groups.grid {
            // A grid model reads the primer's last bars as 16th-note steps.
            var settings = HitExtractionSettings()
            settings.ppq = ppq
            let hits = try FileHits.read(path: p, settings: settings)
            guard hits.count > 0 else { throw CommandFailure("--primer \(p): no hits (NOTE ON with velocity > 0 not found)") }
            if hits.channelUsed == "all", !json {
                status("note: --primer \(p) has no notes on channel 10: every channel is read as drums")
            }
            let (whole, beat) = GridPrimer.lastBars(primerBars, of: hits, barTicks: barLength)
            (primerBeat, primerRead) = (whole, beat)
            // GridPrimer counts the bars read (a short bar mid-file that starts them is a pickup
            // of their own): where in a bar the primer starts and ends is its to say.
            let g: GridPrimer
            do { g = try GridPrimer(beat: beat, group: grid) } catch {
                throw CommandFailure("--primer \(p): \(error)")
            }
            gridPrimer = g
            // The tempo the primer ends in: the bars it carries on from.
            primerTempo = hits.bpm(at: beat.last!.onset)
            startTick = g.lastOnset % barLength
            if keepPrimer {
                var previous = beat[0].onset
                primerHits = beat.map { h in
                    defer { previous = h.onset }
                    return DrumHit(note: GeneralMIDIDrums.audible(note: h.note), delta: h.onset - previous, velocity: h.velocity)
                }
                startTick = g.firstOnset
                // The output's tick 0 is the first kept bar's line (before the file's start for
                // a pickup); the kept bars carry on to the tempo the primer ends in.
                keptTempo = hits.tempos(from: beat[0].onset - g.firstOnset, through: beat[beat.count - 1].onset)
            }
            var line = "primer \(p): \(beat.count) hits"
            if beat.count < hits.count { line += " (its last \(primerBars) bar(s) of \(hits.count) hits)" }
            if g.unmapped > 0 { line += ", \(g.unmapped) of notes outside the 9 drum classes not read" }
            if !json { status(line) }
        } else if let p = primer {
            var settings = HitExtractionSettings()
            settings.ppq = ppq
            let whole = try Primer.load(path: p, vocabulary: loaded.vocabulary, settings: settings)
            let pr = whole.lastBars(primerBars)
            primerTempo = pr.bpm
            for w in pr.warnings { Console.writeError(Data("warning: \(w)\n".utf8)) }
            primerEvents = pr.events
            if keepPrimer, !pr.hits.isEmpty {
                // The file starts with the primer's first kept hit; the kept hits play as
                // recorded (their tempo changes where they were).
                primerHits = pr.hits
                primerHits[0].delta = 0
                keptTempo = pr.keptTempo
            }
            var line = "primer \(p): \(pr.events.count) hits"
            if pr.events.count < whole.events.count { line += " (its last \(primerBars) bar(s) of \(whole.events.count) hits)" }
            line += pr.channel.map { " (channel \($0 + 1))" } ?? " (all channels)"
            if pr.mappedTicks > 0 { line += ", \(pr.mappedTicks) deltas mapped to the nearest vocabulary tick" }
            if !json { status(line) }
        }
        let baseSeed = seed ?? UInt64.random(in: 0...UInt64(UInt32.max))
        let sampler = try Sampler(weights: loaded.weights, groups: loaded.groups)
        let (setting, temperatures) = try Self.temperatures(temperature, for: loaded.groups, defaults: loaded.sampling.temperatures,
                                                            continuing: gridPrimer != nil)
        var options = SamplingOptions(temperature: 1)
        options.set(temperatures)
        let styleNames = loaded.groups.grid?.styles?.names
        // --style, else with a primer the style the model finds likeliest for it (its first 16
        // bars; of a primer with bars outside 4/4, the bars read), else drawn per file.
        // A --style that stands for several styles: with a primer the likeliest of them, else
        // drawn per file among them.
        // The status line says where a file's style came from (nothing: the one given).
        let givenStyles = try style.map { try Self.style($0, in: loaded.groups, model: model) }
        var fixedStyle = givenStyles.flatMap { $0.count == 1 ? $0[0] : nil }
        var styleSource = fixedStyle != nil ? "" : style.map { " (drawn for \($0))" } ?? " (drawn)"
        if fixedStyle == nil, styleNames != nil, !primerBeat.isEmpty,
           let s = (try? sampler.likeliestStyle(primerBeat, among: givenStyles)) ?? (try? sampler.likeliestStyle(primerRead, among: givenStyles)) {
            fixedStyle = s
            styleSource = " (likeliest for the primer)"
        }
        // Where the temperatures come from, for the status line: model.json's, and after a
        // primer a grid model's hits at TemperatureSetting.continuationHits, unless given.
        var sources: [String] = []
        if setting.all == nil {
            let continued = gridPrimer != nil && setting.groups["hits"] == nil
            let fromModel = loaded.sampling.temperatures.keys.filter { setting.groups[$0] == nil && !(continued && $0 == "hits") }
            if !fromModel.isEmpty { sources.append((setting.groups.isEmpty && !continued ? "" : "partly ") + "the model's") }
            if continued { sources.append("hits \(TemperatureSetting.continuationHits) after a primer") }
        }
        let temperatureSource = sources.isEmpty ? "" : " (" + sources.joined(separator: ", ") + ")"
        if bpm == nil, let p = primer, let t = primerTempo { try Self.checkTempo(t, of: "--primer \(p)") }
        if bpm == nil, let p = primer, let t = keptTempo?.bpm { try Self.checkTempo(t, of: "--primer \(p)") }
        // The file's bars are the generator's: the start event's place in its bar.
        var midi = DrumMIDIOptions(model: loaded.groups, bpm: bpm ?? keptTempo?.bpm ?? primerTempo ?? 120, startTick: startTick)
        if bpm == nil, let keptTempo { midi.laterTempos = keptTempo.later }
        // --bars: the file ends at the bar line `bars` bars after the one where generation starts;
        // a grid primer's last bar is the primer's, so N bars follow it.
        let generationStart = startTick + primerHits.reduce(0) { $0 + $1.delta }
        let endTick = bars.map { (generationStart / barLength + (gridPrimer != nil ? 1 : 0) + $0) * barLength }
        midi.endTick = endTick
        let batch = OutputBatch()
        let prepared = try paths.map { try $0.map { try batch.prepare($0, options: .userFile) } }
        let midiFiles = prepared.map { $0[0] }, wavFiles = prepared.compactMap { $0.count > 1 ? $0[1] : nil }
        var report: [SampleReport.File] = []
        // What is said about the files, once they are in place: status lines, and --wav's on standard error.
        var lines: [String] = [], toStandardError: [String] = []
        // The lines wait for the files to be in place; on a terminal, a count meanwhile.
        var progress = count > 1 && isatty(STDERR_FILENO) != 0
        // (cleared on the way out of a failure too)
        defer { if progress { Console.writeError(Data("\r\u{1B}[K".utf8)) } }
        for k in 0..<count {
            if progress { Console.writeError(Data("\r\u{1B}[Ksampling file \(k + 1) of \(count)".utf8)) }
            var rng = SeededRNG(seed: baseSeed &+ UInt64(k))
            var generated: [GeneratedHit] = []
            // A style model's style: drawn with the file's first random number, or the one given
            // (the number is drawn anyway: --style X gives the file the seed gives when it draws X).
            let drawn = sampler.drawStyle(rng: &rng, among: givenStyles)
            options.style = drawn == nil ? nil : fixedStyle ?? drawn
            if let endTick {
                var tick = generationStart, skipped = 0
                do {
                    let emit: (GeneratedHit) throws -> Void = { h in
                        tick += h.hit.delta
                        if tick >= endTick { throw BarsWritten() }
                        // A hit of the step on the end's bar line played early belongs to the
                        // bar after the last: left out (its delta goes to the next hit kept).
                        if !h.drawn(before: endTick, soundingAt: tick) {
                            skipped += h.hit.delta
                            return
                        }
                        var kept = h
                        kept.hit.delta += skipped
                        skipped = 0
                        generated.append(kept)
                    }
                    if let gridPrimer {
                        try sampler.generate(count: Self.maxNotes, options: options, gridPrimer: gridPrimer, rng: &rng, emit: emit)
                    } else {
                        try sampler.generate(count: Self.maxNotes, options: options, primer: primerEvents, rng: &rng, emit: emit)
                    }
                } catch is BarsWritten {}
            } else if let gridPrimer {
                try sampler.generate(count: notes, options: options, gridPrimer: gridPrimer, rng: &rng) { generated.append($0) }
            } else {
                generated = try sampler.generate(count: notes, options: options, primer: primerEvents, rng: &rng)
            }
            let hits = primerHits + generated.map(\.hit)
            let path = midiFiles[k].path
            try midiFiles[k].stage(Data(DrumMIDI.encode(hits, options: midi)))
            let kept = DrumMIDI.deduplicated(hits)
            let written = kept.count
            var wavPath: String?
            if !wavFiles.isEmpty, let midiTemporary = midiFiles[k].temporaryPath {
                // FluidSynth reads the MIDI file staged for this one.
                switch try WavRenderer.render(midi: midiTemporary, into: wavFiles[k], soundfont: soundfont) {
                case .rendered(let p):
                    wavPath = p
                    toStandardError.append("wrote \(p): audio rendered by FluidSynth")
                case .skipped(let reason):
                    wavFiles[k].discard()
                    toStandardError.append("--wav skipped: \(reason)")
                }
            }
            if json {
                report.append(SampleReport.File(path: path, wav: wavPath, seed: baseSeed &+ UInt64(k),
                                                style: options.style.flatMap { styleNames?[$0] },
                                                // The first onset from the file's start, as written.
                                                events: kept.enumerated().map { [$1.note, $1.delta + ($0 == 0 ? startTick : 0)] },
                                                velocities: kept.map(\.velocity)))
                continue
            }
            var line = "wrote \(path): \(written) hit\(written == 1 ? "" : "s"), seed \(baseSeed &+ UInt64(k))"
            line += ", temperature " + TemperatureSetting.describe(temperatures) + temperatureSource
            if let s = options.style, let names = styleNames { line += ", style \(names[s])" + styleSource }
            if written < hits.count { line += " (\(hits.count - written) hit(s) repeating a note at the same onset, written once)" }
            lines.append(line)
        }
        if progress { Console.writeError(Data("\r\u{1B}[K".utf8)) }
        progress = false
        try batch.commit()
        for line in toStandardError { Console.writeError(Data((line + "\n").utf8)) }
        for line in lines { status(line) }
        if json { Console.write(try JSONOutput.encode(SampleReport(files: report))) }
    }

    /// `NAME.mid` for one file; `NAME-k.mid` for file k of several.
    static func outputPath(_ output: String, index: Int, of count: Int) -> String {
        guard count > 1 else { return output }
        let url = URL(fileURLWithPath: output)
        let ext = url.pathExtension
        let stem = ext.isEmpty ? output : String(output.dropLast(ext.count + 1))
        return ext.isEmpty ? "\(stem)-\(index)" : "\(stem)-\(index).\(ext)"
    }
}

/// `drummer sample --json` output.
struct SampleReport: Encodable {
    struct File: Encodable {
        let path: String
        /// The audio file rendered beside it (--wav; absent without one, or when skipped).
        let wav: String?
        let seed: UInt64
        /// The style a model with a style input played (absent for other models).
        let style: String?
        /// [MIDI note, ticks since the previous onset (the first: since the file's start)] per written hit.
        let events: [[Int]]
        /// The NOTE ON velocity of each written hit.
        let velocities: [Int]
    }
    let files: [File]
}
