// Help text in sync with the defaults. argument-parser prints each option's real
// default as "(default: V)"; an option whose prose also names a default ("(default V …)")
// must name the same value, so prose cannot go stale when a default changes. `train`'s
// options come from the settings table and are checked against it in RecipeCLITests.
import Foundation
import XCTest

final class HelpDefaultsCLITests: XCTestCase {
    /// "0.125", "1/8" → 0.125; nil when not a number.
    func number(_ s: Substring) -> Double? {
        let parts = s.split(separator: "/")
        if parts.count == 2, let a = Double(parts[0]), let b = Double(parts[1]), b != 0 { return a / b }
        return Double(s)
    }

    func testProseDefaultsAgreeWithTheRealDefaults() throws {
        var compared = 0
        for command in ["convert-midi", "train", "export", "sample", "humanize", "eval", "stats", "report", "tab", "choose-step"] {
            let r = try CLI.run([command, "--help"])
            XCTAssertEqual(r.status, 0, r.stderr)
            // One block per option: from a line starting "  -" to the next.
            var blocks: [String] = [], current = ""
            for line in r.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("  -") { blocks.append(current); current = "" }
                current += " " + line.trimmingCharacters(in: .whitespaces)
            }
            blocks.append(current)
            for block in blocks {
                guard let auto = block.range(of: #"\(default: [^)]+\)"#, options: .regularExpression),
                      let prose = block.range(of: #"\(default [^):;,]+"#, options: .regularExpression) else { continue }
                let a = block[auto].dropFirst("(default: ".count).dropLast()
                let p = block[prose].dropFirst("(default ".count)
                let name = block.split(separator: " ").first ?? ""
                if let x = number(a), let y = number(p) {
                    XCTAssertEqual(x, y, accuracy: 1e-12, "\(command) \(name): prose says \(p), the default is \(a)")
                } else {
                    XCTAssertEqual(String(p), String(a), "\(command) \(name)")
                }
                compared += 1
            }
        }
        XCTAssertGreaterThanOrEqual(compared, 2, "sample --primer-bars and humanize --model at least")
    }
}
