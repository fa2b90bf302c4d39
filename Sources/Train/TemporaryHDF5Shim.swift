// TEMPORARY SHIM — NOT DONE WORK. A minimal HDF5 writer/reader on the C API,
// standing in for HDF5Kit (branch `io`) until it lands; replaced then by an
// implementation of the same two interfaces on HDF5Kit.
import CHDF5
import Foundation

struct ShimHDF5Error: Error, CustomStringConvertible {
    let description: String
}

enum CheckpointArchive {
    static func create(path: String, _ body: (HDF5Writing) throws -> Void) throws {
        drummer_H5_silence_errors()
        let f = H5Fcreate(path, drummer_H5F_ACC_TRUNC(), drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT())
        guard f >= 0 else { throw ShimHDF5Error(description: "H5Fcreate failed") }
        defer { H5Fclose(f) }
        try body(ShimFile(id: f))
        guard H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0 else { throw ShimHDF5Error(description: "H5Fflush failed") }
    }

    static func open<T>(path: String, _ body: (HDF5Reading) throws -> T) throws -> T {
        drummer_H5_silence_errors()
        let f = H5Fopen(path, drummer_H5F_ACC_RDONLY(), drummer_H5P_DEFAULT())
        guard f >= 0 else { throw ShimHDF5Error(description: "H5Fopen failed: not an HDF5 file") }
        defer { H5Fclose(f) }
        return try body(ShimFile(id: f))
    }
}

struct ShimFile: HDF5Writing, HDF5Reading {
    let id: hid_t
    func check(_ r: herr_t, _ what: String) throws { if r < 0 { throw ShimHDF5Error(description: what) } }
    func check(id r: hid_t, _ what: String) throws -> hid_t {
        if r < 0 { throw ShimHDF5Error(description: what) }
        return r
    }

    func createGroup(_ path: String) throws {
        let g = try check(id: H5Gcreate2(id, path, drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT()), "create group \(path)")
        H5Gclose(g)
    }
    func writeRaw(_ path: String, file: hid_t, mem: hid_t, shape: [Int], _ buf: UnsafeRawPointer?) throws {
        let dims = shape.map { hsize_t($0) }
        let sp = try check(id: H5Screate_simple(Int32(dims.count), dims, nil), "dataspace \(path)")
        defer { H5Sclose(sp) }
        let d = try check(id: H5Dcreate2(id, path, file, sp, drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT()), "create dataset \(path)")
        defer { H5Dclose(d) }
        try check(H5Dwrite(d, mem, drummer_H5S_ALL(), drummer_H5S_ALL(), drummer_H5P_DEFAULT(), buf), "write \(path)")
    }
    func write(_ path: String, float32 values: [Float], shape: [Int]) throws {
        try values.withUnsafeBytes { try writeRaw(path, file: drummer_H5T_IEEE_F32LE(), mem: drummer_H5T_NATIVE_FLOAT(), shape: shape, $0.baseAddress) }
    }
    func write(_ path: String, int64 values: [Int64], shape: [Int]) throws {
        try values.withUnsafeBytes { try writeRaw(path, file: drummer_H5T_STD_I64LE(), mem: drummer_H5T_NATIVE_INT64(), shape: shape, $0.baseAddress) }
    }
    func write(_ path: String, uint64 values: [UInt64], shape: [Int]) throws {
        try values.withUnsafeBytes { try writeRaw(path, file: drummer_H5T_STD_U64LE(), mem: drummer_H5T_NATIVE_UINT64(), shape: shape, $0.baseAddress) }
    }
    func attr(_ object: String, _ name: String, type: hid_t, _ buf: UnsafeRawPointer) throws {
        let sp = try check(id: H5Screate(H5S_SCALAR), "scalar space")
        defer { H5Sclose(sp) }
        let a = try check(id: H5Acreate_by_name(id, object, name, type, sp, drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT()), "create attribute \(object)@\(name)")
        defer { H5Aclose(a) }
        try check(H5Awrite(a, type, buf), "write attribute \(name)")
    }
    func setAttribute(_ object: String, _ name: String, int64 value: Int64) throws {
        try withUnsafeBytes(of: value) { try attr(object, name, type: drummer_H5T_NATIVE_INT64(), $0.baseAddress!) }
    }
    func setAttribute(_ object: String, _ name: String, double value: Double) throws {
        try withUnsafeBytes(of: value) { try attr(object, name, type: drummer_H5T_NATIVE_DOUBLE(), $0.baseAddress!) }
    }
    func setAttribute(_ object: String, _ name: String, string value: String) throws {
        let t = H5Tcopy(drummer_H5T_C_S1())
        defer { H5Tclose(t) }
        H5Tset_size(t, drummer_H5T_VARIABLE())
        H5Tset_cset(t, H5T_CSET_UTF8)
        try value.withCString { p in
            var ptr: UnsafePointer<CChar>? = p
            try withUnsafeBytes(of: &ptr) { try attr(object, name, type: t, $0.baseAddress!) }
        }
    }

