// manifest.json read back by the readers of a converted dataset (training and eval in Train,
// the reference of `drummer report` and `drummer stats` in Report): the few settings they use
// and where each source file's hits lie in its split's events.npy, checked against the same
// bounds for all of them. ConversionManifest is what convert-midi writes; this reads only what
// the readers need, and an original-style dataset has no manifest at all.

import FileOutput
import Foundation
import MIDIParse

/// A source file of a converted dataset (manifest.json's files[]).
public struct DatasetFile: Sendable, Equatable {
    public var path: String
    /// In validation/ (else the training split).
    public var validation: Bool
    /// Its first hit's index in its split's events, and its hits.
    public var offset: Int
    public var hits: Int
    /// The meter most of its hits are in ("4/4"), when recorded.
    public var meter: String?

    public init(path: String, validation: Bool, offset: Int, hits: Int, meter: String?) {
        self.path = path
        self.validation = validation
        self.offset = offset
        self.hits = hits
        self.meter = meter
    }

    /// Its rows in its split's events.npy.
    public var rows: Range<Int> { offset..<(offset + hits) }
}

/// What is wrong with a dataset's manifest.json or with the rows it points at: `path` is the
/// file at fault (manifest.json, or a split's events.npy), `reason` says what and where.
public struct DatasetManifestError: Error, CustomStringConvertible, Equatable, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}

public struct DatasetManifest: Sendable, Equatable {
    /// The dataset directory (the one holding manifest.json).
    public var directory: String
    /// settings.ppq (480 when absent).
    public var ppq = 480
    /// settings.quantize, when recorded.
    public var quantize: Int?
    /// The source directory as convert-midi was given it.
    public var source: String?
    /// files[], in the manifest's order.
    public var files: [DatasetFile] = []

    /// No settings and no files: what an original-style dataset, which has no manifest, reads as.
    public init(directory: String) { self.directory = directory }

    public var path: String { (directory as NSString).appendingPathComponent("manifest.json") }

    /// The events.npy of a split (the directory's own, or validation/'s).
    public func eventsPath(validation: Bool) -> String {
        (directory as NSString).appendingPathComponent(validation ? "validation/events.npy" : "events.npy")
    }

    /// The manifest of the dataset in `directory`; nil when it has none (an original-style
    /// dataset). Every files[] entry must be one convert-midi writes: an entry that cannot be
    /// read is an error, not a file left out (its hits would then belong to no file).
    public static func read(directory: String) throws -> DatasetManifest? {
        var m = DatasetManifest(directory: directory)
        let path = m.path
        func invalid(_ reason: String) -> DatasetManifestError { DatasetManifestError(path: path, reason: reason) }
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw invalid("cannot read: \(ErrorText.reading(error, path: path))")
        }
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) } catch {
            throw invalid("not valid JSON: \(ErrorText.jsonSyntax(error, in: data))")
        }
        guard let root = object as? [String: Any] else { throw invalid("not a JSON object") }
        let settings = root["settings"] as? [String: Any] ?? [:]
        if let p = settings["ppq"] as? NSNumber {
            guard (1...32_767).contains(p.intValue) else { throw invalid("settings.ppq is \(p.intValue), expected 1...32767") }
            m.ppq = p.intValue
        }
        if let q = settings["quantize"] as? NSNumber {
            // 0 (no grid) is read as written; convert-midi writes null or 1...2^20.
            guard (0...(1 << 20)).contains(q.intValue) else {
                throw invalid("settings.quantize is \(q.intValue), expected 1...1048576")
            }
            m.quantize = q.intValue
        }
        m.source = root["source"] as? String
        guard root["files"] == nil || root["files"] is [Any] else { throw invalid("files is not a list") }
        for (i, entry) in (root["files"] as? [Any] ?? []).enumerated() {
            guard let f = entry as? [String: Any] else { throw invalid("files[\(i)] is not an object") }
            func field<T>(_ key: String, _ type: T.Type, _ what: String) throws -> T {
                guard let v = f[key] as? T else { throw invalid("files[\(i)].\(key) is missing or not \(what)") }
                return v
            }
            let filePath = try field("path", String.self, "a string")
            let split = try field("split", String.self, "a string")
            guard split == "training" || split == "validation" else {
                throw invalid("files[\(i)].split is \"\(split)\", expected training or validation")
            }
            let hits = try field("hits", NSNumber.self, "a number").intValue
            let offset = try field("offset", NSNumber.self, "a number").intValue
            m.files.append(DatasetFile(path: filePath, validation: split == "validation", offset: offset, hits: hits,
                                       meter: f["meter"] as? String))
        }
        return m
    }

    /// The files of one split tile its events.npy of `rows` rows as convert-midi writes them:
    /// each file's hits start where the one before ended, none runs past the split's end, and
    /// the last ends there. A list cut short, or hits changed, would otherwise read rows that
    /// belong to no file, or to the wrong one, without a word. Nothing to check without files.
    public func checkRows(validation: Bool, rows count: Int) throws {
        guard !files.isEmpty else { return }
        func invalid(_ reason: String) -> DatasetManifestError { DatasetManifestError(path: path, reason: reason) }
        let name = validation ? "validation" : "training"
        var next = 0, before: DatasetFile?
        for f in files where f.validation == validation {
            guard f.hits >= 0 else { throw invalid("file \(f.path): hits is \(f.hits), a count (0 or more)") }
            guard f.offset == next else {
                let after = before.map { "where \($0.path)'s \($0.hits) hits from \($0.offset) end" } ?? "at the split's start"
                throw invalid("file \(f.path): its \(f.hits) hits start at \(f.offset) in the \(name) split's events.npy, not at \(next), \(after)")
            }
            guard f.hits <= count - f.offset else {
                throw invalid("file \(f.path): its \(f.hits) hits hold rows \(f.offset)..<\(f.offset + f.hits), "
                              + "beyond the \(count) rows of the \(name) split's events.npy")
            }
            next += f.hits
            before = f
        }
        guard next == count else {
            throw invalid("the \(name) files' hits add up to \(next), but the \(name) split's events.npy holds \(count)")
        }
    }

    /// A file's hits span at most what a MIDI file can (`FileHits.maximumTick`): the readers
    /// count steps and bars over the span and add deltas up in it. `delta(row)`: the ticks since
    /// the previous hit of a row of the file's split (its first row's delta is the gap it was
    /// glued on with, not part of its span). Call after `checkRows`.
    public func checkSpan(of f: DatasetFile, delta: (Int) -> Int) throws {
        let span = f.rows.dropFirst().reduce(0) { $0 + delta($1) }
        guard span <= FileHits.maximumTick else {
            throw DatasetManifestError(path: eventsPath(validation: f.validation), reason:
                "file \(f.path): its hits span \(span) ticks, more than a file can (\(FileHits.maximumTick))")
        }
    }
}
