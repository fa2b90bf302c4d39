// Small files whose few hits lie far apart (millions of empty bars between them): tab draws
// the empty run as one line, sample reads only the primer's last bars, and humanize and eval
// refuse a file spanning more bars than a grid model reads, naming it, at once.
import Foundation
import XCTest

final class FarApartHitsCLITests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("far-apart") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    private var model: String { CLI.repoRoot.appendingPathComponent("models/groove").path }

    /// Two hits, a bass drum at tick 0 and a snare 0x0FFFFFFF ticks later (the largest delta a
    /// MIDI file can hold): 67,108,864 bars at division 1, 139,811 bars at division 480.
    private func tinyFar(division: Int, _ name: String) throws -> String {
        let hex = "4d5468640000000600000001" + String(format: "%04x", division)
            + "4d54726b0000000f00992464ffffff7f99266400ff2f00"
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            bytes.append(UInt8(hex[i..<j], radix: 16) ?? 0)
            i = j
        }
        let url = tmp.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    func testTabOfEveryBarDrawsTheEmptyRunAsOneLine() throws {
        let path = try tinyFar(division: 1, "tiny_far.mid")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)).count, 37)
        let r = try CLI.run(["tab", path, "--bars", "0"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, """
            \(path): 4/4, 120 BPM, 67108864 bars, 2 hits on channel 10
            bars 1-67108864 of 67108864: 2 hits, grid 16 (sixteenth notes)

                  bar 1
                 |1 e & a 2 e & a 3 e & a 4 e & a |
              SD |- - - - - - - - - - - - - - - - |
              BD |o - - - - - - - - - - - - - - - |

                  bars 2-67108863: 67108862 empty bars, not drawn

                  bar 67108864
                 |1 e & a 2 e & a 3 e & a 4 e & a |
              SD |- - - - - - - - - - - - o - - - |
              BD |- - - - - - - - - - - - - - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest

            """)

        let json = try CLI.run(["tab", path, "--bars", "0", "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let bars = try XCTUnwrap(obj["bars"] as? [[String: Any]])
        XCTAssertEqual(bars.compactMap { $0["number"] as? Int }, [1, 2, 67_108_864])
        XCTAssertEqual(bars.map { $0["empty_bars"] as? Int }, [nil, 67_108_862, nil])
        XCTAssertEqual(bars.compactMap { $0["cells"] as? Int }, [16, 0, 16])
        let rows = try XCTUnwrap(obj["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.compactMap { ($0["bars"] as? [[Any]])?.map(\.count) }, [[16, 0, 16], [16, 0, 16]])
    }

    /// 2,000 hits 67 million bars apart: one rest line between each two, in a few seconds.
    func testTabOfManyFarApartHitsFollowsTheHits() throws {
        var track: [UInt8] = []
        for i in 0..<2000 { track += (i == 0 ? [0x00] : [0xFF, 0xFF, 0xFF, 0x7F]) + [0x99, i % 2 == 0 ? 36 : 38, 100] }
        track += [0x00, 0xFF, 0x2F, 0x00]
        let n = track.count
        let data = Data(Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 1] + Array("MTrk".utf8)
                        + [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + track)
        let path = tmp.appendingPathComponent("far2000.mid").path
        try data.write(to: URL(fileURLWithPath: path))
        let start = Date()
        let r = try CLI.run(["tab", path, "--bars", "0"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout.components(separatedBy: "empty bars, not drawn").count - 1, 1999)
        XCTAssertTrue(r.stdout.hasPrefix("\(path): 4/4, 120 BPM, 134150618637 bars, 2000 hits"), r.stdout.prefix(200) + "")
        XCTAssertLessThan(Date().timeIntervalSince(start), 60)
    }

    /// The primer's last 2 bars hold only its last hit: the 139,809 empty bars before them are
    /// not stepped through (the status line says 1 hit of 2 was read).
    func testSampleReadsOnlyThePrimersLastBars() throws {
        let primer = try tinyFar(division: 480, "tiny_far480.mid")
        let out = tmp.appendingPathComponent("x.mid").path
        let start = Date()
        let r = try CLI.run(["sample", model, "--primer", primer, "-n", "10", "--seed", "1", "--keep-primer", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("primer \(primer): 1 hits (its last 2 bar(s) of 2 hits)"), r.stdout)
        XCTAssertLessThan(Date().timeIntervalSince(start), 60)
        let written = try XCTUnwrap(TinyMIDI(Array(try Data(contentsOf: URL(fileURLWithPath: out)))))
        XCTAssertEqual(written.noteOns.count, 11, "the kept primer hit and 10 sampled")
        XCTAssertEqual(written.noteOns.first?.note, 38, "the primer's last hit, the snare, starts the file")
        // More primer bars than a grid model reads of a file is a usage error, not hours of work.
        let many = tmp.appendingPathComponent("many.mid").path
        let refused = try CLI.run(["sample", model, "--primer", primer, "--primer-bars", "10001", "-n", "10", "-o", many])
        assertRefused(refused, "--primer-bars must be between 1 and 10000, got 10001", status: 64, nothingAt: many)
    }

    func testHumanizeAndEvalRefuseAFileSpanningTooManyBars() throws {
        let path = try tinyFar(division: 480, "tiny_far480.mid")
        let out = tmp.appendingPathComponent("h.mid").path
        let message = "tiny_far480.mid: its hits span 139811 bars (empty bars included), more than the 10000 a grid model reads"
        let start = Date()
        let h = try CLI.run(["humanize", path, "--model", model, "-o", out, "--seed", "1"])
        assertRefused(h, message, status: 1, nothingAt: out)
        let e = try CLI.run(["eval", model, "--data", path])
        XCTAssertEqual(e.status, 1, e.stderr)
        XCTAssertTrue(e.stderr.contains(message), e.stderr)
        XCTAssertFalse(e.stdout.contains("loss"), e.stdout)
        XCTAssertLessThan(Date().timeIntervalSince(start), 30, "refused before any work over the bars")
    }

    /// In a dataset the file is left out of a grid model's reading, as a file not in 4/4 is;
    /// eval of a dataset left with no file names it and says why.
    func testEvalOfADatasetLeavesTheFileOutAndSaysWhy() throws {
        let source = tmp.appendingPathComponent("src")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        let path = try tinyFar(division: 480, "src/tiny_far480.mid")
        let data = tmp.appendingPathComponent("data").path
        let c = try CLI.run(["convert-midi", source.path, "-o", data])
        XCTAssertEqual(c.status, 0, c.stderr)
        let start = Date()
        let e = try CLI.run(["eval", model, "--data", data])
        XCTAssertEqual(e.status, 1, e.stderr)
        XCTAssertTrue(e.stderr.contains("\(data): no file the grid model reads: \((path as NSString).lastPathComponent): its hits span 139811 bars"),
                      e.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(start), 30)
    }
}
