// `drummer convert-midi DIR`: MIDI files -> events.npy, vocab.json, manifest.json (and X.npy).
//
// 1. Find the files (sorted by UTF-8 path).
// 2. Read them on all cores into compact per-file records (notes as UInt8, deltas as
//    Int32), counting the training vocabulary on the way (MIDIDatasetConverter+Reading).
// 3. In path order: glue the files of each split (the first delta of a file depends on the
//    previous file's last hit), finish the vocabulary, count what validation keeps.
// 4. Stream events.npy (and X.npy) file by file into a temporary directory renamed into
//    place. Peak memory is the compact records (5 bytes per hit) plus fixed buffers.
import DrummerCore
import Foundation
import MIDIParse
import FileOutput
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a conversion produced, for the CLI to print.
public struct ConversionReport: Sendable {
    public var manifest: ConversionManifest
    /// One line per file that could not be read: "path: reason".
    public var skipped: [String]
    /// One line per recovered defect: "path: byte N: what was wrong (what was done)".
    public var warnings: [String]
    /// One line per out-of-vocabulary validation hit kind.
    public var validationNotes: [String]
    /// Files read without any defect, read with recovered defects, skipped.
    public var counts: ConversionCounts
    /// The final summary, like the original script's.
    public var summary: [String]
}

/// What reading the files found, reported before anything is written or any error thrown.
public struct ConversionDiagnostics: Sendable {
    /// One line per recovered defect: "path: byte N: what was wrong (what was done)".
    public var warnings: [String]
    /// One line per file that could not be read: "path: reason".
    public var skipped: [String]
    public var counts: ConversionCounts
}

/// How the files of a conversion fared.
public struct ConversionCounts: Equatable, Sendable {
    public var files = 0
    public var clean = 0
    public var recovered = 0
    /// Skipped files per kind ("not MIDI", "truncated", ...).
    public var skipped: [String: Int] = [:]

    public var skippedTotal: Int { skipped.values.reduce(0, +) }

    /// Kinds in the order the summary lists them.
    static let kindOrder = ["not MIDI", "empty", "truncated", "malformed", "unreadable", "not a regular file", "out of range"]

    /// "3 files: 1 read cleanly, 1 recovered (warnings above), 1 skipped (1 not MIDI)".
    public var line: String {
        var text = "\(files) file\(files == 1 ? "" : "s"): \(clean) read cleanly, \(recovered) recovered"
        if recovered > 0 { text += " (warnings above)" }
        text += ", \(skippedTotal) skipped"
        if skippedTotal > 0 {
            let kinds = Self.kindOrder.filter { skipped[$0] != nil } + skipped.keys.filter { !Self.kindOrder.contains($0) }.sorted()
            text += " (" + kinds.map { "\(skipped[$0]!) \($0)" }.joined(separator: ", ") + ")"
        }
        return text
    }
}

public enum MIDIDatasetConverter {
    /// File name extensions read (case-insensitive).
    static let extensions: Set<String> = ["mid", "midi", "rmi"]

    /// True when `relativePath` belongs to the validation split for `fraction`.
    public static func isValidation(_ relativePath: String, fraction: Double) -> Bool {
        fraction > 0 && StableHash.unitInterval(relativePath) < fraction
    }

    /// Threads used when none are asked for: every core.
    package static var defaultThreads: Int { CPUCount.available }

    /// Converts every MIDI file under `directory` and writes the dataset to `output`
    /// (through a temporary directory renamed into place).
    ///
    /// With `settings.extraction.parseMode == .strict`, any file that cannot be read stops the
    /// conversion with `ConversionError.badFiles` and nothing is written.
    ///
    /// - Parameters:
    ///   - threads: files read at once (nil: every core). The output is the same for any count.
    ///   - diagnostics: called once all files are read, before anything is written or any error
    ///     is thrown, with the warning lines of recovered files, the lines of skipped files
    ///     ("path: reason"), in path order, and the counts.
    ///   - progress: called from the reading threads with (files done, total).
    /// Why a file that holds no hit gives nothing.
    static let noHitsReason = "no hits: NOTE ON with velocity > 0 not found"

