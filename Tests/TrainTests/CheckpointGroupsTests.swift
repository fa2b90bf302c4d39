// The groups a checkpoint stores: an original-layout checkpoint has an empty (or no) /groups
// and reads as the original layout; a checkpoint of the retired event layout (a /groups/position,
// /groups/lookback or /groups/velocity) is refused naming the group and the reason. (A grid
// checkpoint's /groups/grid is written, read and resumed in DrummerCLITests' GridCLITests.)
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

    /// A checkpoint written by a drummer that still had the event layout: its /groups/position,
    /// /groups/lookback or /groups/velocity is refused by name, with where to read why.
    func testEventLayoutGroupsAreRefusedByName() throws {
        let plain = root.appendingPathComponent("plain")
        try RunFixture.writeDataset(plain, events: RunFixture.events(count: 100))
        let run = try TrainingRun(options: RunFixture.options(data: plain, checkpoints: root.appendingPathComponent("o"), steps: 2),
                                  reporter: LineSink().reporter)
        _ = try run.run(shouldStop: { false })
        let ckpt = run.checkpoint()
        for group in ["position", "lookback", "velocity"] {
            let path = root.appendingPathComponent("event-\(group).h5").path
            try CheckpointArchive.create(path: path) { try ckpt.encode(into: WithEventGroup(base: $0, group: group)) }
            assertThrows(["\(path): /groups/\(group) belongs to the event layout, which drummer no longer reads "
                          + "(docs/research.md, The event layout); checkpoints of the 2017 layout and of the grid read"]) {
                try Checkpoint.read(path: path)
            }
        }
    }

    /// An HDF5 writer that adds an empty /groups/`group` (the event layout's) beside /groups.
    struct WithEventGroup: HDF5Writing {
        let base: HDF5Writing
        let group: String
        func createGroup(_ path: String) throws {
            try base.createGroup(path)
            if path == "/groups" { try base.createGroup("/groups/" + group) }
        }
        func write(_ path: String, float32 values: [Float], shape: [Int]) throws { try base.write(path, float32: values, shape: shape) }
        func write(_ path: String, int64 values: [Int64], shape: [Int]) throws { try base.write(path, int64: values, shape: shape) }
        func write(_ path: String, uint64 values: [UInt64], shape: [Int]) throws { try base.write(path, uint64: values, shape: shape) }
        func setAttribute(_ object: String, _ name: String, int64 value: Int64) throws { try base.setAttribute(object, name, int64: value) }
        func setAttribute(_ object: String, _ name: String, double value: Double) throws { try base.setAttribute(object, name, double: value) }
        func setAttribute(_ object: String, _ name: String, string value: String) throws { try base.setAttribute(object, name, string: value) }
    }
}
