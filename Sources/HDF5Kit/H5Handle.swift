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

    /// Runs one C call and turns a negative result into a typed `HDF5Error`.
    @discardableResult
    func call<T: BinaryInteger>(_ name: String, object: String? = nil, _ body: () -> T) throws -> T {
        try ensureOpen()
        return try H5Call.run(name, object: object ?? path, file: file.path, body)
    }

    /// Runs one C call that returns an enum with an error value (H5I_BADID,
    /// H5T_NO_CLASS, H5T_STR_ERROR, ...) and turns that value into a typed error.
    func call<T: Equatable>(_ name: String, object: String? = nil, failure: T, _ body: () -> T) throws -> T {
        try ensureOpen()
        drummer_H5_silence_errors_on_this_thread()
        let r = body()
        if r == failure { throw H5Call.failure(name, object: object ?? path, file: file.path) }
        return r
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
        if r < 0 { throw failure(name, object: object, file: file) }
        return r
    }

    /// The error for a failed C call, classified from this thread's HDF5 error
    /// stack: a checksum failure anywhere in the stack is `.checksumMismatch`,
    /// a full device (errno 28, or 122 for a quota) `.noSpace`, anything else
    /// `.callFailed`; the detail is the innermost message.
    static func failure(_ name: String, object: String, file: String) -> HDF5Error {
        let (inner, all) = stackText()
        return HDF5Error(classify(all), call: name, object: object, file: file, detail: inner)
    }

    static func classify(_ stack: String) -> HDF5Error.Kind {
        let s = stack.lowercased()
        if s.contains("checksum") { return .checksumMismatch }
        if s.contains("errno = 28,") || s.contains("errno = 122,") { return .noSpace }
        return .callFailed
    }

    /// The innermost message, and all messages joined (innermost first).
    static func stackText() -> (inner: String, all: String) {
        var inner = [CChar](repeating: 0, count: 1024)
        var all = [CChar](repeating: 0, count: 4096)
        drummer_H5_error_stack_text(&inner, inner.count, &all, all.count)
        func text(_ b: [CChar]) -> String {
            String(decoding: b.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return (text(inner), text(all))
    }

    /// An error from a system call (open, pwrite, fsync, rename, ...) with errno's message.
    static func systemFailure(_ name: String, errno code: Int32, object: String = "/", file: String) -> HDF5Error {
        let kind: HDF5Error.Kind = (code == ENOSPC || code == EDQUOT) ? .noSpace : .callFailed
        return HDF5Error(kind, call: name, object: object, file: file,
                         detail: "\(String(cString: strerror(code))) (errno \(code))")
    }
}

/// An id for a datatype, dataspace, property list, attribute or object, closed
/// when dropped (or earlier, and checked, by `close`).
final class H5Temporary {
    let id: hid_t
    private let closeFunction: (hid_t) -> herr_t
    private let closeName: String
    private var isOpen = true

    init(_ id: hid_t, close: @escaping (hid_t) -> herr_t, name: String) {
        self.id = id
        self.closeFunction = close
        self.closeName = name
    }

    /// Closes now and reports a failure (a deinit cannot throw).
    func close(_ h: H5Handle, object: String? = nil) throws {
        try close(object: object ?? h.path, file: h.fileName)
    }

    func close(object: String, file: String) throws {
        guard isOpen else { return }
        isOpen = false
        try H5Call.run(closeName, object: object, file: file) { closeFunction(id) }
    }

    deinit {
        if isOpen {
            drummer_H5_silence_errors_on_this_thread()
            _ = closeFunction(id)
        }
    }

    static func type(_ id: hid_t) -> H5Temporary { H5Temporary(id, close: H5Tclose, name: "H5Tclose") }
    static func space(_ id: hid_t) -> H5Temporary { H5Temporary(id, close: H5Sclose, name: "H5Sclose") }
    static func plist(_ id: hid_t) -> H5Temporary { H5Temporary(id, close: H5Pclose, name: "H5Pclose") }
    static func attribute(_ id: hid_t) -> H5Temporary { H5Temporary(id, close: H5Aclose, name: "H5Aclose") }
    static func object(_ id: hid_t) -> H5Temporary { H5Temporary(id, close: H5Oclose, name: "H5Oclose") }
}

/// Closes an object id from a deinit: nothing can be thrown there, but HDF5
/// must not print either (a deinit can run on any thread).
func closeQuietly(_ id: hid_t, _ close: (hid_t) -> herr_t) {
    drummer_H5_silence_errors_on_this_thread()
    _ = close(id)
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
