// Checkpoints you can trust, and one run per checkpoint directory.
//   - 1,000 random single-bit flips of a checkpoint: every one is refused with an error
//     naming the file (the seal's SHA-256 is checked before libhdf5 opens the file, so no
//     flip can reach libhdf5 and crash it) or reads back identical;
//   - non-finite weights or state are refused by name;
//   - a version 1 checkpoint written by the previous release still loads and resumes;
//   - a directory holding another run's checkpoints, or locked by a running run, is refused
//     naming the other run; an unusable directory is found before any training step.
import DrummerCore
import Foundation
import XCTest
@testable import Checkpoints
@testable import Train
@testable import TrainRun

final class CheckpointIntegrityTests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws { root = try RunFixture.temporaryDirectory("integrity") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    func train(steps: Int, dir: String = "c", optimizer: OptimizerKind = .rmsprop) throws -> TrainingRun {
        let data = root.appendingPathComponent("data")
        if !FileManager.default.fileExists(atPath: data.path) {
            try RunFixture.writeDataset(data, events: RunFixture.events(count: 80))
        }
        let run = try TrainingRun(options: RunFixture.options(data: data, checkpoints: root.appendingPathComponent(dir),
                                                              steps: steps, optimizer: optimizer),
                                  reporter: LineSink().reporter)
        _ = try run.run(shouldStop: { false })
        return run
    }

    func testEveryBitFlipIsRefusedOrReadsBackIdentical() throws {
        _ = try train(steps: 5)
        let good = root.appendingPathComponent("c/ckpt-5.h5")
        let original = try Checkpoint.read(path: good.path)
        let bytes = try Data(contentsOf: good)
        var generator = SeededRNG(seed: 2026)
        var refused = 0, identical = 0
        var kinds: [String: Int] = [:]
        let flipped = root.appendingPathComponent("flipped.h5").path
        for _ in 0..<1000 {
            let bit = generator.index(below: bytes.count * 8)
            var copy = bytes
            copy[bit / 8] ^= UInt8(1 << (bit % 8))
            try copy.write(to: URL(fileURLWithPath: flipped))
            do {
                let c = try Checkpoint.read(path: flipped)
                XCTAssertEqual(c.state, original.state, "bit \(bit) changed the state silently")
                XCTAssertEqual(c.configuration, original.configuration, "bit \(bit) changed the settings silently")
                XCTAssertEqual(c.vocabulary, original.vocabulary, "bit \(bit) changed the vocabulary silently")
                identical += 1
            } catch let e as CheckpointError {
                XCTAssertEqual(e.path, flipped, "the error names the file")
                XCTAssertTrue(e.description.hasPrefix(flipped + ": "), e.description)
                switch e {
                case .corrupt: kinds["corrupt", default: 0] += 1
                case .notACheckpoint: kinds["not a checkpoint", default: 0] += 1
                default: XCTFail("bit \(bit): unexpected error kind: \(e)")
                }
                refused += 1
            }
        }
        print("1000 bit flips of a \(bytes.count)-byte checkpoint: \(refused) refused \(kinds), \(identical) identical")
        XCTAssertEqual(refused + identical, 1000)
        XCTAssertGreaterThan(refused, 950, "the seal covers every byte")
    }

    func testNonFiniteValuesAreRefusedByName() throws {
        let run = try train(steps: 2)
        var ckpt = run.checkpoint()
        let s = ckpt.state.shape
        ckpt.state.parameters[1 * s.wxCols + 2] = .nan
        let p = root.appendingPathComponent("nan.h5").path
        try ckpt.write(to: p)
        assertThrows([p + ": /model/Wx[1, 2] is nan; a checkpoint holds finite values only"]) { try Checkpoint.read(path: p) }
        assertThrows([p + ": /model/Wx[1, 2] is nan"]) { try CheckpointReader.loadModel(path: p) }

        var inf = run.checkpoint()
        inf.state.h[3] = .infinity
        try inf.write(to: p)
        assertThrows([p + ": /state/h[0, 3] is inf"]) { try Checkpoint.read(path: p) }
    }

