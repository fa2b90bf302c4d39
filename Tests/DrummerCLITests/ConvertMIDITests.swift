import Foundation
import XCTest

/// End to end: the built binary converting folders of MIDI files.
final class ConvertMIDITests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws {
        tmp = try CLI.temporaryDirectory("convert-midi")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: tmp)
    }

    /// Copies the original project's two training patterns into a folder.
    private func patterns() throws -> URL {
        let src = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/rnn-drummer")
        guard FileManager.default.fileExists(atPath: src.path) else {
            throw VendoredFixtureMissing()
        }
        let dir = tmp.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for name in ["pattern1.mid", "pattern2.mid"] {
            try FileManager.default.copyItem(at: src.appendingPathComponent(name), to: dir.appendingPathComponent(name))
        }
        return dir
    }

    private func manifest(_ dir: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: dir.appendingPathComponent("manifest.json"))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func testOriginalPatternsGive12And10Hits() throws {
        let input = try patterns()
        let out = tmp.appendingPathComponent("out")
        let r = try CLI.run(["convert-midi", input.path, "-o", out.path, "--onehot"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("Scanned 2 files (2 converted, 0 skipped), 22 hits"), r.stdout)
        XCTAssertTrue(r.stdout.contains("Unique notes:"), r.stdout)
        let m = try manifest(out)
        let files = try XCTUnwrap(m["files"] as? [[String: Any]])
        XCTAssertEqual(files.compactMap { $0["hits"] as? Int }, [12, 10])
        XCTAssertEqual(files.compactMap { $0["offset"] as? Int }, [0, 12])
        XCTAssertEqual(files.compactMap { $0["channel"] as? String }, ["all", "all"])  // patterns use channel index 0
        for name in ["events.npy", "X.npy", "vocab.json"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: out.appendingPathComponent(name).path), name)
        }
    }

    func testBadFileIsSkippedWithAWarningAndStrictFails() throws {
        let input = try patterns()
        try Data("MThd".utf8).write(to: input.appendingPathComponent("broken.mid"))
        let out = tmp.appendingPathComponent("out")
        let r = try CLI.run(["convert-midi", input.path, "-o", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("skipped: \(input.path)/broken.mid: truncated at byte 4: expected the MThd length"), r.stderr)
        XCTAssertTrue(r.stderr.contains("1 file(s) skipped"), r.stderr)
        let skipped = try XCTUnwrap(try manifest(out)["skipped"] as? [[String: Any]])
        XCTAssertEqual(skipped.first?["path"] as? String, "broken.mid")

        let strictOut = tmp.appendingPathComponent("strict")
        let s = try CLI.run(["convert-midi", input.path, "-o", strictOut.path, "--strict"])
        XCTAssertNotEqual(s.status, 0)
        XCTAssertTrue(s.stderr.contains("bad file:"), s.stderr)
        XCTAssertTrue(s.stderr.contains("broken.mid"), s.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: strictOut.path))
    }

    func testNoHitsAndBadOptionsAreErrors() throws {
        let input = try patterns()
        let out = tmp.appendingPathComponent("out")
        let none = try CLI.run(["convert-midi", input.path, "-o", out.path, "--channel", "9"])
        XCTAssertNotEqual(none.status, 0)
        XCTAssertTrue(none.stderr.contains("error: none of the 2 files read under \(input.path) holds a hit (NOTE ON with velocity > 0) on the selected channels (--channel 9: channel index 9 only)"), none.stderr)
        for args in [["--channel", "17"], ["--ppq", "0"], ["--quantize", "0"], ["--validation-fraction", "1"]] {
            let r = try CLI.run(["convert-midi", input.path, "-o", out.path] + args)
            XCTAssertNotEqual(r.status, 0, "\(args)")
            XCTAssertTrue(r.stderr.contains("Error:"), "\(args): \(r.stderr)")
        }
        let missing = try CLI.run(["convert-midi", tmp.appendingPathComponent("nope").path, "-o", out.path])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("not a directory"), missing.stderr)
    }

    func testTwoRunsAreByteIdentical() throws {
        let input = try patterns()
        let a = tmp.appendingPathComponent("a"), b = tmp.appendingPathComponent("b")
        for out in [a, b] {
            let r = try CLI.run(["convert-midi", input.path, "-o", out.path, "--quantize", "30", "--note-map", "original"])
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        for name in ["events.npy", "vocab.json", "manifest.json"] {
            XCTAssertEqual(try Data(contentsOf: a.appendingPathComponent(name)), try Data(contentsOf: b.appendingPathComponent(name)), name)
        }
    }
}
