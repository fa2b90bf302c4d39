import ArgumentParser
import Dispatch
import DrummerCore
import Encode
import Foundation
import MIDIParse
import Synchronization
import FileOutput

struct ConvertMIDI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert-midi",
        abstract: "Convert a folder of drum MIDI files into a training dataset.",
        discussion: """
            Reads every .mid, .midi and .rmi file under DIR (recursively, in sorted path order) \
            and keeps the hits (NOTE ON with velocity > 0) as (note, ticks since the previous hit). \
            Files are glued into one sequence: each file starts on the first beat boundary after \
            the previous file's last hit. Writes events.npy (int32 [N, 2]: note index, tick index), \
            velocities.npy (int32 [N]), positions.npy (int32 [N, 2]: ticks from the bar line, the \
            bar's length), onsets.npy (int32 [N]: ticks from the file's start), vocab.json \
            (ix_to_note, ix_to_tick) and manifest.json to the output \
            directory (docs/data-format.md).

            By default, defects that need no guessing are recovered with a warning each (bytes \
            after the end, a missing end-of-track, a chunk length past the end of the file when \
            the events end cleanly, a wrong track count); files with other defects are skipped. \
            Every skipped file is named with its reason. --strict refuses any defect and any \
            file without hits, and writes nothing if there is one; --lenient recovers everything it can.

            Files are read on every core (--threads or DRUMMER_THREADS to change); the output \
            is byte for byte the same for any thread count. Long runs show a progress line.

            The output directory is built under a temporary name beside it and swapped into place; \
            an existing directory is replaced only when it is empty or a dataset convert-midi wrote \
            (its manifest.json; a model directory is never replaced by a dataset). Ctrl-C removes the \
            temporary directory and exits with status 130.
            """)

    /// Largest --quantize and --max-delta: 2^20 ticks (about 18 minutes at 480 PPQ and 120 BPM).
    static let maximumTicks = 1 << 20
    static let maximumThreads = 1024

    @Argument(help: "Folder of MIDI files (searched recursively).")
    var directory: String

    @Option(name: [.short, .customLong("output")], help: "Output directory (an existing dataset directory is replaced atomically).")
    var output = "data"

    @Option(parsing: .unconditional, help: "Channel of the drums: auto (MIDI channel 10, index 9, if the file has notes there, else every channel), all, or a channel index 0-15 (MIDI channels 1-16 counted from 0: 9 is channel 10).")
    var channel = "auto"

    @Option(parsing: .unconditional, help: "Target ticks per quarter note (1-32767); files are rescaled to it.")
    var ppq = 480

    @Option(parsing: .unconditional, help: "Snap absolute onsets to a grid of this many target ticks (1-1048576) before taking deltas.")
    var quantize: Int?

    @Option(parsing: .unconditional, help: "Clamp deltas (silences) to at most this many target ticks (0-1048576).")
    var maxDelta: Int?

    @Option(help: "Note mapping: none, original (the 2017 project's table), or a JSON file {\"from\": to}.")
    var noteMap = "none"

    @Option(help: "Order of the hits at one onset (after --quantize): time (as played, the default) or note (by note number, lowest first: one order for a chord of drums, which the model then need not guess).")
    var onsetOrder: OnsetOrder = .time

    @Flag(help: "Also write X.npy: float32 [N, notes + ticks], one-hot rows (large).")
    var onehot = false

    @Option(parsing: .unconditional, help: "Fraction of files (0 to <1, chosen by a stable hash of their relative path) written under validation/.")
    var validationFraction = 0.0

    @Flag(help: "Refuse any defect: exit 1 and write nothing when any file cannot be read cleanly.")
    var strict = false

    @Flag(help: "Recover every defect the reader can (also by guessing, e.g. dropping the rest of a track), with a warning each.")
    var lenient = false

    @Option(parsing: .unconditional, help: "Files read at once (1-1024; default: DRUMMER_THREADS, else every core). The output does not depend on it.")
    var threads: Int?

    func validate() throws {
        _ = try StatsCommand.channel(channel)
        guard (1...32767).contains(ppq) else { throw ValidationError("--ppq must be between 1 and 32767 (got \(ppq))") }
        if let q = quantize, !(1...Self.maximumTicks).contains(q) {
            throw ValidationError("--quantize must be between 1 and \(Self.maximumTicks) ticks (got \(q))")
        }
        if let m = maxDelta, !(0...Self.maximumTicks).contains(m) {
            throw ValidationError("--max-delta must be between 0 and \(Self.maximumTicks) ticks (got \(m))")
        }
        guard validationFraction >= 0, validationFraction < 1 else {
            throw ValidationError("--validation-fraction must be at least 0 and below 1 (got \(validationFraction))")
        }
        if strict && lenient { throw ValidationError("--strict and --lenient cannot be combined") }
        if let t = threads, !(1...Self.maximumThreads).contains(t) {
            throw ValidationError("--threads must be between 1 and \(Self.maximumThreads) (got \(t))")
        }
        _ = try environmentThreads()
    }

    /// DRUMMER_THREADS, when set.
    private func environmentThreads() throws -> Int? {
        guard let text = ProcessInfo.processInfo.environment["DRUMMER_THREADS"], !text.isEmpty else { return nil }
        guard let t = Int(text), (1...Self.maximumThreads).contains(t) else {
            throw ValidationError("DRUMMER_THREADS must be a number of threads between 1 and \(Self.maximumThreads) (got \"\(text)\")")
        }
        return t
    }

    func run() throws {
        var settings = ConversionSettings()
        settings.extraction.channel = ChannelSelection(argument: channel) ?? .auto
        settings.ppq = ppq
        settings.extraction.quantize = quantize
        settings.extraction.onsetOrder = onsetOrder
        settings.maxDelta = maxDelta
        switch noteMap {
        case "none": settings.extraction.noteMap = .none
        case "original": settings.extraction.noteMap = .original
        default:
            do {
                settings.extraction.noteMap = try NoteMap.load(path: noteMap)
            } catch let e as HitExtractionError {
                stderr("error: \(e)")
                throw ExitCode(1)
            }
        }
        settings.oneHot = onehot
        settings.validationFraction = validationFraction
        settings.extraction.parseMode = strict ? .strict : lenient ? .lenient : .safe

        InterruptCleanup.install()
        try InputOverlap.check(output: output, directory: true, inputs: [
            CommandInput(directory, role: "the folder of MIDI files"),
            CommandInput(["none", "original"].contains(noteMap) ? "" : noteMap, role: "the note map")])
        // What the write would refuse (a folder of other files, a file, a folder it cannot write
        // in), before the corpus is read: a large one takes minutes.
        try AtomicOutput.prepareDirectory(at: output, kind: .dataset).discard()
        let progress = ProgressLine(label: "convert-midi")
        let report: ConversionReport
        do {
            report = try MIDIDatasetConverter.convert(
                directory: directory, output: output, settings: settings, threads: try threads ?? environmentThreads(),
                diagnostics: { d in
                    progress.finish()
                    for line in d.warnings { stderr("warning: \(line)") }
                    for line in d.skipped { stderr((strict ? "bad file: " : "skipped: ") + line) }
                    if d.counts.skippedTotal > 0 || d.counts.recovered > 0 { stderr(d.counts.line) }
                },
                progress: { done, total in progress.update(done, total) })
        } catch let error as ConversionError {
            progress.finish()
            stderr("error: \(error)")
            throw ExitCode(1)
        }
        for line in report.validationNotes { stderr(line) }
        if !report.skipped.isEmpty {
            stderr("warning: \(report.skipped.count) file(s) skipped; they are listed in \(output)/manifest.json")
        }
        for line in report.summary { print(line) }
    }

    private func stderr(_ line: String) {
        Console.writeError(Data((line + "\n").utf8))
    }
}

