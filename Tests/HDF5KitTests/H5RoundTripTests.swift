import Foundation
import XCTest
@testable import FileOutput
@testable import HDF5Kit

private let shapes: [[Int]] = [[], [5], [3, 4], [2, 3, 4], [0, 3]]

/// Dataset name for a shape: "rank0/scalar", "rank2/3x4", ...
private func datasetName(_ shape: [Int]) -> String {
    "rank\(shape.count)/" + (shape.isEmpty ? "scalar" : shape.map(String.init).joined(separator: "x"))
}

final class H5RoundTripTests: XCTestCase {
    private func roundTrip<T: H5Numeric & Equatable>(_ type: T.Type, make: (Int) -> T, in dir: URL) throws {
        let path = dir.appendingPathComponent("\(T.h5dtype).h5").path
        var expected: [[Int]: [T]] = [:]
        do {
            let f = try H5File.create(path)
            for shape in shapes {
                let values = (0..<shape.reduce(1, *)).map(make)
                expected[shape] = values
                let ds = try f.createDataset(datasetName(shape), values: values, shape: shape)
                XCTAssertEqual(try ds.shape(), shape)
                XCTAssertEqual(try ds.dtype(), T.h5dtype)
            }
            try f.close()
        }
        let f = try H5File.open(path)
        for shape in shapes {
            let name = datasetName(shape)
            let ds = try f.dataset(name)
            XCTAssertEqual(ds.objectPath, "/" + name)
            XCTAssertEqual(try ds.shape(), shape, name)
            XCTAssertEqual(try ds.dtype(), T.h5dtype, name)
            XCTAssertEqual(try ds.read(T.self), expected[shape], "\(T.self) \(name)")
            XCTAssertEqual(try f.read(name, as: T.self, shape: shape), expected[shape])
        }
        XCTAssertEqual(try f.dataset("rank0/scalar").readScalar(T.self), make(0))
    }

    func testEveryNumericTypeAndRank() throws {
        let dir = try makeTemporaryDirectory(self)
        try roundTrip(Float.self, make: { Float($0) * 0.25 - 3 }, in: dir)
        try roundTrip(Double.self, make: { Double($0) / 3 + 1e-300 }, in: dir)
        try roundTrip(Int32.self, make: { Int32($0) * 1_000_003 - .max / 2 }, in: dir)
        try roundTrip(Int64.self, make: { Int64($0) * 3_000_000_000_017 - .max / 3 }, in: dir)
        try roundTrip(UInt64.self, make: { UInt64.max - UInt64($0) * 12_345_678_901 }, in: dir)
    }

