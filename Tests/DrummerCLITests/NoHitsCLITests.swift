// A valid MIDI file with no hits is named in every mode: alone (an error naming it), among
// others (a warning line and manifest.json's no_hits), and under --strict (refused, nothing written).
import Foundation
import XCTest

final class NoHitsCLITests: XCTestCase {
    /// A format-0 file at 480 PPQ whose one track holds only its end.
    static let empty: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
        + Array("MTrk".utf8) + [0, 0, 0, 4, 0x00, 0xFF, 0x2F, 0x00]

    func testFilesWithNoHitsAreNamed() throws {
        let root = try CLI.temporaryDirectory("no-hits")
        defer { try? FileManager.default.removeItem(at: root) }
        let alone = root.appendingPathComponent("alone"), many = root.appendingPathComponent("many")
        for d in [alone, many] {
            try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
            try Data(Self.empty).write(to: d.appendingPathComponent("empty.mid"))
        }
        for (i, hits) in OriginalLayoutCLITests.songs.enumerated() {
            try TinySMF.drums(hits, meter: (4, 2)).write(to: many.appendingPathComponent("song\(i).mid"))
        }
        let reason = "no hits: NOTE ON with velocity > 0 not found"

        let one = try CLI.run(["convert-midi", alone.path, "-o", root.appendingPathComponent("o1").path])
        XCTAssertEqual(one.status, 1)
        XCTAssertTrue(one.stderr.contains(alone.appendingPathComponent("empty.mid").path + ": " + reason), one.stderr)
        XCTAssertTrue(one.stderr.contains("holds a hit") && one.stderr.hasSuffix(alone.appendingPathComponent("empty.mid").path + "\n"), one.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("o1").path))

        let out = root.appendingPathComponent("o2")
        let several = try CLI.run(["convert-midi", many.path, "-o", out.path])
        XCTAssertEqual(several.status, 0, several.stderr)
        XCTAssertEqual(several.stderr.components(separatedBy: "empty.mid: " + reason).count - 1, 1, several.stderr)
        let manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("manifest.json"))) as? [String: Any])
        XCTAssertEqual(manifest["no_hits"] as? [String], ["empty.mid"])

        let strict = try CLI.run(["convert-midi", many.path, "-o", root.appendingPathComponent("o3").path, "--strict"])
        XCTAssertEqual(strict.status, 1)
        XCTAssertTrue(strict.stderr.contains("empty.mid: " + reason), strict.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("o3").path))
    }

    /// encode of a dataset none of whose files the grid model reads (3/4 files) is an error, not
    /// an empty .npy written as a success.
    func testEncodeOfNothingTheModelReadsIsAnError() throws {
        let root = try CLI.temporaryDirectory("encode-none")
        defer { try? FileManager.default.removeItem(at: root) }
        let src = root.appendingPathComponent("src")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        for (i, hits) in OriginalLayoutCLITests.songs.enumerated() {
            try TinySMF.drums(hits, meter: (3, 2)).write(to: src.appendingPathComponent("song\(i).mid"))
        }
        let data = root.appendingPathComponent("data").path
        XCTAssertEqual(try CLI.run(["convert-midi", src.path, "-o", data]).status, 0)
        let out = root.appendingPathComponent("rows.npy").path
        let r = try CLI.run(["encode", CLI.repoRoot.appendingPathComponent("models/groove").path, "--data", data, "-o", out])
        XCTAssertEqual(r.status, 1, r.stdout)
        XCTAssertTrue(r.stderr.hasPrefix("error: \(data): "), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    /// The commands that read one MIDI file with a model refuse one with no hits at run time
    /// (exit 1, "error: FILE: no hits …"), writing nothing: not a usage error, not the model's.
    func testModelCommandsNameAFileWithNoHits() throws {
        let root = try CLI.temporaryDirectory("no-hits-model")
        defer { try? FileManager.default.removeItem(at: root) }
        let empty = root.appendingPathComponent("empty.mid").path
        try Data(Self.empty).write(to: URL(fileURLWithPath: empty))
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let out = root.appendingPathComponent("out").path
        let noHits = "no hits (NOTE ON with velocity > 0 not found)"
        for (args, message) in [
            (["eval", model, "--data", empty], "\(empty): \(noHits)"),
            (["encode", model, "--data", empty, "-o", out], "\(empty): \(noHits)"),
            (["sample", model, "--primer", empty, "-n", "10", "-o", out], "--primer \(empty): \(noHits)"),
            (["humanize", empty, "-o", out], "\(empty): \(noHits)"),
        ] {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 1, "\(args): \(r.stderr)")
            XCTAssertEqual(r.stderr, "error: \(message)\n", "\(args)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "\(args)")
        }
    }
}