    public static func convert(directory: String, output: String, settings: ConversionSettings, threads: Int? = nil,
                               diagnostics: ((ConversionDiagnostics) -> Void)? = nil,
                               progress: (@Sendable (Int, Int) -> Void)? = nil) throws -> ConversionReport {
        let readThreads = max(1, threads ?? defaultThreads)
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { throw ConversionError.notADirectory(directory) }
        try checkOutputIsWritable(output)
        let entries = try sources(in: directory, threads: readThreads)
        guard !entries.isEmpty else { throw ConversionError.noMIDIFiles(directory) }
        let root = directory.hasSuffix("/") ? directory : directory + "/"
        let fraction = settings.validationFraction
        let inValidation = entries.map { isValidation($0.path, fraction: fraction) }
        let (outcomes, readCounts) = readAll(entries, root: root, isValidation: inValidation, settings: settings,
                                              threads: readThreads, progress: progress)
        var vocabularyCounts = readCounts

        // Files, in path order: skipped and recovered lists, gluing, the split of each file.
        let maxDelta = settings.maxDelta
        @inline(__always) func clamp(_ d: Int) -> Int { maxDelta.map { min(d, $0) } ?? d }
        var counts = ConversionCounts(files: entries.count)
        var skipped: [ConversionManifest.SkippedFile] = [], recovered: [ConversionManifest.RecoveredFile] = []
        var skippedLines: [String] = [], warningLines: [String] = []
        var firstDelta = [Int](repeating: 0, count: entries.count)  // glued and clamped
        var training = Glue(ppq: settings.ppq), validation = Glue(ppq: settings.ppq)
        var trainingFiles = 0, validationFiles = 0, trainingHits = 0, validationHits = 0
        var minHits = Int.max, maxHits = 0
        var noHits: [String] = []
        for (i, entry) in entries.enumerated() {
            switch outcomes[i] {
            case .skipped(let reason, let kind):
                skipped.append(.init(path: entry.path, error: reason, kind: kind))
                skippedLines.append("\(root)\(entry.path): \(reason)")
                counts.skipped[kind, default: 0] += 1
            case .converted(let r):
                if r.warnings.isEmpty {
                    counts.clean += 1
                } else {
                    counts.recovered += 1
                    recovered.append(.init(path: entry.path, warnings: r.warnings.map(Self.warningText)))
                    warningLines += r.warnings.map(\.description)
                }
                if r.count == 0 {
                    noHits.append(entry.path)
                    warningLines.append("\(root)\(entry.path): \(Self.noHitsReason)")
                }
                if inValidation[i] {
                    validationFiles += 1
                    validationHits += r.count
                    if r.count > 0 { firstDelta[i] = clamp(validation.firstDelta(onset: Int(r.deltas[0]), lastOnset: r.lastOnset)) }
                } else {
                    trainingFiles += 1
                    trainingHits += r.count
                    minHits = min(minHits, r.count)
                    maxHits = max(maxHits, r.count)
                    if r.count > 0 {
                        firstDelta[i] = clamp(training.firstDelta(onset: Int(r.deltas[0]), lastOnset: r.lastOnset))
                        vocabularyCounts.addTick(firstDelta[i])
                    }
                }
            }
        }
        diagnostics?(ConversionDiagnostics(warnings: warningLines, skipped: skippedLines, counts: counts))
        if settings.extraction.parseMode == .strict, !skipped.isEmpty || !noHits.isEmpty {
            throw ConversionError.badFiles(skippedLines + noHits.map { "\(root)\($0): \(Self.noHitsReason)" }, noHits: noHits.count)
        }
        guard trainingFiles + validationFiles > 0 else {
            throw ConversionError.noFileConverted(directory: directory, files: entries.count)
        }
        guard trainingFiles > 0 else {
            throw ConversionError.allValidation(files: validationFiles, fraction: fraction)
        }
        guard trainingHits > 0 else {
            throw ConversionError.noHits(directory: directory, files: trainingFiles, split: fraction > 0 ? "training " : "",
                                         channel: settings.extraction.channel, paths: noHits.map { "\(root)\($0)" })
        }

        let vocab = try Vocabulary(ixToNote: vocabularyCounts.notes, ixToTick: vocabularyCounts.ticks)
        let encoder = IndexEncoder(vocab)

        // Validation: the training vocabulary; hits outside it are dropped (and counted).
        var droppedNotes: [Int: Int] = [:], droppedTicks: [Int: Int] = [:]
        var validationKept = [Int](repeating: 0, count: entries.count)
        if fraction > 0 {
            for i in entries.indices where inValidation[i] {
                guard case .converted(let r) = outcomes[i] else { continue }
                var kept = 0
                for k in 0..<r.count {
                    let note = Int(r.notes[k]), delta = k == 0 ? firstDelta[i] : clamp(Int(r.deltas[k]))
                    if encoder.note(note) == nil {
                        droppedNotes[note, default: 0] += 1
                    } else if encoder.tick(delta) == nil {
                        droppedTicks[delta, default: 0] += 1
                    } else {
                        kept += 1
                    }
                }
                validationKept[i] = kept
            }
        }

        // The manifest's file list, offsets in each split's events.npy.
        var files: [ConversionManifest.SourceFile] = []
        files.reserveCapacity(entries.count)
        var trainingOffset = 0, validationOffset = 0
        for (i, entry) in entries.enumerated() {
            guard case .converted(let r) = outcomes[i] else { continue }
            let hits = inValidation[i] ? validationKept[i] : r.count
            files.append(.init(path: entry.path, split: inValidation[i] ? "validation" : "training", hits: hits,
                               offset: inValidation[i] ? validationOffset : trainingOffset, channel: r.channelUsed,
                               meter: r.meter, warnings: r.warnings.map(Self.warningText)))
            if inValidation[i] { validationOffset += hits } else { trainingOffset += hits }
        }
        let validationTotal = validationOffset

        var outsideGM: [String: Int] = [:]
        for n in 0..<128 where vocabularyCounts.noteHits[n] > 0 && !(35...81).contains(n) {
            outsideGM[String(n)] = vocabularyCounts.noteHits[n]
        }
        let stats = ConversionManifest.Statistics(
            files: trainingFiles, hits: trainingHits, uniqueNotes: vocab.notes, uniqueTicks: vocab.ticks,
            minHitsPerFile: minHits == Int.max ? 0 : minHits, maxHitsPerFile: maxHits,
            meanHitsPerFile: (Double(trainingHits) / Double(max(1, trainingFiles)) * 1000).rounded() / 1000,
            notesOutsideGMPercussion: outsideGM)
        var outputs: [String: [Int]] = ["events.npy": [trainingHits, 2], "velocities.npy": [trainingHits],
                                        "positions.npy": [trainingHits, 2], "onsets.npy": [trainingHits]]
        if settings.oneHot { outputs["X.npy"] = [trainingHits, vocab.notes + vocab.ticks] }
        var validationInfo: ConversionManifest.Validation?
        var validationLines: [String] = []
        if fraction > 0 {
            validationInfo = .init(files: validationFiles, hits: validationTotal,
                                   droppedHits: validationHits - validationTotal,
                                   droppedNotes: Dictionary(uniqueKeysWithValues: droppedNotes.map { (String($0.key), $0.value) }),
                                   droppedTicks: Dictionary(uniqueKeysWithValues: droppedTicks.map { (String($0.key), $0.value) }))
            outputs["validation/events.npy"] = [validationTotal, 2]
            outputs["validation/velocities.npy"] = [validationTotal]
            outputs["validation/positions.npy"] = [validationTotal, 2]
            outputs["validation/onsets.npy"] = [validationTotal]
            outputs["validation/vocab.json"] = []
            if settings.oneHot { outputs["validation/X.npy"] = [validationTotal, vocab.notes + vocab.ticks] }
            if !droppedNotes.isEmpty {
                validationLines.append("validation: dropped \(droppedNotes.values.reduce(0, +)) hit(s) whose note is not in the training vocabulary: "
                                       + Self.listing(droppedNotes))
            }
            if !droppedTicks.isEmpty {
                validationLines.append("validation: dropped \(droppedTicks.values.reduce(0, +)) hit(s) whose delta (ticks) is not in the training vocabulary: "
                                       + Self.listing(droppedTicks))
            }
        }
        outputs["vocab.json"] = []
        outputs["manifest.json"] = []
        let mode = settings.extraction.parseMode
        let manifest = ConversionManifest(
            tool: "drummer convert-midi", version: DrummerVersion.string, source: directory,
            settings: .init(channel: settings.extraction.channel.description, ppq: settings.ppq, quantize: settings.extraction.quantize,
                            maxDelta: settings.maxDelta, noteMap: settings.extraction.noteMap.name, onehot: settings.oneHot,
                            validationFraction: fraction, lenient: mode == .lenient, parseMode: mode.rawValue,
                            onsetOrder: settings.extraction.onsetOrder.rawValue),
            files: files, skipped: skipped, recovered: recovered, statistics: stats, validation: validationInfo,
            noHits: noHits, outputs: outputs)

        // Write: rows are encoded file by file straight into the output, on every thread.
        let glued = firstDelta, kept = validationKept, writer = EventsWriter(notes: vocab.notes, ticks: vocab.ticks, oneHot: settings.oneHot)
        let records = outcomes
        func writeSplit(_ validationSplit: Bool, to dir: URL, prefix: String, count: Int) throws {
            var indices: [Int] = [], offsets: [Int] = []
            var row = 0
            for i in entries.indices where inValidation[i] == validationSplit {
                guard case .converted(let r) = records[i], r.count > 0 else { continue }
                indices.append(i)
                offsets.append(row)
                row += validationSplit ? kept[i] : r.count
            }
            let files = indices
            try writer.write(dir: dir, prefix: prefix, total: count, offsets: offsets, threads: readThreads) { k, rows in
                let i = files[k]
                guard case .converted(let r) = records[i] else { return rows.removeAll() }
                Self.encode(r, firstDelta: glued[i], maxDelta: maxDelta, encoder: encoder, into: &rows)
            }
        }
        do {
            // AtomicOutput registers the temporary directory with InterruptCleanup: Ctrl-C removes it.
            try AtomicOutput.directory(at: output, kind: .dataset) { tmp in
                let vocabJSON = try JSONOutput.encode(vocab)
                // With more than one thread the manifest (large for a large corpus) is encoded
                // while the events are written.
                let manifestJSON = BackgroundResult<Data>()
                if readThreads > 1 {
                    Thread.detachNewThread { manifestJSON.set(Result { try manifest.encodedJSON(threads: readThreads - 1) }) }
                } else {
                    manifestJSON.set(Result { try manifest.encodedJSON() })
                }
                try writeSplit(false, to: tmp, prefix: "", count: trainingHits)
                try OutputFile.write(vocabJSON, to: tmp, name: "vocab.json")
                if fraction > 0 {
                    let dir = tmp.appendingPathComponent("validation")
                    guard mkdir(dir.path, 0o755) == 0 else { throw OutputWriteError(file: "validation/", code: errno) }
                    try writeSplit(true, to: dir, prefix: "validation/", count: validationTotal)
                    try OutputFile.write(vocabJSON, to: dir, name: "vocab.json")
                }
                try OutputFile.write(try manifestJSON.get(), to: tmp, name: "manifest.json")
            }
        } catch let e as OutputWriteError {
            throw ConversionError.output(path: output, message: "cannot write \(e.file): \(e.reason) (\(output) was left as it was)")
        } catch let e as OutputError {
            throw ConversionError.output(path: output, message: e.message)
        }

        var summary = [
            "Done! Scanned \(entries.count) file\(entries.count == 1 ? "" : "s") (\(files.count) converted\(noHits.isEmpty ? "" : ", \(noHits.count) of them without hits"), \(skipped.count) skipped), \(trainingHits) \(validationInfo == nil ? "" : "training ")hits",
            counts.line,
            "Unique notes: \(vocab.notes)",
            "Notes found: " + GeneralMIDIDrums.listing(counts: Dictionary(uniqueKeysWithValues: (0..<128).compactMap { n in vocabularyCounts.noteHits[n] > 0 ? (n, vocabularyCounts.noteHits[n]) : nil })),
            "Unique ticks: \(vocab.ticks)",
            "Statistics: min \(stats.minHitsPerFile), max \(stats.maxHitsPerFile), average \(String(format: "%.1f", stats.meanHitsPerFile)) hits per file",
            "Events: \(output)/events.npy [\(trainingHits), 2]" + (settings.oneHot ? ", X.npy [\(trainingHits), \(vocab.notes + vocab.ticks)]" : ""),
        ]
        if let v = validationInfo {
            summary.append("Validation: \(v.files) file\(v.files == 1 ? "" : "s"), \(v.hits) hits kept, \(v.droppedHits) dropped (out of vocabulary)"
                + (v.files == 0 ? ": no file fell into it (a larger --validation-fraction or more files make one)" : ""))
        }
        return ConversionReport(manifest: manifest, skipped: skippedLines, warnings: warningLines,
                                validationNotes: validationLines, counts: counts, summary: summary)
    }

