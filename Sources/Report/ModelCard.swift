// The model card: what a model directory's model.json says, read tolerantly so that
// newer manifests (format version 2 with a `groups` list, metadata values that are not
// strings, keys this version does not know) still show. The fields DrummerCore's
// ModelManifest knows are decoded through it when it accepts the file; everything is
// also read loosely with JSONSerialization, and unknown keys are listed as they are.
import DrummerCore
import FileOutput
import Foundation
import MIDIParse
import ModelFiles

public struct ModelCard: Sendable {
    public var path: String
    /// Summary rows: format, sizes, parameters, files.
    public var summary: [(String, String)]
    /// Notes of the vocabulary with their GM names.
    public var notes: [Int]
    /// Tick values of the vocabulary.
    public var ticks: [Int]
    /// A grid model: its vocabulary is its dataset's (the dataset's identity), which its groups
    /// do not read (they read drum classes, velocity bins and offsets).
    public var isGrid = false
    /// The `metadata` map (training step, settings, dataset fingerprint, ...), sorted by key.
    public var metadata: [(String, String)]
    /// The `groups` list when present: each group's keys and values (compact JSON).
    public var groups: [[(String, String)]]
    /// Other top-level keys this version does not know, as compact JSON.
    public var other: [(String, String)]
    /// Why the model does not load as sample loads it (a weight file missing or of the wrong
    /// size, a checksum that does not match, a weight that is not finite); nil when it loads.
    public var problem: String?

    static let knownKeys: Set<String> = ["format", "format_version", "ix_to_note", "ix_to_tick", "hidden_size",
                                         "Wx_shape", "Wy_shape", "gate_order", "dtype", "sha256", "metadata", "groups", "sampling",
                                         "layers"]

