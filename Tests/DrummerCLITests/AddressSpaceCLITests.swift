import Foundation
import XCTest

/// Under a `ulimit -v` too small for OpenBLAS's and the threads' reservations, a command is
/// refused at once with what to raise, rather than crashing on a failed allocation or hanging
/// in OpenBLAS; nothing is written.
final class AddressSpaceCLITests: XCTestCase {
    func testASmallAddressSpaceLimitIsRefusedAtOnce() throws {
        let root = try CLI.temporaryDirectory("ulimit")
        defer { try? FileManager.default.removeItem(at: root) }
        let out = root.appendingPathComponent("x.mid").path
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let sh = URL(fileURLWithPath: "/bin/sh")
        let r = try CLI.run(executable: sh, ["-c", "ulimit -v 600000 && exec \"$0\" sample \"$1\" -n 100 -o \"$2\"",
                                             CLI.binary.path, model, out])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderr, "error: the address-space limit (ulimit -v) is 585 MiB; drummer needs at least 1.0 GiB of "
                       + "address space (OpenBLAS and every thread reserve theirs whole): raise it with ulimit -v\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path), [])
        // Above the floor the same command runs.
        let ok = try CLI.run(executable: sh, ["-c", "ulimit -v 1300000 && exec \"$0\" sample \"$1\" -n 100 -o \"$2\"",
                                              CLI.binary.path, model, out])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out))
    }
}
