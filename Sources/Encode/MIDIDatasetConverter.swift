// `drummer convert-midi DIR`: MIDI files -> events.npy, vocab.json, manifest.json (and X.npy).
import DrummerCore
import Dispatch
import Foundation
import MIDIParse

/// What a conversion produced, for the CLI to print.
public struct ConversionReport: Sendable {
    public var manifest: ConversionManifest
    /// One line per file that could not be read: "path: error".
    public var skipped: [String]
    /// One line per lenient-mode warning.
    public var warnings: [String]
    /// One line per out-of-vocabulary validation hit kind.
    public var validationNotes: [String]
    /// The final summary, like the original script's.
    public var summary: [String]
}

public enum MIDIDatasetConverter {
    /// File name extensions read (case-insensitive).
    public static let extensions: Set<String> = ["mid", "midi", "rmi"]

    /// MIDI files under `directory`, recursively, as paths relative to it, sorted by their
    /// UTF-8 bytes (the same order on every machine).
    public static func sourceFiles(in directory: String) throws -> [String] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDir), isDir.boolValue else {
            throw ConversionError.notADirectory(directory)
        }
        var found: [String] = []
        let root = URL(fileURLWithPath: directory)
        if let walker = FileManager.default.enumerator(atPath: directory) {
            for case let rel as String in walker {
                guard extensions.contains((rel as NSString).pathExtension.lowercased()) else { continue }
                var fileIsDir: ObjCBool = false
                if FileManager.default.fileExists(atPath: root.appendingPathComponent(rel).path, isDirectory: &fileIsDir),
                   !fileIsDir.boolValue {
                    found.append(rel)
                }
            }
        }
        return found.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// True when `relativePath` belongs to the validation split for `fraction`.
    public static func isValidation(_ relativePath: String, fraction: Double) -> Bool {
        fraction > 0 && StableHash.unitInterval(relativePath) < fraction
    }


    /// Converts every MIDI file under `directory` and writes the dataset to `output`
    /// (through a temporary directory renamed into place).
    ///
    /// - Parameters:
    ///   - strict: stop with `ConversionError.badFiles` (writing nothing) when a file cannot be read.
    ///   - progress: called with (files done, total) as files are read.
    public static func convert(directory: String, output: String, settings: ConversionSettings, strict: Bool = false,
                               progress: ((Int, Int) -> Void)? = nil) throws -> ConversionReport {
        let files = try sourceFiles(in: directory)
        guard !files.isEmpty else { throw ConversionError.noMIDIFiles(directory) }
        let root = directory.hasSuffix("/") ? directory : directory + "/"
        let outcomes = readAll(files.map { root + $0 }, settings: settings, progress: progress)

        // Assemble in sorted path order: deterministic whatever the threads did.
        var training = HitSequence(ppq: settings.ppq, maxDelta: settings.maxDelta)
        var validation = HitSequence(ppq: settings.ppq, maxDelta: settings.maxDelta)
        var entries: [ConversionManifest.SourceFile] = []
        var skipped: [ConversionManifest.SkippedFile] = []
        var skippedLines: [String] = [], warningLines: [String] = []
        var trainingCounts: [Int] = []
        var validationFiles: [(entry: Int, start: Int, count: Int)] = []
        for (i, rel) in files.enumerated() {
            switch outcomes[i] {
            case .failure(let message, let line):
                skipped.append(.init(path: rel, error: message))
                skippedLines.append(line)
            case .success(let hits):
                let isVal = isValidation(rel, fraction: settings.validationFraction)
                if isVal {
                    validationFiles.append((entries.count, validation.count, hits.count))
                    validation.append(hits)
                } else {
                    trainingCounts.append(hits.count)
                    training.append(hits)
                }
                warningLines += hits.warnings.map(\.description)
                entries.append(.init(path: rel, split: isVal ? "validation" : "training", hits: hits.count,
                                     offset: isVal ? validation.offsets.last ?? 0 : training.offsets.last ?? 0,
                                     channel: hits.channelUsed,
                                     warnings: hits.warnings.map { "byte \($0.offset): \($0.defect.message) (\($0.recovery))" }))
            }
        }
        if strict, !skipped.isEmpty {
            throw ConversionError.badFiles(skippedLines)
        }
        guard training.count > 0 else { throw ConversionError.noHits(directory) }

        let vocab = try Vocabulary(ixToNote: IndexEncoder.sortedUnique(training.notes), ixToTick: IndexEncoder.sortedUnique(training.deltas))
        let encoder = IndexEncoder(vocab)
        var trainingRows = [Int32](), droppedNotes: [Int: Int] = [:], droppedTicks: [Int: Int] = [:]
        trainingRows.reserveCapacity(training.count * 2)
        for i in 0..<training.count {
            // Every training note and tick is in the vocabulary built from them.
            trainingRows.append(Int32(encoder.note(training.notes[i]) ?? 0))
            trainingRows.append(Int32(encoder.tick(training.deltas[i]) ?? 0))
        }
        var validationRows = [Int32]()
        var keptBefore = [Int](repeating: 0, count: validation.count + 1)  // kept rows before each hit
        for i in 0..<validation.count {
            keptBefore[i + 1] = keptBefore[i]
            let n = encoder.note(validation.notes[i]), t = encoder.tick(validation.deltas[i])
            guard let n, let t else {
                if n == nil { droppedNotes[validation.notes[i], default: 0] += 1 }
                if n != nil, t == nil { droppedTicks[validation.deltas[i], default: 0] += 1 }
                continue
            }
            validationRows.append(Int32(n))
            validationRows.append(Int32(t))
            keptBefore[i + 1] += 1
        }
        for v in validationFiles {
            entries[v.entry].offset = keptBefore[v.start]
            entries[v.entry].hits = keptBefore[v.start + v.count] - keptBefore[v.start]
        }
        let validationKept = validationRows.count / 2

        var outsideGM: [String: Int] = [:]
        for n in training.notes where !(35...81).contains(n) { outsideGM[String(n), default: 0] += 1 }
        let stats = ConversionManifest.Statistics(
            files: trainingCounts.count, hits: training.count, uniqueNotes: vocab.notes, uniqueTicks: vocab.ticks,
            minHitsPerFile: trainingCounts.min() ?? 0, maxHitsPerFile: trainingCounts.max() ?? 0,
            meanHitsPerFile: (Double(training.count) / Double(max(1, trainingCounts.count)) * 1000).rounded() / 1000,
            notesOutsideGMPercussion: outsideGM)
        var outputs: [String: [Int]] = ["events.npy": [training.count, 2]]
        if settings.oneHot { outputs["X.npy"] = [training.count, vocab.notes + vocab.ticks] }
        var validationInfo: ConversionManifest.Validation?
        var validationLines: [String] = []
        if settings.validationFraction > 0 {
            validationInfo = .init(files: validationFiles.count, hits: validationKept,
                                   droppedHits: validation.count - validationKept,
                                   droppedNotes: Dictionary(uniqueKeysWithValues: droppedNotes.map { (String($0.key), $0.value) }),
                                   droppedTicks: Dictionary(uniqueKeysWithValues: droppedTicks.map { (String($0.key), $0.value) }))
            outputs["validation/events.npy"] = [validationKept, 2]
            outputs["validation/vocab.json"] = []
            if settings.oneHot { outputs["validation/X.npy"] = [validationKept, vocab.notes + vocab.ticks] }
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
        let manifest = ConversionManifest(
            tool: "drummer convert-midi", version: DrummerVersion.string, source: directory,
            settings: .init(channel: settings.extraction.channel.description, ppq: settings.ppq, quantize: settings.extraction.quantize,
                            maxDelta: settings.maxDelta, noteMap: settings.extraction.noteMap.name, onehot: settings.oneHot,
                            validationFraction: settings.validationFraction, lenient: settings.extraction.lenient),
            files: entries, skipped: skipped, statistics: stats, validation: validationInfo, outputs: outputs)

        try AtomicOutput.directory(at: output) { tmp in
            try write(rows: trainingRows, vocab: vocab, oneHot: settings.oneHot, to: tmp)
            if settings.validationFraction > 0 {
                let dir = tmp.appendingPathComponent("validation")
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                try write(rows: validationRows, vocab: vocab, oneHot: settings.oneHot, to: dir)
            }
            try JSONOutput.encode(manifest).write(to: tmp.appendingPathComponent("manifest.json"))
        }

        var summary = [
            "Done! Scanned \(files.count) files (\(entries.count) converted, \(skipped.count) skipped), \(training.count) \(validationInfo == nil ? "" : "training ")hits",
            "Unique notes: \(vocab.notes)",
            "Notes found: " + GeneralMIDIDrums.listing(counts: training.notes.reduce(into: [:]) { $0[$1, default: 0] += 1 }),
            "Unique ticks: \(vocab.ticks)",
            "Statistics: min \(stats.minHitsPerFile), max \(stats.maxHitsPerFile), average \(String(format: "%.1f", stats.meanHitsPerFile)) hits per file",
            "Events: \(output)/events.npy [\(training.count), 2]" + (settings.oneHot ? ", X.npy [\(training.count), \(vocab.notes + vocab.ticks)]" : ""),
        ]
        if let v = validationInfo {
            summary.append("Validation: \(v.files) files, \(v.hits) hits kept, \(v.droppedHits) dropped (out of vocabulary)")
        }
        return ConversionReport(manifest: manifest, skipped: skippedLines, warnings: warningLines,
                                validationNotes: validationLines, summary: summary)
    }

    // MARK: Internals

    /// "value (count), ..." for at most 10 values, smallest first, then how many more.
    static func listing(_ counts: [Int: Int]) -> String {
        let sorted = counts.sorted { $0.key < $1.key }
        var text = sorted.prefix(10).map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
        if sorted.count > 10 { text += " and \(sorted.count - 10) more (see manifest.json)" }
        return text
    }

    enum Outcome: Sendable {
        case success(FileHits)
        /// Message without the path (for the manifest) and the full line (for stderr).
        case failure(String, String)
    }

    /// Reads and converts `paths` on all cores, in batches so progress can be reported.
    static func readAll(_ paths: [String], settings: ConversionSettings, progress: ((Int, Int) -> Void)?) -> [Outcome] {
        let n = paths.count
        let slots = ParallelSlots<Outcome>(count: n)
        let batch = 64
        var done = 0
        while done < n {
            let start = done, count = min(batch, n - done)
            DispatchQueue.concurrentPerform(iterations: count) { k in
                let i = start + k
                do {
                    slots.set(i, .success(try FileHits.read(path: paths[i], settings: settings.extraction)))
                } catch let e as MIDIFileError {
                    slots.set(i, .failure("byte \(e.offset): \(e.defect.message)", e.description))
                } catch let e as MIDIReadError {
                    slots.set(i, .failure(e.message, e.description))
                } catch let e as HitExtractionError {
                    if case .hitTooLate(_, let tick) = e {
                        slots.set(i, .failure("a hit at tick \(tick) lies beyond \(FileHits.maximumTick) target ticks", e.description))
                    } else {
                        slots.set(i, .failure("\(e)", e.description))
                    }
                } catch {
                    slots.set(i, .failure("\(error)", "\(paths[i]): \(error)"))
                }
            }
            done += count
            progress?(done, n)
        }
        return slots.values()
    }

    /// events.npy, vocab.json and (with one-hot) X.npy in `dir`.
    static func write(rows: [Int32], vocab: Vocabulary, oneHot: Bool, to dir: URL) throws {
        let count = rows.count / 2
        try NPY.encode(int32: rows, shape: [count, 2]).write(to: dir.appendingPathComponent("events.npy"))
        try JSONOutput.encode(vocab).write(to: dir.appendingPathComponent("vocab.json"))
        if oneHot {
            try OneHotWriter.write(rows: rows, notes: vocab.notes, ticks: vocab.ticks,
                                   to: dir.appendingPathComponent("X.npy").path)
        }
    }
}
