// Dataset files written with POSIX calls, so that a failure keeps its errno and becomes a
// sentence ("no space left on device") rather than a Foundation error naming a temporary path.
import FileOutput
import Foundation
import MIDIParse
#if canImport(Glibc)
import Glibc
private let posixWrite = Glibc.write
private let posixPwrite = Glibc.pwrite
private let posixClose = Glibc.close
#elseif canImport(Darwin)
import Darwin
private let posixWrite = Darwin.write
private let posixPwrite = Darwin.pwrite
private let posixClose = Darwin.close
#endif

/// A failed system call while writing the output; `file` is the name inside the output directory.
struct OutputWriteError: Error {
    let file: String
    let code: Int32
    var reason: String { ErrorText.errno(code) }
}

/// One output file, written sequentially (or, from several threads, at disjoint offsets
/// with `write(_:at:)`) and closed (close errors count: NFS reports ENOSPC there).
final class OutputFile: @unchecked Sendable {
    private var fd: Int32
    /// The name shown in errors (relative to the output directory).
    let name: String

    init(path: String, name: String) throws {
        self.name = name
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw OutputWriteError(file: name, code: errno) }
    }

    deinit { if fd >= 0 { _ = posixClose(fd) } }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard var p = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let n = posixWrite(fd, p, left)
            if n < 0 {
                if errno == EINTR { continue }
                throw OutputWriteError(file: name, code: errno)
            }
            p += n
            left -= n
        }
    }

    /// Writes `bytes` at byte `offset` (pwrite: safe from several threads for disjoint ranges).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        guard var p = bytes.baseAddress else { return }
        var left = bytes.count, at = offset
        while left > 0 {
            let n = posixPwrite(fd, p, left, off_t(at))
            if n < 0 {
                if errno == EINTR { continue }
                throw OutputWriteError(file: name, code: errno)
            }
            p += n
            at += n
            left -= n
        }
    }

    func write(_ data: Data) throws {
        try data.withUnsafeBytes { try write($0) }
    }

    func close() throws {
        let status = posixClose(fd)
        fd = -1
        if status != 0 && errno != EINTR { throw OutputWriteError(file: name, code: errno) }
    }

    /// Writes `data` to `dir/name` in one go.
    static func write(_ data: Data, to dir: URL, name: String) throws {
        let file = try OutputFile(path: dir.appendingPathComponent(name).path, name: name)
        try file.write(data)
        try file.close()
    }
}