    // MARK: Internals

    /// The (note index, tick index) rows of one file, replacing `rows`; hits outside the
    /// vocabulary (validation only: training notes and deltas all are in it) are left out.
    /// The rows of one file: `EventsWriter.columns` int32 per kept hit (note index, tick index,
    /// velocity, ticks from the bar line, bar length, ticks from the file's start); hits outside
    /// the vocabulary are left out (the onsets of the hits after them stay exact: a grid model
    /// reads its steps from them, where the deltas lose a left-out hit's ticks).
    static func encode(_ r: FileRecord, firstDelta: Int, maxDelta: Int?, encoder: IndexEncoder, into rows: inout [Int32]) {
        rows.removeAll(keepingCapacity: true)
        rows.reserveCapacity(EventsWriter.columns * r.count)
        let limit = maxDelta ?? Int.max
        var onset = 0
        for k in 0..<r.count {
            onset += Int(r.deltas[k])  // at most FileHits.maximumTick: an Int32
            let delta = k == 0 ? firstDelta : min(Int(r.deltas[k]), limit)
            guard let n = encoder.note(Int(r.notes[k])), let t = encoder.tick(delta) else { continue }
            rows.append(Int32(n))
            rows.append(Int32(t))
            rows.append(Int32(r.velocities[k]))
            rows.append(r.tickInBar[k])
            rows.append(r.barTicks[k])
            rows.append(Int32(clamping: onset))
        }
    }