    func children(_ group: String) throws -> [String] {
        let g = try check(id: H5Gopen2(id, group, drummer_H5P_DEFAULT()), "open group \(group)")
        defer { H5Gclose(g) }
        var info = H5G_info_t()
        try check(H5Gget_info(g, &info), "group info")
        var names: [String] = []
        for i in 0..<info.nlinks {
            let n = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, nil, 0, drummer_H5P_DEFAULT())
            guard n >= 0 else { throw ShimHDF5Error(description: "link name") }
            var buf = [CChar](repeating: 0, count: Int(n) + 1)
            _ = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, &buf, Int(n) + 1, drummer_H5P_DEFAULT())
            names.append(String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return names
    }
    func readRaw<T>(_ path: String, mem: hid_t, zero: T) throws -> ([T], [Int]) {
        let d = try check(id: H5Dopen2(id, path, drummer_H5P_DEFAULT()), "no dataset \(path)")
        defer { H5Dclose(d) }
        let sp = try check(id: H5Dget_space(d), "space")
        defer { H5Sclose(sp) }
        let rank = H5Sget_simple_extent_ndims(sp)
        guard rank >= 0, rank <= 8 else { throw ShimHDF5Error(description: "rank") }
        var dims = [hsize_t](repeating: 0, count: Int(rank))
        H5Sget_simple_extent_dims(sp, &dims, nil)
        let shape = dims.map { Int($0) }
        let n = shape.reduce(1, *)
        guard n < 1 << 28 else { throw ShimHDF5Error(description: "too large") }
        var out = [T](repeating: zero, count: n)
        try out.withUnsafeMutableBytes { try check(H5Dread(d, mem, drummer_H5S_ALL(), drummer_H5S_ALL(), drummer_H5P_DEFAULT(), $0.baseAddress), "read \(path)") }
        return (out, shape)
    }
    func readFloat32(_ path: String) throws -> (values: [Float], shape: [Int]) { try readRaw(path, mem: drummer_H5T_NATIVE_FLOAT(), zero: Float(0)) }
    func readInt64(_ path: String) throws -> (values: [Int64], shape: [Int]) { try readRaw(path, mem: drummer_H5T_NATIVE_INT64(), zero: Int64(0)) }
    func readUInt64(_ path: String) throws -> (values: [UInt64], shape: [Int]) { try readRaw(path, mem: drummer_H5T_NATIVE_UINT64(), zero: UInt64(0)) }
    func readAttr(_ object: String, _ name: String, type: hid_t, _ buf: UnsafeMutableRawPointer) throws {
        let a = try check(id: H5Aopen_by_name(id, object, name, drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT()), "missing attribute \(object)@\(name)")
        defer { H5Aclose(a) }
        try check(H5Aread(a, type, buf), "read attribute \(name)")
    }
    func int64Attribute(_ object: String, _ name: String) throws -> Int64 {
        var v: Int64 = 0
        try readAttr(object, name, type: drummer_H5T_NATIVE_INT64(), &v)
        return v
    }
    func doubleAttribute(_ object: String, _ name: String) throws -> Double {
        var v: Double = 0
        try readAttr(object, name, type: drummer_H5T_NATIVE_DOUBLE(), &v)
        return v
    }
    func stringAttribute(_ object: String, _ name: String) throws -> String {
        let t = H5Tcopy(drummer_H5T_C_S1())
        defer { H5Tclose(t) }
        H5Tset_size(t, drummer_H5T_VARIABLE())
        H5Tset_cset(t, H5T_CSET_UTF8)
        var p: UnsafeMutablePointer<CChar>?
        try readAttr(object, name, type: t, &p)
        guard let p else { return "" }
        defer { H5free_memory(p) }
        return String(cString: p)
    }
}
