// The deployable model: a directory holding
//   Wx.bin      (I+H+1) × 4H float32, little-endian, row-major, no header: layer 0
//   Wx1.bin …   (2H+1) × 4H  the same for layers 1…L−1 of a stacked model (its input rows
//               multiply the h of the layer below)
//   Wy.bin      (H+1) × O    float32, little-endian, row-major, no header
//   model.json  the manifest: lookup tables, hidden size, shapes, gate order, groups, the
//               layers (when more than one), dtype, SHA-256 of each .bin, format name/version,
//               metadata.
// The original 2017 project's `vocab.json` (no format, no checksums) is accepted
// as a model.json. Written by export, read by sample, humanize and eval.
import Foundation
import DrummerCore
import FileOutput

/// A model read from a model directory.
public struct LoadedModel: Sendable, Equatable {
    public let weights: LSTMWeights
    /// The input and output groups and their tables (the original layout for a version 1 manifest).
    public let groups: ModelGroups
    public var vocabulary: Vocabulary { groups.vocabulary }
    /// Free-form training information (empty for the original's vocab.json).
    public let metadata: [String: String]
    /// The manifest's format version, nil for a manifest without one (the original's).
    public let formatVersion: Int?
    /// True when the manifest listed checksums and both .bin files matched them.
    public let checksumsVerified: Bool
    /// The settings the model is sampled at by default (model.json's "sampling"; empty: every
    /// group at 1, no warm-up).
    public var sampling = SamplingDefaults()

    public var shape: ModelShape { weights.shape }
}

public enum ModelDirectory {
    package static let formatName = "drummer-model"
    /// The newest version this code reads. 2: model.json lists the groups ("groups"); 3: it lists
    /// the layers ("layers", with Wx1.bin… for layers above the first). Version 1 files and the
    /// original's vocab.json still load.
    public static let formatVersion = 3
    /// The version written for a model of `shape`: 2 for one layer (earlier releases read it,
    /// and a one-layer model's files are what they always were), 3 for a stacked one.
    public static func version(for shape: ModelShape) -> Int { shape.layers > 1 ? 3 : 2 }
    /// The file of layer k's fused matrix: Wx.bin, Wx1.bin, Wx2.bin, …
    package static func wxFile(layer k: Int) -> String { ParameterLayout.wxName(layer: k) + ".bin" }
    package static let manifestFile = "model.json"
    package static let wxFile = "Wx.bin"
    package static let wyFile = "Wy.bin"
    public static let dtype = "float32 little-endian, row-major"

    /// Writes `weights` and `vocabulary` as a model directory at `path`, through a
    /// temporary directory swapped into place. An existing directory is replaced only
    /// when it is empty or a model directory (holds model.json).
    public static func write(
        weights: LSTMWeights, groups: ModelGroups, to path: String,
        metadata: [String: String] = [:], sampling: SamplingDefaults = SamplingDefaults()
    ) throws {
        let files = try encode(weights: weights, groups: groups, metadata: metadata, sampling: sampling, path: path)
        try AtomicOutput.directory(at: path, kind: .model) { dir in try write(files, into: dir, path: path) }
    }

    /// Writes a model of the original layout (note and tick in and out).
    public static func write(
        weights: LSTMWeights, vocabulary: Vocabulary, to path: String, metadata: [String: String] = [:]
    ) throws {
        try write(weights: weights, groups: ModelGroups(vocabulary: vocabulary), to: path, metadata: metadata)
    }

