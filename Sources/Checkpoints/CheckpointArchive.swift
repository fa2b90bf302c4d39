// The HDF5 side of checkpoints, on HDF5Kit: files are written through a
// temporary name and renamed into place; object paths are absolute ("/model/Wx").
import Foundation
import HDF5Kit

enum CheckpointArchive {
    /// Creates `path` atomically (temporary file, close, rename) and lets `body` fill it.
    static func create(path: String, _ body: (HDF5Writing) throws -> Void) throws {
        try H5File.writeAtomically(to: path) { try body(KitArchive(file: $0)) }
    }

    /// Opens `path` read-only for `body`.
    static func open<T>(path: String, _ body: (HDF5Reading) throws -> T) throws -> T {
        let file = try H5File.open(path)
        defer { try? file.close() }
        return try body(KitArchive(file: file))
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

    func children(_ group: String) throws -> [String] { try file.group(Self.relative(group)).members() }

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
}
