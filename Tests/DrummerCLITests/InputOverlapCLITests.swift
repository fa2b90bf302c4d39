// An output that resolves to an input of the command is refused before anything is written,
// and the input is left byte for byte as it was; a batch of files (sample --count) whose
// destination fails leaves none of its files behind.
import Foundation
import XCTest

final class InputOverlapCLITests: XCTestCase {
    private var tmp: URL!
    private var fm: FileManager { FileManager.default }

    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("input-overlap-cli") }
    override func tearDownWithError() throws { try? fm.removeItem(at: tmp) }

    private func path(_ name: String) -> String { tmp.appendingPathComponent(name).path }

    /// A small dataset, a checkpoint trained on it for one step and the model exported from it.
    private func trained() throws -> (data: String, checkpoint: String, model: String) {
        let data = path("data")
        let groove: [(Int32, Int32)] = [(0, 2), (2, 1), (1, 1), (2, 1)]
        try TestDataset.write(URL(fileURLWithPath: data), pairs: (0..<400).map { groove[$0 % 4] },
                              vocabJSON: #"{"ix_to_note": [36, 38, 42], "ix_to_tick": [0, 120, 240]}"#)
        let t = try CLI.run(["train", "--recipe", "original", "--data", data, "--hidden", "8", "--steps", "1",
                             "--batch-size", "1", "--unroll", "8", "--checkpoint-dir", path("ck")])
        XCTAssertEqual(t.status, 0, t.stderr + t.stdout)
        let e = try CLI.run(["export", path("ck/ckpt-1.h5"), "-o", path("mdir")])
        XCTAssertEqual(e.status, 0, e.stderr)
        return (data, path("ck/ckpt-1.h5"), path("mdir"))
    }

    /// Every file under `root` (or `root` itself) and its bytes.
    private func snapshot(_ root: String) throws -> [String: Data] {
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: root, isDirectory: &isDir) else { return [:] }
        guard isDir.boolValue else { return [root: try Data(contentsOf: URL(fileURLWithPath: root))] }
        var files: [String: Data] = [:]
        for name in try fm.subpathsOfDirectory(atPath: root) {
            let p = root + "/" + name
            var sub: ObjCBool = false
            if fm.fileExists(atPath: p, isDirectory: &sub), !sub.boolValue { files[name] = try Data(contentsOf: URL(fileURLWithPath: p)) }
        }
        return files
    }

    /// `args` exits 1 with `message` on standard error, and `inputs` keep their bytes.
    private func assertRefused(_ args: [String], _ message: String, keeps inputs: [String],
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let before = try inputs.map(snapshot)
        let r = try CLI.run(args)
        XCTAssertEqual(r.status, 1, "\(args): " + r.stderr + r.stdout, file: file, line: line)
        XCTAssertTrue(r.stderr.contains(message), "\(args): " + r.stderr, file: file, line: line)
        for (input, old) in zip(inputs, before) {
            XCTAssertEqual(try snapshot(input), old, "\(input) changed by \(args)", file: file, line: line)
        }
    }

    func testExportRefusesToWriteOverItsInput() throws {
        let (data, ckpt, model) = try trained()
        for format in ["safetensors", "onnx"] {
            try assertRefused(["export", ckpt, "--format", format, "-o", ckpt],
                              "\(ckpt): is the input checkpoint \(ckpt); write elsewhere", keeps: [ckpt])
        }
        try assertRefused(["export", ckpt, "-o", path("m2"), "--swift", ckpt],
                          "\(ckpt): is the input checkpoint \(ckpt); write elsewhere", keeps: [ckpt])
        XCTAssertFalse(fm.fileExists(atPath: path("m2")))
        for inside in ["Wx.bin", "model.json", "new.safetensors"] {
            try assertRefused(["export", model, "--format", "safetensors", "-o", model + "/" + inside],
                              "\(model)/\(inside): lies inside the input model directory \(model); write elsewhere", keeps: [model])
        }
        // The checkpoint directory holding the input checkpoint is not replaced by a model directory.
        try assertRefused(["export", ckpt, "-o", path("ck")], "holds the input checkpoint \(ckpt)", keeps: [path("ck")])
        // A symbolic link to the input is the input.
        XCTAssertNoThrow(try fm.createSymbolicLink(atPath: path("link.h5"), withDestinationPath: ckpt))
        try assertRefused(["export", ckpt, "--format", "safetensors", "-o", path("link.h5")],
                          "is the input checkpoint \(ckpt)", keeps: [ckpt])
        // Given one checkpoint, its directory's other files (checkpoints, log, run record) are
        // not outputs either; other names in it are.
        let ck = path("ck")
        XCTAssertEqual(try CLI.run(["train", "--resume", ckpt, "--steps", "2"]).status, 0)
        for (args, name) in [(["export", ckpt, "--format", "onnx", "-o"], "ckpt-2.h5"),
                             (["export", ckpt, "--format", "safetensors", "-o"], "run.json"),
                             (["export", ckpt, "-o", path("m3"), "--swift"], "ckpt-2.h5"),
                             (["sample", ckpt, "-n", "10", "-o"], "train_log.csv"),
                             (["sample", ckpt, "-n", "10", "-o", path("s.mid"), "--wav"], "train_log.csv"),
                             (["encode", ckpt, "--data", data, "-o"], "ckpt-2.h5")] {
            try assertRefused(args + [ck + "/" + name], "\(ck)/\(name): is a file of the checkpoint directory \(ck)", keeps: [ck])
        }
        // Nor are a model's or dataset's own files a command does not read: export and
        // convert-midi write those directories whole.
        let groove = CLI.repoRoot.appendingPathComponent("models/groove").path
        let manifest = data + "/manifest.json"  // as convert-midi writes it: what makes the folder a dataset
        try Data(#"{"tool": "drummer convert-midi", "settings": {"ppq": 480}}"#.utf8).write(to: URL(fileURLWithPath: manifest))
        defer { try? fm.removeItem(atPath: manifest) }
        for (args, file, owner) in [(["sample", groove, "-n", "10", "-o"], model + "/Wx.bin", "the model directory \(model), which export"),
                                    (["export", ckpt, "--format", "safetensors", "-o"], data + "/events.npy",
                                     "the dataset directory \(data), which convert-midi"),
                                    (["sample", groove, "-n", "10", "-o"], data + "/manifest.json", "the dataset directory \(data), which convert-midi"),
                                    (["sample", groove, "-n", "10", "-o"], data + "/validation/events.npy",
                                     "the dataset directory \(data), which convert-midi")] {
            try assertRefused(args + [file], "\(file): is a file of \(owner) writes whole; write elsewhere", keeps: [model, data])
        }
        let beside = ck + "/rows.npy"
        XCTAssertEqual(try CLI.run(["encode", ckpt, "--data", data, "-o", beside]).status, 0)
        try fm.removeItem(atPath: beside)
        // A model directory written again in place stays allowed.
        let again = try CLI.run(["export", model, "-o", model, "--temperature", "1.1"])
        XCTAssertEqual(again.status, 0, again.stderr)
    }

    func testEncodeImportAndConvertRefuseTheirInputs() throws {
        let (data, ckpt, model) = try trained()
        try assertRefused(["encode", model, "--data", data, "-o", data + "/events.npy"],
                          "\(data)/events.npy: lies inside the input data \(data); write elsewhere", keeps: [data])
        try assertRefused(["encode", ckpt, "--data", data, "-o", ckpt], "is the model \(ckpt)", keeps: [ckpt])
        let st = path("m.safetensors")
        XCTAssertEqual(try CLI.run(["export", model, "--format", "safetensors", "-o", st]).status, 0)
        try assertRefused(["import", st, "-o", st], "\(st): is the input safetensors file \(st); write elsewhere", keeps: [st])
        let src = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src").path
        let copy = path("src")
        try fm.copyItem(atPath: src, toPath: copy)
        try assertRefused(["convert-midi", copy, "-o", copy + "/data"], "lies inside the folder of MIDI files \(copy)", keeps: [copy])
        XCTAssertFalse(fm.fileExists(atPath: copy + "/data"))
    }

    func testSampleHumanizeAndReportRefuseTheirInputs() throws {
        let groove = CLI.repoRoot.appendingPathComponent("models/groove").path
        let beat = path("beat.mid")
        XCTAssertEqual(try CLI.run(["sample", groove, "-n", "40", "--seed", "2", "-o", beat]).status, 0)
        try assertRefused(["sample", groove, "-n", "10", "--primer", beat, "-o", beat],
                          "\(beat): is the primer \(beat); write elsewhere", keeps: [beat])
        try assertRefused(["sample", groove, "-n", "10", "--primer", beat, "-o", path("x.mid"), "--wav", beat],
                          "\(beat): is the primer \(beat); write elsewhere", keeps: [beat])
        XCTAssertFalse(fm.fileExists(atPath: path("x.mid")))
        try assertRefused(["humanize", beat, "-o", beat], "\(beat): is the beat to humanize \(beat); write elsewhere", keeps: [beat])
        try assertRefused(["report", beat, "-o", beat, "--no-audio"], "\(beat): is the MIDI file \(beat); write elsewhere", keeps: [beat])

        let (_, _, model) = try trained()
        try assertRefused(["sample", model, "-n", "10", "-o", model + "/Wx.bin"],
                          "\(model)/Wx.bin: is a file of the model directory \(model), which export writes whole; write elsewhere",
                          keeps: [model])
        try assertRefused(["sample", model, "-n", "10", "-o", model + "/new.mid"], "lies inside the model \(model)", keeps: [model])
        try assertRefused(["report", "--model", model, "-o", model + "/model.json", "--no-audio"],
                          "lies inside the model directory \(model)", keeps: [model])
        try assertRefused(["report", "--checkpoints", path("ck"), "-o", path("ck/train_log.csv"), "--no-audio"],
                          "\(path("ck/train_log.csv")): is a file of the checkpoint directory \(path("ck"))", keeps: [path("ck")])
        try assertRefused(["export", path("ck"), "--format", "safetensors", "-o", path("ck/ckpt-2.h5")],
                          "is a file of the input checkpoint directory \(path("ck"))", keeps: [path("ck")])
        XCTAssertFalse(fm.fileExists(atPath: path("ck/ckpt-2.h5")))
        // A checkpoint directory takes other files: the page beside its log, a sampled file.
        let page = try CLI.run(["report", "--checkpoints", path("ck"), "-o", path("ck/report.html"), "--no-audio"])
        XCTAssertEqual(page.status, 0, page.stderr)
        let sampled = try CLI.run(["sample", path("ck"), "-n", "10", "-o", path("ck/s.mid")])
        XCTAssertEqual(sampled.status, 0, sampled.stderr)
        XCTAssertTrue(fm.fileExists(atPath: path("ck/report.html")) && fm.fileExists(atPath: path("ck/s.mid")))
        try assertRefused(["report", "--reference", beat, "-o", beat, "--no-audio"], "is the reference \(beat)", keeps: [beat])
    }

    func testTrainKeepsItsCheckpointsAndExportOutOfTheData() throws {
        let (data, _, _) = try trained()
        let base = ["train", "--recipe", "original", "--data", data, "--hidden", "8", "--steps", "1", "--batch-size", "1", "--unroll", "8"]
        try assertRefused(base + ["--checkpoint-dir", data], "is the dataset", keeps: [data])
        try assertRefused(base + ["--checkpoint-dir", data + "/ck"], "lies inside the dataset", keeps: [data])
        XCTAssertFalse(fm.fileExists(atPath: data + "/ck"))
        try assertRefused(base + ["--checkpoint-dir", path("ck2"), "-o", data + "/model"], "lies inside the dataset", keeps: [data])
        XCTAssertFalse(fm.fileExists(atPath: path("ck2/ckpt-1.h5")))
    }

    /// On a terminal, a --count run says which file it samples while the "wrote" lines wait for
    /// every file to be in place; the count is cleared before them (and piped, not written).
    func testSampleCountShowsItsProgressOnATerminal() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            throw XCTSkip("script (util-linux) is not installed: no terminal to test the progress on")
        }
        let groove = CLI.repoRoot.appendingPathComponent("models/groove").path
        let command = [CLI.binary.path, "sample", groove, "-n", "5", "--count", "3", "--seed", "1", "-o", path("t.mid")]
            .map { "'\($0)'" }.joined(separator: " ")
        let r = try CLI.run(executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qc", command, "/dev/null"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("\r\u{1B}[Ksampling file 3 of 3\r\u{1B}[Kwrote \(path("t-1.mid")): 5 hits"), r.stdout)
        let piped = try CLI.run(["sample", groove, "-n", "5", "--count", "3", "--seed", "1", "-o", path("p.mid")])
        XCTAssertFalse(piped.stderr.contains("sampling file"), piped.stderr)
    }

    /// `sample --count 3 -o out/y.mid` with out/y-3.mid a directory: refused before any file is
    /// written, so no y-1.mid or y-2.mid of a failed batch is left looking complete.
    func testSampleCountChecksEveryFileBeforeWritingAny() throws {
        let groove = CLI.repoRoot.appendingPathComponent("models/groove").path
        let out = path("out")
        try fm.createDirectory(atPath: out + "/y-3.mid", withIntermediateDirectories: true)
        let r = try CLI.run(["sample", groove, "-n", "5", "--seed", "1", "--count", "3", "-o", out + "/y.mid"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("\(out)/y-3.mid: is a directory"), r.stderr)
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: out), ["y-3.mid"])
        // The same for a --wav file of the batch; and an existing file of the batch keeps its bytes.
        try Data("old".utf8).write(to: URL(fileURLWithPath: out + "/y-1.mid"))
        let w = try CLI.run(["sample", groove, "-n", "5", "--seed", "1", "--count", "3", "-o", out + "/z.mid",
                             "--wav", out + "/y.mid"])
        XCTAssertEqual(w.status, 1, w.stderr)
        XCTAssertTrue(w.stderr.contains("\(out)/y-3.mid: is a directory"), w.stderr)
        XCTAssertEqual(Set(try fm.contentsOfDirectory(atPath: out)), ["y-1.mid", "y-3.mid"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out + "/y-1.mid")), Data("old".utf8))
        // Two outputs of one run that are one file.
        let same = try CLI.run(["sample", groove, "-n", "5", "--seed", "1", "-o", path("s.mid"), "--wav", path("s.mid")])
        XCTAssertEqual(same.status, 1, same.stderr)
        XCTAssertTrue(same.stderr.contains("\(path("s.mid")): is also the output \(path("s.mid")) of this run"), same.stderr)
        XCTAssertFalse(fm.fileExists(atPath: path("s.mid")))
        // A batch that succeeds writes every file, with no temporary left.
        let ok = try CLI.run(["sample", groove, "-n", "5", "--seed", "1", "--count", "2", "-o", path("ok.mid")])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(ok.stdout.contains("wrote \(path("ok-1.mid")): 5 hits"), ok.stdout)
        XCTAssertTrue(ok.stdout.contains("wrote \(path("ok-2.mid")): 5 hits"), ok.stdout)
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: tmp.path).filter { $0.contains("drummer-tmp") }, [])
    }
}
