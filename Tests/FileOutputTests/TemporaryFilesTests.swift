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
        XCTAssertEqual(TemporaryFiles.parse(".ckpt-5.h5.tmp-123-4567"),
                       .init(kind: .temporary, base: "ckpt-5.h5", pid: 123, start: nil))
        XCTAssertEqual(TemporaryFiles.parse(".model.old-12-99"), .init(kind: .aside, base: "model", pid: 12, start: nil))
        for foreign in ["g.mid", ".g.mid", ".g.tmp-12", ".g.tmp-x-1", "g.mid.drummer-tmp-1-2-0000abcd",
                        ".g.drummer-tmp-1-2-xyz", ".g.tmp-0-5", ".drummer-tmp-1-2-0000abcd"] {
            XCTAssertNil(TemporaryFiles.parse(foreign), foreign)
        }
        XCTAssertGreaterThan(TemporaryFiles.processStart, 0, "no /proc/self/stat?")
    }

    func testStaleTemporariesAreRemovedLiveAndForeignOnesKept() throws {
        let dead = try deadPid()
        let me = getpid(), start = TemporaryFiles.processStart
        // Stale: a dead pid (file and directory), our pid with another start time
        // (pid reuse), the older names with a dead pid (HDF5Kit's checkpoints).
        try touch(".g.mid.drummer-tmp-\(dead)-\(start)-0000abcd")
        try fm.createDirectory(atPath: path(".data.drummer-tmp-\(dead)-1-deadbeef/validation"), withIntermediateDirectories: true)
        try touch(".data.drummer-tmp-\(dead)-1-deadbeef/validation/X.npy")
        try touch(".x.mid.drummer-tmp-\(me)-\(start + 1)-00000001")
        try touch(".ckpt-500.h5.tmp-\(dead)-12345")
        // Our own pid in the older name, but last changed before this process started.
        try touch(".ckpt-1000.h5.tmp-\(me)-7")
        let old = Date(timeIntervalSinceNow: -3600 * 24 * 400)
        try fm.setAttributes([.modificationDate: old], ofItemAtPath: path(".ckpt-1000.h5.tmp-\(me)-7"))
        // Kept: live ones (ours), foreign names.
        let live = TemporaryFiles.temporaryName(for: "live.mid")
        try touch(live)
        try touch(".ckpt-1500.h5.tmp-\(me)-8")
        for foreign in ["notes.txt", ".hidden", ".g.tmp-12", ".g.tmp-\(dead)", "g.mid.drummer-tmp-\(dead)-1-0000abcd"] {
            try touch(foreign)
        }
        let removed = TemporaryFiles.sweep(directory: dir.path, report: false)
        XCTAssertEqual(Set(removed.map { ($0 as NSString).lastPathComponent }), [
            ".g.mid.drummer-tmp-\(dead)-\(start)-0000abcd", ".data.drummer-tmp-\(dead)-1-deadbeef",
            ".x.mid.drummer-tmp-\(me)-\(start + 1)-00000001", ".ckpt-500.h5.tmp-\(dead)-12345",
            ".ckpt-1000.h5.tmp-\(me)-7",
        ])
        XCTAssertEqual(Set(try fm.contentsOfDirectory(atPath: dir.path)), [
            live, ".ckpt-1500.h5.tmp-\(me)-8", "notes.txt", ".hidden", ".g.tmp-12", ".g.tmp-\(dead)",
            "g.mid.drummer-tmp-\(dead)-1-0000abcd",
        ])
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
        try fm.createDirectory(atPath: path(".model.old-\(dead)-5"), withIntermediateDirectories: true)
        sweep = TemporaryFiles.sweepDetailed(directory: dir.path)
        XCTAssertEqual(sweep.removed, [path(".model.old-\(dead)-5")])
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