    func fixture(_ name: String) throws -> URL {
        try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/v1-checkpoint/" + name, withExtension: nil),
                      "fixture \(name) is missing from the test bundle")
    }

    func testVersion1CheckpointLoadsExportsAndResumes() throws {
        // Copies, so the run below writes beside them and not into the bundle.
        let dir = root.appendingPathComponent("v1")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: try fixture("ckpt-3.h5"), to: dir.appendingPathComponent("ckpt-3.h5"))
        try FileManager.default.copyItem(at: try fixture("data"), to: root.appendingPathComponent("v1data"))
        let path = dir.appendingPathComponent("ckpt-3.h5").path
        let c = try Checkpoint.read(path: path)
        XCTAssertEqual(c.formatVersion, 1)
        XCTAssertEqual(c.runID, "")
        XCTAssertEqual(c.state.step, 3)
        XCTAssertEqual(c.configuration.hidden, 4)
        XCTAssertEqual(c.configuration.optimizer, .momentum)
        XCTAssertEqual(c.vocabulary.ixToNote, [36, 38, 42, 46])
        XCTAssertNotNil(c.state.optimizer.slots["velocity"])
        // Version 1 predates the groups: the original layout, (note, tick) in and out.
        XCTAssertEqual(c.groups, ModelGroups(vocabulary: c.vocabulary))
        XCTAssertEqual(c.state.shape, ModelShape(notes: 4, ticks: 5, hidden: 4))
        let model = try CheckpointReader.loadModel(path: path)
        XCTAssertEqual(model.metadata["format_version"], "1")
        XCTAssertTrue(model.groups.isOriginalLayout)
        // Resuming continues the run in the same directory (adopted with a new run id).
        var o = RunOptions(data: root.appendingPathComponent("v1data").path, resume: path)
        o.steps = 6
        let run = try TrainingRun(options: o, reporter: LineSink().reporter)
        XCTAssertTrue(Checkpoint.isValidRunID(run.runID))
        XCTAssertEqual(try run.run(shouldStop: { false }).step, 6)
        let next = try Checkpoint.read(path: dir.appendingPathComponent("ckpt-6.h5").path)
        XCTAssertEqual(next.formatVersion, 2, "a one-layer run is written as version 2")
        XCTAssertEqual(next.groups, ModelGroups(vocabulary: c.vocabulary), "the continued run keeps the original layout")
        XCTAssertEqual(next.runID, run.runID)
        XCTAssertEqual(try CheckpointDirectory(path: dir.path).owner()?.runID, run.runID)
    }

    /// A run killed in its first checkpoint write after an evaluation leaves its claim and its log,
    /// no checkpoint: the next run was refused as if the directory held checkpoints to resume.
    func testAnotherRunsLogWithoutCheckpointsIsSaidSo() throws {
        let first = try train(steps: 5)
        let dir = root.appendingPathComponent("c")
        try FileManager.default.removeItem(at: dir.appendingPathComponent("ckpt-5.h5"))
        let o = RunFixture.options(data: root.appendingPathComponent("data"), checkpoints: dir, steps: 10)
        assertThrows(["--checkpoint-dir \(dir.path) holds another run's train_log.csv (run \(first.runID)) and no checkpoint, "
                      + "so nothing to resume; to start a new run, remove that file or choose another --checkpoint-dir"]) {
            try TrainingRun(options: o, reporter: LineSink().reporter)
        }
    }

    /// A --checkpoint-dir through a symbolic link that leads nowhere was refused as "cannot
    /// write there: already exists": the link is named.
    func testACheckpointDirectoryThroughADanglingLinkNamesTheLink() throws {
        _ = try train(steps: 1)
        let link = root.appendingPathComponent("lnk").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "missing")
        let o = RunFixture.options(data: root.appendingPathComponent("data"), checkpoints: URL(fileURLWithPath: link + "/ck"), steps: 2)
        assertThrows(["--checkpoint-dir \(link)/ck: cannot write there: \(link) is a symbolic link to missing, which does not exist"]) {
            try TrainingRun(options: o, reporter: LineSink().reporter)
        }
    }

    func testAnotherRunsDirectoryIsRefusedNamingTheRun() throws {
        let first = try train(steps: 5)
        let data = root.appendingPathComponent("data")
        let o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: 10)
        let latest = root.appendingPathComponent("c/ckpt-5.h5").path
        assertThrows(["--checkpoint-dir \(root.appendingPathComponent("c").path) holds another run's checkpoints (run \(first.runID))",
                      "to continue that run: drummer train --resume \(latest)"]) {
            try TrainingRun(options: o, reporter: LineSink().reporter)
        }
        // The other run's files are untouched.
        XCTAssertEqual(CheckpointDirectory(path: root.appendingPathComponent("c").path).list().map(\.step), [5])
        // Continuing that run is allowed and keeps its id.
        var resume = RunOptions(resume: latest)
        resume.steps = 10
        let continued = try TrainingRun(options: resume, reporter: LineSink().reporter)
        XCTAssertEqual(continued.runID, first.runID)
        _ = try continued.run(shouldStop: { false })
        let log = try String(contentsOf: root.appendingPathComponent("c/train_log.csv"), encoding: .utf8)
        XCTAssertEqual(log.split(separator: "\n").map { $0.split(separator: ",").first.map(String.init) ?? "" },
                       ["step", "5", "10"], "one run's rows")
    }

    func testALockedDirectoryIsRefusedNamingTheRun() throws {
        let data = root.appendingPathComponent("data")
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 80))
        let o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: 5)
        let holder = try TrainingRun(options: o, reporter: LineSink().reporter)  // holds the lock until it runs
        assertThrows(["--checkpoint-dir \(root.appendingPathComponent("c").path) is in use by another training run (pid \(getpid()), run \(holder.runID))"]) {
            try TrainingRun(options: o, reporter: LineSink().reporter)
        }
        withExtendedLifetime(holder) {}
    }

    func testAnUnusableDirectoryIsFoundBeforeTraining() throws {
        let data = root.appendingPathComponent("data")
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 80))
        let file = root.appendingPathComponent("plain-file")
        try Data("x".utf8).write(to: file)
        let o = RunFixture.options(data: data, checkpoints: file.appendingPathComponent("ck"), steps: 2000)
        let started = Date()
        assertThrows(["--checkpoint-dir \(file.appendingPathComponent("ck").path): cannot write there"]) {
            try TrainingRun(options: o, reporter: LineSink().reporter)
        }
        let asFile = RunFixture.options(data: data, checkpoints: file, steps: 2000)
        assertThrows(["--checkpoint-dir \(file.path): exists and is not a directory"]) {
            try TrainingRun(options: asFile, reporter: LineSink().reporter)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "refused before training, not at the first save")
    }
}
