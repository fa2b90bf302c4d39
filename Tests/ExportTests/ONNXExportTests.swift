// ONNX interop: `drummer export --format onnx`. The graph's structure (decoded with the same
// generated ONNX messages), and, where onnxruntime is installed, per-step parity with drummer on
// the shipped models/groove over 1,000 grid steps and with PyTorch's frozen logits of a 2-layer model.
import DrummerCore
import Encode
import Foundation
import ModelFiles
import XCTest
@testable import Export
@testable import ONNXExport
@testable import Sample

final class ONNXExportTests: XCTestCase {
    func testGraphInputsOutputsInitializersAndMetadata() throws {
        let (w, g) = try SafeTensorsTests.smallModel(layers: 2)
        let data = try ONNXGraph.encode(weights: w, groups: g, modelJSON: "{}")
        let m = try Onnx_ModelProto(serializedBytes: data)
        XCTAssertEqual(m.irVersion, 8)
        XCTAssertEqual(m.opsetImport.map(\.version), [17])
        XCTAssertEqual(m.graph.input.map(\.name), ["classes", "h0", "c0", "h1", "c1"])
        XCTAssertEqual(m.graph.output.map(\.name), ["logits_note", "logits_tick", "h0_next", "c0_next", "h1_next", "c1_next"])
        XCTAssertEqual(m.graph.output[0].type.tensorType.shape.dim.map(\.dimValue), [0, 4], "[batch, 4 notes]")
        XCTAssertEqual(m.graph.output[0].type.tensorType.shape.dim.first?.dimParam, "batch")
        let initializers = Dictionary(uniqueKeysWithValues: m.graph.initializer.map { ($0.name, $0) })
        XCTAssertEqual(initializers["W_in0"]?.dims, [9, 12])
        XCTAssertEqual(initializers["W_rec1"]?.dims, [3, 12])
        XCTAssertEqual(initializers["W_in1"]?.dims, [3, 12])
        XCTAssertEqual(initializers["W_head"]?.dims, [3, 9])
        XCTAssertEqual(initializers["offsets"]?.int64Data, [0, 4])
        // W_in0 is Wx's input rows as they are (the gate column blocks f, i, o, g kept).
        let raw = try XCTUnwrap(initializers["W_in0"]?.rawData)
        let first = raw.prefix(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
        XCTAssertEqual(Float(bitPattern: first), w.layerWx[0][0])
        XCTAssertEqual(raw.count, 9 * 12 * 4)
        let meta = Dictionary(uniqueKeysWithValues: m.metadataProps.map { ($0.key, $0.value) })
        XCTAssertEqual(meta["input_groups"], "note,tick")
        XCTAssertEqual(meta["output_groups"], "note,tick")
        XCTAssertEqual(meta["layers"], "2")
        XCTAssertEqual(meta["model_json"], "{}")
        XCTAssertEqual(try ONNXGraph.encode(weights: w, groups: g, modelJSON: "{}"), data, "the same model, the same bytes")
    }

    static var onnxRuntime: Bool { SafeTensorsTests.python(["-c", "import onnxruntime, numpy"]) == 0 }

    /// Runs python/parity.py: `model`'s ONNX graph in ONNX Runtime over the rows `fed`, against
    /// drummer's `logits` (tolerance 1e-4); its exit status.
    static func onnxRuntimeParity(_ model: LoadedModel, fed: [Int32], logits: [Float]) throws -> Int32 {
        let k = model.shape.inputGroups.count, O = model.shape.outputWidth, rows = fed.count / k
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("onnx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try ONNXGraph.encode(weights: model.weights, groups: model.groups, modelJSON: "{}").write(to: dir.appendingPathComponent("m.onnx"))
        try NPY.write(int32: fed, shape: [rows, k], to: dir.appendingPathComponent("c.npy").path)
        try NPY.write(float32: logits, shape: [rows, O], to: dir.appendingPathComponent("y.npy").path)
        return SafeTensorsTests.python([SafeTensorsTests.repo.appendingPathComponent("python/parity.py").path,
                                        dir.appendingPathComponent("m.onnx").path, dir.appendingPathComponent("c.npy").path,
                                        dir.appendingPathComponent("y.npy").path, "--tolerance", "1e-4"])
    }

    /// The shipped grid model (models/groove, 2 layers, 51 input groups: a style input and the
    /// lookback four bars back) stepped over 1,000 rows of a seeded random grid sequence, in its
    /// last style, in drummer and in ONNX Runtime.
    func testGridModelStepsMatchDrummerInONNXRuntime() throws {
        guard Self.onnxRuntime else {
            throw XCTSkip("python3 with onnxruntime is not installed (Scripts/test installs it from PyPI): ONNX Runtime parity not run")
        }
        let model = try ModelDirectory.load(path: SafeTensorsTests.repo.appendingPathComponent("models/groove").path)
        let grid = try XCTUnwrap(model.groups.grid, "models/groove is a grid model")
        XCTAssertEqual(grid.inputGroups.count, 51)
        let fed = SafeTensorsTests.gridRows(grid, seed: 4)
        XCTAssertEqual(fed.count, 1000 * grid.inputGroups.count)
        let logits = SafeTensorsTests.logits(model.weights, fed: fed)
        XCTAssertEqual(try Self.onnxRuntimeParity(model, fed: fed, logits: logits), 0)
    }

    /// The sampling loop of docs/pytorch-and-onnx.md for the shipped model, as written: the rows
    /// it builds from its own draws (hit sets, velocity bins, offset classes) are the rows drummer's
    /// GridEncoder builds from them (the lookback four bars back, the repeat flags, the style), and
    /// it prints each drawn hit at its step's tick with its class's note.
    func testTheDocsGridLoopFeedsTheRowsDrummerBuilds() throws {
        guard Self.onnxRuntime else { throw XCTSkip("python3 with onnxruntime is not installed: the docs' ONNX loop not run") }
        let path = SafeTensorsTests.repo.appendingPathComponent("models/groove").path
        let model = try ModelDirectory.load(path: path)
        let grid = try XCTUnwrap(model.groups.grid)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("onnx-loop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let onnx = dir.appendingPathComponent("groove.onnx"), out = dir.appendingPathComponent("draws.json")
        try ONNXGraph.encode(weights: model.weights, groups: model.groups,
                             modelJSON: try String(contentsOfFile: path + "/model.json", encoding: .utf8)).write(to: onnx)
        let docs = try String(contentsOf: SafeTensorsTests.repo.appendingPathComponent("docs/pytorch-and-onnx.md"), encoding: .utf8)
        let after = try XCTUnwrap(docs.range(of: "## Sampling the shipped model from its ONNX graph"), "docs/pytorch-and-onnx.md lost its grid loop")
        let block = try XCTUnwrap(docs[after.upperBound...].range(of: "```python\n"))
        let end = try XCTUnwrap(docs[block.upperBound...].range(of: "```"))
        var code = String(docs[block.upperBound..<end.lowerBound]).replacingOccurrences(of: "\"groove.onnx\"", with: "\"\(onnx.path)\"")
        code += "json.dump({\"X\": [[int(v) for v in r] for r in X], \"hits\": [int(h) for h in hits[1:]], "
            + "\"vel\": [[int(v) for v in r] for r in vel[1:]], \"off\": [[int(v) for v in r] for r in off[1:]], \"style\": style}, "
            + "open(\"\(out.path)\", \"w\"))\n"
        let script = dir.appendingPathComponent("loop.py")
        try code.write(to: script, atomically: true, encoding: .utf8)
        let p = Process(), stdout = Pipe()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", script.path]
        p.standardOutput = stdout
        try p.run()
        let printed = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let draws = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any])
        let X = try XCTUnwrap(draws["X"] as? [[Int]]), hits = try XCTUnwrap(draws["hits"] as? [Int])
        let vel = try XCTUnwrap(draws["vel"] as? [[Int]]), off = try XCTUnwrap(draws["off"] as? [[Int]])
        let style = try XCTUnwrap(draws["style"] as? [Int])
        XCTAssertEqual(style, [try XCTUnwrap(grid.styles?.names.firstIndex(of: "drummer1-rock"))])
        XCTAssertEqual(X.count, 64)
        var seq = GridSequence(style: style[0])
        for (n, h) in hits.enumerated() { seq.append(hitSet: h, velocity: { vel[n][$0] }, offset: { off[n][$0] }) }
        let k = grid.inputGroups.count
        let rows = GridEncoder(group: grid).rows(of: seq)
        XCTAssertEqual(X.flatMap { $0 }, rows.prefix(64 * k).map(Int.init), "the loop's rows −1 ..< 63")
        XCTAssertGreaterThan(Set(hits).count, 4, "it plays more than a hit set or two")
        XCTAssertGreaterThanOrEqual(Set(hits.indices.filter { hits[$0] != 0 }.map { $0 / 16 }).count, 4, "hits in each of the 4 bars")
        // What it prints: a line per class hit, at its step's tick plus its offset, the class's note.
        let lines = printed.split(separator: "\n").map { $0.split(separator: " ").compactMap { Int($0) } }
        XCTAssertEqual(lines.count, hits.map { $0.nonzeroBitCount }.reduce(0, +))
        var i = 0
        for (n, h) in hits.enumerated() {
            for c in 0..<GridGroup.classCount where h >> c & 1 == 1 {
                XCTAssertEqual(lines[i], [n * 120 + grid.offsets[off[n][c] % grid.offsets.count], grid.notes[c],
                                          (grid.velocity.bins[vel[n][c]].lowerBound + grid.velocity.bins[vel[n][c]].upperBound) / 2])
                i += 1
            }
        }
    }

    /// PyTorch's frozen logits of a 2-layer model (tests the stacked graph against PyTorch).
    func testStackedGraphMatchesPyTorchsFrozenLogits() throws {
        guard Self.onnxRuntime else { throw XCTSkip("python3 with onnxruntime is not installed: ONNX Runtime parity not run") }
        let fixtures = SafeTensorsTests.fixtures
        let tiny = try TorchModel.decode(try Data(contentsOf: fixtures.appendingPathComponent("tiny.safetensors")), path: "tiny")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tiny-\(UUID().uuidString).onnx")
        defer { try? FileManager.default.removeItem(at: file) }
        try ONNXGraph.encode(weights: tiny.weights, groups: tiny.groups, modelJSON: "{}").write(to: file)
        XCTAssertEqual(SafeTensorsTests.python([SafeTensorsTests.repo.appendingPathComponent("python/parity.py").path, file.path,
                                                fixtures.appendingPathComponent("tiny-classes.npy").path,
                                                fixtures.appendingPathComponent("tiny-logits.npy").path, "--tolerance", "1e-5"]), 0)
    }
}
