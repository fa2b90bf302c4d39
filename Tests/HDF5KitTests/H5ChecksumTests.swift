// Checksummed files: CreateOptions' checksummed metadata (libver bounds V110),
// Fletcher-32 chunks, and the user block.
import Foundation
import XCTest
@testable import HDF5Kit

final class H5ChecksumTests: XCTestCase {
    private let variants: [(String, H5File.CreateOptions)] = [
        ("default", H5File.CreateOptions()),
        ("metadata", H5File.CreateOptions(checksummedMetadata: true)),
        ("fletcher32", H5File.CreateOptions(fletcher32: true)),
        ("checksummed", .checksummed),
        ("checksummed+ub512", H5File.CreateOptions(checksummedMetadata: true, fletcher32: true, userBlockSize: 512)),
        ("ub1024", H5File.CreateOptions(userBlockSize: 1024)),
    ]

    func testEveryOptionRoundTripsTheSameData() throws {
        let dir = try makeTemporaryDirectory(self)
        let reference = dir.appendingPathComponent("reference.h5").path
        try H5File.writeAtomically(to: reference) { try writeCheckpointLikeSample($0) }
        let expected = try canonicalDump(try H5File.open(reference))
        XCTAssertEqual(expected.count, 38, expected.joined(separator: "\n"))
        for (name, options) in variants {
            let path = dir.appendingPathComponent("\(name).h5").path
            try H5File.writeAtomically(to: path, options: options) { try writeCheckpointLikeSample($0) }
            let f = try H5File.open(path)
            XCTAssertEqual(try canonicalDump(f), expected, name)
            XCTAssertEqual(try f.userBlockSize(), options.userBlockSize, name)
            XCTAssertEqual(f.options.userBlockSize, options.userBlockSize, name)
            // The superblock follows the user block: version 3 (checksummed) for
            // libver bounds V110, version 0 (no checksum) otherwise.
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let sb = options.userBlockSize
            XCTAssertEqual(Array(bytes[sb..<(sb + 8)]), Superblock.signature, name)
            XCTAssertEqual(bytes[sb + 8], options.checksummedMetadata ? 3 : 0, name)
            XCTAssertTrue(bytes.prefix(sb).allSatisfy { $0 == 0 }, "\(name): user block not zero")
        }
    }

    func testStorageFollowsTheOptions() throws {
        let dir = try makeTemporaryDirectory(self)
        for (name, options) in variants {
            let path = dir.appendingPathComponent("\(name).h5").path
            try H5File.writeAtomically(to: path, options: options) { try writeCheckpointLikeSample($0) }
            let f = try H5File.open(path)
            for ds in ["model/Wx", "model/Wy", "state/h", "optimizer/mean", "rng/state", "data/words"] {
                let s = try f.dataset(ds).storage()
                if options.fletcher32 {
                    XCTAssertTrue(s.fletcher32, "\(name) \(ds)")
                    guard case .chunked = s.layout else { return XCTFail("\(name) \(ds): \(s)") }
                } else {
                    XCTAssertEqual(s, H5Storage(layout: .contiguous, filters: []), "\(name) \(ds)")
                }
            }
            XCTAssertEqual(try f.dataset("model/Wx").storage().layout, options.fletcher32 ? .chunked([40, 100]) : .contiguous)
            // Scalars and empty arrays cannot be chunked: compact, in their object header.
            for ds in ["rng/seed", "state/empty", "data/path"] {
                XCTAssertEqual(try f.dataset(ds).storage(),
                               H5Storage(layout: options.fletcher32 ? .compact : .contiguous, filters: []), "\(name) \(ds)")
            }
        }
    }

    func testChunkShapes() throws {
        XCTAssertEqual(chunkShape([40, 100], itemSize: 4), [40, 100])
        XCTAssertEqual(chunkShape([600, 1000], itemSize: 4), [262, 1000])
        XCTAssertEqual(chunkShape([3, 1_000_000], itemSize: 8), [1, 131_072])
        XCTAssertEqual(chunkShape([2, 3, 4], itemSize: 8), [2, 3, 4])
        XCTAssertEqual(chunkShape([5], itemSize: 2_000_000), [1])
        // A dataset of several chunks reads back whole.
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("big.h5").path
        let values = (0..<(600 * 1000)).map { Float($0 % 9973) / 7 }
        try H5File.writeAtomically(to: path, options: .checksummed) { try $0.createDataset("w", values: values, shape: [600, 1000]) }
        let f = try H5File.open(path)
        XCTAssertEqual(try f.dataset("w").storage(), H5Storage(layout: .chunked([262, 1000]), filters: [3]))
        XCTAssertEqual(try f.read("w", as: Float.self, shape: [600, 1000]), values)
    }

