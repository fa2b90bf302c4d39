// Datasets with velocities.npy and positions.npy (what the grid reads): read row for row with
// events.npy in both splits; a per-hit array of another length, shape or range is refused
// naming the file.
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
        // The original-layout fingerprint ignores the arrays.
        let plain = root.appendingPathComponent("plain")
        try RunFixture.writeDataset(plain, events: RunFixture.events(count: 120), validation: RunFixture.events(count: 30, seed: 3))
        let p = try TrainingData.load(path: plain.path)
        XCTAssertEqual(d.fingerprint, p.fingerprint)
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
}
