// The output rules (AtomicOutput): regular files, symbolic links, devices, FIFOs,
// descriptors, directories where a file is meant; directory outputs and what they
// may replace; the registry of temporaries in flight.
import XCTest
import Foundation
@testable import FileOutput

final class AtomicOutputTests: XCTestCase {
    private var base: URL!
    private var fm: FileManager { FileManager.default }

    override func setUpWithError() throws {
        base = fm.temporaryDirectory.appendingPathComponent("atomic-\(UUID().uuidString)")
        try fm.createDirectory(at: base, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? fm.removeItem(at: base) }

    private func path(_ name: String) -> String { base.appendingPathComponent(name).path }

    private func text(_ p: String) throws -> String { try String(contentsOfFile: p, encoding: .utf8) }

    private func fileType(_ p: String) -> mode_t {
        var st = stat()
        guard lstat(p, &st) == 0 else { return 0 }
        return st.st_mode & S_IFMT
    }

    /// No temporary of this tool is left in `dir`.
    private func assertNoTemporaries(_ dir: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        let names = (try? fm.contentsOfDirectory(atPath: dir ?? base.path)) ?? []
        XCTAssertEqual(names.filter { $0.contains("drummer-tmp") || $0.contains("drummer-old") }, [],
                       file: file, line: line)
        XCTAssertEqual(TemporaryFiles.inFlight.filter { $0.hasPrefix(base.path) }, [], file: file, line: line)
    }

    private func assertFails<T>(_ body: @autoclosure () throws -> T, _ fragment: String,
                             file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertTrue("\(error)".contains(fragment), "\(error)", file: file, line: line)
        }
    }

    // MARK: Files

    func testRegularFileIsReplacedKeepingItsPermissionBits() throws {
        let p = path("f.mid")
        try Data("old".utf8).write(to: URL(fileURLWithPath: p))
        chmod(p, 0o640)
        try AtomicOutput.write(Data("new".utf8), to: p)
        XCTAssertEqual(try text(p), "new")
        XCTAssertEqual(try fm.attributesOfItem(atPath: p)[.posixPermissions] as? Int, 0o640)
        assertNoTemporaries()
    }

    func testMissingParentDirectoriesAreCreated() throws {
        let p = path("a/b/c.txt")
        try AtomicOutput.write(Data("x".utf8), to: p)
        XCTAssertEqual(try text(p), "x")
    }

    func testSymlinkChainIsFollowedAndTheLinksStayLinks() throws {
        try fm.createDirectory(atPath: path("real"), withIntermediateDirectories: true)
        try Data("old".utf8).write(to: URL(fileURLWithPath: path("real/target.mid")))
        // An absolute link to a relative link (from another directory) to the file.
        try fm.createDirectory(atPath: path("links"), withIntermediateDirectories: true)
        XCTAssertEqual(symlink("../real/target.mid", path("links/relative")), 0)
        XCTAssertEqual(symlink(path("links/relative"), path("absolute")), 0)
        guard case .file(let target, let mode) = try AtomicOutput.resolve(path("absolute")) else {
            return XCTFail("not resolved to a regular file")
        }
        XCTAssertEqual(AtomicOutput.realPath(target), AtomicOutput.realPath(path("real/target.mid")))
        XCTAssertNotNil(mode)
        try AtomicOutput.write(Data("new".utf8), to: path("absolute"))
        XCTAssertEqual(try text(path("real/target.mid")), "new")
        XCTAssertEqual(fileType(path("absolute")), S_IFLNK)
        XCTAssertEqual(fileType(path("links/relative")), S_IFLNK)
        assertNoTemporaries(path("real"))
        assertNoTemporaries(path("links"))
    }

    func testDanglingSymlinkCreatesItsTargetWhenTheTargetsDirectoryExists() throws {
        XCTAssertEqual(symlink("made.mid", path("dangling")), 0)
        try AtomicOutput.write(Data("x".utf8), to: path("dangling"))
        XCTAssertEqual(try text(path("made.mid")), "x")
        XCTAssertEqual(fileType(path("dangling")), S_IFLNK)
        XCTAssertEqual(symlink("nowhere/made.mid", path("dangling2")), 0)
        assertFails(try AtomicOutput.write(Data("x".utf8), to: path("dangling2")), "does not exist")
        XCTAssertFalse(fm.fileExists(atPath: path("nowhere")))
    }

    func testSymlinkLoopIsAnError() throws {
        XCTAssertEqual(symlink("loop2", path("loop1")), 0)
        XCTAssertEqual(symlink("loop1", path("loop2")), 0)
        assertFails(try AtomicOutput.write(Data("x".utf8), to: path("loop1")), "too many levels of symbolic links")
    }

