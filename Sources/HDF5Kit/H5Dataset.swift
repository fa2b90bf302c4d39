// Datasets: numeric arrays of any rank (rank 0 is a scalar) and UTF-8 strings.
import CHDF5
import Foundation

public final class H5Dataset: H5Object {
    public let handle: H5Handle

    init(handle: H5Handle) { self.handle = handle }

    deinit {
        if handle.file.isOpen { closeQuietly(handle.id, H5Dclose) }
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
        return try H5DType.of(t.id, h)
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
            // On failure the buffer may be partly written: keep none of it (plain
            // numbers, nothing to deinitialize; and no need to touch every page
            // of a huge buffer that a damaged shape asked for).
            initialized = status < 0 ? 0 : count
        }
        // A Fletcher-32 mismatch becomes `.checksumMismatch` (H5Call classifies the stack).
        if status < 0 { throw H5Call.failure("H5Dread", object: h.path, file: h.fileName) }
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
        let found = try H5DType.of(t.id, h)
        guard found == .string else {
            throw h.error(.typeMismatch(expected: "string", found: "\(found)"), "H5Dread")
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
        let dcpl = try datasetCreationList(shape, itemSize: MemoryLayout<T>.stride, path)
        let ds = try createDataset(path, type: T.h5dtype.fileType, space: space, dcpl: dcpl)
        try ds.writeRaw(values, ds.handle)
        return ds
    }

    /// Creates a scalar numeric dataset.
    @discardableResult
    public func createDataset<T: H5Numeric>(_ path: String, scalar: T) throws -> H5Dataset {
        try createDataset(path, values: [scalar], shape: [])
    }

    /// Creates a dataset of UTF-8 strings (`[]` = one string): variable-length,
    /// or, in a file created with `fletcher32`, fixed-length (one byte longer
    /// than the longest string, NUL-terminated) so that the strings' bytes are in the
    /// checksummed chunks rather than in the global heap, which has no checksum.
    /// HDF5Kit reads both kinds back as the same strings (h5py returns bytes for
    /// fixed-length strings: `.asstr()` decodes them).
    @discardableResult
    public func createDataset(_ path: String, strings: [String], shape: [Int]) throws -> H5Dataset {
        let h = handle
        try validateName(path, "dataset", h)
        try checkCount(shape, strings.count, path)
        let space = try makeDataspace(shape, path)
        if h.file.options.fletcher32 {
            let bytes = try fixedLengthBytes(strings, h.child(path), h)
            let type = try makeFixedUTF8StringType(size: bytes.size, h)
            let dcpl = try datasetCreationList(shape, itemSize: bytes.size, path)
            let ds = try createDataset(path, type: type.id, space: space, dcpl: dcpl)
            if !strings.isEmpty {
                _ = try bytes.data.withUnsafeBytes { buf in
                    try ds.handle.call("H5Dwrite") {
                        H5Dwrite(ds.handle.id, type.id, drummer_H5S_ALL(), drummer_H5S_ALL(), drummer_H5P_DEFAULT(), buf.baseAddress)
                    }
                }
            }
            return ds
        }
        let type = try makeUTF8StringType(h)
        let ds = try createDataset(path, type: type.id, space: space, dcpl: nil)
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

    private func createDataset(_ path: String, type: hid_t, space: H5Temporary, dcpl: H5Temporary?) throws -> H5Dataset {
        let h = handle
        let lcpl = try intermediateGroupsList()
        let did = try h.call("H5Dcreate2", object: h.child(path)) {
            H5Dcreate2(h.id, path, type, space.id, lcpl.id, dcpl?.id ?? drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT())
        }
        return H5Dataset(handle: H5Handle(id: did, file: h.file, path: h.child(path)))
    }

    /// The storage of a new dataset of `shape`: HDF5's default (contiguous)
    /// unless the file was created with `fletcher32`; then chunked with the
    /// Fletcher-32 filter, except for scalars and empty arrays, which HDF5
    /// cannot chunk: those are stored compact, in their object header (covered
    /// by `checksummedMetadata`). A scalar too large for an object header
    /// (over 32 KiB: a long string) stays contiguous, with no checksum.
    private func datasetCreationList(_ shape: [Int], itemSize: Int, _ path: String) throws -> H5Temporary? {
        let h = handle
        guard h.file.options.fletcher32 else { return nil }
        let object = h.child(path)
        let dcpl = H5Temporary.plist(try h.call("H5Pcreate", object: object) { H5Pcreate(drummer_H5P_DATASET_CREATE()) })
        if shape.isEmpty || shape.contains(0) {
            if shape.contains(0) || itemSize <= compactLimit {
                try h.call("H5Pset_layout", object: object) { H5Pset_layout(dcpl.id, H5D_COMPACT) }
            }
        } else {
            let chunk = chunkShape(shape, itemSize: itemSize).map { hsize_t($0) }
            try h.call("H5Pset_chunk", object: object) { H5Pset_chunk(dcpl.id, Int32(chunk.count), chunk) }
            try h.call("H5Pset_fletcher32", object: object) { H5Pset_fletcher32(dcpl.id) }
        }
        return dcpl
    }
}

/// The largest scalar stored compact (an object header message holds < 64 KiB).
let compactLimit = 32 * 1024

/// Chunks of about 1 MiB: whole trailing dimensions while they fit, then part
/// of one dimension, 1 in the leading ones. Every entry is ≥ 1; a dataset of
/// at most 1 MiB is one chunk (no chunk index to damage).
func chunkShape(_ shape: [Int], itemSize: Int) -> [Int] {
    var budget = max(1, (1 << 20) / max(1, itemSize))
    var chunk = [Int](repeating: 1, count: shape.count)
    for i in stride(from: shape.count - 1, through: 0, by: -1) {
        let c = max(1, min(shape[i], budget))
        chunk[i] = c
        if c < shape[i] { break }
        budget = max(1, budget / c)
    }
    return chunk
}

/// Strings as one buffer of fixed-length items, each NUL-terminated (one byte
/// longer than the longest string), rejecting embedded NULs.
func fixedLengthBytes(_ strings: [String], _ object: String, _ h: H5Handle) throws -> (data: [UInt8], size: Int) {
    let size = (strings.map { $0.utf8.count }.max() ?? 0) + 1
    var data = [UInt8](repeating: 0, count: try checkedByteCount([strings.count], itemSize: size, h))
    for (i, s) in strings.enumerated() {
        guard !s.utf8.contains(0) else {
            throw h.error(.invalidArgument("strings must not contain NUL bytes"), "string check", object: object)
        }
        data.replaceSubrange((i * size)..<(i * size + s.utf8.count), with: s.utf8)
    }
    return (data, size)
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
        if status < 0 { throw H5Call.failure("H5Dread/H5Aread", object: h.path, file: h.fileName) }
        let strings = ptrs.map { p in p.map { String(cString: $0) } ?? "" }
        _ = try ptrs.withUnsafeMutableBytes { buf in
            try h.call("H5Dvlen_reclaim") { H5Dvlen_reclaim(mem.id, space, drummer_H5P_DEFAULT(), buf.baseAddress) }
        }
        return strings
    }
    // Fixed-length: `size` bytes per string, NUL- or space-padded (0 is H5Tget_size's error value).
    let size = Int(try h.call("H5Tget_size", failure: 0) { H5Tget_size(type) })
    let pad = try h.call("H5Tget_strpad", failure: H5T_STR_ERROR) { H5Tget_strpad(type) }
    let total = try checkedByteCount(dims + [size], itemSize: 1, h)
    let mem = H5Temporary.type(try h.call("H5Tcopy") { H5Tcopy(type) })
    var bytes = [UInt8](repeating: 0, count: total)
    let status = bytes.withUnsafeMutableBytes { read(mem.id, $0.baseAddress) }
    if status < 0 { throw H5Call.failure("H5Dread/H5Aread", object: h.path, file: h.fileName) }
    let spacePadded = pad == H5T_STR_SPACEPAD
    return (0..<count).map { i in
        var s = bytes[(i * size)..<((i + 1) * size)]
        if let nul = s.firstIndex(of: 0) { s = s[..<nul] }
        if spacePadded { while s.last == 0x20 { s = s.dropLast() } }
        return String(decoding: s, as: UTF8.self)
    }
}

