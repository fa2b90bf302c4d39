// The reference the generated files are compared with (by `drummer report` and `drummer
// stats`): a convert-midi dataset (events.npy + vocab.json, with manifest.json,
// velocities.npy and positions.npy when present), a folder of MIDI files, or one MIDI file.
//
// A dataset directory holds:
// - events.npy: int32 [N, 2], (note index, tick index) per hit; a tick is the delta since
//   the previous hit (a file's first delta is the gap convert-midi glued it on with);
// - vocab.json: ix_to_note, ix_to_tick (delta ticks at the dataset's PPQ);
// - manifest.json: settings.ppq (480 when absent), settings.quantize, and per source file its
//   path, split ("training" or "validation"), offset (first row in its split's events.npy)
//   and hits (rows);
// - velocities.npy, when present: int32 [N] (or [N, 1]), the velocity 1...127 of each row;
// - positions.npy, when present: int32 [N, 2], per row the ticks since the start of the
//   hit's bar and that bar's length in ticks (at the dataset's PPQ, after --quantize);
// - validation/: the same files for the validation split (--validation-fraction).
// Either extra array must have exactly one entry per row of events.npy: a length that
// disagrees is an error naming both files and lengths, never silently ignored.
import DrummerCore
import Encode
import FileOutput
import Foundation
import MIDIParse

/// Which rows of a convert-midi dataset a reference reads.
public enum DatasetSplit: String, CaseIterable, Sendable {
    /// The dataset directory itself (the files training saw).
    case training
    /// Its validation/ subdirectory.
    case validation
    /// Both.
    case all
}

public struct ReferenceSet: Sendable {
    public var path: String
    /// "convert-midi dataset", "folder of MIDI files" or "MIDI file".
    public var kind: String
    public var sample: HitSample
    /// One track per file with hits, at `ticksPerQuarter` (what `drummer stats` measures).
    public var tracks: [HitTrack]
    /// The tracks' resolution: the dataset's PPQ, or the reading settings' PPQ.
    public var ticksPerQuarter: Int
    /// The grid onsets were snapped to: the dataset's --quantize, or the reading settings'.
    public var quantize: Int?
    /// The dataset rows read (nil for MIDI files).
    public var split: DatasetSplit?
    /// A held-out file drawn beside the generated piano rolls, when one can be found.
    var heldOut: DrumPerformance?
    /// Remarks shown on the page (what the reference lacks, what was left out).
    public var remarks: [String]
    /// One line per file that could not be read.
    public var problems: [String]
    /// What was recovered reading its MIDI files: every warning of a single file; for a
    /// folder, one line per file read with a defect recovered (its first warning).
    public var recovered: [String] = []

    /// Most MIDI files read from a folder: a larger folder is read as this many files evenly
    /// spaced through its sorted paths (every part of the folder, not its first subfolders),
    /// which keeps a reference's memory bounded (about 0.1 MB a file).
    static let maxFiles = 5000

    /// `files` (sorted), or `maxFiles` of them evenly spaced.
    static func spread(_ files: [String]) -> [String] {
        guard files.count > maxFiles else { return files }
        return (0..<maxFiles).map { files[$0 * files.count / maxFiles] }
    }

    /// True when every track has velocities (and there is one).
    /// The warning that some of the reference's MIDI files were left out, or nil when none was.
    public var leftOutWarning: String? {
        problems.first.map { "\(path): \(problems.count) of its MIDI files could not be read and were left out (first: \($0))" }
    }

    /// The warnings of reading the reference, as a generated file's are given: what was
    /// recovered reading its MIDI files, and which were left out.
    public var readingWarnings: [String] {
        guard kind != "MIDI file" else { return recovered }
        let recovery = recovered.first.map {
            "\(path): \(recovered.count) of its MIDI files were read with a defect recovered (first: \($0))"
        }
        return [recovery, leftOutWarning].compactMap { $0 }
    }

    public var hasVelocities: Bool { !tracks.isEmpty && tracks.allSatisfy { $0.velocities != nil } }
    /// True when every track has bar positions (and there is one).
    public var hasBarPositions: Bool { !tracks.isEmpty && tracks.allSatisfy { $0.bars != nil } }

