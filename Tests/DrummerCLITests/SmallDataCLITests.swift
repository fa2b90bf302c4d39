// A folder of a few beats of one's own (the 2017 project's two training patterns): a recipe's
// batch and unroll too large for it are fitted to the data and said in one line; flags given
// that do not fit are refused with flags that do, before anything is written.
import Foundation
import XCTest

final class SmallDataCLITests: XCTestCase {
    var root: URL!
    var data: URL!
    /// The 2017 layout's files of `data` (--recipe original trains note and tick).
    var noteAndTick: URL!

    override func setUpWithError() throws {
        let patterns = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/rnn-drummer")
        root = try CLI.temporaryDirectory("small-data")
        let beats = root.appendingPathComponent("beats")
        try FileManager.default.createDirectory(at: beats, withIntermediateDirectories: true)
        for name in ["pattern1.mid", "pattern2.mid"] {
            try FileManager.default.copyItem(at: patterns.appendingPathComponent(name), to: beats.appendingPathComponent(name))
        }
        data = root.appendingPathComponent("data")
        let r = try CLI.run(["convert-midi", beats.path, "-o", data.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        noteAndTick = try OriginalLayoutCLITests.noteAndTickCopy(of: data, to: root.appendingPathComponent("note-tick"))
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    func testTheRecipesBatchAndUnrollAreFittedToTwoPatterns() throws {
        // The 2017 recipe: 1 stream of 201 events; the two patterns hold 22.
        let events = try CLI.run(["train", "--recipe", "original", "--data", noteAndTick.path, "--steps", "2",
                                  "--checkpoint-dir", root.appendingPathComponent("e").path])
        XCTAssertEqual(events.status, 0, events.stderr)
        XCTAssertTrue(events.stdout.contains("data: 22 training events are too few for the recipe's 1 streams of 201; "
                                             + "training 1 stream of 21 steps (--batch-size 1 --unroll 21); more files train better"),
                      events.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("e/ckpt-2.h5").path))
        // The grid recipe: 32 streams of 65 16th steps.
        let grid = try CLI.run(["train", "--recipe", "grid", "--data", data.path, "--hidden", "16", "--steps", "2",
                                "--checkpoint-dir", root.appendingPathComponent("g").path])
        XCTAssertEqual(grid.status, 0, grid.stderr)
        let line = try XCTUnwrap(grid.stdout.split(separator: "\n").first { $0.hasPrefix("data: ") }, grid.stdout)
        XCTAssertTrue(line.contains(" training rows (16th steps and a start row per file) are too few for the recipe's 32 streams of 65; training "),
                      String(line))
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("g/ckpt-2.h5").path))
    }

