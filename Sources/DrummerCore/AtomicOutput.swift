// Output that never looks complete unless it is: files and directories are
// written under a temporary name beside their destination and renamed into place.
import Foundation

public struct OutputError: Error, CustomStringConvertible {
    public let path: String
    public let message: String
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path): \(message)" }
}

public enum AtomicOutput {
    /// Writes `data` to `path` through a temporary file in the same directory
    /// and rename(2), so readers see either the old file or the whole new one.
    public static func write(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent()
        let tmp = dir.appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try data.write(to: tmp)
        } catch {
            try? FileManager.default.removeItem(at: tmp)
            throw OutputError(path: path, message: "cannot write: \(error.localizedDescription)")
        }
        guard rename(tmp.path, url.path) == 0 else {
            let msg = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: tmp)
            throw OutputError(path: path, message: "cannot rename temporary file into place: \(msg)")
        }
    }

    /// Creates a temporary directory beside `path`, lets `fill` write into it,
    /// then moves it into place (replacing an existing directory at `path`).
    /// On error the temporary directory is removed and `path` is untouched.
    public static func directory<T>(at path: String, _ fill: (URL) throws -> T) throws -> T {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let parent = url.deletingLastPathComponent()
        let tag = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let tmp = parent.appendingPathComponent(".\(url.lastPathComponent).tmp-\(tag)")
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: url.path, isDirectory: &isDir), !isDir.boolValue {
            throw OutputError(path: path, message: "exists and is not a directory")
        }
        do {
            try fm.createDirectory(at: tmp, withIntermediateDirectories: true)
        } catch {
            throw OutputError(path: path, message: "cannot create a temporary directory beside it: \(error.localizedDescription)")
        }
        let result: T
        do {
            result = try fill(tmp)
        } catch {
            try? fm.removeItem(at: tmp)
            throw error
        }
        if fm.fileExists(atPath: url.path) {
            let old = parent.appendingPathComponent(".\(url.lastPathComponent).old-\(tag)")
            guard rename(url.path, old.path) == 0 else {
                let msg = String(cString: strerror(errno))
                try? fm.removeItem(at: tmp)
                throw OutputError(path: path, message: "cannot move the old directory aside: \(msg)")
            }
            guard rename(tmp.path, url.path) == 0 else {
                let msg = String(cString: strerror(errno))
                _ = rename(old.path, url.path)
                try? fm.removeItem(at: tmp)
                throw OutputError(path: path, message: "cannot rename the new directory into place: \(msg)")
            }
            try? fm.removeItem(at: old)
        } else {
            guard rename(tmp.path, url.path) == 0 else {
                let msg = String(cString: strerror(errno))
                try? fm.removeItem(at: tmp)
                throw OutputError(path: path, message: "cannot rename the new directory into place: \(msg)")
            }
        }
        return result
    }
}

/// JSON as the toolchain writes it: sorted keys, pretty-printed, trailing newline.
public enum JSONOutput {
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var d = try enc.encode(value)
        d.append(0x0A)
        return d
    }
}

public enum DrummerVersion {
    public static let string = "0.1.0"
}
