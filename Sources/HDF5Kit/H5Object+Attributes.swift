// Scalar attributes (int64, double, UTF-8 string) on files, groups and datasets.
import CHDF5

/// The value of a scalar attribute.
public enum H5AttributeValue: Equatable, Sendable {
    case int64(Int64)
    case double(Double)
    case string(String)
}

extension H5Object {
    /// Sets (or replaces) an int64 attribute.
    public func setAttribute(_ name: String, int64 value: Int64) throws {
        try writeAttribute(name, type: drummer_H5T_STD_I64LE()) { aid in
            withUnsafePointer(to: value) { H5Awrite(aid, drummer_H5T_NATIVE_INT64(), $0) }
        }
    }

    /// Sets (or replaces) a float64 attribute.
    public func setAttribute(_ name: String, double value: Double) throws {
        try writeAttribute(name, type: drummer_H5T_IEEE_F64LE()) { aid in
            withUnsafePointer(to: value) { H5Awrite(aid, drummer_H5T_NATIVE_DOUBLE(), $0) }
        }
    }

    /// Sets (or replaces) a UTF-8 string attribute: variable-length, or, in a
    /// file created with `checksummedMetadata`, fixed-length (NUL-terminated) so
    /// that its bytes are inside the checksummed object header rather than in
    /// the global heap, which has no checksum. HDF5Kit reads both back as the
    /// same string (h5py returns fixed-length strings as bytes).
    public func setAttribute(_ name: String, string value: String) throws {
        let h = handle
        if h.file.options.checksummedMetadata {
            let bytes = try fixedLengthBytes([value], "\(h.path)@\(name)", h)
            let type = try makeFixedUTF8StringType(size: bytes.size, h)
            try writeAttribute(name, type: type.id) { aid in
                bytes.data.withUnsafeBytes { H5Awrite(aid, type.id, $0.baseAddress) }
            }
            return
        }
        let type = try makeUTF8StringType(h)
        try withCStrings([value], h.path, h) { ptrs in
            try writeAttribute(name, type: type.id) { aid in H5Awrite(aid, type.id, ptrs) }
        }
    }

    /// Whether the attribute exists.
    public func hasAttribute(_ name: String) throws -> Bool {
        let h = handle
        try validateName(name, "attribute", h)
        return try h.call("H5Aexists") { H5Aexists(h.id, name) } > 0
    }

    /// Names of all attributes, in name order.
    public func attributeNames() throws -> [String] {
        let h = handle
        var names: [String] = []
        var index: hsize_t = 0
        _ = try withUnsafeMutablePointer(to: &names) { box in
            try h.call("H5Aiterate2") {
                H5Aiterate2(h.id, H5_INDEX_NAME, H5_ITER_INC, &index, { _, name, _, data in
                    guard let name, let data else { return -1 }
                    data.assumingMemoryBound(to: [String].self).pointee.append(String(cString: name))
                    return 0
                }, box)
            }
        }
        return names
    }

    /// Reads a scalar (or one-element) attribute: integers as int64, floats
    /// as double, strings as String.
    public func attribute(_ name: String) throws -> H5AttributeValue {
        let h = handle
        guard try hasAttribute(name) else { throw h.error(.notFound, "H5Aexists", object: "\(h.path)@\(name)") }
        let at = "\(h.path)@\(name)"
        let attr = H5Temporary.attribute(try h.call("H5Aopen", object: at) { H5Aopen(h.id, name, drummer_H5P_DEFAULT()) })
        let aid = attr.id
        let type = H5Temporary.type(try h.call("H5Aget_type", object: at) { H5Aget_type(aid) })
        let space = H5Temporary.space(try h.call("H5Aget_space", object: at) { H5Aget_space(aid) })
        let dims = try dataspaceShape(space.id, h)
        guard dims.reduce(1, *) == 1 else {
            throw h.error(.shapeMismatch(expected: [], actual: dims), "H5Aread", object: at)
        }
        let attrHandle = H5Handle(id: aid, file: h.file, path: at)
        let value: H5AttributeValue
        let typeClass = try h.call("H5Tget_class", object: at, failure: H5T_NO_CLASS) { H5Tget_class(type.id) }
        switch typeClass {
        case H5T_INTEGER:
            // Unsigned 64-bit values may not fit Int64: refuse rather than clamp.
            let sign = try h.call("H5Tget_sign", object: at, failure: H5T_SGN_ERROR) { H5Tget_sign(type.id) }
            let size = try h.call("H5Tget_size", object: at, failure: 0) { H5Tget_size(type.id) }
            if sign == H5T_SGN_NONE && size >= 8 {
                throw h.error(.typeMismatch(expected: "int64", found: "uint64"), "H5Aread", object: at)
            }
            var v: Int64 = 0
            try h.call("H5Aread", object: at) { H5Aread(aid, drummer_H5T_NATIVE_INT64(), &v) }
            value = .int64(v)
        case H5T_FLOAT:
            var v: Double = 0
            try h.call("H5Aread", object: at) { H5Aread(aid, drummer_H5T_NATIVE_DOUBLE(), &v) }
            value = .double(v)
        case H5T_STRING:
            let values = try readStringValues(type: type.id, space: space.id, dims: dims, attrHandle) { mem, buf in
                H5Aread(aid, mem, buf)
            }
            value = .string(values.first ?? "")
        default:
            let found = try H5DType.of(type.id, h, object: at)
            throw h.error(.typeMismatch(expected: "int64, double or string", found: "\(found)"), "H5Aread", object: at)
        }
        try attr.close(h, object: at)
        return value
    }

    /// An integer attribute (`.typeMismatch` if it holds something else).
    public func int64Attribute(_ name: String) throws -> Int64 {
        let v = try attribute(name)
        guard case let .int64(x) = v else { throw attributeMismatch(name, "int64", v) }
        return x
    }

    /// A floating-point attribute (`.typeMismatch` if it holds something else).
    public func doubleAttribute(_ name: String) throws -> Double {
        let v = try attribute(name)
        guard case let .double(x) = v else { throw attributeMismatch(name, "double", v) }
        return x
    }

    /// A string attribute (`.typeMismatch` if it holds something else).
    public func stringAttribute(_ name: String) throws -> String {
        let v = try attribute(name)
        guard case let .string(x) = v else { throw attributeMismatch(name, "string", v) }
        return x
    }

    private func attributeMismatch(_ name: String, _ want: String, _ v: H5AttributeValue) -> HDF5Error {
        let found: String
        switch v {
        case .int64: found = "int64"
        case .double: found = "double"
        case .string: found = "string"
        }
        return handle.error(.typeMismatch(expected: want, found: found), "H5Aread", object: "\(handle.path)@\(name)")
    }

    /// Creates a scalar attribute of `type` (replacing one of the same name) and writes it.
    private func writeAttribute(_ name: String, type: hid_t, _ write: (hid_t) -> herr_t) throws {
        let h = handle
        try validateName(name, "attribute", h)
        let at = "\(h.path)@\(name)"
        if try hasAttribute(name) {
            try h.call("H5Adelete", object: at) { H5Adelete(h.id, name) }
        }
        let space = H5Temporary.space(try h.call("H5Screate", object: at) { H5Screate(H5S_SCALAR) })
        let attr = H5Temporary.attribute(try h.call("H5Acreate2", object: at) {
            H5Acreate2(h.id, name, type, space.id, drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT())
        })
        try h.call("H5Awrite", object: at) { write(attr.id) }
        try attr.close(h, object: at)
    }
}