    func testSpecialFloatsAreBitExact() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("f.h5").path
        let values: [Float] = [.nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude]
        try H5File.create(path).createDataset("x", values: values, shape: [6])
        XCTAssertEqual(try H5File.open(path).read("x", as: Float.self).map(\.bitPattern), values.map(\.bitPattern))
    }

    func testStringsAndAttributes() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("s.h5").path
        let words = ["kick", "Schlagzeug — ドラム 🥁", "", "snare"]
        do {
            let f = try H5File.create(path)
            try f.createDataset("meta/dataset_path", string: "/data/groove/X.npy")
            try f.createDataset("meta/words", strings: words, shape: [2, 2])
            try f.setAttribute("format", string: "drummer-checkpoint")
            try f.setAttribute("version", int64: 3)
            let g = try f.group("meta")
            try g.setAttribute("learning_rate", double: 0.001)
            try g.setAttribute("note", string: "ü 🥁")
            let ds = try f.dataset("meta/words")
            try ds.setAttribute("count", int64: -4)
            try ds.setAttribute("count", int64: 4)  // replaces
            try ds.setAttribute("scale", double: -2.5e-8)
        }
        let f = try H5File.open(path)
        XCTAssertEqual(try f.dataset("meta/dataset_path").readString(), "/data/groove/X.npy")
        XCTAssertEqual(try f.dataset("meta/dataset_path").shape(), [])
        XCTAssertEqual(try f.dataset("meta/dataset_path").dtype(), .string)
        XCTAssertEqual(try f.dataset("meta/words").readStrings(), words)
        XCTAssertEqual(try f.dataset("meta/words").shape(), [2, 2])
        XCTAssertEqual(try f.stringAttribute("format"), "drummer-checkpoint")
        XCTAssertEqual(try f.int64Attribute("version"), 3)
        XCTAssertEqual(try f.attributeNames(), ["format", "version"])
        let g = try f.group("/meta")
        XCTAssertEqual(try g.doubleAttribute("learning_rate"), 0.001)
        XCTAssertEqual(try g.stringAttribute("note"), "ü 🥁")
        let ds = try g.dataset("words")
        XCTAssertEqual(ds.objectPath, "/meta/words")
        XCTAssertEqual(try ds.attribute("count"), .int64(4))
        XCTAssertEqual(try ds.attribute("scale"), .double(-2.5e-8))
        XCTAssertEqual(try ds.attributeNames(), ["count", "scale"])
        XCTAssertTrue(try ds.hasAttribute("scale"))
        XCTAssertFalse(try ds.hasAttribute("nope"))
    }

    func testGroupsMembersExistenceAndKinds() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("g.h5").path
        let f = try H5File.create(path)
        let deep = try f.createGroup("a/b/c")
        XCTAssertEqual(deep.objectPath, "/a/b/c")
        try deep.createDataset("d", values: [Int32(1)], shape: [1])
        try f.createDataset("z", values: [1.0], shape: [1])
        try f.createGroup("m")
        XCTAssertEqual(try f.members(), ["a", "m", "z"])
        XCTAssertEqual(try f.group("a").members(), ["b"])
        XCTAssertEqual(try f.group("a/b").group("c").members(), ["d"])
        for p in ["/", "a", "/a/b", "a/b/c", "a/b/c/d", "z"] { XCTAssertTrue(try f.exists(p), p) }
        for p in ["", "b", "a/x", "a/b/c/d/e", "z/y", "/q/r"] { XCTAssertFalse(try f.exists(p), p) }
        XCTAssertEqual(try f.kind(of: "a/b"), .group)
        XCTAssertEqual(try f.kind(of: "a/b/c/d"), .dataset)
        XCTAssertEqual(try f.group("a").kind(of: "b/c/d"), .dataset)
        XCTAssertEqual(try f.dataset("/a/b/c/d").read(Int32.self), [1])
    }

    func testOverwriteValuesAndReopenReadWrite() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("w.h5").path
        try H5File.create(path).createDataset("h", values: [Float](repeating: 0, count: 6), shape: [2, 3])
        do {
            let f = try H5File.open(path, mode: .readWrite)
            try f.dataset("h").write([Float]([1, 2, 3, 4, 5, 6]))
            try f.setAttribute("step", int64: 42)
            try f.flush()
        }
        let f = try H5File.open(path)
        XCTAssertEqual(try f.read("h", as: Float.self), [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(try f.int64Attribute("step"), 42)
    }

    func testWriteAtomically() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("ckpt.h5").path
        let n = try H5File.writeAtomically(to: path) { f -> Int in
            XCTAssertFalse(FileManager.default.fileExists(atPath: path))
            // The temporary carries the tool's marker (the sweeper's to remove once this process is
            // gone) and is registered for an interrupt to remove.
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            XCTAssertEqual(names.count, 1)
            XCTAssertEqual(names.first.flatMap { TemporaryFiles.parse($0) }?.base, "ckpt.h5", "\(names)")
            XCTAssertEqual(TemporaryFiles.inFlight, [dir.appendingPathComponent(names[0]).path])
            try f.createDataset("Wx", values: [Float](repeating: 0.5, count: 8), shape: [2, 4])
            return 8
        }
        XCTAssertEqual(n, 8)
        XCTAssertEqual(TemporaryFiles.inFlight, [])
        XCTAssertEqual(try H5File.open(path).read("Wx", as: Float.self, shape: [2, 4]).count, 8)
        // A failing body leaves the old file in place and no temporary file behind.
        struct Boom: Error {}
        XCTAssertThrowsError(try H5File.writeAtomically(to: path) { f in
            try f.createDataset("Wx", values: [Float(1)], shape: [1])
            throw Boom()
        }) { XCTAssertTrue($0 is Boom) }
        XCTAssertEqual(try H5File.open(path).read("Wx", as: Float.self), [Float](repeating: 0.5, count: 8))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["ckpt.h5"])
    }

    func testCheckpointLikeLayout() throws {
        // The layout the trainer stores: matrices, per-stream state, RNG words, counters, strings.
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("model.h5").path
        let wx = (0..<(7 * 12)).map { Float($0) / 100 }
        let rngState: [UInt64] = [0x0123_4567_89AB_CDEF, .max, 1, 0x8000_0000_0000_0000]
        try H5File.writeAtomically(to: path) { f in
            try f.setAttribute("format", string: "drummer-lstm-checkpoint")
            try f.setAttribute("hyperparameters", string: "{\"hidden\": 3, \"lr\": 0.1}")
            try f.createDataset("weights/Wx", values: wx, shape: [7, 12])
            try f.createDataset("optimizer/Wx_m", values: wx.map { -$0 }, shape: [7, 12])
            try f.createDataset("state/h", values: [Float](repeating: 0.1, count: 6), shape: [2, 3])
            try f.createDataset("rng/state", values: rngState, shape: [4])
            try f.createDataset("progress/step", scalar: Int64(123_456))
            try f.createDataset("vocab/ix_to_note", values: [Int32(36), 38, 42], shape: [3])
            try f.createDataset("data/path", string: "/work/data/X.npy")
            try f.createDataset("data/fingerprint", string: "sha256:abc")
        }
        let f = try H5File.open(path)
        XCTAssertEqual(try f.read("weights/Wx", as: Float.self, shape: [7, 12]), wx)
        XCTAssertEqual(try f.read("rng/state", as: UInt64.self), rngState)
        XCTAssertEqual(try f.dataset("progress/step").readScalar(Int64.self), 123_456)
        XCTAssertEqual(try f.read("vocab/ix_to_note", as: Int32.self), [36, 38, 42])
        XCTAssertEqual(try f.dataset("data/fingerprint").readString(), "sha256:abc")
        XCTAssertEqual(try f.stringAttribute("format"), "drummer-lstm-checkpoint")
    }

    func testHandlesKeepTheFileOpenAndCloseIsExplicit() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("c.h5").path
        var ds: H5Dataset?
        do {
            let f = try H5File.create(path)
            ds = try f.createDataset("x", values: [Int64(7)], shape: [])
        }
        // The file object is gone from scope but the dataset still works.
        XCTAssertEqual(try ds?.readScalar(Int64.self), 7)
        // A created file reaches the disk on flush()/close(), or when its last handle goes.
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, 0)
        ds = nil
        let f = try H5File.open(path)
        let g = try f.dataset("x")
        try f.close()
        try f.close()  // harmless
        assertHDF5Error(try g.read(Int64.self)) { $0 == .fileClosed }
        assertHDF5Error(try f.members()) { $0 == .fileClosed }
    }
}
