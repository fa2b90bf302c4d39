import ArgumentParser
import Encode
import Foundation
import MIDIParse

struct ConvertMIDI: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert-midi",
        abstract: "Convert a folder of drum MIDI files into a training dataset.",
        discussion: """
            Reads every .mid, .midi and .rmi file under DIR (recursively, in sorted path order) \
            and keeps the hits (NOTE ON with velocity > 0) as (note, ticks since the previous hit). \
            Files are glued into one sequence: each file starts on the first beat boundary after \
            the previous file's last hit. Writes events.npy (int32 [N, 2]: note index, tick index), \
            vocab.json (ix_to_note, ix_to_tick) and manifest.json to the output directory. \
            Files that cannot be read are listed and skipped (an error with --strict).
            """)

    @Argument(help: "Folder of MIDI files (searched recursively).")
    var directory: String

    @Option(name: [.short, .customLong("output")], help: "Output directory (replaced atomically).")
    var output = "data"

    @Option(help: "Channel: auto (index 9 if the file has notes there, else all), all, or a channel index 0-15.")
    var channel = "auto"

    @Option(help: "Target ticks per quarter note; files are rescaled to it.")
    var ppq = 480

    @Option(help: "Snap absolute onsets to a grid of this many target ticks before taking deltas.")
    var quantize: Int?

    @Option(help: "Clamp deltas (silences) to at most this many target ticks.")
    var maxDelta: Int?

    @Option(help: "Note mapping: none, original (the 2017 project's table), or a JSON file {\"from\": to}.")
    var noteMap = "none"

    @Flag(help: "Also write X.npy: float32 [N, notes + ticks], one-hot rows (large).")
    var onehot = false

    @Option(help: "Fraction of files (0 to <1, chosen by a stable hash of their relative path) written under validation/.")
    var validationFraction = 0.0

    @Flag(help: "Fail (exit 1, nothing written) when any file cannot be read.")
    var strict = false

    @Flag(help: "Parse files leniently: recover defects such as a missing end of track, with a warning each.")
    var lenient = false

    func validate() throws {
        guard ChannelSelection(argument: channel) != nil else {
            throw ValidationError("--channel must be auto, all, or a channel index from 0 to 15 (got \"\(channel)\")")
        }
        guard (1...32767).contains(ppq) else { throw ValidationError("--ppq must be between 1 and 32767") }
        if let q = quantize, q < 1 { throw ValidationError("--quantize must be at least 1 tick") }
        if let m = maxDelta, m < 0 { throw ValidationError("--max-delta must not be negative") }
        guard validationFraction >= 0, validationFraction < 1 else {
            throw ValidationError("--validation-fraction must be at least 0 and below 1")
        }
    }

    func run() throws {
        var settings = ConversionSettings()
        settings.extraction.channel = ChannelSelection(argument: channel) ?? .auto
        settings.ppq = ppq
        settings.extraction.quantize = quantize
        settings.maxDelta = maxDelta
        switch noteMap {
        case "none": settings.extraction.noteMap = .none
        case "original": settings.extraction.noteMap = .original
        default: settings.extraction.noteMap = try NoteMap.load(path: noteMap)
        }
        settings.oneHot = onehot
        settings.validationFraction = validationFraction
        settings.extraction.lenient = lenient

        var lastReported = 0
        let progress: (Int, Int) -> Void = { done, total in
            guard total >= 200 else { return }
            if done == total || done - lastReported >= total / 10 {
                lastReported = done
                FileHandle.standardError.write(Data("convert-midi: read \(done)/\(total) files\n".utf8))
            }
        }
        let report: ConversionReport
        do {
            report = try MIDIDatasetConverter.convert(directory: directory, output: output, settings: settings,
                                                      strict: strict, progress: progress)
        } catch ConversionError.badFiles(let lines) {
            for line in lines { stderr("bad file: \(line)") }
            stderr("error: \(ConversionError.badFiles(lines))")
            throw ExitCode(1)
        } catch let error as ConversionError {
            stderr("error: \(error)")
            throw ExitCode(1)
        }
        for line in report.warnings { stderr("warning: \(line)") }
        for line in report.skipped { stderr("skipped: \(line)") }
        for line in report.validationNotes { stderr(line) }
        if !report.skipped.isEmpty {
            stderr("warning: \(report.skipped.count) file(s) skipped; they are listed in \(output)/manifest.json")
        }
        for line in report.summary { print(line) }
    }

    private func stderr(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
