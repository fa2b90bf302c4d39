// A model's sampling temperatures (model.json "sampling"): written by `export --temperature`
// and `choose-step --temperature --export`, the default of `sample` and `humanize`, overridden
// by --temperature (one number: every group, the model's defaults ignored; pairs: the named
// groups), carried through safetensors and back, and refused when wrong.
import Foundation
import XCTest

final class SamplingDefaultsCLITests: XCTestCase {
    var root: URL!
    var checkpoint: String!

    override func setUpWithError() throws {
        root = try CLI.temporaryDirectory("sampling-defaults")
        let data = root.appendingPathComponent("data").path
        var r = try CLI.run(["convert-midi", CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src").path, "-o", data,
                             "--quantize", "30", "--onset-order", "note"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(["train", "--recipe", "grid", "--data", data, "--hidden", "8", "--unroll", "8", "--batch-size", "2",
                         "--steps", "4", "--checkpoint-every", "2", "--eval-every", "2",
                         "--checkpoint-dir", root.appendingPathComponent("ck").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        checkpoint = root.appendingPathComponent("ck/ckpt-4.h5").path
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    func path(_ name: String) -> String { root.appendingPathComponent(name).path }

    func export(_ out: String, _ extra: [String] = []) throws {
        let r = try CLI.run(["export", checkpoint, "-o", path(out)] + extra)
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func manifest(_ model: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path(model) + "/model.json"))) as? [String: Any])
    }

    /// model.json's `sampling.temperature` of model directory `model` (fails without a sampling key).
    func recordedTemperatures(_ model: String) throws -> [String: Double]? {
        try XCTUnwrap(try manifest(model)["sampling"] as? [String: Any])["temperature"] as? [String: Double]
    }

    /// `drummer choose-step` over the run's two checkpoints (2 files × 200 hits, against the fixture's files).
    func choose(_ extra: [String]) throws -> CLIResult {
        let reference = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src").path
        return try CLI.run(["choose-step", path("ck"), "--reference", reference, "--quantize", "30", "--count", "2", "-n", "200",
                            "--closest"] + extra)
    }

    /// choose-step's figure rows (steps 2 and 4).
    func rows(_ s: String) -> [String] {
        s.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("2 ") || $0.hasPrefix("4 ") }
    }

    /// Exports model directory `model` as safetensors (with `extra`) and imports it as model directory `back`.
    func throughSafetensors(_ model: String, to back: String, _ extra: [String] = []) throws {
        let file = path(back + ".safetensors")
        var r = try CLI.run(["export", path(model), "--format", "safetensors", "-o", file] + extra)
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(["import", file, "-o", path(back)])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    /// The MIDI bytes `drummer sample MODEL --seed 5` writes with `extra`, and its status line.
    func sample(_ model: String, _ extra: [String] = [], hits: Int = 300) throws -> (midi: Data, status: String) {
        let out = path("s-\(UUID().uuidString).mid")
        let r = try CLI.run(["sample", model, "-n", "\(hits)", "--seed", "5", "-o", out] + extra)
        XCTAssertEqual(r.status, 0, r.stderr)
        return (try Data(contentsOf: URL(fileURLWithPath: out)), r.stdout)
    }

    func testExportRecordsTheTemperaturesAndSampleDefaultsToThem() throws {
        try export("plain")
        try export("warm", ["--temperature", "velocity=1.3"])
        XCTAssertNil(try manifest("plain")["sampling"], "no --temperature: no sampling key")
        XCTAssertEqual(try recordedTemperatures("warm"), ["velocity": 1.3], "groups at 1 are left out")
        // Everything but model.json is the plain export's.
        for file in ["Wx.bin", "Wx1.bin", "Wy.bin"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("plain/" + file))),
                           try Data(contentsOf: URL(fileURLWithPath: path("warm/" + file))), file)
        }

