// Help text in sync with the defaults. argument-parser prints each option's real default as
// "(default: V)"; an option that has one must not also name a default in its prose ("(default
// V …)"): a second statement of it reads doubled and goes stale when the default changes.
// Options without a declared default (optional values) say theirs in prose. `train`'s options
// come from the settings table and are checked against it in RecipeCLITests.
import Foundation
import XCTest

final class HelpDefaultsCLITests: XCTestCase {
    func testNoOptionStatesItsDefaultTwice() throws {
        var withDefault = 0
        for command in ["convert-midi", "train", "export", "sample", "humanize", "eval", "stats", "report", "tab", "choose-step",
                        "continuation", "encode", "import", "play"] {
            let r = try CLI.run([command, "--help"])
            XCTAssertEqual(r.status, 0, r.stderr)
            // One block per option: from a line starting "  -" to the next.
            var blocks: [String] = [], current = ""
            for line in r.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("  -") { blocks.append(current); current = "" }
                current += " " + line.trimmingCharacters(in: .whitespaces)
            }
            blocks.append(current)
            for block in blocks where block.range(of: #"\(default: [^)]+\)"#, options: .regularExpression) != nil {
                withDefault += 1
                let name = block.split(separator: " ").first ?? ""
                XCTAssertNil(block.range(of: #"\(default [^):;,]+"#, options: .regularExpression),
                             "\(command) \(name) states its default twice: \(block)")
            }
        }
        XCTAssertGreaterThanOrEqual(withDefault, 20, "the options with a declared default were found")
    }
}
