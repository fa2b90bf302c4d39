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
    /// of their existing parts resolved: so an output not made yet compares too, where
    /// InputOverlap compares what exists by device and inode.
    public static func containment(of path: String, in directory: String) -> Containment {
        func real(_ p: String) -> String { URL(fileURLWithPath: p).standardizedFileURL.resolvingSymlinksInPath().path }
        let (inner, outer) = (real(path), real(directory))
        if inner == outer { return .same }
        return inner.hasPrefix(outer.hasSuffix("/") ? outer : outer + "/") ? .inside : .outside
    }
}
