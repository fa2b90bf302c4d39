// Resuming and fine-tuning groove models: N steps straight equal N/2, then a resume to N, to the
// bit, with position (one-hot or binary) and velocity groups; a resumed run may not change its
// groups; the dataset fingerprint of a groove run covers the velocities and positions;
// --init-from takes the model's groups (the original 2017 model: the original layout, whatever
// the dataset carries).
import DrummerCore
import Encode
import Foundation
import XCTest
@testable import Checkpoints
@testable import Train
import ModelFiles
@testable import TrainRun

final class ResumeGroupsTests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws { root = try RunFixture.temporaryDirectory("resume-groups") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    func straightAndResumed(encoding: PositionEncoding, batch: Int, optimizer: OptimizerKind) throws
        -> (straight: Checkpoint, resumed: Checkpoint)
    {
        let dir = root.appendingPathComponent("\(encoding.rawValue)-\(batch)")
        let data = dir.appendingPathComponent("data")
        try RunFixture.writeGrooveDataset(data, count: 90 * batch, validation: 40)
        var a = RunFixture.options(data: data, checkpoints: dir.appendingPathComponent("a"), steps: 20,
                                   batch: batch, optimizer: optimizer)
        a.positionEncoding = encoding
        a.velocityBins = 4
        let straight = try TrainingRun(options: a, reporter: LineSink().reporter)
        XCTAssertEqual(try straight.run(shouldStop: { false }).step, 20)

        var b = a
        b.checkpointDirectory = dir.appendingPathComponent("b").path
        b.steps = 10
        XCTAssertEqual(try TrainingRun(options: b, reporter: LineSink().reporter).run(shouldStop: { false }).step, 10)
        let second = try TrainingRun(options: RunOptions(steps: 20, resume: dir.appendingPathComponent("b/ckpt-10.h5").path),
                                     reporter: LineSink().reporter)
        XCTAssertEqual(second.groups, straight.groups)
        XCTAssertEqual(try second.run(shouldStop: { false }).step, 20)

        // The train logs (per-group columns included) agree to the character.
        let logA = try String(contentsOf: dir.appendingPathComponent("a/train_log.csv"), encoding: .utf8)
        let logB = try String(contentsOf: dir.appendingPathComponent("b/train_log.csv"), encoding: .utf8)
        XCTAssertEqual(logA, logB)
        let header = logA.split(separator: "\n")[0].split(separator: ",").map(String.init)
        let last = logA.split(separator: "\n").last?.split(separator: ",", omittingEmptySubsequences: false).map(String.init) ?? []
        let column = try XCTUnwrap(header.firstIndex(of: "train_loss_velocity"))
        XCTAssertGreaterThan(Double(last[column]) ?? 0, 0, "the velocity group's loss is logged: \(logA)")
        let s = try Checkpoint.read(path: dir.appendingPathComponent("a/ckpt-20.h5").path)
        let r = try Checkpoint.read(path: dir.appendingPathComponent("b/ckpt-20.h5").path)
        XCTAssertGreaterThan(s.state.epoch, 0, "the run should wrap at least one epoch")
        XCTAssertEqual(s.groups, r.groups)
        XCTAssertEqual(s.groups.position?.encoding, encoding)
        XCTAssertEqual(s.groups.velocity?.bins.count, 4)
        return (s, r)
    }

    func testResumeWithOneHotPositionAndVelocityIsBitwiseExactBatch1() throws {
        let (s, r) = try straightAndResumed(encoding: .oneHot, batch: 1, optimizer: .sgd)
        assertBitwiseEqual(s, r)
    }

    func testResumeWithBinaryPositionAndVelocityIsBitwiseExactBatch3Momentum() throws {
        let (s, r) = try straightAndResumed(encoding: .binary, batch: 3, optimizer: .momentum)
        assertBitwiseEqual(s, r)
    }

