// Errors of the .npy reader and writer: each names the file, the byte offset and what is wrong.

/// A failure to read, decode or encode a NumPy `.npy` file.
public struct NPYError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// The file does not start with `\x93NUMPY`.
        case badMagic
        /// A format version other than 1.0, 2.0 or 3.0.
        case unsupportedVersion(major: UInt8, minor: UInt8)
        /// The header is not a well-formed dict with `descr`, `fortran_order` and `shape`.
        case malformedHeader(String)
        /// A `descr` this reader does not handle (big-endian, structured, strings, ...).
        case unsupportedDType(String)
        /// `fortran_order: True`; only C order is supported.
        case fortranOrder
        /// Fewer data bytes than the shape needs.
        case truncatedData(expectedBytes: Int, actualBytes: Int)
        /// More data bytes than the shape needs.
        case trailingData(expectedBytes: Int, actualBytes: Int)
        /// The product of the shape (times the item size) overflows `Int`.
        case shapeOverflow(shape: String)
        /// A shape whose product does not match the element count, or a negative dimension.
        case shapeMismatch(shape: [Int], count: Int)
        /// A value that cannot be represented in the requested type.
        case valueOutOfRange(index: Int, value: String, target: String)
        /// A conversion that makes no sense (e.g. rows of a non-float32 array).
        case unsupportedConversion(from: String, to: String)
        /// The file cannot be read.
        case io(String)
    }

    /// The file (or `<memory>` for encoders working on arrays).
    public let path: String
    /// Byte offset in the file where the problem was found.
    public let offset: Int
    public let kind: Kind

    public init(path: String, offset: Int, kind: Kind) {
        self.path = path
        self.offset = offset
        self.kind = kind
    }

    public var description: String { "\(path): \(reason)" }

    /// What is wrong and where, without the file: "byte 18440: truncated data: …" (for a
    /// message that names the file already).
    public var reason: String {
        let what: String
        switch kind {
        case .badMagic:
            what = "not a .npy file (the first 6 bytes are not \\x93NUMPY)"
        case let .unsupportedVersion(major, minor):
            what = "unsupported .npy format version \(major).\(minor) (supported: 1.0, 2.0, 3.0)"
        case let .malformedHeader(detail):
            what = "malformed .npy header: \(detail)"
        case let .unsupportedDType(descr):
            what = "unsupported dtype '\(descr)' (supported: <f4 <f8 <i4 <i8 |b1 |u1, little-endian)"
        case .fortranOrder:
            what = "array is stored in Fortran order; only C order is supported (save it with numpy.ascontiguousarray)"
        case let .truncatedData(expected, actual):
            what = "truncated data: the shape needs \(expected) bytes but only \(actual) follow the header"
        case let .trailingData(expected, actual):
            what = "trailing data: the shape needs \(expected) bytes but \(actual) follow the header"
        case let .shapeOverflow(shape):
            what = "shape \(shape) is too large (its byte size overflows)"
        case let .shapeMismatch(shape, count):
            what = "shape \(shape) does not match \(count) elements"
        case let .valueOutOfRange(index, value, target):
            what = "element \(index) (\(value)) cannot be represented as \(target)"
        case let .unsupportedConversion(from, to):
            what = "cannot convert dtype \(from) to \(to)"
        case let .io(message):
            what = message
        }
        return "byte \(offset): \(what)"
    }
}