/// A progress line on stderr for long runs: nothing during the first 2 seconds; then on a
/// terminal one line redrawn in place (at most 5 times a second), otherwise a line at each
/// tenth of the work. Safe to call from any thread.
final class ProgressLine: Sendable {
    private struct State {
        var started = DispatchTime.now().uptimeNanoseconds
        var lastDraw: UInt64 = 0
        var lastTenth = 0
        var drawn = false
        var finished = false
    }
    private let label: String
    private let isTerminal = isatty(STDERR_FILENO) != 0
    private let state = Mutex(State())
    static let quietNanoseconds: UInt64 = 2_000_000_000

    init(label: String) { self.label = label }

    func update(_ done: Int, _ total: Int) {
        state.withLock { s in
            guard !s.finished, total > 0 else { return }
            let now = DispatchTime.now().uptimeNanoseconds
            let elapsed = now - s.started
            guard elapsed >= Self.quietNanoseconds else { return }
            let tenth = done * 10 / total
            if isTerminal {
                guard now - s.lastDraw >= 200_000_000 || done == total else { return }
            } else {
                guard tenth > s.lastTenth else { return }
            }
            s.lastDraw = now
            s.lastTenth = tenth
            let seconds = Double(elapsed) / 1e9
            let rate = Double(done) / max(seconds, 1e-9)
            let eta = rate > 0 ? Double(total - done) / rate : 0
            let text = "\(label): read \(done)/\(total) files (\(done * 100 / total)%), "
                + "\(Int(rate.rounded())) files/s, ETA \(Self.duration(eta))"
            if isTerminal {
                Console.writeError(Data("\r\u{1B}[K\(text)".utf8))
                s.drawn = true
            } else {
                Console.writeError(Data((text + "\n").utf8))
            }
        }
    }

    /// Ends the line on a terminal (the next output starts on a fresh line).
    func finish() {
        state.withLock { s in
            if s.drawn && !s.finished { Console.writeError(Data("\n".utf8)) }
            s.finished = true
        }
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s < 60 ? "\(s) s" : "\(s / 60) min \(s % 60) s"
    }
}

extension OnsetOrder: ExpressibleByArgument {}
