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

/// The built binary running in the background (for signals), its output going to files in `dir`.
final class BackgroundCLI {
    let process = Process()
    let outURL: URL, errURL: URL
    private let outHandle: FileHandle, errHandle: FileHandle

    init(_ args: [String], outputIn dir: URL) throws {
        outURL = dir.appendingPathComponent("out-\(UUID().uuidString).txt")
        errURL = dir.appendingPathComponent("err-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        outHandle = try FileHandle(forWritingTo: outURL)
        errHandle = try FileHandle(forWritingTo: errURL)
        process.executableURL = CLI.binary
        process.arguments = args
        process.standardOutput = outHandle
        process.standardError = errHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var stdout: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Waits until standard output (or error) holds `text`, the process ends or `seconds` pass;
    /// whether the text came.
    @discardableResult
    func wait(for text: String, inStandardError: Bool = false, seconds: Double, poll: useconds_t = 10_000) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, process.isRunning {
            if (inStandardError ? stderr : stdout).contains(text) { return true }
            usleep(poll)
        }
        return (inStandardError ? stderr : stdout).contains(text)
    }

    func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// Waits for the end; the output files are then complete (and removed).
    func finish() throws -> (reason: Process.TerminationReason, status: Int32, stdout: String, stderr: String) {
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        let result = (process.terminationReason, process.terminationStatus, stdout, stderr)
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
        return result
    }
}
