// The tool's temporary files: their names, the registry of those in flight
// (removed on Ctrl-C, see InterruptCleanup), and the sweeper that removes the
// ones a killed run left behind.
//
// Names: `.NAME.drummer-tmp-<pid>-<start>-<tag>` beside the output NAME, where
// <start> is the process's start time (clock ticks since boot, /proc/<pid>/stat
// field 22) and <tag> 8 random hex digits; a directory being replaced is moved
// aside as `.NAME.drummer-old-<pid>-<start>-<tag>` where renameat2 cannot swap.
// A temporary is stale when its process is gone, or when a process with that pid
// is alive but started at another time (the pid was reused). Older versions named a
// checkpoint's temporary `.ckpt-N.h5.tmp-<pid>-<n>`: stale when that pid is gone. Nothing
// else that does not carry one of the two markers is ever removed: a name such as `.drums.old-2024-05`
// is a user's, however much it looks like a temporary.
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum TemporaryFiles {
    static let marker = ".drummer-tmp-"
    static let asideMarker = ".drummer-old-"

    /// This process's start time in clock ticks since boot, 0 where /proc is missing.
    public static let processStart: UInt64 = startTime(of: getpid()) ?? 0

    /// The name of a temporary file or directory for the output named `name`. The name is
    /// shortened (on a character boundary) so that the temporary's stays within a file name's
    /// 255 bytes: an output named up to that limit can be written (only the marker and tag are
    /// read back from a temporary's name).
    public static func temporaryName(for name: String) -> String {
        let suffix = marker + tag()
        var base = Substring(name)
        while 1 + base.utf8.count + suffix.utf8.count > 255, !base.isEmpty { base = base.dropLast() }
        return "." + base + suffix
    }

    /// The name under which an existing directory `name` is moved aside while replaced.
    static func asideName(for name: String) -> String {
        "." + name + asideMarker + tag()
    }

    private static func tag() -> String {
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return "\(getpid())-\(processStart)-" + String(repeating: "0", count: 8 - random.count) + random
    }

    // MARK: - Registry of temporaries in flight

    /// A temporary file or directory registered while it exists.
    public struct Registration: Hashable, Sendable {
        let id: Int
    }

    struct Entry: Sendable {
        let path: String
        let destination: String
        /// The path holds the directory the output replaced (swapped out, being removed), not an
        /// output in progress: an interrupt removes it without saying the output was not written.
        var oldCopy = false
        /// A working file or directory, no output's (a WAV rendered for a page): removed without a word.
        var scratch = false
    }

    struct Registry: Sendable {
        var next = 0
        var entries: [Int: Entry] = [:]
        /// Outputs put in place so far (as given): an interrupt after them says they were written.
        var written: [String] = []

        /// `registration`'s output is in place: forgotten, or kept as the old copy to remove.
        mutating func placed(_ registration: Registration, oldCopyRemains: Bool = false) {
            guard let entry = entries[registration.id] else { return }
            if !written.contains(entry.destination) { written.append(entry.destination) }
            if oldCopyRemains { entries[registration.id]?.oldCopy = true } else { remove(registration) }
        }

        mutating func add(_ path: String, destination: String, oldCopy: Bool = false, scratch: Bool = false) -> Registration {
            next += 1
            entries[next] = Entry(path: path, destination: destination, oldCopy: oldCopy, scratch: scratch)
            return Registration(id: next)
        }

        mutating func remove(_ registration: Registration) {
            entries.removeValue(forKey: registration.id)
        }
    }

    static let registry = Mutex(Registry())

    /// Records `path` (a temporary of this process, destined for `destination`) so that
    /// an interrupt removes it (see `InterruptCleanup`).
    package static func register(_ path: String, destination: String) -> Registration {
        registry.withLock { $0.add(path, destination: destination) }
    }

    /// Records `path`, a working file or directory of this process that is no output (a clip
    /// rendered for a report), for an interrupt to remove without naming it as an output.
    package static func registerScratch(_ path: String) -> Registration {
        registry.withLock { $0.add(path, destination: path, scratch: true) }
    }

    /// Forgets a temporary that was renamed into place or removed.
    package static func unregister(_ registration: Registration) {
        registry.withLock { $0.remove(registration) }
    }

    /// The temporaries registered now, oldest first.
    public static var inFlight: [String] {
        registry.withLock { r in r.entries.sorted { $0.key < $1.key }.map(\.value.path) }
    }

    /// Runs `body` while no interrupt can remove registered temporaries (creation and
    /// renames into place happen here, so an interrupt sees either the registered
    /// temporary or the finished output).
    static func withRegistryLocked<T: Sendable>(_ body: (inout Registry) -> T) -> T {
        registry.withLock { body(&$0) }
    }

    // MARK: - Stale temporaries

    /// A name of one of this tool's temporaries, taken apart.
    struct Parsed: Equatable {
        enum Kind: Equatable { case temporary, aside }
        var kind: Kind
        /// The output's name (what the temporary replaces).
        var base: String
        var pid: Int32
        /// The owner's start time in clock ticks since boot (nil in an older checkpoint's name).
        var start: UInt64?
    }

    static func parse(_ name: String) -> Parsed? {
        guard name.hasPrefix("."), name.count > 1 else { return nil }
        let body = name.dropFirst()
        for (m, kind) in [(marker, Parsed.Kind.temporary), (asideMarker, .aside)] {
            guard let r = body.range(of: m, options: .backwards) else { continue }
            let base = String(body[..<r.lowerBound])
            let parts = body[r.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
            guard !base.isEmpty, parts.count == 3,
                  let pid = Int32(parts[0]), pid > 0, let start = UInt64(parts[1]),
                  parts[2].count == 8, UInt32(parts[2], radix: 16) != nil
            else { continue }
            return Parsed(kind: kind, base: base, pid: pid, start: start)
        }
        // An older version's checkpoint temporary, `.ckpt-<step>.h5.tmp-<pid>-<n>` (hundreds of MB
        // each): a name only this tool gives, kept apart from other `.x.tmp-…` names.
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0].hasPrefix("ckpt-"), UInt64(parts[0].dropFirst(5)) != nil, parts[1] == "h5" {
            let tail = parts[2].split(separator: "-", omittingEmptySubsequences: false)
            if tail.count == 3, tail[0] == "tmp", let pid = Int32(tail[1]), pid > 0, UInt64(tail[2]) != nil {
                return Parsed(kind: .temporary, base: parts[0] + ".h5", pid: pid, start: nil)
            }
        }
        return nil
    }

    /// True when the process that made `parsed` is gone.
    static func isStale(_ parsed: Parsed) -> Bool {
        if kill(parsed.pid, 0) != 0, errno == ESRCH { return true }
        // A process with that pid is alive (or not ours to signal): stale when it started at
        // another time (the pid was reused).
        guard let start = parsed.start, let now = startTime(of: parsed.pid) else { return false }
        return now != start
    }

    /// What a sweep found.
    public struct Sweep: Equatable, Sendable {
        /// Stale temporaries removed (paths).
        public var removed: [String] = []
        /// Directories a killed run had moved aside while replacing them and never put
        /// back: renamed back to their name (paths of the restored directories).
        public var restored: [String] = []
        /// Stale temporaries that could not be removed, with the reason.
        public var failed: [String] = []

        /// The line to print, nil when nothing was found.
        public func line(directory: String) -> String? {
            var parts: [String] = []
            if !removed.isEmpty {
                parts.append("removed \(removed.count) stale temporary output(s) (files or folders) from a killed run in \(directory)")
            }
            if !restored.isEmpty {
                parts.append("restored \(restored.joined(separator: ", ")), left moved aside by a killed run")
            }
            if !failed.isEmpty {
                parts.append("could not remove stale temporary file(s): \(failed.joined(separator: "; "))")
            }
            return parts.isEmpty ? nil : parts.joined(separator: "; ")
        }
    }

    /// Removes the stale temporaries of this tool in `directory` (not recursive) and
    /// returns their paths. Entries of live processes and anything not named like a
    /// temporary of this tool are left alone. Prints one line on stderr when `report`.
    @discardableResult
    public static func sweep(directory: String, report: Bool = true) -> [String] {
        let result = sweepDetailed(directory: directory)
        if report, let line = result.line(directory: directory == "." ? "the current directory" : directory) {
            Console.writeError(Data(("drummer: " + line + "\n").utf8))
        }
        return result.removed
    }

    /// The sweep with its restored directories and failures.
    public static func sweepDetailed(directory: String) -> Sweep {
        var result = Sweep()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return result }
        let fm = FileManager.default
        for name in names.sorted() {
            guard let parsed = parse(name) else { continue }
            let path = (directory as NSString).appendingPathComponent(name)
            guard isStale(parsed) else { continue }
            if parsed.kind == .aside {
                let original = (directory as NSString).appendingPathComponent(parsed.base)
                var st = stat()
                if lstat(original, &st) != 0, errno == ENOENT {
                    if rename(path, original) == 0 { result.restored.append(original) } else {
                        result.failed.append("\(path): \(ErrorText.lastErrno)")
                    }
                    continue
                }
            }
            do {
                try fm.removeItem(atPath: path)
                result.removed.append(path)
            } catch {
                result.failed.append("\(path): \(ErrorText.describe(error))")
            }
        }
        return result
    }

    private static let swept = Mutex(Set<String>())

    /// Sweeps `directory` once per process (later calls for the same directory do nothing).
    public static func sweepOnce(directory: String) {
        let key = canonical(directory)
        let first = swept.withLock { $0.insert(key).inserted }
        if first { sweep(directory: directory) }
    }

    static func canonical(_ path: String) -> String {
        guard let r = realpath(path.isEmpty ? "." : path, nil) else { return path }
        defer { free(r) }
        return String(cString: r)
    }

    // MARK: - Process start times

    /// Field 22 of /proc/<pid>/stat: the start time in clock ticks since boot.
    static func startTime(of pid: Int32) -> UInt64? {
        guard let text = readSmallFile("/proc/\(pid)/stat"),
              let close = text.lastIndex(of: ")") else { return nil }
        // After the command name in parentheses come fields 3, 4, ...
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }

    /// Reads a /proc file (whose size reads as 0) whole.
    static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += buffer[0..<n]
            if bytes.count > 1 << 20 { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