    /// Reads the reference at `path`. MIDI files are read with `settings` (as convert-midi
    /// reads them); a dataset is read as it is, at its own PPQ, rows of `split`. `splitOption`:
    /// the command's option that picks a split (nil where it has none), for the error a
    /// dataset's validation/ given alone gets.
    /// - Throws: `ReportError` when the path is missing or holds nothing usable.
    public static func load(path: String, settings: HitExtractionSettings = ReferenceSet.defaultSettings,
                            split: DatasetSplit = .training, splitOption: String? = nil) throws -> ReferenceSet {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw ReportError.missingPath(path: path, what: "reference (a convert-midi dataset or a folder of MIDI files)")
        }
        if !isDir.boolValue {
            let p = try DrumPerformance.load(path: path, channel: settings.channel, mode: settings.parseMode)
            guard !p.hits.isEmpty else { throw ReportError.noDrums(path: path, channels: settings.channel.searched) }
            let track = try midiTrack(p, settings: settings)
            var sample = HitSample()
            if settings.quantize != nil { sample.append(track: track) } else { sample.append(p) }
            return ReferenceSet(path: path, kind: "MIDI file", sample: sample, tracks: [track], ticksPerQuarter: settings.ppq,
                                quantize: settings.quantize, split: nil, heldOut: p, remarks: [], problems: [],
                                recovered: p.warnings.map { "\($0)" })
        }
        let events = (path as NSString).appendingPathComponent("events.npy")
        // A dataset's validation/ holds its rows, not its manifest (files, quantize, positions'
        // meters): read alone it would be one unquantized file. The split is the dataset's to give.
        let parent = PathNames.parent(of: path)
        if (path as NSString).lastPathComponent == "validation", FileManager.default.fileExists(atPath: events),
           FileManager.default.fileExists(atPath: (parent as NSString).appendingPathComponent("manifest.json")) {
            let fix = splitOption.map { "give the dataset and \($0) validation (--reference \(parent) \($0) validation)" }
                ?? "this command reads a dataset's training split: give the dataset (--reference \(parent))"
            throw ReportError.badReference(path: path, message: "the validation split of the dataset \(parent): " + fix)
        }
        if FileManager.default.fileExists(atPath: events) { return try dataset(path, split: split) }
        return try folder(path, settings: settings)
    }

    /// What `drummer report` reads MIDI references with: convert-midi's defaults (channel
    /// auto, 480 PPQ, no quantizing), leniently.
    public static var defaultSettings: HitExtractionSettings {
        var s = HitExtractionSettings()
        s.parseMode = .lenient
        return s
    }

    /// The hits of a file already read. Its errors (`HitExtractionError`: a hit too far from
    /// the start to be encoded) name the file themselves; the file itself was readable.
    static func midiTrack(_ p: DrumPerformance, settings: HitExtractionSettings) throws -> HitTrack {
        try HitTrack(file: p.file, path: p.path, settings: settings)
    }

    // MARK: A folder of MIDI files

    static func folder(_ path: String, settings: HitExtractionSettings) throws -> ReferenceSet {
        let files: [String]
        do { files = try MIDIDatasetConverter.sourceFiles(in: path) } catch {
            throw ReportError.badReference(path: path, message: "\(error)")
        }
        guard !files.isEmpty else {
            throw ReportError.badReference(path: path, message: "\(MIDIDatasetConverter.notADataset) and no .mid files")
        }
        var sample = HitSample()
        var tracks: [HitTrack] = []
        var problems: [String] = [], remarks: [String] = [], recovered: [String] = []
        var heldOut: DrumPerformance?, firstFile: DrumPerformance?
        let root = path.hasSuffix("/") ? path : path + "/"
        for rel in spread(files) {
            do {
                let p = try DrumPerformance.load(path: root + rel, channel: settings.channel, mode: settings.parseMode)
                // Files without hits are left out, as convert-midi leaves them out of the chain.
                guard !p.hits.isEmpty else { continue }
                let track = try midiTrack(p, settings: settings)
                tracks.append(track)
                if let w = p.warnings.first { recovered.append("\(w)") }
                // Snapped onsets (--quantize) count as the figures read them; else as written.
                if settings.quantize != nil { sample.append(track: track) } else { sample.append(p) }
                if firstFile == nil { firstFile = p }
                // The file convert-midi --validation-fraction 0.1 would hold out first.
                if heldOut == nil, MIDIDatasetConverter.isValidation(rel, fraction: 0.1) { heldOut = p }
            } catch {
                problems.append("\(error)")
            }
        }
        if files.count > maxFiles {
            remarks.append("\(maxFiles) of \(files.count) MIDI files were read, evenly spaced in path order (the most a folder gives)")
        }
        guard sample.hits > 0 else {
            throw ReportError.badReference(path: path, message: "none of its \(files.count) MIDI files has drum hits"
                                           + (problems.first.map { " (first problem: \($0))" } ?? ""))
        }
        return ReferenceSet(path: path, kind: "folder of MIDI files", sample: sample, tracks: tracks,
                            ticksPerQuarter: settings.ppq, quantize: settings.quantize, split: nil,
                            heldOut: heldOut ?? firstFile, remarks: remarks, problems: problems, recovered: recovered)
    }

    // MARK: A convert-midi dataset

    static func dataset(_ path: String, split: DatasetSplit) throws -> ReferenceSet {
        func bad(_ m: String) -> ReportError { .badReference(path: path, message: m) }
        // manifest.json and the rows it points at are checked as training checks them (DatasetManifest).
        func checked<T>(_ body: () throws -> T) throws -> T {
            do { return try body() } catch let e as DatasetManifestError { throw ReportError.badReference(path: e.path, message: e.reason) }
        }
        let manifest = try checked { try DatasetManifest.read(directory: path) } ?? DatasetManifest(directory: path)
        let vocabPath = (path as NSString).appendingPathComponent("vocab.json")
        let vocab: Vocabulary
        let vocabData: Data
        do { vocabData = try Data(contentsOf: URL(fileURLWithPath: vocabPath)) } catch {
            throw bad("vocab.json: \(ErrorText.describe(error))")
        }
        // A decoding failure or the vocabulary's own check (duplicates), in words.
        do { vocab = try JSONDecoder().decode(Vocabulary.self, from: vocabData) } catch {
            throw bad("vocab.json: " + ErrorText.notDecoded(vocabData, as: "a vocabulary", error: error))
        }
        let ppq = manifest.ppq
        var remarks: [String] = []
        var tracks: [HitTrack] = []
        let parts: [(dir: String, split: String)]
        switch split {
        case .training: parts = [(path, "training")]
        case .validation: parts = [((path as NSString).appendingPathComponent("validation"), "validation")]
        case .all: parts = [(path, "training"), ((path as NSString).appendingPathComponent("validation"), "validation")]
        }
        var missingVelocities = false, missingPositions = false
        for part in parts {
            if part.split == "validation", !FileManager.default.fileExists(atPath: (part.dir as NSString).appendingPathComponent("events.npy")) {
                if split == .all { continue }
                throw bad("no validation/events.npy (convert-midi --validation-fraction writes the validation split there)")
            }
            let rows = try DatasetRows(directory: part.dir, vocabulary: vocab)
            if rows.velocities == nil { missingVelocities = true }
            if rows.positions == nil { missingPositions = true }
            let isValidation = part.split == "validation"
            try checked { try manifest.checkRows(validation: isValidation, rows: rows.count) }
            var files = manifest.files.filter { $0.validation == isValidation && $0.hits > 0 }
            if manifest.files.isEmpty {
                // Without per-file offsets the whole split is one sequence.
                files = [DatasetFile(path: part.split, validation: isValidation, offset: 0, hits: rows.count, meter: nil)]
                remarks.append("no manifest.json file offsets for the \(part.split) split: its rows are read as one file "
                               + "(deltas include the gaps between glued files)")
            }
            for f in files {
                // Its onsets within what a MIDI file spans: the figures count bars and steps over them.
                try checked { try manifest.checkSpan(of: f) { rows.deltas[$0] } }
                if let o = rows.onsets, let i = f.rows.dropFirst().first(where: { o[$0] < o[$0 - 1] }) {
                    throw ReportError.badReference(path: (part.dir as NSString).appendingPathComponent("onsets.npy"),
                                                   message: "row \(i) holds onset \(o[i]), before the row before it (\(o[i - 1])) in file \(f.path)")
                }
                tracks.append(rows.track(path: "\(path): \(f.path)", rows: f.rows, ticksPerQuarter: ppq))
            }
        }
        guard !tracks.isEmpty, tracks.contains(where: { $0.hits > 0 }) else { throw bad("no hits in the \(split.rawValue) split") }
        if missingVelocities { remarks.append("the reference dataset stores notes and deltas only: it has no velocities (no velocities.npy)") }
        if missingPositions { remarks.append("the reference dataset has no bar positions (no positions.npy): no position-in-bar figures for it") }
        if split != .training { remarks.append("the dataset's \(split.rawValue) split was read") }

        // The page's histograms: deltas in quarter notes within files, positions to the nearest sixteenth.
        var sample = HitSample(notes: [], deltas: [], velocities: missingVelocities ? nil : [],
                               positions: missingPositions ? nil : [], files: tracks.count, bars: missingPositions ? nil : 0)
        for t in tracks {
            sample.notes += t.notes
            sample.deltas += GrooveStats.deltas(t.onsets).map { Double($0) / Double(ppq) }
            if let v = t.velocities { sample.velocities? += v }
            if let b = t.bars {
                sample.positions? += b.map { HitSample.sixteenth(tickInBar: $0.tickInBar, barTicks: $0.barTicks, ticksPerQuarter: Double(ppq)) }
                sample.bars = sample.bars.map { $0 + (t.barSpan ?? 0) }
            }
        }

        // The held-out file: the first validation file (else training file) still at its source.
        var heldOut: DrumPerformance?
        if let source = manifest.source {
            // DIR is recorded as given: relative to where convert-midi ran (tried: here, and
            // beside the dataset).
            let bases = source.hasPrefix("/") ? [source]
                : [FileManager.default.currentDirectoryPath + "/" + source,
                   (PathNames.parent(of: path) as NSString).appendingPathComponent(source)]
            if let base = bases.first(where: { FileManager.default.fileExists(atPath: $0) }) {
                let ordered = manifest.files.filter { $0.validation } + manifest.files.filter { !$0.validation }
                for entry in ordered.prefix(50) {
                    let full = (base as NSString).appendingPathComponent(entry.path)
                    if let p = try? DrumPerformance.load(path: full, mode: .lenient), !p.hits.isEmpty {
                        heldOut = p
                        break
                    }
                }
            }
        }
        if heldOut == nil { remarks.append("the dataset's source MIDI files were not found: no reference piano roll") }
        return ReferenceSet(path: path, kind: "convert-midi dataset", sample: sample, tracks: tracks, ticksPerQuarter: ppq,
                            quantize: manifest.quantize.flatMap { $0 > 1 ? $0 : nil }, split: split, heldOut: heldOut,
                            remarks: remarks, problems: [])
    }
}

