// `drummer report --quantize` prints the figures `drummer stats --quantize` prints for the same
// files (without it a MIDI reference and generated files are read unquantized, and the delta
// histogram of a model's 64th-note grid against performances is far apart).
import Foundation
import XCTest

final class ReportQuantizeCLITests: XCTestCase {
    /// A folder `ref` in `root` holding the first `files` MIDI files of one Groove session.
    static func referenceFolder(in root: URL, files: Int) throws -> URL {
        let ref = root.appendingPathComponent("ref")
        try FileManager.default.createDirectory(at: ref, withIntermediateDirectories: true)
        let src = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer1/session1")
        for f in try FileManager.default.contentsOfDirectory(atPath: src.path).filter({ $0.hasSuffix(".mid") }).sorted().prefix(files) {
            try FileManager.default.copyItem(at: src.appendingPathComponent(f), to: ref.appendingPathComponent(f))
        }
        return ref
    }

    func testReportAndStatsAgree() throws {
        let root = try CLI.temporaryDirectory("report-quantize")
        defer { try? FileManager.default.removeItem(at: root) }
        let ref = try Self.referenceFolder(in: root, files: 12)
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

    /// With a grid model (--model) and no --quantize, the page reads MIDI onsets on the grid the
    /// model plays on (models/groove: 30 ticks), so its figures are `stats --quantize 30`'s and it
    /// says so; the files of each set (NAME-k.mid of one `sample --count`, or a file of its own)
    /// get a column and a stats table of their own.
    func testReportTakesTheModelsGridAndShowsEachSetApart() throws {
        let root = try CLI.temporaryDirectory("report-model-grid")
        defer { try? FileManager.default.removeItem(at: root) }
        let ref = try Self.referenceFolder(in: root, files: 12)
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let set = root.appendingPathComponent("g.mid").path, other = root.appendingPathComponent("events.mid").path
        XCTAssertEqual(try CLI.run(["sample", model, "-n", "300", "--count", "2", "--seed", "3", "-o", set]).status, 0)
        XCTAssertEqual(try CLI.run(["sample", CLI.repoRoot.appendingPathComponent("models/groove").path, "-n", "300",
                                    "--seed", "3", "-o", other]).status, 0)
        let members = [root.appendingPathComponent("g-1.mid").path, root.appendingPathComponent("g-2.mid").path]
        let stats = try CLI.run(["stats"] + members + ["--reference", ref.path, "--quantize", "30", "--json"])
        XCTAssertEqual(stats.status, 0, stats.stderr)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        let page = root.appendingPathComponent("r.html").path
        let r = try CLI.run(["report"] + members + [other, "--model", model, "--reference", ref.path, "--no-audio", "-o", page])
        XCTAssertEqual(r.status, 0, r.stderr)
        let html = try String(contentsOfFile: page, encoding: .utf8)
        XCTAssertTrue(html.contains("MIDI onsets snapped to a grid of 30 ticks, the grid \(model) plays on"), "the page says which grid")
        for key in ["note_js_bits", "delta_js_bits", "velocity_js_bits"] {
            let v = try XCTUnwrap(json[key] as? Double, key)
            XCTAssertTrue(html.contains(String(format: "%.4f bits", v)), "\(key) \(v) of the set is not on the page")
        }
        XCTAssertTrue(html.contains("drummer stats: g (2 files)"), "the set's own table")
        XCTAssertTrue(html.contains("drummer stats: events"), "the other file's own table")
        XCTAssertFalse(html.contains(">generated<"), "no column pools the two sets")
    }

    /// A MIDI reference read with --quantize 30 gives the page's histograms and figures the hits
    /// a convert-midi --quantize 30 dataset of the same files holds: the share of simultaneous
    /// hits is the snapped files' (before, the figures read them as written: 1.6% against a
    /// grid model's 24%).
    func testSnappedMIDIReferenceCountsAsItsDataset() throws {
        let root = try CLI.temporaryDirectory("report-snapped")
        defer { try? FileManager.default.removeItem(at: root) }
        let ref = try Self.referenceFolder(in: root, files: 6)
        let data = root.appendingPathComponent("data").path
        XCTAssertEqual(try CLI.run(["convert-midi", ref.path, "-o", data, "--quantize", "30"]).status, 0)
        func simultaneous(_ reference: String, _ extra: [String]) throws -> String {
            let page = root.appendingPathComponent("p.html").path
            let r = try CLI.run(["report", "--reference", reference, "--no-audio", "-o", page] + extra)
            XCTAssertEqual(r.status, 0, r.stderr)
            let html = try String(contentsOfFile: page, encoding: .utf8)
            let row = try XCTUnwrap(html.range(of: "<th>simultaneous hits (delta 0)</th>"), "no figures table")
            let cell = try XCTUnwrap(html[row.upperBound...].range(of: #"<td>[^<]*</td>"#, options: .regularExpression))
            return String(html[cell].dropFirst(4).dropLast(5))
        }
        let snapped = try simultaneous(ref.path, ["--quantize", "30"]), dataset = try simultaneous(data, [])
        XCTAssertEqual(snapped, dataset, "the MIDI reference snapped and its dataset")
        XCTAssertNotEqual(try simultaneous(ref.path, []), snapped, "as written, the files have fewer simultaneous hits")
    }

    /// Against a convert-midi dataset, stats (like report) reads the generated files with the
    /// dataset's own --quantize unless told: the same figures as giving it, and no mismatch note.
    func testStatsDefaultsToADatasetReferencesQuantize() throws {
        let root = try CLI.temporaryDirectory("stats-quantize")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data").path
        let conv = try CLI.run(["convert-midi", CLI.repoRoot.appendingPathComponent("corpus/groove/drummer4").path, "-o", data,
                                "--quantize", "30"])
        XCTAssertEqual(conv.status, 0, conv.stderr)
        let gen = root.appendingPathComponent("g.mid").path
        XCTAssertEqual(try CLI.run(["sample", CLI.repoRoot.appendingPathComponent("models/groove").path, "-n", "400",
                                    "--seed", "3", "-o", gen]).status, 0)
        let implicit = try CLI.run(["stats", gen, "--reference", data])
        let explicit = try CLI.run(["stats", gen, "--reference", data, "--quantize", "30"])
        XCTAssertEqual(implicit.status, 0, implicit.stderr)
        XCTAssertEqual(implicit.stdout, explicit.stdout)
        XCTAssertTrue(implicit.stdout.contains("480 PPQ, --quantize 30, channel auto;"), implicit.stdout)
        XCTAssertFalse(implicit.stdout.contains("the reference dataset was made with"), implicit.stdout)
        let other = try CLI.run(["stats", gen, "--reference", data, "--quantize", "60"])
        XCTAssertTrue(other.stdout.contains("the reference dataset was made with --quantize 30, the generated files were read with --quantize 60"),
                      other.stdout)
    }
}
