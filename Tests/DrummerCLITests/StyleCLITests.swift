// `drummer train --recipe grid --styles …` end to end through the built binary: a
// style input read from Groove file names (ten funk and ten second-line copies of the grid
// fixture's files), kept on resume (and `--styles none` refused there), carried by the
// checkpoint, model.json, safetensors and back; `sample` draws a style per file and says which,
// `--style` plays one (the file the seed gives when it draws that style), unknown styles and
// models without a style input are refused; with a primer, the style likeliest for it;
// `humanize` takes the likeliest style or `--style`;
// the report's model card lists the styles. The drummer rules, and `--style` given a part of
// the styles' names (`testDrummerStylesAndAPartOfTheirNames`).
import Foundation
import Checkpoints
import Train
import XCTest

final class StyleCLITests: XCTestCase {
    var root: URL!
    var data: URL!

    override func setUpWithError() throws {
        root = try CLI.temporaryDirectory("style-cli")
        let src = root.appendingPathComponent("src")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        let fixtures = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session1")
        for i in 0..<10 {
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent("102_funk_95_beat_4-4.mid"),
                                             to: src.appendingPathComponent("\(i)_funk_95_beat_4-4.mid"))
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent("100_neworleans-secondline_94_beat_4-4.mid"),
                                             to: src.appendingPathComponent("\(20 + i)_neworleans-secondline_94_beat_4-4.mid"))
        }
        data = root.appendingPathComponent("data")
        let r = try CLI.run(["convert-midi", src.path, "-o", data.path, "--quantize", "30", "--onset-order", "note",
                             "--validation-fraction", "0"])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    func path(_ name: String) -> String { root.appendingPathComponent(name).path }

    func testStylesTrainExportSampleHumanize() throws {
        var r = try CLI.run(["train", "--recipe", "grid", "--styles", "groove-names", "--data", data.path, "--hidden", "8",
                             "--unroll", "8", "--batch-size", "2", "--steps", "2", "--checkpoint-every", "2", "--eval-every", "2",
                             "--checkpoint-dir", path("ckpt")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("grid styles (groove-names, share of training steps): funk "), r.stdout)
        XCTAssertTrue(r.stdout.contains(", neworleans "), r.stdout)
        XCTAssertTrue(r.stdout.contains(", other 0%"), r.stdout)
        XCTAssertTrue(r.stdout.contains(", repeat_2 2, style 3;"), r.stdout)
        // Resume keeps the style input; --styles none is refused there.
        r = try CLI.run(["train", "--resume", path("ckpt/ckpt-2.h5"), "--steps", "3", "--styles", "none"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--styles"), r.stderr)
        r = try CLI.run(["train", "--resume", path("ckpt/ckpt-2.h5"), "--steps", "3"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(["export", path("ckpt/ckpt-3.h5"), "-o", path("m")])
        XCTAssertEqual(r.status, 0, r.stderr)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("m/model.json")))) as? [String: Any])
        let grid = try XCTUnwrap((json["groups"] as? [String: Any])?["grid"] as? [String: Any])
        let styles = try XCTUnwrap(grid["styles"] as? [String: Any])
        XCTAssertEqual(styles["rule"] as? String, "groove-names")
        XCTAssertEqual(styles["names"] as? [String], ["funk", "neworleans", "other"], "more steps first")
        let steps = try XCTUnwrap(styles["steps"] as? [Int])
        XCTAssertEqual(steps.count, 3)
        XCTAssertGreaterThan(steps[0], steps[1])
        XCTAssertEqual(steps[2], 0)

        // sample: a style drawn per file, said; --style plays the one given.
        r = try CLI.run(["sample", path("m"), "-n", "60", "--count", "6", "--seed", "11", "-o", path("g.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").filter { $0.hasPrefix("wrote ") }
        XCTAssertEqual(lines.count, 6)
        let drawn = lines.map { line -> String in
            line.contains("style funk (drawn)") ? "funk" : line.contains("style neworleans (drawn)") ? "neworleans" : "?"
        }
        XCTAssertFalse(drawn.contains("?"), r.stdout)
        for (k, style) in drawn.enumerated() {
            r = try CLI.run(["sample", path("m"), "-n", "60", "--seed", "\(11 + k)", "--style", style, "-o", path("one.mid")])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("style \(style)") && !r.stdout.contains("(drawn)"), r.stdout)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("one.mid"))),
                           try Data(contentsOf: URL(fileURLWithPath: path("g-\(k + 1).mid"))),
                           "file \(k + 1): --style \(style) with its seed is the file that drew it")
        }
        // The other style at the same seeds plays other files (600 hits: the tiny model plays
        // most classes on most 16ths, and its first bar can come out alike).
        var differ = 0
        for (k, style) in drawn.enumerated() {
            for (name, s) in [("this.mid", style), ("other.mid", style == "funk" ? "neworleans" : "funk")] {
                r = try CLI.run(["sample", path("m"), "-n", "600", "--seed", "\(11 + k)", "--style", s, "-o", path(name)])
                XCTAssertEqual(r.status, 0, r.stderr)
            }
            if try Data(contentsOf: URL(fileURLWithPath: path("other.mid"))) != Data(contentsOf: URL(fileURLWithPath: path("this.mid"))) {
                differ += 1
            }
        }
        XCTAssertGreaterThan(differ, 0, "the style input changes what is played")
        r = try CLI.run(["sample", path("m"), "-n", "10", "--seed", "1", "--json", "-o", path("j.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let style = try XCTUnwrap((report["files"] as? [[String: Any]])?.first?["style"] as? String)
        XCTAssertTrue(["funk", "neworleans"].contains(style), style)
        // A checkpoint samples as its export does.
        r = try CLI.run(["sample", path("ckpt/ckpt-3.h5"), "-n", "60", "--seed", "11", "-o", path("c.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("c.mid"))), try Data(contentsOf: URL(fileURLWithPath: path("g-1.mid"))))

        // Refused: a style the model lacks (the message lists its styles), --style on a model
        // without a style input; nothing written.
        r = try CLI.run(["sample", path("m"), "-n", "10", "--style", "polka", "-o", path("x.mid")])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.stderr.contains("--style polka: \(path("m")) knows the styles funk, neworleans\n"), r.stderr)
        // "other", which no training file was (0% of the steps): refused, not played unlearned.
        r = try CLI.run(["sample", path("m"), "-n", "10", "--style", "other", "-o", path("x.mid")])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.stderr.contains("--style other: \(path("m")) knows the styles funk, neworleans (no training file was other)"), r.stderr)
        let original = try OriginalModel.write(to: root.appendingPathComponent("original")).path
        r = try CLI.run(["sample", original, "-n", "10", "--style", "funk", "-o", path("x.mid")])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.stderr.contains("--style needs a model with a style input (trained with --styles)"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("x.mid")))
        // The shipped model has one (the Groove drummers and file names' styles, drummer8-funk …):
        // --style funk plays one of its funk styles.
        r = try CLI.run(["sample", CLI.repoRoot.appendingPathComponent("models/groove").path, "-n", "10", "--style", "funk",
                         "--seed", "1", "-o", path("x.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertNotNil((r.stdout + r.stderr).range(of: #"style drummer[0-9]+-funk \(drawn for funk\)"#, options: .regularExpression),
                        r.stdout + r.stderr)
        try FileManager.default.removeItem(atPath: path("x.mid"))

        // With a primer: the style the model finds likeliest for it, unless --style.
        let primer = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session1/102_funk_95_beat_4-4.mid").path
        r = try CLI.run(["sample", path("m"), "-n", "30", "--count", "2", "--seed", "5", "--primer", primer, "-o", path("p.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        let primed = r.stdout.split(separator: "\n").filter { $0.hasPrefix("wrote ") }
        XCTAssertEqual(primed.count, 2)
        XCTAssertTrue(primed.allSatisfy { $0.contains(" (likeliest for the primer)") }, r.stdout)
        XCTAssertEqual(Set(primed.map { $0.contains("style funk") }).count, 1, "one style for every file: the primer's")
        // A primer that opens with bars outside 4/4: the likeliest style for the bars read,
        // as for those bars alone (it was drawn).
        func rock(from start: Int) -> [(Int, [UInt8])] {
            (0..<32).flatMap { e -> [(Int, [UInt8])] in
                let t = start + e * 240, notes: [UInt8] = e % 4 == 0 ? [42, e % 8 == 0 ? 36 : 38] : [42]
                return notes.flatMap { n in [(t, [0x99, n, 100]), (t + 60, [0x89, n, 0])] }
            }
        }
        let waltz = (0..<6).flatMap { q in [(q * 480, [0x99, 36, 90] as [UInt8]), (q * 480 + 60, [0x89, 36, 0])] }
        try TinySMF.bytes(events: [(0, [0xFF, 0x58, 0x04, 3, 2, 24, 8]), (2880, [0xFF, 0x58, 0x04, 4, 2, 24, 8])]
                          + waltz + rock(from: 2880)).write(to: URL(fileURLWithPath: path("mixed.mid")))
        try TinySMF.bytes(events: rock(from: 0)).write(to: URL(fileURLWithPath: path("rock.mid")))
        var primedStyles: [String] = []
        for name in ["mixed", "rock"] {
            r = try CLI.run(["sample", path("m"), "-n", "10", "--seed", "5", "--primer", path(name + ".mid"), "--primer-bars", "4",
                             "-o", path(name + "-out.mid")])
            XCTAssertEqual(r.status, 0, r.stderr)
            let style = r.stdout.range(of: #"style [a-z]+ \(likeliest for the primer\)"#, options: .regularExpression)
            primedStyles.append(try XCTUnwrap(style.map { String(r.stdout[$0]) }, name + ": " + r.stdout))
        }
        XCTAssertEqual(primedStyles[0], primedStyles[1])
        r = try CLI.run(["sample", path("m"), "-n", "30", "--seed", "5", "--primer", primer, "--style", "neworleans", "-o", path("p2.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains(", style neworleans\n") || r.stdout.hasSuffix(", style neworleans"), r.stdout)

        // humanize: the likeliest style for the beat, or the one given.
        let beat = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session1/102_funk_95_beat_4-4.mid").path
        r = try CLI.run(["humanize", beat, "--model", path("m"), "--seed", "3", "-o", path("h.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("(likeliest for the beat)"), r.stdout)
        r = try CLI.run(["humanize", beat, "--model", path("m"), "--seed", "3", "--style", "funk", "-o", path("h2.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains(", style funk, "), r.stdout)
        r = try CLI.run(["humanize", beat, "--model", path("m"), "--style", "polka", "-o", path("h3.mid")])
        XCTAssertEqual(r.status, 64)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("h3.mid")))

        // The model card lists the styles.
        r = try CLI.run(["report", "--model", path("m"), "-o", path("card.html")])
        XCTAssertEqual(r.status, 0, r.stderr)
        let card = try String(contentsOfFile: path("card.html"), encoding: .utf8)
        XCTAssertTrue(card.contains("3, read from the files&#39; paths (groove-names): funk ")
                      || card.contains("3, read from the files' paths (groove-names): funk "), card)
        // A grid model's vocabulary is named as its dataset's, which its groups do not read.
        XCTAssertTrue(card.contains("The dataset&#39;s vocabulary") || card.contains("The dataset's vocabulary"), card)
        XCTAssertTrue(card.contains("(the grid reads drum classes, not these)"), card)

        // Safetensors and back: model.json (its styles) byte for byte.
        r = try CLI.run(["export", path("m"), "--format", "safetensors", "-o", path("m.safetensors")])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(["import", path("m.safetensors"), "-o", path("back")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("back/model.json"))),
                       try Data(contentsOf: URL(fileURLWithPath: path("m/model.json"))))
    }

    /// A model of one style (ten funk files, "other" empty): the style the model finds likeliest
    /// for a beat is funk, never the "other" no training file had (humanize and a primer played it).
    func testTheLikeliestStyleIsATrainedOne() throws {
        let src = root.appendingPathComponent("funk-only")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        let beat = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session1/102_funk_95_beat_4-4.mid")
        for i in 0..<10 { try FileManager.default.copyItem(at: beat, to: src.appendingPathComponent("\(i)_funk_95_beat_4-4.mid")) }
        XCTAssertEqual(try CLI.run(["convert-midi", src.path, "-o", path("funk-data"), "--quantize", "30"]).status, 0)
        var r = try CLI.run(["train", "--styles", "groove-names", "--data", path("funk-data"), "--hidden", "8", "--unroll", "8",
                             "--batch-size", "2", "--steps", "2", "--checkpoint-dir", path("funk-ck"), "-o", path("funk")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("funk 100%, other 0%"), r.stdout)
        for seed in ["1", "2", "3"] {
            r = try CLI.run(["humanize", beat.path, "--model", path("funk"), "--seed", seed, "-o", path("h.mid")])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains(", style funk (likeliest for the beat)"), r.stdout)
            r = try CLI.run(["sample", path("funk"), "--primer", beat.path, "--bars", "1", "--seed", seed, "-o", path("p.mid")])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains(", style funk (likeliest for the primer)"), r.stdout)
        }
    }

    /// `--styles groove-drummer-names`: a style per drummer and file-name style ("drummer2-funk");
    /// `--style` given a part of the names draws among the styles that have it, and humanize
    /// takes the likeliest of them.
    func testDrummerStylesAndAPartOfTheirNames() throws {
        let src = root.appendingPathComponent("src-drummers")
        let fixtures = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session1")
        for (folder, name) in [("drummer1/s", "102_funk_95_beat_4-4.mid"), ("drummer2/s", "102_funk_95_beat_4-4.mid"),
                               ("drummer2/s", "100_neworleans-secondline_94_beat_4-4.mid")] {
            let dir = src.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for i in 0..<10 {
                try FileManager.default.copyItem(at: fixtures.appendingPathComponent(name),
                                                 to: dir.appendingPathComponent(name.replacingOccurrences(of: "10", with: "1\(i)", options: .anchored)))
            }
        }
        var r = try CLI.run(["convert-midi", src.path, "-o", path("data-drummers"), "--quantize", "30", "--onset-order", "note",
                             "--validation-fraction", "0"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(["train", "--recipe", "grid", "--styles", "groove-drummer-names", "--data", path("data-drummers"), "--hidden", "8",
                         "--unroll", "8", "--batch-size", "2", "--steps", "1", "--checkpoint-every", "1", "--eval-every", "1",
                         "--seed", "4", "--checkpoint-dir", path("ckpt-d")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("grid styles (groove-drummer-names, share of training steps): "), r.stdout)
        for name in ["drummer1-funk ", "drummer2-funk ", "drummer2-neworleans ", "other 0%"] {
            XCTAssertTrue(r.stdout.contains(name), "\(name): \(r.stdout)")
        }
        r = try CLI.run(["export", path("ckpt-d/ckpt-1.h5"), "-o", path("m-d")])
        XCTAssertEqual(r.status, 0, r.stderr)
        let model = path("m-d")
        // --style funk: each file draws one of the two funk styles, and says so.
        r = try CLI.run(["sample", model, "-n", "20", "--count", "8", "--seed", "21", "--style", "funk", "-o", path("f.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").filter { $0.hasPrefix("wrote ") }
        XCTAssertEqual(lines.count, 8)
        let drawn = lines.map { line in ["drummer1-funk", "drummer2-funk"].first { line.contains("style \($0) (drawn for funk)") } ?? "?" }
        XCTAssertFalse(drawn.contains("?"), r.stdout)
        XCTAssertEqual(Set(drawn).count, 2, "both funk styles drawn over 8 files: \(r.stdout)")
        // The whole name at a file's seed plays the file that drew it.
        for (k, style) in drawn.enumerated().prefix(3) {
            r = try CLI.run(["sample", model, "-n", "20", "--seed", "\(21 + k)", "--style", style, "-o", path("one.mid")])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("style \(style)") && !r.stdout.contains("(drawn"), r.stdout)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("one.mid"))),
                           try Data(contentsOf: URL(fileURLWithPath: path("f-\(k + 1).mid"))), "file \(k + 1), \(style)")
        }
        // --style drummer1 has one style: that one, as its whole name.
        r = try CLI.run(["sample", model, "-n", "20", "--seed", "7", "--style", "drummer1", "-o", path("d1.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("style drummer1-funk") && !r.stdout.contains("(drawn"), r.stdout)
        r = try CLI.run(["sample", model, "-n", "20", "--style", "drummer3", "-o", path("x.mid")])
        XCTAssertEqual(r.status, 64)
        XCTAssertTrue(r.stderr.contains("--style drummer3: \(model) knows the styles "), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("x.mid")))
        // humanize --style drummer2: the likeliest of drummer2's two styles.
        let beat = fixtures.appendingPathComponent("102_funk_95_beat_4-4.mid").path
        r = try CLI.run(["humanize", beat, "--model", model, "--seed", "3", "--style", "drummer2", "-o", path("h.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains(", style drummer2-funk (likeliest for the beat)")
                      || r.stdout.contains(", style drummer2-neworleans (likeliest for the beat)"), r.stdout)
    }

    /// A style input reads each file's style from its path: data whose files take other styles
    /// is other data, refused on resume; a checkpoint written before the fingerprint held the
    /// styles is checked by its styles' steps.
    func testResumeRefusesDataWhoseFilesTakeOtherStyles() throws {
        var r = try CLI.run(["train", "--recipe", "grid", "--styles", "groove-names", "--data", data.path, "--hidden", "8",
                             "--unroll", "8", "--batch-size", "2", "--steps", "2", "--checkpoint-every", "2", "--eval-every", "2",
                             "--checkpoint-dir", path("ckpt")])
        XCTAssertEqual(r.status, 0, r.stderr)
        // The same events, one funk file named as a New Orleans one.
        let moved = root.appendingPathComponent("moved")
        try FileManager.default.copyItem(at: data, to: moved)
        let manifestURL = moved.appendingPathComponent("manifest.json")
        var manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        var files = try XCTUnwrap(manifest["files"] as? [[String: Any]])
        let i = try XCTUnwrap(files.firstIndex { ($0["path"] as? String)?.contains("_funk_") == true })
        files[i]["path"] = "9_neworleans-secondline_95_beat_4-4.mid"
        manifest["files"] = files
        try JSONSerialization.data(withJSONObject: manifest).write(to: manifestURL)
        r = try CLI.run(["train", "--resume", path("ckpt/ckpt-2.h5"), "--data", moved.path, "--steps", "3"])
        XCTAssertEqual(r.status, 1, r.stdout)
        XCTAssertTrue(r.stderr.contains("\(moved.path): contents differ from the data \(path("ckpt/ckpt-2.h5")) was trained on"), r.stderr)

        // A checkpoint whose fingerprint leaves the styles out (as written before): its styles'
        // training steps are compared.
        var old = try Checkpoint.read(path: path("ckpt/ckpt-2.h5"))
        let groups = old.groups
        old.datasetFingerprint = try TrainingData.load(path: data.path).fingerprint(for: groups, styles: false)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("old"), withIntermediateDirectories: true)
        try old.write(to: path("old/ckpt-2.h5"))
        r = try CLI.run(["train", "--resume", path("old/ckpt-2.h5"), "--data", moved.path, "--steps", "3"])
        XCTAssertEqual(r.status, 1, r.stdout)
        XCTAssertTrue(r.stderr.contains("\(moved.path): its files' styles differ from the ones \(path("old/ckpt-2.h5")) was trained with (style \"funk\" had "), r.stderr)
        r = try CLI.run(["train", "--resume", path("old/ckpt-2.h5"), "--data", data.path, "--steps", "3"])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func testStylesNeedTheGridLayout() throws {
        let r = try CLI.run(["train", "--recipe", "original", "--data", data.path, "--styles", "folders", "--steps", "1",
                             "--checkpoint-dir", path("x")])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--styles needs "), r.stderr)
    }
}
