// The README: a page (at most 150 lines and 10,000 characters, no paragraph over 600); docs/architecture.md's module table (the README points to it)
// lists exactly the modules of Package.swift (as `swift package dump-package` gives them); the
// README's relative links resolve; and
// every `drummer` command of its tour runs, in order, on a small copy of the shipped corpus
// (with a small model and step budget substituted, the one change a test needs).
import Foundation
import XCTest

final class ReadmeTests: XCTestCase {
    var readme: String { (try? String(contentsOf: CLI.repoRoot.appendingPathComponent("README.md"), encoding: .utf8)) ?? "" }

    /// The lines of the section headed `title` (up to the next "## ").
    func section(_ title: String) -> [Substring] {
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == "## " + title }) else { return [] }
        let rest = lines[(start + 1)...]
        return Array(rest.prefix { !$0.hasPrefix("## ") })
    }

    /// A page a musician reads in five minutes: at most 150 lines and 10,000 characters, and no
    /// paragraph of prose (outside code blocks, tables and headings) over 600 characters.
    func testAPage() {
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertGreaterThan(lines.count, 20)
        XCTAssertLessThanOrEqual(lines.count, 150 + 1, "README.md has \(lines.count) lines")
        XCTAssertLessThanOrEqual(readme.count, 10_000, "README.md has \(readme.count) characters")
        var paragraphs: [String] = [], current: [Substring] = [], inCode = false
        for line in lines {
            if line.hasPrefix("```") { inCode.toggle(); continue }
            if inCode { continue }
            if line.trimmingCharacters(in: .whitespaces).isEmpty || line.hasPrefix("#") || line.hasPrefix("|") {
                if !current.isEmpty { paragraphs.append(current.joined(separator: " ")) }
                current = []
            } else {
                current.append(line)
            }
        }
        if !current.isEmpty { paragraphs.append(current.joined(separator: " ")) }
        XCTAssertGreaterThan(paragraphs.count, 5)
        for p in paragraphs { XCTAssertLessThanOrEqual(p.count, 600, "a paragraph of \(p.count) characters: \(p.prefix(80))…") }
    }

    func testArchitectureListsThePackagesModules() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Its own scratch path: the one of the running tests is locked by `swift test`.
        let scratch = try CLI.temporaryDirectory("dump-package")
        defer { try? FileManager.default.removeItem(at: scratch) }
        p.arguments = ["swift", "package", "--scratch-path", scratch.path, "dump-package"]
        p.currentDirectoryURL = CLI.repoRoot
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let targets = try XCTUnwrap(json["targets"] as? [[String: Any]])
        let modules = Set(targets.filter { ($0["type"] as? String) != "test" }.compactMap { $0["name"] as? String })
        // The first cell of each row of docs/architecture.md's module table names its modules.
        let doc = try String(contentsOf: CLI.repoRoot.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let table = doc.split(separator: "\n").drop { !$0.hasPrefix("| module |") }.dropFirst(2).prefix { $0.hasPrefix("|") }
        let listed = table.flatMap { row -> [String] in
            let cell = row.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            return cell.split(separator: "`").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
        }
        XCTAssertEqual(listed.count, Set(listed).count, "a module listed twice: \(listed)")
        XCTAssertEqual(Set(listed), modules, "docs/architecture.md's module table against dump-package")
        XCTAssertTrue(section("Architecture and speed").joined(separator: "\n").contains("docs/architecture.md"), "the README points to it")
    }

    func testRelativeLinksResolve() throws {
        let regex = try NSRegularExpression(pattern: #"\]\(([^)#:]+)(#[^)]*)?\)"#)
        let text = readme
        let links = regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
        XCTAssertGreaterThan(links.count, 5)
        for link in links {
            XCTAssertTrue(FileManager.default.fileExists(atPath: CLI.repoRoot.appendingPathComponent(link).path), "README links to \(link), which does not exist")
        }
    }

    /// Every relative link of the README, docs/ and the shipped models' TRAINING.md (outside
    /// code blocks) names a file that exists and, with a #fragment, a heading of that file
    /// (GitHub's anchor: lower case, punctuation dropped, spaces as hyphens).
    func testDocumentationLinksAndAnchorsResolve() throws {
        let fm = FileManager.default
        let root = CLI.repoRoot
        var pages = ["README.md"] + (try fm.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path))
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        for model in (try? fm.contentsOfDirectory(atPath: root.appendingPathComponent("models").path)) ?? []
        where fm.fileExists(atPath: root.appendingPathComponent("models/\(model)/TRAINING.md").path) {
            pages.append("models/\(model)/TRAINING.md")
        }
        let link = try NSRegularExpression(pattern: #"\]\(([^)\s]*)\)"#)
        var checked = 0
        for page in pages.sorted() {
            let url = root.appendingPathComponent(page)
            var inCode = false
            for (n, line) in try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if line.hasPrefix("```") || line.hasPrefix("  ```") { inCode.toggle(); continue }
                if inCode { continue }
                let text = String(line)
                for m in link.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    guard let r = Range(m.range(at: 1), in: text) else { continue }
                    let target = String(text[r])
                    if target.contains("://") || target.hasPrefix("mailto:") { continue }
                    let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                    let file = parts[0].isEmpty ? url : url.deletingLastPathComponent().appendingPathComponent(String(parts[0]))
                    checked += 1
                    XCTAssertTrue(fm.fileExists(atPath: file.path), "\(page):\(n + 1) links to \(target): no such file")
                    guard parts.count == 2, file.pathExtension == "md",
                          let target = try? String(contentsOf: file, encoding: .utf8) else { continue }
                    let anchors = Self.anchors(of: target)
                    XCTAssertTrue(anchors.contains(String(parts[1])),
                                  "\(page):\(n + 1) links to \(parts.joined(separator: "#")): no such heading (\(anchors.sorted().prefix(8))…)")
                }
            }
        }
        XCTAssertGreaterThan(checked, 30, "the pages' links were found")
    }

    /// GitHub's anchors of a Markdown page's headings (a repeated one gets -1, -2, …).
    static func anchors(of page: String) -> Set<String> {
        var seen: [String: Int] = [:], result = Set<String>()
        var inCode = false
        for line in page.split(separator: "\n") {
            if line.hasPrefix("```") { inCode.toggle(); continue }
            guard !inCode, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
            var slug = ""
            for ch in title {
                if ch.isLetter || ch.isNumber || ch == "-" || ch == "_" { slug.append(ch) } else if ch == " " { slug.append("-") }
            }
            let k = seen[slug, default: 0]
            seen[slug] = k + 1
            result.insert(k == 0 ? slug : "\(slug)-\(k)")
        }
        return result
    }

    /// Runs the tour's commands (lines starting with `drummer ` in the first code block of "A short
    /// tour") with bash, in order, in a directory holding `corpus/groove` (16 of the corpus's
    /// files), `models/groove` (the shipped model) and `my-beat.mid`; substitutions keep it quick.
    func testTourCommandsRun() throws {
        let tour = section("A short tour")
        guard let open = tour.firstIndex(where: { $0.hasPrefix("```") }) else { return XCTFail("no code block in the tour") }
        let block = tour[(open + 1)...].prefix { !$0.hasPrefix("```") }
        let commands = block.map { String($0) }.filter { $0.hasPrefix("drummer ") }
        XCTAssertGreaterThanOrEqual(commands.count, 6, "\(commands)")
        let root = try CLI.temporaryDirectory("readme-tour")
        defer { try? FileManager.default.removeItem(at: root) }
        let fm = FileManager.default
        let corpus = root.appendingPathComponent("corpus/groove")
        try fm.createDirectory(at: corpus, withIntermediateDirectories: true)
        let src = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer1/session1")
        let files = try fm.contentsOfDirectory(atPath: src.path).filter { $0.hasSuffix(".mid") }.sorted()
        for f in files.prefix(16) { try fm.copyItem(at: src.appendingPathComponent(f), to: corpus.appendingPathComponent(f)) }
        try fm.createDirectory(at: root.appendingPathComponent("models"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(at: root.appendingPathComponent("models/groove"),
                                  withDestinationURL: CLI.repoRoot.appendingPathComponent("models/groove"))
        try fm.copyItem(at: src.appendingPathComponent(files[0]), to: root.appendingPathComponent("my-beat.mid"))
        let substitutions: [(String, String)] = [
            ("drummer train --data data", "drummer train --data data --hidden 16 --steps 4 --eval-every 2 --checkpoint-every 2"),
            ("-n 1000 --count 20", "-n 60 --count 2"),
            (" --steps 10000", ""),
            ("--count 300 --seed 30001 --from 5500", "--count 2 --seed 30001"),
        ]
        let bin = CLI.binary.deletingLastPathComponent().path
        for command in commands {
            var line = command
            for (a, b) in substitutions { line = line.replacingOccurrences(of: a, with: b) }
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/bash")
            p.arguments = ["-c", line]
            p.currentDirectoryURL = root
            var env = ProcessInfo.processInfo.environment
            env["PATH"] = bin + ":" + (env["PATH"] ?? "/usr/bin:/bin")
            p.environment = env
            let err = Pipe()
            p.standardOutput = FileHandle.nullDevice
            p.standardError = err
            try p.run()
            let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0, "README command failed: \(line)\n\(errText)")
        }
    }
}
