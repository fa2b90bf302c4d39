// The seal of a checkpoint file: the first 512 bytes (an HDF5 user block, which every
// HDF5 reader skips) hold a short text header with the SHA-256 of the rest of the file.
// It is checked before libhdf5 ever sees the file, because libhdf5 itself can crash on
// some damaged files; together with HDF5's own checksums (object headers, Fletcher-32
// on every dataset) any changed byte is refused with an error naming the file.
//
//   drummer-checkpoint-seal 1\n
//   sha256 <64 lowercase hex digits>\n
//   bytes <decimal count of the bytes after the header>\n
//   <zero bytes up to offset 512>
//
// The header is compared byte for byte with the one its own fields render, so a
// changed bit in it (zero padding included) is caught too. Version 1 checkpoints
// (format_version 1) have no seal: they start with the HDF5 signature and are read as before.
import DrummerCore
import Foundation
import FileOutput

enum CheckpointSeal {
    static let size = 512
    static let magic = FileSignature.sealPrefix + "1\n"
    /// The 8-byte HDF5 superblock signature.
    static let hdf5Signature = FileSignature.hdf5Signature

    /// The header for the bytes that follow it.
    static func header(for rest: UnsafeRawBufferPointer) -> [UInt8] {
        render(sha256: SHA256.hexString(SHA256.hash(rest)), count: rest.count)
    }

    static func render(sha256: String, count: Int) -> [UInt8] {
        var bytes = Array("\(magic)sha256 \(sha256)\nbytes \(count)\n".utf8)
        precondition(bytes.count <= size, "checkpoint seal longer than its block")
        bytes += [UInt8](repeating: 0, count: size - bytes.count)
        return bytes
    }

    /// What the start of a file says it is.
    enum Kind: Equatable {
        /// A sealed file whose seal matches its contents.
        case sealed
        /// An unsealed HDF5 file (a version 1 checkpoint, or another HDF5 file).
        case unsealed
    }

    /// Checks the file at `path` before libhdf5 opens it. Throws `CheckpointError` for a
    /// missing, unreadable, non-HDF5, damaged or tampered file.
    static func check(path: String) throws -> Kind {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CheckpointError.missing(path: path)
        }
        guard !isDirectory.boolValue else { throw CheckpointError.unreadable(path: path, reason: "is a directory") }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw CheckpointError.unreadable(path: path, reason: ErrorText.reading(error, path: path))
        }
        return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Kind in
            func starts(_ bytes: [UInt8], at offset: Int) -> Bool {
                raw.count >= offset + bytes.count && zip(raw[offset..<(offset + bytes.count)], bytes).allSatisfy { $0 == $1 }
            }
            if starts(hdf5Signature, at: 0) { return .unsealed }
            let magicBytes = Array(magic.utf8)
            guard starts(magicBytes, at: 0) || starts(hdf5Signature, at: size) else {
                // A file another command takes (a safetensors file to import, an ONNX model) is named as what it is.
                if let kind = FileSignature.recognize(prefix: Array(raw.prefix(FileSignature.prefixLength)), size: raw.count),
                   kind == .safetensors || kind == .onnx {
                    throw CheckpointError.notACheckpoint(path: path, reason: kind.refusal(path: path, wanted: .model))
                }
                throw CheckpointError.notACheckpoint(path: path, reason: raw.isEmpty ? "the file is empty" : "not an HDF5 file")
            }
            guard raw.count > size else {
                throw CheckpointError.corrupt(path: path, reason: "the file ends inside its 512-byte header (truncated)")
            }
            let block = UnsafeRawBufferPointer(rebasing: raw[0..<size])
            let text = String(decoding: block.prefix { $0 != 0 }, as: UTF8.self)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            guard lines.count == 4, lines[0] + "\n" == magic, lines[1].hasPrefix("sha256 "), lines[2].hasPrefix("bytes "),
                  lines[3].isEmpty, let count = Int(lines[2].dropFirst(6)),
                  render(sha256: String(lines[1].dropFirst(7)), count: count).elementsEqual(block)
            else {
                throw CheckpointError.corrupt(path: path, reason: "its header (the first 512 bytes) is damaged")
            }
            let rest = UnsafeRawBufferPointer(rebasing: raw[size...])
            guard rest.count == count else {
                throw CheckpointError.corrupt(path: path, reason:
                    "it holds \(rest.count) bytes after its header where \(count) were written (truncated or appended to)")
            }
            let expected = String(lines[1].dropFirst(7))
            guard SHA256.hexString(SHA256.hash(rest)) == expected else {
                throw CheckpointError.corrupt(path: path, reason:
                    "its contents do not match the SHA-256 recorded when it was written (a changed byte: disk or copy error)")
            }
            return .sealed
        }
    }
}
