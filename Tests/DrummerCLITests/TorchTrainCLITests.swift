// PyTorch interop: python/train_torch.py trains a drummer model (the 2017 layout, as
// `drummer train --recipe original` makes it) under torchrun with 2 processes (DDP, gloo),
// drummer imports it, samples it, and measures the same validation loss the script printed
// (the same inputs, targets and loss). Skips without PyTorch.
import Foundation
import XCTest

final class TorchTrainCLITests: XCTestCase {
    func testTorchrunTrainsAModelDrummerImportsAndSamples() throws {
        guard CLI.pythonHas("torch, safetensors, numpy, torch.distributed") else {
            throw XCTSkip("python3 with torch and safetensors is not installed (Scripts/test installs them from a CPU wheel when one is on the machine)")
        }
        let tmp = try CLI.temporaryDirectory("torch-train")
        defer { try? FileManager.default.removeItem(at: tmp) }
        let data = tmp.appendingPathComponent("data").path
        XCTAssertEqual(try CLI.run(["convert-midi", CLI.repoRoot.appendingPathComponent("corpus/groove/drummer4").path, "-o", data,
                                    "--quantize", "30", "--validation-fraction", "0.3"]).status, 0)
        let out = tmp.appendingPathComponent("m.safetensors").path
        let p = try CLI.python(["-m", "torch.distributed.run", "--nproc_per_node", "2",
                                CLI.repoRoot.appendingPathComponent("python/train_torch.py").path, "--data", data, "--hidden", "16",
                                "--layers", "2", "--steps", "6", "--eval-every", "3", "--batch-size", "2", "--unroll", "10",
                                "--output-dropout", "0.2", "--weight-decay", "0.1",
                                "--drummer", CLI.binary.path, "-o", out], cwd: tmp)
        let text = p.stdout + p.stderr
        XCTAssertEqual(p.status, 0, text)
        let last = try XCTUnwrap(text.split(separator: "\n").last { $0.hasPrefix("{\"step\": 6") }, text)
        let record = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        XCTAssertEqual(record["processes"] as? Int, 2)
        let torchLoss = try XCTUnwrap(record["validation_loss"] as? Double)

        let model = tmp.appendingPathComponent("model").path
        let i = try CLI.run(["import", out, "-o", model])
        XCTAssertEqual(i.status, 0, i.stderr)
        XCTAssertTrue(i.stdout.contains("Wx.bin") && i.stdout.contains("Wx1.bin"), i.stdout)
        let s = try CLI.run(["sample", model, "-n", "200", "--seed", "1", "-o", tmp.appendingPathComponent("s.mid").path])
        XCTAssertEqual(s.status, 0, s.stderr)
        let e = try CLI.run(["eval", model, "--data", data + "/validation", "--json"])
        XCTAssertEqual(e.status, 0, e.stderr)
        let metrics = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(e.stdout.utf8)) as? [String: Any])
        // The script prints 4 decimals.
        XCTAssertEqual(try XCTUnwrap(metrics["loss_all"] as? Double), torchLoss, accuracy: 6e-5,
                       "drummer eval's loss_all is PyTorch's validation loss")
        let card = try String(contentsOfFile: model + "/model.json", encoding: .utf8)
        XCTAssertTrue(card.contains("\"trained_by\" : \"python/train_torch.py\""), card)
        XCTAssertTrue(card.contains("\"weight_decay\" : \"0.1\""), card)
        XCTAssertTrue(card.contains("\"output_dropout\" : \"0.2\""), card)
    }
}
