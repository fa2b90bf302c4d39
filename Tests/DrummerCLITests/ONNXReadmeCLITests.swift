// ONNX interop: the ONNX sampling loop of docs/pytorch-and-onnx.md runs as written against a model of the 2017 layout
// exported with `drummer export --format onnx` (skips without onnxruntime).
import Foundation
import XCTest

final class ONNXReadmeCLITests: XCTestCase {
    func testTheReadmeLoopSamplesFromAnExportedGraph() throws {
        guard CLI.pythonHas("onnxruntime, numpy") else {
            throw XCTSkip("python3 with onnxruntime is not installed (Scripts/test installs it from PyPI)")
        }
        let tmp = try CLI.temporaryDirectory("onnx-readme")
        defer { try? FileManager.default.removeItem(at: tmp) }
        try TrainCLITests.writeDataset(tmp.appendingPathComponent("data"), count: 120)
        let t = try CLI.run(["train", "--recipe", "original", "--data", tmp.appendingPathComponent("data").path, "--hidden", "6",
                             "--layers", "2", "--unroll", "8", "--steps", "3", "--checkpoint-dir", tmp.appendingPathComponent("c").path])
        XCTAssertEqual(t.status, 0, t.stderr)
        let onnx = tmp.appendingPathComponent("model.onnx").path
        let e = try CLI.run(["export", tmp.appendingPathComponent("c").path, "--format", "onnx", "-o", onnx])
        XCTAssertEqual(e.status, 0, e.stderr)
        XCTAssertTrue(e.stdout.contains(": onnx, 2 LSTM layer(s) of 6 over 9 one-hot inputs, a head of 9 logits"), e.stdout)
        // The python block after "Sampling from the ONNX graph" in docs/pytorch-and-onnx.md.
        let readme = try String(contentsOf: CLI.repoRoot.appendingPathComponent("docs/pytorch-and-onnx.md"), encoding: .utf8)
        let after = try XCTUnwrap(readme.range(of: "Sampling from the ONNX graph"), "docs/pytorch-and-onnx.md lost its ONNX loop")
        let block = try XCTUnwrap(readme[after.upperBound...].range(of: "```python\n"))
        let end = try XCTUnwrap(readme[block.upperBound...].range(of: "```"))
        let code = String(readme[block.upperBound..<end.lowerBound])
        XCTAssertLessThanOrEqual(code.split(separator: "\n").count, 12, "a short loop")
        let script = tmp.appendingPathComponent("loop.py")
        try code.replacingOccurrences(of: "\"model.onnx\"", with: "\"\(onnx)\"").write(to: script, atomically: true, encoding: .utf8)
        let p = try CLI.python([script.path])
        let text = p.stdout + p.stderr
        XCTAssertEqual(p.status, 0, text)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 16, text)
        var last = -1
        for line in lines {
            let parts = line.split(separator: " ").compactMap { Int($0) }
            XCTAssertEqual(parts.count, 2, String(line))
            XCTAssertGreaterThanOrEqual(parts[0], last, "onsets never go back")
            XCTAssertTrue([36, 38, 42, 46].contains(parts[1]), "a note of the model's vocabulary: \(line)")
            last = parts[0]
        }
    }
}
