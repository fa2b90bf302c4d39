import Foundation
import XCTest

/// Locates `../shared` (read-only project data) from this file: repo root, then its sibling.
enum SharedData {
    static var repoRoot: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }

    static var root: URL { repoRoot.deletingLastPathComponent().appendingPathComponent("shared") }

    /// Where a table path lives: "fixtures/rnn-drummer/…" in the repository's vendored copy
    /// (Tests/Fixtures/rnn-drummer), anything else in ../shared.
    static func url(of path: String) -> URL {
        let vendored = "fixtures/rnn-drummer/"
        if path.hasPrefix(vendored) {
            return repoRoot.appendingPathComponent("Tests/Fixtures/rnn-drummer").appendingPathComponent(String(path.dropFirst(vendored.count)))
        }
        return root.appendingPathComponent(path)
    }

    /// The shared directory `relative`, or an XCTSkip when it is absent.
    static func require(_ relative: String) throws -> URL {
        let url = root.appendingPathComponent(relative)
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir), isDir.boolValue else {
            throw XCTSkip("shared data \(url.path) is absent; this test needs ../shared/\(relative)")
        }
        return url
    }
}
