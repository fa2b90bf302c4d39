// model.json: its Codable form, decoding with one-line errors, and validation
// against the vocabulary and the hidden size.
import Foundation
import DrummerCore
import FileOutput

/// The manifest of a model directory. Keys match the original project's vocab.json
/// (`ix_to_note`, `ix_to_tick`, `hidden_size`, `Wx_shape`, `Wy_shape`, `gate_order`,
/// `dtype`); the rest are optional so that file is accepted as it is.
public struct ModelManifest: Codable, Equatable, Sendable {
    public var format: String?
    public var formatVersion: Int?
    public var ixToNote: [Int]
    public var ixToTick: [Int]
    public var hiddenSize: Int
    package var wxShape: [Int]?
    package var wyShape: [Int]?
    public var gateOrder: [String]?
    public var dtype: String?
    public var sha256: [String: String]?
    public var metadata: [String: String]?
    /// The input and output groups (format version 2; absent: the original layout).
    public var groups: GroupsManifest?
    /// The LSTM layers, one entry each (format version 3; absent: one layer, Wx.bin).
    public var layers: [LayerManifest]?
    /// How the model is meant to be sampled (absent: every group at temperature 1). Readers that
    /// do not know the key sample at 1, so it needs no new format version.
    public var sampling: SamplingManifest?

    public init(format: String?, formatVersion: Int?, ixToNote: [Int], ixToTick: [Int], hiddenSize: Int,
                wxShape: [Int]?, wyShape: [Int]?, gateOrder: [String]?, dtype: String?,
                sha256: [String: String]?, metadata: [String: String]?, groups: GroupsManifest? = nil,
                layers: [LayerManifest]? = nil, sampling: SamplingManifest? = nil) {
        self.groups = groups
        self.sampling = sampling
        self.layers = layers
        self.format = format
        self.formatVersion = formatVersion
        self.ixToNote = ixToNote
        self.ixToTick = ixToTick
        self.hiddenSize = hiddenSize
        self.wxShape = wxShape
        self.wyShape = wyShape
        self.gateOrder = gateOrder
        self.dtype = dtype
        self.sha256 = sha256
        self.metadata = metadata
    }

    enum CodingKeys: String, CodingKey {
        case format
        case formatVersion = "format_version"
        case ixToNote = "ix_to_note"
        case ixToTick = "ix_to_tick"
        case hiddenSize = "hidden_size"
        case wxShape = "Wx_shape"
        case wyShape = "Wy_shape"
        case gateOrder = "gate_order"
        case dtype, sha256, metadata, groups, layers, sampling
    }

    /// Decodes model.json. Errors name the key, the expected type and the value found
    /// ("hidden_size is 32.5, expected a whole number").
    package static func decode(_ data: Data, file: String) throws -> ModelManifest {
        func bad(_ m: String) -> ModelDirectoryError { .badManifest(file: file, message: m) }
        guard !data.isEmpty else { throw bad("is empty, expected the JSON manifest") }
        let root: JSONValue
        do { root = try JSONDecoder().decode(JSONValue.self, from: data) } catch {
            throw bad("not valid JSON: \(ErrorText.jsonSyntax(data) ?? "unexpected structure")")
        }
        guard case .object(let object) = root else {
            throw bad("holds \(root.described), expected a JSON object")
        }
        let r = ManifestReader(object: object, file: file)
        return ModelManifest(
            format: try r.string(CodingKeys.format.rawValue),
            formatVersion: try r.int(CodingKeys.formatVersion.rawValue),
            ixToNote: try r.required(r.ints(CodingKeys.ixToNote.rawValue), CodingKeys.ixToNote.rawValue),
            ixToTick: try r.required(r.ints(CodingKeys.ixToTick.rawValue), CodingKeys.ixToTick.rawValue),
            hiddenSize: try r.required(r.int(CodingKeys.hiddenSize.rawValue), CodingKeys.hiddenSize.rawValue),
            wxShape: try r.ints(CodingKeys.wxShape.rawValue),
            wyShape: try r.ints(CodingKeys.wyShape.rawValue),
            gateOrder: try r.strings(CodingKeys.gateOrder.rawValue),
            dtype: try r.string(CodingKeys.dtype.rawValue),
            sha256: try r.stringMap(CodingKeys.sha256.rawValue),
            metadata: try r.stringMap(CodingKeys.metadata.rawValue),
            groups: try object[CodingKeys.groups.rawValue].flatMap { $0 == .null ? nil : try GroupsManifest.read($0, file: file) },
            layers: try LayerManifest.read(object[CodingKeys.layers.rawValue], file: file),
            sampling: try SamplingManifest.read(object[CodingKeys.sampling.rawValue], file: file))
    }

