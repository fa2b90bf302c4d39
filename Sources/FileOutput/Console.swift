// Standard output and standard error for the commands' lines and reports. Foundation's
// FileHandle.write(_:) traps when a write fails (a reader that went away, a full disk): a live
// player would crash with its notes sounding, a report would die mid-line. Here a failed write
// to standard output is remembered and reported once as the process ends (`endOfOutput`, exit
// 1: what was to be printed is lost), and the command goes on; a failed write to standard error
// is dropped (there is nowhere left to say it).
import Foundation
#if canImport(Glibc)
import Glibc
#endif

package enum Console {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var failure: String?

    /// Writes `data` to standard output; a failure is remembered, not raised.
    package static func write(_ data: Data) {
        // What print() buffered goes first, so that the lines keep their order.
        fflush(nil)
        do { try AtomicOutput.writeAll(data, to: STDOUT_FILENO) } catch { remember(error) }
    }

    /// Writes `data` to standard error; a failure is dropped.
    package static func writeError(_ data: Data) {
        try? AtomicOutput.writeAll(data, to: STDERR_FILENO)
    }

    private static func remember(_ error: Error) {
        lock.lock()
        defer { lock.unlock() }
        guard failure == nil else { return }
        if let e = error as? AtomicOutput.SystemCallError { failure = ErrorText.errno(e.code) } else { failure = ErrorText.describe(error) }
    }

    /// As the process ends: the buffered output flushed, and why standard output could not be
    /// written, if it could not (by `write` or by print's buffered stream).
    package static func endOfOutput() -> String? {
        if fflush(nil) != 0 { remember(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)) }
        lock.lock()
        defer { lock.unlock() }
        return failure
    }
}
