// What a file is, by its first bytes: for the error of a command given a file another command
// takes (a checkpoint to `import`, a safetensors file to `sample`), which then says what the
// file is and which command reads it, instead of how the file breaks the format it was read as.
//
//   drummer checkpoint   the text "drummer-checkpoint-seal " (its sealed header), or the HDF5
//                        signature at byte 0 (a version 1 checkpoint, or another HDF5 file)
//   safetensors          N, an unsigned 64-bit little-endian header length the file can hold,
//                        then "{" at byte 8 (the header's JSON object)
//   ONNX                 a protobuf ModelProto: field 1 (ir_version, a varint of one byte) and
//                        then the tag of another ModelProto field (producer_name, graph, …)
import Foundation

public enum FileSignature: Equatable, Sendable {
    /// A sealed drummer training checkpoint.
    case drummerCheckpoint
    /// An HDF5 file without drummer's seal (a version 1 checkpoint, or another HDF5 file).
    case hdf5
    /// A safetensors file (PyTorch tensors, as python/train_torch.py and `export --format safetensors` write).
    case safetensors
    /// An ONNX model (as `export --format onnx` writes).
    case onnx

    /// The bytes read from the start of a file: enough for each signature.
    public static let prefixLength = 32

    /// The start of a sealed checkpoint's header, before its version ("1\n": CheckpointSeal).
    package static let sealPrefix = "drummer-checkpoint-seal "
    static let sealText = Array(sealPrefix.utf8)
    /// HDF5's format signature, at byte 0 of an HDF5 file (its superblock's).
    package static let hdf5Signature: [UInt8] = [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A safetensors file's header length: its first 8 bytes, unsigned, little-endian.
    package static func safetensorsHeaderLength(_ bytes: [UInt8]) -> UInt64 {
        var n: UInt64 = 0
        for i in 0..<min(8, bytes.count) { n |= UInt64(bytes[i]) << (8 * UInt64(i)) }
        return n
    }
    /// ModelProto's fields after ir_version (2 producer_name, 3 producer_version, 4 domain,
    /// 5 model_version, 6 doc_string, 7 graph, 8 opset_import), as their protobuf tags.
    static let onnxFieldTags: Set<UInt8> = [0x12, 0x1A, 0x22, 0x28, 0x32, 0x3A, 0x42]

    /// What `prefix`, the first bytes of a file of `size` bytes, says the file is (nil: none of these).
    public static func recognize(prefix: [UInt8], size: Int) -> FileSignature? {
        func starts(_ bytes: [UInt8]) -> Bool { prefix.count >= bytes.count && Array(prefix.prefix(bytes.count)) == bytes }
        if starts(sealText) { return .drummerCheckpoint }
        if starts(hdf5Signature) { return .hdf5 }
        if prefix.count > 8, prefix[8] == UInt8(ascii: "{") {
            let n = safetensorsHeaderLength(prefix)
            if n >= 2, n <= UInt64(max(size - 8, 0)) { return .safetensors }
        }
        if prefix.count > 2, prefix[0] == 0x08, (1...0x7F).contains(prefix[1]), onnxFieldTags.contains(prefix[2]) { return .onnx }
        return nil
    }

    /// What the file at `path` is, from its first bytes (nil: unreadable, or none of these).
    public static func recognize(path: String) -> FileSignature? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: prefixLength),
              let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue else { return nil }
        return recognize(prefix: [UInt8](data), size: size)
    }

    /// What the file is, as an error says it ("a safetensors file").
    public var name: String {
        switch self {
        case .drummerCheckpoint: return "a drummer checkpoint"
        case .hdf5: return "an HDF5 file (a drummer checkpoint of format version 1, or another program's)"
        case .safetensors: return "a safetensors file"
        case .onnx: return "an ONNX model"
        }
    }

    /// What a command reads where it was given a file of another kind.
    public enum Wanted: Sendable {
        /// A model: a model directory or a checkpoint (sample, eval, export, …).
        case model
        /// A safetensors file (import).
        case safetensors
    }

    /// What `path`, a file of this kind, is and which command takes it, for a command that wants
    /// another kind: "it is a safetensors file: turn it into a model directory with drummer import …".
    public func refusal(path: String, wanted: Wanted) -> String {
        let file = ShellWords.quoted(path)
        switch self {
        case .drummerCheckpoint, .hdf5:
            return "it is \(name): sample, eval and the other commands that take a model read it as it is, and "
                + "drummer export \(file) -o DIR turns it into a model directory"
        case .safetensors:
            return "it is \(name): turn it into a model directory with drummer import \(file) -o DIR"
        case .onnx:
            let instead = wanted == .model ? "give the model directory or checkpoint it was exported from"
                : "import the safetensors file of the same model (drummer export MODEL --format safetensors writes one)"
            return "it is \(name) (what drummer export --format onnx writes, for ONNX Runtime), which drummer does not "
                + "read: \(instead)"
        }
    }
}
