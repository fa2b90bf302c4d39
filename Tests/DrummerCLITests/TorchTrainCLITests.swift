// PyTorch interop: python/train_torch.py trains a drummer model under torchrun with 2 processes
// (DDP, gloo): by default the grid layout of `drummer train --data DIR`'s recipe, with
// --recipe original the 2017 layout. drummer imports it, samples it, and measures the same
// validation loss the script printed (the same inputs, targets and loss; a grid model's files
// each from a zero state). Skips without PyTorch.
import Foundation
import XCTest

final class TorchTrainCLITests: XCTestCase {
    static let skipMessage = "python3 with torch, safetensors and numpy is not installed (Scripts/test installs them from a CPU wheel when one is on the machine)"

    /// Runs python/train_torch.py under `torchrun --nproc_per_node 2` in `tmp`; returns its output
    /// and the JSON record of step `last`.
    func torchrun(_ args: [String], last: Int, in tmp: URL) throws -> (text: String, record: [String: Any]) {
        let p = try CLI.python(["-m", "torch.distributed.run", "--nproc_per_node", "2",
                                CLI.repoRoot.appendingPathComponent("python/train_torch.py").path]
                               + args + ["--drummer", CLI.binary.path], cwd: tmp)
        let text = p.stdout + p.stderr
        XCTAssertEqual(p.status, 0, text)
        let line = try XCTUnwrap(text.split(separator: "\n").last { $0.hasPrefix("{\"step\": \(last),") }, text)
        let record = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        XCTAssertEqual(record["processes"] as? Int, 2)
        return (text, record)
    }