    /// Largest hidden size accepted, so a bad manifest cannot request a huge read.
    static let maxHidden = ModelLimits.maximumHidden

    package func validated(file: String) throws -> (ModelGroups, ModelShape) {
        func bad(_ m: String) -> ModelDirectoryError { .badManifest(file: file, message: m) }
        if let f = format, f != ModelDirectory.formatName {
            throw ModelDirectoryError.unsupportedFormat(file: file, format: f, version: formatVersion)
        }
        if let v = formatVersion, v < 1 || v > ModelDirectory.formatVersion {
            throw ModelDirectoryError.unsupportedFormat(
                file: file, format: format ?? ModelDirectory.formatName, version: v)
        }
        let vocabulary: Vocabulary
        do { vocabulary = try Vocabulary(ixToNote: ixToNote, ixToTick: ixToTick) } catch {
            throw ModelDirectoryError.vocabularyMismatch(file: file, message: "\(error)")
        }
        guard hiddenSize > 0, hiddenSize <= Self.maxHidden else {
            throw bad("hidden_size is \(hiddenSize), expected 1...\(Self.maxHidden)")
        }
        guard vocabulary.ticks <= ModelLimits.maximumTicks else { throw bad("ix_to_tick has \(vocabulary.ticks) entries") }
        if let v = formatVersion, v >= 2, groups == nil { throw bad("missing key groups (format version \(v) lists them)") }
        let modelGroups = try groups?.groups(vocabulary: vocabulary, file: file) ?? ModelGroups(vocabulary: vocabulary)
        if let v = formatVersion, v >= 3, layers == nil { throw bad("missing key layers (format version \(v) lists them)") }
        let layerCount = layers?.count ?? 1
        guard (1...ModelLimits.maximumLayers).contains(layerCount) else {
            throw bad("layers lists \(layerCount) layers, expected 1...\(ModelLimits.maximumLayers)")
        }
        if layerCount > 1, let v = formatVersion, v < 3 {
            throw bad("layers lists \(layerCount) layers in a format version \(v) manifest (one layer only)")
        }
        let shape = modelGroups.shape(hidden: hiddenSize, layers: layerCount)
        for (k, (layer, entry)) in zip(shape.parameters.layers, layers ?? []).enumerated() {
            let name = ModelDirectory.wxFile(layer: k)
            guard entry.file == name else { throw bad("layers[\(k)].file is \"\(entry.file)\", expected \"\(name)\"") }
            if entry.shape != [layer.wx.rows, layer.wx.cols] {
                throw ModelDirectoryError.shapeMismatch(file: file, key: "layers[\(k)].shape",
                                                        expected: [layer.wx.rows, layer.wx.cols], found: entry.shape)
            }
        }
        if let s = wxShape, s != [shape.wxRows, shape.wxCols] {
            throw ModelDirectoryError.shapeMismatch(
                file: file, key: "Wx_shape", expected: [shape.wxRows, shape.wxCols], found: s)
        }
        if let s = wyShape, s != [shape.wyRows, shape.wyCols] {
            throw ModelDirectoryError.shapeMismatch(
                file: file, key: "Wy_shape", expected: [shape.wyRows, shape.wyCols], found: s)
        }
        if let g = gateOrder, g != ModelShape.gateOrder {
            throw bad("gate_order is \(g), only \(ModelShape.gateOrder) is supported")
        }
        if let d = dtype {
            let l = d.lowercased()
            guard l.contains("float32"), !l.contains("big") else {
                throw bad("dtype is \"\(d)\", only little-endian float32 is supported")
            }
        }
        if let t = sampling?.temperature {
            do { try TemperatureSetting(groups: t.mapValues(Float.init)).check(for: modelGroups, option: "sampling.temperature") } catch {
                throw bad(error.description)
            }
        }
        return (modelGroups, shape)
    }
}

/// What a model directory's model.json "sampling" holds: the settings the model was chosen at,
/// `sample`'s defaults (and `humanize`'s, for the temperatures).
public struct SamplingDefaults: Equatable, Sendable {
    /// Temperatures by output group; groups not listed sample at 1.
    public var temperatures: [String: Float]

    public init(temperatures: [String: Float] = [:]) {
        self.temperatures = temperatures
    }
}

/// model.json's "sampling": the temperatures the model was chosen at, by output group
/// ({"temperature": {"velocity": 1.2}}; groups not listed sample at 1; a grid model's "fills",
/// its hit set's in bars 4 and 8 of each phrase, not listed: the hits'). A "warmup_bars" key
/// other than 0 (bars drawn and not written, which drummer no longer does: docs/research.md,
/// The first bars) is refused.
public struct SamplingManifest: Codable, Equatable, Sendable {
    public var temperature: [String: Double]?