    /// A 10-step groove checkpoint (one-hot position, 4 velocity bins); returns its path and data.
    func grooveCheckpoint() throws -> (String, URL) {
        let data = root.appendingPathComponent("data")
        try RunFixture.writeGrooveDataset(data, count: 100)
        var o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: 10)
        o.velocityBins = 4
        _ = try TrainingRun(options: o, reporter: LineSink().reporter).run(shouldStop: { false })
        return (root.appendingPathComponent("c/ckpt-10.h5").path, data)
    }

    func testResumeRefusesAGroupChangeAndAcceptsTheSameGroups() throws {
        let (ckpt, _) = try grooveCheckpoint()
        func options(_ set: (inout RunOptions) -> Void) -> RunOptions {
            var o = RunOptions(resume: ckpt)
            set(&o)
            return o
        }
        let tail = "(\(ckpt)); a resumed run cannot change it: start a new run instead"
        let refused: [(RunOptions, String)] = [
            (options { $0.velocity = false }, "--no-velocity differs from the checkpoint's a velocity group " + tail),
            (options { $0.position = false }, "--no-position differs from the checkpoint's a position group " + tail),
            (options { $0.layoutOriginal = true }, "--layout original differs from the checkpoint's groups note, tick, position, velocity " + tail),
            (options { $0.positionEncoding = .binary }, "--position-encoding binary differs from the checkpoint's position encoding onehot " + tail),
            (options { $0.velocityBins = 5 }, "--velocity-bins 5 differs from the checkpoint's 4 velocity bins " + tail),
        ]
        for (o, message) in refused {
            assertThrows([message]) { try TrainingRun(options: o, reporter: LineSink().reporter) }
        }
        // Flags that say what the checkpoint has are accepted.
        let same = options { o in
            o.position = true
            o.velocity = true
            o.positionEncoding = .oneHot
            o.velocityBins = 4
            o.steps = 12
        }
        let run = try TrainingRun(options: same, reporter: LineSink().reporter)
        XCTAssertEqual(try run.run(shouldStop: { false }).step, 12)
        XCTAssertEqual(try Checkpoint.read(path: root.appendingPathComponent("c/ckpt-12.h5").path).groups, run.groups)
    }

    func testResumeOfAnOriginalLayoutRunRefusesAddingAGroup() throws {
        let data = root.appendingPathComponent("plain")
        try RunFixture.writeDataset(data, events: RunFixture.events(count: 100))
        _ = try TrainingRun(options: RunFixture.options(data: data, checkpoints: root.appendingPathComponent("o"), steps: 5),
                            reporter: LineSink().reporter).run(shouldStop: { false })
        let ckpt = root.appendingPathComponent("o/ckpt-5.h5").path
        var o = RunOptions(resume: ckpt)
        o.position = true
        assertThrows(["--position differs from the checkpoint's no position group (\(ckpt))"]) {
            try TrainingRun(options: o, reporter: LineSink().reporter)
        }
        o.position = nil
        o.velocity = true
        assertThrows(["--velocity differs from the checkpoint's no velocity group (\(ckpt))"]) {
            try TrainingRun(options: o, reporter: LineSink().reporter)
        }
    }

    /// The fingerprint of a groove run covers velocities.npy and positions.npy: changing one
    /// velocity is a changed dataset.
    func testChangedVelocitiesOrPositionsAreAChangedDataset() throws {
        let (ckpt, data) = try grooveCheckpoint()
        var v = RunFixture.velocities(count: 100)
        v[17] = v[17] == 127 ? 126 : v[17] + 1
        try NPY.write(int32: v, shape: [100], to: data.appendingPathComponent("velocities.npy").path)
        assertThrows(["\(data.path): contents differ from the data \(ckpt) was trained on", "--allow-data-change"]) {
            try TrainingRun(options: RunOptions(resume: ckpt), reporter: LineSink().reporter)
        }
        try NPY.write(int32: RunFixture.velocities(count: 100), shape: [100], to: data.appendingPathComponent("velocities.npy").path)
        var p = RunFixture.positions(count: 100)
        p[2 * 9] += 1
        try NPY.write(int32: p, shape: [100, 2], to: data.appendingPathComponent("positions.npy").path)
        assertThrows(["\(data.path): contents differ from the data \(ckpt) was trained on"]) {
            try TrainingRun(options: RunOptions(resume: ckpt), reporter: LineSink().reporter)
        }
        // Restored: the same fingerprint, the run continues.
        try NPY.write(int32: RunFixture.positions(count: 100), shape: [100, 2], to: data.appendingPathComponent("positions.npy").path)
        XCTAssertNoThrow(try TrainingRun(options: RunOptions(resume: ckpt), reporter: LineSink().reporter))
    }

    /// The original 2017 model (../shared), copied as a model directory.
    func originalModel() throws -> (URL, LoadedModel) {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tests/Fixtures/rnn-drummer").standardizedFileURL
        guard FileManager.default.fileExists(atPath: fixtures.appendingPathComponent("Wx.bin").path) else {
            throw VendoredFixtureMissing()
        }
        let dir = root.appendingPathComponent("original")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (a, b) in [("Wx.bin", "Wx.bin"), ("Wy.bin", "Wy.bin"), ("vocab.json", "model.json")] {
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent(a), to: dir.appendingPathComponent(b))
        }
        return (dir, try ModelDirectory.load(path: dir.path))
    }

    /// --init-from the original model on a dataset with velocities.npy and positions.npy (and the
    /// original's vocabulary): the original layout, with no flag; flags asking for groups the
    /// model lacks are refused naming it.
    func testInitFromTheOriginalModelTrainsTheOriginalLayoutOnAGrooveDataset() throws {
        let (model, original) = try originalModel()
        let data = root.appendingPathComponent("data")
        let events: [Int32] = (0..<64).flatMap { [Int32($0 % 17), Int32(($0 * 7) % 209)] }
        try RunFixture.writeDataset(data, events: events, vocabulary: original.vocabulary)
        try NPY.write(int32: RunFixture.velocities(count: 64), shape: [64], to: data.appendingPathComponent("velocities.npy").path)
        try NPY.write(int32: RunFixture.positions(count: 64), shape: [64, 2], to: data.appendingPathComponent("positions.npy").path)
        XCTAssertNotNil(try TrainingData.load(path: data.path).groups(position: nil, velocity: nil).position,
                        "a new run on this dataset would have a position group")

        var o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("c"), steps: 2)
        o.initFrom = model.path
        o.hidden = nil
        let sink = LineSink()
        let run = try TrainingRun(options: o, reporter: sink.reporter)
        XCTAssertEqual(run.groups, ModelGroups(vocabulary: original.vocabulary))
        XCTAssertTrue(sink.text.contains("groups: inputs note 17, tick 209; outputs note 17, tick 209"), sink.text)
        XCTAssertEqual(run.snapshot().parameters.map(\.bitPattern), (original.weights.wx + original.weights.wy).map(\.bitPattern))
        XCTAssertEqual(try run.run(shouldStop: { false }).step, 2)
        let c = try Checkpoint.read(path: root.appendingPathComponent("c/ckpt-2.h5").path)
        XCTAssertTrue(c.groups.isOriginalLayout)
        XCTAssertEqual(c.state.shape, ModelShape(notes: 17, ticks: 209, hidden: 200))
        XCTAssertEqual(c.datasetFingerprint, run.data.fingerprint, "the original layout's fingerprint")

        let refused: [((inout RunOptions) -> Void, String)] = [
            ({ $0.position = true }, "--position differs from the --init-from model \(model.path), which has no position group"),
            ({ $0.velocity = true }, "--velocity differs from the --init-from model \(model.path), which has no velocity group"),
            ({ $0.positionEncoding = .binary },
             "--position-encoding binary differs from the --init-from model \(model.path), which has position encoding none"),
            ({ $0.velocityBins = 8 }, "--velocity-bins 8 differs from the --init-from model \(model.path), which has 0 velocity bins"),
        ]
        for (set, message) in refused {
            var bad = o
            bad.checkpointDirectory = root.appendingPathComponent("refused").path
            set(&bad)
            assertThrows([message]) { try TrainingRun(options: bad, reporter: LineSink().reporter) }
        }
        // Saying what the model has is accepted.
        var same = o
        same.checkpointDirectory = root.appendingPathComponent("same").path
        same.layoutOriginal = true
        same.position = false
        same.velocity = false
        XCTAssertTrue(try TrainingRun(options: same, reporter: LineSink().reporter).groups.isOriginalLayout)
    }

    /// --init-from a groove model: its groups and tables, not the ones the dataset would give.
    func testInitFromAGrooveModelTakesItsGroups() throws {
        let (ckpt, data) = try grooveCheckpoint()
        let trained = try Checkpoint.read(path: ckpt)
        // An exported model with a different velocity table than the dataset's quantiles.
        var groups = trained.groups
        groups.velocity = try VelocityGroup(bins: [1...50, 51...100, 101...110, 111...127], histogram: trained.groups.velocity!.histogram)
        let model = root.appendingPathComponent("groove-model").path
        try ModelDirectory.write(weights: try trained.weights(), groups: groups, to: model)
        var o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent("ft"), steps: 1)
        o.initFrom = model
        o.hidden = nil
        let run = try TrainingRun(options: o, reporter: LineSink().reporter)
        XCTAssertEqual(run.groups, groups)
        XCTAssertNotEqual(run.groups, try TrainingData.load(path: data.path).groups(position: nil, velocity: nil, velocityBins: 4))
        var flat = o
        flat.checkpointDirectory = root.appendingPathComponent("ft2").path
        flat.layoutOriginal = true
        assertThrows(["--layout original differs from the --init-from model \(model), which has groups note, tick, position, velocity"]) {
            try TrainingRun(options: flat, reporter: LineSink().reporter)
        }
    }
}
