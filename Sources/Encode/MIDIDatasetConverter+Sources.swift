// Finding the MIDI files under a directory: a POSIX walk (readdir's d_type spares a stat
// per file on a Lakh-size tree), sorted by UTF-8 path so every machine sees one order.
import Dispatch
import FileOutput
import Foundation
import MIDIParse
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension MIDIDatasetConverter {
    /// A path under the source directory named like a MIDI file.
    public struct SourceEntry: Equatable, Sendable {
        /// Relative to the source directory.
        public var path: String
        /// Why it cannot be read, when that is known without opening it ("not a regular file (a
        /// directory)"); nil for files to read (symbolic links are followed when read).
        public var problem: String?
    }

    /// How a folder that is no convert-midi dataset is named: it has no events.npy.
    public static let notADataset = "no events.npy (not a convert-midi dataset)"

    /// What a folder of MIDI files given where a convert-midi dataset is read is told: that it
    /// is one, and the command that makes a dataset of it; nil when `directory` holds no MIDI file
    /// or has an events.npy (a dataset that lost another file, which its own error names).
    public static func midiFolderInsteadOfDataset(_ directory: String) -> String? {
        guard !FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent("events.npy")),
              let files = try? sourceFiles(in: directory), !files.isEmpty else { return nil }
        return "a folder of \(files.count) MIDI file\(files.count == 1 ? "" : "s"), \(notADataset): "
            + "make one with drummer convert-midi \(ShellWords.quoted(directory)) -o data, then give --data data"
    }

    /// MIDI files under `directory`, recursively, as paths relative to it, sorted by their
    /// UTF-8 bytes (the same order on every machine). Includes entries named like MIDI files
    /// that cannot be MIDI files (directories, FIFOs), so that they can be reported.
    public static func sourceFiles(in directory: String) throws -> [String] {
        try sources(in: directory).map(\.path)
    }

    /// Every entry named `*.mid`, `*.midi` or `*.rmi` (any case) under `directory`, sorted by
    /// UTF-8 path. Directories are searched recursively (also one named `x.mid`, which is
    /// listed as a problem too); symbolic links to directories are not followed (no cycles).
    /// `threads` directories are read at once; the result does not depend on it.
    public static func sources(in directory: String, threads: Int = 1) throws -> [SourceEntry] {
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw ConversionError.notADirectory(directory)
        }
        let root = directory.hasSuffix("/") ? directory : directory + "/"
        let walk = DirectoryWalk(workers: max(1, threads))
        if walk.workers == 1 {
            walk.run(worker: 0, root: root)
        } else {
            DispatchQueue.concurrentPerform(iterations: walk.workers) { walk.run(worker: $0, root: root) }
        }
        if walk.rootUnreadable { throw ConversionError.notADirectory(directory) }
        return sortedByUTF8(walk.found.flatMap { $0 })
    }

    /// The entries of directory `rel` (relative, "" or ending in "/") and its subdirectories.
    static func readDirectory(root: String, rel: String, into found: inout [SourceEntry], subdirectories: inout [String]) -> Bool {
        guard let dir = opendir(root + rel) else {
            if rel.isEmpty { return false }
            // An unreadable subdirectory is named like a bad file, not silently dropped.
            found.append(SourceEntry(path: String(rel.dropLast()),
                                     problem: "cannot read the directory: \(ErrorText.errno(errno))"))
            return true
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            // A name that is not UTF-8 reads with its bytes repaired (U+FFFD): a path that opens
            // nothing. Such a MIDI file is named as skipped for its name, not as missing.
            let (name, utf8) = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                let c = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
                return (String(cString: c), String(validatingCString: c) != nil)
            }
            if name == "." || name == ".." { continue }
            if !utf8 {
                if hasMIDIExtension(name) || entry.pointee.d_type == UInt8(DT_DIR) {
                    found.append(SourceEntry(path: rel + name, problem: "its name is not UTF-8 text (shown with U+FFFD); rename it to read it"))
                }
                continue
            }
            let path = rel + name
            var type = entry.pointee.d_type
            if type == UInt8(DT_UNKNOWN) {
                var st = stat()
                type = lstat(root + path, &st) == 0 ? Self.direntType(st.st_mode) : UInt8(DT_UNKNOWN)
            }
            let isMIDIName = hasMIDIExtension(name)
            if type == UInt8(DT_DIR) {
                subdirectories.append(path + "/")
                if isMIDIName { found.append(SourceEntry(path: path, problem: "not a regular file (a directory)")) }
                continue
            }
            guard isMIDIName else { continue }
            switch type {
            case UInt8(DT_REG), UInt8(DT_LNK), UInt8(DT_UNKNOWN):
                found.append(SourceEntry(path: path, problem: nil))  // links: resolved when opened
            case UInt8(DT_FIFO): found.append(SourceEntry(path: path, problem: "not a regular file (a FIFO)"))
            case UInt8(DT_SOCK): found.append(SourceEntry(path: path, problem: "not a regular file (a socket)"))
            default: found.append(SourceEntry(path: path, problem: "not a regular file (a device)"))
            }
        }
        return true
    }

    /// `entries` in the order of their paths' UTF-8 bytes (memcmp on contiguous UTF-8).
    static func sortedByUTF8(_ entries: [SourceEntry]) -> [SourceEntry] {
        var keys = entries.map { Array($0.path.utf8) }
        var order = Array(entries.indices)
        keys.withUnsafeMutableBufferPointer { k in
            order.sort { a, b in
                k[a].withUnsafeBufferPointer { x in
                    k[b].withUnsafeBufferPointer { y in
                        guard let xa = x.baseAddress, let ya = y.baseAddress else { return x.count < y.count }
                        let c = memcmp(xa, ya, min(x.count, y.count))
                        return c != 0 ? c < 0 : x.count < y.count
                    }
                }
            }
        }
        return order.map { entries[$0] }
    }

    static func hasMIDIExtension(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return extensions.contains(name[name.index(after: dot)...].lowercased())
    }

    static func direntType(_ mode: mode_t) -> UInt8 {
        switch mode & S_IFMT {
        case S_IFDIR: return UInt8(DT_DIR)
        case S_IFREG: return UInt8(DT_REG)
        case S_IFLNK: return UInt8(DT_LNK)
        case S_IFIFO: return UInt8(DT_FIFO)
        case S_IFSOCK: return UInt8(DT_SOCK)
        default: return UInt8(DT_CHR)
        }
    }
}

/// Directories to read, shared by the walking threads: a thread takes one, reads it and
/// hands back its subdirectories; the walk ends when none is left and none is being read.
final class DirectoryWalk: @unchecked Sendable {
    let workers: Int
    private let condition = NSCondition()
    private var pending = [""]
    private var active = 0
    /// Entries found, per worker (read after all have returned).
    private(set) var found: [[MIDIDatasetConverter.SourceEntry]]
    private(set) var rootUnreadable = false

    init(workers: Int) {
        self.workers = workers
        found = Array(repeating: [], count: workers)
    }

    func run(worker: Int, root: String) {
        var local: [MIDIDatasetConverter.SourceEntry] = []
        while true {
            condition.lock()
            while pending.isEmpty && active > 0 { condition.wait() }
            guard let rel = pending.popLast() else {
                condition.broadcast()
                condition.unlock()
                break
            }
            active += 1
            condition.unlock()
            var subdirectories: [String] = []
            let readable = MIDIDatasetConverter.readDirectory(root: root, rel: rel, into: &local, subdirectories: &subdirectories)
            condition.lock()
            if !readable { rootUnreadable = true }
            pending += subdirectories
            active -= 1
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        found[worker] = local
        condition.unlock()
    }
}
