// The stale-temporary sweeper: what it removes, restores and leaves alone.
import XCTest
import Foundation
@testable import FileOutput

final class TemporaryFilesTests: XCTestCase {
    private var dir: URL!
    private var fm: FileManager { FileManager.default }

    override func setUpWithError() throws {
        dir = fm.temporaryDirectory.appendingPathComponent("sweep-\(UUID().uuidString)")
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? fm.removeItem(at: dir) }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    private func touch(_ name: String, _ text: String = "x") throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path(name)))
    }

    /// The pid of a process that has exited (and been reaped).
    private func deadPid() throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(kill(p.processIdentifier, 0), -1)
        return p.processIdentifier
    }

    func testNamesParse() {
        let name = TemporaryFiles.temporaryName(for: "g.mid")
        XCTAssertEqual(TemporaryFiles.parse(name),
                       .init(kind: .temporary, base: "g.mid", pid: getpid(), start: TemporaryFiles.processStart))
        XCTAssertEqual(TemporaryFiles.parse(".ckpt-5.h5.tmp-123-4567"), .init(kind: .temporary, base: "ckpt-5.h5", pid: 123, start: nil))
        XCTAssertEqual(TemporaryFiles.parse(".model.drummer-old-12-99-0000abcd"),
                       .init(kind: .aside, base: "model", pid: 12, start: 99))
        // Names without the tool's marker are a user's, however much they look like temporaries
        // (a backup `.drums.old-2024-05`, another tool's `.score.tmp-2023-12`).
        for foreign in ["g.mid", ".g.mid", ".g.tmp-12", ".g.tmp-x-1", "g.mid.drummer-tmp-1-2-0000abcd",
                        ".g.drummer-tmp-1-2-xyz", ".g.tmp-0-5", ".drummer-tmp-1-2-0000abcd",
                        ".ckpt-5.h5.tmpx-123-4567", ".ckpt-x.h5.tmp-1-2", ".notckpt-5.h5.tmp-1-2", ".model.old-12-99",
                        ".drums.old-2024-05", ".score.tmp-2023-12"] {
            XCTAssertNil(TemporaryFiles.parse(foreign), foreign)
        }
        XCTAssertGreaterThan(TemporaryFiles.processStart, 0, "no /proc/self/stat?")
    }

    /// An output name near the 255-byte limit (`-o aaa…a.mid`, 250 bytes) failed with "file name
    /// too long": its temporary's name was 40-odd bytes longer. Shortened on a character boundary.
    func testTemporaryNamesOfLongNamesFitAFileName() throws {
        for name in [String(repeating: "a", count: 246) + ".mid", String(repeating: "\u{E9}", count: 125)] {
            let t = TemporaryFiles.temporaryName(for: name)
            XCTAssertLessThanOrEqual(t.utf8.count, 255, t)
            let parsed = try XCTUnwrap(TemporaryFiles.parse(t))
            XCTAssertTrue(name.hasPrefix(parsed.base) && parsed.base.utf8.count > 150, parsed.base)
            XCTAssertTrue(fm.createFile(atPath: path(t), contents: Data("x".utf8)), t)
        }
    }

    func testStaleTemporariesAreRemovedLiveAndForeignOnesKept() throws {
        let dead = try deadPid()
        let me = getpid(), start = TemporaryFiles.processStart
        // Stale: a dead pid (file and directory), our pid with another start time
        // (pid reuse), a checkpoint's temporary with a dead pid.
        try touch(".g.mid.drummer-tmp-\(dead)-\(start)-0000abcd")
        try fm.createDirectory(atPath: path(".data.drummer-tmp-\(dead)-1-deadbeef/validation"), withIntermediateDirectories: true)
        try touch(".data.drummer-tmp-\(dead)-1-deadbeef/validation/X.npy")
        try touch(".x.mid.drummer-tmp-\(me)-\(start + 1)-00000001")
        try touch(".ckpt-500.h5.drummer-tmp-\(dead)-7-0000abcd")
        // An older version's checkpoint temporary of a process that is gone (kept while it lives).
        try touch(".ckpt-700.h5.tmp-\(dead)-31415")
        let liveOld = ".ckpt-800.h5.tmp-\(me)-27"
        try touch(liveOld)
        // Kept: live ones (ours), and names without the marker: other tools' temporaries and a
        // user's backups, even with a dead pid's number in them, files or directories.
        let live = TemporaryFiles.temporaryName(for: "live.mid")
        try touch(live)
        let foreign = ["notes.txt", ".hidden", ".g.tmp-12", ".g.tmp-\(dead)", "g.mid.drummer-tmp-\(dead)-1-0000abcd",
                       ".drums.old-2024-05", ".score.tmp-2023-12"]
        for name in foreign { try touch(name) }
        try fm.createDirectory(atPath: path(".photos.old-\(dead)-7"), withIntermediateDirectories: true)
        try touch(".photos.old-\(dead)-7/a.jpg")
        let removed = TemporaryFiles.sweep(directory: dir.path, report: false)
        XCTAssertEqual(Set(removed.map { ($0 as NSString).lastPathComponent }), [
            ".g.mid.drummer-tmp-\(dead)-\(start)-0000abcd", ".data.drummer-tmp-\(dead)-1-deadbeef",
            ".x.mid.drummer-tmp-\(me)-\(start + 1)-00000001", ".ckpt-500.h5.drummer-tmp-\(dead)-7-0000abcd",
            ".ckpt-700.h5.tmp-\(dead)-31415",
        ])
        XCTAssertEqual(Set(try fm.contentsOfDirectory(atPath: dir.path)), Set([live, liveOld, ".photos.old-\(dead)-7"] + foreign))
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: path(".photos.old-\(dead)-7")), ["a.jpg"])
        XCTAssertEqual(TemporaryFiles.sweepDetailed(directory: dir.path), .init())
    }

    func testTheReportLineCountsAndNamesTheDirectory() throws {
        let dead = try deadPid()
        try touch(".a.drummer-tmp-\(dead)-1-00000001")
        try touch(".b.drummer-tmp-\(dead)-1-00000002")
        let sweep = TemporaryFiles.sweepDetailed(directory: dir.path)
        XCTAssertEqual(sweep.line(directory: dir.path),
                       "removed 2 stale temporary output(s) (files or folders) from a killed run in \(dir.path)")
        XCTAssertNil(TemporaryFiles.Sweep().line(directory: dir.path))
    }

    /// A killed run that had moved a directory aside (without renameat2) and not yet
    /// put the new one in place: the old directory is renamed back.
    func testAsideDirectoryOfAKilledRunIsRestoredOrRemoved() throws {
        let dead = try deadPid()
        try fm.createDirectory(atPath: path(".model.drummer-old-\(dead)-1-0000000a"), withIntermediateDirectories: true)
        try touch(".model.drummer-old-\(dead)-1-0000000a/model.json", "old")
        var sweep = TemporaryFiles.sweepDetailed(directory: dir.path)
        XCTAssertEqual(sweep.restored, [path("model")])
        XCTAssertEqual(try String(contentsOfFile: path("model/model.json"), encoding: .utf8), "old")
        XCTAssertTrue(sweep.line(directory: dir.path)?.contains("restored \(path("model"))") == true)
        // With the directory in place, an aside copy is just stale.
        try fm.createDirectory(atPath: path(".model.drummer-old-\(dead)-5-0000000b"), withIntermediateDirectories: true)
        sweep = TemporaryFiles.sweepDetailed(directory: dir.path)
        XCTAssertEqual(sweep.removed, [path(".model.drummer-old-\(dead)-5-0000000b")])
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: dir.path), ["model"])
    }

    func testWritingIntoADirectorySweepsItOnce() throws {
        let dead = try deadPid()
        try touch(".song.mid.drummer-tmp-\(dead)-1-00000001")
        try AtomicOutput.write(Data("x".utf8), to: path("song.mid"))
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: dir.path), ["song.mid"])
        // Later writes in this process do not sweep again.
        try touch(".song.mid.drummer-tmp-\(dead)-1-00000002")
        try AtomicOutput.write(Data("y".utf8), to: path("song.mid"))
        XCTAssertEqual(Set(try fm.contentsOfDirectory(atPath: dir.path)),
                       ["song.mid", ".song.mid.drummer-tmp-\(dead)-1-00000002"])
    }
}
