// Datasets with velocities.npy and positions.npy: read row for row with events.npy in both
// splits; a per-hit array of another length, shape or range is refused naming the file; the
// groups a run trains follow the arrays the dataset has, and asking for one it lacks names the
// missing file; the class matrix of the groove groups, checked hit by hit.
import DrummerCore
import Encode
import Foundation
import XCTest
@testable import Checkpoints
@testable import Train
@testable import TrainRun

final class TrainingDataGroupsTests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws { root = try RunFixture.temporaryDirectory("data-groups") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    func testVelocitiesAndPositionsAreReadRowForRow() throws {
        try RunFixture.writeGrooveDataset(root, count: 120, validation: 30)
        let d = try TrainingData.load(path: root.path)
        XCTAssertEqual(d.training.velocities, RunFixture.velocities(count: 120))
        XCTAssertEqual(d.training.positions, RunFixture.positions(count: 120))
        XCTAssertEqual(d.validationSplit?.velocities, RunFixture.velocities(count: 30, seed: 8))
        XCTAssertEqual(d.validationSplit?.positions, RunFixture.positions(count: 30, offset: 3))
        XCTAssertTrue(d.hasVelocities)
        XCTAssertTrue(d.hasPositions)
        XCTAssertEqual(d.ppq, 480)
        XCTAssertEqual(d.quantize, 240)
        // The original-layout fingerprint ignores the arrays; a groove model's includes them.
        let plain = root.appendingPathComponent("plain")
        try RunFixture.writeDataset(plain, events: RunFixture.events(count: 120), validation: RunFixture.events(count: 30, seed: 3))
        let p = try TrainingData.load(path: plain.path)
        XCTAssertEqual(d.fingerprint, p.fingerprint)
        XCTAssertNotEqual(d.fingerprint(for: try d.groups(position: true, velocity: true)), d.fingerprint)
    }

    /// Which array, which split, the length found and events.npy's.
    func testPerHitArraysOfAnotherLengthNameTheFileAndBothLengths() throws {
        for split in ["", "validation"] {
            for (file, columns) in [("velocities.npy", 1), ("positions.npy", 2)] {
                for rows in [29, 31, 0] {
                    try? FileManager.default.removeItem(at: root)
                    try RunFixture.writeGrooveDataset(root, count: 30, validation: 30)
                    let dir = split.isEmpty ? root! : root.appendingPathComponent(split)
                    let path = dir.appendingPathComponent(file).path
                    let values = columns == 1 ? [Int32](repeating: 64, count: rows) : RunFixture.positions(count: rows)
                    try NPY.write(int32: values, shape: columns == 1 ? [rows] : [rows, 2], to: path)
                    assertThrows(["\(path): holds \(rows) hits but events.npy beside it holds 30: the files do not belong together"]) {
                        try TrainingData.load(path: root.path)
                    }
                }
            }
        }
    }

    func testPerHitArraysOfAnotherShapeOrTypeAreNamed() throws {
        try RunFixture.writeGrooveDataset(root, count: 20)
        let positions = root.appendingPathComponent("positions.npy").path
        let velocities = root.appendingPathComponent("velocities.npy").path
        let cases: [(String, () throws -> Void, String)] = [
            (positions, { try NPY.write(int32: [Int32](repeating: 0, count: 60), shape: [20, 3], to: positions) },
             "shape [20, 3] is not [hits, 2] (ticks from the bar line, bar length)"),
            (positions, { try NPY.write(int32: RunFixture.positions(count: 20), shape: [40], to: positions) },
             "shape [40] is not [hits, 2] (ticks from the bar line, bar length)"),
            (velocities, { try NPY.write(int32: RunFixture.velocities(count: 20), shape: [20, 1], to: velocities) },
             "shape [20, 1] is not [hits] (velocity 1...127)"),
            (velocities, { try NPY.write(float32: [Float](repeating: 64, count: 20), shape: [20], to: velocities) },
             "dtype <f4 is not an integer type (<i4 or <i8)"),
        ]
        for (path, damage, message) in cases {
            try RunFixture.writeGrooveDataset(root, count: 20)
            try damage()
            assertThrows([path + ": " + message]) { try TrainingData.load(path: root.path) }
        }
    }

