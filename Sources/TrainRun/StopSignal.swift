// Ctrl-C, SIGTERM and SIGHUP during training: the handler only sets an atomic flag; the
// run loop checks it after each step, saves a checkpoint and returns normally
// (exit status 0). The handler does only async-signal-safe work: atomics, write(2)
// of fixed messages, _exit.
//   1st signal: "stopping after this step and saving a checkpoint".
//   2nd signal: noted, the save goes on ("press Ctrl-C once more to quit without
//               saving"); a double tap never loses the final checkpoint.
//   3rd signal: exits at once with status 128 + signal (130 for Ctrl-C) without
//               saving; a checkpoint being written stays a temporary file, which
//               the next run in that directory removes.
import Checkpoints
import FileOutput
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

private let stopFlag = Atomic<Int>(0)
private let signalCount = Atomic<Int>(0)
private let firstMessage: StaticString =
    "\ndrummer: stopping after this step and saving a checkpoint (press Ctrl-C twice more to quit without saving)\n"
private let secondMessage: StaticString =
    "\ndrummer: already stopping: the checkpoint is saved after this step; press Ctrl-C once more to quit without saving\n"
private let thirdMessage: StaticString =
    "\ndrummer: quitting without saving a checkpoint (the last one written is kept)\n"

public enum StopSignal {
    /// Installs the handler of SIGINT, SIGTERM and SIGHUP (the terminal closing); one ignored
    /// when the run starts (SIGHUP under nohup) stays ignored. Interrupted system calls
    /// restart: a signal must not fail the save.
    public static func install() {
        StopSignals.install(handle)
    }

    /// True once a stop signal has arrived.
    public static var requested: Bool { stopFlag.load(ordering: .relaxed) != 0 }

    /// The signal received (0 when none).
    public static var signalNumber: Int32 { Int32(truncatingIfNeeded: stopFlag.load(ordering: .relaxed)) }

    /// Sets the flag as a signal would (tests, programmatic stops).
    public static func request(_ sig: Int32 = SIGINT) { stopFlag.store(Int(sig), ordering: .relaxed) }

    public static func reset() {
        stopFlag.store(0, ordering: .relaxed)
        signalCount.store(0, ordering: .relaxed)
    }
}

private func say(_ message: StaticString) {
    _ = write(STDERR_FILENO, message.utf8Start, message.utf8CodeUnitCount)
}

private func handle(_ sig: Int32) {
    let count = signalCount.wrappingAdd(1, ordering: .relaxed).newValue
    switch count {
    case 1:
        stopFlag.store(Int(sig), ordering: .relaxed)
        say(firstMessage)
    case 2:
        say(secondMessage)
    default:
        say(thirdMessage)
        _exit(128 + sig)
    }
}