    /// Checks and encodes the three files of a model directory (`path` names it in errors).
    /// `sampling` becomes model.json's "sampling" (temperatures of 1 and no warm-up are left out).
    public static func encode(
        weights: LSTMWeights, groups: ModelGroups, metadata: [String: String] = [:],
        sampling: SamplingDefaults = SamplingDefaults(), path: String
    ) throws -> [(name: String, data: Data)] {
        let shape = weights.shape, vocabulary = groups.vocabulary
        guard groups.grid != nil || (shape.notes == vocabulary.notes && shape.ticks == vocabulary.ticks) else {
            throw ModelDirectoryError.vocabularyMismatch(
                file: manifestFile,
                message: "weights have \(shape.notes) notes and \(shape.ticks) ticks, "
                    + "the vocabulary \(vocabulary.notes) notes and \(vocabulary.ticks) ticks")
        }
        let expected = groups.shape(hidden: shape.hidden, layers: shape.layers)
        guard expected == shape else {
            throw ModelDirectoryError.badManifest(file: manifestFile, message:
                "the groups give input groups \(expected.inputGroups) and output groups \(expected.outputGroups), the weights \(shape.inputGroups) and \(shape.outputGroups)")
        }
        do { try weights.checkFinite() } catch let e as WeightsError {
            throw ModelDirectoryError.weights(file: path, message: e.description)
        }
        do { try TemperatureSetting(groups: sampling.temperatures).check(for: groups, option: "sampling temperature") } catch {
            throw ModelDirectoryError.badManifest(file: manifestFile, message: error.description)
        }
        let layout = shape.parameters
        let wx = weights.layerWx.map(littleEndianBytes)
        let wy = littleEndianBytes(weights.wy)
        var sums = [wyFile: SHA256.hex(wy)]
        for (k, data) in wx.enumerated() { sums[wxFile(layer: k)] = SHA256.hex(data) }
        let layers = shape.layers == 1 ? nil : layout.layers.map { l in
            LayerManifest(file: wxFile(layer: l.index), shape: [l.wx.rows, l.wx.cols],
                          input: l.oneHotInputs ? groups.inputNames.joined(separator: ", ") : "h of layer \(l.index - 1)")
        }
        let manifest = ModelManifest(
            format: formatName, formatVersion: version(for: shape),
            ixToNote: vocabulary.ixToNote, ixToTick: vocabulary.ixToTick,
            hiddenSize: shape.hidden,
            wxShape: [shape.wxRows, shape.wxCols], wyShape: [shape.wyRows, shape.wyCols],
            gateOrder: ModelShape.gateOrder, dtype: dtype,
            sha256: sums, metadata: metadata, groups: GroupsManifest(groups), layers: layers,
            sampling: SamplingManifest(sampling))
        return wx.enumerated().map { (wxFile(layer: $0.offset), $0.element) } + [(wyFile, wy),
                (manifestFile, try JSONOutput.encode(manifest))]
    }

    /// Writes encoded files into the (temporary) directory `dir`.
    public static func write(_ files: [(name: String, data: Data)], into dir: URL, path: String) throws {
        for (name, data) in files {
            do { try data.write(to: dir.appendingPathComponent(name)) } catch {
                throw OutputError(path: (path as NSString).appendingPathComponent(name),
                                  message: "cannot write: \(ErrorText.describe(error))")
            }
        }
    }

    /// Reads and validates the model directory at `path`. A directory replaced while it is read
    /// (another command's `export -o` swapping its new one in) could give model.json of one
    /// version and a weight file of the other, a checksum mismatch that is no damage: when the
    /// directory at `path` changed during the read, it is read again (PathNames.readingWhole).
    public static func load(path: String) throws -> LoadedModel {
        try PathNames.readingWhole(path) { try loadOnce(path: path) }
    }

    /// Tests: runs between reading model.json and the weight files (where a swap of the
    /// directory by another process lands).
    nonisolated(unsafe) static var afterManifestRead: (() -> Void)?

    private static func loadOnce(path: String) throws -> LoadedModel {
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
        let (groups, shape) = try manifest.validated(file: manifestPath)
        afterManifestRead?()

        // Sizes are checked before reading, so a bad file is never read whole. For a model with
        // position or velocity groups a wrong size says which groups model.json gave.
        func weightFile(_ name: String, rows: Int, cols: Int, _ groupSizes: String) throws -> Data {
            do { return try readFile(file(name), size: rows * cols * 4, shape: [rows, cols]) } catch let
                ModelDirectoryError.wrongSize(f, expected, found, s) where !groups.isOriginalLayout {
                throw ModelDirectoryError.wrongSizeForGroups(
                    file: f, expected: expected, found: found, shape: s, groups: groupSizes + "; hidden size \(shape.hidden)")
            }
        }
        func sizes(_ names: [String], _ sizes: [Int]) -> String {
            zip(names, sizes).map { "\($0) \($1)" }.joined(separator: ", ")
        }
        let layout = shape.parameters
        var files: [(name: String, data: Data)] = []
        for l in layout.layers {
            let what = l.oneHotInputs ? "inputs " + sizes(groups.inputNames, shape.inputGroups) : "h of layer \(l.index - 1)"
            files.append((wxFile(layer: l.index), try weightFile(wxFile(layer: l.index), rows: l.wx.rows, cols: l.wx.cols, what)))
        }
        files.append((wyFile, try weightFile(wyFile, rows: shape.wyRows, cols: shape.wyCols,
                                             "outputs " + sizes(groups.outputNames, shape.outputGroups))))
        // A layer model.json does not list would be left out in silence, the model cut short:
        // a weight file of the next layer, or a checksum of a file the model does not have,
        // says model.json and the directory disagree.
        let next = wxFile(layer: layout.layers.count)
        if fm.fileExists(atPath: file(next)) {
            throw ModelDirectoryError.badManifest(
                file: manifestPath, message: "it gives \(layout.layers.count) layer(s), but \(next) is in the directory too: "
                    + "model.json and the weight files disagree; export the model again")
        }
        if let extra = manifest.sha256?.keys.sorted().first(where: { name in !files.contains { $0.name == name } }) {
            throw ModelDirectoryError.badManifest(
                file: manifestPath, message: "sha256 lists \(extra), which is not one of the model's files "
                    + "(\(files.map(\.name).joined(separator: ", ")) for its \(layout.layers.count) layer(s))")
        }
        var verified = false
        if let sums = manifest.sha256 {
            for (name, _) in files where sums[name] == nil {
                throw ModelDirectoryError.badManifest(
                    file: manifestPath, message: "sha256 has no entry for \(name)")
            }
            for (name, data) in files {
                let expected = sums[name] ?? ""
                let found = SHA256.hex(data)
                guard found == expected.lowercased() else {
                    throw ModelDirectoryError.checksumMismatch(
                        file: file(name), expected: expected, found: found)
                }
            }
            verified = true
        }
        let weights: LSTMWeights
        do {
            weights = try LSTMWeights(shape: shape, layerWx: files.dropLast().map { floats($0.data) },
                                      wy: floats(files[files.count - 1].data))
        } catch {
            throw ModelDirectoryError.weights(file: path, message: "\(error)")
        }
        do { try weights.checkFinite() } catch let WeightsError.notFinite(m, r, c, v) {
            throw ModelDirectoryError.notFinite(file: file(m + ".bin"), row: r, col: c, value: v)
        }
        return LoadedModel(weights: weights, groups: groups,
                           metadata: manifest.metadata ?? [:],
                           formatVersion: manifest.formatVersion, checksumsVerified: verified,
                           sampling: manifest.sampling?.defaults ?? SamplingDefaults())
    }

