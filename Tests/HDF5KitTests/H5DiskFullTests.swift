// A full disk: `mount -t tmpfs -o size=200k tmpfs S; drummer train …
// --checkpoint-dir S/ck` printed a multi-line error, then died of signal 11
// inside libhdf5. The cause: libhdf5 wrote the file itself, H5Fclose failed
// while flushing (ENOSPC), and libhdf5 1.10 then freed the file but kept its id,
// which its clean-up at exit used again. HDF5Kit now builds created files in
// memory and writes them itself (see H5File.swift): these tests fill a small
// filesystem (a 200 KiB tmpfs where this process may mount one, as root in a
// container; else a file-size limit) and check for one typed error, no
// temporary file, an untouched previous file, and a clean exit.
import Foundation
import XCTest
@testable import HDF5Kit

/// Mounts a `size` tmpfs on a fresh directory for the duration of the test, or
/// skips the test saying why (mounting needs root with CAP_SYS_ADMIN).
func mountSmallFilesystem(_ test: XCTestCase, size: String = "200k") throws -> URL {
    let dir = try makeTemporaryDirectory(test).appendingPathComponent("small")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    guard getuid() == 0 else {
        throw XCTSkip("disk-full test skipped: mounting a \(size) tmpfs needs root (uid is \(getuid())); the RLIMIT_FSIZE test covers the same code path")
    }
    let status = "size=\(size)".withCString { mount("tmpfs", dir.path, "tmpfs", 0, $0) }
    guard status == 0 else {
        let reason = String(cString: strerror(errno))
        throw XCTSkip("disk-full test skipped: cannot mount a \(size) tmpfs at \(dir.path) (\(reason)); the RLIMIT_FSIZE test covers the same code path")
    }
    test.addTeardownBlock { _ = umount2(dir.path, Int32(MNT_DETACH)) }
    return dir
}

final class H5DiskFullTests: XCTestCase {
    /// Four 80 KB datasets: more than 200 KiB in all.
    private func writeLarge(_ f: H5File, _ fill: Float) throws {
        try f.setAttribute("format", string: "drummer-lstm-checkpoint")
        for j in 0..<4 {
            try f.createDataset("model/W\(j)", values: [Float](repeating: fill, count: 20_000), shape: [100, 200])
        }
    }

    private func writeSmall(_ path: String, _ options: H5File.CreateOptions) throws {
        try H5File.writeAtomically(to: path, options: options) { f in
            try f.createDataset("Wx", values: (0..<1000).map { Float($0) / 7 }, shape: [10, 100])
            try f.setAttribute("step", int64: 41)
        }
    }

