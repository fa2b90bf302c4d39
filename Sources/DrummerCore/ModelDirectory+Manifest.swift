// model.json: its Codable form, decoding with one-line errors, and validation
// against the vocabulary and the hidden size.
import Foundation

/// The manifest of a model directory. Keys match the original project's vocab.json
/// (`ix_to_note`, `ix_to_tick`, `hidden_size`, `Wx_shape`, `Wy_shape`, `gate_order`,
/// `dtype`); the rest are optional so that file is accepted as it is.
public struct ModelManifest: Codable, Equatable, Sendable {
    public var format: String?
    public var formatVersion: Int?
    public var ixToNote: [Int]
    public var ixToTick: [Int]
    public var hiddenSize: Int
    public var wxShape: [Int]?
    public var wyShape: [Int]?
    public var gateOrder: [String]?
    public var dtype: String?
    public var sha256: [String: String]?
    public var metadata: [String: String]?

    enum CodingKeys: String, CodingKey {
        case format
        case formatVersion = "format_version"
        case ixToNote = "ix_to_note"
        case ixToTick = "ix_to_tick"
        case hiddenSize = "hidden_size"
        case wxShape = "Wx_shape"
        case wyShape = "Wy_shape"
        case gateOrder = "gate_order"
        case dtype, sha256, metadata
    }

    static func decode(_ data: Data, file: String) throws -> ModelManifest {
        do {
            return try JSONDecoder().decode(ModelManifest.self, from: data)
        } catch let DecodingError.keyNotFound(key, ctx) {
            throw ModelDirectoryError.badManifest(
                file: file, message: "missing key \(path(ctx.codingPath + [key]))")
        } catch let DecodingError.typeMismatch(type, ctx) {
            throw ModelDirectoryError.badManifest(
                file: file, message: "\(path(ctx.codingPath)) is not of type \(type)")
        } catch let DecodingError.valueNotFound(type, ctx) {
            throw ModelDirectoryError.badManifest(
                file: file, message: "\(path(ctx.codingPath)) is null, expected \(type)")
        } catch let DecodingError.dataCorrupted(ctx) {
            let detail = (ctx.underlyingError as NSError?)?.localizedDescription ?? ctx.debugDescription
            throw ModelDirectoryError.badManifest(
                file: file, message: ctx.codingPath.isEmpty
                    ? "not valid JSON: \(detail)" : "\(path(ctx.codingPath)): \(ctx.debugDescription)")
        } catch {
            throw ModelDirectoryError.badManifest(file: file, message: "\(error)")
        }
    }

    private static func path(_ keys: [CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    /// Largest hidden size accepted, so a bad manifest cannot request a huge read.
    static let maxHidden = 1 << 14

    func validated(file: String) throws -> (Vocabulary, ModelShape) {
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
        guard vocabulary.ticks <= 1 << 20 else { throw bad("ix_to_tick has \(vocabulary.ticks) entries") }
        let shape = vocabulary.shape(hidden: hiddenSize)
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
        return (vocabulary, shape)
    }
}

/// What is wrong with a model directory; each names the file.
public enum ModelDirectoryError: Error, CustomStringConvertible, Equatable {
    case missingDirectory(path: String)
    case notADirectory(path: String)
    case missingFile(path: String)
    case unreadable(path: String, message: String)
    case badManifest(file: String, message: String)
    case unsupportedFormat(file: String, format: String, version: Int?)
    case vocabularyMismatch(file: String, message: String)
    case shapeMismatch(file: String, key: String, expected: [Int], found: [Int])
    case wrongSize(file: String, expected: Int, found: Int, shape: [Int])
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
        case .badManifest(let f, let m):
            return "\(f): \(m)"
        case .unsupportedFormat(let f, let name, let v):
            return "\(f): unsupported format \"\(name)\"\(v.map { " version \($0)" } ?? ""); "
                + "this drummer reads \(ModelDirectory.formatName) version \(ModelDirectory.formatVersion)"
        case .vocabularyMismatch(let f, let m):
            return "\(f): bad vocabulary: \(m)"
        case .shapeMismatch(let f, let k, let e, let found):
            return "\(f): \(k) is \(found) but the vocabulary and hidden_size give \(e)"
        case .wrongSize(let f, let e, let found, let s):
            return "\(f): \(found) bytes, expected \(e) (\(s[0]) × \(s[1]) float32)"
        case .checksumMismatch(let f, let e, let found):
            return "\(f): SHA-256 \(found) does not match model.json's \(e) (file corrupted or replaced)"
        case .notFinite(let f, let r, let c, let v):
            return "\(f): weight at row \(r), column \(c) is \(v); weights must be finite"
        case .weights(let f, let m):
            return "\(f): \(m)"
        }
    }
}
