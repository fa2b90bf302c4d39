// Datasets: numeric arrays of any rank (rank 0 is a scalar) and UTF-8 strings.
import CHDF5
import Foundation

public final class H5Dataset: H5Object {
    public let handle: H5Handle

    init(handle: H5Handle) { self.handle = handle }

    deinit {
        if handle.file.isOpen { _ = H5Dclose(handle.id) }
    }

    /// The stored shape; `[]` for a scalar.
    public func shape() throws -> [Int] {
        let h = handle
        let space = H5Temporary.space(try h.call("H5Dget_space") { H5Dget_space(h.id) })
        return try dataspaceShape(space.id, h)
    }

    /// The stored element type.
    public func dtype() throws -> H5DType {
        let h = handle
        let t = H5Temporary.type(try h.call("H5Dget_type") { H5Dget_type(h.id) })
        return H5DType.of(t.id)
    }

    /// All values in C order. The element type must be exactly `T`'s: no
    /// silent conversion (`.typeMismatch` otherwise).
    public func read<T: H5Numeric>(_ type: T.Type = T.self) throws -> [T] {
        let h = handle
        let found = try dtype()
        guard found == T.h5dtype else {
            throw h.error(.typeMismatch(expected: "\(T.h5dtype)", found: "\(found)"), "H5Dread")
        }
        let dims = try shape()
        let count = try checkedByteCount(dims, itemSize: MemoryLayout<T>.stride, h) / MemoryLayout<T>.stride
        if count == 0 { return [] }
        var status: herr_t = 0
        let values = [T](unsafeUninitializedCapacity: count) { buf, initialized in
            drummer_H5_silence_errors_on_this_thread()
            status = H5Dread(h.id, T.h5dtype.nativeType, drummer_H5S_ALL(), drummer_H5S_ALL(), drummer_H5P_DEFAULT(), buf.baseAddress)
            // On failure the buffer may be partly written: zero it so every element is initialized.
            if status < 0 { UnsafeMutableRawBufferPointer(buf).initializeMemory(as: UInt8.self, repeating: 0) }
            initialized = count
        }
        if status < 0 { throw HDF5Error(.callFailed, call: "H5Dread", object: h.path, file: h.fileName, detail: H5Call.lastMessage()) }
        return values
    }

    /// Values in C order, checking the stored shape first.
    public func read<T: H5Numeric>(_ type: T.Type = T.self, shape expected: [Int]) throws -> [T] {
        let actual = try shape()
        guard actual == expected else {
            throw handle.error(.shapeMismatch(expected: expected, actual: actual), "shape check")
        }
        return try read(type)
    }

    /// The single value of a scalar (or one-element) dataset.
    public func readScalar<T: H5Numeric>(_ type: T.Type = T.self) throws -> T {
        let values = try read(type)
        guard values.count == 1, let v = values.first else {
            throw handle.error(.shapeMismatch(expected: [], actual: try shape()), "scalar check")
        }
        return v
    }

    /// Overwrites every value; `values.count` must match the stored shape.
    public func write<T: H5Numeric>(_ values: [T]) throws {
        let h = handle
        let found = try dtype()
        guard found == T.h5dtype else {
            throw h.error(.typeMismatch(expected: "\(T.h5dtype)", found: "\(found)"), "H5Dwrite")
        }
        let dims = try shape()
        let count = dims.reduce(1, *)
        guard count == values.count else {
            throw h.error(.countMismatch(shape: dims, count: values.count), "H5Dwrite")
        }
        try writeRaw(values, h)
    }

    func writeRaw<T: H5Numeric>(_ values: [T], _ h: H5Handle) throws {
        if values.isEmpty { return }
        _ = try values.withUnsafeBufferPointer { buf in
            try h.call("H5Dwrite") {
                H5Dwrite(h.id, T.h5dtype.nativeType, drummer_H5S_ALL(), drummer_H5S_ALL(), drummer_H5P_DEFAULT(), buf.baseAddress)
            }
        }
    }