    /// A warning as the manifest records it: "byte N: what was wrong (what was done)".
    static func warningText(_ w: MIDIWarning) -> String { "byte \(w.offset): \(w.defect.message) (\(w.recovery))" }

    /// Refuses early (before reading any file) an output that cannot be written: the nearest
    /// existing directory at or above it must be writable, and `output` itself, if it exists,
    /// a directory.
    static func checkOutputIsWritable(_ output: String) throws {
        let url = URL(fileURLWithPath: output).standardizedFileURL
        var info = stat()
        if stat(url.path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR {
            throw ConversionError.output(path: output, message: "exists and is not a directory")
        }
        var dir = url.deletingLastPathComponent()
        while stat(dir.path, &info) != 0 {
            let parent = dir.deletingLastPathComponent()
            if parent.path == dir.path { break }
            dir = parent
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw ConversionError.output(path: output, message: "cannot be created: \(dir.path) is not a directory")
        }
        guard access(dir.path, W_OK) == 0 else {
            throw ConversionError.output(path: output, message: "cannot be written: \(dir.path): \(ErrorText.errno(errno))")
        }
    }

    /// "value (count), ..." for at most 10 values, smallest first, then how many more.
    static func listing(_ counts: [Int: Int]) -> String {
        let sorted = counts.sorted { $0.key < $1.key }
        var text = sorted.prefix(10).map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
        if sorted.count > 10 { text += " and \(sorted.count - 10) more (see manifest.json)" }
        return text
    }
}

/// A value computed on another thread, waited for where it is needed.
final class BackgroundResult<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) {
        condition.lock()
        result = value
        condition.broadcast()
        condition.unlock()
    }

    func get() throws -> T {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return try result!.get()
    }
}
