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

    /// `path` absolute and standardized, with its longest existing part's symbolic links resolved.
    static func resolved(_ path: String) -> String {
        let standardized = URL(fileURLWithPath: path).standardizedFileURL.path
        var existing = standardized, rest: [String] = []
        while true {
            if let r = realpath(existing, nil) {
                defer { free(r) }
                let base = String(cString: r)
                guard !rest.isEmpty else { return base }
                return (base == "/" ? "" : base) + "/" + rest.reversed().joined(separator: "/")
            }
            let up = parent(of: existing)
            guard up != existing else { return standardized }
            rest.append(String(existing.split(separator: "/").last ?? ""))
            existing = up
        }
    }
}