/// The rows of one split of a dataset: events.npy decoded through vocab.json, with
/// velocities.npy and positions.npy when present (checked against events.npy's length).
struct DatasetRows {
    var notes: [Int] = []
    var deltas: [Int] = []
    var velocities: [Int]?
    /// (ticks since the bar line, bar length) per row.
    var positions: [(Int, Int)]?
    /// Ticks from each row's file's start (onsets.npy: exact where a row before it was left
    /// out, which the deltas are not).
    var onsets: [Int]?

    var count: Int { notes.count }

    init(directory: String, vocabulary vocab: Vocabulary) throws {
        func file(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }
        func bad(_ name: String, _ m: String) -> ReportError { .badReference(path: file(name), message: m) }
        let events: [Int32]
        do {
            let array = try NPY.read(path: file("events.npy"))
            guard array.shape.count == 2, array.shape[1] == 2 else { throw bad("events.npy", "shape \(array.shape), expected [N, 2]") }
            events = try array.int32Values()
        } catch let e as ReportError { throw e } catch {
            throw ReportError.badReference(path: file("events.npy"), message: "\(error)")
        }
        let n = events.count / 2
        notes.reserveCapacity(n)
        deltas.reserveCapacity(n)
        for i in 0..<n {
            let ni = Int(events[2 * i]), ti = Int(events[2 * i + 1])
            guard vocab.ixToNote.indices.contains(ni), vocab.ixToTick.indices.contains(ti) else {
                throw bad("events.npy", "row \(i) holds (\(ni), \(ti)), outside vocab.json's \(vocab.notes) notes and \(vocab.ticks) ticks")
            }
            notes.append(vocab.ixToNote[ni])
            deltas.append(vocab.ixToTick[ti])
        }
        if FileManager.default.fileExists(atPath: file("velocities.npy")) {
            let values: [Int32]
            do {
                let array = try NPY.read(path: file("velocities.npy"))
                guard array.shape.count == 1 || (array.shape.count == 2 && array.shape[1] == 1) else {
                    throw bad("velocities.npy", "shape \(array.shape), expected [N] (one velocity per row of events.npy)")
                }
                guard array.shape[0] == n else {
                    throw bad("velocities.npy", "\(array.shape[0]) velocities, but events.npy has \(n) rows")
                }
                values = try array.int32Values()
            } catch let e as ReportError { throw e } catch {
                throw ReportError.badReference(path: file("velocities.npy"), message: "\(error)")
            }
            if let i = values.firstIndex(where: { !(1...127).contains($0) }) {
                throw bad("velocities.npy", "row \(i) holds velocity \(values[i]), outside 1...127")
            }
            velocities = values.map(Int.init)
        }
        if FileManager.default.fileExists(atPath: file("positions.npy")) {
            let values: [Int32]
            do {
                let array = try NPY.read(path: file("positions.npy"))
                guard array.shape.count == 2, array.shape[1] == 2 else {
                    throw bad("positions.npy", "shape \(array.shape), expected [N, 2] (ticks since the bar line, bar length in ticks)")
                }
                guard array.shape[0] == n else {
                    throw bad("positions.npy", "\(array.shape[0]) rows, but events.npy has \(n) rows")
                }
                values = try array.int32Values()
            } catch let e as ReportError { throw e } catch {
                throw ReportError.badReference(path: file("positions.npy"), message: "\(error)")
            }
            var out: [(Int, Int)] = []
            out.reserveCapacity(n)
            for i in 0..<n {
                let tick = Int(values[2 * i]), length = Int(values[2 * i + 1])
                guard length > 0, (0..<length).contains(tick) else {
                    throw bad("positions.npy", "row \(i) holds (\(tick), \(length)): expected 0 <= ticks since the bar line < bar length")
                }
                out.append((tick, length))
            }
            positions = out
        }
        if FileManager.default.fileExists(atPath: file("onsets.npy")) {
            do {
                let array = try NPY.read(path: file("onsets.npy"))
                guard array.shape == [n] else {
                    throw bad("onsets.npy", "shape \(array.shape), expected [\(n)] (one onset per row of events.npy)")
                }
                guard array.dtype == .int32 || array.dtype == .int64 else {
                    throw bad("onsets.npy", "dtype \(array.dtype.descr) is not an integer type (<i4 or <i8)")
                }
                let values = try array.int32Values()
                if let i = values.firstIndex(where: { $0 < 0 }) { throw bad("onsets.npy", "row \(i) holds onset \(values[i]), below 0") }
                onsets = values.map(Int.init)
            } catch let e as ReportError { throw e } catch {
                throw ReportError.badReference(path: file("onsets.npy"), message: "\(error)")
            }
        }
    }

