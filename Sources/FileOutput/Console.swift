// Standard output and standard error for the commands' lines and reports. Foundation's
// FileHandle.write(_:) traps when a write fails (a reader that went away, a full disk): a live
// player would crash with its notes sounding, a report would die mid-line. Here a failed write
// to standard output is remembered and answered once as the process ends (`endOfOutput`): a
// full disk or another failure is reported (exit 1: what was to be printed is lost); a reader
// that went away (`tab … | head`) ends the process quietly with the status a shell gives one
// that SIGPIPE ended (141), as `cat` or `git` do. The command goes on meanwhile; a failed write
// to standard error is dropped (there is nowhere left to say it).
import Foundation
#if canImport(Glibc)
import Glibc
#endif

package enum Console {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var failure: OutputFailure?

    /// Why standard output could not be written.
    package struct OutputFailure: Equatable {
        /// The cause, as a phrase.
        package var reason: String
        /// The reader went away (EPIPE): nothing to report.
        package var readerGone: Bool
    }

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

    /// Where a command's status lines go beside an output at `destination`: standard output,
    /// unless the output itself goes there (`-o -`, `/dev/stdout`); then standard error, so
    /// that the piped bytes are the output's alone.
    package static func statusLines(besideOutputTo destination: OutputDestination) -> (String) -> Void {
        statusLines(toStandardError: destination.isStandardOutput)
    }

    /// Status lines on standard error (`toStandardError`: an output of the command takes
    /// standard output), else on standard output.
    package static func statusLines(toStandardError: Bool) -> (String) -> Void {
        toStandardError ? { writeError(Data(($0 + "\n").utf8)) } : { Swift.print($0) }
    }

    /// As `statusLines(besideOutputTo:)` for the output path `path` as given (`-`, `/dev/stdout`),
    /// before it is checked: a path that cannot be written is refused where it is written.
    package static func statusLines(besideOutputAt path: String) -> (String) -> Void {
        statusLines(toStandardError: (try? AtomicOutput.resolve(path, options: .userFile))?.isStandardOutput == true)
    }

    private static func remember(_ error: Error) {
        lock.lock()
        defer { lock.unlock() }
        guard failure == nil else { return }
        let code = (error as? AtomicOutput.SystemCallError)?.code ?? (error as? POSIXError)?.code.rawValue
        failure = OutputFailure(reason: code.map(ErrorText.errno) ?? ErrorText.describe(error), readerGone: code == EPIPE)
    }

    /// As the process ends: the buffered output flushed, and why standard output could not be
    /// written, if it could not (by `write` or by print's buffered stream).
    package static func endOfOutput() -> OutputFailure? {
        if fflush(nil) != 0 { remember(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)) }
        lock.lock()
        defer { lock.unlock() }
        return failure
    }
}
