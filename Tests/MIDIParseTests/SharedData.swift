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
