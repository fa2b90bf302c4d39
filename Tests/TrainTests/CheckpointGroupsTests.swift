// Checkpoints of groove models: the groups (position one-hot or binary, velocity bins and
// histogram) survive a write and a read, in the documented HDF5 layout; an original-layout
// checkpoint has an empty (or no) /groups and reads as the original layout; damaged groups
// are refused by name.
import DrummerCore
import Foundation
import HDF5Kit
import XCTest
@testable import Checkpoints
@testable import Train
@testable import TrainRun

final class CheckpointGroupsTests: XCTestCase {
    var root: URL!
    var data: URL!

    override func setUpWithError() throws {
        root = try RunFixture.temporaryDirectory("ckpt-groups")
        data = root.appendingPathComponent("data")
        try RunFixture.writeGrooveDataset(data, count: 120, validation: 30)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: root)
    }

    func train(steps: Int, dir: String = "c", configure: (inout RunOptions) -> Void = { _ in }) throws -> TrainingRun {
        var o = RunFixture.options(data: data, checkpoints: root.appendingPathComponent(dir), steps: steps)
        configure(&o)
        let run = try TrainingRun(options: o, reporter: LineSink().reporter)
        _ = try run.run(shouldStop: { false })
        return run
    }

    /// The training split's velocity counts, 1...127 (index v − 1), counted here.
    var histogram: [Int] {
        var h = [Int](repeating: 0, count: 127)
        for v in RunFixture.velocities(count: 120) { h[Int(v) - 1] += 1 }
        return h
    }

    func testOneHotPositionAndVelocityRoundTrip() throws {
        let run = try train(steps: 5) { $0.velocityBins = 4 }
        let path = root.appendingPathComponent("c/ckpt-5.h5").path
        let c = try Checkpoint.read(path: path)
        // 8 slots of an eighth note (--quantize 240) in 4/4 bars of 1920 ticks, 4 velocity bins.
        XCTAssertEqual(c.groups.position, PositionGroup(encoding: .oneHot, slots: 8, ticksPerSlot: 240, ppq: 480, meter: .common))
        let velocity = try XCTUnwrap(c.groups.velocity)
        XCTAssertEqual(velocity.histogram, histogram)
        XCTAssertEqual(velocity.bins.count, 4)
        XCTAssertEqual(velocity.range, 34...116, "the bins cover the lowest to the highest velocity of the training split")
        XCTAssertEqual(c.groups, run.groups)
        XCTAssertEqual(c.state.shape, ModelShape(inputGroups: [4, 5, 8, 4], outputGroups: [4, 5, 4], hidden: 6))
        XCTAssertEqual(c.state, run.snapshot())
        XCTAssertEqual(try CheckpointReader.loadModel(path: path).groups, run.groups)

        // The layout on disk, read with HDF5Kit directly (Checkpoint.swift's table).
        let f = try H5File.open(path)
        defer { try? f.close() }
        XCTAssertEqual(Set(try f.group("groups").members()), ["position", "velocity"])
        let p = try f.group("groups/position")
        XCTAssertEqual(try p.stringAttribute("encoding"), "onehot")
        XCTAssertEqual(try p.int64Attribute("slots"), 8)
        XCTAssertEqual(try p.int64Attribute("ticks_per_slot"), 240)
        XCTAssertEqual(try p.int64Attribute("ppq"), 480)
        XCTAssertEqual(try p.stringAttribute("meter"), "4/4")
        let bins = try f.dataset("groups/velocity/bins")
        XCTAssertEqual(try bins.shape(), [4, 2])
        XCTAssertEqual(try bins.read(Int64.self), velocity.bins.flatMap { [Int64($0.lowerBound), Int64($0.upperBound)] })
        XCTAssertEqual(try f.dataset("groups/velocity/histogram").read(Int64.self), histogram.map(Int64.init))
        XCTAssertEqual(try f.dataset("model/Wx").shape(), [4 + 5 + 8 + 4 + 6 + 1, 24])
        XCTAssertEqual(try f.dataset("model/Wy").shape(), [7, 4 + 5 + 4])
    }

    func testBinaryPositionRoundTripWithAndWithoutVelocity() throws {
        for velocity in [true, false] {
            let dir = "c-\(velocity)"
            let run = try train(steps: 5, dir: dir) { o in
                o.positionEncoding = .binary
                o.velocity = velocity
            }
            let path = root.appendingPathComponent("\(dir)/ckpt-5.h5").path
            let c = try Checkpoint.read(path: path)
            XCTAssertEqual(c.groups, run.groups)
            XCTAssertEqual(c.groups.position, PositionGroup(encoding: .binary, slots: 8, ticksPerSlot: 240, ppq: 480, meter: .common))
            XCTAssertEqual(c.groups.velocity?.histogram, velocity ? histogram : nil)
            // Slots 0...7: three bits, one group of 2 each, lowest bit first.
            let bins = c.groups.velocity?.bins.count ?? 0
            XCTAssertEqual(c.state.shape.inputGroups, [4, 5, 2, 2, 2] + (velocity ? [bins] : []))
            XCTAssertEqual(c.state.shape.outputGroups, [4, 5] + (velocity ? [bins] : []))
            let f = try H5File.open(path)
            defer { try? f.close() }
            XCTAssertEqual(try f.group("groups/position").stringAttribute("encoding"), "binary")
            XCTAssertEqual(Set(try f.group("groups").members()), velocity ? ["position", "velocity"] : ["position"])
        }
    }

    /// A new run on a dataset without velocities.npy and positions.npy: the original layout;
    /// its checkpoint's /groups is empty and it reads back as the original layout.
    func testOriginalLayoutCheckpointHasNoGroups() throws {
        let plain = root.appendingPathComponent("plain")
        try RunFixture.writeDataset(plain, events: RunFixture.events(count: 100))
        var o = RunFixture.options(data: plain, checkpoints: root.appendingPathComponent("o"), steps: 5)
        o.checkpointEvery = 5
        let run = try TrainingRun(options: o, reporter: LineSink().reporter)
        _ = try run.run(shouldStop: { false })
        XCTAssertTrue(run.groups.isOriginalLayout)
        let path = root.appendingPathComponent("o/ckpt-5.h5").path
        let c = try Checkpoint.read(path: path)
        XCTAssertEqual(c.groups, ModelGroups(vocabulary: RunFixture.vocabulary))
        XCTAssertEqual(c.state.shape, ModelShape(notes: 4, ticks: 5, hidden: 6))
        let f = try H5File.open(path)
        defer { try? f.close() }
        XCTAssertEqual(try f.group("groups").members(), [])
        XCTAssertTrue(try CheckpointReader.loadModel(path: path).groups.isOriginalLayout)
    }

    /// An HDF5 writer that leaves out every object under /groups.
    struct WithoutGroups: HDF5Writing {
        let base: HDF5Writing
        func skip(_ path: String) -> Bool { path == "/groups" || path.hasPrefix("/groups/") }
        func createGroup(_ path: String) throws { if !skip(path) { try base.createGroup(path) } }
        func write(_ path: String, float32 values: [Float], shape: [Int]) throws {
            if !skip(path) { try base.write(path, float32: values, shape: shape) }
        }
        func write(_ path: String, int64 values: [Int64], shape: [Int]) throws {
            if !skip(path) { try base.write(path, int64: values, shape: shape) }
        }
        func write(_ path: String, uint64 values: [UInt64], shape: [Int]) throws {
            if !skip(path) { try base.write(path, uint64: values, shape: shape) }
        }
        func setAttribute(_ object: String, _ name: String, int64 value: Int64) throws {
            if !skip(object) { try base.setAttribute(object, name, int64: value) }
        }
        func setAttribute(_ object: String, _ name: String, double value: Double) throws {
            if !skip(object) { try base.setAttribute(object, name, double: value) }
        }
        func setAttribute(_ object: String, _ name: String, string value: String) throws {
            if !skip(object) { try base.setAttribute(object, name, string: value) }
        }
    }

    /// Checkpoint.swift: "/groups (version 2; absent or empty: the original layout)". A version 2
    /// file without /groups at all reads as the original layout.
    func testVersion2CheckpointWithoutGroupsReadsAsTheOriginalLayout() throws {
        let plain = root.appendingPathComponent("plain")
        try RunFixture.writeDataset(plain, events: RunFixture.events(count: 100))
        let run = try TrainingRun(options: RunFixture.options(data: plain, checkpoints: root.appendingPathComponent("o"), steps: 2),
                                  reporter: LineSink().reporter)
        _ = try run.run(shouldStop: { false })
        let ckpt = run.checkpoint()
        let path = root.appendingPathComponent("nogroups.h5").path
        try CheckpointArchive.create(path: path) { try ckpt.encode(into: WithoutGroups(base: $0)) }
        let f = try H5File.open(path)
        XCTAssertFalse(try f.exists("groups"))
        try f.close()
        let c = try Checkpoint.read(path: path)
        XCTAssertEqual(c.formatVersion, 2)
        XCTAssertEqual(c.groups, ModelGroups(vocabulary: RunFixture.vocabulary))
        XCTAssertEqual(c.state, ckpt.state)
    }

    /// Groups that are not valid tables, or that do not fit the stored weights, are refused
    /// naming the file and the field.
    func testDamagedGroupsAreRefusedByName() throws {
        let run = try train(steps: 2) { $0.velocityBins = 4 }
        let good = run.checkpoint()
        let path = root.appendingPathComponent("bad.h5").path

        var gap = good
        let bins = try XCTUnwrap(gap.groups.velocity?.bins)
        gap.groups.velocity?.bins[1] = (bins[1].lowerBound + 1)...bins[1].upperBound
        try gap.write(to: path)
        assertThrows(["\(path): /groups/velocity velocity bins \(bins[0]) and \((bins[1].lowerBound + 1)...bins[1].upperBound) are not consecutive"]) {
            try Checkpoint.read(path: path)
        }

        var slots = good
        slots.groups.position?.slots = 9
        try slots.write(to: path)
        assertThrows(["\(path): /model/Wx has shape [28, 24], expected [29, 24] for input groups note 4, tick 5, position 9, velocity 4, hidden size 6"]) {
            try Checkpoint.read(path: path)
        }

        var noVelocity = good
        noVelocity.groups.velocity = nil
        try noVelocity.write(to: path)
        assertThrows(["\(path): /model/Wx has shape [28, 24], expected [24, 24] for input groups note 4, tick 5, position 8, hidden size 6"]) {
            try Checkpoint.read(path: path)
        }
    }
}
