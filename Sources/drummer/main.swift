// Entry point. Before anything else, make sure OpenBLAS runs the fastest kernels
// this CPU supports (re-executes once when it does not; see BLASRuntime).
import DrummerCore

BLASRuntime.ensureFastKernels()
// Drummer.main(), with one addition: an error caused by Ctrl-C removing a temporary
// output mid-write waits for the interrupt's cleanup to end the process (status 130)
// instead of reporting the follow-on error (see InterruptCleanup).
do {
    var command = try Drummer.parseAsRoot()
    try command.run()
} catch {
    InterruptCleanup.waitIfInterrupted()
    Drummer.exit(withError: error)
}