    func testValuesOutOfRangeAreNamedByHit() throws {
        let velocities = root.appendingPathComponent("validation/velocities.npy").path
        for bad: Int32 in [0, 128, -5] {
            try RunFixture.writeGrooveDataset(root, count: 20, validation: 12)
            var v = RunFixture.velocities(count: 12, seed: 8)
            v[7] = bad
            try NPY.write(int32: v, shape: [12], to: velocities)
            assertThrows(["\(velocities): hit 7: velocity \(bad) is outside 1...127"]) { try TrainingData.load(path: root.path) }
        }
        let positions = root.appendingPathComponent("positions.npy").path
        for (hit, position, bar) in [(3, 1920, 1920), (5, -1, 1920), (0, 0, 0)] as [(Int, Int32, Int32)] {
            try RunFixture.writeGrooveDataset(root, count: 20, validation: 12)
            var p = RunFixture.positions(count: 20)
            p[2 * hit] = position
            p[2 * hit + 1] = bar
            try NPY.write(int32: p, shape: [20, 2], to: positions)
            assertThrows(["\(positions): hit \(hit): position \(position) in a bar of \(bar) ticks (expected 0 ≤ position < bar length)"]) {
                try TrainingData.load(path: root.path)
            }
        }
    }

    /// No velocities.npy or positions.npy: a new run trains the original layout.
    func testADatasetWithoutTheArraysTrainsTheOriginalLayout() throws {
        try RunFixture.writeDataset(root, events: RunFixture.events(count: 100), validation: RunFixture.events(count: 20, seed: 3))
        let d = try TrainingData.load(path: root.path)
        XCTAssertFalse(d.hasVelocities)
        XCTAssertFalse(d.hasPositions)
        XCTAssertEqual(try d.groups(position: nil, velocity: nil), ModelGroups(vocabulary: RunFixture.vocabulary))
        let sink = LineSink()
        let run = try TrainingRun(options: RunFixture.options(data: root, checkpoints: root.appendingPathComponent("c"), steps: 5),
                                  reporter: sink.reporter)
        XCTAssertTrue(run.groups.isOriginalLayout)
        XCTAssertTrue(sink.text.contains("groups: inputs note 4, tick 5; outputs note 4, tick 5"), sink.text)
        _ = try run.run(shouldStop: { false })
        let c = try Checkpoint.read(path: root.appendingPathComponent("c/ckpt-5.h5").path)
        XCTAssertEqual(c.state.shape, ModelShape(notes: 4, ticks: 5, hidden: 6))
        XCTAssertEqual(c.datasetFingerprint, d.fingerprint)
    }

    /// Each array alone gives its group alone; a split without it leaves the group out.
    func testTheDefaultGroupsFollowTheArraysOfBothSplits() throws {
        try RunFixture.writeGrooveDataset(root, count: 40, validation: 12)
        try FileManager.default.removeItem(at: root.appendingPathComponent("positions.npy"))
        try FileManager.default.removeItem(at: root.appendingPathComponent("validation/positions.npy"))
        var g = try TrainingData.load(path: root.path).groups(position: nil, velocity: nil)
        XCTAssertNil(g.position)
        XCTAssertNotNil(g.velocity)
        XCTAssertEqual(g.inputNames, ["note", "tick", "velocity"])

        try RunFixture.writeGrooveDataset(root, count: 40, validation: 12)
        try FileManager.default.removeItem(at: root.appendingPathComponent("validation/velocities.npy"))
        g = try TrainingData.load(path: root.path).groups(position: nil, velocity: nil)
        XCTAssertNotNil(g.position)
        XCTAssertNil(g.velocity, "validation/ has no velocities.npy")
    }