    /// Reads `directory`/model.json.
    /// - Throws: `ReportError` when the directory or its model.json is missing or not a JSON object.
    public static func load(directory: String) throws -> ModelCard {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDir) else {
            throw ReportError.missingPath(path: directory, what: "model directory")
        }
        guard isDir.boolValue else {
            throw ReportError.badModel(path: directory, message: "not a directory (a model directory holds model.json, Wx.bin, Wy.bin)")
        }
        let file = (directory as NSString).appendingPathComponent(ModelDirectory.manifestFile)
        guard FileManager.default.fileExists(atPath: file) else {
            throw ReportError.missingPath(path: file, what: "model manifest (`drummer export` writes it)")
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: file)) } catch {
            throw ReportError.badModel(path: file, message: "cannot read: \(ErrorText.reading(error, path: file))")
        }
        let json: [String: Any]
        do {
            guard let obj = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? [String: Any] else {
                throw ReportError.badModel(path: file, message: "not a JSON object")
            }
            json = obj
        } catch let e as ReportError { throw e } catch {
            throw ReportError.badModel(path: file, message: "not valid JSON: \(ErrorText.jsonSyntax(error, in: data))")
        }
        // The card shows what model.json says; whether the files it describes hold the model is
        // sample's own check (sizes, SHA-256 checksums, finite weights), run as it runs it.
        var verified = false, problem: String?
        do { verified = try ModelDirectory.load(path: directory).checksumsVerified } catch { problem = "\(error)" }
        return ModelCard(path: directory, json: json, typed: try? JSONDecoder().decode(ModelManifest.self, from: data),
                         checksumsVerified: verified, problem: problem)
    }

    init(path: String, json: [String: Any], typed: ModelManifest?, checksumsVerified: Bool = false, problem: String? = nil) {
        self.path = path
        self.problem = problem
        func ints(_ key: String) -> [Int]? { (json[key] as? [Any])?.compactMap { ($0 as? NSNumber)?.intValue } }
        notes = typed?.ixToNote ?? ints("ix_to_note") ?? []
        ticks = typed?.ixToTick ?? ints("ix_to_tick") ?? []
        let hidden = typed?.hiddenSize ?? (json["hidden_size"] as? NSNumber)?.intValue
        let wx = typed?.wxShape ?? ints("Wx_shape"), wy = typed?.wyShape ?? ints("Wy_shape")

        var rows: [(String, String)] = []
        let format = typed?.format ?? json["format"] as? String
        let version = typed?.formatVersion ?? (json["format_version"] as? NSNumber)?.intValue
        rows.append(("format", (format ?? "none (the original project's vocab.json)") + (version.map { " v\($0)" } ?? "")))
        if let hidden { rows.append(("hidden size H", String(hidden))) }
        if let grid = (json["groups"] as? [String: Any])?["grid"] as? [String: Any] {
            isGrid = true
            let offsets = (grid["offsets"] as? [Any])?.count ?? 0
            rows.append(("layout", "grid: 16th-note steps, 512 hit sets of 9 drum classes, per class a velocity bin and "
                         + "one of \(2 * offsets) offset classes"))
            if let styles = grid["styles"] as? [String: Any], let names = styles["names"] as? [String],
               let steps = (styles["steps"] as? [Any])?.compactMap({ ($0 as? NSNumber)?.intValue }), steps.count == names.count {
                let total = Double(max(1, steps.reduce(0, +)))
                rows.append(("styles", "\(names.count), read from " + ((styles["rule"] as? String).map { "the files' paths (\($0))" } ?? "?")
                             + ": " + zip(names, steps).map { "\($0) \(String(format: "%.0f", Double($1) / total * 100))%" }.joined(separator: ", ")
                             + " of training steps (sample draws one per file, or takes --style)"))
            }
        }
        let dataset = isGrid ? "the dataset's " : ""
        rows.append(("\(dataset)notes N", String(notes.count) + (isGrid ? " (the grid reads drum classes, not these)" : "")))
        rows.append(("\(dataset)tick values K", ticks.isEmpty ? "0"
                     : "\(ticks.count) (\(ticks.first ?? 0) to \(ticks.last ?? 0) ticks)"))
        func shape(_ s: [Int]?) -> String? { s.map { $0.map(String.init).joined(separator: " × ") } }
        // A stacked model (format 3) lists each layer's fused matrix: Wx.bin, Wx1.bin, …
        let layers: [(file: String, shape: [Int])] = (json["layers"] as? [[String: Any]])?.compactMap { layer in
            guard let file = layer["file"] as? String,
                  let shape = (layer["shape"] as? [Any])?.compactMap({ ($0 as? NSNumber)?.intValue }) else { return nil }
            return (file, shape)
        } ?? []
        let wxFiles = layers.isEmpty ? [(ModelDirectory.wxFile, wx)] : layers.map { ($0.file, Optional($0.shape)) }
        if layers.count > 1 { rows.append(("layers", "\(layers.count) stacked LSTM layers")) }
        for (file, s) in wxFiles {
            if let text = shape(s) { rows.append(((file as NSString).deletingPathExtension, text)) }
        }
        if let s = shape(wy) { rows.append(("Wy", s)) }
        let params = (wxFiles.map(\.1) + [wy]).compactMap { $0 }.map { $0.reduce(1, *) }.reduce(0, +)
        if params > 0 { rows.append(("parameters", Self.grouped(params) + " (float32, \(Self.bytes(params * 4)))")) }
        if let g = typed?.gateOrder ?? (json["gate_order"] as? [String]) { rows.append(("gate order", g.joined(separator: ", "))) }
        let binFiles = wxFiles.map(\.0) + [ModelDirectory.wyFile]
        for name in binFiles {
            let full = (path as NSString).appendingPathComponent(name)
            if let size = (try? FileManager.default.attributesOfItem(atPath: full))?[.size] as? NSNumber {
                rows.append((name, Self.bytes(size.intValue)))
            } else {
                rows.append((name, "missing"))
            }
        }
        rows.append(("checksums", json["sha256"] == nil ? "none in model.json"
                     : "SHA-256 of \(binFiles.count == 2 ? "both" : "the \(binFiles.count)") .bin files in model.json"
                       + (checksumsVerified ? ", verified" : problem != nil ? ", not verified: the model does not load" : "")))
        // The temperatures sample and humanize use by default (model.json "sampling").
        let temperatures = ((json["sampling"] as? [String: Any])?["temperature"] as? [String: Any] ?? [:])
            .compactMap { k, v in (v as? NSNumber).map { (k, $0) } }.sorted { $0.0 < $1.0 }
        rows.append(("sampling temperature", temperatures.isEmpty ? "1 for every output group"
                     : temperatures.map { "\($0.0) \($0.1)" }.joined(separator: ", ") + " (sample's and humanize's defaults; other groups 1)"))
        if let bars = (json["sampling"] as? [String: Any])?["warmup_bars"] as? NSNumber, bars.intValue > 0 {
            rows.append(("sampling warm-up", "\(bars) bars drawn and not written before a file without a primer (sample's default)"))
        }
        summary = rows

        metadata = (json["metadata"] as? [String: Any] ?? [:]).map { ($0.key, Self.compact($0.value)) }
            .sorted { $0.0 < $1.0 }
        groups = (json["groups"] as? [Any] ?? []).map { g in
            if let d = g as? [String: Any] { return d.map { ($0.key, Self.compact($0.value)) }.sorted { $0.0 < $1.0 } }
            return [("value", Self.compact(g))]
        }
        other = json.filter { !Self.knownKeys.contains($0.key) }.map { ($0.key, Self.compact($0.value)) }
            .sorted { $0.0 < $1.0 }
    }

    /// A value as text: strings as they are, anything else as compact JSON, cut to 300 characters.
    static func compact(_ value: Any) -> String {
        var s: String
        if let str = value as? String {
            s = str
        } else if let n = value as? NSNumber {
            s = "\(n)"
        } else if JSONSerialization.isValidJSONObject(value),
                  let d = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) {
            s = String(decoding: d, as: UTF8.self)
        } else {
            s = "\(value)"
        }
        if s.count > 300 { s = String(s.prefix(300)) + "…" }
        return s
    }

    static func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return out
    }

    static func bytes(_ n: Int) -> String {
        if n >= 1 << 20 { return String(format: "%.1f MiB", Double(n) / Double(1 << 20)) }
        if n >= 1 << 10 { return String(format: "%.1f KiB", Double(n) / Double(1 << 10)) }
        return "\(n) bytes"
    }
}
