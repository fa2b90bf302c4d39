// The plumbing every handle shares: its id, its file, its path for messages, and
// the one place where C statuses become typed errors.
import CHDF5
import Foundation

/// The identity of an open HDF5 object: opaque outside this module.
public struct H5Handle {
    let id: hid_t
    let file: H5File
    /// Absolute path of the object inside its file (`/` for the root group).
    let path: String

    var fileName: String { file.path }

    /// Fails with `.fileClosed` once the file has been closed.
    func ensureOpen() throws {
        guard file.isOpen else { throw HDF5Error(.fileClosed, call: "use after close", object: path, file: file.path) }
    }

    /// Runs one C call and turns a negative result into `HDF5Error.callFailed`.
    @discardableResult
    func call<T: BinaryInteger>(_ name: String, object: String? = nil, _ body: () -> T) throws -> T {
        try ensureOpen()
        return try H5Call.run(name, object: object ?? path, file: file.path, body)
    }

    /// The absolute path of `name` relative to this object.
    func child(_ name: String) -> String {
        if name.hasPrefix("/") { return name }
        return path == "/" ? "/" + name : path + "/" + name
    }

    func error(_ kind: HDF5Error.Kind, _ call: String, object: String? = nil) -> HDF5Error {
        HDF5Error(kind, call: call, object: object ?? path, file: file.path)
    }
}

enum H5Call {
    /// Silences HDF5's own printing on this thread, runs the call, and throws
    /// with HDF5's innermost message if the status is negative.
    @discardableResult
    static func run<T: BinaryInteger>(_ name: String, object: String, file: String, _ body: () -> T) throws -> T {
        drummer_H5_silence_errors_on_this_thread()
        let r = body()
        if r < 0 {
            throw HDF5Error(.callFailed, call: name, object: object, file: file, detail: lastMessage())
        }
        return r
    }

    /// The innermost message on this thread's HDF5 error stack.
    static func lastMessage() -> String {
        var buf = [CChar](repeating: 0, count: 512)
        drummer_H5_last_error(&buf, buf.count)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// An id for a datatype, dataspace or property list, closed when dropped.
final class H5Temporary {
    let id: hid_t
    private let close: (hid_t) -> herr_t

    init(_ id: hid_t, close: @escaping (hid_t) -> herr_t) {
        self.id = id
        self.close = close
    }

    deinit { _ = close(id) }

    static func type(_ id: hid_t) -> H5Temporary { H5Temporary(id, close: H5Tclose) }
    static func space(_ id: hid_t) -> H5Temporary { H5Temporary(id, close: H5Sclose) }
    static func plist(_ id: hid_t) -> H5Temporary { H5Temporary(id, close: H5Pclose) }
}

/// Checks a name given by the caller: non-empty, no NUL bytes.
func validateName(_ name: String, _ what: String, _ handle: H5Handle) throws {
    guard !name.isEmpty, !name.utf8.contains(0) else {
        throw handle.error(.invalidArgument("\(what) name must be non-empty and contain no NUL byte: \(name.debugDescription)"), "name check")
    }
}

/// Product of `dims` times `itemSize`, refusing overflow and sizes beyond physical memory.
func checkedByteCount(_ dims: [Int], itemSize: Int, _ handle: H5Handle) throws -> Int {
    var n = itemSize
    for d in dims {
        let (p, o) = n.multipliedReportingOverflow(by: d)
        guard !o, d >= 0 else { throw handle.error(.tooLarge(bytes: "\(dims) x \(itemSize)"), "size check") }
        n = p
    }
    guard UInt64(n) <= ProcessInfo.processInfo.physicalMemory else {
        throw handle.error(.tooLarge(bytes: String(n)), "size check")
    }
    return n
}