        let byDefault = try sample(path("warm"))
        XCTAssertEqual(byDefault.midi, try sample(checkpoint, ["--temperature", "velocity=1.3"]).midi,
                       "the model's temperatures are the default")
        XCTAssertNotEqual(byDefault.midi, try sample(path("plain")).midi, "velocity 1.3 draws other velocities than 1")
        XCTAssertTrue(byDefault.status.contains("temperature hits=1.0,offset=1.0,velocity=1.3 (the model's)"), byDefault.status)
        let one = try sample(path("warm"), ["--temperature", "1"])
        XCTAssertEqual(one.midi, try sample(path("plain")).midi, "--temperature 1 is the model's own distribution")
        XCTAssertTrue(one.status.contains("temperature 1.0"), one.status)
        let pairs = try sample(path("warm"), ["--temperature", "hits=0.8"])
        XCTAssertEqual(pairs.midi, try sample(checkpoint, ["--temperature", "hits=0.8,velocity=1.3"]).midi,
                       "pairs set the named groups, the others keep the model's")
        XCTAssertTrue(pairs.status.contains("(partly the model's)"), pairs.status)
        // After a primer the hits draw at 0.8 unless given: the line says so (it called 0.8 the model's).
        let beat = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer6/session3/2_rock_100_beat_4-4.mid").path
        let primed = try sample(path("warm"), ["--primer", beat])
        XCTAssertTrue(primed.status.contains("temperature hits=0.8,offset=1.0,velocity=1.3 (partly the model's, hits 0.8 after a primer)"),
                      primed.status)
        let plainPrimed = try sample(path("plain"), ["--primer", beat])
        XCTAssertTrue(plainPrimed.status.contains("temperature hits=0.8,offset=1.0,velocity=1.0 (hits 0.8 after a primer)"),
                      plainPrimed.status)
        XCTAssertTrue(try sample(path("warm"), ["--primer", beat, "--temperature", "hits=0.9"]).status
            .contains("temperature hits=0.9,offset=1.0,velocity=1.3 (partly the model's)"))
        XCTAssertEqual(try sample(path("warm"), ["--temperature", "velocity=1"]).midi, try sample(path("plain")).midi)

