// `drummer export` and `drummer sample` take a checkpoint where a model is expected: a
// checkpoint file, or a checkpoint directory with --step best|latest|N (default best, the
// step with the lowest validation loss the run recorded).
import Foundation
import XCTest

final class CheckpointInputCLITests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws {
        root = try CLI.temporaryDirectory("checkpoint-input-cli")
        let src = root.appendingPathComponent("midi")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        for (i, hits) in OriginalLayoutCLITests.songs.enumerated() {
            try TinySMF.drums(hits, meter: (4, 2)).write(to: src.appendingPathComponent("song\(i).mid"))
        }
        let converted = root.appendingPathComponent("converted")
        // 0.6: one of the two songs in the validation split (at 0.5 neither fell into it).
        XCTAssertEqual(try CLI.run(["convert-midi", src.path, "-o", converted.path, "--validation-fraction", "0.6"]).status, 0)
        // The 2017 layout's files alone: --recipe original trains note and tick.
        _ = try OriginalLayoutCLITests.noteAndTickCopy(of: converted, to: root.appendingPathComponent("data"))
        // A run with a validation split: its best step by validation loss is what a checkpoint
        // directory stands for by default. (Where the split was empty, a loss of 0 at every
        // evaluation made step 2 the best; the choice among real losses is checked in
        // CheckpointTests and EarlyStopTests.)
        let t = try CLI.run(["train", "--recipe", "original", "--data", root.appendingPathComponent("data").path,
                             "--hidden", "8", "--unroll", "8", "--optimizer", "rmsprop", "--lr", "0.05", "--steps", "12",
                             "--eval-every", "2", "--checkpoint-every", "2", "--keep", "10",
                             "--checkpoint-dir", root.appendingPathComponent("c").path])
        XCTAssertEqual(t.status, 0, t.stderr)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    /// The step of train_log.csv's lowest validation loss.
    func bestStep() throws -> Int {
        let log = try String(contentsOf: root.appendingPathComponent("c/train_log.csv"), encoding: .utf8)
        let rows = log.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let header = try XCTUnwrap(rows.first)
        let stepColumn = try XCTUnwrap(header.firstIndex(of: "step"))
        let lossColumn = try XCTUnwrap(header.firstIndex(of: "validation_loss"))
        let best = try XCTUnwrap(rows.dropFirst().min { Double($0[lossColumn])! < Double($1[lossColumn])! })
        return try XCTUnwrap(Int(best[stepColumn]))
    }

    func testExportAndSampleTakeACheckpointDirectory() throws {
        let dir = root.appendingPathComponent("c").path
        let best = try bestStep()
        let e = try CLI.run(["export", dir, "-o", root.appendingPathComponent("m").path])
        XCTAssertEqual(e.status, 0, e.stderr)
        XCTAssertTrue(e.stdout.contains("ckpt-\(best).h5 (step \(best), the best by validation loss, step \(best))"), e.stdout)
        let latest = try CLI.run(["export", dir, "--step", "latest", "-o", root.appendingPathComponent("l").path])
        XCTAssertTrue(latest.stdout.contains("ckpt-12.h5 (step 12, the latest, step 12)"), latest.stdout)
        let four = try CLI.run(["export", dir, "--step", "4", "-o", root.appendingPathComponent("f").path])
        XCTAssertTrue(four.stdout.contains("ckpt-4.h5 (step 4, step 4)"), four.stdout)
        let missing = try CLI.run(["export", dir, "--step", "5", "-o", root.appendingPathComponent("x").path])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("has no checkpoint of step 5 (it has steps 2, 4, 6, 8, 10, 12)"), missing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("x").path))
        let bad = try CLI.run(["export", dir, "--step", "soon", "-o", root.appendingPathComponent("x").path])
        XCTAssertEqual(bad.status, 64, bad.stderr)

        // sample: the checkpoint directory (best), its best checkpoint file and the exported
        // model directory sample the same file.
        var files: [Data] = []
        for (i, model) in [dir, dir + "/ckpt-\(best).h5", root.appendingPathComponent("m").path].enumerated() {
            let out = root.appendingPathComponent("s\(i).mid").path
            let s = try CLI.run(["sample", model, "-n", "40", "--seed", "2", "-o", out])
            XCTAssertEqual(s.status, 0, s.stderr)
            files.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        XCTAssertEqual(files[0], files[1])
        XCTAssertEqual(files[1], files[2])
        let wrong = try CLI.run(["sample", root.appendingPathComponent("m").path, "--step", "latest", "-o",
                                 root.appendingPathComponent("y.mid").path])
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stderr.contains("--step latest applies to a checkpoint directory"), wrong.stderr)
    }
}