    /// The grid layout, as `drummer train --data DIR` trains it (the recipe's defaults but for the
    /// sizes): a few steps on the nine 4/4 Groove files of corpus/groove/drummer4, converted as
    /// GridCLITests converts its fixture, imported, sampled and evaluated; drummer's loss on the
    /// validation split (two files, each from a zero state) is the script's within 1e-4 relative.
    /// (Tests/Fixtures/grid/src's validation split keeps one 15-step fill: its other 4/4 file
    /// loses its bar grid to deltas outside the one training file's vocabulary.)
    func testTorchrunTrainsTheGridRecipe() throws {
        guard CLI.pythonHas("torch, safetensors, numpy, torch.distributed") else { throw XCTSkip(Self.skipMessage) }
        let tmp = try CLI.temporaryDirectory("torch-grid")
        defer { try? FileManager.default.removeItem(at: tmp) }
        let data = tmp.appendingPathComponent("data").path
        let c = try CLI.run(["convert-midi", CLI.repoRoot.appendingPathComponent("corpus/groove/drummer4").path, "-o", data,
                             "--quantize", "30", "--onset-order", "note", "--validation-fraction", "0.3"])
        XCTAssertEqual(c.status, 0, c.stderr)
        let out = tmp.appendingPathComponent("g.safetensors").path
        let (text, record) = try torchrun(["--data", data, "--hidden", "8", "--steps", "4", "--eval-every", "2",
                                           "--batch-size", "2", "--unroll", "8", "-o", out], last: 4, in: tmp)
        // The recipe's values where none is given: 2 layers, dropout 0.3, Adam at 0.002 halved every
        // 1,500 steps, clip 5.
        XCTAssertTrue(text.contains("train_torch: grid layout, "), text)
        XCTAssertTrue(text.contains("2 layers of 8, dropout 0.3; 2 processes x 2 streams of "), text)
        XCTAssertTrue(text.contains("unroll 8; adam lr 0.002 x 0.5 every 1500 steps, clip 5.0, 4 steps"), text)
        let torchLoss = try XCTUnwrap(record["validation_loss"] as? Double, text)

        let model = tmp.appendingPathComponent("model").path
        let i = try CLI.run(["import", out, "-o", model])
        XCTAssertEqual(i.status, 0, i.stderr)
        XCTAssertTrue(i.stdout.contains("Wx.bin") && i.stdout.contains("Wx1.bin"), i.stdout)
        let s = try CLI.run(["sample", model, "-n", "100", "--seed", "1", "-o", tmp.appendingPathComponent("s.mid").path])
        XCTAssertEqual(s.status, 0, s.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: tmp.appendingPathComponent("s.mid").path), s.stdout)
        let e = try CLI.run(["eval", model, "--data", data + "/validation", "--json"])
        XCTAssertEqual(e.status, 0, e.stderr)
        let metrics = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(e.stdout.utf8)) as? [String: Any])
        let drummerLoss = try XCTUnwrap(metrics["loss_all"] as? Double)
        XCTAssertEqual(try XCTUnwrap(metrics["loss"] as? Double), drummerLoss, accuracy: 1e-9 * drummerLoss,
                       "a grid model's loss is every output group's")
        XCTAssertGreaterThan(try XCTUnwrap(metrics["events"] as? Int), 300, "the two validation files' 16th steps")
        XCTAssertTrue(text.contains("; validation: 2 files"), text)
        // Printed with 6 decimals: within 1e-4 relative, and the rounding.
        XCTAssertEqual(drummerLoss, torchLoss, accuracy: 1e-4 * drummerLoss + 5e-7,
                       "drummer eval's loss on the validation split (\(drummerLoss)) is PyTorch's (\(torchLoss))")
        print("TorchTrainCLITests grid: drummer eval loss_all \(drummerLoss), train_torch.py validation_loss \(torchLoss), "
              + "relative difference \(abs(drummerLoss - torchLoss) / drummerLoss)")

        let card = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: model + "/model.json")))
                                 as? [String: Any])
        let groups = try XCTUnwrap(card["groups"] as? [String: Any])
        XCTAssertNotNil(groups["grid"], "a grid model")
        XCTAssertEqual((groups["inputs"] as? [[String: Any]])?.first?["name"] as? String, "hits")
        let metadata = try XCTUnwrap(card["metadata"] as? [String: Any])
        for (key, value) in [("trained_by", "python/train_torch.py"), ("recipe", "grid"), ("processes", "2"),
                             ("batch_size", "4"), ("batch_size_per_process", "2"), ("unroll", "8"), ("steps", "4"),
                             ("dropout", "0.3"), ("lr_decay", "0.5"), ("lr_decay_every", "1500"), ("layers", "2")] {
            XCTAssertEqual(metadata[key] as? String, value, key)
        }
    }

    /// The 2017 layout (--recipe original), with the decoupled weight decay and drummer's
    /// RMSProp; settings drummer refuses are refused before any training.
    func testTorchrunTrainsTheOriginalLayout() throws {
        guard CLI.pythonHas("torch, safetensors, numpy, torch.distributed") else { throw XCTSkip(Self.skipMessage) }
        let tmp = try CLI.temporaryDirectory("torch-train")
        defer { try? FileManager.default.removeItem(at: tmp) }
        let data = tmp.appendingPathComponent("data").path
        XCTAssertEqual(try CLI.run(["convert-midi", CLI.repoRoot.appendingPathComponent("corpus/groove/drummer4").path, "-o", data,
                                    "--quantize", "30", "--validation-fraction", "0.3"]).status, 0)
        let out = tmp.appendingPathComponent("m.safetensors").path
        let (text, record) = try torchrun(["--recipe", "original", "--data", data, "--hidden", "16", "--layers", "2", "--steps", "6",
                                           "--eval-every", "3", "--batch-size", "2", "--unroll", "10", "--optimizer", "rmsprop",
                                           "--weight-decay", "0.1", "-o", out], last: 6, in: tmp)
        XCTAssertTrue(text.contains("train_torch: 2017 layout, 2 input groups"), text)
        let torchLoss = try XCTUnwrap(record["validation_loss"] as? Double, text)

        let model = tmp.appendingPathComponent("model").path
        let i = try CLI.run(["import", out, "-o", model])
        XCTAssertEqual(i.status, 0, i.stderr)
        XCTAssertTrue(i.stdout.contains("Wx.bin") && i.stdout.contains("Wx1.bin"), i.stdout)
        let s = try CLI.run(["sample", model, "-n", "200", "--seed", "1", "-o", tmp.appendingPathComponent("s.mid").path])
        XCTAssertEqual(s.status, 0, s.stderr)
        let e = try CLI.run(["eval", model, "--data", data + "/validation", "--json"])
        XCTAssertEqual(e.status, 0, e.stderr)
        let metrics = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(e.stdout.utf8)) as? [String: Any])
        let drummerLoss = try XCTUnwrap(metrics["loss_all"] as? Double)
        XCTAssertEqual(drummerLoss, torchLoss, accuracy: 1e-4 * drummerLoss + 5e-7,
                       "drummer eval's loss_all (\(drummerLoss)) is PyTorch's validation loss (\(torchLoss))")
        let card = try String(contentsOfFile: model + "/model.json", encoding: .utf8)
        XCTAssertTrue(card.contains("\"trained_by\" : \"python/train_torch.py\""), card)
        XCTAssertTrue(card.contains("\"recipe\" : \"original\""), card)
        XCTAssertTrue(card.contains("\"weight_decay\" : \"0.1\""), card)
        XCTAssertTrue(card.contains("\"optimizer\" : \"rmsprop\""), card)

        // Refused before training: a setting drummer refuses (drummer's own message), and an
        // output the file could not be written to.
        let script = CLI.repoRoot.appendingPathComponent("python/train_torch.py").path
        let bad = try CLI.python([script, "--recipe", "original", "--data", data, "--hidden", "16", "--steps", "6",
                                  "--lr-decay-every", "-1", "-o", out, "--drummer", CLI.binary.path], cwd: tmp)
        XCTAssertEqual(bad.status, 1, bad.stdout + bad.stderr)
        XCTAssertTrue(bad.stderr.contains("--lr-decay-every must not be negative"), bad.stderr)
        XCTAssertFalse(bad.stdout.contains("{\"step\""), bad.stdout)
        let folder = try CLI.python([script, "--data", data, "-o", tmp.path, "--drummer", CLI.binary.path], cwd: tmp)
        XCTAssertEqual(folder.status, 2, folder.stderr)
        XCTAssertTrue(folder.stderr.contains("-o \(tmp.path) is a directory"), folder.stderr)
    }

    /// --dropout with one layer goes to drummer as given, which refuses it as `drummer train`
    /// refuses it (with the grid recipe's --layers 1 and with --recipe original's one layer);
    /// one layer given no --dropout has none.
    func testDropoutWithOneLayerIsRefusedAsDrummerRefusesIt() throws {
        guard CLI.pythonHas("torch, safetensors, numpy") else { throw XCTSkip(Self.skipMessage) }
        let tmp = try CLI.temporaryDirectory("torch-dropout")
        defer { try? FileManager.default.removeItem(at: tmp) }
        let data = tmp.appendingPathComponent("data").path
        XCTAssertEqual(try CLI.run(["convert-midi", CLI.repoRoot.appendingPathComponent("corpus/groove/drummer4").path, "-o", data,
                                    "--quantize", "30", "--onset-order", "note", "--validation-fraction", "0.3"]).status, 0)
        let script = CLI.repoRoot.appendingPathComponent("python/train_torch.py").path
        let out = tmp.appendingPathComponent("d.safetensors").path
        let common = ["--data", data, "--hidden", "8", "--steps", "2", "--batch-size", "2", "--unroll", "8", "-o", out,
                      "--drummer", CLI.binary.path]
        for recipe in [["--layers", "1"], ["--recipe", "original"]] {
            let r = try CLI.python([script] + recipe + ["--dropout", "0.5"] + common, cwd: tmp)
            XCTAssertEqual(r.status, 1, "\(recipe): " + r.stdout + r.stderr)
            XCTAssertTrue(r.stderr.contains("--dropout drops units between stacked layers: give --layers 2 or more, or --dropout 0"),
                          "\(recipe): " + r.stderr)
            XCTAssertFalse(r.stdout.contains("{\"step\""), r.stdout)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), "\(recipe)")
        }
        let one = try CLI.python([script, "--layers", "1"] + common, cwd: tmp)
        XCTAssertEqual(one.status, 0, one.stdout + one.stderr)
        XCTAssertTrue(one.stdout.contains("1 layer of 8, dropout 0.0;"), one.stdout)
    }

    /// --work is the script's own folder: one holding files it did not write is refused with
    /// nothing in it removed or replaced; a failed run removes what it wrote (the folder it made
    /// too); a folder it marked is used again, and a file put in it is kept and refused.
    func testWorkFolderHoldsOnlyTheScriptsFiles() throws {
        guard CLI.pythonHas("torch, safetensors, numpy") else { throw XCTSkip(Self.skipMessage) }
        let fm = FileManager.default
        let tmp = try CLI.temporaryDirectory("torch-work")
        defer { try? fm.removeItem(at: tmp) }
        let data = tmp.appendingPathComponent("data").path
        XCTAssertEqual(try CLI.run(["convert-midi", CLI.repoRoot.appendingPathComponent("corpus/groove/drummer4").path, "-o", data,
                                    "--quantize", "30", "--onset-order", "note", "--validation-fraction", "0.3"]).status, 0)
        let script = CLI.repoRoot.appendingPathComponent("python/train_torch.py").path
        func train(_ args: [String]) throws -> CLIResult {
            try CLI.python([script, "--data", data, "--hidden", "8", "--steps", "1", "--batch-size", "2", "--unroll", "8",
                            "--drummer", CLI.binary.path] + args, cwd: tmp)
        }
        func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

        // A folder of the user's: refused, every file as it was.
        let project = tmp.appendingPathComponent("myproj").path
        try fm.createDirectory(atPath: project + "/init", withIntermediateDirectories: true)
        for (name, text) in [("init/notes.txt", "precious\n"), ("train.npy", "mine\n"), ("validation.npy", "mine too\n")] {
            try text.write(toFile: project + "/" + name, atomically: false, encoding: .utf8)
        }
        let user = try train(["-o", project + "/out.safetensors", "--work", project])
        XCTAssertEqual(user.status, 1, user.stdout + user.stderr)
        XCTAssertTrue(user.stderr.contains("--work \(project) is not empty and was not made by train_torch"), user.stderr)
        XCTAssertEqual(read(project + "/init/notes.txt"), "precious\n")
        XCTAssertEqual(read(project + "/train.npy"), "mine\n")
        XCTAssertEqual(read(project + "/validation.npy"), "mine too\n")
        XCTAssertEqual(Set(try fm.contentsOfDirectory(atPath: project)), ["init", "train.npy", "validation.npy"])

        // A failed run leaves no work folder of its own behind.
        let out = tmp.appendingPathComponent("w.safetensors").path, work = out + ".work"
        let failed = try train(["-o", out, "--lr", "-1"])
        XCTAssertEqual(failed.status, 1, failed.stdout + failed.stderr)
        XCTAssertTrue(failed.stderr.contains("--lr must be a positive number"), failed.stderr)
        XCTAssertFalse(fm.fileExists(atPath: work), "the failed run's work folder is removed")

        // Runs on a marked folder; a file put there is kept and refused; a failed run removes its
        // own files and keeps the folder, its marker and the user's file.
        for _ in 0..<2 {
            let ok = try train(["-o", out])
            XCTAssertEqual(ok.status, 0, ok.stdout + ok.stderr)
        }
        XCTAssertEqual(Set(try fm.contentsOfDirectory(atPath: work)),
                       [".train_torch-work", "init", "init.safetensors", "train.npy", "validation.npy"])
        try "notes\n".write(toFile: work + "/notes.txt", atomically: false, encoding: .utf8)
        let foreign = try train(["-o", out])
        XCTAssertEqual(foreign.status, 1, foreign.stdout + foreign.stderr)
        XCTAssertTrue(foreign.stderr.contains("--work \(work) also holds notes.txt, which train_torch does not write there"),
                      foreign.stderr)
        XCTAssertTrue(fm.fileExists(atPath: work + "/init/ckpt-0.h5"), "nothing removed from a refused folder")
        try fm.removeItem(atPath: work + "/notes.txt")
        let again = try train(["-o", out, "--lr", "-1"])
        XCTAssertEqual(again.status, 1, again.stdout + again.stderr)
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: work), [".train_torch-work"])

        // SIGTERM (torchrun's stop) while drummer makes the step-0 checkpoint: the script leaves
        // with 143, its new work folder removed (it was caught as drummer's failure: exit 1).
        let slow = tmp.appendingPathComponent("slow-drummer.sh").path
        try "#!/bin/sh\ntouch \"$0.started\"\nexec sleep 60\n".write(toFile: slow, atomically: false, encoding: .utf8)
        try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: slow)
        let stopped = tmp.appendingPathComponent("s.safetensors").path
        let bg = try BackgroundRun(["python3", script, "--data", data, "--hidden", "8", "--steps", "1", "--batch-size", "2",
                                    "--unroll", "8", "--drummer", slow, "-o", stopped], in: tmp,
                                   executable: URL(fileURLWithPath: "/usr/bin/env"))
        XCTAssertTrue(bg.wait(seconds: 120) { fm.fileExists(atPath: slow + ".started") }, bg.stderrText)
        bg.signal(SIGTERM)
        let (status, _, err) = try bg.finish()
        XCTAssertEqual(status, 143, err)
        XCTAssertFalse(fm.fileExists(atPath: stopped + ".work"), "the stopped run's work folder is removed")
    }
}
