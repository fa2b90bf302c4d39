// `drummer stats GENERATED... --reference DATA`: figures of generated drum MIDI files
// against a reference (Report.StatsRun does the work).
import ArgumentParser
import DrummerCore
import FileOutput
import Foundation
import MIDIParse
import Report

struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Measure generated drum MIDI files against a reference (a convert-midi dataset or a folder of MIDI files).",
        discussion: """
            Every MIDI file is read as convert-midi reads it: channel 10 (index 9) when the file \
            has notes there, else every channel (--channel); onsets rescaled to 480 PPQ (a dataset \
            reference: its own PPQ, both sides), then snapped to --quantize T (by default a dataset \
            reference's own, else none; 30 for the Groove corpus as MIDI files). A dataset's \
            validation split is --reference DATASET --split validation. Bars come from the file's time signatures (4/4 without \
            one). A dataset reference is read from events.npy, vocab.json and manifest.json (file \
            boundaries), with velocities.npy and positions.npy when present; without them the \
            figures that need velocities or bar positions are n/a, never guessed.

            Figures (s = a sixteenth, 120 ticks at 480 PPQ):
            - note, delta, velocity histograms, pooled over a side's files, compared by \
            Jensen-Shannon divergence in bits (base-2 logs: 0 identical, 1 disjoint). Notes: one \
            bin per MIDI note. Deltas: ticks since the previous hit of the same file (0 for \
            simultaneous hits, none for a file's first hit), one bin per tick value, a 4/4 bar \
            (4 x PPQ) or more in one bin. Velocities: 16 bins of 8 (0-7 ... 120-127).
            - share on the 16th grid: distinct onsets per file whose position in the bar is within \
            --tolerance sixteenths (default 1/8: 15 ticks) of a sixteenth grid line from the bar \
            line, over all distinct onsets (6/8 uses the same grid). "uniform random": that share \
            for positions drawn uniformly over the ticks (or --quantize steps) of a bar.
            - bar periodicity: per file x[k] = 1 when any drum has an onset in sixteenth cell k \
            (nearest cell; the cells from the first onset to the last, K of them); L = the bar \
            length in sixteenths most hits are in; mu = mean of x. With k < K - L: \
            N = sum (x[k]-mu)(x[k+L]-mu), A = sum (x[k]-mu)^2, B = sum (x[k+L]-mu)^2; \
            summed over files, r = N / sqrt(A B): 1 for a pattern that repeats every bar, about 0 \
            for one that never does. Per drum (without a target): one series x[k,d] per drum d, \
            N, A and B summed over the drums too.
            - accent profile: mean velocity per sixteenth of the bar (nearest), over the hits in \
            bars of the length most reference hits are in (others left out and counted), and the \
            Pearson correlation of the two profiles (n/a when one is constant, e.g. every velocity \
            100).
            - duplicate-onset rate: hits repeating a note already struck at the same onset tick of \
            the same file (overlapping NOTE ONs, as read), over all hits.
            - counts: files, hits, bars (first to last hit's bar per file), hits per bar.
            - the bar-structure rows, reading each 4/4 bar as the set of (drum, sixteenth) it hits: \
            bar similarity 1, 2, 4 and 8 bars apart (Jaccard), patterns per 16 bars (bars alike at \
            0.8 or more are one), fills (the tom and crash share in bars 4 and 8 against the \
            others), simultaneous onsets, mean velocity and soft hits, hi-hat velocity spread, \
            loudness drift and the class mix; docs/report-and-stats.md defines each and its target.

            The groove targets get a check mark: note and delta JS <= 0.03 bits, velocity JS <= \
            0.05 bits, grid share within 15% of the reference's, bar periodicity >= 80% of the \
            reference's, accent correlation >= 0.8, no duplicate onsets, and --expected-hits.

            A generated file that cannot be read or has no drum hits is named and left out (exit \
            1 when none is left); a missing or unusable reference is an error (exit 1).
            """)

    @Argument(help: ArgumentHelp("Generated (or any) drum MIDI files.", valueName: "generated.mid"))
    var generated: [String]

    @Option(help: ArgumentHelp("A convert-midi dataset, a folder of MIDI files (searched recursively; 5,000 of them at most, evenly spaced in path order) or one MIDI file.",
                               valueName: "data-or-midi-dir"))
    var reference: String

    @Option(parsing: .unconditional, help: "Snap MIDI onsets to a grid of this many ticks (at 480 PPQ, or a dataset reference's PPQ), as convert-midi --quantize does (default: a dataset reference's own, else none).")
    var quantize: Int?

    @Option(parsing: .unconditional, help: "Largest distance from a sixteenth grid line, in sixteenths, at which an onset is on the grid (0 to below 0.5).")
    var tolerance = StatsRequest.defaultTolerance

    @Option(help: "Rows of a dataset reference: training (the dataset directory), validation (its validation/), or all (default training).")
    var split: String?

    @Option(parsing: .unconditional, help: "Channel of the drums: auto (MIDI channel 10, index 9, if the file has notes there, else every channel), all, or a channel index 0-15 (MIDI channels 1-16 counted from 0: 9 is channel 10).")
    var channel = "auto"

    @Option(name: .customLong("expected-hits"), parsing: .unconditional,
            help: "Hits the generated files should hold together (e.g. 20000 for 20 files of -n 1000): adds a target.")
    var expectedHits: Int?

    @Flag(help: "Read MIDI files leniently: also recover defects that need guessing (an undecodable event, illegal status bytes), with a warning each. By default only what needs no guessing is recovered, as convert-midi does.")
    var lenient = false

    @Flag(help: "Print the figures as JSON (null for n/a, with the reasons in \"notes\").")
    var json = false

    /// --quantize T for reading MIDI files (stats, choose-step): 1…2^20 ticks.
    static func checkQuantize(_ q: Int?) throws {
        if let q, !(1...(1 << 20)).contains(q) { throw ValidationError("--quantize must be between 1 and 1048576 ticks, got \(q)") }
    }

    func validate() throws {
        try Self.checkQuantize(quantize)
        guard tolerance >= 0, tolerance < 0.5 else { throw ValidationError("--tolerance must be at least 0 and below 0.5, got \(tolerance)") }
        try Self.checkSplit(split, reference: reference)
        _ = try Self.channel(channel)
        if let n = expectedHits, n < 0 { throw ValidationError("--expected-hits must not be negative, got \(n)") }
    }

    /// A --channel value (stats, tab, humanize); a usage error otherwise.
    static func channel(_ text: String) throws -> ChannelSelection {
        guard let c = ChannelSelection(argument: text) else {
            throw ValidationError("--channel must be auto, all, or a channel index from 0 to 15 (got \"\(text)\")")
        }
        return c
    }

    /// --split (stats, continuation): a split's name, given only with a dataset reference.
    static func checkSplit(_ split: String?, reference: String) throws {
        guard let split else { return }
        guard DatasetSplit(rawValue: split) != nil else {
            throw ValidationError("--split must be training, validation or all (got \"\(split)\")")
        }
        // It picks rows of a convert-midi dataset; on MIDI files it would do nothing.
        let events = (reference as NSString).appendingPathComponent("events.npy")
        if FileManager.default.fileExists(atPath: reference), !FileManager.default.fileExists(atPath: events) {
            throw ValidationError("--split picks the rows of a convert-midi dataset; \(reference) is MIDI (no events.npy)")
        }
    }

    @Flag(name: .customLong("raw-notes"), help: "Compare the notes as written. By default both sides' notes are read as a General MIDI kit sounds them (22 as 42, 26 as 46, other notes outside 35...81 as their drum class's GM note, as drummer sample writes them; a note with no drum class as written, in no class figure).")
    var rawNotes = false

    func run() throws {
        // Ctrl-C, SIGTERM and SIGHUP end the command at once, removing any output in progress.
        InterruptCleanup.install()
        var request = StatsRequest(generated: generated, reference: reference)
        request.quantize = quantize
        request.tolerance = tolerance
        request.split = split.flatMap(DatasetSplit.init(rawValue:)) ?? .training
        request.channel = ChannelSelection(argument: channel) ?? .auto
        request.lenient = lenient
        request.rawNotes = rawNotes
        request.expectedHits = expectedHits
        let run: StatsRun
        do { run = try StatsRun.measure(request) } catch {
            stderr("error: \(error)")
            throw ExitCode(1)
        }
        for w in run.warnings { stderr("warning: \(w)") }
        if json {
            Console.write(try run.json())
        } else {
            print(run.text(), terminator: "")
        }
    }

    private func stderr(_ line: String) { Console.writeError(Data((line + "\n").utf8)) }
}
