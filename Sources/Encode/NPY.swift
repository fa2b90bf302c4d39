// NumPy .npy files: the v1.0 header exactly as numpy writes it, encoders for
// float32/int32 arrays, and a reader for v1.0/v2.0/v3.0 files in C order.
//
// Format (numpy/lib/format.py): magic "\x93NUMPY", major, minor, header length
// (UInt16 LE for 1.0, UInt32 LE for 2.0/3.0), then a Python dict literal
// `{'descr': '<f4', 'fortran_order': False, 'shape': (N, M), }` padded with
// spaces and a final "\n" so the data starts at a multiple of 64 bytes.
import DrummerCore
import Foundation
import FileOutput

/// The element types this package reads (all of them) and writes (float32, int32).
public enum NPYDType: Sendable, Equatable, CaseIterable {
    case float32, int32, float64, int64, bool, uint8

    /// The dtype string numpy writes for this type.
    public var descr: String {
        switch self {
        case .float32: return "<f4"
        case .int32: return "<i4"
        case .float64: return "<f8"
        case .int64: return "<i8"
        case .bool: return "|b1"
        case .uint8: return "|u1"
        }
    }

    /// Bytes per element.
    public var itemSize: Int {
        switch self {
        case .float32, .int32: return 4
        case .float64, .int64: return 8
        case .bool, .uint8: return 1
        }
    }

    /// Parses a `descr`: little-endian (`<`) multi-byte types, any byte order
    /// marker for one-byte types. Big-endian and native (`=`) are rejected.
    public init?(descr: String) {
        guard descr.count == 3, let order = descr.first else { return nil }
        let code = String(descr.dropFirst())
        switch code {
        case "b1", "u1":
            guard "|<>=".contains(order) else { return nil }
            self = code == "b1" ? .bool : .uint8
        case "f4", "i4", "f8", "i8":
            guard order == "<" else { return nil }
            switch code {
            case "f4": self = .float32
            case "i4": self = .int32
            case "f8": self = .float64
            default: self = .int64
            }
        default:
            return nil
        }
    }
}

