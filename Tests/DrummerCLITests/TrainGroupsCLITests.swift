// `drummer train`, `export` and `eval` with position and velocity groups, end to end on a
// dataset made by `convert-midi` from small MIDI files: the default groups, each group flag,
// a refused group change on resume, bitwise resume, --init-from the original 2017 model on a
// dataset with positions and velocities, and eval's per-group JSON.
import Foundation
import XCTest

final class TrainGroupsCLITests: XCTestCase {
    var root: URL!
    var data: URL!

    override func setUpWithError() throws {
        root = try CLI.temporaryDirectory("train-groups-cli")
        data = root.appendingPathComponent("data")
        let src = root.appendingPathComponent("midi")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        for (i, hits) in Self.songs.enumerated() {
            try TinySMF.drums(hits, meter: (4, 2)).write(to: src.appendingPathComponent("song\(i).mid"))
        }
        let r = try CLI.run(["convert-midi", src.path, "-o", data.path])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    /// Two songs of 8 bars of 4/4 at 480 PPQ: eighth-note hi-hats (accented on the beat), snare
    /// on 2 and 4 with a ghost note, bass drum on 1, 3 and the "&" of 3; velocities vary by bar.
    static let songs: [[(tick: Int, note: UInt8, velocity: UInt8)]] = (0..<2).map { song in
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for bar in 0..<8 {
            let o = bar * 1920, d = (bar + song) % 4
            for i in 0..<8 { hits.append((o + i * 240, 42, UInt8(i % 2 == 0 ? 88 + d : 60 + 2 * d))) }
            hits += [(o + 480, 38, UInt8(108 + d)), (o + 1320, 38, UInt8(28 + d)), (o + 1440, 38, UInt8(104 + d)),
                     (o, 36, UInt8(100 + d)), (o + 960, 36, UInt8(96 - d)), (o + 1200, 36, 80)]
        }
        return hits
    }

    /// Hits per velocity 1...127 (index v − 1) of the songs, counted here.
    static var histogram: [Int] {
        var h = [Int](repeating: 0, count: 127)
        for song in songs { for hit in song { h[Int(hit.velocity) - 1] += 1 } }
        return h
    }

    /// The dataset's vocabulary sizes, from its vocab.json.
    func vocabularySizes() throws -> (notes: Int, ticks: Int) {
        let v = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: data.appendingPathComponent("vocab.json"))) as? [String: Any])
        return (try XCTUnwrap(v["ix_to_note"] as? [Int]).count, try XCTUnwrap(v["ix_to_tick"] as? [Int]).count)
    }

    func train(_ dir: String, _ extra: [String], steps: Int = 2) throws -> CLIResult {
        try CLI.run(["train", "--recipe", "original", "--data", data.path, "--hidden", "8", "--unroll", "8", "--steps", "\(steps)",
                     "--checkpoint-every", "\(steps)", "--checkpoint-dir", root.appendingPathComponent(dir).path] + extra)
    }

    /// Exports `checkpoint` and returns model.json's "groups".
    func exportedGroups(_ checkpoint: String, to name: String) throws -> [String: Any] {
        let out = root.appendingPathComponent(name).path
        let e = try CLI.run(["export", checkpoint, "-o", out])
        XCTAssertEqual(e.status, 0, e.stderr)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/model.json"))) as? [String: Any])
        XCTAssertEqual(json["format_version"] as? Int, 2)
        return try XCTUnwrap(json["groups"] as? [String: Any])
    }

    /// Exports step 6 of runs `straight`, `resumed` and `other` (to m-RUN); checks that the
    /// straight run and its resumed twin wrote byte-identical Wx.bin and Wy.bin and that
    /// `other`'s differ (`differs`: the failure message when they do not); returns the
    /// straight and the other model's model.json metadata.
    func compareStep6(straight: String, resumed: String, other: String, differs: String) throws
        -> (straight: [String: Any], other: [String: Any])
    {
        for run in [straight, resumed, other] {
            _ = try exportedGroups(root.appendingPathComponent(run + "/ckpt-6.h5").path, to: "m-" + run)
        }
        for f in ["Wx.bin", "Wy.bin"] {
            let x = try Data(contentsOf: root.appendingPathComponent("m-\(straight)/" + f))
            XCTAssertTrue(x == (try Data(contentsOf: root.appendingPathComponent("m-\(resumed)/" + f))),
                          "\(f) of the resumed run differs from the straight run's")
            XCTAssertFalse(x == (try Data(contentsOf: root.appendingPathComponent("m-\(other)/" + f))), "\(f): \(differs)")
        }
        func metadata(_ run: String) throws -> [String: Any] {
            let json = try XCTUnwrap(JSONSerialization.jsonObject(
                with: Data(contentsOf: root.appendingPathComponent("m-\(run)/model.json"))) as? [String: Any])
            return try XCTUnwrap(json["metadata"] as? [String: Any])
        }
        return (try metadata(straight), try metadata(other))
    }

    func names(_ groups: [String: Any], _ key: String) -> [String] {
        (groups[key] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }

    func testANewRunOnAConvertedDatasetHasPositionAndVelocityGroups() throws {
        let (n, k) = try vocabularySizes()
        let t = try train("c", [])
        XCTAssertEqual(t.status, 0, t.stderr)
        let groups = try exportedGroups(root.appendingPathComponent("c/ckpt-2.h5").path, to: "m")
        XCTAssertEqual(names(groups, "inputs"), ["note", "tick", "position", "velocity"])
        XCTAssertEqual(names(groups, "outputs"), ["note", "tick", "velocity"])
        // 4/4 bars of 1920 ticks in 64th-note slots (30 ticks at 480 PPQ).
        let position = try XCTUnwrap(groups["position"] as? [String: Any])
        XCTAssertEqual(position["encoding"] as? String, "onehot")
        XCTAssertEqual(position["slots"] as? Int, 64)
        XCTAssertEqual(position["ticks_per_slot"] as? Int, 30)
        XCTAssertEqual(position["ppq"] as? Int, 480)
        XCTAssertEqual(position["meter"] as? String, "4/4")
        // The velocity table: the songs' own counts; bins consecutive over their range, ≤ 16.
        let velocity = try XCTUnwrap(groups["velocity"] as? [String: Any])
        XCTAssertEqual(velocity["histogram"] as? [Int], Self.histogram)
        let bins = try XCTUnwrap(velocity["bins"] as? [[Int]])
        XCTAssertLessThanOrEqual(bins.count, 16)
        XCTAssertGreaterThan(bins.count, 4)
        XCTAssertEqual(bins.first?.first, Self.histogram.firstIndex { $0 > 0 }.map { $0 + 1 })
        XCTAssertEqual(bins.last?.last, Self.histogram.lastIndex { $0 > 0 }.map { $0 + 1 })
        for (a, b) in zip(bins, bins.dropFirst()) { XCTAssertEqual(b[0], a[1] + 1, "\(bins)") }
        XCTAssertTrue(t.stdout.contains("groups: inputs note \(n), tick \(k), position 64, velocity \(bins.count); "
            + "outputs note \(n), tick \(k), velocity \(bins.count)"), t.stdout)
    }

    func testGroupFlagsChooseTheGroups() throws {
        let (n, k) = try vocabularySizes()
        let cases: [([String], String)] = [
            (["--no-velocity"], "groups: inputs note \(n), tick \(k), position 64; outputs note \(n), tick \(k)\n"),
            (["--no-position", "--velocity-bins", "4"],
             "groups: inputs note \(n), tick \(k), velocity 4; outputs note \(n), tick \(k), velocity 4\n"),
            (["--layout", "original"], "groups: inputs note \(n), tick \(k); outputs note \(n), tick \(k)\n"),
            (["--no-position", "--no-velocity"], "groups: inputs note \(n), tick \(k); outputs note \(n), tick \(k)\n"),
            // 64 slots: slot numbers 0...63 in 6 bits, one group of 2 each, lowest bit first.
            (["--position-encoding", "binary", "--no-velocity"],
             "groups: inputs note \(n), tick \(k), position_bit0 2, position_bit1 2, position_bit2 2, position_bit3 2, "
                + "position_bit4 2, position_bit5 2; outputs note \(n), tick \(k)\n"),
        ]
        for (i, (flags, line)) in cases.enumerated() {
            let t = try train("c\(i)", flags, steps: 1)
            XCTAssertEqual(t.status, 0, "\(flags): \(t.stderr)")
            XCTAssertTrue(t.stdout.contains(line), "\(flags): \(t.stdout)")
        }
        // The checkpoint holds what the line said: binary position bits, no velocity.
        let groups = try exportedGroups(root.appendingPathComponent("c4/ckpt-1.h5").path, to: "binary")
        XCTAssertEqual(names(groups, "inputs"), ["note", "tick"] + (0..<6).map { "position_bit\($0)" })
        XCTAssertEqual((groups["position"] as? [String: Any])?["encoding"] as? String, "binary")
        XCTAssertNil(groups["velocity"])
        let original = try exportedGroups(root.appendingPathComponent("c2/ckpt-1.h5").path, to: "original")
        XCTAssertEqual(Set(original.keys), ["inputs", "outputs"])

        // Contradictory flags are usage errors (exit 64), before anything is read.
        let refused: [([String], String)] = [
            (["--layout", "original", "--position"], "--layout original has no position, lookback or velocity group: drop --position/--lookback/--velocity"),
            (["--no-position", "--position-encoding", "binary"], "--position-encoding needs the position group"),
            (["--no-velocity", "--velocity-bins", "4"], "--velocity-bins needs the velocity group"),
            (["--velocity-bins", "0"], "--velocity-bins must be between 1 and 127, got 0"),
        ]
        for (flags, message) in refused {
            let r = try train("refused", flags, steps: 1)
            XCTAssertEqual(r.status, 64, "\(flags): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(flags): \(r.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("refused").path))
    }

    /// --lookback end to end: the groups line, model.json, a resumed run that is bitwise the
    /// straight one, a refused change on resume, sample and eval of the exported model, and the
    /// usage error without the position group.
    func testLookbackGroupEndToEnd() throws {
        let (n, k) = try vocabularySizes()
        let flags = ["--lookback", "--batch-size", "2", "--optimizer", "rmsprop"]
        let a = try train("la", flags, steps: 6)
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertTrue(a.stdout.contains("groups: inputs note \(n), tick \(k), position 64, lookback_note \(n + 1), "
            + "lookback_tick \(k + 1), velocity "), a.stdout)
        let b = try train("lb", flags, steps: 3)
        XCTAssertEqual(b.status, 0, b.stderr)
        let ckpt = root.appendingPathComponent("lb/ckpt-3.h5").path
        let refused = try CLI.run(["train", "--resume", ckpt, "--steps", "6", "--no-lookback"])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--no-lookback differs from the checkpoint's a lookback group"), refused.stderr)
        let resumed = try CLI.run(["train", "--resume", ckpt, "--steps", "6"])
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        let ga = try exportedGroups(root.appendingPathComponent("la/ckpt-6.h5").path, to: "lma")
        _ = try exportedGroups(root.appendingPathComponent("lb/ckpt-6.h5").path, to: "lmb")
        XCTAssertEqual(names(ga, "inputs"), ["note", "tick", "position", "lookback_note", "lookback_tick", "velocity"])
        XCTAssertEqual(ga["lookback"] as? [String: Int], ["tolerance_ticks": 60, "window": 512])
        for f in ["Wx.bin", "Wy.bin"] {
            let x = try Data(contentsOf: root.appendingPathComponent("lma/" + f)), y = try Data(contentsOf: root.appendingPathComponent("lmb/" + f))
            XCTAssertTrue(x == y, "\(f) of the resumed lookback run differs from the straight run's")
        }
        // The exported model samples exactly the hits asked for and evaluates on the dataset.
        let out = root.appendingPathComponent("g.mid").path
        let s = try CLI.run(["sample", root.appendingPathComponent("lma").path, "-n", "300", "--seed", "2", "--json", "-o", out])
        XCTAssertEqual(s.status, 0, s.stderr)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(s.stdout.utf8)) as? [String: Any])
        let files = try XCTUnwrap(summary["files"] as? [[String: Any]])
        XCTAssertEqual((files.first?["events"] as? [[Int]])?.count, 300, s.stdout)
        let e = try CLI.run(["eval", root.appendingPathComponent("lma").path, "--data", data.path, "--json"])
        XCTAssertEqual(e.status, 0, e.stderr)
        // Without the position group there is nothing to look back along.
        let usage = try train("lnone", ["--no-position", "--lookback"], steps: 1)
        XCTAssertEqual(usage.status, 64, usage.stderr)
        XCTAssertTrue(usage.stderr.contains("--lookback needs the position group"), usage.stderr)
    }

    /// --input-noise: announced, recorded, replayed exactly on resume, and it changes the
    /// training (the same run without it ends with other weights); bad values are named.
    func testInputNoiseEndToEnd() throws {
        let flags = ["--lookback", "--batch-size", "2", "--optimizer", "rmsprop", "--input-noise", "0.3"]
        let a = try train("na", flags, steps: 6)
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertTrue(a.stdout.contains("input noise: 0.3 on note, velocity (training inputs only)"), a.stdout)
        let b = try train("nb", flags, steps: 3)
        XCTAssertEqual(b.status, 0, b.stderr)
        let resumed = try CLI.run(["train", "--resume", root.appendingPathComponent("nb/ckpt-3.h5").path, "--steps", "6"])
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        XCTAssertTrue(resumed.stdout.contains("input noise: 0.3 on note, velocity"), resumed.stdout)
        let clean = try train("nc", Array(flags.dropLast(2)), steps: 6)
        XCTAssertEqual(clean.status, 0, clean.stderr)
        let (metadata, cleanMetadata) = try compareStep6(straight: "na", resumed: "nb", other: "nc", differs: "the noise changed nothing")
        XCTAssertEqual(metadata["input_noise"] as? String, "0.3")
        XCTAssertEqual(metadata["input_noise_groups"] as? String, "note,velocity")
        XCTAssertNil(cleanMetadata["input_noise"])
        // Another group list on resume is taken (a training setting, like --lr).
        let regroup = try CLI.run(["train", "--resume", root.appendingPathComponent("nb/ckpt-6.h5").path, "--steps", "7",
                                   "--input-noise-groups", "tick,note"])
        XCTAssertEqual(regroup.status, 0, regroup.stderr)
        XCTAssertTrue(regroup.stdout.contains("input noise: 0.3 on tick, note (training inputs only)"), regroup.stdout)
        // Bad values: out of range (usage), a group the model lacks (named, nothing written).
        for (extra, status, message) in [
            (["--input-noise", "1"], Int32(64), "--input-noise must be at least 0 and below 1, got 1.0"),
            (["--input-noise-groups", "note,,tick"], 64, "--input-noise-groups must name one or more input groups"),
            (["--layout", "original", "--input-noise-groups", "velocity"], 64,
             "--input-noise-groups names \"velocity\", but --layout original has only note and tick inputs"),
            (["--no-velocity", "--input-noise", "0.1", "--input-noise-groups", "note,velocity"], 1,
             "--input-noise-groups names \"velocity\", which this model does not have (its inputs: note, tick, position)"),
        ] {
            let r = try train("nbad", extra, steps: 1)
            XCTAssertEqual(r.status, status, "\(extra): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(extra): \(r.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("nbad/ckpt-1.h5").path))
        }
    }

    /// --input-noise-draw model: announced, recorded, resumed bit for bit, different from the
    /// uniform draws at the same places, switchable on resume; a group the model cannot
    /// predict and an unknown draw are refused.
    func testModelDrawnInputNoiseEndToEnd() throws {
        let flags = ["--lookback", "--batch-size", "2", "--optimizer", "rmsprop", "--input-noise", "0.3",
                     "--input-noise-groups", "note,tick,velocity"]
        let a = try train("ma", flags + ["--input-noise-draw", "model"], steps: 6)
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertTrue(a.stdout.contains("input noise: 0.3 on note, tick, velocity, drawn from the model's predictions (training inputs only)"), a.stdout)
        let b = try train("mb", flags + ["--input-noise-draw", "model"], steps: 3)
        XCTAssertEqual(b.status, 0, b.stderr)
        let resumed = try CLI.run(["train", "--resume", root.appendingPathComponent("mb/ckpt-3.h5").path, "--steps", "6"])
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        XCTAssertTrue(resumed.stdout.contains("drawn from the model's predictions"), "the draw is stored: \(resumed.stdout)")
        let uniform = try train("mu", flags, steps: 6)
        XCTAssertEqual(uniform.status, 0, uniform.stderr)
        let (metadata, uniformMetadata) = try compareStep6(straight: "ma", resumed: "mb", other: "mu",
                                                           differs: "model draws gave what uniform draws give")
        XCTAssertEqual(metadata["input_noise_draw"] as? String, "model")
        XCTAssertEqual(metadata["input_noise_groups"] as? String, "note,tick,velocity")
        XCTAssertEqual(uniformMetadata["input_noise_draw"] as? String, "uniform")
        // The draw may change on resume, like the rate.
        let switched = try CLI.run(["train", "--resume", root.appendingPathComponent("mb/ckpt-6.h5").path, "--steps", "7",
                                    "--input-noise-draw", "uniform"])
        XCTAssertEqual(switched.status, 0, switched.stderr)
        XCTAssertTrue(switched.stdout.contains("input noise: 0.3 on note, tick, velocity (training inputs only)"), switched.stdout)
        for (extra, status, message) in [
            (["--input-noise-draw", "teacher"], Int32(64), "The value 'teacher' is invalid for '--input-noise-draw <input-noise-draw>'"),
            (["--input-noise", "0.1", "--input-noise-groups", "note,lookback_note", "--input-noise-draw", "model"], 1,
             "--input-noise-groups names \"lookback_note\", which the model does not predict, so --input-noise-draw model cannot draw it (it predicts: note, tick, velocity)"),
        ] {
            let r = try train("mbad", ["--lookback"] + extra, steps: 1)
            XCTAssertEqual(r.status, status, "\(extra): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(extra): \(r.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("mbad/ckpt-1.h5").path))
        }
    }

    /// choose-step: one line per checkpoint with the figures `drummer sample` + `drummer stats`
    /// give for the same files, the rule's verdict, and clear errors.
    func testChooseStepMeasuresEachCheckpointAsSampleAndStatsDo() throws {
        let t = try CLI.run(["train", "--recipe", "original", "--data", data.path, "--hidden", "8", "--unroll", "8", "--steps", "3",
                             "--checkpoint-every", "1", "--keep", "10", "--checkpoint-dir", root.appendingPathComponent("cs").path])
        XCTAssertEqual(t.status, 0, t.stderr)
        let dir = root.appendingPathComponent("cs").path
        let out = root.appendingPathComponent("chosen").path
        let r = try CLI.run(["choose-step", dir, "--reference", data.path, "--from", "2", "--count", "3", "-n", "40",
                             "--seed", "7", "--export", out])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "choose-step: 2 checkpoints of \(dir), 3 files × 40 hits each (seeds 7…9), against \(data.path)")
        XCTAssertEqual(lines.dropFirst(2).first,
                       "step      periodicity  note JS  delta JS  velocity JS    grid  accent r  similarity  patterns  fill  hits/bar  velocity  margin  rule")
        let rows = lines.filter { $0.hasPrefix("   2 ") || $0.hasPrefix("   3 ") }
        XCTAssertEqual(rows.count, 2, r.stdout)
        // A model trained 3 steps plays nothing like the data: nothing qualifies, nothing is exported.
        XCTAssertEqual(r.status, 1, r.stdout + r.stderr)
        XCTAssertTrue(r.stderr.contains("error: no checkpoint meets the rule; nothing chosen, nothing exported"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))

        // Step 3's figures are those of the files `drummer sample` writes, measured by `drummer stats`.
        let model = root.appendingPathComponent("m3").path
        XCTAssertEqual(try CLI.run(["export", dir + "/ckpt-3.h5", "-o", model]).status, 0)
        let sampled = root.appendingPathComponent("s3/g.mid").path
        let s = try CLI.run(["sample", model, "-n", "40", "--count", "3", "--seed", "7", "-o", sampled])
        XCTAssertEqual(s.status, 0, s.stderr)
        let files = (1...3).map { root.appendingPathComponent("s3/g-\($0).mid").path }
        let st = try CLI.run(["stats"] + files + ["--reference", data.path, "--expected-hits", "120", "--json"])
        XCTAssertEqual(st.status, 0, st.stderr)
        let j = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(st.stdout.utf8)) as? [String: Any])
        func ratio(_ key: String) -> Double? { (j[key] as? [String: Any])?["ratio"] as? Double }
        func percent(_ v: Double?) -> String { v.map { String(format: "%.1f%%", $0 * 100) } ?? "n/a" }
        func bits(_ v: Double?) -> String { v.map { String(format: "%.4f", $0) } ?? "n/a" }
        let accent = (j["accent_profile"] as? [String: Any])?["correlation"] as? Double
        let expected = [percent(ratio("bar_periodicity")), bits(j["note_js_bits"] as? Double), bits(j["delta_js_bits"] as? Double),
                        bits(j["velocity_js_bits"] as? Double), percent(ratio("grid16_share")),
                        accent.map { String(format: "%.3f", $0) } ?? "n/a"]
        // The bar-structure columns: bar similarity (the mean over lags 1, 2, 4, 8) and patterns per
        // 16 bars, as shares of the reference's (n/a: 40 hits make no 16-bar window).
        let structure = try XCTUnwrap(j["bar_structure"] as? [String: Any])
        let lags = [1, 2, 4, 8].compactMap { ((structure["bar_similarity_lag\($0)"] as? [String: Any])?["ratio"] as? Double) }
        let similarity = lags.count == 4 ? percent(lags.reduce(0, +) / 4) : "n/a"
        let patterns = percent((structure["patterns_per_16_bars"] as? [String: Any])?["ratio"] as? Double)
        // The fill's tom + crash bump as a share of the reference's (n/a: no 8-bar window).
        let fillRatio = structure["fill_tom_crash_ratio"] as? [String: Any]
        let fill = (fillRatio?["generated"] as? Double).flatMap { g in (fillRatio?["reference"] as? Double).map { r in
            String(format: "%.0f%%", (g - 1) / (r - 1) * 100) } } ?? "n/a"
        let hitsPerBar = percent((structure["hits_per_bar"] as? [String: Any])?["ratio"] as? Double)
        let velocity = percent((structure["velocity_mean"] as? [String: Any])?["ratio"] as? Double)
        let row = try XCTUnwrap(rows.last)
        XCTAssertEqual(Array(row.split(separator: " ").map(String.init).dropFirst().prefix(11)),
                       expected + [similarity, patterns, fill, hitsPerBar, velocity], row)
        XCTAssertEqual(row.split(separator: " ").map(String.init).dropFirst(12).first, "n/a",
                       "the margin needs every bar-structure and touch figure; 40 hits make no 16-bar window: n/a")

        // Errors: not a directory (usage), no checkpoint in the range (named, with what there is).
        let missing = try CLI.run(["choose-step", root.appendingPathComponent("nope").path, "--reference", data.path])
        XCTAssertEqual(missing.status, 64)
        XCTAssertTrue(missing.stderr.contains("nope is not a directory"), missing.stderr)
        let none = try CLI.run(["choose-step", dir, "--reference", data.path, "--from", "10"])
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stderr.contains("error: \(dir): no checkpoint (ckpt-STEP.h5) in the steps asked for (its checkpoints: 1, 2, 3)"), none.stderr)
        let backwards = try CLI.run(["choose-step", dir, "--reference", data.path, "--from", "3", "--to", "2"])
        XCTAssertEqual(backwards.status, 64)
        XCTAssertTrue(backwards.stderr.contains("--to (2) is before --from (3)"), backwards.stderr)
        let noReference = try CLI.run(["choose-step", dir, "--reference", root.appendingPathComponent("absent").path])
        XCTAssertEqual(noReference.status, 1)
        XCTAssertTrue(noReference.stderr.contains("absent"), noReference.stderr)
    }

    /// --position on a dataset without positions.npy names the missing file.
    func testPositionOnADatasetWithoutPositionsNamesTheFile() throws {
        try FileManager.default.removeItem(at: data.appendingPathComponent("positions.npy"))
        let r = try train("c", ["--position"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("\(data.path): the position group needs positions.npy, which this dataset lacks "
            + "(convert it again with this drummer, or train without --position)"), r.stderr)
        // Without the flag the run goes on without the group.
        let t = try train("c", [])
        XCTAssertEqual(t.status, 0, t.stderr)
        XCTAssertFalse(t.stdout.contains("position"), t.stdout)
    }

    func testResumeRefusesAChangedGroupFlag() throws {
        let t = try train("c", [])
        XCTAssertEqual(t.status, 0, t.stderr)
        let ckpt = root.appendingPathComponent("c/ckpt-2.h5").path
        let tail = "(\(ckpt)); a resumed run cannot change it: start a new run instead"
        let refused: [([String], String)] = [
            (["--no-velocity"], "--no-velocity differs from the checkpoint's a velocity group " + tail),
            (["--no-position"], "--no-position differs from the checkpoint's a position group " + tail),
            (["--layout", "original"], "--layout original differs from the checkpoint's groups note, tick, position, velocity " + tail),
            (["--position-encoding", "binary"], "--position-encoding binary differs from the checkpoint's position encoding onehot " + tail),
        ]
        for (flags, message) in refused {
            let r = try CLI.run(["train", "--resume", ckpt, "--steps", "4"] + flags)
            XCTAssertEqual(r.status, 1, "\(flags): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(flags): \(r.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("c/ckpt-4.h5").path))
        // The flags the checkpoint agrees with are accepted.
        let same = try CLI.run(["train", "--resume", ckpt, "--steps", "4", "--position", "--velocity", "--position-encoding", "onehot"])
        XCTAssertEqual(same.status, 0, same.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("c/ckpt-4.h5").path))
    }

    /// 8 steps straight and 4 + a resume to 8 give the same weights to the byte (compared through
    /// export, which writes the checkpoint's float32 weights as they are) and the same log.
    func testResumeWithGroupsIsBitwiseExact() throws {
        for (dir, steps) in [("a", 8), ("b", 4)] {
            let t = try train(dir, ["--position-encoding", "binary", "--batch-size", "2", "--optimizer", "rmsprop",
                                    "--eval-every", "2"], steps: steps)
            XCTAssertEqual(t.status, 0, t.stderr)
        }
        let r = try CLI.run(["train", "--resume", root.appendingPathComponent("b/ckpt-4.h5").path, "--steps", "8"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let a = try exportedGroups(root.appendingPathComponent("a/ckpt-8.h5").path, to: "ma")
        let b = try exportedGroups(root.appendingPathComponent("b/ckpt-8.h5").path, to: "mb")
        XCTAssertEqual(names(a, "inputs"), names(b, "inputs"))
        XCTAssertEqual(a["velocity"] as? [String: AnyHashable], b["velocity"] as? [String: AnyHashable])
        for f in ["Wx.bin", "Wy.bin"] {
            let x = try Data(contentsOf: root.appendingPathComponent("ma/" + f)), y = try Data(contentsOf: root.appendingPathComponent("mb/" + f))
            XCTAssertTrue(x == y, "\(f) of the resumed run differs from the straight run's")
        }
        XCTAssertEqual(try String(contentsOf: root.appendingPathComponent("a/train_log.csv"), encoding: .utf8),
                       try String(contentsOf: root.appendingPathComponent("b/train_log.csv"), encoding: .utf8))
    }

    /// --init-from the original 2017 model on a dataset with velocities.npy and positions.npy (its
    /// vocabulary as vocab.json): the original layout with no extra flag; Wx.bin and Wy.bin of a
    /// zero-step run export byte-identical to the original's.
    func testInitFromTheOriginalModelTrainsTheOriginalLayout() throws {
        let fixtures = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/rnn-drummer")
        guard FileManager.default.fileExists(atPath: fixtures.appendingPathComponent("Wx.bin").path) else {
            throw VendoredFixtureMissing()
        }
        let original = root.appendingPathComponent("original")
        try FileManager.default.createDirectory(at: original, withIntermediateDirectories: true)
        for (a, b) in [("Wx.bin", "Wx.bin"), ("Wy.bin", "Wy.bin"), ("vocab.json", "model.json")] {
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent(a), to: original.appendingPathComponent(b))
        }
        let vocab = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: fixtures.appendingPathComponent("vocab.json"))) as? [String: Any])
        let vocabJSON = String(decoding: try JSONSerialization.data(withJSONObject: ["ix_to_note": vocab["ix_to_note"] ?? [], "ix_to_tick": vocab["ix_to_tick"] ?? []]), as: UTF8.self)
        let groove = root.appendingPathComponent("groove")
        let count = 64
        try TestDataset.write(groove, pairs: (0..<count).map { (Int32($0 % 17), Int32(($0 * 5) % 209)) }, vocabJSON: vocabJSON)
        try TestDataset.writeInt32((0..<count).map { Int32(40 + $0 % 80) }, shape: [count], to: groove.appendingPathComponent("velocities.npy"))
        try TestDataset.writeInt32((0..<count).flatMap { [Int32(($0 % 8) * 240), 1920] }, shape: [count, 2],
                                   to: groove.appendingPathComponent("positions.npy"))
        // The same dataset without --init-from would train position and velocity groups.
        let plain = try CLI.run(["train", "--recipe", "original", "--data", groove.path, "--hidden", "4", "--unroll", "8", "--steps", "0",
                                 "--checkpoint-dir", root.appendingPathComponent("plain").path])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertTrue(plain.stdout.contains("groups: inputs note 17, tick 209, position 64, velocity"), plain.stdout)

        let ck = root.appendingPathComponent("ck").path
        let t = try CLI.run(["train", "--recipe", "original", "--data", groove.path, "--init-from", original.path, "--steps", "0", "--unroll", "8",
                             "--checkpoint-dir", ck])
        XCTAssertEqual(t.status, 0, t.stderr)
        XCTAssertTrue(t.stdout.contains("groups: inputs note 17, tick 209; outputs note 17, tick 209\n"), t.stdout)
        let groups = try exportedGroups(ck + "/ckpt-0.h5", to: "exported")
        XCTAssertEqual(Set(groups.keys), ["inputs", "outputs"])
        for f in ["Wx.bin", "Wy.bin"] {
            let exported = try Data(contentsOf: root.appendingPathComponent("exported/" + f))
            XCTAssertTrue(exported == (try Data(contentsOf: fixtures.appendingPathComponent(f))), "\(f) differs from the original")
        }
        // Asking the original model for a group it lacks is refused naming the model.
        let r = try CLI.run(["train", "--recipe", "original", "--data", groove.path, "--init-from", original.path, "--steps", "0", "--unroll", "8",
                             "--checkpoint-dir", root.appendingPathComponent("ck2").path, "--velocity"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("--velocity differs from the --init-from model \(original.path), which has no velocity group"), r.stderr)
    }

    /// `eval --data FILE.mid --quantize T` reads the file as `convert-midi --quantize T` would:
    /// the same figures as the one-file dataset; without it, off-grid deltas are not in a
    /// quantized model's vocabulary and the error says which option reads it right.
    func testEvalOfAMIDIFileWithTheModelsQuantize() throws {
        let src = root.appendingPathComponent("late")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        // The songs played a little late and early (±7 ticks): on the grid only after --quantize 60.
        let song = Self.songs[0].enumerated().map { (i, h) in (tick: h.tick + (i % 3 == 0 ? 7 : i % 3 == 1 ? -5 : 0) + 7, h.note, h.velocity) }
        let file = src.appendingPathComponent("late.mid")
        try TinySMF.drums(song.map { ($0.tick, $0.1, $0.2) }, meter: (4, 2)).write(to: file)
        let quantized = root.appendingPathComponent("q").path
        XCTAssertEqual(try CLI.run(["convert-midi", src.path, "-o", quantized, "--quantize", "60"]).status, 0)
        let t = try CLI.run(["train", "--recipe", "original", "--data", quantized, "--hidden", "8", "--unroll", "8", "--steps", "2",
                             "--checkpoint-every", "2", "--checkpoint-dir", root.appendingPathComponent("qc").path])
        XCTAssertEqual(t.status, 0, t.stderr)
        let ckpt = root.appendingPathComponent("qc/ckpt-2.h5").path
        let fromDataset = try CLI.run(["eval", ckpt, "--data", quantized, "--json"])
        let fromFile = try CLI.run(["eval", ckpt, "--data", file.path, "--quantize", "60", "--json"])
        XCTAssertEqual(fromFile.status, 0, fromFile.stderr)
        XCTAssertEqual(fromFile.stdout, fromDataset.stdout)
        let unquantized = try CLI.run(["eval", ckpt, "--data", file.path])
        XCTAssertEqual(unquantized.status, 1)
        XCTAssertTrue(unquantized.stderr.contains("\(file.path): tick values"), unquantized.stderr)
        XCTAssertTrue(unquantized.stderr.contains("(read it with the model's dataset settings: --quantize, --ppq)"), unquantized.stderr)
        let onDataset = try CLI.run(["eval", ckpt, "--data", quantized, "--quantize", "60"])
        XCTAssertEqual(onDataset.status, 64)
        XCTAssertTrue(onDataset.stderr.contains("--ppq and --quantize apply to a MIDI file"), onDataset.stderr)
    }

    func testEvalJSONHasPerGroupKeys() throws {
        let t = try train("c", ["--eval-every", "2"])
        XCTAssertEqual(t.status, 0, t.stderr)
        let ckpt = root.appendingPathComponent("c/ckpt-2.h5").path
        let r = try CLI.run(["eval", ckpt, "--data", data.path, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(Set(obj.keys), ["events", "loss", "accuracy", "accuracy_note", "accuracy_tick", "loss_note", "loss_tick",
                                       "loss_velocity", "accuracy_velocity", "loss_all"])
        func value(_ key: String) -> Double { obj[key] as? Double ?? .nan }
        XCTAssertEqual(obj["events"] as? Int, Self.songs.map(\.count).reduce(0, +) - 1)
        XCTAssertEqual(value("loss"), value("loss_note") + value("loss_tick"), accuracy: 1e-9)
        XCTAssertEqual(value("loss_all"), value("loss") + value("loss_velocity"), accuracy: 1e-9)
        XCTAssertGreaterThan(value("loss_velocity"), 0)
        XCTAssertTrue((0...1).contains(value("accuracy_velocity")))
        // train_log.csv's evaluation at step 2 holds the same figures (6 decimals).
        let log = try String(contentsOf: root.appendingPathComponent("c/train_log.csv"), encoding: .utf8)
        let header = log.split(separator: "\n")[0].split(separator: ",").map(String.init)
        let row = try XCTUnwrap(log.split(separator: "\n").last).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        func logged(_ name: String) -> Double { header.firstIndex(of: name).flatMap { Double(row[$0]) } ?? .nan }
        XCTAssertEqual(value("loss"), logged("train_loss"), accuracy: 1e-6)
        XCTAssertEqual(value("loss_velocity"), logged("train_loss_velocity"), accuracy: 1e-6)
        XCTAssertEqual(value("accuracy_velocity"), logged("train_accuracy_velocity"), accuracy: 1e-6)
        // The exported model evaluates the same; the plain report shows the velocity figures.
        let model = root.appendingPathComponent("m").path
        XCTAssertEqual(try CLI.run(["export", ckpt, "-o", model]).status, 0)
        let fromModel = try CLI.run(["eval", model, "--data", data.path, "--json"])
        XCTAssertEqual(fromModel.stdout, r.stdout)
        let plain = try CLI.run(["eval", model, "--data", data.path])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertTrue(plain.stdout.contains(String(format: "loss_velocity %.6f\n", value("loss_velocity"))), plain.stdout)
        XCTAssertTrue(plain.stdout.contains(String(format: "accuracy_velocity %.4f\n", value("accuracy_velocity"))), plain.stdout)

        // An original-layout model on the same data: no velocity keys at all.
        let o = try train("o", ["--layout", "original"])
        XCTAssertEqual(o.status, 0, o.stderr)
        let e = try CLI.run(["eval", root.appendingPathComponent("o/ckpt-2.h5").path, "--data", data.path, "--json"])
        XCTAssertEqual(e.status, 0, e.stderr)
        let plainObj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(e.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(Set(plainObj.keys), ["events", "loss", "accuracy", "accuracy_note", "accuracy_tick", "loss_note", "loss_tick", "loss_all"])
        XCTAssertEqual(plainObj["loss_all"] as? Double ?? .nan, plainObj["loss"] as? Double ?? .nan, accuracy: 1e-9)
        let text = try CLI.run(["eval", root.appendingPathComponent("o/ckpt-2.h5").path, "--data", data.path])
        XCTAssertFalse(text.stdout.contains("velocity"), text.stdout)
    }
}
