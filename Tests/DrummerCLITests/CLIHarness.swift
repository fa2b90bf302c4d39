import Foundation
import XCTest

/// Runs the built `drummer` binary (the end-to-end view a user has).
struct CLIResult {
    let status: Int32
    let stdout: String
    let stderr: String
    /// Standard output as bytes (for binary output such as `sample -o -`).
    var stdoutData = Data()
}

extension XCTestCase {
    /// A refused command: a non-zero exit (exactly `status` when given), `message` in its
    /// standard error, and nothing at `path`.
    func assertRefused(_ r: CLIResult, _ message: String, status: Int32? = nil, nothingAt path: String,
                       file: StaticString = #filePath, line: UInt = #line) {
        if let status { XCTAssertEqual(r.status, status, r.stderr, file: file, line: line) }
        XCTAssertNotEqual(r.status, 0, file: file, line: line)
        XCTAssertTrue(r.stderr.contains(message), r.stderr, file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "nothing written at \(path)", file: file, line: line)
    }
}

enum CLI {
    /// The directory holding the built products (.build/<config>).
    static var productsDirectory: URL {
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    static var binary: URL { productsDirectory.appendingPathComponent("drummer") }

    /// The repository root (for ../shared and shipped data).
    static var repoRoot: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }

    static var shared: URL { repoRoot.deletingLastPathComponent().appendingPathComponent("shared") }

    /// The metadata of the model directory `model` (model.json's "metadata", strings).
    static func modelMetadata(_ model: String) throws -> [String: String] {
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: model + "/model.json"))) as? [String: Any])
        return try XCTUnwrap(json["metadata"] as? [String: String])
    }

    @discardableResult
    static func run(_ args: [String], environment: [String: String] = [:], removing: [String] = [],
                    cwd: URL? = nil, stdin: Data? = nil) throws -> CLIResult {
        try run(executable: binary, args, environment: environment, removing: removing, cwd: cwd, stdin: stdin)
    }

    /// `python3 ARGS` (through /usr/bin/env).
    static func python(_ args: [String], environment: [String: String] = [:], cwd: URL? = nil) throws -> CLIResult {
        try run(executable: URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + args, environment: environment, cwd: cwd)
    }

    /// Whether python3 imports every module named (e.g. "torch, safetensors").
    static func pythonHas(_ modules: String) -> Bool {
        (try? python(["-c", "import \(modules)"]).status) == 0
    }

    /// Runs `executable` with `args`; stdout and stderr captured.
    @discardableResult
    static func run(executable: URL, _ args: [String], environment: [String: String] = [:], removing: [String] = [],
                    cwd: URL? = nil, stdin: Data? = nil) throws -> CLIResult {
        let p = Process()
        p.executableURL = executable
        p.arguments = args
        var env = ProcessInfo.processInfo.environment
        for k in removing { env.removeValue(forKey: k) }
        for (k, v) in environment { env[k] = v }
        p.environment = env
        if let cwd { p.currentDirectoryURL = cwd }
        // Child output goes to temporary files: no pipe can fill up and block it.
        let tmp = FileManager.default.temporaryDirectory
        let outURL = tmp.appendingPathComponent("drummer-out-\(UUID().uuidString)")
        let errURL = tmp.appendingPathComponent("drummer-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        p.standardOutput = outHandle
        p.standardError = errHandle
        if let stdin {
            let inp = Pipe()
            p.standardInput = inp
            try p.run()
            inp.fileHandleForWriting.write(stdin)
            try inp.fileHandleForWriting.close()
        } else {
            p.standardInput = FileHandle.nullDevice
            try p.run()
        }
        p.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        let outData = try Data(contentsOf: outURL), errData = try Data(contentsOf: errURL)
        return CLIResult(status: p.terminationStatus,
                         stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self),
                         stdoutData: outData)
    }

    /// The pid of a process that has exited (it names no process now).
    static func deadPID() throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        return p.processIdentifier
    }

    static func temporaryDirectory(_ name: String = "drummer-test") throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// Test datasets written by hand (NPY 1.0 bytes, not through the Encode module), so
/// the end-to-end tests check the CLI against the format, not against its own writer.
enum TestDataset {
    /// Writes `dir/events.npy` (int32 [pairs.count, 2]) and `dir/vocab.json`.
    static func write(_ dir: URL, pairs: [(Int32, Int32)], vocabJSON: String) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try writeInt32(pairs.flatMap { [$0.0, $0.1] }, shape: [pairs.count, 2], to: dir.appendingPathComponent("events.npy"))
        try Data(vocabJSON.utf8).write(to: dir.appendingPathComponent("vocab.json"))
    }

    /// An int32 .npy file (version 1.0, little-endian, C order) of `shape` ([n] or [n, m]).
    static func writeInt32(_ values: [Int32], shape: [Int], to url: URL) throws {
        let dims = shape.count == 1 ? "(\(shape[0]),)" : "(" + shape.map(String.init).joined(separator: ", ") + ")"
        var header = "{'descr': '<i4', 'fortran_order': False, 'shape': \(dims), }"
        while (10 + header.utf8.count + 1) % 64 != 0 { header += " " }
        header += "\n"
        var d = Data([0x93]) + Data("NUMPY".utf8)
        d += Data([1, 0, UInt8(header.utf8.count & 0xFF), UInt8(header.utf8.count >> 8)])
        d += Data(header.utf8)
        for v in values { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        try d.write(to: url)
    }
}

/// A `drummer` run in the background, its output in files, for sending signals.
final class BackgroundRun {
    let process = Process()
    private let outURL: URL, errURL: URL
    private let out: FileHandle, err: FileHandle

    /// `underNohup` starts it as `nohup drummer ARGS`, SIGHUP ignored as a user's nohup leaves it;
    /// `executable` runs another program with `args` instead (python3 through /usr/bin/env).
    init(_ args: [String], in dir: URL, environment: [String: String] = [:], underNohup: Bool = false,
         executable: URL? = nil) throws {
        outURL = dir.appendingPathComponent(".bg-out-\(UUID().uuidString)")
        errURL = dir.appendingPathComponent(".bg-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        out = try FileHandle(forWritingTo: outURL)
        err = try FileHandle(forWritingTo: errURL)
        process.executableURL = executable ?? (underNohup ? URL(fileURLWithPath: "/usr/bin/nohup") : CLI.binary)
        process.arguments = underNohup && executable == nil ? [CLI.binary.path] + args : args
        process.currentDirectoryURL = dir
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Polls `condition` every `poll` µs (5 ms) for up to `seconds`; false on timeout or exit.
    func wait(seconds: Double, poll: useconds_t = 5_000, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, process.isRunning {
            if condition() { return true }
            usleep(poll)
        }
        return condition()
    }

    /// Waits until standard output (or error) holds `text`; whether it came.
    @discardableResult
    func wait(for text: String, inStandardError: Bool = false, seconds: Double, poll: useconds_t = 5_000) -> Bool {
        wait(seconds: seconds, poll: poll) { (inStandardError ? stderrText : stdoutText).contains(text) }
    }

    func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// What the program has written so far.
    var stdoutText: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }
    var stderrText: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Waits for the exit; (status, stdout, stderr). The output files are removed.
    func finish() throws -> (Int32, String, String) {
        process.waitUntilExit()
        try out.close()
        try err.close()
        let o = try String(contentsOf: outURL, encoding: .utf8), e = try String(contentsOf: errURL, encoding: .utf8)
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
        XCTAssertEqual(process.terminationReason, .exit, "killed by a signal: \(e)")
        return (process.terminationStatus, o, e)
    }
}
