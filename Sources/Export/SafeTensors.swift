// The safetensors container (Hugging Face's format, read by PyTorch's `safetensors.torch`):
//
//   bytes 0..<8       N, the header's length: unsigned 64-bit little-endian
//   bytes 8..<8+N     the header: a JSON object (UTF-8); each key but "__metadata__" names a
//                     tensor: {"dtype": "F32", "shape": [d0, d1, …], "data_offsets": [b, e]},
//                     b and e byte offsets into the data that follows; "__metadata__" is an
//                     object of string values
//   bytes 8+N…        the data: each tensor's elements, row-major, little-endian
//
// Only F32 tensors are written and read here. The header is encoded and decoded with
// Foundation's JSONSerialization; the writer sorts keys and lays the tensors out in key order,
// so the same tensors and metadata give the same bytes. The reader refuses, naming the file and
// the byte offset, a header length past the end of the file, a header that is not a JSON
// object, an entry without dtype, shape or offsets, a dtype other than F32, offsets out of the
// data or out of order, and a tensor whose size disagrees with its shape; a drummer checkpoint or
// an ONNX model is named as what it is, with the command that takes it (FileSignature).
import FileOutput
import Foundation
import ModelFiles

/// A float32 tensor: its shape and its elements, row-major.
public struct Tensor: Equatable, Sendable {
    public var shape: [Int]
    public var values: [Float]

    public init(shape: [Int], values: [Float]) {
        precondition(shape.reduce(1, *) == values.count, "shape \(shape) holds \(shape.reduce(1, *)) elements, got \(values.count)")
        self.shape = shape
        self.values = values
    }
}

/// Why a safetensors file cannot be read; each names the file.
public struct SafeTensorsError: Error, CustomStringConvertible, Equatable, Sendable {
    public let description: String
    init(_ path: String, _ message: String) { description = "\(path): \(message)" }
}

public enum SafeTensors {
    /// The largest header read (the format's own limit is 100 MB).
    static let maximumHeader = 100_000_000

