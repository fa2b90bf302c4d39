// Path arithmetic on strings, without NSString: swift-corelibs-foundation's
// `deletingLastPathComponent` traps (SIGILL) on a one-character last component with nothing
// before it ("d", "d/"; Swift 6.3 on Linux), and a user's `-o d` must not crash the tool.

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
}