/// How a dataset is stored (for tests and diagnostics).
struct H5Storage: Equatable {
    enum Layout: Equatable { case compact, contiguous, chunked([Int]), other }
    let layout: Layout
    /// The filters applied to its chunks, by HDF5 filter id.
    let filters: [Int]
    var fletcher32: Bool { filters.contains(Int(drummer_H5Z_FILTER_FLETCHER32())) }
}

extension H5Dataset {
    func storage() throws -> H5Storage {
        let h = handle
        let dcpl = H5Temporary.plist(try h.call("H5Dget_create_plist") { H5Dget_create_plist(h.id) })
        let layout: H5Storage.Layout
        let kind = try h.call("H5Pget_layout", failure: H5D_LAYOUT_ERROR) { H5Pget_layout(dcpl.id) }
        switch kind {
        case H5D_COMPACT: layout = .compact
        case H5D_CONTIGUOUS: layout = .contiguous
        case H5D_CHUNKED:
            var dims = [hsize_t](repeating: 0, count: 32)
            let rank = try h.call("H5Pget_chunk") { H5Pget_chunk(dcpl.id, 32, &dims) }
            layout = .chunked(dims.prefix(Int(rank)).map { Int($0) })
        default: layout = .other
        }
        let n = try h.call("H5Pget_nfilters") { H5Pget_nfilters(dcpl.id) }
        var filters: [Int] = []
        for i in 0..<n {
            var flags: UInt32 = 0, nValues = 0, config: UInt32 = 0
            let id = try h.call("H5Pget_filter2") {
                H5Pget_filter2(dcpl.id, UInt32(i), &flags, &nValues, nil, 0, nil, &config)
            }
            filters.append(Int(id))
        }
        try dcpl.close(h)
        return H5Storage(layout: layout, filters: filters)
    }
}