    public init(temperature: [String: Double]?) {
        self.temperature = temperature
    }

    /// nil when `defaults` hold nothing but 1s (a model sampled as it is needs no key).
    /// `fills` is left out where it is the hits' temperature (absent, it follows theirs).
    public init?(_ defaults: SamplingDefaults) {
        let t = defaults.temperatures, fills = TemperatureSetting.fills
        let kept = t.filter { $0.key == fills ? $0.value != t["hits"] ?? 1 : $0.value != 1 }
        guard !kept.isEmpty else { return nil }
        // Through the shortest decimal text, so 1.2 is written 1.2 rather than 1.2000000476837158.
        temperature = kept.mapValues { Double("\($0)") ?? Double($0) }
    }

    /// The defaults, as the sampler takes them.
    public var defaults: SamplingDefaults {
        SamplingDefaults(temperatures: (temperature ?? [:]).mapValues(Float.init))
    }

    static func read(_ value: JSONValue?, file: String) throws -> SamplingManifest? {
        guard let value, value != .null else { return nil }
        func bad(_ m: String) -> ModelDirectoryError { .badManifest(file: file, message: m) }
        guard case .object(let o) = value else { throw bad("sampling is \(value.described), expected an object") }
        if let w = o["warmup_bars"], w != .null, w != .int(0) {
            throw bad("sampling.warmup_bars is \(w.described): drummer no longer draws bars ahead of a file "
                      + "(docs/research.md, The first bars); export the checkpoint again")
        }
        guard let t = o["temperature"], t != .null else { return SamplingManifest(temperature: nil) }
        guard case .object(let entries) = t else {
            throw bad("sampling.temperature is \(t.described), expected an object of numbers (\"velocity\": 1.2)")
        }
        var out: [String: Double] = [:]
        for (name, item) in entries {
            let number: Double? = switch item {
            case .int(let i): Double(i)
            case .double(let d): d
            default: nil
            }
            guard let x = number, x.isFinite, x >= 0, x <= Double(TemperatureSetting.maximum) else {
                throw bad("sampling.temperature.\(name) is \(item.described), expected a number from 0 to \(Int(TemperatureSetting.maximum))")
            }
            out[name] = x
        }
        return SamplingManifest(temperature: out)
    }
}

/// One LSTM layer of a model directory: its fused matrix's file and shape ([rows, 4H], rows =
/// inputs + H + 1; layer 0's inputs are the one-hot groups, layer k's the h of layer k − 1).
public struct LayerManifest: Codable, Equatable, Sendable {
    public var file: String
    public var shape: [Int]
    /// What the layer's input rows multiply, for readers ("note, tick, …" or "h of layer 0").
    public var input: String

    public init(file: String, shape: [Int], input: String) {
        self.file = file
        self.shape = shape
        self.input = input
    }

    static func read(_ value: JSONValue?, file: String) throws -> [LayerManifest]? {
        guard let value, value != .null else { return nil }
        guard case .array(let items) = value else {
            throw ModelDirectoryError.badManifest(file: file, message: "layers is \(value.described), expected an array of objects")
        }
        return try items.enumerated().map { k, item in
            guard case .object(let o) = item else {
                throw ModelDirectoryError.badManifest(file: file, message: "layers[\(k)] is \(item.described), expected an object")
            }
            let r = ManifestReader(object: o, file: file, keyPath: "layers[\(k)].")
            return LayerManifest(file: try r.required(r.string("file"), "file"), shape: try r.required(r.ints("shape"), "shape"),
                                 input: try r.string("input") ?? "")
        }
    }
}

/// Typed access to model.json's keys with one-line errors. Absent and null optional
/// keys read as nil.
struct ManifestReader {
    let object: [String: JSONValue]
    let file: String
    /// Where `object` sits in model.json ("groups.position."), so messages name the whole key.
    var keyPath = ""

    func bad(_ m: String) -> ModelDirectoryError { .badManifest(file: file, message: m) }

    func required<T>(_ value: T?, _ key: String) throws -> T {
        guard let value else {
            throw object[key] == nil ? bad("missing key \(keyPath)\(key)") : bad("\(keyPath)\(key) is null, expected a value")
        }
        return value
    }

    private func present(_ key: String) -> JSONValue? {
        guard let v = object[key], v != .null else { return nil }
        return v
    }

    func int(_ key: String) throws -> Int? {
        guard let v = present(key) else { return nil }
        guard let i = v.wholeNumber else { throw bad("\(keyPath)\(key) is \(v.described), expected a whole number") }
        return i
    }