    /// All strings in C order (variable- or fixed-length, decoded as UTF-8).
    public func readStrings() throws -> [String] {
        let h = handle
        let t = H5Temporary.type(try h.call("H5Dget_type") { H5Dget_type(h.id) })
        guard H5DType.of(t.id) == .string else {
            throw h.error(.typeMismatch(expected: "string", found: "\(H5DType.of(t.id))"), "H5Dread")
        }
        let space = H5Temporary.space(try h.call("H5Dget_space") { H5Dget_space(h.id) })
        let dims = try dataspaceShape(space.id, h)
        return try readStringValues(type: t.id, space: space.id, dims: dims, h) { memType, buf in
            H5Dread(h.id, memType, drummer_H5S_ALL(), drummer_H5S_ALL(), drummer_H5P_DEFAULT(), buf)
        }
    }

    /// The string of a scalar (or one-element) string dataset.
    public func readString() throws -> String {
        let values = try readStrings()
        guard values.count == 1, let v = values.first else {
            throw handle.error(.shapeMismatch(expected: [], actual: try shape()), "scalar check")
        }
        return v
    }
}

extension H5Container {
    /// Creates a numeric dataset of the given shape (`[]` = scalar) holding
    /// `values` in C order; missing intermediate groups are created.
    @discardableResult
    public func createDataset<T: H5Numeric>(_ path: String, values: [T], shape: [Int]) throws -> H5Dataset {
        let h = handle
        try validateName(path, "dataset", h)
        try checkCount(shape, values.count, path)
        let space = try makeDataspace(shape, path)
        let ds = try createDataset(path, type: T.h5dtype.fileType, space: space)
        try ds.writeRaw(values, ds.handle)
        return ds
    }

    /// Creates a scalar numeric dataset.
    @discardableResult
    public func createDataset<T: H5Numeric>(_ path: String, scalar: T) throws -> H5Dataset {
        try createDataset(path, values: [scalar], shape: [])
    }

    /// Creates a dataset of variable-length UTF-8 strings (`[]` = one string).
    @discardableResult
    public func createDataset(_ path: String, strings: [String], shape: [Int]) throws -> H5Dataset {
        let h = handle
        try validateName(path, "dataset", h)
        try checkCount(shape, strings.count, path)
        let type = try makeUTF8StringType(h)
        let space = try makeDataspace(shape, path)
        let ds = try createDataset(path, type: type.id, space: space)
        _ = try withCStrings(strings, h.child(path), h) { ptrs in
            try ds.handle.call("H5Dwrite") {
                H5Dwrite(ds.handle.id, type.id, drummer_H5S_ALL(), drummer_H5S_ALL(), drummer_H5P_DEFAULT(), ptrs)
            }
        }
        return ds
    }

    /// Creates a scalar UTF-8 string dataset.
    @discardableResult
    public func createDataset(_ path: String, string: String) throws -> H5Dataset {
        try createDataset(path, strings: [string], shape: [])
    }

    /// Reads a numeric dataset, checking its shape when `shape` is given.
    public func read<T: H5Numeric>(_ path: String, as type: T.Type = T.self, shape: [Int]? = nil) throws -> [T] {
        let ds = try dataset(path)
        if let shape { return try ds.read(type, shape: shape) }
        return try ds.read(type)
    }

    private func checkCount(_ shape: [Int], _ count: Int, _ path: String) throws {
        let h = handle
        var n = 1
        for d in shape {
            let (p, o) = n.multipliedReportingOverflow(by: d)
            guard d >= 0, !o else { throw h.error(.countMismatch(shape: shape, count: count), "shape check", object: h.child(path)) }
            n = p
        }
        guard n == count else { throw h.error(.countMismatch(shape: shape, count: count), "shape check", object: h.child(path)) }
    }

    private func makeDataspace(_ shape: [Int], _ path: String) throws -> H5Temporary {
        let h = handle
        if shape.isEmpty {
            return H5Temporary.space(try h.call("H5Screate", object: h.child(path)) { H5Screate(H5S_SCALAR) })
        }
        let dims = shape.map { hsize_t($0) }
        return H5Temporary.space(try h.call("H5Screate_simple", object: h.child(path)) {
            H5Screate_simple(Int32(dims.count), dims, nil)
        })
    }

