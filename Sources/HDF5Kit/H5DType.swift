// Element types: what a dataset holds, and the Swift types that can be read and written.
import CHDF5

/// The element type of a dataset or attribute.
public enum H5DType: Equatable, Sendable, CustomStringConvertible {
    case float32, float64, int32, int64, uint64
    /// A string (variable- or fixed-length; written as variable-length UTF-8).
    case string
    /// Anything else (int16, compound, ...), named for error messages.
    case other(String)

    public var description: String {
        switch self {
        case .float32: return "float32"
        case .float64: return "float64"
        case .int32: return "int32"
        case .int64: return "int64"
        case .uint64: return "uint64"
        case .string: return "string"
        case let .other(name): return name
        }
    }

    /// Classifies a datatype id (does not close it); `h` names the object in errors.
    static func of(_ type: hid_t, _ h: H5Handle, object: String? = nil) throws -> H5DType {
        let typeClass = try h.call("H5Tget_class", object: object, failure: H5T_NO_CLASS) { H5Tget_class(type) }
        switch typeClass {
        case H5T_FLOAT, H5T_INTEGER:
            // 0 is H5Tget_size's error value (no numeric type has size 0).
            let size = try h.call("H5Tget_size", object: object, failure: 0) { H5Tget_size(type) }
            if typeClass == H5T_FLOAT {
                switch size {
                case 4: return .float32
                case 8: return .float64
                default: return .other("float\(size * 8)")
                }
            }
            let sign = try h.call("H5Tget_sign", object: object, failure: H5T_SGN_ERROR) { H5Tget_sign(type) }
            let signed = sign != H5T_SGN_NONE
            switch (signed, size) {
            case (true, 4): return .int32
            case (true, 8): return .int64
            case (false, 8): return .uint64
            default: return .other((signed ? "int" : "uint") + "\(size * 8)")
            }
        case H5T_STRING: return .string
        case H5T_COMPOUND: return .other("compound")
        case H5T_ENUM: return .other("enum")
        case H5T_ARRAY: return .other("array")
        case H5T_VLEN: return .other("vlen")
        default: return .other("HDF5 class \(typeClass.rawValue)")
        }
    }

    /// The type in memory (native byte order) for numeric types.
    var nativeType: hid_t {
        switch self {
        case .float32: return drummer_H5T_NATIVE_FLOAT()
        case .float64: return drummer_H5T_NATIVE_DOUBLE()
        case .int32: return drummer_H5T_NATIVE_INT32()
        case .int64: return drummer_H5T_NATIVE_INT64()
        case .uint64: return drummer_H5T_NATIVE_UINT64()
        case .string, .other: return -1
        }
    }

    /// The type written to files: little-endian IEEE / two's complement, as numpy's defaults.
    var fileType: hid_t {
        switch self {
        case .float32: return drummer_H5T_IEEE_F32LE()
        case .float64: return drummer_H5T_IEEE_F64LE()
        case .int32: return drummer_H5T_STD_I32LE()
        case .int64: return drummer_H5T_STD_I64LE()
        case .uint64: return drummer_H5T_STD_U64LE()
        case .string, .other: return -1
        }
    }
}

/// Swift element types HDF5Kit reads and writes: Float, Double, Int32, Int64, UInt64.
public protocol H5Numeric: Sendable {
    static var h5dtype: H5DType { get }
}

extension Float: H5Numeric { public static var h5dtype: H5DType { .float32 } }
extension Double: H5Numeric { public static var h5dtype: H5DType { .float64 } }
extension Int32: H5Numeric { public static var h5dtype: H5DType { .int32 } }
extension Int64: H5Numeric { public static var h5dtype: H5DType { .int64 } }
extension UInt64: H5Numeric { public static var h5dtype: H5DType { .uint64 } }

/// A variable-length UTF-8 string type, closed when dropped.
func makeUTF8StringType(_ handle: H5Handle) throws -> H5Temporary {
    let t = H5Temporary.type(try handle.call("H5Tcopy") { H5Tcopy(drummer_H5T_C_S1()) })
    try handle.call("H5Tset_size") { H5Tset_size(t.id, drummer_H5T_VARIABLE()) }
    try handle.call("H5Tset_cset") { H5Tset_cset(t.id, H5T_CSET_UTF8) }
    return t
}

/// A fixed-length UTF-8 string type of `size` bytes (at least 1), each string
/// NUL-terminated within them: its values are stored inline (in the object
/// header for an attribute, in the chunks for a dataset), where checksums
/// cover them, unlike variable-length strings, whose bytes live in the global
/// heap, which has no checksum.
func makeFixedUTF8StringType(size: Int, _ handle: H5Handle) throws -> H5Temporary {
    let t = H5Temporary.type(try handle.call("H5Tcopy") { H5Tcopy(drummer_H5T_C_S1()) })
    try handle.call("H5Tset_size") { H5Tset_size(t.id, max(1, size)) }
    try handle.call("H5Tset_strpad") { H5Tset_strpad(t.id, H5T_STR_NULLTERM) }
    try handle.call("H5Tset_cset") { H5Tset_cset(t.id, H5T_CSET_UTF8) }
    return t
}