    func testFletcher32MismatchIsATypedError() throws {
        let dir = try makeTemporaryDirectory(self)
        let values = (0..<4000).map { Float($0) * 0.001 + 1 }
        let pattern = values[100..<104].withUnsafeBytes { Data($0) }
        for options in [H5File.CreateOptions.checksummed, H5File.CreateOptions()] {
            let path = dir.appendingPathComponent("f\(options.fletcher32).h5").path
            try H5File.writeAtomically(to: path, options: options) { try $0.createDataset("w", values: values, shape: [40, 100]) }
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            let at = try XCTUnwrap(bytes.range(of: pattern)).lowerBound
            bytes[at + 1] ^= 0x10  // one bit of values[100]
            try bytes.write(to: URL(fileURLWithPath: path))
            let f = try H5File.open(path)
            if options.fletcher32 {
                let e = assertHDF5Error(try f.read("w", as: Float.self)) { $0 == .checksumMismatch }
                XCTAssertEqual(e?.call, "H5Dread")
                XCTAssertEqual(e?.object, "/w")
                XCTAssertEqual(e?.file, path)
                XCTAssertTrue(e?.description.hasPrefix("\(path): /w: checksum mismatch: the file is corrupt [H5Dread] (") ?? false,
                              e?.description ?? "")
                XCTAssertTrue(e?.detail.contains("Fletcher32") ?? false, e?.description ?? "")
            } else {
                // Without the filter the damage goes unnoticed: one value is silently wrong.
                let read = try f.read("w", as: Float.self)
                XCTAssertEqual(zip(read, values).filter { $0 != $1 }.count, 1)
            }
        }
    }

