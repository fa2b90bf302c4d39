// The reference the generated files are compared with: a convert-midi dataset (events.npy
// + vocab.json, with manifest.json when present), a folder of MIDI files, or one MIDI file.
import DrummerCore
import Encode
import Foundation
import MIDIParse

public struct ReferenceSet: Sendable {
    public var path: String
    /// "convert-midi dataset", "folder of MIDI files" or "MIDI file".
    public var kind: String
    public var sample: HitSample
    /// A held-out file drawn beside the generated piano rolls, when one can be found.
    public var heldOut: DrumPerformance?
    /// Remarks shown on the page (what the reference lacks, what was left out).
    public var remarks: [String]
    /// One line per file that could not be read.
    public var problems: [String]

    /// Most MIDI files read from a folder (in sorted path order).
    public static let maxFiles = 5000

    /// Reads the reference at `path`.
    /// - Throws: `ReportError` when the path is missing or holds nothing usable.
    public static func load(path: String) throws -> ReferenceSet {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw ReportError.missingPath(path: path, what: "reference (a convert-midi dataset or a folder of MIDI files)")
        }
        if !isDir.boolValue {
            let p = try DrumPerformance.load(path: path, lenient: true)
            guard !p.hits.isEmpty else { throw ReportError.noDrums(path: path) }
            var sample = HitSample()
            sample.append(p)
            return ReferenceSet(path: path, kind: "MIDI file", sample: sample, heldOut: p, remarks: [], problems: [])
        }
        let events = (path as NSString).appendingPathComponent("events.npy")
        if FileManager.default.fileExists(atPath: events) { return try dataset(path) }
        return try folder(path)
    }

    // MARK: A folder of MIDI files

    static func folder(_ path: String) throws -> ReferenceSet {
        let files: [String]
        do { files = try MIDIDatasetConverter.sourceFiles(in: path) } catch {
            throw ReportError.badReference(path: path, message: "\(error)")
        }
        guard !files.isEmpty else {
            throw ReportError.badReference(path: path, message: "no events.npy (not a convert-midi dataset) and no .mid files")
        }
        var sample = HitSample()
        var problems: [String] = [], remarks: [String] = []
        var heldOut: DrumPerformance?, firstFile: DrumPerformance?
        let root = path.hasSuffix("/") ? path : path + "/"
        for rel in files.prefix(maxFiles) {
            do {
                let p = try DrumPerformance.load(path: root + rel, lenient: true)
                guard !p.hits.isEmpty else { continue }
                sample.append(p)
                if firstFile == nil { firstFile = p }
                // The file convert-midi --validation-fraction 0.1 would hold out first.
                if heldOut == nil, MIDIDatasetConverter.isValidation(rel, fraction: 0.1) { heldOut = p }
            } catch {
                problems.append("\(error)")
            }
        }
        if files.count > maxFiles { remarks.append("the first \(maxFiles) of \(files.count) MIDI files were read") }
        guard sample.hits > 0 else {
            throw ReportError.badReference(path: path, message: "none of its \(files.count) MIDI files has drum hits")
        }
        return ReferenceSet(path: path, kind: "folder of MIDI files", sample: sample, heldOut: heldOut ?? firstFile,
                            remarks: remarks, problems: problems)
    }

    // MARK: A convert-midi dataset

    static func dataset(_ path: String) throws -> ReferenceSet {
        func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }
        func bad(_ m: String) -> ReportError { .badReference(path: path, message: m) }
        let vocab: Vocabulary
        do {
            vocab = try JSONDecoder().decode(Vocabulary.self, from: Data(contentsOf: URL(fileURLWithPath: file("vocab.json"))))
        } catch {
            throw bad("vocab.json: \(error.localizedDescription)")
        }
        let rows: [Int32]
        do {
            let array = try NPY.read(path: file("events.npy"))
            guard array.shape.count == 2, array.shape[1] == 2 else { throw bad("events.npy has shape \(array.shape), expected [N, 2]") }
            rows = try array.int32Values()
        } catch let e as ReportError { throw e } catch {
            throw bad("\(error)")
        }
        // manifest.json, read loosely: the PPQ, the source folder and each file's offset.
        var ppq = 480
        var source: String?
        var fileStarts = Set<Int>()
        var validationFiles: [String] = [], trainingFiles: [String] = []
        if let data = try? Data(contentsOf: URL(fileURLWithPath: file("manifest.json"))),
           let m = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            if let s = m["settings"] as? [String: Any], let p = s["ppq"] as? Int, p > 0 { ppq = p }
            source = m["source"] as? String
            for f in m["files"] as? [[String: Any]] ?? [] {
                guard let rel = f["path"] as? String else { continue }
                if f["split"] as? String == "validation" {
                    validationFiles.append(rel)
                } else {
                    trainingFiles.append(rel)
                    if let o = f["offset"] as? Int { fileStarts.insert(o) }
                }
            }
        }
        let n = rows.count / 2
        var notes: [Int] = [], deltas: [Double] = []
        notes.reserveCapacity(n)
        deltas.reserveCapacity(n)
        for i in 0..<n {
            let ni = Int(rows[2 * i]), ti = Int(rows[2 * i + 1])
            guard vocab.ixToNote.indices.contains(ni), vocab.ixToTick.indices.contains(ti) else {
                throw bad("events.npy row \(i) holds (\(ni), \(ti)), outside vocab.json's \(vocab.notes) notes and \(vocab.ticks) ticks")
            }
            notes.append(vocab.ixToNote[ni])
            // A file's first delta is the gap convert-midi glued it on with, not a played one.
            if i > 0, !fileStarts.contains(i) { deltas.append(Double(vocab.ixToTick[ti]) / Double(ppq)) }
        }
        var remarks: [String] = []
        var velocities: [Int]?
        if let v = try? NPY.read(path: file("velocities.npy")), v.count == n {
            velocities = (try? v.int32Values().map(Int.init)) ?? (try? v.float32Values().map { Int($0.rounded()) })
        }
        if velocities == nil { remarks.append("the reference dataset stores notes and deltas only: it has no velocities") }
        // positions.npy (when a dataset has it): ticks from the bar line at the dataset's PPQ.
        var positions: [Int]?
        if let p = try? NPY.read(path: file("positions.npy")), p.count == n, let ticks = try? p.int32Values() {
            positions = ticks.map { HitSample.sixteenth(tickInBar: Int($0), barTicks: 4 * ppq, ticksPerQuarter: Double(ppq)) }
        }
        if positions == nil { remarks.append("the reference dataset has no bar positions (deltas only): no position-in-bar histogram for it") }
        if fileStarts.isEmpty { remarks.append("no manifest.json file offsets: deltas include the gaps between glued files") }
        let sample = HitSample(notes: notes, deltas: deltas, velocities: velocities, positions: positions,
                               files: max(trainingFiles.count, 1), bars: nil)

        // The held-out file: the first validation file (else training file) still at its source.
        var heldOut: DrumPerformance?
        if let source {
            // DIR is recorded as given: relative to where convert-midi ran (tried: here, and
            // beside the dataset).
            let bases = source.hasPrefix("/") ? [source]
                : [FileManager.default.currentDirectoryPath + "/" + source,
                   ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(source)]
            if let base = bases.first(where: { FileManager.default.fileExists(atPath: $0) }) {
                for rel in (validationFiles + trainingFiles).prefix(50) {
                    let full = (base as NSString).appendingPathComponent(rel)
                    if let p = try? DrumPerformance.load(path: full, lenient: true), !p.hits.isEmpty {
                        heldOut = p
                        break
                    }
                }
            }
        }
        if heldOut == nil { remarks.append("the dataset's source MIDI files were not found: no reference piano roll") }
        return ReferenceSet(path: path, kind: "convert-midi dataset", sample: sample, heldOut: heldOut,
                            remarks: remarks, problems: [])
    }
}