    /// --position / --velocity on a dataset without the array: the error names the missing file.
    func testAskingForAGroupTheDatasetLacksNamesTheMissingFile() throws {
        try RunFixture.writeDataset(root, events: RunFixture.events(count: 100))
        for (position, velocity, group, file) in [(true, nil, "position", "positions.npy"), (nil, true, "velocity", "velocities.npy")] as [(Bool?, Bool?, String, String)] {
            var o = RunFixture.options(data: root, checkpoints: root.appendingPathComponent("c"), steps: 1)
            o.position = position
            o.velocity = velocity
            assertThrows(["\(root.path): the \(group) group needs \(file), which this dataset lacks "
                          + "(convert it again with this drummer, or train without --\(group))"]) {
                try TrainingRun(options: o, reporter: LineSink().reporter)
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("c").path), "refused before any checkpoint")
        // The training split has them, validation/ does not: validation/ is named.
        try RunFixture.writeGrooveDataset(root, count: 40, validation: 12)
        try FileManager.default.removeItem(at: root.appendingPathComponent("validation/positions.npy"))
        assertThrows(["\(root.path)/validation: the position group needs positions.npy, which this dataset lacks"]) {
            try TrainingData.load(path: root.path).groups(position: true, velocity: nil)
        }
    }

    /// Velocity bins by quantiles: four clusters of 30 hits each give four bins of 30 hits.
    func testQuantileBinsSplitTheTrainingHitsEvenly() throws {
        try RunFixture.writeGrooveDataset(root, count: 120)
        let g = try TrainingData.load(path: root.path).groups(position: nil, velocity: nil, velocityBins: 4)
        let v = try XCTUnwrap(g.velocity)
        var counts = [Int](repeating: 0, count: 4)
        for x in RunFixture.velocities(count: 120) {
            let b = try XCTUnwrap(v.bins.firstIndex { $0.contains(Int(x)) }, "velocity \(x) in no bin")
            counts[b] += 1
        }
        XCTAssertEqual(counts, [30, 30, 30, 30])
        XCTAssertEqual(v.range, Int(RunFixture.velocities(count: 120).min()!)...Int(RunFixture.velocities(count: 120).max()!))
        XCTAssertEqual(g.position, PositionGroup(encoding: .oneHot, slots: 8, ticksPerSlot: 240, ppq: 480, meter: .common))
    }

    /// The class matrix: note, tick, then the slot (one-hot: one column; binary: one per bit,
    /// lowest first) and the velocity bin, hit by hit.
    func testClassMatrixOfTheGrooveGroups() throws {
        try RunFixture.writeGrooveDataset(root, count: 40)
        let d = try TrainingData.load(path: root.path)
        let events = RunFixture.events(count: 40), velocities = RunFixture.velocities(count: 40)
        for encoding in PositionEncoding.allCases {
            let g = try d.groups(position: true, velocity: true, encoding: encoding, velocityBins: 4)
            let bins = try XCTUnwrap(g.velocity?.bins)
            let (classes, clampedPositions, clampedVelocities) = try d.classes(d.training, for: g)
            XCTAssertEqual([clampedPositions, clampedVelocities], [0, 0])
            var expected: [Int32] = []
            for e in 0..<40 {
                let slot = e % 8  // eighth notes from the bar line, slots of an eighth
                let bin = try XCTUnwrap(bins.firstIndex { $0.contains(Int(velocities[e])) })
                expected += [events[2 * e], events[2 * e + 1]]
                expected += encoding == .oneHot ? [Int32(slot)] : [Int32(slot & 1), Int32(slot >> 1 & 1), Int32(slot >> 2 & 1)]
                expected.append(Int32(bin))
            }
            XCTAssertEqual(classes, expected, encoding.rawValue)
        }
    }
}
