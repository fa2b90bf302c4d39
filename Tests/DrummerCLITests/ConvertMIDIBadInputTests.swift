import Foundation
import XCTest

/// convert-midi on hostile input: every bad file named with its reason, the safe policy's
/// recoveries, strict and lenient, flags at their limits, output errors, Ctrl-C, and the
/// same bytes for any number of threads.
final class ConvertMIDIBadInputTests: XCTestCase {
    private var tmp: URL!
    private var mounts: [String] = []

    override func setUpWithError() throws {
        tmp = try CLI.temporaryDirectory("convert-midi-bad")
    }

    override func tearDownWithError() throws {
        for m in mounts.reversed() { _ = try? Self.command("/bin/umount", [m]) }
        try? FileManager.default.removeItem(at: tmp)
    }

    // MARK: Helpers

    private static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    /// A format-0 file, 96 PPQ, with `body` as its one track (+ end of track unless told).
    private static func midi(_ body: [UInt8], endOfTrack: Bool = true) -> [UInt8] {
        let track = body + (endOfTrack ? [0x00, 0xFF, 0x2F, 0x00] : [])
        return Array("MThd".utf8) + be32(6) + [0, 0, 0, 1, 0, 96] + Array("MTrk".utf8) + be32(track.count) + track
    }

    /// Two drum hits (channel index 9).
    private static let drums: [UInt8] = [0x00, 0x99, 36, 100, 0x30, 0x99, 38, 100]