    /// The file's bytes for `tensors` and string `metadata`.
    public static func encode(_ tensors: [String: Tensor], metadata: [String: String]) throws -> Data {
        var header: [String: Any] = [:]
        if !metadata.isEmpty { header["__metadata__"] = metadata }
        var offset = 0
        for name in tensors.keys.sorted() {
            let t = tensors[name]!
            header[name] = ["dtype": "F32", "shape": t.shape, "data_offsets": [offset, offset + 4 * t.values.count]] as [String: Any]
            offset += 4 * t.values.count
        }
        var json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes])
        // Pad the header with spaces to a multiple of 8 bytes (the data then starts aligned).
        while (8 + json.count) % 8 != 0 { json.append(0x20) }
        var out = Data(capacity: 8 + json.count + offset)
        withUnsafeBytes(of: UInt64(json.count).littleEndian) { out.append(contentsOf: $0) }
        out.append(json)
        for name in tensors.keys.sorted() { out.append(ModelDirectory.littleEndianBytes(tensors[name]!.values)) }
        return out
    }

    /// The tensors and metadata of a safetensors file's bytes (`path` names it in errors).
    public static func decode(_ data: Data, path: String) throws -> (tensors: [String: Tensor], metadata: [String: String]) {
        let bytes = [UInt8](data)
        guard bytes.count >= 8 else {
            throw SafeTensorsError(path, "\(bytes.count) bytes: too short for the 8-byte header length")
        }
        // A file another command takes (a checkpoint, an ONNX model) is named as what it is.
        if let kind = FileSignature.recognize(prefix: Array(bytes.prefix(FileSignature.prefixLength)), size: bytes.count),
           kind != .safetensors {
            throw SafeTensorsError(path, "not a safetensors file: " + kind.refusal(path: path, wanted: .safetensors))
        }
        let n = FileSignature.safetensorsHeaderLength(bytes)
        guard n <= UInt64(maximumHeader), Int(n) <= bytes.count - 8 else {
            throw SafeTensorsError(path, "byte 0: header length \(n) runs past the end of the file (\(bytes.count) bytes)")
        }
        let headerEnd = 8 + Int(n)
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: Data(bytes[8..<headerEnd])) } catch {
            throw SafeTensorsError(path, "bytes 8..<\(headerEnd): the header is not JSON (\(error.localizedDescription))")
        }
        guard let header = object as? [String: Any] else {
            throw SafeTensorsError(path, "bytes 8..<\(headerEnd): the header is not a JSON object")
        }
        let dataSize = bytes.count - headerEnd
        var metadata: [String: String] = [:]
        if let m = header["__metadata__"] {
            guard let strings = m as? [String: String] else {
                throw SafeTensorsError(path, "header: __metadata__ must be an object of strings")
            }
            metadata = strings
        }
        var tensors: [String: Tensor] = [:]
        var spans: [(Int, Int, String)] = []
        for (name, value) in header where name != "__metadata__" {
            guard let entry = value as? [String: Any] else {
                throw SafeTensorsError(path, "header: tensor \"\(name)\" is not an object")
            }
            guard let dtype = entry["dtype"] as? String else { throw SafeTensorsError(path, "header: tensor \"\(name)\" has no dtype") }
            guard dtype == "F32" else {
                throw SafeTensorsError(path, "header: tensor \"\(name)\" has dtype \(dtype); only F32 (float32) is read")
            }
            guard let shape = (entry["shape"] as? [Any])?.map({ ($0 as? NSNumber).flatMap { Int(exactly: $0.doubleValue) } ?? -1 }),
                  shape.allSatisfy({ $0 >= 0 }) else {
                throw SafeTensorsError(path, "header: tensor \"\(name)\" has no shape of non-negative integers")
            }
            guard let listed = entry["data_offsets"] as? [Any], listed.count == 2 else {
                throw SafeTensorsError(path, "header: tensor \"\(name)\" has no data_offsets [begin, end]")
            }
            // Byte offsets: whole numbers a file can hold (a number past Int's range, or 1.5, named as it is).
            let offsets = listed.compactMap { ($0 as? NSNumber).flatMap { Int(exactly: $0.doubleValue) } }
            guard offsets.count == 2 else {
                throw SafeTensorsError(path, "header: tensor \"\(name)\": data_offsets [\(listed.map { "\($0)" }.joined(separator: ", "))] are not two byte offsets 0...\(Int.max)")
            }
            let (b, e) = (offsets[0], offsets[1])
            guard b >= 0, b <= e, e <= dataSize else {
                throw SafeTensorsError(path, "header: tensor \"\(name)\": data_offsets [\(b), \(e)] outside the \(dataSize) data bytes "
                                       + "(file bytes \(headerEnd)…\(bytes.count))")
            }
            var count = 1
            for d in shape {
                let (p, overflow) = count.multipliedReportingOverflow(by: d)
                guard !overflow else { throw SafeTensorsError(path, "header: tensor \"\(name)\" has shape \(shape): too large") }
                count = p
            }
            guard e - b == 4 * count else {
                throw SafeTensorsError(path, "header: tensor \"\(name)\" of shape \(shape) needs \(4 * count) bytes, "
                                       + "its data_offsets [\(b), \(e)] give \(e - b)")
            }
            let start = data.startIndex + headerEnd
            tensors[name] = Tensor(shape: shape, values: ModelDirectory.floats(data.subdata(in: (start + b)..<(start + e))))
            spans.append((b, e, name))
        }
        spans.sort { $0.0 < $1.0 }
        for (a, b) in zip(spans, spans.dropFirst()) where b.0 < a.1 {
            throw SafeTensorsError(path, "header: tensors \"\(a.2)\" and \"\(b.2)\" overlap (data bytes \(b.0)..<\(a.1))")
        }
        // The format's rule (the safetensors library's too): the tensors cover the data bytes
        // whole, with no hole and nothing after the last; stray bytes mean a damaged file.
        var covered = 0
        for (b, e, name) in spans {
            guard b == covered else {
                throw SafeTensorsError(path, "data bytes \(covered)..<\(b) (file bytes \(headerEnd + covered)…) belong to no tensor "
                                       + "(a hole before \"\(name)\")")
            }
            covered = e
        }
        guard covered == dataSize else {
            throw SafeTensorsError(path, "file bytes \(headerEnd + covered)…\(bytes.count): \(dataSize - covered) byte(s) after the "
                                   + "last tensor's data belong to no tensor")
        }
        return (tensors, metadata)
    }
}
