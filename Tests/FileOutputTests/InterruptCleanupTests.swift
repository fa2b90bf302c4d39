// What an interrupt's cleanup removes and says, on a registry of its own (the watcher thread
// runs the same function on the process's registry, then exits).
import XCTest
import Foundation
@testable import FileOutput

final class InterruptCleanupTests: XCTestCase {
    private var dir: URL!
    private var fm: FileManager { FileManager.default }

    override func setUpWithError() throws {
        dir = fm.temporaryDirectory.appendingPathComponent("interrupt-cleanup-\(UUID().uuidString)")
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? fm.removeItem(at: dir) }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// A stop just after a directory output was swapped in: the temporary name then holds the
    /// directory it replaced. It is removed, and the line says the output was written (it said
    /// "out was not written (its temporary output was removed)", with the new output in place).
    func testAnOutputSwappedInIsSaidWrittenAndTheOldCopyRemoved() throws {
        var registry = TemporaryFiles.Registry()
        let old = path(".out.drummer-tmp-1-2-0000000a")
        try fm.createDirectory(atPath: old, withIntermediateDirectories: true)
        try Data("old".utf8).write(to: URL(fileURLWithPath: old + "/model.json"))
        registry.placed(registry.add(old, destination: "out"), oldCopyRemains: true)
        XCTAssertEqual(InterruptCleanup.cleanUp(&registry, signal: SIGINT), "drummer: interrupted: out was written before the stop\n")
        XCTAssertFalse(fm.fileExists(atPath: old))
    }

    /// A report's working directory (a clip's MIDI and WAV) is removed without being named as
    /// an output, and a child still rendering (FluidSynth) is ended: it went on rendering into a
    /// removed file after the command had exited, and the directories were left in TMPDIR.
    func testScratchIsRemovedQuietlyAndChildrenEnded() throws {
        var registry = TemporaryFiles.Registry()
        let scratch = path(TemporaryFiles.temporaryName(for: "drummer-audio"))
        try fm.createDirectory(atPath: scratch + "/x", withIntermediateDirectories: true)
        _ = registry.add(scratch, destination: scratch, scratch: true)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        try child.run()
        InterruptCleanup.track(child: child.processIdentifier)
        defer { InterruptCleanup.untrack(child: child.processIdentifier) }
        XCTAssertEqual(InterruptCleanup.cleanUp(&registry, signal: SIGINT), "drummer: interrupted\n")
        XCTAssertFalse(fm.fileExists(atPath: scratch))
        child.waitUntilExit()
        XCTAssertEqual(child.terminationReason, .uncaughtSignal)
        XCTAssertEqual(child.terminationStatus, SIGTERM)
    }

    /// An output written again and again (train_log.csv at every logged step) is said once.
    func testAnOutputRewrittenIsSaidOnce() throws {
        var registry = TemporaryFiles.Registry()
        for _ in 0..<5 { registry.placed(registry.add(path("missing"), destination: "ck/train_log.csv")) }
        XCTAssertEqual(registry.written, ["ck/train_log.csv"])
        XCTAssertEqual(InterruptCleanup.cleanUp(&registry, signal: SIGINT), "drummer: interrupted: ck/train_log.csv was written before the stop\n")
    }

    /// The message for a batch stopped before its renames: every file not written; after them: every file written.
    func testABatchIsSaidWrittenOrNotAsAWhole() throws {
        var registry = TemporaryFiles.Registry()
        let names = (1...4).map { "g-\($0).mid" }
        var registrations: [TemporaryFiles.Registration] = []
        for n in names {
            let t = path(TemporaryFiles.temporaryName(for: n))
            XCTAssertTrue(fm.createFile(atPath: t, contents: Data("x".utf8)))
            registrations.append(registry.add(t, destination: n))
        }
        var before = registry
        XCTAssertEqual(InterruptCleanup.cleanUp(&before, signal: SIGTERM),
                       "drummer: terminated: 4 outputs were not written (g-1.mid, g-2.mid … g-4.mid; their temporary outputs were removed)\n")
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: dir.path), [])
        for r in registrations { registry.placed(r) }
        XCTAssertEqual(InterruptCleanup.cleanUp(&registry, signal: SIGINT),
                       "drummer: interrupted: 4 outputs were written before the stop (g-1.mid, g-2.mid … g-4.mid)\n")
    }
}
