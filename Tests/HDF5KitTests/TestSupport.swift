// Temporary directories and external tools (python3/h5py, h5dump) for the HDF5Kit tests.
import Foundation
import XCTest
@testable import HDF5Kit

func makeTemporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("drummer-hdf5-tests-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

struct ToolResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs a program found on PATH.
func runTool(_ name: String, _ args: [String]) throws -> ToolResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = [name] + args
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return ToolResult(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                      stderr: String(decoding: e, as: UTF8.self))
}

/// Skips unless `python3 -c "import <module>"` works.
func requirePython(_ module: String) throws {
    guard (try? runTool("python3", ["-c", "import \(module)"]).status) == 0 else {
        throw XCTSkip("interop test skipped: python3 with '\(module)' is not available (python3 -c \"import \(module)\" failed)")
    }
}

/// Skips unless `tool` is on PATH.
func requireTool(_ tool: String) throws {
    guard (try? runTool("which", [tool]).status) == 0 else {
        throw XCTSkip("interop test skipped: '\(tool)' is not on PATH (install hdf5-tools)")
    }
}

/// Asserts that `body` throws an HDF5Error whose kind satisfies `match`; returns it.
@discardableResult
func assertHDF5Error<T>(_ body: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line,
                        _ match: (HDF5Error.Kind) -> Bool) -> HDF5Error? {
    do {
        _ = try body()
        XCTFail("expected an HDF5Error", file: file, line: line)
    } catch let e as HDF5Error {
        XCTAssertTrue(match(e.kind), "unexpected kind: \(e)", file: file, line: line)
        XCTAssertFalse(e.description.contains("\n"), e.description, file: file, line: line)
        return e
    } catch {
        XCTFail("unexpected error type: \(error)", file: file, line: line)
    }
    return nil
}

// MARK: - Child processes

/// What a child run of this test binary did.
struct ChildResult {
    /// Exit status, or the signal number when `signaled`.
    let status: Int32
    let signaled: Bool
    /// Killed after `timeout` without finishing.
    let timedOut: Bool
    /// stdout and stderr together.
    let output: String
}

/// Runs one test of this test binary (`HDF5KitTests.Class/testMethod`) in a
/// child process with `environment` added, for work that may crash libhdf5 or
/// that must be checked up to process exit (libhdf5's clean-up at exit is where
/// a dangling file id crashes). The child is killed after `timeout` seconds,
/// or when `progress` (checked every 20 ms) has not changed for that long.
func runChildTest(_ test: String, environment: [String: String], timeout: TimeInterval,
                  progress: (() -> Int)? = nil) throws -> ChildResult {
    let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let log = FileManager.default.temporaryDirectory
        .appendingPathComponent("drummer-hdf5-child-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log")
    guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: log.path])
    }
    defer { try? FileManager.default.removeItem(at: log) }
    let out = try FileHandle(forWritingTo: log)
    defer { try? out.close() }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: exe)
    p.arguments = [test]
    var env = ProcessInfo.processInfo.environment
    // A crash is an expected outcome here: no slow symbolicated backtrace.
    env["SWIFT_BACKTRACE"] = "enable=no"
    for (k, v) in environment { env[k] = v }
    p.environment = env
    p.standardOutput = out
    p.standardError = out
    try p.run()
    var last = progress?() ?? 0
    var lastChange = Date()
    var timedOut = false
    while p.isRunning {
        usleep(20_000)
        if let progress {
            let now = progress()
            if now != last { last = now; lastChange = Date() }
        }
        if Date().timeIntervalSince(lastChange) > timeout {
            kill(p.processIdentifier, SIGKILL)
            timedOut = true
            break
        }
    }
    p.waitUntilExit()
    let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    return ChildResult(status: p.terminationStatus, signaled: p.terminationReason == .uncaughtSignal,
                       timedOut: timedOut, output: text)
}
