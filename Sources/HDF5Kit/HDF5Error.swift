// Errors of the HDF5 layer: each names the C call (or the check) that failed,
// the object path inside the file, and the file.

public struct HDF5Error: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// A C call returned a negative status; `detail` holds HDF5's own message.
        case callFailed
        /// The file does not exist.
        case fileNotFound
        /// The file exists but is not an HDF5 file.
        case notHDF5
        /// No group, dataset or attribute of that name.
        case notFound
        /// The object holds another element type than the one requested.
        case typeMismatch(expected: String, found: String)
        /// A shape that does not match the values or the stored shape.
        case shapeMismatch(expected: [Int], actual: [Int])
        /// A number of values that does not match the shape's product.
        case countMismatch(shape: [Int], count: Int)
        /// The object exists but is not of the kind requested (group vs dataset).
        case wrongKind(expected: String, found: String)
        /// An argument this layer rejects (empty name, string with a NUL byte, ...).
        case invalidArgument(String)
        /// The file was closed before this handle was used.
        case fileClosed
        /// A stored shape too large to read into memory.
        case tooLarge(bytes: String)
    }

    public let kind: Kind
    /// The C function (e.g. `H5Dopen2`) or the check (e.g. `shape check`) that failed.
    public let call: String
    /// The object path inside the file (`/` for the root group).
    public let object: String
    /// The file's path on disk.
    public let file: String
    /// HDF5's innermost error message, when the failure came from the library.
    public let detail: String

    public init(_ kind: Kind, call: String, object: String, file: String, detail: String = "") {
        self.kind = kind
        self.call = call
        self.object = object
        self.file = file
        self.detail = detail
    }

    public var description: String {
        let what: String
        switch kind {
        case .callFailed: what = "\(call) failed"
        case .fileNotFound: what = "no such file"
        case .notHDF5: what = "not an HDF5 file"
        case .notFound: what = "no such object"
        case let .typeMismatch(expected, found): what = "holds \(found), not \(expected)"
        case let .shapeMismatch(expected, actual): what = "shape \(actual) does not match \(expected)"
        case let .countMismatch(shape, count): what = "shape \(shape) does not hold \(count) values"
        case let .wrongKind(expected, found): what = "is a \(found), not a \(expected)"
        case let .invalidArgument(message): what = message
        case .fileClosed: what = "the file was already closed"
        case let .tooLarge(bytes): what = "too large to read (\(bytes) bytes)"
        }
        let suffix = detail.isEmpty ? "" : " (\(detail))"
        return "\(file): \(object): \(what) [\(call)]\(suffix)"
    }
}