    /// Five beats of 40 bars: 3,200 rows, 100 a stream at the recipe's 32 streams, of which each
    /// read 65 and left 35 unread (a third of the folder never trained on, unsaid). The recipe's
    /// batch is made smaller until at most a tenth is unread; a batch given is kept, with a
    /// warning. Steps that read so little data hundreds of times over are warned of.
    func testAFolderTheRecipesStreamsWouldLeaveHalfReadIsReadWhole() throws {
        let beats = root.appendingPathComponent("forty"), forty = root.appendingPathComponent("forty-data")
        try FileManager.default.createDirectory(at: beats, withIntermediateDirectories: true)
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for e in 0..<320 {
            hits.append((e * 240, 42, 90))
            if e % 2 == 0 { hits.append((e * 240, e % 4 == 0 ? 36 : 38, 100)) }
        }
        for k in 0..<5 { try TinySMF.drums(hits).write(to: beats.appendingPathComponent("b\(k).mid")) }
        XCTAssertEqual(try CLI.run(["convert-midi", beats.path, "-o", forty.path]).status, 0)
        let r = try CLI.run(["train", "--data", forty.path, "--hidden", "16", "--steps", "500", "--checkpoint-dir", root.appendingPathComponent("f").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("grid training: 5 files in 4/4, 3195 16th steps"), r.stdout)
        XCTAssertTrue(r.stdout.contains("data: the recipe's 32 streams would leave 35% of the 3200 training rows (16th steps and a start row per file) "
                                        + "unread (each of the 32 streams reads its 100 rows in chunks of 65, from the start again when the next would "
                                        + "not fit); training 24 streams (--batch-size 24), which read all but 3%; more files train better"), r.stdout)
        XCTAssertTrue(r.stdout.contains("warning: 500 steps read the 3200 training rows (16th steps and a start row per file) about 240 times over "
                                        + "(the recipe reads the Groove corpus 69 times)"), r.stdout)
        let given = try CLI.run(["train", "--data", forty.path, "--hidden", "16", "--batch-size", "32", "--steps", "2",
                                 "--checkpoint-dir", root.appendingPathComponent("g32").path])
        XCTAssertEqual(given.status, 0, given.stderr)
        XCTAssertTrue(given.stdout.contains("warning: --batch-size 32 --unroll 64 leave 35% of the 3200 training rows (16th steps and a start row "
                                            + "per file) unread"), given.stdout)
        XCTAssertFalse(given.stdout.contains("warning: 2 steps read"), given.stdout)

        // Two beats of 6 bars: 194 rows, too few for 32 streams; the 2 streams that fit would read
        // 65 of their 97 rows each: one stream, which reads all but one.
        let six = root.appendingPathComponent("six"), sixData = root.appendingPathComponent("six-data")
        try FileManager.default.createDirectory(at: six, withIntermediateDirectories: true)
        let short = (0..<96).filter { $0 % 2 == 0 || $0 == 95 }.map { (tick: $0 * 120, note: UInt8($0 % 8 == 0 ? 36 : 42), velocity: UInt8(90)) }
        for k in 0..<2 { try TinySMF.drums(short).write(to: six.appendingPathComponent("s\(k).mid")) }
        XCTAssertEqual(try CLI.run(["convert-midi", six.path, "-o", sixData.path]).status, 0)
        let fitted = try CLI.run(["train", "--data", sixData.path, "--hidden", "16", "--steps", "2", "--checkpoint-dir", root.appendingPathComponent("s").path])
        XCTAssertEqual(fitted.status, 0, fitted.stderr)
        XCTAssertTrue(fitted.stdout.contains("data: 194 training rows (16th steps and a start row per file) are too few for the recipe's 32 streams of 65; "
                                             + "training 1 stream of 64 steps (--batch-size 1 --unroll 64), which reads all but 1% of them "
                                             + "(2 would leave 33% unread); more files train better\n"), fitted.stdout)
        XCTAssertEqual(fitted.stdout.components(separatedBy: "data: ").count, 2, "one line: \(fitted.stdout)")
    }

    /// A --validation-fraction that leaves the validation split empty is said at conversion, and
    /// training goes on as without one: no validation loss of 0 (which was the best at once and
    /// drove --early-stop and the learning-rate plateau).
    func testAnEmptyValidationSplitIsNoValidationLoss() throws {
        let beats = root.appendingPathComponent("beats"), split = root.appendingPathComponent("split")
        let c = try CLI.run(["convert-midi", beats.path, "-o", split.path, "--validation-fraction", "0.1"])
        XCTAssertEqual(c.status, 0, c.stderr)
        XCTAssertTrue(c.stdout.contains("Validation: 0 files, 0 hits kept, 0 dropped (out of vocabulary): no file fell into it "
                                        + "(a larger --validation-fraction or more files make one)"), c.stdout)
        let r = try CLI.run(["train", "--data", split.path, "--hidden", "16", "--steps", "6", "--eval-every", "2",
                             "--early-stop", "--early-stop-patience", "1", "--lr-plateau-patience", "1",
                             "--checkpoint-dir", root.appendingPathComponent("v").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("note: the validation split holds nothing the model reads: the run goes on as without one"), r.stdout)
        XCTAssertFalse(r.stdout.contains("validation loss"), r.stdout)
        XCTAssertFalse(r.stdout.contains("early stop"), r.stdout)
        XCTAssertFalse(r.stdout.contains("the dataset has no validation split"), "said once: \(r.stdout)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("v/ckpt-6.h5").path))
    }

    /// Beats in 3/4 only: the grid recipe is refused naming the files left out and the recipe
    /// that reads them.
    func testBeatsOutside44PointAtTheOriginalRecipe() throws {
        let waltz = root.appendingPathComponent("waltz")
        try FileManager.default.createDirectory(at: waltz, withIntermediateDirectories: true)
        let hits = (0..<24).map { (tick: $0 * 240, note: UInt8($0 % 6 == 0 ? 36 : 42), velocity: UInt8(90)) }
        try TinySMF.drums(hits, meter: (3, 2)).write(to: waltz.appendingPathComponent("waltz.mid"))
        let data = root.appendingPathComponent("waltz-data").path
        let c = try CLI.run(["convert-midi", waltz.path, "-o", data])
        XCTAssertEqual(c.status, 0, c.stderr)
        XCTAssertTrue(c.stdout.contains("Done! Scanned 1 file (1 converted, 0 skipped)"), c.stdout)
        let dir = root.appendingPathComponent("w").path
        let r = try CLI.run(["train", "--data", data, "--steps", "2", "--checkpoint-dir", dir])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("no 4/4 file with drum hits: the grid layout needs 4/4 files (left out: waltz.mid: meter 3/4); "
                                        + "train --recipe original trains the 2017 model, which reads files in any meter"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir))
    }

    func testFlagsThatDoNotFitAreRefusedWithFlagsThatDo() throws {
        let dir = root.appendingPathComponent("r").path
        let r = try CLI.run(["train", "--recipe", "original", "--data", noteAndTick.path, "--batch-size", "4", "--unroll", "10",
                             "--steps", "2", "--checkpoint-dir", dir])
        assertRefused(r, "\(noteAndTick.path): its 22 training events are too few for --batch-size 4 --unroll 10 (4 streams of 11 need 44): "
                      + "--batch-size 2 --unroll 10 fit", nothingAt: dir)
        let one = try CLI.run(["train", "--recipe", "original", "--data", noteAndTick.path, "--batch-size", "2", "--unroll", "40",
                               "--steps", "2", "--checkpoint-dir", dir])
        assertRefused(one, "its 22 training events are too few for --batch-size 2 --unroll 40 (2 streams of 41 need 82): "
                      + "--batch-size 1 --unroll 21 fit", nothingAt: dir)
    }
}
