// The deployable model: a directory holding
//   Wx.bin      (V+H+1) × 4H float32, little-endian, row-major, no header
//   Wy.bin      (H+1) × V    float32, little-endian, row-major, no header
//   model.json  the manifest: lookup tables, hidden size, shapes, gate order,
//               dtype, SHA-256 of each .bin, format name/version, metadata.
// The original 2017 project's `vocab.json` (no format, no checksums) is accepted
// as a model.json. Written by export, read by sample, `train --init-from` and eval.
import Foundation

/// A model read from a model directory.
public struct LoadedModel: Sendable, Equatable {
    public let weights: LSTMWeights
    public let vocabulary: Vocabulary
    /// Free-form training information (empty for the original's vocab.json).
    public let metadata: [String: String]
    /// The manifest's format version, nil for a manifest without one (the original's).
    public let formatVersion: Int?
    /// True when the manifest listed checksums and both .bin files matched them.
    public let checksumsVerified: Bool

    public var shape: ModelShape { weights.shape }
}

public enum ModelDirectory {
    public static let formatName = "drummer-model"
    public static let formatVersion = 1
    public static let manifestFile = "model.json"
    public static let wxFile = "Wx.bin"
    public static let wyFile = "Wy.bin"
    public static let dtype = "float32 little-endian, row-major"

    /// Writes `weights` and `vocabulary` as a model directory at `path`, through a
    /// temporary directory renamed into place (an existing directory is replaced).
    public static func write(
        weights: LSTMWeights, vocabulary: Vocabulary, to path: String,
        metadata: [String: String] = [:]
    ) throws {
        let shape = weights.shape
        guard shape.notes == vocabulary.notes, shape.ticks == vocabulary.ticks else {
            throw ModelDirectoryError.vocabularyMismatch(
                file: manifestFile,
                message: "weights have \(shape.notes) notes and \(shape.ticks) ticks, "
                    + "the vocabulary \(vocabulary.notes) notes and \(vocabulary.ticks) ticks")
        }
        do { try weights.checkFinite() } catch let e as WeightsError {
            throw ModelDirectoryError.weights(file: path, message: e.description)
        }
        let wx = littleEndianBytes(weights.wx)
        let wy = littleEndianBytes(weights.wy)
        let manifest = ModelManifest(
            format: formatName, formatVersion: formatVersion,
            ixToNote: vocabulary.ixToNote, ixToTick: vocabulary.ixToTick,
            hiddenSize: shape.hidden,
            wxShape: [shape.wxRows, shape.wxCols], wyShape: [shape.wyRows, shape.wyCols],
            gateOrder: ModelShape.gateOrder, dtype: dtype,
            sha256: [wxFile: SHA256.hex(wx), wyFile: SHA256.hex(wy)],
            metadata: metadata)
        let json = try JSONOutput.encode(manifest)
        try AtomicOutput.directory(at: path) { dir in
            for (name, data) in [(wxFile, wx), (wyFile, wy), (manifestFile, json)] {
                let url = dir.appendingPathComponent(name)
                do { try data.write(to: url) } catch {
                    throw OutputError(path: (path as NSString).appendingPathComponent(name),
                                      message: "cannot write: \(error.localizedDescription)")
                }
            }
        }
    }

    /// Reads and validates the model directory at `path`.
    public static func load(path: String) throws -> LoadedModel {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: path, isDirectory: &isDir) else {
            throw ModelDirectoryError.missingDirectory(path: path)
        }
        guard isDir.boolValue else { throw ModelDirectoryError.notADirectory(path: path) }
        func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

        let manifestPath = file(manifestFile)
        let manifestData = try readFile(manifestPath, limit: 64 << 20)
        let manifest = try ModelManifest.decode(manifestData, file: manifestPath)
        let (vocabulary, shape) = try manifest.validated(file: manifestPath)

        // Sizes are checked before reading, so a bad file is never read whole.
        let wxData = try readFile(file(wxFile), size: shape.wxCount * 4, shape: [shape.wxRows, shape.wxCols])
        let wyData = try readFile(file(wyFile), size: shape.wyCount * 4, shape: [shape.wyRows, shape.wyCols])
        var verified = false
        if let sums = manifest.sha256 {
            for name in [wxFile, wyFile] where sums[name] == nil {
                throw ModelDirectoryError.badManifest(
                    file: manifestPath, message: "sha256 has no entry for \(name)")
            }
            for (name, data) in [(wxFile, wxData), (wyFile, wyData)] {
                let expected = sums[name] ?? ""
                let found = SHA256.hex(data)
                guard found == expected.lowercased() else {
                    throw ModelDirectoryError.checksumMismatch(
                        file: file(name), expected: expected, found: found)
                }
            }
            verified = true
        }
        let wx = floats(wxData), wy = floats(wyData)
        let weights: LSTMWeights
        do { weights = try LSTMWeights(shape: shape, wx: wx, wy: wy) } catch {
            throw ModelDirectoryError.weights(file: path, message: "\(error)")
        }
        do { try weights.checkFinite() } catch let WeightsError.notFinite(m, r, c, v) {
            throw ModelDirectoryError.notFinite(
                file: file(m == "Wx" ? wxFile : wyFile), row: r, col: c, value: v)
        }
        return LoadedModel(weights: weights, vocabulary: vocabulary,
                           metadata: manifest.metadata ?? [:],
                           formatVersion: manifest.formatVersion, checksumsVerified: verified)
    }

    // MARK: - Bytes

    /// Reads a weight file after checking it holds exactly `size` bytes (before and after).
    static func readFile(_ path: String, size expected: Int, shape: [Int]) throws -> Data {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ModelDirectoryError.missingFile(path: path)
        }
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue
        if let size, size != expected {
            throw ModelDirectoryError.wrongSize(file: path, expected: expected, found: size, shape: shape)
        }
        let data = try readFile(path, limit: expected)
        guard data.count == expected else {
            throw ModelDirectoryError.wrongSize(file: path, expected: expected, found: data.count, shape: shape)
        }
        return data
    }

    static func readFile(_ path: String, limit: Int) throws -> Data {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ModelDirectoryError.missingFile(path: path)
        }
        if let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue,
           size > limit {
            throw ModelDirectoryError.unreadable(path: path, message: "is \(size) bytes, larger than \(limit)")
        }
        do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ModelDirectoryError.unreadable(path: path, message: error.localizedDescription)
        }
    }

    static func littleEndianBytes(_ values: [Float]) -> Data {
        var data = Data(count: values.count * 4)
        data.withUnsafeMutableBytes { raw in
            for (i, v) in values.enumerated() {
                raw.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: 4 * i, as: UInt32.self)
            }
        }
        return data
    }

    static func floats(_ data: Data) -> [Float] {
        let n = data.count / 4
        return [Float](unsafeUninitializedCapacity: n) { buf, count in
            data.withUnsafeBytes { raw in
                for i in 0..<n {
                    let bits = raw.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)
                    buf[i] = Float(bitPattern: UInt32(littleEndian: bits))
                }
            }
            count = n
        }
    }
}
