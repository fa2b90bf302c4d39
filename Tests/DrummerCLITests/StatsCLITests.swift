import Foundation
import XCTest

/// `drummer stats` end to end, through the built binary, on small hand-written MIDI files.
final class StatsCLITests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("stats-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    /// Two bars of a rock beat: hi-hat eighths (velocity 90 on the beat, 50 between), bass drum on 1
    /// and 3 (110), snare on 2 and 4 (120): 12 hits a bar. `velocity` replaces every velocity.
    private func rock(velocity: UInt8? = nil) -> Data {
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for bar in 0..<2 {
            let t = bar * 1920
            for i in 0..<8 { hits.append((t + i * 240, 42, i % 2 == 0 ? 90 : 50)) }
            hits += [(t, 36, 110), (t + 960, 36, 110), (t + 480, 38, 120), (t + 1440, 38, 120)]
        }
        return TinySMF.drums(hits.map { ($0.tick, $0.note, velocity ?? $0.velocity) })
    }

    private func write(_ data: Data, _ name: String) throws -> String {
        let url = tmp.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        return url.path
    }

    private func json(_ r: CLIResult) throws -> [String: Any] {
        XCTAssertEqual(r.status, 0, r.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
    }

    private func number(_ object: [String: Any], _ path: String...) -> Double? {
        var value: Any? = object
        for key in path { value = (value as? [String: Any])?[key] }
        return (value as? NSNumber)?.doubleValue
    }

    // MARK: Figures

    func testAFileAgainstItselfMeetsEveryTargetAndAFlatCopyDoesNot() throws {
        let ref = try write(rock(), "ref/rock.mid")
        let same = try write(rock(), "same.mid")
        let flat = try write(rock(velocity: 100), "flat.mid")
        let refDir = (ref as NSString).deletingLastPathComponent

        let r = try CLI.run(["stats", same, "--reference", refDir, "--expected-hits", "24"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[0], "drummer stats: 1 generated file against \(refDir) (folder of MIDI files)")
        XCTAssertEqual(lines[1], "480 PPQ, not quantized, channel auto; on the 16th grid: within 1/8 of a sixteenth (15 ticks) of a grid line")
        func line(_ figure: String) throws -> String { try XCTUnwrap(lines.first { $0.hasPrefix(figure + " ") }, figure) }
        XCTAssertEqual(try line("hits").split(separator: " ").map(String.init), ["hits", "24", "24", "exactly", "24", "✓"])
        XCTAssertEqual(try line("hits per bar").split(separator: " ").map(String.init),
                       ["hits", "per", "bar", "12.00", "12.00", "100.0%", "of", "reference", "within", "10%", "of", "reference", "✓"])
        for figure in ["note histogram", "delta histogram", "velocity histogram"] {
            let l = try line(figure)
            XCTAssertTrue(l.contains("JS 0.0000 bits"), l)
            XCTAssertTrue(l.hasSuffix("✓"), l)
        }
        let grid = try line("share on 16th grid")
        XCTAssertTrue(grid.contains("1.000      1.000  100.0% of reference"), grid)
        XCTAssertTrue(try line("bar periodicity").contains("100.0% of reference"))
        XCTAssertTrue(try line("accent correlation").contains("r = 1.000"))
        let duplicates = try line("duplicate-onset rate")
        XCTAssertEqual(duplicates.split(separator: " ").suffix(4), ["0.00%", "0.00%", "0", "✓"], duplicates)
        XCTAssertFalse(r.stdout.contains("✗"), r.stdout)
        // The accent profile: 16 sixteenths; 1: (90 + 110) / 2, e: none, &: 50, 2: (90 + 120) / 2.
        let profile = try XCTUnwrap(lines.first { $0.hasPrefix("generated ") })
        XCTAssertEqual(profile.split(separator: " ").prefix(6), ["generated", "100", "–", "50", "–", "105"])

        let flatJSON = try json(try CLI.run(["stats", flat, "--reference", refDir, "--json"]))
        // Two bars: the bar-structure figures that need longer files are null, each with its reason
        // in notes (they were null with none).
        let shortNotes = try XCTUnwrap(flatJSON["notes"] as? [String])
        // (The reference's are not counted as targets.)
        for side in ["generated", "reference"] {
            let uncounted = side == "reference" ? "; the target is not counted" : ""
            XCTAssertTrue(shortNotes.contains("patterns_per_16_bars: n/a (no \(side) file in 4/4 holds a whole 16-bar window from its bar 1)\(uncounted)"),
                          "\(shortNotes)")
            XCTAssertTrue(shortNotes.contains("bar_similarity_lag2: n/a (no \(side) file in 4/4 has 3 bars or more)\(uncounted)"), "\(shortNotes)")
            XCTAssertFalse(shortNotes.contains("bar_similarity_lag1: n/a (no \(side) file in 4/4 has 2 bars or more)"), "\(shortNotes)")
        }
        XCTAssertNil(number(flatJSON, "bar_structure", "patterns_per_16_bars", "generated"))
        XCTAssertEqual(Set(flatJSON.keys), ["settings", "reference", "generated", "counts", "note_js_bits", "delta_js_bits",
                                            "velocity_js_bits", "grid16_share", "bar_periodicity", "bar_periodicity_per_drum",
                                            "accent_profile", "duplicate_onset_rate", "bar_structure", "expected_hits", "targets", "notes",
                                            "warnings"])
        XCTAssertEqual(number(flatJSON, "note_js_bits"), 0)
        XCTAssertEqual(number(flatJSON, "delta_js_bits"), 0)
        XCTAssertEqual(number(flatJSON, "velocity_js_bits"), 1, "100 (bin 96-103) against 50, 90, 110, 120: disjoint")
        XCTAssertEqual(number(flatJSON, "grid16_share", "ratio"), 1)
        XCTAssertEqual(number(flatJSON, "bar_periodicity", "generated"), 1)
        XCTAssertEqual(number(flatJSON, "bar_periodicity", "reference"), 1)
        XCTAssertEqual(number(flatJSON, "bar_periodicity_per_drum", "generated"), 1)
        XCTAssertEqual(number(flatJSON, "bar_periodicity_per_drum", "reference"), 1)
        XCTAssertEqual(number(flatJSON, "counts", "generated", "bars"), 2)
        XCTAssertEqual(number(flatJSON, "duplicate_onset_rate", "generated"), 0)
        let accent = try XCTUnwrap(flatJSON["accent_profile"] as? [String: Any])
        XCTAssertTrue(accent["correlation"] is NSNull, "null for n/a")
        XCTAssertEqual(accent["bar_ticks"] as? Int, 1920)
        XCTAssertEqual((accent["generated"] as? [Any])?.count, 16)
        XCTAssertEqual((accent["labels"] as? [String])?.prefix(4), ["1", "e", "&", "a"])
        XCTAssertEqual((accent["reference"] as? [Any])?[2] as? Double, 50)
        XCTAssertTrue((accent["reference"] as? [Any])?[1] is NSNull, "no hit on the e")
        let targets = try XCTUnwrap(flatJSON["targets"] as? [String: [String: Any]])
        XCTAssertEqual(Set(targets.keys), ["note_js_bits", "delta_js_bits", "velocity_js_bits", "grid16_share", "bar_periodicity",
                                           "accent_profile", "duplicate_onset_rate", "bar_similarity_lag1", "bar_similarity_lag2",
                                           "bar_similarity_lag4", "bar_similarity_lag8", "patterns_per_16_bars", "fill_tom_crash_ratio",
                                           "fill_similarity_ratio", "hits_per_bar", "simultaneous_onset_share", "velocity_mean",
                                           "soft_hit_share"])
        // Two bars: lag 1 only; no whole 8- or 16-bar window.
        XCTAssertEqual(targets["bar_similarity_lag1"]?["met"] as? Bool, true)
        XCTAssertTrue(targets["bar_similarity_lag2"]?["met"] is NSNull)
        XCTAssertTrue(targets["patterns_per_16_bars"]?["met"] is NSNull)
        XCTAssertEqual(number(flatJSON, "bar_structure", "bar_similarity_lag1", "generated"), 1)
        XCTAssertEqual(number(flatJSON, "bar_structure", "velocity_mean", "generated"), 100)
        XCTAssertEqual(targets["velocity_mean"]?["met"] as? Bool, false, "100 against (8·(90 + 50)/2 + 2·110 + 2·120) / 12 = 85")
        XCTAssertEqual(targets["accent_profile"]?["met"] as? Bool, false)
        XCTAssertEqual(targets["velocity_js_bits"]?["target"] as? String, "≤ 0.05 bits")
        XCTAssertEqual(targets["note_js_bits"]?["met"] as? Bool, true)
        let notes = try XCTUnwrap(flatJSON["notes"] as? [String])
        XCTAssertEqual(notes.count, 11, "\(notes)")
        XCTAssertTrue(notes[0].hasPrefix("accent_profile: n/a (constant velocity)"), notes[0])
        XCTAssertEqual((flatJSON["settings"] as? [String: Any])?["tolerance_ticks"] as? Double, 15)
        XCTAssertEqual((flatJSON["reference"] as? [String: Any])?["kind"] as? String, "folder of MIDI files")
    }

    func testToleranceAndQuantizeMoveOnsetsOnAndOffTheGrid() throws {
        let ref = try write(rock(), "ref/rock.mid")
        let refDir = (ref as NSString).deletingLastPathComponent
        // Onsets 0, 130, 260, 400 in a 4/4 bar: 10, 20 and 40 ticks from the nearest sixteenth.
        let gen = try write(TinySMF.drums([(0, 36, 100), (130, 42, 80), (260, 42, 80), (400, 38, 100)]), "off.mid")
        func share(_ extra: [String]) throws -> (Double?, Double?) {
            let j = try json(try CLI.run(["stats", gen, "--reference", refDir, "--json"] + extra))
            return (number(j, "grid16_share", "generated"), number(j, "grid16_share", "uniform_random"))
        }
        XCTAssertEqual(try share([]).0, 0.5, "0 and 130 within 15 ticks")
        XCTAssertEqual(try XCTUnwrap(try share([]).1), 31.0 / 120, accuracy: 1e-12)
        XCTAssertEqual(try share(["--tolerance", "0.2"]).0, 0.75, "24 ticks: 260 too")
        XCTAssertEqual(try share(["--tolerance", "0"]).0, 0.25)
        XCTAssertEqual(try share(["--quantize", "30"]).0, 0.5, "120, 270, 390")
        XCTAssertEqual(try share(["--quantize", "30"]).1, 0.25)
        XCTAssertEqual(try share(["--quantize", "60"]).0, 0.75, "120, 240, 420")
        XCTAssertEqual(try share(["--quantize", "60"]).1, 0.5)
    }

    /// A dataset as convert-midi writes it (velocities.npy, positions.npy) measures exactly
    /// like the MIDI files it came from.
    func testAConvertedDatasetMeasuresLikeItsMIDIFiles() throws {
        let ref = try write(rock(velocity: 90), "ref/rock.mid")
        let refDir = (ref as NSString).deletingLastPathComponent
        let gen = try write(rock(), "gen.mid")
        let data = tmp.appendingPathComponent("data")
        let conv = try CLI.run(["convert-midi", refDir, "-o", data.path])
        XCTAssertEqual(conv.status, 0, conv.stderr)
        let fromData = try json(try CLI.run(["stats", gen, "--reference", data.path, "--json"]))
        let fromMIDI = try json(try CLI.run(["stats", gen, "--reference", refDir, "--json"]))
        for key in ["note_js_bits", "delta_js_bits", "velocity_js_bits"] {
            let a = try XCTUnwrap(number(fromData, key), key), b = try XCTUnwrap(number(fromMIDI, key), key)
            XCTAssertEqual(a, b, accuracy: 1e-12, key)
        }
        XCTAssertGreaterThan(try XCTUnwrap(number(fromData, "velocity_js_bits")), 0.1, "a constant 90 against the beat's accents")
        for (key, sub) in [("bar_periodicity", "reference"), ("bar_periodicity_per_drum", "reference"), ("grid16_share", "reference")] {
            let a = try XCTUnwrap(number(fromData, key, sub), key), b = try XCTUnwrap(number(fromMIDI, key, sub), key)
            XCTAssertEqual(a, b, accuracy: 1e-12, "\(key).\(sub)")
        }
        XCTAssertEqual(number(fromData, "counts", "reference", "hits"), 24)

        // Its validation/ alone has no manifest (files, quantize): refused, pointing at --split.
        let v = data.appendingPathComponent("validation")
        try FileManager.default.createDirectory(at: v, withIntermediateDirectories: true)
        for name in ["events.npy", "vocab.json"] {
            try FileManager.default.copyItem(at: data.appendingPathComponent(name), to: v.appendingPathComponent(name))
        }
        let r = try CLI.run(["stats", gen, "--reference", v.path])
        XCTAssertEqual(r.status, 1, r.stdout)
        XCTAssertTrue(r.stderr.contains("\(v.path): the validation split of the dataset \(data.path): give the dataset and --split validation"), r.stderr)
    }

    func testADatasetReferenceWithoutVelocitiesOrPositions() throws {
        let ref = try write(rock(), "ref/rock.mid")
        let refDir = (ref as NSString).deletingLastPathComponent
        let gen = try write(rock(), "gen.mid")
        let data = tmp.appendingPathComponent("data")
        let conv = try CLI.run(["convert-midi", refDir, "-o", data.path])
        XCTAssertEqual(conv.status, 0, conv.stderr)
        // A dataset written before convert-midi recorded velocities and positions.
        for name in ["velocities.npy", "positions.npy"] {
            try FileManager.default.removeItem(at: data.appendingPathComponent(name))
        }
        let r = try CLI.run(["stats", gen, "--reference", data.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("against \(data.path) (convert-midi dataset, training split)"), r.stdout)
        XCTAssertTrue(r.stdout.contains("n/a (no velocities in the reference)"), r.stdout)
        XCTAssertTrue(r.stdout.contains("n/a (no bar positions in the reference)"), r.stdout)
        XCTAssertTrue(r.stdout.contains("- the reference dataset stores notes and deltas only: it has no velocities (no velocities.npy)"), r.stdout)
        let j = try json(try CLI.run(["stats", gen, "--reference", data.path, "--json"]))
        XCTAssertEqual(number(j, "note_js_bits"), 0)
        XCTAssertEqual(number(j, "delta_js_bits"), 0, "the dataset's deltas within the file are the MIDI file's")
        XCTAssertTrue(j["velocity_js_bits"] is NSNull)
        XCTAssertTrue((j["bar_periodicity"] as? [String: Any])?["reference"] is NSNull)
        XCTAssertEqual(number(j, "bar_periodicity", "generated"), 1)
        XCTAssertTrue((j["counts"] as? [String: [String: Any]])?["reference"]?["bars"] is NSNull)
        XCTAssertEqual(number(j, "counts", "reference", "hits"), 24)
        XCTAssertEqual((j["reference"] as? [String: Any])?["split"] as? String, "training")
        XCTAssertTrue(((j["targets"] as? [String: [String: Any]])?["velocity_js_bits"]?["met"]) is NSNull)

        // A velocities.npy that disagrees with events.npy: an error naming both.
        var bad = Data([0x93]) + Data("NUMPY".utf8) + Data([1, 0, 118, 0])
        var header = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"
        while header.utf8.count < 117 { header += " " }
        bad += Data((header + "\n").utf8)
        for v: Int32 in [100, 100, 100] { withUnsafeBytes(of: v.littleEndian) { bad.append(contentsOf: $0) } }
        try bad.write(to: data.appendingPathComponent("velocities.npy"))
        let e = try CLI.run(["stats", gen, "--reference", data.path])
        XCTAssertEqual(e.status, 1)
        XCTAssertEqual(e.stderr, "error: \(data.path)/velocities.npy: 3 velocities, but events.npy has 24 rows\n")
        XCTAssertEqual(e.stdout, "")
        // No validation split in this dataset.
        try FileManager.default.removeItem(at: data.appendingPathComponent("velocities.npy"))
        let v = try CLI.run(["stats", gen, "--reference", data.path, "--split", "validation"])
        XCTAssertEqual(v.status, 1)
        XCTAssertTrue(v.stderr.hasPrefix("error: \(data.path): no validation/events.npy"), v.stderr)
        // A manifest.json whose --quantize no conversion takes (the figures divide by it).
        let manifestURL = data.appendingPathComponent("manifest.json")
        let manifest = try Data(contentsOf: manifestURL)
        var m = try XCTUnwrap(JSONSerialization.jsonObject(with: manifest) as? [String: Any])
        var settings = m["settings"] as? [String: Any] ?? [:]
        settings["quantize"] = 1 << 62
        m["settings"] = settings
        try JSONSerialization.data(withJSONObject: m).write(to: manifestURL)
        let q = try CLI.run(["stats", gen, "--reference", data.path])
        XCTAssertEqual(q.status, 1)
        XCTAssertEqual(q.stderr, "error: \(manifestURL.path): settings.quantize is \(1 << 62), expected 1...1048576\n")
        try manifest.write(to: manifestURL)
        // A vocab.json that is JSON but no vocabulary (a note twice, a delta longer than a file
        // can span), and one that is not JSON: in words.
        let vocab = data.appendingPathComponent("vocab.json")
        for (text, message) in [(#"{"ix_to_note": [36, 36], "ix_to_tick": [0, 120]}"#, "not a vocabulary: ix_to_note has duplicates"),
                                (#"{"ix_to_note": [36, 38], "ix_to_tick": [0, 9223372036854775807]}"#,
                                 "not a vocabulary: ix_to_tick holds 9223372036854775807, more ticks than a file can span (2147483647)"),
                                ("{", "not valid JSON: unexpected end of file during JSON parse (its end: byte 1, line 1)")] {
            try Data(text.utf8).write(to: vocab)
            let r = try CLI.run(["stats", gen, "--reference", data.path])
            XCTAssertEqual(r.status, 1)
            XCTAssertEqual(r.stderr, "error: \(data.path): vocab.json: \(message)\n")
        }
    }

    // MARK: Bad input

    func testBadInputsAreNamed() throws {
        let ref = try write(rock(), "ref/rock.mid")
        let refDir = (ref as NSString).deletingLastPathComponent
        let gen = try write(rock(), "gen.mid")
        let junk = try write(Data("MThd but not really".utf8), "junk.mid")
        let silent = try write(TinySMF.bytes(events: [(0, [0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20])]), "silent.mid")
        let missing = tmp.appendingPathComponent("missing.mid").path

        // A bad file among good ones: named, left out, exit 0.
        let r = try CLI.run(["stats", gen, junk, "--reference", refDir])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.hasPrefix("warning: \(junk): not a readable MIDI file"), r.stderr)
        XCTAssertTrue(r.stderr.hasSuffix("; left out (1 of 2 generated files measured)\n"), r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("drummer stats: 1 generated file against"), r.stdout)
        // Nothing left: exit 1, one line naming the file.
        for (path, message) in [(silent, "\(silent): no drum hits"), (missing, "\(missing): no such MIDI file"),
                                (junk, "\(junk): not a readable MIDI file")] {
            let e = try CLI.run(["stats", path, "--reference", refDir])
            XCTAssertEqual(e.status, 1, path)
            XCTAssertTrue(e.stderr.hasPrefix("error: \(message)"), e.stderr)
            XCTAssertEqual(e.stderr.split(separator: "\n").count, 1, e.stderr)
            XCTAssertEqual(e.stdout, "")
        }
        let two = try CLI.run(["stats", silent, missing, "--reference", refDir])
        XCTAssertEqual(two.status, 1)
        XCTAssertTrue(two.stderr.hasPrefix("error: none of the 2 generated files could be measured: \(silent): no drum hits"), two.stderr)
        // References: missing, an empty folder, a folder whose files have no drums.
        let noRef = tmp.appendingPathComponent("no-such-dir").path
        let m = try CLI.run(["stats", gen, "--reference", noRef])
        XCTAssertEqual(m.status, 1)
        XCTAssertEqual(m.stderr, "error: \(noRef): no such reference (a convert-midi dataset or a folder of MIDI files)\n")
        let empty = tmp.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let em = try CLI.run(["stats", gen, "--reference", empty.path])
        XCTAssertEqual(em.status, 1)
        XCTAssertEqual(em.stderr, "error: \(empty.path): no events.npy (not a convert-midi dataset) and no .mid files\n")
        let quiet = tmp.appendingPathComponent("quiet")
        _ = try write(TinySMF.bytes(events: [(0, [0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20])]), "quiet/a.mid")
        let q = try CLI.run(["stats", gen, "--reference", quiet.path])
        XCTAssertEqual(q.status, 1)
        XCTAssertEqual(q.stderr, "error: \(quiet.path): none of its 1 MIDI files has drum hits\n")
        // Options.
        for (args, message) in [([String](), "Missing expected argument '<generated.mid> ...'"),
                                ([gen, "--tolerance", "0.5"], "--tolerance must be at least 0 and below 0.5, got 0.5"),
                                ([gen, "--quantize", "0"], "--quantize must be between 1 and 1048576 ticks, got 0"),
                                ([gen, "--split", "test"], "--split must be training, validation or all (got \"test\")"),
                                ([gen, "--channel", "16"], "--channel must be auto, all, or a channel index from 0 to 15"),
                                ([gen, "--expected-hits", "-1"], "--expected-hits must not be negative, got -1"),
                                ([gen, "--split", "validation"], "--split picks the rows of a convert-midi dataset; \(refDir) is MIDI (no events.npy)")] {
            let o = try CLI.run(["stats"] + args + ["--reference", refDir])
            XCTAssertEqual(o.status, 64, "\(args)")
            XCTAssertTrue(o.stderr.contains(message), o.stderr)
        }
        let noReference = try CLI.run(["stats", gen])
        XCTAssertEqual(noReference.status, 64)
        XCTAssertTrue(noReference.stderr.contains("--reference"), noReference.stderr)
    }

    // MARK: The report shows the same figures

    func testTheReportHasTheStatsTable() throws {
        let ref = try write(rock(), "ref/rock.mid")
        let refDir = (ref as NSString).deletingLastPathComponent
        let flat = try write(rock(velocity: 100), "flat.mid")
        let out = tmp.appendingPathComponent("r.html")
        let r = try CLI.run(["report", "--reference", refDir, flat, "--no-audio", "-o", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let html = try String(contentsOf: out, encoding: .utf8)
        XCTAssertTrue(html.contains("<h3>drummer stats</h3>"), "the table's heading")
        let table = try XCTUnwrap(html.components(separatedBy: "<table class=\"figures-table stats\">").dropFirst().first)
            .components(separatedBy: "</table>")[0]
        XCTAssertTrue(table.contains("<tr><th>velocity histogram</th><td></td><td></td><td>JS 1.0000 bits</td><td>≤ 0.05 bits</td><td>✗</td></tr>"),
                      table)
        XCTAssertTrue(table.contains("<tr><th>accent correlation</th><td></td><td></td><td>n/a (constant velocity)</td>"), table)
        XCTAssertTrue(table.contains("<tr><th>bar periodicity</th><td>1.000</td><td>1.000</td><td>100.0% of reference</td>"), table)
        XCTAssertTrue(html.contains("Stats: accent_profile: n/a (constant velocity)"))
    }
}