    func testDirectoryWhereAFileIsMeantIsRefused() throws {
        try fm.createDirectory(atPath: path("d"), withIntermediateDirectories: true)
        assertFails(try AtomicOutput.write(Data("x".utf8), to: path("d"), options: .userFile), "d: is a directory")
        XCTAssertEqual(symlink("d", path("to-d")), 0)
        assertFails(try AtomicOutput.write(Data("x".utf8), to: path("to-d")), "(a link to \(path("d"))): is a directory")
        // A regular file where a directory is needed on the way.
        try Data().write(to: URL(fileURLWithPath: path("plain")))
        assertFails(try AtomicOutput.write(Data("x".utf8), to: path("plain/x")), "\(path("plain")) is not a directory")
        XCTAssertEqual(fileType(path("d")), S_IFDIR)
        assertNoTemporaries()
    }

    func testFIFOIsWrittenThroughForUserFilesAndRefusedOtherwise() throws {
        let p = path("fifo")
        XCTAssertEqual(mkfifo(p, 0o644), 0)
        assertFails(try AtomicOutput.write(Data("x".utf8), to: p), "is a FIFO; not replacing it")
        XCTAssertEqual(try AtomicOutput.resolve(p, options: .userFile), .stream(path: p))
        let received = ReadBox()
        let reader = Thread {
            received.set(FileHandle(forReadingAtPath: p)?.readDataToEndOfFile() ?? Data())
        }
        reader.start()
        try AtomicOutput.write(Data("through the pipe".utf8), to: p, options: .userFile)
        XCTAssertTrue(received.wait(seconds: 10))
        XCTAssertEqual(String(decoding: received.data, as: UTF8.self), "through the pipe")
        XCTAssertEqual(fileType(p), S_IFIFO)
        assertNoTemporaries()
    }

    func testCharacterDeviceIsWrittenThroughNeverReplaced() throws {
        try AtomicOutput.write(Data("discarded".utf8), to: "/dev/null", options: .userFile)
        XCTAssertEqual(fileType("/dev/null"), S_IFCHR)
        // The reproducer: a private copy of /dev/null, device 1,3 (needs root's mknod).
        let p = path("n")
        guard mknod(p, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0 else {
            throw XCTSkip("mknod is not permitted here: only /dev/null was checked")
        }
        assertFails(try AtomicOutput.write(Data("x".utf8), to: p), "is a character device; not replacing it")
        try AtomicOutput.write(Data("MThd".utf8), to: p, options: .userFile)
        XCTAssertEqual(fileType(p), S_IFCHR)
        assertNoTemporaries()
    }

    func testSocketIsRefused() throws {
        let p = path("s")
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in p.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw XCTSkip("cannot bind a Unix socket at \(p)") }
        assertFails(try AtomicOutput.write(Data("x".utf8), to: p, options: .userFile), "is a socket")
        XCTAssertEqual(fileType(p), S_IFSOCK)
    }

