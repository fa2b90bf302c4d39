// Ctrl-C, SIGTERM and SIGHUP for commands that have nothing to save (convert-midi, export,
// sample): the output in progress is abandoned and its temporaries are removed.
//
// Design: the signal handler does only async-signal-safe work: it counts the
// signal and writes its number to a pipe. A watcher thread blocked on that pipe
// does the cleanup with ordinary code (removing a directory tree is not
// async-signal-safe): it takes the registry lock (so a rename into place is either
// complete or not started), removes every registered temporary, says what was not
// written and calls _exit(128 + signal), 130 for Ctrl-C. The main thread may still
// be writing into a temporary that is being removed; if that makes it fail, the
// CLI's error path calls `waitIfInterrupted()`, which parks it until the watcher
// exits, so the user sees the interrupt, not a follow-on error. A second signal
// during the cleanup is absorbed; a third ends the process at once (_exit from
// the handler) for a cleanup that hangs.
//
// Training's steps do not use this: they stop gracefully and save (TrainRun's StopSignal);
// `train -o` installs it once training has ended, for choosing the step and exporting.
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private let signalCount = Atomic<Int>(0)
private let pipeWriteEnd = Atomic<Int32>(-1)
private let installed = Atomic<Bool>(false)
private let closingNote = Mutex<(text: String, output: String?)?>(nil)
private let children = Mutex<Set<Int32>>([])
private let hardExitMessage: StaticString = "\ndrummer: interrupted again: exiting without cleaning up\n"

private func cleanupHandler(_ sig: Int32) {
    let count = signalCount.wrappingAdd(1, ordering: .relaxed).newValue
    if count >= 3 {
        _ = write(STDERR_FILENO, hardExitMessage.utf8Start, hardExitMessage.utf8CodeUnitCount)
        _exit(128 + sig)
    }
    var byte = UInt8(truncatingIfNeeded: sig)
    _ = write(pipeWriteEnd.load(ordering: .relaxed), &byte, 1)
}

public enum InterruptCleanup {
    /// Installs the SIGINT, SIGTERM and SIGHUP handlers and the watcher thread (once; later
    /// calls do nothing). A signal that was ignored when the process started (SIGINT in a
    /// background job, SIGHUP under nohup) stays ignored.
    ///
    /// `note`: a last line to say after what was not written (how to finish the job later),
    /// left out once `noteOutput` is written. What a stop reports as written counts from here.
    public static func install(note: String? = nil, noteOutput: String? = nil) {
        closingNote.withLock { $0 = note.map { ($0, noteOutput) } }
        TemporaryFiles.registry.withLock { $0.written = [] }
        guard installed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        pipeWriteEnd.store(fds[1], ordering: .relaxed)
        let readEnd = fds[0]
        let watcher = Thread {
            var byte: UInt8 = 0
            while true {
                let n = read(readEnd, &byte, 1)
                if n == 1 { break }
                if n < 0, errno == EINTR { continue }
                return
            }
            cleanUpAndExit(signal: Int32(byte))
        }
        watcher.name = "drummer-interrupt"
        watcher.start()
        StopSignals.install(cleanupHandler)
    }

    /// A child process writing an output (FluidSynth rendering a WAV): an interrupt ends it
    /// (SIGTERM) before removing the temporaries, rather than leave it rendering into a removed
    /// file after the command has exited. `untrack` once it has exited.
    package static func track(child pid: Int32) { _ = children.withLock { $0.insert(pid) } }
    package static func untrack(child pid: Int32) { _ = children.withLock { $0.remove(pid) } }

    /// True once SIGINT, SIGTERM or SIGHUP has arrived while the handler is installed.
    public static var interrupted: Bool { signalCount.load(ordering: .relaxed) > 0 }

    /// On an error path: when an interrupt is being handled, waits (up to a minute)
    /// for the watcher to finish the cleanup and end the process.
    public static func waitIfInterrupted() {
        guard installed.load(ordering: .relaxed), interrupted else { return }
        for _ in 0..<600 { usleep(100_000) }
    }

    static func cleanUpAndExit(signal sig: Int32) -> Never {
        // The lock is held until _exit: no rename into place, no new temporary after this.
        TemporaryFiles.registry.withLock { registry -> Never in
            Console.writeError(Data(("\n" + cleanUp(&registry, signal: sig)).utf8))
            // Lines already printed (say sample's "wrote ..." for earlier files) are kept.
            fflush(nil)
            _exit(128 + sig)
        }
    }

    /// Ends the tracked children, removes `registry`'s temporaries and says what the stop by `sig` left: the outputs already
    /// written, those not written, any temporary that stayed, and the closing note.
    static func cleanUp(_ registry: inout TemporaryFiles.Registry, signal sig: Int32) -> String {
        for pid in children.withLock({ $0 }) { kill(pid, SIGTERM) }
        let entries = registry.entries.sorted { $0.key < $1.key }.map(\.value)
        var lines: [String] = [], removed: [String] = []
        for entry in entries {
            var st = stat()
            guard lstat(entry.path, &st) == 0 else { continue }
            do {
                try FileManager.default.removeItem(atPath: entry.path)
                if !entry.oldCopy && !entry.scratch { removed.append(entry.destination) }
            } catch where entry.scratch {
                lines.append("could not remove the temporary \(entry.path): \(ErrorText.describe(error))")
            } catch where entry.oldCopy {
                lines.append("\(entry.destination) was written; could not remove the directory it replaced, "
                    + "\(entry.path): \(ErrorText.describe(error))")
            } catch {
                lines.append("\(entry.destination) was not written; could not remove its temporary "
                    + "\(entry.path): \(ErrorText.describe(error))")
            }
        }
        registry.entries = [:]
        func list(_ paths: [String]) -> String {
            paths.count <= 3 ? paths.joined(separator: ", ") : "\(paths[0]), \(paths[1]) … \(paths[paths.count - 1])"
        }
        // One line for the outputs cleaned up (a run of many files, sample --count 200, says
        // so once), then one per output whose temporary stayed.
        if removed.count == 1 {
            lines.insert("\(removed[0]) was not written (its temporary output was removed)", at: 0)
        } else if removed.count > 1 {
            lines.insert("\(removed.count) outputs were not written (\(list(removed)); their temporary outputs were removed)", at: 0)
        }
        // Outputs already in place when the signal came: said, so that no line claims the stop
        // left them as they were.
        let written = registry.written
        if written.count == 1 {
            lines.insert("\(written[0]) was written before the stop", at: 0)
        } else if written.count > 1 {
            lines.insert("\(written.count) outputs were written before the stop (\(list(written)))", at: 0)
        }
        if let note = closingNote.withLock({ $0 }), !(note.output.map(written.contains) ?? false) { lines.append(note.text) }
        let name = StopSignals.name(sig)
        return lines.isEmpty ? "drummer: \(name)\n" : lines.map { "drummer: \(name): \($0)\n" }.joined()
    }
}
