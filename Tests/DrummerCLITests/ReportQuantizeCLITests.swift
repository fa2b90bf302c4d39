// `drummer report --quantize` prints the figures `drummer stats --quantize` prints for the same
// files (without it a MIDI reference and generated files are read unquantized, and the delta
// histogram of a model's 64th-note grid against performances is far apart).
import Foundation
import XCTest

final class ReportQuantizeCLITests: XCTestCase {
    func testReportAndStatsAgree() throws {
        let root = try CLI.temporaryDirectory("report-quantize")
        defer { try? FileManager.default.removeItem(at: root) }
        let ref = root.appendingPathComponent("ref")
        try FileManager.default.createDirectory(at: ref, withIntermediateDirectories: true)
        let src = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer1/session1")
        for f in try FileManager.default.contentsOfDirectory(atPath: src.path).filter({ $0.hasSuffix(".mid") }).sorted().prefix(12) {
            try FileManager.default.copyItem(at: src.appendingPathComponent(f), to: ref.appendingPathComponent(f))
        }
        let gen = root.appendingPathComponent("g.mid").path
        XCTAssertEqual(try CLI.run(["sample", CLI.repoRoot.appendingPathComponent("models/groove").path, "-n", "400",
                                    "--seed", "3", "-o", gen]).status, 0)
        let stats = try CLI.run(["stats", gen, "--reference", ref.path, "--quantize", "30", "--json"])
        XCTAssertEqual(stats.status, 0, stats.stderr)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        let page = root.appendingPathComponent("r.html").path
        let r = try CLI.run(["report", gen, "--reference", ref.path, "--quantize", "30", "--no-audio", "-o", page])
        XCTAssertEqual(r.status, 0, r.stderr)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        for key in ["note_js_bits", "delta_js_bits", "velocity_js_bits"] {
            let v = try XCTUnwrap(json[key] as? Double, key)
            XCTAssertTrue(html.contains(String(format: "%.4f bits", v)), "\(key) \(v) is not on the page")
        }
        // Without --quantize the page reads the files as written: its delta figure differs.
        let plain = root.appendingPathComponent("p.html").path
        XCTAssertEqual(try CLI.run(["report", gen, "--reference", ref.path, "--no-audio", "-o", plain]).status, 0)
        let delta = try XCTUnwrap(json["delta_js_bits"] as? Double)
        XCTAssertFalse(try String(contentsOfFile: plain, encoding: .utf8).contains(String(format: "%.4f bits", delta)))
        XCTAssertEqual(try CLI.run(["report", gen, "--quantize", "0", "-o", plain]).status, 64)
    }
}
