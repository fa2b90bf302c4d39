// The signals that stop a command: Ctrl-C (SIGINT), SIGTERM, and SIGHUP, which the kernel
// sends when the terminal the command runs in closes (an ssh session dropped, a window
// shut). Each command answers them its own way (training saves a checkpoint, play turns
// every sounding note off, the rest remove their output in progress); this is where the
// list and the installing live, so that all of them answer the same three.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum StopSignals {
    /// SIGINT, SIGTERM and SIGHUP.
    public static let numbers: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// True when `sig` is ignored in this process: a background job started by a
    /// non-interactive shell ignores SIGINT, and `nohup` makes SIGHUP ignored, so that
    /// the command outlives the terminal. Such a signal is left ignored.
    public static func isIgnored(_ sig: Int32) -> Bool {
        var old = sigaction()
        guard sigaction(sig, nil, &old) == 0 else { return false }
        #if canImport(Glibc)
        // SIG_IGN is the handler value 1.
        if let h = old.__sigaction_handler.sa_handler { return unsafeBitCast(h, to: Int.self) == 1 }
        return false
        #else
        return unsafeBitCast(old.__sigaction_u.__sa_handler, to: Int.self) == 1
        #endif
    }

    /// Installs `handler` for the three, leaving each that is ignored ignored; interrupted
    /// system calls restart.
    public static func install(_ handler: @convention(c) (Int32) -> Void) {
        for sig in numbers {
            if isIgnored(sig) { continue }
            var action = sigaction()
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = handler
            #else
            action.__sigaction_u.__sa_handler = handler
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(sig, &action, nil)
        }
    }

    /// How a stop by `sig` is named in messages: "interrupted", "terminated", "hung up".
    public static func name(_ sig: Int32) -> String {
        switch sig {
        case SIGTERM: return "terminated"
        case SIGHUP: return "hung up"
        default: return "interrupted"
        }
    }
}
