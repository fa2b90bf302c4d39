import Foundation
import XCTest
import CHDF5
@testable import HDF5Kit

final class H5ErrorTests: XCTestCase {
    private func sampleFile(_ dir: URL, _ name: String = "ok.h5", options: H5File.CreateOptions = H5File.CreateOptions()) throws -> String {
        let path = dir.appendingPathComponent(name).path
        let f = try H5File.create(path, options: options)
        try f.createDataset("g/x", values: (0..<4000).map(Float.init), shape: [40, 100])
        try f.createDataset("g/i", values: [Int32(1), 2, 3], shape: [3])
        try f.setAttribute("format", string: "test")
        try f.close()
        return path
    }

    func testMissingFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("missing.h5").path
        let e = assertHDF5Error(try H5File.open(path)) { $0 == .fileNotFound }
        XCTAssertEqual(e?.file, path)
        XCTAssertEqual(e?.call, "H5Fopen")
        XCTAssertEqual(e?.description, "\(path): /: no such file [H5Fopen]")
        // Creating in a missing directory: the system's reason is carried along.
        let bad = dir.appendingPathComponent("no/such/dir/x.h5").path
        let c = assertHDF5Error(try H5File.create(bad)) { $0 == .callFailed }
        XCTAssertEqual(c?.call, "open")
        XCTAssertEqual(c?.detail, "No such file or directory (errno 2)")
        XCTAssertEqual(c?.description, "\(bad): /: open failed [open] (No such file or directory (errno 2))")
    }

    func testNotAnHDF5File() throws {
        let dir = try makeTemporaryDirectory(self)
        let text = dir.appendingPathComponent("notes.h5").path
        try Data("this is a text file, not HDF5\n".utf8).write(to: URL(fileURLWithPath: text))
        let e = assertHDF5Error(try H5File.open(text)) { $0 == .notHDF5 }
        XCTAssertTrue(e?.description.hasPrefix("\(text): /: not an HDF5 file [H5Fopen]") ?? false, e?.description ?? "")
        let empty = dir.appendingPathComponent("empty.h5").path
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        assertHDF5Error(try H5File.open(empty)) { $0 == .notHDF5 }
        assertHDF5Error(try H5File.open(dir.path)) { $0 == .notHDF5 }
        // An .npy file is not HDF5 either.
        let npy = dir.appendingPathComponent("x.npy").path
        try Data([0x93] + Array("NUMPY".utf8) + [1, 0] + [UInt8](repeating: 0x20, count: 120)).write(to: URL(fileURLWithPath: npy))
        assertHDF5Error(try H5File.open(npy)) { $0 == .notHDF5 }
    }

    func testTruncatedFilesFailCleanly() throws {
        for options in [H5File.CreateOptions(), H5File.CreateOptions(checksummedMetadata: true, fletcher32: true, userBlockSize: 512)] {
            try checkTruncatedFilesFailCleanly(options)
        }
    }

    private func checkTruncatedFilesFailCleanly(_ options: H5File.CreateOptions) throws {
        // (Single bit flips: H5CorruptionTests.)
        let dir = try makeTemporaryDirectory(self)
        let path = try sampleFile(dir, options: options)
        let full = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertGreaterThan(full.count, 16_000)
        var opened = 0, failedAtOpen = 0
        for cut in stride(from: 0, to: full.count, by: max(1, full.count / 40)) + [full.count - 1] {
            let t = dir.appendingPathComponent("cut\(cut).h5").path
            try full.prefix(cut).write(to: URL(fileURLWithPath: t))
            do {
                let f = try H5File.open(t)
                opened += 1
                // If the metadata survived, reading the cut data must fail, not crash.
                _ = try f.read("g/x", as: Float.self)
                XCTFail("read of a file cut at \(cut) of \(full.count) bytes succeeded")
            } catch let e as HDF5Error {
                failedAtOpen += 1
                XCTAssertEqual(e.file, t)
                XCTAssertFalse(e.description.isEmpty)
            }
        }
        XCTAssertGreaterThan(failedAtOpen, 0)
        // The superblock's end-of-file check names the truncation.
        let half = dir.appendingPathComponent("half.h5").path
        try full.prefix(full.count / 2).write(to: URL(fileURLWithPath: half))
        let e = assertHDF5Error(try H5File.open(half)) { $0 == .callFailed }
        XCTAssertTrue(e?.detail.contains("truncated") ?? false, e?.description ?? "")
    }

    func testMissingObjectsAndWrongKinds() throws {
        let dir = try makeTemporaryDirectory(self)
        let f = try H5File.open(try sampleFile(dir))
        let e = assertHDF5Error(try f.dataset("g/nope")) { $0 == .notFound }
        XCTAssertEqual(e?.object, "/g/nope")
        assertHDF5Error(try f.dataset("nope/deeper")) { $0 == .notFound }
        assertHDF5Error(try f.group("g/missing")) { $0 == .notFound }
        assertHDF5Error(try f.dataset("g")) { $0 == .wrongKind(expected: "dataset", found: "group") }
        assertHDF5Error(try f.group("g/x")) { $0 == .wrongKind(expected: "group", found: "dataset") }
        assertHDF5Error(try f.dataset("")) { if case .invalidArgument = $0 { return true } else { return false } }
        let a = assertHDF5Error(try f.int64Attribute("nope")) { $0 == .notFound }
        XCTAssertEqual(a?.object, "/@nope")
        assertHDF5Error(try f.int64Attribute("format")) { $0 == .typeMismatch(expected: "int64", found: "string") }
    }

    func testWrongDtypeRequested() throws {
        let dir = try makeTemporaryDirectory(self)
        let f = try H5File.open(try sampleFile(dir))
        let e = assertHDF5Error(try f.read("g/x", as: Double.self)) { $0 == .typeMismatch(expected: "float64", found: "float32") }
        XCTAssertEqual(e?.description, "\(f.path): /g/x: holds float32, not float64 [H5Dread]")
        assertHDF5Error(try f.read("g/i", as: Int64.self)) { $0 == .typeMismatch(expected: "int64", found: "int32") }
        assertHDF5Error(try f.read("g/i", as: Float.self)) { $0 == .typeMismatch(expected: "float32", found: "int32") }
        assertHDF5Error(try f.dataset("g/i").readStrings()) { $0 == .typeMismatch(expected: "string", found: "int32") }
    }

    func testShapeMismatches() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("s.h5").path
        let f = try H5File.create(path)
        let e = assertHDF5Error(try f.createDataset("x", values: [Float](repeating: 0, count: 5), shape: [2, 3])) {
            $0 == .countMismatch(shape: [2, 3], count: 5)
        }
        XCTAssertEqual(e?.object, "/x")
        XCTAssertFalse(try f.exists("x"))  // nothing half-written
        assertHDF5Error(try f.createDataset("y", values: [Int32(1)], shape: [-1])) { $0 == .countMismatch(shape: [-1], count: 1) }
        assertHDF5Error(try f.createDataset("z", strings: ["a", "b"], shape: [])) { $0 == .countMismatch(shape: [], count: 2) }
        let ds = try f.createDataset("w", values: [Float](repeating: 1, count: 6), shape: [2, 3])
        assertHDF5Error(try ds.write([Float](repeating: 0, count: 7))) { $0 == .countMismatch(shape: [2, 3], count: 7) }
        assertHDF5Error(try ds.write([Double](repeating: 0, count: 6))) { $0 == .typeMismatch(expected: "float64", found: "float32") }
        assertHDF5Error(try f.read("w", as: Float.self, shape: [3, 2])) { $0 == .shapeMismatch(expected: [3, 2], actual: [2, 3]) }
        assertHDF5Error(try ds.readScalar(Float.self)) { $0 == .shapeMismatch(expected: [], actual: [2, 3]) }
        XCTAssertEqual(try ds.read(Float.self), [Float](repeating: 1, count: 6))
    }

    func testCreateModesAndReadOnly() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = try sampleFile(dir)
        let e = assertHDF5Error(try H5File.create(path, mode: .exclusive)) { $0 == .callFailed }
        XCTAssertEqual(e?.call, "open")
        XCTAssertEqual(e?.detail, "File exists (errno 17)")
        // The exclusive failure left the file intact; truncate replaces it.
        XCTAssertTrue(try H5File.open(path).exists("g/x"))
        try H5File.create(path, mode: .truncate).close()
        XCTAssertEqual(try H5File.open(path).members(), [])
        // Writing through a read-only handle fails with HDF5's reason.
        let ro = try H5File.open(path, mode: .readOnly)
        let w = assertHDF5Error(try ro.createDataset("x", values: [Float(1)], shape: [1])) { $0 == .callFailed }
        XCTAssertEqual(w?.call, "H5Dcreate2")
        XCTAssertEqual(w?.object, "/x")
        assertHDF5Error(try ro.setAttribute("a", int64: 1)) { $0 == .callFailed }
        // HDF5 refuses a second, read-write open of a file open read-only in this process.
        assertHDF5Error(try H5File.open(path, mode: .readWrite)) { $0 == .callFailed }
        try ro.close()
        // Creating the same dataset twice.
        let rw = try H5File.open(path, mode: .readWrite)
        try rw.createDataset("d", values: [Float(1)], shape: [1])
        assertHDF5Error(try rw.createDataset("d", values: [Float(1)], shape: [1])) { $0 == .callFailed }
    }

    func testRejectedArguments() throws {
        let dir = try makeTemporaryDirectory(self)
        let f = try H5File.create(dir.appendingPathComponent("a.h5").path)
        assertHDF5Error(try f.createDataset("s", string: "a\u{0}b")) { if case .invalidArgument = $0 { return true } else { return false } }
        assertHDF5Error(try f.setAttribute("", int64: 1)) { if case .invalidArgument = $0 { return true } else { return false } }
        assertHDF5Error(try f.createGroup("")) { if case .invalidArgument = $0 { return true } else { return false } }
    }

    func testEnumStatusesAreChecked() throws {
        // Calls that answer an enum or a size have an error value of their own
        // (H5T_NO_CLASS, H5I_BADID, H5T_SGN_ERROR, H5T_STR_ERROR, size 0): each is a
        // typed error naming the call, the object and the file.
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("e.h5").path
        let f = try H5File.create(path)
        let g = try f.createGroup("g")
        let e = assertHDF5Error(try H5DType.of(-1, g.handle)) { $0 == .callFailed }
        XCTAssertEqual(e?.call, "H5Tget_class")
        XCTAssertEqual(e?.object, "/g")
        XCTAssertEqual(e?.file, path)
        XCTAssertFalse(e?.detail.isEmpty ?? true, e?.description ?? "")
        let i = assertHDF5Error(try g.handle.call("H5Iget_type", failure: H5I_BADID) { H5Iget_type(-1) }) { $0 == .callFailed }
        XCTAssertEqual(i?.description.hasPrefix("\(path): /g: H5Iget_type failed [H5Iget_type]"), true, i?.description ?? "")
        assertHDF5Error(try readStringValues(type: -1, space: -1, dims: [1], g.handle) { _, _ in 0 }) { $0 == .callFailed }
        // A closed file is refused before any C call.
        try f.close()
        assertHDF5Error(try H5DType.of(-1, g.handle)) { $0 == .fileClosed }
    }

    func testDescriptionsAreOneLine() throws {
        // libhdf5's file drivers put a ctime() stamp, with its newline, in their
        // messages: this is the message a full disk gave before HDF5Kit wrote files itself.
        let raw = """
            file write failed: time = Sun Nov 22 20:00:59 2026
            , filename = '/tmp/h5full/.ck.h5.tmp-12904-2814356853', file descriptor = 22, errno = 28, \
            error message = 'No space left on device', buf = 0x556b7bb877a0, total write size = 39296, \
            bytes this sub-write = 39296, bytes actually written = 18446744073709551615, offset = 0
            """
        let e = HDF5Error(.callFailed, call: "H5Dwrite", object: "/model/W2", file: "/tmp/odd\nname.h5", detail: raw)
        XCTAssertEqual(e.detail, "file write failed: No space left on device (errno 28)")
        XCTAssertEqual(e.description, "/tmp/odd\\nname.h5: /model/W2: H5Dwrite failed [H5Dwrite] (file write failed: No space left on device (errno 28))")
        XCTAssertEqual(HDF5Error(.callFailed, call: "c", object: "/", file: "f", detail: "one\n  two\r\nthree\n").detail, "one two three")
        XCTAssertEqual(HDF5Error(.invalidArgument("a\nb"), call: "c", object: "/x\ty", file: "f").description, "f: /x\\ty: a b [c]")
        // The error stack decides the kind.
        XCTAssertEqual(H5Call.classify("can't read data | data error detected by Fletcher32 checksum"), .checksumMismatch)
        XCTAssertEqual(H5Call.classify("incorrect metadata checksum after all read attempts"), .checksumMismatch)
        XCTAssertEqual(H5Call.classify(HDF5Error.oneLine(raw)), .noSpace)
        XCTAssertEqual(H5Call.classify("unable to open file: name = 'x', errno = 2, error message = 'No such file'"), .callFailed)
    }

    func testNothingIsPrintedByHDF5() throws {
        // Failing calls, also on a fresh thread (which has its own HDF5 error stack),
        // print nothing: stderr is captured through a pipe while they run.
        let dir = try makeTemporaryDirectory(self)
        let text = dir.appendingPathComponent("t.h5").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: text))
        let pipe = Pipe()
        let saved = dup(2)
        dup2(pipe.fileHandleForWriting.fileDescriptor, 2)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? H5File.open(text)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        _ = try? H5File.open(text)
        _ = try? H5File.create(dir.appendingPathComponent("no/dir.h5").path)
        // A checksum failure, read on a fresh thread whose objects are released there.
        let damaged = dir.appendingPathComponent("damaged.h5").path
        try H5File.writeAtomically(to: damaged, options: .checksummed) {
            try $0.createDataset("x", values: [Float](repeating: 3, count: 100), shape: [100])
        }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: damaged))
        let at = try XCTUnwrap(bytes.range(of: Data([0, 0, 0x40, 0x40, 0, 0, 0x40, 0x40]))).lowerBound
        bytes[at + 2] ^= 1
        try bytes.write(to: URL(fileURLWithPath: damaged))
        Thread.detachNewThread {
            if let f = try? H5File.open(damaged), let ds = try? f.dataset("x") { _ = try? ds.read(Float.self) }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        fflush(nil)  // all C streams
        dup2(saved, 2)
        close(saved)
        try pipe.fileHandleForWriting.close()
        let printed = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(printed, "", "HDF5 printed to stderr")
    }
}
