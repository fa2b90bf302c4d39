// Runs python3 for interop tests; tests skip (XCTSkip) when a module is missing.
import Foundation
import XCTest

enum PythonInterop {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs `python3 -c script args...` and returns its exit status and output.
    static func run(_ script: String, _ args: [String] = []) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", script] + args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(status: p.terminationStatus,
                      stdout: String(decoding: o, as: UTF8.self),
                      stderr: String(decoding: e, as: UTF8.self))
    }

    /// Skips the calling test unless `python3 -c "import <module>"` works.
    static func require(_ module: String) throws {
        let ok = (try? run("import \(module)").status) == 0
        if !ok {
            throw XCTSkip("interop test skipped: python3 with '\(module)' is not available (python3 -c \"import \(module)\" failed)")
        }
    }

    /// Runs a script that must succeed; returns its stdout.
    static func check(_ script: String, _ args: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let r = try run(script, args)
        XCTAssertEqual(r.status, 0, "python3 failed: \(r.stderr)", file: file, line: line)
        return r.stdout
    }
}

/// A fresh temporary directory, removed when the test finishes.
func makeTemporaryDirectory(_ test: XCTestCase) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("drummer-encode-tests-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}
