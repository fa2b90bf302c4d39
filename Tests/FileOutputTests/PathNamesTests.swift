// PathNames.parent: NSString's deletingLastPathComponent semantics, without its trap on a
// one-character bare name (swift-corelibs-foundation, Swift 6.3 on Linux).
import FileOutput
import XCTest

final class PathNamesTests: XCTestCase {
    func testParent() {
        for (path, parent) in [("d", "."), ("d/", "."), ("data", "."), ("data/", "."), ("a/b", "a"), ("a/b/", "a"),
                               ("a//b", "a"), ("/", "/"), ("/d", "/"), ("/a/b/c.mid", "/a/b"), ("./d", "."),
                               ("../x/y", "../x")] {
            XCTAssertEqual(PathNames.parent(of: path), parent, path)
        }
    }
}