public enum NPY {
    static let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]  // \x93NUMPY
    static let alignment = 64
    /// numpy leaves room for the first axis to grow to this many digits.
    static let growthAxisMaxDigits = 21

    // MARK: Writing

    /// The complete header (magic, version, length, padded dict) for a C-order
    /// array, byte for byte what `numpy.save` writes: version 1.0, or 2.0 if
    /// the dict does not fit a 16-bit length. The data starts right after it.
    public static func header(dtype: NPYDType, shape: [Int]) throws -> Data {
        _ = try byteCount(dtype: dtype, shape: shape, path: "<memory>")
        let shapeRepr: String
        switch shape.count {
        case 0: shapeRepr = "()"
        case 1: shapeRepr = "(\(shape[0]),)"
        default: shapeRepr = "(" + shape.map(String.init).joined(separator: ", ") + ")"
        }
        var dict = "{'descr': '\(dtype.descr)', 'fortran_order': False, 'shape': \(shapeRepr), }"
        if let first = shape.first {
            dict += String(repeating: " ", count: max(0, growthAxisMaxDigits - String(first).count))
        }
        let body = Array(dict.utf8)
        for (major, lengthSize) in [(UInt8(1), 2), (UInt8(2), 4)] {
            let headerLength = body.count + 1  // + "\n"
            let prefix = magic.count + 2 + lengthSize
            let pad = alignment - (prefix + headerLength) % alignment
            let total = headerLength + pad
            if lengthSize == 2 && total > Int(UInt16.max) { continue }
            var out = Data(magic)
            out.append(contentsOf: [major, 0])
            if lengthSize == 2 {
                out.append(contentsOf: withUnsafeBytes(of: UInt16(total).littleEndian, Array.init))
            } else {
                guard let t = UInt32(exactly: total) else { break }
                out.append(contentsOf: withUnsafeBytes(of: t.littleEndian, Array.init))
            }
            out.append(contentsOf: body)
            out.append(contentsOf: repeatElement(0x20, count: pad))
            out.append(0x0A)
            return out
        }
        throw NPYError(path: "<memory>", offset: 0, kind: .shapeOverflow(shape: "\(shape)"))
    }

    /// A complete file (v1.0, or 2.0 if the header needs it) holding `int32` in C order.
    public static func encode(int32 values: [Int32], shape: [Int]) throws -> Data {
        var out = try start(dtype: .int32, shape: shape, count: values.count)
        append(littleEndian: values, to: &out)
        return out
    }

    /// A complete file (v1.0, or 2.0 if the header needs it) holding `float32` in C order.
    public static func encode(float32 values: [Float], shape: [Int]) throws -> Data {
        var out = try start(dtype: .float32, shape: shape, count: values.count)
        append(littleEndian: values.map(\.bitPattern), to: &out)
        return out
    }

    /// The header, after checking that `shape` holds exactly `count` elements.
    private static func start(dtype: NPYDType, shape: [Int], count: Int) throws -> Data {
        let bytes = try byteCount(dtype: dtype, shape: shape, path: "<memory>")
        guard bytes == count * dtype.itemSize else {
            throw NPYError(path: "<memory>", offset: 0, kind: .shapeMismatch(shape: shape, count: count))
        }
        var out = try header(dtype: dtype, shape: shape)
        out.reserveCapacity(out.count + bytes)
        return out
    }

    private static func append<T: FixedWidthInteger>(littleEndian values: [T], to out: inout Data) {
        #if _endian(little)
        values.withUnsafeBytes { out.append(contentsOf: $0) }
        #else
        for v in values { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        #endif
    }

    /// Writes a float32 array to `path` atomically (temporary file + rename).
    public static func write(float32 values: [Float], shape: [Int], to path: String) throws {
        try AtomicOutput.write(encode(float32: values, shape: shape), to: path)
    }

    /// Writes an int32 array to `path` atomically (temporary file + rename).
    public static func write(int32 values: [Int32], shape: [Int], to path: String) throws {
        try AtomicOutput.write(encode(int32: values, shape: shape), to: path)
    }

    /// Bytes of data for `shape`, checking for negative dimensions and overflow.
    static func byteCount(dtype: NPYDType, shape: [Int], path: String, offset: Int = 0) throws -> Int {
        var n = dtype.itemSize
        for d in shape {
            guard d >= 0 else {
                throw NPYError(path: path, offset: offset, kind: .malformedHeader("negative dimension in shape \(shape)"))
            }
            let (p, overflow) = n.multipliedReportingOverflow(by: d)
            guard !overflow else {
                throw NPYError(path: path, offset: offset, kind: .shapeOverflow(shape: "\(shape)"))
            }
            n = p
        }
        return n
    }

    // MARK: Reading

    /// Reads a .npy file, memory-mapped, so large arrays are not copied up front.
    public static func read(path: String) throws -> NPYArray {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw NPYError(path: path, offset: 0, kind: .io("cannot read: \(ErrorText.reading(error, path: path))"))
        }
        return try decode(data, path: path)
    }

    /// Decodes a complete .npy file held in `data`; `path` names it in errors.
    public static func decode(_ data: Data, path: String) throws -> NPYArray {
        let bytes = data.count
        func byte(_ i: Int) -> UInt8 { data[data.startIndex + i] }
        guard bytes >= 8 else {
            if bytes < magic.count || (0..<magic.count).contains(where: { byte($0) != magic[$0] }) {
                throw NPYError(path: path, offset: 0, kind: .badMagic)
            }
            throw NPYError(path: path, offset: bytes, kind: .malformedHeader("file ends inside the version bytes"))
        }
        for i in 0..<magic.count where byte(i) != magic[i] {
            throw NPYError(path: path, offset: 0, kind: .badMagic)
        }
        let major = byte(6), minor = byte(7)
        guard minor == 0, (1...3).contains(major) else {
            throw NPYError(path: path, offset: 6, kind: .unsupportedVersion(major: major, minor: minor))
        }
        let lengthSize = major == 1 ? 2 : 4
        guard bytes >= 8 + lengthSize else {
            throw NPYError(path: path, offset: 8, kind: .malformedHeader("file ends inside the header length"))
        }
        var headerLength = 0
        for i in (0..<lengthSize).reversed() { headerLength = headerLength << 8 | Int(byte(8 + i)) }
        let headerStart = 8 + lengthSize
        guard headerLength <= bytes - headerStart else {
            throw NPYError(path: path, offset: 8, kind: .malformedHeader(
                "header length \(headerLength) exceeds the \(bytes - headerStart) bytes that follow it"))
        }
        let headerBytes = data.subdata(in: (data.startIndex + headerStart)..<(data.startIndex + headerStart + headerLength))
        let text: String
        if major == 3 {
            guard let t = String(data: headerBytes, encoding: .utf8) else {
                throw NPYError(path: path, offset: headerStart, kind: .malformedHeader("header is not UTF-8"))
            }
            text = t
        } else {
            text = String(headerBytes.map { Character(UnicodeScalar($0)) })  // latin-1
        }
        let fields = try NPYHeaderParser.parseHeader(text, path: path, offset: headerStart)
        guard let dtype = NPYDType(descr: fields.descr) else {
            throw NPYError(path: path, offset: headerStart, kind: .unsupportedDType(fields.descr))
        }
        guard !fields.fortranOrder else {
            throw NPYError(path: path, offset: headerStart, kind: .fortranOrder)
        }
        let dataOffset = headerStart + headerLength
        let expected = try byteCount(dtype: dtype, shape: fields.shape, path: path, offset: headerStart)
        let actual = bytes - dataOffset
        if actual < expected {
            throw NPYError(path: path, offset: bytes, kind: .truncatedData(expectedBytes: expected, actualBytes: actual))
        }
        if actual > expected {
            throw NPYError(path: path, offset: dataOffset + expected, kind: .trailingData(expectedBytes: expected, actualBytes: actual))
        }
        return NPYArray(path: path, dtype: dtype, shape: fields.shape, storage: data, dataOffset: dataOffset)
    }
}