    /// One file's rows as a track. Onsets: from onsets.npy when the dataset has it, else the
    /// deltas, the first row's (its glue gap) dropped;
    /// with bar positions they count from the first hit's bar line, else from the first hit.
    /// Bars are numbered from the first hit's: a new bar begins where the bar line (onset −
    /// ticks since the bar line) moves, skipping as many empty bars as fit in the gap.
    func track(path: String, rows: Range<Int>, ticksPerQuarter: Int) -> HitTrack {
        var onsets: [Int] = []
        onsets.reserveCapacity(rows.count)
        let start = positions.map { $0[rows.lowerBound].0 } ?? 0
        var t = start
        for i in rows {
            if let exact = self.onsets {
                // Never before the row before it (a file's onsets do not decrease).
                t = max(t, start + exact[i] - exact[rows.lowerBound])
            } else if i > rows.lowerBound {
                t += deltas[i]
            }
            onsets.append(t)
        }
        var bars: [BarSlot]?
        if let positions {
            var out: [BarSlot] = []
            out.reserveCapacity(rows.count)
            var bar = 0, lineBefore = 0, lengthBefore = 1
            for (k, i) in rows.enumerated() {
                let (tick, length) = positions[i]
                let line = onsets[k] - tick
                if k > 0, line != lineBefore {
                    bar += FileHits.bars(from: lineBefore, length: lengthBefore, to: line, length: length)
                }
                lineBefore = line
                lengthBefore = length
                out.append(BarSlot(bar: bar, tickInBar: tick, barTicks: length))
            }
            bars = out
        }
        return HitTrack(path: path, ticksPerQuarter: ticksPerQuarter, notes: Array(notes[rows]), onsets: onsets,
                        velocities: velocities.map { Array($0[rows]) }, bars: bars)
    }
}