    private func createDataset(_ path: String, type: hid_t, space: H5Temporary) throws -> H5Dataset {
        let h = handle
        let lcpl = try intermediateGroupsList()
        let did = try h.call("H5Dcreate2", object: h.child(path)) {
            H5Dcreate2(h.id, path, type, space.id, lcpl.id, drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT())
        }
        return H5Dataset(handle: H5Handle(id: did, file: h.file, path: h.child(path)))
    }
}

/// The shape of a dataspace; `[]` for scalar.
func dataspaceShape(_ space: hid_t, _ h: H5Handle) throws -> [Int] {
    let rank = try h.call("H5Sget_simple_extent_ndims") { H5Sget_simple_extent_ndims(space) }
    if rank == 0 { return [] }
    var dims = [hsize_t](repeating: 0, count: Int(rank))
    try h.call("H5Sget_simple_extent_dims") { H5Sget_simple_extent_dims(space, &dims, nil) }
    return try dims.map {
        guard let d = Int(exactly: $0) else { throw h.error(.tooLarge(bytes: "dimension \($0)"), "H5Sget_simple_extent_dims") }
        return d
    }
}

/// Calls `body` with NUL-terminated copies of `strings` (rejecting embedded NULs).
func withCStrings<R>(_ strings: [String], _ object: String, _ h: H5Handle,
                     _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>?) throws -> R) throws -> R {
    var copies: [UnsafeMutablePointer<CChar>?] = []
    defer { copies.forEach { free($0) } }
    for s in strings {
        guard !s.utf8.contains(0) else {
            throw h.error(.invalidArgument("strings must not contain NUL bytes"), "string check", object: object)
        }
        guard let c = strdup(s) else { throw h.error(.callFailed, "strdup", object: object) }
        copies.append(c)
    }
    var ptrs = copies.map { UnsafePointer<CChar>($0) }
    return try ptrs.withUnsafeMutableBufferPointer { try body($0.baseAddress) }
}

/// Reads strings through `read(memType, buffer)`, for datasets and attributes alike.
func readStringValues(type: hid_t, space: hid_t, dims: [Int], _ h: H5Handle,
                      _ read: (hid_t, UnsafeMutableRawPointer?) -> herr_t) throws -> [String] {
    let count = try checkedByteCount(dims, itemSize: MemoryLayout<UnsafeMutablePointer<CChar>?>.stride, h)
        / MemoryLayout<UnsafeMutablePointer<CChar>?>.stride
    if count == 0 { return [] }
    let isVariable = try h.call("H5Tis_variable_str") { H5Tis_variable_str(type) } > 0
    if isVariable {
        let mem = try makeUTF8StringType(h)
        var ptrs = [UnsafeMutablePointer<CChar>?](repeating: nil, count: count)
        let status = ptrs.withUnsafeMutableBytes { read(mem.id, $0.baseAddress) }
        if status < 0 { throw HDF5Error(.callFailed, call: "H5Dread/H5Aread", object: h.path, file: h.fileName, detail: H5Call.lastMessage()) }
        let strings = ptrs.map { p in p.map { String(cString: $0) } ?? "" }
        _ = ptrs.withUnsafeMutableBytes { H5Dvlen_reclaim(mem.id, space, drummer_H5P_DEFAULT(), $0.baseAddress) }
        return strings
    }
    // Fixed-length: `size` bytes per string, NUL- or space-padded.
    let size = Int(H5Tget_size(type))
    guard size > 0 else { throw h.error(.callFailed, "H5Tget_size") }
    let total = try checkedByteCount(dims + [size], itemSize: 1, h)
    let mem = H5Temporary.type(try h.call("H5Tcopy") { H5Tcopy(type) })
    var bytes = [UInt8](repeating: 0, count: total)
    let status = bytes.withUnsafeMutableBytes { read(mem.id, $0.baseAddress) }
    if status < 0 { throw HDF5Error(.callFailed, call: "H5Dread/H5Aread", object: h.path, file: h.fileName, detail: H5Call.lastMessage()) }
    let spacePadded = H5Tget_strpad(type) == H5T_STR_SPACEPAD
    return (0..<count).map { i in
        var s = bytes[(i * size)..<((i + 1) * size)]
        if let nul = s.firstIndex(of: 0) { s = s[..<nul] }
        if spacePadded { while s.last == 0x20 { s = s.dropLast() } }
        return String(decoding: s, as: UTF8.self)
    }
}