    func string(_ key: String) throws -> String? {
        guard let v = present(key) else { return nil }
        guard case .string(let s) = v else { throw bad("\(keyPath)\(key) is \(v.described), expected a string") }
        return s
    }

    func ints(_ key: String) throws -> [Int]? {
        guard let v = present(key) else { return nil }
        guard case .array(let items) = v else {
            throw bad("\(keyPath)\(key) is \(v.described), expected an array of whole numbers")
        }
        return try items.enumerated().map { i, item in
            guard let n = item.wholeNumber else {
                throw bad("\(keyPath)\(key)[\(i)] is \(item.described), expected a whole number")
            }
            return n
        }
    }

    func strings(_ key: String) throws -> [String]? {
        guard let v = present(key) else { return nil }
        guard case .array(let items) = v else { throw bad("\(keyPath)\(key) is \(v.described), expected an array of strings") }
        return try items.enumerated().map { i, item in
            guard case .string(let s) = item else {
                throw bad("\(keyPath)\(key)[\(i)] is \(item.described), expected a string")
            }
            return s
        }
    }

    func stringMap(_ key: String) throws -> [String: String]? {
        guard let v = present(key) else { return nil }
        guard case .object(let entries) = v else {
            throw bad("\(keyPath)\(key) is \(v.described), expected an object of strings")
        }
        var out: [String: String] = [:]
        for (k, item) in entries {
            guard case .string(let s) = item else {
                throw bad("\(keyPath)\(key).\(k) is \(item.described), expected a string")
            }
            out[k] = s
        }
        return out
    }
}

/// What is wrong with a model directory; each names the file.
public enum ModelDirectoryError: Error, CustomStringConvertible, Equatable {
    case missingDirectory(path: String)
    case notADirectory(path: String)
    case missingFile(path: String)
    case unreadable(path: String, message: String)
    /// Something other than a regular file where one is expected.
    case wrongKind(path: String, found: String, expected: String)
    case badManifest(file: String, message: String)
    case unsupportedFormat(file: String, format: String, version: Int?)
    case vocabularyMismatch(file: String, message: String)
    case shapeMismatch(file: String, key: String, expected: [Int], found: [Int])
    case wrongSize(file: String, expected: Int, found: Int, shape: [Int])
    /// A weight file of the wrong size for a model with position or velocity groups: `groups`
    /// lists the group sizes model.json gives ("inputs note 3, tick 4, position 16; hidden size 5").
    case wrongSizeForGroups(file: String, expected: Int, found: Int, shape: [Int], groups: String)
    case checksumMismatch(file: String, expected: String, found: String)
    case notFinite(file: String, row: Int, col: Int, value: Float)
    case weights(file: String, message: String)

    public var description: String {
        switch self {
        case .missingDirectory(let p):
            return "\(p): no such model directory"
        case .notADirectory(let p):
            return "\(p): not a directory (a model is a directory holding Wx.bin, Wy.bin and model.json)"
        case .missingFile(let p):
            return "\(p): missing from the model directory"
        case .unreadable(let p, let m):
            return "\(p): cannot read: \(m)"
        case .wrongKind(let p, let found, let expected):
            return "\(p): is \(found), expected \(expected)"
        case .badManifest(let f, let m):
            return "\(f): \(m)"
        case .unsupportedFormat(let f, let name, let v):
            return "\(f): unsupported format \"\(name)\"\(v.map { " version \($0)" } ?? ""); "
                + "this drummer reads \(ModelDirectory.formatName) version \(ModelDirectory.formatVersion)"
        case .vocabularyMismatch(let f, let m):
            return "\(f): bad vocabulary: \(m)"
        case .shapeMismatch(let f, let k, let e, let found):
            return "\(f): \(k) is \(found) but the vocabulary, groups and hidden_size give \(e)"
        case .wrongSize(let f, let e, let found, let s):
            return "\(f): \(found) bytes, expected \(e) (\(s[0]) × \(s[1]) float32)"
        case .wrongSizeForGroups(let f, let e, let found, let s, let g):
            return "\(f): \(found) bytes, expected \(e) (\(s[0]) × \(s[1]) float32) for model.json's groups: \(g)"
        case .checksumMismatch(let f, let e, let found):
            return "\(f): SHA-256 \(found) does not match model.json's \(e) (file corrupted or replaced)"
        case .notFinite(let f, let r, let c, let v):
            return "\(f): weight at row \(r), column \(c) is \(v); weights must be finite"
        case .weights(let f, let m):
            return "\(f): \(m)"
        }
    }
}
