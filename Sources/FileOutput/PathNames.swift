// Path arithmetic on strings, without NSString: swift-corelibs-foundation's
// `deletingLastPathComponent` traps (SIGILL) on a one-character last component with nothing
// before it ("d", "d/"; Swift 6.3 on Linux), and a user's `-o d` must not crash the tool.
import Foundation

public enum PathNames {
    /// The directory holding `path`: "." for a bare name ("d", "data/"), "/" for one at the
    /// root, else everything before the last component (repeated and trailing slashes dropped).
    public static func parent(of path: String) -> String {
        var p = Substring(path)
        while p.count > 1, p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return "." }
        var parent = p[..<slash]
        while parent.count > 1, parent.hasSuffix("/") { parent = parent.dropLast() }
        return parent.isEmpty ? "/" : String(parent)
    }

    /// Runs `read` on the directory at `path`, again when the directory there changed meanwhile
    /// (another command's `export -o` or `convert-midi -o` swaps a new one in whole: a read across
    /// the swap can mix files of two versions, whether it then fails or not), three tries.
    public static func readingWhole<T>(_ path: String, _ read: () throws -> T) throws -> T {
        var attempt = 1
        while true {
            let before = FileID(path)
            let result = Result { try read() }
            let after = FileID(path)
            if before == after || before == nil || after == nil || attempt == 3 { return try result.get() }
            attempt += 1
        }
    }

    /// Where a path stands against a directory's path.
    public enum Containment: Equatable, Sendable { case same, inside, outside }

    /// `path` against `directory` by their paths, absolute and standardized, the symbolic links
    /// of their existing parts resolved (the longest part that exists, so that `link/new/x`
    /// compares as where `link` leads): so an output not made yet compares too, where
    /// InputOverlap compares what exists by device and inode. Compared byte for byte: names
    /// that differ only in Unicode normalization are two files.
    public static func containment(of path: String, in directory: String) -> Containment {
        let (inner, outer) = (Array(resolved(path).utf8), Array(resolved(directory).utf8))
        if inner == outer { return .same }
        let prefix = outer.last == UInt8(ascii: "/") ? outer : outer + [UInt8(ascii: "/")]
        return inner.starts(with: prefix) ? .inside : .outside
    }

    /// `path` made absolute, as the kernel resolves it: the longest existing part through
    /// realpath (its links and `..` resolved in order, so `link/../x` is where the link leads
    /// then up), a dangling link followed to where it points, and the rest appended as written
    /// (`.` dropped, `..` taking one back).
    static func resolved(_ path: String) -> String {
        var existing = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var rest: [String] = []
        for _ in 0..<64 {
            if let r = realpath(existing, nil) {
                defer { free(r) }
                var parts = String(cString: r).split(separator: "/").map(String.init)
                for part in rest.reversed() {
                    if part == "." || part.isEmpty { continue }
                    if part == ".." { if !parts.isEmpty { parts.removeLast() } } else { parts.append(part) }
                }
                return "/" + parts.joined(separator: "/")
            }
            var st = stat()
            if lstat(existing, &st) == 0, st.st_mode & S_IFMT == S_IFLNK,
               let target = try? FileManager.default.destinationOfSymbolicLink(atPath: existing) {
                // A dangling link: what it would create is where it points.
                existing = target.hasPrefix("/") ? target : parent(of: existing) + "/" + target
                continue
            }
            var trimmed = Substring(existing)
            while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
            guard let slash = trimmed.lastIndex(of: "/"), trimmed != "/" else { break }
            rest.append(String(trimmed[trimmed.index(after: slash)...]))
            existing = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        }
        return URL(fileURLWithPath: path).standardizedFileURL.path
    }
}