    private func write(_ bytes: [UInt8], _ name: String, in dir: URL) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data(bytes).write(to: dir.appendingPathComponent(name))
    }

    private func manifest(_ dir: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: dir.appendingPathComponent("manifest.json"))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @discardableResult
    private static func command(_ path: String, _ args: [String]) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// Mounts a tmpfs of `size` at a new directory (options such as "ro"), or skips the test.
    private func smallFilesystem(size: String, options: String = "") throws -> URL {
        let dir = tmp.appendingPathComponent("fs-\(mounts.count)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount"),
              try Self.command("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)" + options, "tmpfs", dir.path]) == 0 else {
            throw XCTSkip("cannot mount a small tmpfs here (needs root and mount permission); the output-error case is not tested")
        }
        mounts.append(dir.path)
        return dir
    }

    private func temporaries(in dir: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.contains(".tmp-") || $0.contains(".drummer-tmp-") }
    }

    // MARK: Every bad file named

    /// A MIDI file (and a folder) whose name is not UTF-8 was "skipped: …: cannot read: no such
    /// file or directory" (its name read with the byte repaired opens nothing), counted as "not a
    /// regular file": named for its name, counted as unreadable.
    func testANameThatIsNotUTF8IsNamedAsSuch() throws {
        let src = tmp.appendingPathComponent("src")
        try write(Self.midi(Self.drums), "ok.mid", in: src)
        for (bytes, directory) in [(Array("b".utf8) + [0xFF] + Array("d.mid".utf8), false), ([0x64, 0xFF], true)] {
            let path = Array(src.path.utf8) + [UInt8(ascii: "/")] + bytes + [0]
            path.withUnsafeBufferPointer { p in
                let c = UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self)
                if directory {
                    XCTAssertEqual(mkdir(c, 0o755), 0)
                } else {
                    let fd = open(c, O_CREAT | O_WRONLY, 0o644)
                    XCTAssertGreaterThanOrEqual(fd, 0)
                    let file = Self.midi(Self.drums)
                    XCTAssertEqual(file.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }, file.count)
                    close(fd)
                }
            }
        }
        let r = try CLI.run(["convert-midi", src.path, "-o", tmp.appendingPathComponent("data").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("skipped: \(src.path)/b\u{FFFD}d.mid: its name is not UTF-8 text (shown with U+FFFD); rename it to read it"), r.stderr)
        XCTAssertTrue(r.stderr.contains("skipped: \(src.path)/d\u{FFFD}: its name is not UTF-8 text"), r.stderr)
        XCTAssertTrue(r.stdout.contains("3 files: 1 read cleanly, 0 recovered, 2 skipped (2 unreadable)"), r.stdout)
    }

    func testADirectoryOfOnlyBadFilesNamesEveryFileAndWritesNothing() throws {
        let input = tmp.appendingPathComponent("in")
        try write(Array("<!DOCTYPE html>\n<html><head><title>404</title></head></html>\n".utf8), "page.mid", in: input)
        try write(Array(Self.midi(Self.drums).prefix(27)), "truncated.mid", in: input)
        try write([], "empty.mid", in: input)
        try FileManager.default.createDirectory(at: input.appendingPathComponent("folder.mid"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: input.appendingPathComponent("dangling.mid").path,
                                                   withDestinationPath: tmp.appendingPathComponent("nowhere.mid").path)
        XCTAssertEqual(mkfifo(input.appendingPathComponent("pipe.midi").path, 0o644), 0)
        var expected = [
            "skipped: \(input.path)/dangling.mid: cannot read: no such file or directory",
            "skipped: \(input.path)/empty.mid: empty file, expected an \"MThd\" header",
            "skipped: \(input.path)/folder.mid: not a regular file (a directory)",
            "skipped: \(input.path)/page.mid: not a MIDI file: starts with \"<!DO\" (3C 21 44 4F), expected \"MThd\" or \"RIFF\"",
            "skipped: \(input.path)/pipe.midi: not a regular file (a FIFO)",
            "skipped: \(input.path)/truncated.mid: truncated at byte 27: expected an event after the delta time",
        ]
        var files = 6
        if getuid() != 0 {
            try write(Self.midi(Self.drums), "secret.mid", in: input)
            chmod(input.appendingPathComponent("secret.mid").path, 0)
            expected.insert("skipped: \(input.path)/secret.mid: cannot read: permission denied", at: 4)
            files += 1
        }  // as root every file is readable: the dangling link stands for an unreadable file
        let out = tmp.appendingPathComponent("out")
        let r = try CLI.run(["convert-midi", input.path, "-o", out.path])
        XCTAssertEqual(r.status, 1, r.stderr)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.filter { $0.hasPrefix("skipped: ") }, expected, r.stderr)
        let kinds = getuid() != 0 ? "1 not MIDI, 1 empty, 1 truncated, 2 unreadable, 2 not a regular file"
                                  : "1 not MIDI, 1 empty, 1 truncated, 1 unreadable, 2 not a regular file"
        XCTAssertTrue(lines.contains("\(files) files: 0 read cleanly, 0 recovered, \(files) skipped (\(kinds))"), r.stderr)
        XCTAssertEqual(lines.last, "error: none of the \(files) MIDI files under \(input.path) could be converted (\(files) skipped: see above)")
        XCTAssertFalse(r.stderr.contains("no hits"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path))
        XCTAssertEqual(temporaries(in: tmp), [])
    }

    func testMixedGoodAndBadFilesConvertTheGoodAndListTheBad() throws {
        let input = tmp.appendingPathComponent("in")
        try write(Self.midi(Self.drums), "a-good.mid", in: input)
        try write(Self.midi([0x00, 0x99, 42, 90]), "b-good.MID", in: input)
        try write(Array("not midi at all".utf8), "c-bad.mid", in: input)
        try FileManager.default.createSymbolicLink(atPath: input.appendingPathComponent("d-link.mid").path,
                                                   withDestinationPath: input.appendingPathComponent("a-good.mid").path)
        let out = tmp.appendingPathComponent("out")
        let r = try CLI.run(["convert-midi", input.path, "-o", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("skipped: \(input.path)/c-bad.mid: not a MIDI file: starts with \"not \" (6E 6F 74 20)"), r.stderr)
        XCTAssertTrue(r.stderr.contains("4 files: 3 read cleanly, 0 recovered, 1 skipped (1 not MIDI)"), r.stderr)
        XCTAssertTrue(r.stdout.contains("Scanned 4 files (3 converted, 1 skipped), 5 hits"), r.stdout)
        XCTAssertTrue(r.stdout.contains("4 files: 3 read cleanly, 0 recovered, 1 skipped (1 not MIDI)"), r.stdout)
        let m = try manifest(out)
        XCTAssertEqual((m["files"] as? [[String: Any]])?.compactMap { $0["path"] as? String }, ["a-good.mid", "b-good.MID", "d-link.mid"])
        let skipped = try XCTUnwrap(m["skipped"] as? [[String: Any]])
        XCTAssertEqual(skipped.count, 1)
        XCTAssertEqual(skipped.first?["path"] as? String, "c-bad.mid")
        XCTAssertEqual(skipped.first?["kind"] as? String, "not MIDI")
        XCTAssertEqual(skipped.first?["error"] as? String, "not a MIDI file: starts with \"not \" (6E 6F 74 20), expected \"MThd\" or \"RIFF\"")
        XCTAssertEqual((m["recovered"] as? [Any])?.count, 0)
    }

    func testFilesReadButWithoutHitsOnTheChannelSayWhy() throws {
        let input = tmp.appendingPathComponent("in")
        try write(Self.midi(Self.drums), "a.mid", in: input)
        try write([], "b.mid", in: input)
        let r = try CLI.run(["convert-midi", input.path, "-o", tmp.appendingPathComponent("out").path, "--channel", "3"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("skipped: \(input.path)/b.mid: empty file"), r.stderr)
        XCTAssertTrue(r.stderr.contains("warning: \(input.path)/a.mid: no hits: NOTE ON with velocity > 0 not found"), r.stderr)
        XCTAssertTrue(r.stderr.hasSuffix("error: none of the 1 file read under \(input.path) holds a hit (NOTE ON with velocity > 0) "
                                         + "on the selected channels (--channel 3: channel index 3 only): \(input.path)/a.mid\n"), r.stderr)
        // Beside a file with hits, the file without is read, kept (a file of no steps) and counted apart.
        try write(Self.midi(Self.drums), "b.mid", in: input)
        try write(Self.midi([]), "c.mid", in: input)
        let three = try CLI.run(["convert-midi", input.path, "-o", tmp.appendingPathComponent("out3").path])
        XCTAssertEqual(three.status, 0, three.stderr)
        XCTAssertTrue(three.stdout.contains("Scanned 3 files (3 converted, 1 of them without hits, 0 skipped)"), three.stdout)
        XCTAssertTrue(three.stderr.contains("warning: \(input.path)/c.mid: no hits"), three.stderr)
        // --strict refuses it, and says that it holds no hits (it said the file could not be read).
        let strict = try CLI.run(["convert-midi", input.path, "-o", tmp.appendingPathComponent("strict").path, "--strict"])
        XCTAssertEqual(strict.status, 1)
        XCTAssertTrue(strict.stderr.hasSuffix("error: 1 file(s) hold no hits; --strict writes nothing\n"), strict.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: tmp.appendingPathComponent("strict").path))
    }

    // MARK: Parse policies

    func testRecoverableDefectsAreRecoveredByDefaultListedAndRefusedWhenStrict() throws {
        let input = tmp.appendingPathComponent("in")
        try write(Self.midi(Self.drums) + [0x0A, 0x0A], "trailing.mid", in: input)          // bytes after the last chunk
        try write(Self.midi(Self.drums, endOfTrack: false), "no-end.mid", in: input)        // no end-of-track
        var cut = Self.midi(Self.drums, endOfTrack: false)                                  // length past the end,
        cut.replaceSubrange(18..<22, with: Self.be32(400))                                  // events end cleanly
        try write(cut, "cut.mid", in: input)
        try write(Self.midi([0x00, 0xF8] + Self.drums), "illegal.mid", in: input)           // a guess: safe refuses
        try write(Self.midi(Self.drums), "clean.mid", in: input)

        let out = tmp.appendingPathComponent("out")
        let r = try CLI.run(["convert-midi", input.path, "-o", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        for w in ["\(input.path)/cut.mid: byte 18: chunk length 400 runs past the end of the file, expected at most 8 (read the chunk up to the end of the file)",
                  "\(input.path)/cut.mid: byte 30: track ends without an end-of-track event, expected FF 2F 00 (ended the track at the end of its chunk)",
                  "\(input.path)/no-end.mid: byte 30: track ends without an end-of-track event, expected FF 2F 00 (ended the track at the end of its chunk)",
                  "\(input.path)/trailing.mid: byte 34: 2 bytes after the last chunk that do not form a chunk, expected the end of the file (ignored them)"] {
            XCTAssertTrue(r.stderr.contains("warning: " + w), "\(w)\n\(r.stderr)")
        }
        XCTAssertTrue(r.stderr.contains("skipped: \(input.path)/illegal.mid: byte 23: system common or real-time status 0xF8"), r.stderr)
        XCTAssertTrue(r.stdout.contains("5 files: 1 read cleanly, 3 recovered (warnings above), 1 skipped (1 malformed)"), r.stdout)
        let m = try manifest(out)
        let recovered = try XCTUnwrap(m["recovered"] as? [[String: Any]])
        XCTAssertEqual(recovered.compactMap { $0["path"] as? String }, ["cut.mid", "no-end.mid", "trailing.mid"])
        XCTAssertEqual((recovered.first?["warnings"] as? [String])?.count, 2)
        XCTAssertEqual((m["settings"] as? [String: Any])?["parse_mode"] as? String, "safe")
        XCTAssertEqual((m["statistics"] as? [String: Any])?["hits"] as? Int, 8)

        let strictOut = tmp.appendingPathComponent("strict")
        let s = try CLI.run(["convert-midi", input.path, "-o", strictOut.path, "--strict"])
        XCTAssertEqual(s.status, 1)
        XCTAssertEqual(s.stderr.components(separatedBy: "bad file: ").count - 1, 4, s.stderr)
        XCTAssertTrue(s.stderr.contains("error: 4 file(s) could not be read cleanly; --strict writes nothing"), s.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: strictOut.path))

        let lenientOut = tmp.appendingPathComponent("lenient")
        let l = try CLI.run(["convert-midi", input.path, "-o", lenientOut.path, "--lenient"])
        XCTAssertEqual(l.status, 0, l.stderr)
        XCTAssertTrue(l.stdout.contains("5 files: 1 read cleanly, 4 recovered (warnings above), 0 skipped"), l.stdout)
        XCTAssertEqual((try manifest(lenientOut)["settings"] as? [String: Any])?["parse_mode"] as? String, "lenient")

        let both = try CLI.run(["convert-midi", input.path, "-o", out.path, "--strict", "--lenient"])
        XCTAssertEqual(both.status, 64)
        XCTAssertTrue(both.stderr.contains("--strict and --lenient cannot be combined"), both.stderr)
    }

    // MARK: Flags

    func testFlagsAtTheirLimitsAreRejectedWithoutOverflow() throws {
        let input = tmp.appendingPathComponent("in")
        try write(Self.midi(Self.drums), "a.mid", in: input)
        let out = tmp.appendingPathComponent("out").path
        let max = String(Int.max), min = String(Int.min)
        for (args, message) in [
            (["--quantize", max], "--quantize must be between 1 and 1048576 ticks (got \(max))"),
            (["--quantize", "1048577"], "--quantize must be between 1 and 1048576 ticks"),
            (["--max-delta", max], "--max-delta must be between 0 and 1048576 ticks (got \(max))"),
            (["--max-delta=\(min)"], "--max-delta must be between 0 and 1048576 ticks (got \(min))"),
            (["--ppq", max], "--ppq must be between 1 and 32767"),
            (["--threads", max], "--threads must be between 1 and 1024"),
            (["--threads", "0"], "--threads must be between 1 and 1024"),
            (["--validation-fraction", "nan"], "--validation-fraction must be at least 0 and below 1"),
            (["--validation-fraction", "inf"], "--validation-fraction must be at least 0 and below 1"),
            (["--ppq", "9223372036854775808"], "--ppq"),
        ] {
            let r = try CLI.run(["convert-midi", input.path, "-o", out] + args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
        }
        let env = try CLI.run(["convert-midi", input.path, "-o", out], environment: ["DRUMMER_THREADS": "lots"])
        XCTAssertEqual(env.status, 64)
        XCTAssertTrue(env.stderr.contains("DRUMMER_THREADS must be a number of threads between 1 and 1024 (got \"lots\")"), env.stderr)
        // The largest accepted values work.
        let ok = try CLI.run(["convert-midi", input.path, "-o", out, "--quantize", "1048576", "--max-delta", "1048576"])
        XCTAssertEqual(ok.status, 0, ok.stderr)
    }

    func testEveryFileInTheValidationSplitIsSaidSo() throws {
        let input = tmp.appendingPathComponent("in")
        for name in ["a.mid", "b.mid", "c.mid"] { try write(Self.midi(Self.drums), name, in: input) }
        let r = try CLI.run(["convert-midi", input.path, "-o", tmp.appendingPathComponent("out").path, "--validation-fraction", "0.99"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.hasSuffix("error: all 3 files fell into the validation split (fraction 0.99); lower --validation-fraction\n"), r.stderr)
    }

    // MARK: Threads

    func testOutputIsByteIdenticalForAnyThreadCount() throws {
        let groove = CLI.repoRoot.appendingPathComponent("corpus/groove")
        let runs: [(String, [String], [String: String])] = [
            ("one", ["--threads", "1"], [:]), ("all", [], [:]), ("env", [], ["DRUMMER_THREADS": "3"]), ("many", ["--threads", "7"], [:]),
        ]
        var outputs: [URL] = []
        for (name, args, env) in runs {
            let out = tmp.appendingPathComponent(name)
            let r = try CLI.run(["convert-midi", groove.path, "-o", out.path, "--validation-fraction", "0.1", "--quantize", "30"] + args,
                                environment: env)
            XCTAssertEqual(r.status, 0, r.stderr)
            // (A progress line comes after 2 s: on a loaded machine the one-thread run takes that
            // long, so its absence is not this test's to check.)
            outputs.append(out)
        }
        for name in ["events.npy", "vocab.json", "manifest.json", "validation/events.npy", "validation/vocab.json"] {
            let first = try Data(contentsOf: outputs[0].appendingPathComponent(name))
            for other in outputs.dropFirst() {
                XCTAssertEqual(try Data(contentsOf: other.appendingPathComponent(name)), first, "\(name): \(other.lastPathComponent)")
            }
        }
    }

    // MARK: Output errors

    func testNoSpaceLeftIsOneSentenceAndLeavesThePreviousOutput() throws {
        let fs = try smallFilesystem(size: "64k")
        let out = fs.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        // A previous dataset (convert-midi's manifest marks the directory as the tool's own).
        try Data("previous\n".utf8).write(to: out.appendingPathComponent("events.npy"))
        try Data(#"{"tool": "drummer convert-midi"}"#.utf8).write(to: out.appendingPathComponent("manifest.json"))
        let input = tmp.appendingPathComponent("in")
        let groove = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer1/session1")
        for name in try FileManager.default.contentsOfDirectory(atPath: groove.path).sorted().prefix(4) {
            try write(Array(try Data(contentsOf: groove.appendingPathComponent(name))), name, in: input)
        }
        let r = try CLI.run(["convert-midi", input.path, "-o", out.path, "--onehot"])
        XCTAssertEqual(r.status, 1, r.stderr)
        let last = r.stderr.split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(last.hasPrefix("error: \(out.path): cannot write "), last)
        XCTAssertTrue(last.hasSuffix(": no space left on device (\(out.path) was left as it was)"), last)
        XCTAssertFalse(last.contains("tmp-"), last)
        XCTAssertEqual(temporaries(in: fs), [])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted(), ["events.npy", "manifest.json"])
        XCTAssertEqual(try String(contentsOf: out.appendingPathComponent("events.npy"), encoding: .utf8), "previous\n")
    }

    func testAReadOnlyOutputIsRefusedBeforeReading() throws {
        let fs = try smallFilesystem(size: "64k", options: ",ro")
        let input = tmp.appendingPathComponent("in")
        try write(Self.midi(Self.drums), "a.mid", in: input)
        let out = fs.appendingPathComponent("data")
        let r = try CLI.run(["convert-midi", input.path, "-o", out.path])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "error: \(out.path): cannot create a directory in \(fs.path): read-only file system\n")
    }

    // MARK: Ctrl-C

    func testInterruptRemovesTheTemporaryOutputAndExits130() throws {
        let groove = CLI.repoRoot.appendingPathComponent("corpus/groove")
        let out = tmp.appendingPathComponent("out")
        // Press Ctrl-C while the temporary output directory exists (the outputs are being
        // written). The write phase lasts a second or two; a run that finishes before the
        // directory is seen is retried (its output removed), up to five times.
        for attempt in 1...5 {
            try? FileManager.default.removeItem(at: out)
            let p = Process()
            p.executableURL = CLI.binary
            p.arguments = ["convert-midi", groove.path, "-o", out.path, "--onehot", "--validation-fraction", "0.1"]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            let deadline = Date().addingTimeInterval(120)
            var seen = false
            while p.isRunning, Date() < deadline {
                if !temporaries(in: tmp).isEmpty { seen = true; break }
                usleep(500)
            }
            guard seen, p.isRunning else {
                p.waitUntilExit()
                if attempt == 5 { throw XCTSkip("convert-midi --onehot finished before it could be interrupted (5 tries)") }
                continue
            }
            p.interrupt()
            p.waitUntilExit()
            XCTAssertEqual(p.terminationReason, .exit)
            XCTAssertEqual(p.terminationStatus, 130)
            XCTAssertEqual(temporaries(in: tmp), [])
            XCTAssertFalse(FileManager.default.fileExists(atPath: out.path))
            return
        }
    }
}
