// What users read names each figure and target by what it measures, never by the number of the
// project's issue that asked for it: every command's --help, the README, docs/ and the shipped
// models' TRAINING.md and model.json.
import Foundation
import XCTest

final class NoIssueNumbersTests: XCTestCase {
    static let pattern = try! NSRegularExpression(pattern: #"\b[Ii]ssues?[ -]?#?[0-9]+|\b[Ii]ssue's|\b[Tt]he issue\b"#)

    /// The lines of `text` that speak of an issue.
    func mentions(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter {
            Self.pattern.firstMatch(in: $0, range: NSRange($0.startIndex..., in: $0)) != nil
        }
    }

    /// The subcommands a --help output lists (the names under SUBCOMMANDS).
    func subcommands(_ help: String) -> [String] {
        help.components(separatedBy: "SUBCOMMANDS:").dropFirst().first?.split(separator: "\n").compactMap { line in
            line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map(String.init) : nil
        }.filter { $0 != "See" } ?? []
    }

    func testNoHelpTextNamesAnIssue() throws {
        let top = try CLI.run(["--help"])
        XCTAssertEqual(top.status, 0, top.stderr)
        var commands = subcommands(top.stdout).map { [$0] }
        XCTAssertTrue(commands.contains(["train"]) && commands.contains(["sample"]), "\(commands)")
        for c in commands {
            let r = try CLI.run(c + ["--help"])
            XCTAssertEqual(r.status, 0, r.stderr)
            commands += subcommands(r.stdout).map { c + [$0] }
        }
        XCTAssertTrue(commands.contains(["bench", "train"]), "\(commands)")
        for c in [[]] + commands {
            let r = try CLI.run(c + ["--help"])
            XCTAssertEqual(mentions(r.stdout + r.stderr), [], "drummer \(c.joined(separator: " ")) --help")
        }
    }

    func testNoDocumentNamesAnIssue() throws {
        let fm = FileManager.default
        let root = CLI.repoRoot
        var files = ["README.md"]
        files += try fm.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path).filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        for model in try fm.contentsOfDirectory(atPath: root.appendingPathComponent("models").path) {
            for name in ["TRAINING.md", "model.json"] where fm.fileExists(atPath: root.appendingPathComponent("models/\(model)/\(name)").path) {
                files.append("models/\(model)/\(name)")
            }
        }
        XCTAssertGreaterThan(files.count, 10)
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            XCTAssertEqual(mentions(text), [], file)
        }
    }

    /// The pattern finds what it must (so that the checks above can fail).
    func testThePatternFindsIssueNumbers() {
        for line in ["by issue 10's figures", "(issue 20)", "every issue-10 target", "Issue 9: reproducers", "the issue's 20 files",
                     "as the issue asks", "issues 10 and 20"] {
            XCTAssertEqual(mentions(line), [line])
        }
        XCTAssertEqual(mentions("a tissue 10 cm wide; GitHub issues of swift-protobuf"), [])
    }
}
