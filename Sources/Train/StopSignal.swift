// Ctrl-C and SIGTERM during training: the handler only sets an atomic flag; the
// run loop checks it after each step, saves a checkpoint and returns normally.
// A second signal while the first is pending restores the default action and
// re-raises it (an impatient user can still kill the process).
#if canImport(Glibc)
import Checkpoints
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

private let stopFlag = Atomic<Int>(0)

public enum StopSignal {
    /// Installs the SIGINT and SIGTERM handlers.
    public static func install() {
        for sig in [SIGINT, SIGTERM] {
            var action = sigaction()
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = handle
            #else
            action.__sigaction_u.__sa_handler = handle
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(sig, &action, nil)
        }
    }

    /// True once SIGINT or SIGTERM has arrived.
    public static var requested: Bool { stopFlag.load(ordering: .relaxed) != 0 }

    /// The signal received (0 when none).
    public static var signalNumber: Int32 { Int32(truncatingIfNeeded: stopFlag.load(ordering: .relaxed)) }

    /// Sets the flag as a signal would (tests, programmatic stops).
    public static func request(_ sig: Int32 = SIGINT) { stopFlag.store(Int(sig), ordering: .relaxed) }

    public static func reset() { stopFlag.store(0, ordering: .relaxed) }
}

private func handle(_ sig: Int32) {
    if stopFlag.load(ordering: .relaxed) != 0 {
        signal(sig, SIG_DFL)
        raise(sig)
        return
    }
    stopFlag.store(Int(sig), ordering: .relaxed)
}