    func testDamagedMetadataIsRefused() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("m.h5").path
        try H5File.writeAtomically(to: path, options: .checksummed) { f in
            try f.createDataset("a", values: [Float](repeating: 1, count: 10), shape: [10])
            try f.createDataset("b", values: [Int64(5)], shape: [1])
        }
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        // Superblock (the end-of-file address): refused at open.
        var bytes = original
        bytes[30] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: path))
        let s = assertHDF5Error(try H5File.open(path)) { $0 == .checksumMismatch }
        XCTAssertEqual(s?.call, "H5Fopen")
        // Each object header ("OHDR" + version 2): a flipped bit inside it is refused.
        var headers: [Int] = []
        var from = original.startIndex
        while let r = original.range(of: Data("OHDR".utf8), in: from..<original.endIndex) {
            headers.append(r.lowerBound)
            from = r.upperBound
        }
        XCTAssertEqual(headers.count, 3)  // the root group, a, b
        for h in headers {
            bytes = original
            bytes[h + 10] ^= 0x04
            try bytes.write(to: URL(fileURLWithPath: path))
            do {
                let dump = try canonicalDump(try H5File.open(path))
                XCTFail("a damaged object header at \(h) was read: \(dump)")
            } catch let e as HDF5Error {
                XCTAssertEqual(e.kind, .checksumMismatch, e.description)
                XCTAssertFalse(e.description.contains("\n"))
            }
        }
    }

    func testUserBlockIsTheCallers() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("ub.h5").path
        var seen: [UInt8] = []
        let options = H5File.CreateOptions(checksummedMetadata: true, fletcher32: true, userBlockSize: 512)
        try H5File.writeAtomically(to: path, options: options, userBlock: { rest in
            seen = Array(rest)
            // A header the caller checks before libhdf5 opens the file: magic, length, a digest.
            return Array("DRUMMER-CKPT\0".utf8) + withUnsafeBytes(of: UInt64(rest.count).littleEndian, Array.init)
                + withUnsafeBytes(of: Superblock.lookup3(rest).littleEndian, Array.init)
        }) { f in
            try writeCheckpointLikeSample(f)
        }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(Array(bytes[0..<13]), Array("DRUMMER-CKPT\0".utf8))
        XCTAssertEqual(Array(bytes[512...]), seen)  // the hook saw exactly the rest of the file
        XCTAssertEqual(bytes[13..<21].reversed().reduce(0) { $0 << 8 | Int($1) }, bytes.count - 512)
        let digest = seen.withUnsafeBytes { Superblock.lookup3($0) }
        XCTAssertEqual(bytes[21..<25].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }, digest)
        XCTAssertTrue(bytes[25..<512].allSatisfy { $0 == 0 })
        let f = try H5File.open(path)
        XCTAssertEqual(try f.userBlockSize(), 512)
        XCTAssertEqual(try f.stringAttribute("format"), "drummer-lstm-checkpoint")
        XCTAssertEqual(try f.read("model/Wx", as: Float.self).count, 4000)
        try f.close()
        // A file opened read-write keeps its user block when written back.
        let rw = try H5File.open(path, mode: .readWrite)
        XCTAssertEqual(rw.options.userBlockSize, 512)
        try rw.setAttribute("step", int64: 7)
        try rw.close()
        let after = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(Array(after[0..<512]), Array(bytes[0..<512]))
        XCTAssertEqual(try H5File.open(path).int64Attribute("step"), 7)
    }

    func testUserBlockArgumentsAreChecked() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("x.h5").path
        for size in [1, 100, 256, 513, 768, -512] {
            assertHDF5Error(try H5File.create(path, options: H5File.CreateOptions(userBlockSize: size))) {
                $0 == .invalidArgument("user block size must be 0 or a power of two ≥ 512, not \(size)")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        for size in [512, 1024, 4096] {
            try H5File.create(path, options: H5File.CreateOptions(userBlockSize: size)).close()
            XCTAssertEqual(try H5File.open(path).userBlockSize(), size)
        }
        // Contents larger than the user block: refused, nothing left behind.
        assertHDF5Error(try H5File.writeAtomically(to: path, options: H5File.CreateOptions(userBlockSize: 512),
                                                   userBlock: { _ in [UInt8](repeating: 1, count: 513) }) { _ in }) {
            $0 == .invalidArgument("user block contents are 513 bytes, the user block holds 512")
        }
        assertHDF5Error(try H5File.writeAtomically(to: path, userBlock: { _ in [1] }) { _ in }) {
            $0 == .invalidArgument("user block contents are 1 bytes, the user block holds 0")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["x.h5"])
        XCTAssertEqual(try H5File.open(path).userBlockSize(), 4096)
    }

    func testLookup3AndTheSuperblockChecksum() throws {
        // Test vectors from lookup3.c's driver.
        XCTAssertEqual(Superblock.lookup3(UnsafeRawBufferPointer(start: nil, count: 0)), 0xdead_beef)
        let text = Array("Four score and seven years ago".utf8)
        XCTAssertEqual(text.withUnsafeBytes { Superblock.lookup3($0) }, 0x1777_0551)
        XCTAssertEqual(text.withUnsafeBytes { Superblock.lookup3($0, initval: 1) }, 0xcd62_8161)
        // The superblock HDF5Kit writes carries a valid checksum over its first 44 bytes.
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("s.h5").path
        try H5File.writeAtomically(to: path, options: .checksummed) { try $0.setAttribute("a", int64: 1) }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let stored = bytes[44..<48].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        XCTAssertEqual(bytes[0..<44].withUnsafeBytes { Superblock.lookup3($0) }, stored)
        XCTAssertEqual(bytes[11], 0)  // file consistency flags clear: not "open for writing"
    }

    func testStringsAreStoredInsideTheChecksums() throws {
        // With the options, a string's bytes sit next to its checksummed header or
        // chunk (fixed-length), not in the global heap ("GCOL"), which has no checksum.
        let dir = try makeTemporaryDirectory(self)
        for options in [H5File.CreateOptions(), .checksummed] {
            let path = dir.appendingPathComponent("s\(options.fletcher32).h5").path
            try H5File.writeAtomically(to: path, options: options) { f in
                try f.setAttribute("name", string: "a string attribute")
                try f.createDataset("words", strings: ["a string", "in a dataset"], shape: [2])
                try f.createDataset("one", string: "a scalar string")
            }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            XCTAssertEqual(bytes.range(of: Data("GCOL".utf8)) != nil, !options.fletcher32)
            let f = try H5File.open(path)
            XCTAssertEqual(try f.stringAttribute("name"), "a string attribute")
            XCTAssertEqual(try f.dataset("words").readStrings(), ["a string", "in a dataset"])
            XCTAssertEqual(try f.dataset("one").readString(), "a scalar string")
            XCTAssertEqual(try f.dataset("words").dtype(), .string)
        }
    }
}
