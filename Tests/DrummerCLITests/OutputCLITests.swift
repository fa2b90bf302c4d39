// Reproducers of output failures through the built binary: outputs are written,
// not replaced; temporaries are swept and removed on Ctrl-C; errors come early and
// name the file at fault; negative numbers get the range message.
import Foundation
import XCTest

final class OutputCLITests: XCTestCase {
    private var tmp: URL!
    private var fm: FileManager { FileManager.default }

    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("output-cli") }
    override func tearDownWithError() throws { try? fm.removeItem(at: tmp) }

    private var model: String { CLI.repoRoot.appendingPathComponent("models/groove").path }

    private func path(_ name: String) -> String { tmp.appendingPathComponent(name).path }

    private func fileType(_ p: String) -> mode_t {
        var st = stat()
        guard lstat(p, &st) == 0 else { return 0 }
        return st.st_mode & S_IFMT
    }

    private func temporaries(_ dir: URL? = nil) -> [String] {
        ((try? fm.contentsOfDirectory(atPath: (dir ?? tmp).path)) ?? []).filter {
            $0.contains(".drummer-tmp-") || $0.contains(".drummer-old-")
        }
    }

    // MARK: Write, don't replace

    /// `mknod n c 1 3; drummer sample MODEL -n 3 --seed 1 -o n` leaves `n` a device.
    /// One-character names relative to the working directory (Foundation's
    /// deletingLastPathComponent traps on them): written like any other.
    func testOneCharacterNames() throws {
        let src = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src").path
        var r = try CLI.run(["convert-midi", src, "-o", "d"], cwd: tmp)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(fm.fileExists(atPath: path("d/events.npy")))
        r = try CLI.run(["sample", model, "-n", "20", "-o", "g"], cwd: tmp)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(fm.fileExists(atPath: path("g")))
    }

    func testSampleIntoACharacterDeviceLeavesTheDevice() throws {
        guard mknod(path("n"), S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0 else {
            throw XCTSkip("mknod is not permitted here (needs root)")
        }
        let r = try CLI.run(["sample", model, "-n", "3", "--seed", "1", "-o", "n"], cwd: tmp)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("wrote n: 3 hits"), r.stdout)
        XCTAssertEqual(fileType(path("n")), S_IFCHR)
        XCTAssertEqual(temporaries(), [])
        let null = try CLI.run(["sample", model, "-n", "3", "--seed", "1", "-o", "/dev/null"])
        XCTAssertEqual(null.status, 0, null.stderr)
        XCTAssertEqual(fileType("/dev/null"), S_IFCHR)
    }

    /// `sample -o -` writes the MIDI bytes to standard output, the status line to stderr.
    func testSampleToStandardOutputWritesTheMIDIBytes() throws {
        let file = try CLI.run(["sample", model, "-n", "40", "--seed", "7", "-o", path("g.mid")])
        XCTAssertEqual(file.status, 0, file.stderr)
        let r = try CLI.run(["sample", model, "-n", "40", "--seed", "7", "-o", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdoutData, try Data(contentsOf: URL(fileURLWithPath: path("g.mid"))))
        let midi = try XCTUnwrap(TinyMIDI([UInt8](r.stdoutData)))
        XCTAssertEqual(midi.noteOns.count, 40)
        XCTAssertTrue(r.stderr.contains("wrote -: 40 hits, seed 7"), r.stderr)
        // /dev/stdout is the same descriptor.
        let dev = try CLI.run(["sample", model, "-n", "40", "--seed", "7", "-o", "/dev/stdout"])
        XCTAssertEqual(dev.stdoutData, r.stdoutData)
        // Two things cannot share standard output.
        let both = try CLI.run(["sample", model, "-o", "-", "--json"])
        XCTAssertEqual(both.status, 64)
        XCTAssertTrue(both.stderr.contains("--json prints to standard output"), both.stderr)
        let many = try CLI.run(["sample", model, "-o", "-", "--count", "2"])
        XCTAssertTrue(many.stderr.contains("--count must be 1"), many.stderr)
        let numbered = try CLI.run(["sample", model, "-o", "/dev/null", "--count", "2"])
        XCTAssertEqual(numbered.status, 1)
        XCTAssertTrue(numbered.stderr.contains("/dev/null: not a regular file: --count 2 writes 2 files named after -o"),
                      numbered.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/dev/null-1"))
    }

    /// `export --format onnx|safetensors -o -` and `encode -o -` write the file's bytes alone to
    /// standard output (their status line went there too, after the bytes: a piped graph no
    /// reader could load); the line goes to standard error.
    func testExportAndEncodeToStandardOutputWriteTheFileAlone() throws {
        for format in ["safetensors", "onnx"] {
            let file = try CLI.run(["export", model, "--format", format, "-o", path("m.\(format)")])
            XCTAssertEqual(file.status, 0, file.stderr)
            XCTAssertTrue(file.stdout.hasPrefix("exported \(model) to "), file.stdout)
            let piped = try CLI.run(["export", model, "--format", format, "-o", "-"])
            XCTAssertEqual(piped.status, 0, piped.stderr)
            XCTAssertEqual(piped.stdoutData, try Data(contentsOf: URL(fileURLWithPath: path("m.\(format)"))), format)
            XCTAssertTrue(piped.stderr.contains("exported \(model) to -: \(format)"), piped.stderr)
        }
        let beat = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer6/session3/2_rock_100_beat_4-4.mid").path
        let file = try CLI.run(["encode", model, "--data", beat, "-o", path("rows.npy")])
        XCTAssertEqual(file.status, 0, file.stderr)
        let piped = try CLI.run(["encode", model, "--data", beat, "-o", "/dev/stdout"])
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertEqual(piped.stdoutData, try Data(contentsOf: URL(fileURLWithPath: path("rows.npy"))))
        XCTAssertTrue(piped.stderr.hasPrefix("wrote /dev/stdout: 498 rows × 51 input groups"), piped.stderr)
    }

    /// A symlink is followed, its target replaced, the link kept; a directory is refused.
    func testSymlinkIsFollowedAndADirectoryRefused() throws {
        try fm.createDirectory(atPath: path("songs"), withIntermediateDirectories: true)
        try Data("old".utf8).write(to: URL(fileURLWithPath: path("songs/take.mid")))
        XCTAssertEqual(symlink("songs/take.mid", path("latest.mid")), 0)
        let r = try CLI.run(["sample", model, "-n", "8", "--seed", "1", "-o", "latest.mid"], cwd: tmp)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(fileType(path("latest.mid")), S_IFLNK)
        XCTAssertNotNil(TinyMIDI([UInt8](try Data(contentsOf: URL(fileURLWithPath: path("songs/take.mid"))))))
        XCTAssertEqual(temporaries(tmp.appendingPathComponent("songs")), [])

        let d = try CLI.run(["sample", model, "-n", "8", "-o", path("songs")])
        XCTAssertEqual(d.status, 1)
        XCTAssertTrue(d.stderr.contains("\(path("songs")): is a directory"), d.stderr)
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: path("songs")), ["take.mid"])
    }

    /// A read-only dataset directory (`chmod 555 d`, replaced by a user who cannot remove its
    /// files) was swapped out and its old copy left under a temporary name, exit 0: refused
    /// before any work, the directory as it was. As root, the run is the user nobody's.
    func testAReadOnlyDirectoryIsNotReplaced() throws {
        // As root, the run is nobody's, in a folder of /tmp nobody reaches (the tests' own
        // TMPDIR and the checkout may be closed to others), with copies of the binary and MIDI.
        let root = getuid() == 0
        let base = root ? URL(fileURLWithPath: "/tmp/drummer-read-only-\(UUID().uuidString)") : tmp!
        var binary = CLI.binary.path, src = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src").path
        if root {
            guard fm.isExecutableFile(atPath: "/usr/bin/setpriv") else {
                throw XCTSkip("running as root, and /usr/bin/setpriv (util-linux) is missing to run as another user")
            }
            try fm.createDirectory(at: base, withIntermediateDirectories: true)
            XCTAssertEqual(chmod(base.path, 0o777), 0)
            try fm.copyItem(atPath: binary, toPath: base.path + "/drummer")
            try fm.copyItem(atPath: src, toPath: base.path + "/src")
            binary = base.path + "/drummer"
            src = base.path + "/src"
        }
        defer {
            for d in ["d", "e"] { chmod(base.path + "/" + d, 0o755) }
            if root { try? fm.removeItem(at: base) }
        }
        func run(_ args: [String]) throws -> CLIResult {
            root ? try CLI.run(executable: URL(fileURLWithPath: "/usr/bin/setpriv"),
                               ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + args)
                : try CLI.run(args)
        }
        let d = base.path + "/d", e = base.path + "/e"
        var r = try run(["convert-midi", src, "-o", d])
        XCTAssertEqual(r.status, 0, r.stderr)
        let before = try fm.contentsOfDirectory(atPath: d).sorted()
        XCTAssertEqual(chmod(d, 0o555), 0)
        r = try run(["convert-midi", src, "-o", d])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("\(d): not replacing it: it is read-only, so its old files could not be removed"), r.stderr)
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: d).sorted(), before)
        XCTAssertEqual(temporaries(base), [])
        // An empty read-only directory has no files to remove: replaced, as before.
        try fm.createDirectory(atPath: e, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(e, 0o555), 0)
        r = try run(["convert-midi", src, "-o", e])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(fm.fileExists(atPath: e + "/manifest.json"))
    }

    // MARK: Clean up

    /// Temporaries of a killed run are removed by the next run in the directory, with a
    /// line saying so; foreign files and live temporaries are kept.
    func testStaleTemporariesOfAKilledRunAreRemovedWithALine() throws {
        let dead = try CLI.deadPID()
        // A user's backup named like another tool's temporary is not the tool's to remove.
        for name in [".g.mid.drummer-tmp-\(dead)-1-0000abcd", ".ckpt-500.h5.drummer-tmp-\(dead)-1-0000abce", "keep.txt",
                     ".g.mid.old-\(dead)-77"] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: path(name)))
        }
        let r = try CLI.run(["sample", model, "-n", "3", "--seed", "1", "-o", path("g.mid")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("drummer: removed 2 stale temporary output(s) (files or folders) from a killed run in \(tmp.path)"),
                      r.stderr)
        XCTAssertEqual(Set(try fm.contentsOfDirectory(atPath: tmp.path)), ["g.mid", "keep.txt", ".g.mid.old-\(dead)-77"])
    }

    /// Ctrl-C (twice, as an impatient user does) while convert-midi --onehot writes its
    /// 1.8 GB output: the temporary directory is removed, the previous dataset is
    /// untouched, exit status 130.
    func testCtrlCDuringConvertRemovesItsTemporaryDirectory() throws {
        let corpus = CLI.repoRoot.appendingPathComponent("corpus/groove")
        guard fm.fileExists(atPath: corpus.path) else { throw XCTSkip("corpus/groove is not present") }
        let out = tmp.appendingPathComponent("data")
        try fm.createDirectory(at: out, withIntermediateDirectories: true)
        try Data(#"{"tool": "drummer convert-midi", "marker": "previous"}"#.utf8)
            .write(to: out.appendingPathComponent("manifest.json"))
        let run = try BackgroundRun(["convert-midi", corpus.path, "-o", "data", "--onehot"], in: tmp)
        // The temporary directory appears once every file has been read; interrupt once X.npy
        // in it has data (what the program writes, not a sleep).
        let writing = run.wait(seconds: 120) {
            temporaries().contains { t in
                let x = tmp.appendingPathComponent(t).appendingPathComponent("X.npy").path
                return ((try? fm.attributesOfItem(atPath: x)[.size] as? Int) ?? 0) > 0
            }
        }
        XCTAssertTrue(writing, "no temporary X.npy with data appeared")
        run.signal(SIGINT)
        // A second Ctrl-C while the first is being handled (it has said so, or not yet exited).
        _ = run.wait(seconds: 5) { !run.process.isRunning || run.stderrText.contains("interrupted") }
        if run.process.isRunning { run.signal(SIGINT) }
        let (status, stdout, stderr) = try run.finish()
        XCTAssertEqual(status, 130, stderr)
        XCTAssertTrue(stderr.contains("drummer: interrupted: data was not written (its temporary output was removed)"),
                      stderr)
        XCTAssertFalse(stdout.contains("Done!"), stdout)
        XCTAssertEqual(temporaries(), [])
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: out.path), ["manifest.json"])
        XCTAssertTrue(try String(contentsOf: out.appendingPathComponent("manifest.json"), encoding: .utf8)
            .contains("previous"))
    }

    /// Ctrl-C while `sample --wav` renders (a stand-in fluidsynth that writes its output
    /// and waits): the temporary WAV file and the MIDI file staged with it are removed (the
    /// run's files are put in place together at its end), the status is 130.
    func testCtrlCDuringSampleRemovesItsTemporaryFile() throws {
        let bin = tmp.appendingPathComponent("bin")
        try fm.createDirectory(at: bin, withIntermediateDirectories: true)
        let pidFile = path("synth.pid")
        try """
            #!/bin/sh
            while [ "$1" != "-F" ]; do shift; done
            echo RIFF > "$2"
            echo $$ > \(pidFile)
            exec sleep 60
            """.write(to: bin.appendingPathComponent("fluidsynth"), atomically: true, encoding: .utf8)
        chmod(bin.appendingPathComponent("fluidsynth").path, 0o755)
        // A SoundFont 2 header (RIFF, size, sfbk): the stand-in FluidSynth reads no further.
        try Data("RIFF\u{4}\u{0}\u{0}\u{0}sfbk".utf8).write(to: URL(fileURLWithPath: path("font.sf2")))
        let run = try BackgroundRun(["sample", model, "-n", "8", "--seed", "1", "-o", "s.mid", "--wav", "s.wav",
                                     "--soundfont", "font.sf2"], in: tmp, environment: ["PATH": bin.path + ":/usr/bin:/bin"])
        defer {
            if let pid = try? String(contentsOfFile: pidFile, encoding: .utf8), let p = Int32(pid.trimmingCharacters(in: .whitespacesAndNewlines)) {
                kill(p, SIGKILL)
            }
        }
        XCTAssertTrue(run.wait(seconds: 30) { fm.fileExists(atPath: pidFile) }, "the stand-in fluidsynth did not start")
        XCTAssertEqual(temporaries().count, 2, "\(temporaries())")
        run.signal(SIGINT)
        let (status, _, stderr) = try run.finish()
        XCTAssertEqual(status, 130, stderr)
        // One line for the run's outputs.
        let line = try XCTUnwrap(stderr.split(separator: "\n").first { $0.hasPrefix("drummer: interrupted: 2 outputs were not written (") }, stderr)
        XCTAssertTrue(line.contains("s.mid") && line.contains("s.wav") && line.hasSuffix("; their temporary outputs were removed)"), stderr)
        XCTAssertEqual(temporaries(), [])
        XCTAssertFalse(fm.fileExists(atPath: path("s.wav")))
        XCTAssertFalse(fm.fileExists(atPath: path("s.mid")))
    }

    // MARK: Right errors early

    private func checkpoint() throws -> String {
        let data = tmp.appendingPathComponent("data")
        let groove: [(Int32, Int32)] = [(0, 2), (2, 1), (1, 1), (2, 1)]
        try TestDataset.write(data, pairs: (0..<200).map { groove[$0 % 4] },
                              vocabJSON: #"{"ix_to_note": [36, 38, 42], "ix_to_tick": [0, 120, 240]}"#)
        let t = try CLI.run(["train", "--recipe", "original", "--data", data.path, "--hidden", "4", "--unroll", "8", "--steps", "1",
                             "--checkpoint-dir", path("ck")])
        XCTAssertEqual(t.status, 0, t.stderr + t.stdout)
        return path("ck/ckpt-1.h5")
    }

    /// `export --swift` to an unwritable path fails before the model directory is
    /// written; a directory that is not a model directory is never replaced.
    func testExportChecksBothOutputsFirstAndRefusesForeignDirectories() throws {
        let ckpt = try checkpoint()
        try Data().write(to: URL(fileURLWithPath: path("plain")))
        let r = try CLI.run(["export", ckpt, "-o", path("model"), "--swift", path("plain/Drum.swift")])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("\(path("plain/Drum.swift")): \(path("plain")) is not a directory"), r.stderr)
        XCTAssertFalse(fm.fileExists(atPath: path("model")))
        // A Swift file in the model directory (or at its path) would go with the directory export
        // replaces whole: refused before anything is written (it replaced the directory, then failed).
        for swift in [path("model/Drum.swift"), path("model/model.json"), path("model")] {
            let inside = try CLI.run(["export", ckpt, "-o", path("model"), "--swift", swift])
            XCTAssertEqual(inside.status, 64, inside.stderr)
            XCTAssertTrue(inside.stderr.contains("--swift \(swift) lies in the model directory -o \(path("model")), which export "
                                                 + "replaces whole: write the Swift file beside it"), inside.stderr)
            XCTAssertFalse(fm.fileExists(atPath: path("model")))
        }

        try fm.createDirectory(atPath: path("photos"), withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: path("photos/a.jpg")))
        let foreign = try CLI.run(["export", ckpt, "-o", path("photos")])
        XCTAssertEqual(foreign.status, 1)
        XCTAssertTrue(foreign.stderr.contains("\(path("photos")): not replacing it: it is not empty and not a drummer model directory"),
                      foreign.stderr)
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: path("photos")), ["a.jpg"])

        // --swift - writes the source to standard output, the summary to stderr; a
        // symlink to the model directory is followed and kept.
        let ok = try CLI.run(["export", ckpt, "-o", path("model"), "--swift", "-"])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(ok.stdout.hasPrefix("// Generated by `drummer export`"), ok.stdout)
        XCTAssertTrue(ok.stderr.contains("exported"), ok.stderr)
        XCTAssertEqual(symlink("model", path("current")), 0)
        let again = try CLI.run(["export", ckpt, "-o", path("current")])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(fileType(path("current")), S_IFLNK)
        XCTAssertEqual(Set(try fm.contentsOfDirectory(atPath: path("model"))), ["Wx.bin", "Wy.bin", "model.json"])
        // Notes beside a model (models/groove keeps its TRAINING.md) are never deleted by a re-export.
        let before = try Data(contentsOf: URL(fileURLWithPath: path("model/Wx.bin")))
        try Data("how it was trained\n".utf8).write(to: URL(fileURLWithPath: path("model/TRAINING.md")))
        let notes = try CLI.run(["export", ckpt, "-o", path("current")])
        XCTAssertEqual(notes.status, 1)
        XCTAssertEqual(notes.stderr.split(separator: "\n").last.map(String.init),
                       "error: \(path("current")) (a link to \(path("model"))): not replacing it: it also holds TRAINING.md, "
                       + "which drummer does not write there; move it out or choose another path")
        XCTAssertEqual(Set(try fm.contentsOfDirectory(atPath: path("model"))), ["Wx.bin", "Wy.bin", "model.json", "TRAINING.md"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("model/Wx.bin"))), before)
        XCTAssertEqual(temporaries(), [])
        // convert-midi never replaces a model directory with a dataset (its help and the docs said it
        // would; it refused, rightly: a trained model lost to a typo).
        try fm.removeItem(atPath: path("model/TRAINING.md"))
        let src = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src").path
        let convert = try CLI.run(["convert-midi", src, "-o", path("model")])
        XCTAssertEqual(convert.status, 1, convert.stderr)
        XCTAssertTrue(convert.stderr.contains("\(path("model")): not replacing it: it is not empty and not a drummer dataset directory"),
                      convert.stderr)
        // Refused before the folder is read: no file's warning or summary, one line.
        XCTAssertEqual(convert.stdout, "")
        XCTAssertEqual(convert.stderr.split(separator: "\n").count, 1, convert.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("model/Wx.bin"))), before)
    }

    /// model.json errors as sentences naming the file; a model directory of symlinks loads.
    func testModelErrorsNameTheFileAndSymlinkedModelsLoad() throws {
        let links = tmp.appendingPathComponent("links")
        try fm.createDirectory(at: links, withIntermediateDirectories: true)
        for name in ["Wx.bin", "Wx1.bin", "Wy.bin", "model.json"] {
            XCTAssertEqual(symlink(model + "/" + name, links.appendingPathComponent(name).path), 0)
        }
        let ok = try CLI.run(["sample", links.path, "-n", "3", "--seed", "1", "-o", path("s.mid")])
        XCTAssertEqual(ok.status, 0, ok.stderr)

        let copy = tmp.appendingPathComponent("copy")
        try fm.createDirectory(at: copy, withIntermediateDirectories: true)
        for name in ["Wx.bin", "Wx1.bin", "Wy.bin"] {
            try fm.copyItem(atPath: model + "/" + name, toPath: copy.appendingPathComponent(name).path)
        }
        var manifest = try String(contentsOfFile: model + "/model.json", encoding: .utf8)
        manifest = manifest.replacingOccurrences(of: #""hidden_size" : 256"#, with: #""hidden_size" : 32.5"#)
        XCTAssertTrue(manifest.contains("32.5"))
        try manifest.write(to: copy.appendingPathComponent("model.json"), atomically: true, encoding: .utf8)
        let half = try CLI.run(["sample", copy.path, "-o", path("x.mid")])
        XCTAssertEqual(half.status, 1)
        XCTAssertTrue(half.stderr.contains("\(copy.path)/model.json: hidden_size is 32.5, expected a whole number"), half.stderr)

        try fm.removeItem(at: copy.appendingPathComponent("model.json"))
        try fm.createDirectory(at: copy.appendingPathComponent("model.json"), withIntermediateDirectories: false)
        let dir = try CLI.run(["sample", copy.path, "-o", path("x.mid")])
        XCTAssertEqual(dir.status, 1)
        XCTAssertTrue(dir.stderr.contains("\(copy.path)/model.json: is a directory, expected the JSON manifest"), dir.stderr)
        XCTAssertFalse(dir.stderr.contains("NSCocoaErrorDomain"), dir.stderr)
    }

    /// Standard output that cannot be written: a full device is said, with status 1, without a
    /// crash, whether the command prints through print() or writes a report; a reader gone
    /// (`| head`) ends it quietly with status 141, as SIGPIPE ends `cat`.
    func testStandardOutputThatCannotBeWrittenIsAnError() throws {
        let midi = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session1/102_funk_95_beat_4-4.mid").path
        let quoted = { (a: [String]) in a.map { "'\($0)'" }.joined(separator: " ") }
        // tab's and stats' text (print(): the failed write was lost in the C stream's buffer, exit 0).
        for args in [["--version"], ["help", "play"], ["tab", midi], ["tab", midi, "--bars", "0", "--json"],
                     ["tab", midi, "--bars", "0"], ["stats", midi, "--reference", midi],
                     ["eval", model, "--data", midi, "--quantize", "30", "--json"]] {
            let full = try CLI.run(executable: URL(fileURLWithPath: "/bin/sh"), ["-c", "\(quoted([CLI.binary.path] + args)) > /dev/full"])
            XCTAssertEqual(full.status, 1, "\(args): \(full.stderr)")
            XCTAssertTrue(full.stderr.hasSuffix("error: could not write to standard output: no space left on device\n"), "\(args): \(full.stderr)")
            XCTAssertFalse(full.stderr.contains("Fatal error"), "\(args): \(full.stderr)")
        }
        // A reader that goes away after the first bytes of a long report (JSON, and text as a
        // terminal view is piped into head).
        let long = path("long.mid")  // 600 bars of a rock beat: a tab of 600 bars, past a pipe's 64 KB
        var rock: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for e in 0..<4800 {
            rock.append((e * 240, 42, 80))
            if e % 4 == 0 { rock.append((e * 240, e % 8 == 0 ? 36 : 38, 100)) }
        }
        try TinySMF.drums(rock).write(to: URL(fileURLWithPath: long))
        for args in [["--bars", "0", "--json"], ["--bars", "0"]] {
            let gone = try CLI.run(executable: URL(fileURLWithPath: "/bin/bash"),
                                   ["-c", "set -o pipefail; \(quoted([CLI.binary.path, "tab", long] + args)) | head -c 10 > /dev/null"])
            XCTAssertEqual(gone.status, 141, "\(args): \(gone.stderr)")
            XCTAssertEqual(gone.stderr, "", "\(args)")
        }
    }

    /// `sample -o y.mid --wav - | head -c 4`: the WAV stream's reader goes away, the run fails,
    /// and the MIDI file of that failed run is not put in place (it was, exit 1 beside it).
    func testAFailedStreamLeavesTheRunsFilesOut() throws {
        guard ["/usr/bin/fluidsynth", "/usr/local/bin/fluidsynth"].contains(where: { fm.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("fluidsynth is not installed: sample --wav needs it")
        }
        let quoted = { (a: [String]) in a.map { "'\($0)'" }.joined(separator: " ") }
        let r = try CLI.run(executable: URL(fileURLWithPath: "/bin/bash"), [
            "-c", "set -o pipefail; \(quoted([CLI.binary.path, "sample", model, "-n", "200", "--seed", "1", "-o", path("y.mid"), "--wav", "-"])) | head -c 4 > /dev/null"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("error: -: cannot write: broken pipe"), r.stderr)
        XCTAssertFalse(fm.fileExists(atPath: path("y.mid")))
        XCTAssertEqual(temporaries(), [])
    }

    /// A device or a directory given where a file is read: said so (Foundation's read said
    /// "permission denied", even to root, and "unknown cause" for a directory).
    func testADeviceOrDirectoryGivenAsAFileIsSaidSo() throws {
        try fm.createDirectory(atPath: path("d"), withIntermediateDirectories: true)
        for (args, message) in [(["export", "/dev/null", "-o", path("m")], "error: /dev/null: cannot read the checkpoint: not a regular file (a character device)"),
                                (["import", "/dev/null", "-o", path("m")], "error: /dev/null: cannot read: not a regular file (a character device)"),
                                (["import", path("d"), "-o", path("m")], "error: \(path("d")): cannot read: is a directory")] {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 1, "\(args): \(r.stderr)")
            XCTAssertEqual(r.stderr, message + "\n", "\(args)")
        }
        XCTAssertFalse(fm.fileExists(atPath: path("m")))
    }

    /// A --soundfont that is no SoundFont is named, not rendered past in silence by FluidSynth.
    func testASoundfontThatIsNoSoundFontIsNamed() throws {
        guard ["/usr/bin/fluidsynth", "/usr/local/bin/fluidsynth"].contains(where: { fm.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("fluidsynth is not installed: the soundfont is never read")
        }
        let junk = tmp.appendingPathComponent("junk.sf2").path
        try Data("junk\n".utf8).write(to: URL(fileURLWithPath: junk))
        let r = try CLI.run(["sample", model, "-n", "20", "-o", tmp.appendingPathComponent("s.mid").path,
                             "--wav", tmp.appendingPathComponent("s.wav").path, "--soundfont", junk])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stderr, "error: --soundfont \(junk): not a SoundFont (a RIFF sfbk file, .sf2 or .sf3)\n")
        XCTAssertFalse(fm.fileExists(atPath: tmp.appendingPathComponent("s.mid").path))
        XCTAssertFalse(fm.fileExists(atPath: tmp.appendingPathComponent("s.wav").path))
    }

    /// A negative number is a value with a range message, not "Missing value".
    func testNegativeNumbersGetTheirRangeMessage() throws {
        let midi = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session1/100_neworleans-secondline_94_beat_4-4.mid").path
        for (args, message) in [
            (["train", "--recipe", "original", "--steps", "-1"], "--steps must not be negative, got -1"),
            (["train", "--recipe", "original", "--lr", "-0.5"], "--lr must be a positive number, got -0.5"),
            (["train", "--recipe", "original", "--hidden", "-3"], "--hidden must be between 1 and 4096, got -3"),
            (["sample", model, "-n", "-5"], "-n must be between 1 and 10000000, got -5"),
            (["sample", model, "--temperature", "-1"], "--temperature must be a number from 0 to 100, got -1.0"),
            (["sample", model, "--count", "-2"], "--count must be between 1 and 10000, got -2"),
            (["convert-midi", tmp.path, "--max-delta", "-1"], "--max-delta must be between 0 and 1048576 ticks (got -1)"),
            (["convert-midi", tmp.path, "--ppq", "-480"], "--ppq must be between 1 and 32767"),
            (["convert-midi", tmp.path, "--channel", "-1"], "--channel must be auto, all, or a channel index from 0 to 15 (got \"-1\")"),
            (["tab", midi, "--bars", "-1"], "--bars must be 0 (all) or more, got -1"),
            (["tab", midi, "--from", "-2"], "--from is a bar number, 1 or more, got -2"),
            (["tab", midi, "--grid", "-16"], "--grid must be between 1 and 192 cells per whole note, got -16"),
            (["tab", midi, "--tolerance", "-0.1"], "--tolerance must be at least 0 and below 0.5, got -0.1"),
            (["tab", midi, "--channel", "-1"], "--channel must be auto, all, or a channel index from 0 to 15 (got \"-1\")"),
            (["tab", midi, "--width", "-5"], "--width must be at least 20 columns, got -5"),
            (["report", midi, "--bars", "-1", "-o", tmp.appendingPathComponent("r.html").path], "--bars must be between 1 and 256, got -1"),
            (["report", midi, "--max-points", "-3", "-o", tmp.appendingPathComponent("r.html").path],
             "--max-points must be between 10 and 100000, got -3"),
            (["eval", model, "--data", midi, "--ppq", "-5"], "--ppq must be between 1 and 32767, got -5"),
            (["eval", model, "--data", midi, "--quantize", "-5"], "--quantize must be between 1 and 1048576, got -5"),
            (["stats", midi, "--reference", midi, "--channel", "-3"], "--channel must be auto, all, or a channel index from 0 to 15 (got \"-3\")"),
            (["sample", model, "--step", "-3"], "--step must be best, latest or a step number of 0 or more, got -3"),
            (["export", model, "--step", "-3"], "--step must be best, latest or a step number of 0 or more, got -3"),
        ] {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 64, "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(message), "\(args): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("Missing value"), "\(args): \(r.stderr)")
        }
    }
}
