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

// MARK: - A checkpoint-like sample and a canonical dump of a file

/// Fills `f` like a trainer checkpoint: nested groups, matrices of every numeric
/// type, a scalar, an empty array, strings, and a group with more attributes
/// than fit an object header's compact storage (HDF5 moves them to a heap).
func writeCheckpointLikeSample(_ f: H5File) throws {
    try f.setAttribute("format", string: "drummer-lstm-checkpoint")
    try f.setAttribute("format_version", int64: 3)
    try f.setAttribute("created_by", string: "drummer 🥁 test")
    try f.createDataset("model/Wx", values: (0..<(40 * 100)).map { Float($0) * 0.001 - 1 }, shape: [40, 100])
    try f.createDataset("model/Wy", values: (0..<(20 * 30)).map { Float($0) / 64 }, shape: [20, 30])
    try f.createDataset("state/h", values: [Float](repeating: 0.25, count: 6), shape: [2, 3])
    try f.createDataset("state/empty", values: [Float](), shape: [0, 3])
    try f.group("state").setAttribute("step", int64: 123_456)
    try f.createDataset("optimizer/mean", values: (0..<500).map { Double($0) / 3 }, shape: [500])
    try f.createDataset("rng/state", values: [UInt64(0x0123_4567_89AB_CDEF), .max, 1, 0x8000_0000_0000_0000], shape: [4])
    try f.createDataset("rng/seed", scalar: UInt64(42))
    try f.createDataset("vocabulary/ix_to_note", values: [Int64(36), 38, 42, 46, 49], shape: [5])
    try f.createDataset("vocabulary/counts", values: [Int32(7), -8, 9], shape: [3])
    try f.createDataset("data/path", string: "/work/data/X.npy")
    try f.createDataset("data/words", strings: ["kick", "snare", "", "ドラム"], shape: [2, 2])
    let hp = try f.createGroup("hyperparameters")
    for (i, name) in ["hidden", "unroll", "batch_size", "checkpoint_every", "keep", "log_every",
                      "eval_every", "lr_decay_every", "steps"].enumerated() {
        try hp.setAttribute(name, int64: Int64(i * 100 + 1))
    }
    for (i, name) in ["learning_rate", "momentum", "decay", "epsilon", "clip"].enumerated() {
        try hp.setAttribute(name, double: 1.0 / Double(i + 3))
    }
    try hp.setAttribute("optimizer", string: "adam")
    try hp.setAttribute("init_from", string: "")
}

/// Every group, dataset and attribute of `f` with its value, one line each, in
/// name order: two files hold the same data iff their dumps are equal.
/// Datasets over `maxBytes` are listed by shape only (a damaged shape must not
/// make the reader allocate gigabytes).
func canonicalDump(_ f: H5File, maxBytes: Int = 64 << 20) throws -> [String] {
    var lines: [String] = []
    func attributes(_ o: H5Object) throws {
        for name in try o.attributeNames() {
            lines.append("\(o.objectPath)@\(name) = \(try o.attribute(name))")
        }
    }
    func visit(_ g: H5Container) throws {
        try attributes(g)
        for name in try g.members() {
            switch try g.kind(of: name) {
            case .group:
                let sub = try g.group(name)
                lines.append("group \(sub.objectPath)")
                try visit(sub)
            case .dataset:
                let ds = try g.dataset(name)
                let shape = try ds.shape(), dtype = try ds.dtype()
                var line = "dataset \(ds.objectPath) \(dtype) \(shape)"
                let count = shape.reduce(1) { $0.multipliedReportingOverflow(by: $1).overflow ? .max : $0 * $1 }
                if count > maxBytes / 8 {
                    line += " (not read: too large)"
                } else {
                    switch dtype {
                    case .float32: line += " \(try ds.read(Float.self).map(\.bitPattern))"
                    case .float64: line += " \(try ds.read(Double.self).map(\.bitPattern))"
                    case .int32: line += " \(try ds.read(Int32.self))"
                    case .int64: line += " \(try ds.read(Int64.self))"
                    case .uint64: line += " \(try ds.read(UInt64.self))"
                    case .string: line += " \(try ds.readStrings())"
                    case .other: line += " (other type)"
                    }
                }
                lines.append(line)
                try attributes(ds)
            case .other:
                lines.append("other \(g.objectPath)/\(name)")
            }
        }
    }
    try visit(f)
    return lines
}
