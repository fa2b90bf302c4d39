// Entry point. Before anything else, make sure OpenBLAS runs the fastest kernels
// this CPU supports (re-executes once when it does not; see BLASRuntime).
import ArgumentParser
import DrummerCore
import Foundation
import FileOutput

// A reader that goes away is a failed write (Console), not a signal that kills the process
// mid-work (a live player with its notes sounding). As the process ends: a reader gone ends it
// quietly with SIGPIPE's shell status (128 + 13), another failure is said, with status 1; but
// a status of the command's own (an error's, a signal's: 128 + the signal) stands.
signal(SIGPIPE, SIG_IGN)
nonisolated(unsafe) var failedWithOwnStatus = false
atexit {
    if let failure = Console.endOfOutput() {
        if failure.readerGone {
            if !failedWithOwnStatus { _exit(128 + SIGPIPE) }
            return
        }
        Console.writeError(Data("error: could not write to standard output: \(failure.reason)\n".utf8))
        if !failedWithOwnStatus { _exit(1) }
    }
}

// Swift reads the arguments as UTF-8, repairing other bytes: `-o $'bad\xff.mid'` would write
// another name than the one given, `tab $'in\xff.mid'` would find no file. Refused, with the
// argument's bytes shown.
for i in 1..<Int(CommandLine.argc) {
    guard let raw = CommandLine.unsafeArgv[i], String(validatingCString: raw) == nil else { continue }
    let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw))
    let shown = bytes.map { $0 >= 0x20 && $0 < 0x7F ? String(UnicodeScalar($0)) : String(format: "\\x%02X", $0) }.joined()
    Console.writeError(Data("error: argument \(i) (\(shown)) is not UTF-8 text: drummer reads file names and options as UTF-8; rename the file or give another name\n".utf8))
    exit(ExitCode.validationFailure.rawValue)
}

// A DRUMMER_MAX_ISA that names no level is an error, not a silent default.
if let message = KernelISA.settingError {
    Console.writeError(Data(("error: " + message + "\n").utf8))
    exit(1)
}
// Under a small `ulimit -v` a command would crash on a failed allocation or hang in OpenBLAS:
// refused at once instead.
if let message = ModelLimits.addressSpaceError {
    Console.writeError(Data(("error: " + message + "\n").utf8))
    exit(1)
}
// The runtime commands run OpenBLAS on one thread (the sampler splits its steps over its own).
BLASRuntime.ensureFastKernels(singleThreaded: ["sample", "humanize", "play"].contains(CommandLine.arguments.dropFirst().first ?? ""))
// A command word that names no command gets the nearest command's name (argument-parser only
// says "Unexpected argument", or prints a help with status 0).
if let message = Drummer.unknownCommand(in: CommandLine.arguments.dropFirst()) {
    Console.writeError(Data((message + "\n").utf8))
    exit(ExitCode.validationFailure.rawValue)
}
// Drummer.main(), with one addition: an error caused by Ctrl-C removing a temporary
// output mid-write waits for the interrupt's cleanup to end the process (status 130)
// instead of reporting the follow-on error (see InterruptCleanup).
var parsed: ParsableCommand.Type?
do {
    var command = try Drummer.parseAsRoot()
    parsed = type(of: command)
    try command.run()
} catch {
    failedWithOwnStatus = !Drummer.exitCode(for: error).isSuccess
    InterruptCleanup.waitIfInterrupted()
    // A usage error found once the command runs (an option that does not fit the model read):
    // the command's own usage line, where argument-parser would print the top level's.
    if let parsed, let e = error as? ValidationError {
        Console.writeError(Data((Drummer.usageError(e.message, of: parsed) + "\n").utf8))
        exit(ExitCode.validationFailure.rawValue)
    }
    // A failure at run time (exit 1) reads "error: …" on every command, as convert-midi,
    // stats, report and tab print theirs; usage errors (exit 64) keep argument-parser's
    // "Error: …" with the usage line.
    let code = Drummer.exitCode(for: error)
    let message = Drummer.fullMessage(for: error)
    if code == .failure, !(error is ExitCode), message.hasPrefix("Error: ") {
        Console.writeError(Data(("error: " + message.dropFirst("Error: ".count) + "\n").utf8))
        exit(code.rawValue)
    }
    Drummer.exit(withError: error)
}