    // MARK: - Bytes

    /// Reads a weight file after checking it holds exactly `size` bytes (the size of
    /// what a symbolic link points to, not of the link).
    static func readFile(_ path: String, size expected: Int, shape: [Int]) throws -> Data {
        let what = "\(shape[0]) × \(shape[1]) float32 weights"
        let size = try regularFileSize(path, expected: what)
        guard size == expected else {
            throw ModelDirectoryError.wrongSize(file: displayPath(path), expected: expected, found: size, shape: shape)
        }
        let data = try readFile(path, limit: expected, expected: what)
        guard data.count == expected else {
            throw ModelDirectoryError.wrongSize(file: displayPath(path), expected: expected, found: data.count, shape: shape)
        }
        return data
    }

    /// Reads a regular file of at most `limit` bytes.
    static func readFile(_ path: String, limit: Int, expected: String = "the JSON manifest") throws -> Data {
        let size = try regularFileSize(path, expected: expected)
        if size > limit {
            throw ModelDirectoryError.unreadable(path: displayPath(path), message: "is \(size) bytes, larger than \(limit)")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ModelDirectoryError.unreadable(path: displayPath(path), message: ErrorText.lastErrno)
        }
        defer { close(fd) }
        var data = Data(count: limit + 1)
        var got = 0
        while got <= limit {
            let n = data.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress! + got, raw.count - got) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ModelDirectoryError.unreadable(path: displayPath(path), message: ErrorText.lastErrno)
            }
            if n == 0 { break }
            got += n
        }
        return data.prefix(got)
    }

    /// The size of the regular file at `path` (symbolic links followed); a directory
    /// or a device there is an error saying what was `expected`.
    static func regularFileSize(_ path: String, expected: String) throws -> Int {
        var st = stat()
        guard stat(path, &st) == 0 else {
            let code = errno
            if code == ENOENT {
                var link = stat()
                if lstat(path, &link) == 0 {
                    throw ModelDirectoryError.unreadable(
                        path: displayPath(path), message: "the symbolic link's target does not exist")
                }
                throw ModelDirectoryError.missingFile(path: path)
            }
            throw ModelDirectoryError.unreadable(path: displayPath(path), message: ErrorText.errno(code))
        }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return Int(st.st_size)
        case S_IFDIR: throw ModelDirectoryError.wrongKind(path: displayPath(path), found: "a directory", expected: expected)
        default:
            throw ModelDirectoryError.wrongKind(
                path: displayPath(path), found: AtomicOutput.fileTypeName(st.st_mode), expected: expected)
        }
    }

    /// `path`, or "path (a link to target)" for a symbolic link.
    static func displayPath(_ path: String) -> String {
        guard let target = AtomicOutput.readLink(path) else { return path }
        return "\(path) (a link to \(target))"
    }

    /// float32 values as little-endian bytes (the .bin files, and safetensors and ONNX data).
    package static func littleEndianBytes(_ values: [Float]) -> Data {
        var data = Data(count: values.count * 4)
        data.withUnsafeMutableBytes { raw in
            for (i, v) in values.enumerated() {
                raw.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: 4 * i, as: UInt32.self)
            }
        }
        return data
    }

    /// Little-endian float32 bytes as values (a trailing partial value is ignored).
    package static func floats(_ data: Data) -> [Float] {
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
