// Every hit audible: `drummer sample` writes notes every General MIDI kit sounds, and
// `drummer stats` reads both sides' notes that way unless --raw-notes.
import Foundation
import XCTest

final class GeneralMIDICLITests: XCTestCase {
    var tmp: URL!
    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("gm-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    func notes(_ r: CLIResult) throws -> [Int] {
        XCTAssertEqual(r.status, 0, r.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let files = try XCTUnwrap(object["files"] as? [[String: Any]])
        return try XCTUnwrap(files.first?["events"] as? [[Int]]).map { $0[0] }
    }

    func testSampleWritesGeneralMIDINotesAndStatsReadsThemSo() throws {
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let gm = tmp.appendingPathComponent("gm.mid").path
        let gmNotes = try notes(try CLI.run(["sample", model, "-n", "2000", "--seed", "1", "-o", gm, "--json"]))
        XCTAssertEqual(gmNotes.count, 2000, "every hit written")
        XCTAssertTrue(gmNotes.allSatisfy { (35...81).contains($0) }, "\(Set(gmNotes).sorted())")

        // stats reads both sides as a GM kit sounds them: the GM file's notes compare with the
        // corpus's once its 22s are read as 42s; --raw-notes compares them as written.
        let reference = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer1").path
        func noteJS(_ args: [String]) throws -> Double {
            let r = try CLI.run(["stats"] + args + ["--reference", reference, "--json"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            return try XCTUnwrap(object["note_js_bits"] as? Double)
        }
        let mapped = try noteJS([gm]), asWritten = try noteJS([gm, "--raw-notes"])
        XCTAssertLessThan(mapped, asWritten, "GM notes against the corpus's raw 22s and 26s read as written")
        // Reading both sides through one map never raises a divergence (the data-processing
        // inequality): a file of raw notes (another drummer's performance, half of its hits on
        // the hi-hat edges 22 and 26) read as GM notes measures at most as far as read as written.
        let raw = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer5/eval_session/3_soul-groove3_86_beat_4-4.mid").path
        XCTAssertLessThan(try noteJS([raw]), try noteJS([raw, "--raw-notes"]) + 1e-12)
        let text = try CLI.run(["stats", gm, "--reference", reference, "--raw-notes"])
        XCTAssertTrue(text.stdout.contains(", channel auto, raw notes; on the 16th grid"), text.stdout)
    }

    /// A note with no drum class (100) counts in no class figure: it was read as the nearest GM
    /// note, 81, an open hi-hat, and so a third of the hits.
    func testANoteWithNoClassCountsInNoClassFigure() throws {
        var events: [(Int, [UInt8])] = [(0, [0xFF, 0x58, 0x04, 4, 2, 24, 8])]
        for bar in 0..<2 {
            for e in 0..<8 { events.append((bar * 1920 + e * 240, [0x99, 100, 80])) }
            for q in 0..<4 { events.append((bar * 1920 + q * 480, [0x99, q % 2 == 0 ? 36 : 38, 100])) }
        }
        let file = tmp.appendingPathComponent("n100.mid")
        try TinySMF.bytes(events: events).write(to: file)
        let r = try CLI.run(["stats", file.path, "--reference", file.path, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let shares = try XCTUnwrap((object["bar_structure"] as? [String: Any])?["hit_share_by_class"] as? [String: Any])
        let open = try XCTUnwrap(shares["open hi-hat"] as? [String: Any])
        XCTAssertEqual(open["generated"] as? Double, 0, "\(shares)")
        XCTAssertEqual((shares["kick"] as? [String: Any])?["generated"] as? Double, 0.5, "\(shares)")
    }
}
