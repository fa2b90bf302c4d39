// A dataset, a reference or a model whose files are damaged: the error names the file, says
// what is wrong and where (a JSON syntax error's line and column), exits non-zero, and
// nothing is written.
import Foundation
import XCTest

final class DatasetInputErrorsCLITests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws { root = try CLI.temporaryDirectory("dataset-input-errors") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    /// A small dataset of events.npy and vocab.json at `name`.
    func dataset(_ name: String) throws -> URL {
        let dir = root.appendingPathComponent(name)
        try TestDataset.write(dir, pairs: (0..<64).map { (Int32($0 % 3), Int32($0 % 2)) },
                              vocabJSON: #"{"ix_to_note": [36, 38, 42], "ix_to_tick": [0, 120]}"#)
        return dir
    }

    /// manifest.json, vocab.json and model.json broken mid-file: "not valid JSON" with the
    /// parser's place and its line and column, from train, stats and report alike.
    func testAJSONSyntaxErrorSaysWhere() throws {
        let ckpt = root.appendingPathComponent("ck").path
        let manifest = try dataset("manifest")
        try Data("{\n  \"settings\": {\n    \"ppq\": 480,,\n  }\n}\n".utf8).write(to: manifest.appendingPathComponent("manifest.json"))
        let m = try CLI.run(["train", "--data", manifest.path, "--steps", "1", "--checkpoint-dir", ckpt])
        assertRefused(m, "error: \(manifest.path)/manifest.json: not valid JSON: invalid value around character 33 (line 3, column 16)\n",
                      status: 1, nothingAt: ckpt)
        let vocab = try dataset("vocab")
        try Data("{\"ix_to_note\": [36, 38, 42],\n \"ix_to_tick\": [0 120]}".utf8).write(to: vocab.appendingPathComponent("vocab.json"))
        let v = try CLI.run(["train", "--data", vocab.path, "--steps", "1", "--checkpoint-dir", ckpt])
        let where_ = "not valid JSON: invalid value around character 47 (line 2, column 19)"
        assertRefused(v, "error: \(vocab.path)/vocab.json: \(where_)\n", status: 1, nothingAt: ckpt)
        let beat = root.appendingPathComponent("beat.mid")
        try TinySMF.drums([(0, 36, 100), (480, 38, 100)]).write(to: beat)
        let s = try CLI.run(["stats", beat.path, "--reference", vocab.path])
        XCTAssertEqual(s.status, 1, s.stderr)
        XCTAssertEqual(s.stderr, "error: \(vocab.path): vocab.json: \(where_)\n")
        // A model.json cut short: its end named.
        let model = root.appendingPathComponent("model")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data("{\n\"format\": \"drummer-lstm\",\n".utf8).write(to: model.appendingPathComponent("model.json"))
        let page = root.appendingPathComponent("r.html").path
        let r = try CLI.run(["report", beat.path, "--model", model.path, "-o", page, "--no-audio"])
        XCTAssertTrue(r.stderr.contains("warning: \(model.path)/model.json: not valid JSON: unexpected end of file during JSON parse "
                                        + "(its end: byte 28, line 3)\n"), r.stderr)
    }

    /// A damaged extra array of a dataset (velocities.npy, positions.npy, onsets.npy) is named
    /// once, with the byte where it goes wrong, by train and eval.
    func testADamagedArrayIsNamedOnce() throws {
        let dir = try dataset("cut")
        let velocities = dir.appendingPathComponent("velocities.npy")
        try TestDataset.writeInt32([Int32](repeating: 90, count: 64), shape: [64], to: velocities)
        let whole = try Data(contentsOf: velocities)
        try whole.prefix(whole.count - 8).write(to: velocities)
        let message = "error: \(velocities.path): byte 376: truncated data: the shape needs 256 bytes but only 248 follow the header\n"
        let ckpt = root.appendingPathComponent("ck").path
        let t = try CLI.run(["train", "--data", dir.path, "--steps", "1", "--checkpoint-dir", ckpt])
        assertRefused(t, message, status: 1, nothingAt: ckpt)
        XCTAssertEqual(t.stderr, message)
        let e = try CLI.run(["eval", CLI.repoRoot.appendingPathComponent("models/groove").path, "--data", dir.path])
        XCTAssertEqual(e.status, 1, e.stderr)
        XCTAssertEqual(e.stderr, message)
    }

    /// A MIDI file that reads but holds a hit too far from its start to be encoded: said so,
    /// the file named once, not called unreadable.
    func testAHitTooFarIsNotAnUnreadableFile() throws {
        let far = root.appendingPathComponent("far.mid")
        try TinySMF.drums([(0, 36, 100), (5_000_000, 38, 100)], ppq: 1).write(to: far)
        let beat = root.appendingPathComponent("beat.mid")
        try TinySMF.drums([(0, 36, 100), (480, 38, 100)]).write(to: beat)
        let tooFar = "\(far.path): a hit at its tick 5000000 (in the file's own resolution) lies beyond 2147483647 ticks "
            + "once rescaled to the target resolution"
        let r = try CLI.run(["stats", beat.path, "--reference", far.path])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderr, "error: \(tooFar)\n")
        let g = try CLI.run(["stats", far.path, "beat.mid", "--reference", beat.path], cwd: root)
        XCTAssertEqual(g.status, 0, g.stderr)
        XCTAssertTrue(g.stderr.contains("warning: \(tooFar); left out (1 of 2 generated files measured)\n"), g.stderr)
    }

    /// The folder of MIDI files given to --data instead of its dataset: said so, with the
    /// command that makes the dataset, by train, eval and encode.
    func testAFolderOfMIDIFilesGivenAsTheDataSaysHowToConvertIt() throws {
        let beats = root.appendingPathComponent("my beats")
        try FileManager.default.createDirectory(at: beats.appendingPathComponent("rock"), withIntermediateDirectories: true)
        try TinySMF.rockBeat.write(to: beats.appendingPathComponent("rock/a.mid"))
        try TinySMF.rockBeat.write(to: beats.appendingPathComponent("b.mid"))
        let message = "error: \(beats.path): a folder of 2 MIDI files, no events.npy (not a convert-midi dataset): "
            + "make one with drummer convert-midi '\(beats.path)' -o data, then give --data data\n"
        let groove = CLI.repoRoot.appendingPathComponent("models/groove").path
        let out = root.appendingPathComponent("out").path
        for args in [["train", "--data", beats.path, "--steps", "1", "--checkpoint-dir", out],
                     ["eval", groove, "--data", beats.path],
                     ["encode", groove, "--data", beats.path, "-o", out]] {
            let r = try CLI.run(args)
            assertRefused(r, message, status: 1, nothingAt: out)
            XCTAssertEqual(r.stderr, message, args[0])
        }
        // A dataset that lost its vocab.json beside some MIDI files is not told it has no
        // events.npy: the missing vocabulary is named.
        let lost = try dataset("lost vocab")
        try FileManager.default.removeItem(at: lost.appendingPathComponent("vocab.json"))
        try TinySMF.rockBeat.write(to: lost.appendingPathComponent("a.mid"))
        let r = try CLI.run(["train", "--data", lost.path, "--steps", "1", "--checkpoint-dir", out])
        assertRefused(r, "no vocabulary: expected vocab.json, or ix_to_note.p and ix_to_tick.p", status: 1, nothingAt: out)
        XCTAssertFalse(r.stderr.contains("no events.npy"), r.stderr)
    }
}