    func testDashAndDescriptorPaths() throws {
        XCTAssertEqual(try AtomicOutput.resolve("-", options: .userFile), .descriptor(1))
        XCTAssertTrue(try AtomicOutput.resolve("/dev/stdout", options: .userFile).isStandardOutput)
        XCTAssertEqual(try AtomicOutput.resolve("/dev/stderr", options: .userFile), .descriptor(2))
        assertFails(try AtomicOutput.resolve("-"), "cannot go to standard output")
        assertFails(try AtomicOutput.resolve("/dev/stdout"), "is standard output; this output must be a regular file")
        // A descriptor path writes into that descriptor: here a pipe's write end.
        let pipe = Pipe()
        let fd = pipe.fileHandleForWriting.fileDescriptor
        try AtomicOutput.write(Data("via /dev/fd".utf8), to: "/dev/fd/\(fd)", options: .userFile)
        try pipe.fileHandleForWriting.close()
        XCTAssertEqual(String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self), "via /dev/fd")
        // A symlink to /dev/stdout is standard output too.
        XCTAssertEqual(symlink("/dev/stdout", path("out")), 0)
        XCTAssertEqual(try AtomicOutput.resolve(path("out"), options: .userFile), .descriptor(1))
    }

    func testPrepareChecksBeforeWritingAndDiscardLeavesNothing() throws {
        let p = path("later.swift")
        let pending = try AtomicOutput.prepare(p)
        let tmp = try XCTUnwrap(pending.temporaryPath)
        XCTAssertTrue(fm.fileExists(atPath: tmp))
        XCTAssertTrue((tmp as NSString).lastPathComponent.hasPrefix(".later.swift.drummer-tmp-\(getpid())-"))
        XCTAssertTrue(TemporaryFiles.inFlight.contains(tmp))
        XCTAssertFalse(fm.fileExists(atPath: p))
        pending.discard()
        XCTAssertFalse(fm.fileExists(atPath: tmp))
        assertNoTemporaries()
        // A producer fills the temporary file; it is renamed into place.
        let n = try AtomicOutput.file(at: p) { t in try Data("made".utf8).write(to: URL(fileURLWithPath: t)); return 4 }
        XCTAssertEqual(n, 4)
        XCTAssertEqual(try text(p), "made")
        // A failing producer leaves the old file.
        struct Boom: Error {}
        XCTAssertThrowsError(try AtomicOutput.file(at: p) { t in
            try Data("half".utf8).write(to: URL(fileURLWithPath: t))
            throw Boom()
        })
        XCTAssertEqual(try text(p), "made")
        assertNoTemporaries()
    }

    // MARK: Directories

    func testDirectoryIsReplacedOnlyOnSuccess() throws {
        let out = path("out")
        try AtomicOutput.directory(at: out, kind: .model) { dir in
            try Data("one".utf8).write(to: dir.appendingPathComponent("model.json"))
        }
        XCTAssertEqual(try text(out + "/model.json"), "one")
        struct Boom: Error {}
        XCTAssertThrowsError(try AtomicOutput.directory(at: out, kind: .model) { dir in
            try Data("two".utf8).write(to: dir.appendingPathComponent("model.json"))
            throw Boom()
        })
        XCTAssertEqual(try text(out + "/model.json"), "one")
        try AtomicOutput.directory(at: out, kind: .model) { dir in
            try Data("three".utf8).write(to: dir.appendingPathComponent("model.json"))
        }
        XCTAssertEqual(try text(out + "/model.json"), "three")
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: base.path), ["out"])
        assertNoTemporaries()
    }

    func testForeignDirectoriesAndFilesAreNotReplaced() throws {
        let foreign = path("photos")
        try fm.createDirectory(atPath: foreign, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: foreign + "/a.jpg"))
        assertFails(try AtomicOutput.directory(at: foreign, kind: .model) { _ in },
                    "photos: not replacing it: it is not empty and not a drummer model directory")
        assertFails(try AtomicOutput.directory(at: foreign) { _ in }, "not a drummer model or dataset directory")
        XCTAssertEqual(try text(foreign + "/a.jpg"), "keep")
        // A dataset directory is ours for the default kind, not for .model.
        let data = path("data")
        try fm.createDirectory(atPath: data, withIntermediateDirectories: true)
        try Data(#"{"tool": "drummer convert-midi"}"#.utf8).write(to: URL(fileURLWithPath: data + "/manifest.json"))
        assertFails(try AtomicOutput.directory(at: data, kind: .model) { _ in }, "not a drummer model directory")
        try AtomicOutput.directory(at: data, kind: .dataset) { dir in
            try Data(#"{"tool": "drummer convert-midi", "v": 2}"#.utf8).write(to: dir.appendingPathComponent("manifest.json"))
        }
        XCTAssertTrue(try text(data + "/manifest.json").contains("\"v\": 2"))
        // An empty directory may be replaced.
        try fm.createDirectory(atPath: path("empty"), withIntermediateDirectories: true)
        try AtomicOutput.directory(at: path("empty"), kind: .model) { _ in }
        // A file, a FIFO, `-` are refused.
        try Data().write(to: URL(fileURLWithPath: path("file")))
        assertFails(try AtomicOutput.directory(at: path("file")) { _ in }, "exists and is not a directory (it is a regular file)")
        XCTAssertEqual(mkfifo(path("fifo"), 0o644), 0)
        assertFails(try AtomicOutput.directory(at: path("fifo")) { _ in }, "(it is a FIFO)")
        assertFails(try AtomicOutput.directory(at: "-") { _ in }, "cannot be written to standard output")
        assertNoTemporaries()
    }

    func testAToolDirectoryHoldingOtherFilesIsNotReplaced() throws {
        // A model directory with the user's notes beside the weights: refused by name, nothing deleted.
        let model = path("model")
        try AtomicOutput.directory(at: model, kind: .model) { dir in
            for f in ["model.json", "Wx.bin", "Wy.bin"] { try Data(f.utf8).write(to: dir.appendingPathComponent(f)) }
        }
        try Data("how it was trained".utf8).write(to: URL(fileURLWithPath: model + "/TRAINING.md"))
        assertFails(try AtomicOutput.directory(at: model, kind: .model) { _ in },
                    "model: not replacing it: it also holds TRAINING.md, which drummer does not write there; move it out or choose another path")
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: model).sorted(), ["TRAINING.md", "Wx.bin", "Wy.bin", "model.json"])
        XCTAssertEqual(try text(model + "/TRAINING.md"), "how it was trained")
        // Without the notes (and with a stale temporary of the tool's, which counts as its own) it is replaced.
        try fm.removeItem(atPath: model + "/TRAINING.md")
        try Data().write(to: URL(fileURLWithPath: model + "/.Wx.bin.drummer-tmp-1-2-0000abcd"))
        XCTAssertEqual(DirectoryKind.model.foreignEntries(in: model), [])
        try AtomicOutput.directory(at: model, kind: .model) { dir in
            try Data("new".utf8).write(to: dir.appendingPathComponent("model.json"))
        }
        XCTAssertEqual(try text(model + "/model.json"), "new")

        // A dataset directory: its validation/ may hold only the dataset's own files; many entries are
        // listed up to five, then counted.
        let data = path("data")
        try fm.createDirectory(atPath: data + "/validation", withIntermediateDirectories: true)
        try Data(#"{"tool": "drummer convert-midi"}"#.utf8).write(to: URL(fileURLWithPath: data + "/manifest.json"))
        for f in ["events.npy", "vocab.json", "validation/events.npy", "validation/notes.txt"] {
            try Data().write(to: URL(fileURLWithPath: data + "/" + f))
        }
        assertFails(try AtomicOutput.directory(at: data, kind: .dataset) { _ in }, "it also holds validation/notes.txt, which")
        for i in 1...6 { try Data().write(to: URL(fileURLWithPath: data + "/extra\(i).txt")) }
        XCTAssertEqual(DirectoryKind.dataset.foreignEntries(in: data),
                       (1...6).map { "extra\($0).txt" } + ["validation/notes.txt"])
        assertFails(try AtomicOutput.directory(at: data) { _ in },
                    "it also holds extra1.txt, extra2.txt, extra3.txt, extra4.txt, extra5.txt, … (7 in all), which drummer does not write there; move them out")
        XCTAssertTrue(fm.fileExists(atPath: data + "/validation/notes.txt"))
        assertNoTemporaries()
    }

    func testSymlinkToADirectoryIsFollowedAndKept() throws {
        try AtomicOutput.directory(at: path("models/v1"), kind: .model) { dir in
            try Data("1".utf8).write(to: dir.appendingPathComponent("model.json"))
        }
        XCTAssertEqual(symlink("models/v1", path("current")), 0)
        let pending = try AtomicOutput.prepareDirectory(at: path("current"), kind: .model)
        XCTAssertEqual(pending.destination, path("models/v1"))
        XCTAssertTrue(TemporaryFiles.inFlight.contains(pending.url.path))
        try Data("2".utf8).write(to: pending.url.appendingPathComponent("model.json"))
        try pending.commit()
        XCTAssertEqual(fileType(path("current")), S_IFLNK)
        XCTAssertEqual(try text(path("models/v1/model.json")), "2")
        assertNoTemporaries(path("models"))
    }

    /// Another run's batch into the same folder (here an flock this test holds on it, as that
    /// run holds it while it renames) is waited for: nothing of this batch lands meanwhile, then
    /// all of it; no file is added to the folder for the lock.
    func testABatchWaitsWhileAnotherRunRenamesIntoItsFolder() throws {
        let out = path("out")
        try fm.createDirectory(atPath: out, withIntermediateDirectories: false)
        let batch = OutputBatch()
        for name in ["x1.mid", "x2.mid"] {
            try batch.prepare((out as NSString).appendingPathComponent(name), options: .file).stage(Data(name.utf8))
        }
        let fd = open(out, O_RDONLY | O_DIRECTORY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        let done = expectation(description: "batch in place")
        let box = BatchBox(batch)
        Thread {
            do { try box.batch.commit() } catch { XCTFail("\(error)") }
            done.fulfill()
        }.start()
        usleep(300_000)
        XCTAssertFalse(fm.fileExists(atPath: (out as NSString).appendingPathComponent("x1.mid")), "renamed under another run's lock")
        close(fd)
        wait(for: [done], timeout: 30)
        XCTAssertEqual(try text((out as NSString).appendingPathComponent("x1.mid")), "x1.mid")
        XCTAssertEqual(try text((out as NSString).appendingPathComponent("x2.mid")), "x2.mid")
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: out).sorted(), ["x1.mid", "x2.mid"])
    }
}

/// Data handed from a reader thread to the test.
private final class ReadBox: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private(set) var data = Data()
    func set(_ d: Data) { data = d; done.signal() }
    func wait(seconds: Double) -> Bool { done.wait(timeout: .now() + seconds) == .success }
}

private final class BatchBox: @unchecked Sendable {
    let batch: OutputBatch
    init(_ batch: OutputBatch) { self.batch = batch }
}
