// PathNames.parent: NSString's deletingLastPathComponent semantics, without its trap on a
// one-character bare name (swift-corelibs-foundation, Swift 6.3 on Linux).
import FileOutput
import Foundation
import XCTest

final class PathNamesTests: XCTestCase {
    func testParent() {
        for (path, parent) in [("d", "."), ("d/", "."), ("data", "."), ("data/", "."), ("a/b", "a"), ("a/b/", "a"),
                               ("a//b", "a"), ("/", "/"), ("/d", "/"), ("/a/b/c.mid", "/a/b"), ("./d", "."),
                               ("../x/y", "../x")] {
            XCTAssertEqual(PathNames.parent(of: path), parent, path)
        }
    }

    /// A read across a swap of the directory (another command's export -o) is made again, whether
    /// it failed or seemed to succeed; a read of a directory that stays put is made once.
    func testReadingWholeReadsAgainAcrossASwap() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("reading-whole-\(UUID().uuidString)")
        let d = root.appendingPathComponent("d").path, n = root.appendingPathComponent("n").path
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: n, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        var reads = 0
        XCTAssertEqual(try PathNames.readingWhole(d) { reads += 1; return reads }, 1)
        reads = 0
        let swapped = try PathNames.readingWhole(d) { () -> Int in
            reads += 1
            if reads == 1 {
                XCTAssertEqual(rename(d, d + ".old"), 0)
                XCTAssertEqual(rename(n, d), 0)
            }
            return reads
        }
        XCTAssertEqual(swapped, 2, "read again after the swap")
        struct Mixed: Error {}
        reads = 0
        XCTAssertEqual(try PathNames.readingWhole(d) { () throws -> Int in
            reads += 1
            if reads == 1 {
                XCTAssertEqual(rename(d, n), 0)
                XCTAssertEqual(rename(d + ".old", d), 0)
                throw Mixed()
            }
            return reads
        }, 2)
        // A failure with the directory in place is the failure.
        XCTAssertThrowsError(try PathNames.readingWhole(d) { () throws -> Int in throw Mixed() })
    }

    /// By path, for outputs not made yet: the same path, one inside, a sibling sharing a prefix.
    func testContainment() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("path-names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let d = root.appendingPathComponent("m").path
        XCTAssertEqual(PathNames.containment(of: d, in: d), .same)
        XCTAssertEqual(PathNames.containment(of: d + "/", in: root.path + "/./m"), .same)
        XCTAssertEqual(PathNames.containment(of: d + "/ck/x.h5", in: d), .inside)
        XCTAssertEqual(PathNames.containment(of: root.path + "/m2", in: d), .outside, "a sibling, not inside")
        XCTAssertEqual(PathNames.containment(of: root.path, in: d), .outside, "the parent")
        // A symbolic link that exists is followed: a link to the directory is the directory.
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("link").path, withDestinationPath: d)
        XCTAssertEqual(PathNames.containment(of: root.appendingPathComponent("link").path, in: d), .same)
        // Through a link whose path below does not exist yet (`train -o m --checkpoint-dir
        // link/ck`): inside, as where the link leads (the whole path's links were left unresolved).
        XCTAssertEqual(PathNames.containment(of: root.appendingPathComponent("link/ck").path, in: d), .inside)
        XCTAssertEqual(PathNames.containment(of: root.appendingPathComponent("link/a/b/c.swift").path, in: d), .inside)
        XCTAssertEqual(PathNames.containment(of: d + "/ck", in: root.appendingPathComponent("link").path), .inside)
        // A dangling link as the last part (`--swift s.swift`, s.swift → m/x.swift): inside m.
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("s.swift").path, withDestinationPath: "m/x.swift")
        XCTAssertEqual(PathNames.containment(of: root.appendingPathComponent("s.swift").path, in: d), .inside)
        // `..` after a link is taken from where the link leads, as the kernel does: lnk → else/deep,
        // so lnk/../m/ck is else/m/ck, outside m (it compared as inside, by the text).
        try FileManager.default.createDirectory(at: root.appendingPathComponent("else/deep"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("lnk").path, withDestinationPath: "else/deep")
        XCTAssertEqual(PathNames.containment(of: root.appendingPathComponent("lnk/../m/ck").path, in: d), .outside)
        XCTAssertEqual(PathNames.containment(of: root.appendingPathComponent("lnk/../../m/ck").path, in: d), .inside)
        // Relative paths are taken from the current folder.
        XCTAssertEqual(PathNames.containment(of: "x/y", in: FileManager.default.currentDirectoryPath), .inside)
        // Names that differ only in Unicode normalization are two files (é precomposed, e + ◌́).
        XCTAssertEqual(PathNames.containment(of: root.path + "/\u{E9}", in: root.path + "/e\u{301}"), .outside)
        XCTAssertEqual(PathNames.containment(of: root.path + "/\u{E9}/x", in: root.path + "/e\u{301}"), .outside)
    }
}