        // Safetensors and back: the same model.json, byte for byte, sampling included.
        try throughSafetensors("warm", to: "back")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("back/model.json"))),
                       try Data(contentsOf: URL(fileURLWithPath: path("warm/model.json"))))
        // A model directory's temperatures replaced on the way to safetensors.
        try throughSafetensors("warm", to: "cold", ["--temperature", "velocity=1"])
        XCTAssertNil(try manifest("cold")["sampling"])
    }

    /// humanize draws velocities and offsets at the model's temperatures unless --temperature.
    func testHumanizeDefaultsToTheModelsTemperatures() throws {
        try export("plain")
        try export("warm", ["--temperature", "velocity=1.4,offset=1.4"])
        let beat = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session1/102_funk_95_beat_4-4.mid").path
        func humanize(_ model: String, _ extra: [String]) throws -> Data {
            let out = path("h-\(UUID().uuidString).mid")
            let r = try CLI.run(["humanize", beat, "--model", model.hasPrefix("/") ? model : path(model), "--seed", "3", "-o", out] + extra)
            XCTAssertEqual(r.status, 0, r.stderr)
            return try Data(contentsOf: URL(fileURLWithPath: out))
        }
        let warm = try humanize("warm", [])
        XCTAssertEqual(warm, try humanize("plain", ["--temperature", "1.4"]))
        XCTAssertNotEqual(warm, try humanize("plain", []))
        XCTAssertEqual(try humanize("warm", ["--temperature", "1"]), try humanize("plain", []))
        // A model chosen at temperature 0: humanize names model.json's setting and --temperature overrides it.
        try export("argmax", ["--temperature", "velocity=0"])
        let r = try CLI.run(["humanize", beat, "--model", path("argmax"), "--seed", "3", "-o", path("h0.mid")])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("\(path("argmax")): model.json's sampling gives velocity temperature 0 (always the most likely), and humanize draws: give --temperature"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("h0.mid")), "nothing written")
        XCTAssertEqual(try humanize("argmax", ["--temperature", "1"]), try humanize("plain", []))

        // Pairs name the groups humanize draws (model-format.md says it takes them; it took one
        // number only); a group not named keeps the model's.
        XCTAssertEqual(try humanize("plain", ["--temperature", "velocity=1.4,offset=1.4"]), warm)
        XCTAssertEqual(try humanize("warm", ["--temperature", "offset=1.4"]), warm)
        XCTAssertEqual(try humanize("warm", ["--temperature", "velocity=1,offset=1"]), try humanize("plain", []))
        for (bad, message) in [("hits=1", "--temperature names hits: humanize keeps the beat's hits and draws only velocity and offset"),
                               ("velocity=0", "--temperature velocity must be above 0 (humanize draws), got 0.0"),
                               ("0", "--temperature must be above 0 (humanize draws), got 0.0"),
                               ("101", "--temperature must be a number from 0 to 100, got 101.0")] {
            let r = try CLI.run(["humanize", beat, "--model", path("plain"), "--seed", "3", "-o", path("hb.mid"), "--temperature", bad])
            XCTAssertEqual(r.status, 64, r.stderr)
            XCTAssertTrue(r.stderr.contains(message), r.stderr)
        }
        // A training checkpoint is a model here as for sample (it was refused as not a directory).
        XCTAssertEqual(try humanize(checkpoint, []), try humanize("plain", []))
    }

    /// choose-step samples at --temperature and its --export records it.
    func testChooseStepSamplesAtTheTemperatureAndRecordsIt() throws {
        let plain = try choose([])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        let warm = try choose(["--temperature", "velocity=1.5", "--export", path("chosen")])
        XCTAssertEqual(warm.status, 0, warm.stderr)
        XCTAssertTrue(warm.stdout.contains("temperature: velocity=1.5 (as sample --temperature)"), warm.stdout)
        XCTAssertTrue(warm.stdout.contains("sampling temperature hits=1.0,offset=1.0,velocity=1.5 recorded in model.json"), warm.stdout)
        // The figures are of files sampled at 1.5: the velocity column moves, the rest of each row's first columns do not.
        XCTAssertEqual(rows(plain.stdout).count, 2, plain.stdout)
        XCTAssertNotEqual(rows(plain.stdout), rows(warm.stdout))
        XCTAssertEqual(try recordedTemperatures("chosen"), ["velocity": 1.5])
        // An --export the export would refuse is refused before the files are sampled.
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path("a-file")))
        let refused = try choose(["--export", path("a-file")])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertEqual(refused.stderr, "error: \(path("a-file")): exists and is not a directory (it is a regular file)\n")
        XCTAssertFalse(refused.stdout.contains("choose-step:"), "nothing measured: \(refused.stdout)")
        XCTAssertEqual(try String(contentsOfFile: path("a-file"), encoding: .utf8), "mine")
    }

    /// `fills` (the hit set in bars 4 and 8 of each phrase) is recorded and taken as the others
    /// are, and left out of model.json where it is the hits' temperature (absent, it follows them).
    func testFillsTemperatureRecordedAndTheDefault() throws {
        // 3,000 hits: the tiny model plays most classes on most 16ths, and bar 4 is past 300.
        try export("plain")
        try export("fills", ["--temperature", "fills=3"])
        XCTAssertEqual(try recordedTemperatures("fills"), ["fills": 3])
        let byDefault = try sample(path("fills"), hits: 3000)
        XCTAssertEqual(byDefault.midi, try sample(checkpoint, ["--temperature", "fills=3"], hits: 3000).midi)
        XCTAssertNotEqual(byDefault.midi, try sample(path("plain"), hits: 3000).midi, "bars 4 and 8 drawn at 3")
        XCTAssertTrue(byDefault.status.contains("temperature fills=3.0,hits=1.0,offset=1.0,velocity=1.0 (the model's)"), byDefault.status)
        XCTAssertEqual(try sample(path("fills"), ["--temperature", "1"], hits: 3000).midi, try sample(path("plain"), hits: 3000).midi,
                       "one number: the fill bars at it too")
        XCTAssertEqual(try sample(path("fills"), ["--temperature", "fills=1"], hits: 3000).midi, try sample(path("plain"), hits: 3000).midi)
        try export("same", ["--temperature", "hits=0.5,fills=0.5"])
        XCTAssertEqual(try recordedTemperatures("same"), ["hits": 0.5], "fills at the hits' temperature is left out")
        try export("apart", ["--temperature", "hits=0.5,fills=1"])
        XCTAssertEqual(try recordedTemperatures("apart"), ["hits": 0.5, "fills": 1], "fills at 1 kept where the hits are not at 1")
        XCTAssertEqual(try sample(path("apart")).midi, try sample(checkpoint, ["--temperature", "hits=0.5,fills=1"]).midi)
    }

    /// A model directory exported again as a model directory: the same weight files, model.json
    /// the same but for --temperature's sampling; -o may be the input directory itself.
    func testModelDirectoryReexportedWithNewTemperatures() throws {
        try export("plain")
        var r = try CLI.run(["export", path("plain"), "-o", path("again")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("exported \(path("plain")) (step 4) to \(path("again"))"), r.stdout)
        for file in ["Wx.bin", "Wx1.bin", "Wy.bin", "model.json"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("plain/" + file))),
                           try Data(contentsOf: URL(fileURLWithPath: path("again/" + file))), file)
        }
        try export("warm", ["--temperature", "velocity=1.3"])
        r = try CLI.run(["export", path("again"), "-o", path("again"), "--temperature", "velocity=1.3"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path("again/model.json"))),
                       try Data(contentsOf: URL(fileURLWithPath: path("warm/model.json"))),
                       "in place, as the checkpoint's export with the same temperature")
        XCTAssertEqual(try sample(path("again")).midi, try sample(path("warm")).midi)
        // Without a step in its metadata (a model trained by PyTorch): none is invented.
        let file = URL(fileURLWithPath: path("plain/model.json"))
        var json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        var meta = try XCTUnwrap(json["metadata"] as? [String: String])
        meta["step"] = nil
        json["metadata"] = meta
        try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys]).write(to: file)
        r = try CLI.run(["export", path("plain"), "-o", path("nostep")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("(no training step recorded)"), r.stdout)
        XCTAssertNil(try XCTUnwrap(try manifest("nostep")["metadata"] as? [String: String])["step"])
        // A step for a model directory is refused, nothing written.
        r = try CLI.run(["export", path("plain"), "--step", "4", "-o", path("stepped")])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("is a model directory"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("stepped")))
    }

    func testWrongTemperaturesAreRefused() throws {
        var r = try CLI.run(["export", checkpoint, "-o", path("m"), "--temperature", "note=0.9"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--temperature names note, which this model does not predict (its temperature groups: hits, velocity, offset, fills)"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("m")), "nothing written")
        r = try CLI.run(["export", checkpoint, "-o", path("m"), "--temperature", "velocity=-1"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--temperature velocity must be a number from 0 to 100, got -1.0"), r.stderr)
        // Above what model.json holds: the model it wrote could be read by no command.
        for big in ["100.5", "hits=1e30"] {
            r = try CLI.run(["export", checkpoint, "-o", path("m"), "--temperature", big])
            XCTAssertEqual(r.status, 64, r.stderr)
            XCTAssertTrue(r.stderr.contains("must be a number from 0 to 100"), r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path("m")), "nothing written")
        }

        try export("warm", ["--temperature", "velocity=1.3"])
        let file = URL(fileURLWithPath: path("warm/model.json"))
        let good = try String(contentsOf: file, encoding: .utf8)
        for (bad, message) in [("\"velocity\" : 1.3", "sampling.temperature.velocity is \"x\" (a string), expected a number from 0 to 100"),
                               ("\"velocity\" : 1.3", "sampling.temperature names note, which this model does not predict")] {
            let replacement = message.contains("names note") ? "\"note\" : 1.3" : "\"velocity\" : \"x\""
            XCTAssertTrue(good.contains(bad), good)
            try good.replacingOccurrences(of: bad, with: replacement).write(to: file, atomically: true, encoding: .utf8)
            assertRefused(try CLI.run(["sample", path("warm"), "-n", "10", "-o", path("x.mid")]),
                          path("warm/model.json") + ": " + message, nothingAt: path("x.mid"))
        }
    }
}