    func testDiskFullDuringWriteAtomically() throws {
        let fs = try mountSmallFilesystem(self)
        let dir = fs.appendingPathComponent("ck")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("model.h5").path
        for options in [H5File.CreateOptions(), .checksummed, H5File.CreateOptions(checksummedMetadata: true, fletcher32: true, userBlockSize: 512)] {
            try writeSmall(path, options)  // the previous checkpoint, which fits
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            // As with --checkpoint-every 1: every attempt fails the same way, and
            // none leaves anything behind that would fill the disk further.
            for attempt in 0..<3 {
                let e = assertHDF5Error(try H5File.writeAtomically(to: path, options: options) { try writeLarge($0, Float(attempt)) }) {
                    $0 == .noSpace
                }
                XCTAssertEqual(e?.file, path)
                XCTAssertEqual(e?.call, "posix_fallocate")
                XCTAssertEqual(e?.description, "\(path): /: no space left on device [posix_fallocate] (No space left on device (errno 28))")
                XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["model.h5"])
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
            }
            let f = try H5File.open(path)
            XCTAssertEqual(try f.read("Wx", as: Float.self), (0..<1000).map { Float($0) / 7 })
            XCTAssertEqual(try f.int64Attribute("step"), 41)
            try f.close()
        }
        // The failed attempts gave their space back: the small file still fits
        // beside itself (old + temporary) after all of them.
        try writeSmall(path, .checksummed)
    }

    func testDiskFullWithCreateAndClose() throws {
        let fs = try mountSmallFilesystem(self)
        let path = fs.appendingPathComponent("direct.h5").path
        let f = try H5File.create(path)
        try writeLarge(f, 1)
        let e = assertHDF5Error(try f.close()) { $0 == .noSpace }
        XCTAssertEqual(e?.file, path)
        XCTAssertEqual(e?.call, "posix_fallocate")
        XCTAssertFalse(f.isOpen)
        try f.close()  // closing again is harmless
        assertHDF5Error(try f.read("model/W0", as: Float.self)) { $0 == .fileClosed }
        // flush() fails the same way, and the file stays open and intact in memory:
        // once there is room again, close() writes it.
        let filler = fs.appendingPathComponent("filler")
        try Data(count: 150 * 1024).write(to: filler)
        let g = try H5File.create(fs.appendingPathComponent("flushed.h5").path)
        try g.createDataset("W", values: [Float](repeating: 2, count: 20_000), shape: [100, 200])
        assertHDF5Error(try g.flush()) { $0 == .noSpace }
        XCTAssertTrue(g.isOpen)
        XCTAssertEqual(try g.read("W", as: Float.self), [Float](repeating: 2, count: 20_000))
        try FileManager.default.removeItem(at: filler)
        try g.close()
        XCTAssertEqual(try H5File.open(g.path).read("W", as: Float.self), [Float](repeating: 2, count: 20_000))
    }

    func testDiskFullWhileEditingAFileOpenedReadWrite() throws {
        // A file opened `.readWrite` is edited in memory and written back in place
        // by close(): on a full disk that fails before the file is touched.
        let fs = try mountSmallFilesystem(self)
        let path = fs.appendingPathComponent("rw.h5").path
        try writeSmall(path, H5File.CreateOptions())
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let f = try H5File.open(path, mode: .readWrite)
        for j in 0..<4 {
            try f.createDataset("more/W\(j)", values: [Float](repeating: 3, count: 20_000), shape: [100, 200])
        }
        try f.setAttribute("step", int64: 42)
        let e = assertHDF5Error(try f.close()) { $0 == .noSpace }
        XCTAssertEqual(e?.call, "posix_fallocate")
        XCTAssertEqual(e?.file, path)
        XCTAssertFalse(f.isOpen)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        let g = try H5File.open(path)
        XCTAssertEqual(try g.int64Attribute("step"), 41)
        XCTAssertFalse(try g.exists("more"))
    }

    func testFileSizeLimitDuringWriteAtomically() throws {
        // Where no filesystem can be mounted: a file-size limit (RLIMIT_FSIZE) makes
        // writing fail with EFBIG once the file would grow past 64 KiB (SIGXFSZ,
        // which would kill the process, is ignored meanwhile).
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("model.h5").path
        try writeSmall(path, .checksummed)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        var saved = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved), 0)
        let oldHandler = signal(SIGXFSZ, SIG_IGN)
        var limited = saved
        limited.rlim_cur = 64 * 1024
        XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limited), 0)
        let e = assertHDF5Error(try H5File.writeAtomically(to: path, options: .checksummed) { try writeLarge($0, 5) }) {
            $0 == .callFailed
        }
        XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved), 0)
        signal(SIGXFSZ, oldHandler)
        XCTAssertEqual(e?.call, "posix_fallocate")
        XCTAssertEqual(e?.file, path)
        XCTAssertEqual(e?.detail, "File too large (errno 27)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["model.h5"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        // With the limit lifted the same write succeeds.
        try H5File.writeAtomically(to: path, options: .checksummed) { try writeLarge($0, 5) }
        XCTAssertEqual(try H5File.open(path).read("model/W2", as: Float.self), [Float](repeating: 5, count: 20_000))
    }

    func testNoCrashAtExitAfterDiskFull() throws {
        // libhdf5's crash came at process exit, after the error was reported: run
        // the disk-full tests in a child process and check that it exits cleanly.
        var tests = ["testFileSizeLimitDuringWriteAtomically"]
        do {
            _ = try mountSmallFilesystem(self)
            tests += ["testDiskFullDuringWriteAtomically", "testDiskFullWithCreateAndClose",
                      "testDiskFullWhileEditingAFileOpenedReadWrite"]
        } catch is XCTSkip {
            // Where no tmpfs can be mounted, the file-size limit child still runs.
        }
        for test in tests {
            let r = try runChildTest("HDF5KitTests.H5DiskFullTests/\(test)", environment: [:], timeout: 60)
            XCTAssertFalse(r.signaled, "\(test): child died of signal \(r.status)\n\(r.output)")
            XCTAssertFalse(r.timedOut, "\(test): child hung\n\(r.output)")
            XCTAssertEqual(r.status, 0, "\(test): \(r.output)")
            XCTAssertTrue(r.output.contains("Executed 1 test, with 0 failures"), "\(test): \(r.output)")
        }
    }
}
