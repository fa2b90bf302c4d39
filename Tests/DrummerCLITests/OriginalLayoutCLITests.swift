// The 2017 layout (`drummer train --recipe original`: note and tick) end to end on a dataset
// made by `convert-midi` from small MIDI files: choose-step's figures, bitwise resume, eval of a
// MIDI file at the model's quantization, and eval's JSON on a dataset with velocities.
import Foundation
import XCTest

final class OriginalLayoutCLITests: XCTestCase {
    var root: URL!
    /// convert-midi's output (with velocities.npy and positions.npy).
    var data: URL!
    /// The same without velocities.npy and positions.npy: what the 2017 layout reads.
    var noteAndTick: URL!

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
        noteAndTick = try Self.noteAndTickCopy(of: data, to: root.appendingPathComponent("note-tick"))
    }

    /// A copy of dataset `dir` without velocities.npy and positions.npy (its validation split's
    /// too), so that `--recipe original` trains note and tick alone whatever the dataset carries.
    static func noteAndTickCopy(of dir: URL, to copy: URL) throws -> URL {
        try FileManager.default.copyItem(at: dir, to: copy)
        for split in ["", "validation/"] {
            for name in ["velocities.npy", "positions.npy"] {
                try? FileManager.default.removeItem(at: copy.appendingPathComponent(split + name))
            }
        }
        return copy
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

    func train(_ dir: String, _ extra: [String], steps: Int = 2) throws -> CLIResult {
        try CLI.run(["train", "--recipe", "original", "--data", noteAndTick.path, "--hidden", "8", "--unroll", "8", "--steps", "\(steps)",
                     "--checkpoint-every", "\(steps)", "--checkpoint-dir", root.appendingPathComponent(dir).path] + extra)
    }

    /// choose-step: one line per checkpoint with the figures `drummer sample` + `drummer stats`
    /// give for the same files, the rule's verdict, and clear errors.
    func testChooseStepMeasuresEachCheckpointAsSampleAndStatsDo() throws {
        let t = try train("cs", ["--checkpoint-every", "1", "--keep", "10"], steps: 3)
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
        // Every row has the header's 14 columns apart, however wide a value ("n/a-1143%" ran a
        // fill bump as wide as its column into the patterns before it).
        for row in rows { XCTAssertEqual(row.split(separator: " ").count, 14, row) }
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

    /// A damaged checkpoint (the last one, cut in half) stops choose-step before the others
    /// are sampled and measured (minutes each), with an error naming it.
    func testChooseStepRefusesADamagedCheckpointBeforeMeasuringAny() throws {
        let t = try train("cut", ["--checkpoint-every", "1", "--keep", "10"], steps: 3)
        XCTAssertEqual(t.status, 0, t.stderr)
        let dir = root.appendingPathComponent("cut").path, last = dir + "/ckpt-3.h5"
        let whole = try Data(contentsOf: URL(fileURLWithPath: last))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: last))
        let r = try CLI.run(["choose-step", dir, "--reference", data.path, "--count", "2", "-n", "40"])
        XCTAssertEqual(r.status, 1, r.stdout + r.stderr)
        XCTAssertEqual(r.stdout, "", "no checkpoint measured")
        XCTAssertTrue(r.stderr.hasPrefix("error: \(last): "), r.stderr)
    }

    /// 8 steps straight and 4 + a resume to 8 give the same weights to the byte (compared through
    /// export, which writes the checkpoint's float32 weights as they are) and the same log.
    func testResumeIsBitwiseExact() throws {
        for (dir, steps) in [("a", 8), ("b", 4)] {
            let t = try train(dir, ["--batch-size", "2", "--optimizer", "rmsprop", "--eval-every", "2"], steps: steps)
            XCTAssertEqual(t.status, 0, t.stderr)
        }
        let r = try CLI.run(["train", "--resume", root.appendingPathComponent("b/ckpt-4.h5").path, "--steps", "8"])
        XCTAssertEqual(r.status, 0, r.stderr)
        for (run, model) in [("a", "ma"), ("b", "mb")] {
            let e = try CLI.run(["export", root.appendingPathComponent("\(run)/ckpt-8.h5").path, "-o", root.appendingPathComponent(model).path])
            XCTAssertEqual(e.status, 0, e.stderr)
        }
        for f in ["Wx.bin", "Wy.bin"] {
            let x = try Data(contentsOf: root.appendingPathComponent("ma/" + f)), y = try Data(contentsOf: root.appendingPathComponent("mb/" + f))
            XCTAssertTrue(x == y, "\(f) of the resumed run differs from the straight run's")
        }
        XCTAssertEqual(try String(contentsOf: root.appendingPathComponent("a/train_log.csv"), encoding: .utf8),
                       try String(contentsOf: root.appendingPathComponent("b/train_log.csv"), encoding: .utf8))
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
        let quantizedNoteAndTick = try Self.noteAndTickCopy(of: URL(fileURLWithPath: quantized), to: root.appendingPathComponent("q-note-tick")).path
        let t = try CLI.run(["train", "--recipe", "original", "--data", quantizedNoteAndTick, "--hidden", "8", "--unroll", "8", "--steps", "2",
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
        XCTAssertTrue(unquantized.stderr.contains("(read it with the model's dataset settings: eval's and encode's --quantize and --ppq)"),
                      unquantized.stderr)
        // encode reads a MIDI file as eval does: with --quantize its rows are the dataset's (it had no such option).
        let rowsOfFile = root.appendingPathComponent("file.npy").path, rowsOfDataset = root.appendingPathComponent("dataset.npy").path
        let encodedFile = try CLI.run(["encode", ckpt, "--data", file.path, "--quantize", "60", "-o", rowsOfFile])
        XCTAssertEqual(encodedFile.status, 0, encodedFile.stderr)
        XCTAssertTrue(encodedFile.stdout.contains(" rows × 2 input groups (note, tick)"), encodedFile.stdout)
        XCTAssertEqual(try CLI.run(["encode", ckpt, "--data", quantized, "-o", rowsOfDataset]).status, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: rowsOfFile)), try Data(contentsOf: URL(fileURLWithPath: rowsOfDataset)))
        // humanize names the model it cannot use (its error named none).
        let human = try CLI.run(["humanize", file.path, "--model", ckpt, "-o", root.appendingPathComponent("h.mid").path])
        XCTAssertEqual(human.status, 1, human.stderr)
        XCTAssertEqual(human.stderr, "error: \(ckpt): the model cannot humanize: a model of the 2017 layout has no velocity or timing "
                       + "to draw (a grid model does)\n")
        // A checkpoint directory holds many models: eval and encode ask for one of them by name.
        for args in [["eval", root.appendingPathComponent("qc").path, "--data", quantized],
                     ["encode", root.appendingPathComponent("qc").path, "--data", quantized, "-o", root.appendingPathComponent("x.npy").path]] {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertEqual(r.stderr, "error: \(root.appendingPathComponent("qc").path) is a checkpoint directory, not a model directory: "
                           + "name one of its checkpoints (the latest: \(ckpt)), or export one (drummer export \(root.appendingPathComponent("qc").path) -o model)\n")
        }
        let onDataset = try CLI.run(["eval", ckpt, "--data", quantized, "--quantize", "60"])
        XCTAssertEqual(onDataset.status, 64)
        XCTAssertTrue(onDataset.stderr.contains("--ppq and --quantize apply to a MIDI file"), onDataset.stderr)
    }

    /// The 2017 layout's model on a dataset with velocities: eval's JSON and text have no velocity
    /// figures; loss_all is the note and tick loss.
    func testEvalOfThe2017LayoutHasNoVelocityFigures() throws {
        let o = try train("o", [])
        XCTAssertEqual(o.status, 0, o.stderr)
        XCTAssertTrue(o.stdout.contains("groups: inputs note "), o.stdout)
        XCTAssertFalse(o.stdout.contains("velocity"), o.stdout)
        let e = try CLI.run(["eval", root.appendingPathComponent("o/ckpt-2.h5").path, "--data", data.path, "--json"])
        XCTAssertEqual(e.status, 0, e.stderr)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(e.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(Set(obj.keys), ["events", "loss", "accuracy", "accuracy_note", "accuracy_tick", "loss_note", "loss_tick", "loss_all"])
        XCTAssertEqual(obj["events"] as? Int, Self.songs.map(\.count).reduce(0, +) - 1)
        XCTAssertEqual(obj["loss_all"] as? Double ?? .nan, obj["loss"] as? Double ?? .nan, accuracy: 1e-9)
        let text = try CLI.run(["eval", root.appendingPathComponent("o/ckpt-2.h5").path, "--data", data.path])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertFalse(text.stdout.contains("velocity"), text.stdout)
    }
}
