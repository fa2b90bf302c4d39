// A mistyped command gets the nearest command's name, exit status 64.
import XCTest

final class CommandNameCLITests: XCTestCase {
    func testMistypedCommandSuggestsTheNearest() throws {
        for (typed, meant) in [("smaple", "sample"), ("trian", "train"), ("exprot", "export"), ("hum", "humanize"),
                               ("choosestep", "choose-step")] {
            let r = try CLI.run([typed])
            XCTAssertEqual(r.status, 64, r.stderr)
            XCTAssertTrue(r.stderr.hasPrefix("Error: unknown command '\(typed)'. Did you mean '\(meant)'?"), r.stderr)
        }
        let far = try CLI.run(["xyz"])
        XCTAssertEqual(far.status, 64)
        XCTAssertTrue(far.stderr.contains("The commands are: convert-midi, train, eval, export, import, encode, sample, humanize"), far.stderr)
        // Real commands and help are untouched.
        XCTAssertEqual(try CLI.run(["help", "train"]).status, 0)
        XCTAssertEqual(try CLI.run(["tab", "--help"]).status, 0)
    }
}
