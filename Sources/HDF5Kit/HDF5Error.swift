// Errors of the HDF5 layer: each names the C call (or the check) that failed,
// the object path inside the file, and the file. `description` is always one line.

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
        /// A checksum stored in the file (Fletcher-32 of a data chunk, or the
        /// checksum of the superblock or an object header) does not match: the
        /// file is corrupt.
        case checksumMismatch
        /// The device (or the user's quota) is full (ENOSPC / EDQUOT).
        case noSpace
    }

    public let kind: Kind
    /// The C function (e.g. `H5Dopen2`) or the check (e.g. `shape check`) that failed.
    public let call: String
    /// The object path inside the file (`/` for the root group).
    public let object: String
    /// The file's path on disk.
    public let file: String
    /// HDF5's innermost error message (or the system's), on one line.
    public let detail: String

    public init(_ kind: Kind, call: String, object: String, file: String, detail: String = "") {
        self.kind = kind
        self.call = call
        self.object = object
        self.file = file
        self.detail = HDF5Error.condense(detail)
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
        case .checksumMismatch: what = "checksum mismatch: the file is corrupt"
        case .noSpace: what = "no space left on device"
        }
        let suffix = detail.isEmpty ? "" : " (\(detail))"
        // Paths and messages can hold newlines (a file name can): escape them so
        // that a description is always one line.
        return HDF5Error.oneLine("\(HDF5Error.escaped(file)): \(HDF5Error.escaped(object)): \(what) [\(call)]\(suffix)")
    }

    /// A path with its control characters (newline, tab, ...) written as escapes.
    static func escaped(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return s }
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.properties.generalCategory == .control {
                    out += "\\u{\(String(u.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out
    }

    /// Text with every run of whitespace that holds a line break or another
    /// control character collapsed into one space, trimmed.
    static func oneLine(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return s
        }
        var out = ""
        var pendingSpace = false
        for u in s.unicodeScalars {
            if u.properties.generalCategory == .control || u == " " {
                pendingSpace = true
                continue
            }
            if pendingSpace && !out.isEmpty { out += " " }
            pendingSpace = false
            out.unicodeScalars.append(u)
        }
        return out
    }

    /// One line of HDF5's message. The file drivers' messages carry a ctime()
    /// stamp ending in a newline, a buffer address and byte counts, e.g.
    /// "file write failed: time = Sun Nov 22 20:00:59 2026\n, filename = '…',
    /// file descriptor = 22, errno = 28, error message = 'No space left on
    /// device', buf = 0x…, total write size = 39296, …": those become
    /// "file write failed: No space left on device (errno 28)".
    static func condense(_ raw: String) -> String {
        let s = oneLine(raw)
        guard let m = s.range(of: "error message = '"),
              let end = s[m.upperBound...].firstIndex(of: "'") else { return s }
        let message = s[m.upperBound..<end]
        var head = s
        if let t = s.range(of: ": time = ") ?? s.range(of: ", time = ") { head = String(s[..<t.lowerBound]) }
        else if let c = s.firstIndex(of: ",") { head = String(s[..<c]) }
        var errnoText = ""
        if let e = s.range(of: "errno = ") {
            let digits = s[e.upperBound...].prefix { $0.isNumber }
            if !digits.isEmpty { errnoText = " (errno \(digits))" }
        }
        return "\(head): \(message)\(errnoText)"
    }
}
