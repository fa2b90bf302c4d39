// The HDF5 side of checkpoints, on HDF5Kit. Files are written whole in memory, then to
// a temporary name, fsynced and renamed into place (a full disk leaves the previous file
// untouched); object headers carry checksums, every dataset a Fletcher-32, and the file
// starts with a seal holding the SHA-256 of the rest (CheckpointSeal), checked before
// libhdf5 opens it. Object paths are absolute ("/model/Wx").
import Foundation
import HDF5Kit

enum CheckpointArchive {
    /// How checkpoints are written: checksummed HDF5 (needs HDF5 ≥ 1.10 to read) with a seal.
    static let options = H5File.CreateOptions(checksummedMetadata: true, fletcher32: true,
                                               userBlockSize: CheckpointSeal.size)

    /// Creates `path` atomically (temporary file, seal, rename) and lets `body` fill it.
    static func create(path: String, _ body: (HDF5Writing) throws -> Void) throws {
        try H5File.writeAtomically(to: path, options: options, userBlock: { CheckpointSeal.header(for: $0) }) {
            try body(KitArchive(file: $0))
        }
    }

    /// Checks the seal, then opens `path` read-only for `body`; `sealed` says whether the file
    /// had a seal (version 2) or not (version 1).
    static func open<T>(path: String, _ body: (_ reader: HDF5Reading, _ sealed: Bool) throws -> T) throws -> T {
        let kind = try CheckpointSeal.check(path: path)
        let file = try H5File.open(path)
        defer { try? file.close() }
        return try body(KitArchive(file: file), kind == .sealed)
    }
}

struct KitArchive: HDF5Writing, HDF5Reading {
    let file: H5File

    /// "/a/b" -> "a/b"; "/" -> "".
    static func relative(_ path: String) -> String { String(path.drop { $0 == "/" }) }

    func object(_ path: String) throws -> H5Object {
        let rel = Self.relative(path)
        if rel.isEmpty { return file }
        switch try file.kind(of: rel) {
        case .dataset: return try file.dataset(rel)
        default: return try file.group(rel)
        }
    }

    func createGroup(_ path: String) throws { try file.createGroup(Self.relative(path)) }

    func write(_ path: String, float32 values: [Float], shape: [Int]) throws {
        try file.createDataset(Self.relative(path), values: values, shape: shape)
    }
    func write(_ path: String, int64 values: [Int64], shape: [Int]) throws {
        try file.createDataset(Self.relative(path), values: values, shape: shape)
    }
    func write(_ path: String, uint64 values: [UInt64], shape: [Int]) throws {
        try file.createDataset(Self.relative(path), values: values, shape: shape)
    }
    func setAttribute(_ object: String, _ name: String, int64 value: Int64) throws {
        try self.object(object).setAttribute(name, int64: value)
    }
    func setAttribute(_ object: String, _ name: String, double value: Double) throws {
        try self.object(object).setAttribute(name, double: value)
    }
    func setAttribute(_ object: String, _ name: String, string value: String) throws {
        try self.object(object).setAttribute(name, string: value)
    }

    func children(_ group: String) throws -> [String] {
        let rel = Self.relative(group)
        return rel.isEmpty ? try file.members() : try file.group(rel).members()
    }

    func read<T: H5Numeric>(_ path: String, _ type: T.Type) throws -> (values: [T], shape: [Int]) {
        let ds = try file.dataset(Self.relative(path))
        return (try ds.read(type), try ds.shape())
    }
    func readFloat32(_ path: String) throws -> (values: [Float], shape: [Int]) { try read(path, Float.self) }
    func readInt64(_ path: String) throws -> (values: [Int64], shape: [Int]) { try read(path, Int64.self) }
    func readUInt64(_ path: String) throws -> (values: [UInt64], shape: [Int]) { try read(path, UInt64.self) }
    func int64Attribute(_ object: String, _ name: String) throws -> Int64 { try self.object(object).int64Attribute(name) }
    func doubleAttribute(_ object: String, _ name: String) throws -> Double { try self.object(object).doubleAttribute(name) }
    func stringAttribute(_ object: String, _ name: String) throws -> String { try self.object(object).stringAttribute(name) }
    func hasAttribute(_ object: String, _ name: String) throws -> Bool { try self.object(object).hasAttribute(name) }
}
