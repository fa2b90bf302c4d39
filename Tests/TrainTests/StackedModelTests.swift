// Stacked layers through the same code paths as one layer: the inference step (sample and
// eval), the evaluator, the trainer's chunk loss, checkpoints and model directories, all
// checked against the double-precision reference (DoubleReference.swift), which computes
// every offset itself.
import DrummerCore
import Foundation
import ModelFiles
@testable import Sample
import ReferenceModel
import XCTest
@testable import Checkpoints
@testable import Train
@testable import TrainRun

final class StackedModelTests: XCTestCase {
    /// A 2-layer model with groups (note 3, tick 4, a 2-bit position, velocity 5) and weights
    /// large enough that the layers matter.
    func model(layers: Int = 2, seed: UInt64 = 41) throws -> (LSTMWeights, DoubleModel) {
        let shape = ModelShape(inputGroups: [3, 4, 2, 2, 5], outputGroups: [3, 4, 5], hidden: 6, layers: layers)
        var rng = SeededRNG(seed: seed)
        let w = try LSTMWeights(shape: shape, parameters: Problem.uniform(shape.parameterCount, 0.8, rng: &rng))
        let reference = DoubleModel(inputs: shape.inputGroups, outputs: shape.outputGroups, targetColumns: [0, 1, 4],
                                    hidden: 6, layers: layers, params: w.parameters.map(Double.init))
        XCTAssertEqual(reference.count, shape.parameterCount, "the reference's own layout has the same size")
        return (w, reference)
    }

    /// A 2-layer model of the 2017 layout's groups (note 3, tick 4) with weights large enough
    /// that the layers matter.
    func originalLayoutModel(seed: UInt64 = 43) throws -> (LSTMWeights, ModelGroups) {
        let groups = ModelGroups(vocabulary: try Vocabulary(ixToNote: [36, 38, 42], ixToTick: [0, 60, 120, 240]))
        var rng = SeededRNG(seed: seed)
        let shape = groups.shape(hidden: 6, layers: 2)
        return (try LSTMWeights(shape: shape, parameters: Problem.uniform(shape.parameterCount, 0.8, rng: &rng)), groups)
    }

    /// The inference step (what `drummer sample` and `drummer eval` run) gives the reference's
    /// top-layer h and logits, step after step, from a non-zero state in both layers.
    func testInferenceStepMatchesReference() throws {
        let (w, reference) = try model()
        let lstm = LSTMInference(weights: w)
        var rng = SeededRNG(seed: 5)
        var state: [(h: [Double], c: [Double])] = []
        for layer in 0..<2 {
            let h = Problem.uniform(6, 0.5, rng: &rng), c = Problem.uniform(6, 1, rng: &rng)
            lstm.setState(layer: layer, h: h, c: c)
            state.append((h.map(Double.init), c.map(Double.init)))
        }
        let events = Problem.events(count: 40, groups: w.shape.inputGroups, rng: &rng)
        for e in 0..<40 {
            let classes = (0..<5).map { Int(events[e * 5 + $0]) }
            for g in 0..<5 { lstm.input[g] = Int32(classes[g]) }
            lstm.step()
            let h = reference.step(classes: classes, state: &state)
            _ = assertClose(Array(lstm.h), h, abs: 1e-5, rel: 1e-5, "h at step \(e)")
            _ = assertClose(Array(lstm.c), state[1].c, abs: 1e-5, rel: 1e-5, "top layer's c at step \(e)")
            _ = assertClose(Array(lstm.logits()), reference.logits(h), abs: 1e-4, rel: 1e-5, "logits at step \(e)")
        }
        // The first layer's state is not what the head reads: a one-layer step would differ.
        XCTAssertGreaterThan(zip(state[0].h, state[1].h).map { abs($0 - $1) }.max() ?? 0, 1e-3)
    }

    /// The evaluator's loss over a sequence longer than one block equals the reference's, and the
    /// trainer's chunk loss (its own forward) equals it on the same events from zero state.
    func testEvaluatorAndTrainerAgreeWithReference() throws {
        let (w, reference) = try model()
        var rng = SeededRNG(seed: 6)
        let n = Evaluator.block + 30
        let events = Problem.events(count: n, groups: w.shape.inputGroups, rng: &rng)
        let got = Evaluator.evaluate(weights: w, events: events)
        var state = [(h: [Double], c: [Double])](repeating: ([Double](repeating: 0, count: 6), [Double](repeating: 0, count: 6)), count: 2)
        var loss = 0.0
        for e in 0..<(n - 1) {
            let h = reference.step(classes: (0..<5).map { Int(events[e * 5 + $0]) }, state: &state)
            let r = reference.groupNLL(reference.logits(h), targets: [0, 1, 4].map { Int(events[(e + 1) * 5 + $0]) })
            loss += r[0].loss + r[1].loss
        }
        XCTAssertEqual(got.predictions, n - 1)
        XCTAssertEqual(got.lossSum, loss, accuracy: 1e-5 * loss)

        // The trainer's forward over one chunk of U = n − 1 steps from zero state.
        let trainState = TrainingState(weights: w, unroll: n - 1, batch: 1, optimizer: .sgd)
        let trainer = try Trainer(state: trainState, events: events + events.suffix(5), optimizer: OptimizerConfig())
        let (chunkLoss, _) = trainer.chunkGradient()
        let all = reference.chunkLoss(events: events + events.suffix(5), unroll: n - 1, batch: 1, pointer: 0,
                                      h0: trainState.h, c0: trainState.c)
        XCTAssertEqual(Double(chunkLoss), all, accuracy: 1e-5 * all)
        XCTAssertGreaterThan(all * Double(n - 1), loss, "the chunk loss also counts the velocity group")
    }

    /// A stacked model is written as Wx.bin, Wx1.bin, Wy.bin and a version-3 model.json that lists
    /// the layers, and reads back bit for bit; a one-layer model's files stay version 2 without a
    /// layers key; a damaged or missing layer file is refused, naming it.
    func testModelDirectoryRoundTripAndRefusals() throws {
        let (w, groups) = try originalLayoutModel()
        let root = try RunFixture.temporaryDirectory("stacked")
        defer { try? FileManager.default.removeItem(at: root) }
        let dir = root.appendingPathComponent("m").path
        try ModelDirectory.write(weights: w, groups: groups, to: dir, metadata: ["step": "3"])
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        XCTAssertEqual(files, ["Wx.bin", "Wx1.bin", "Wy.bin", "model.json"])
        let size = try FileManager.default.attributesOfItem(atPath: dir + "/Wx1.bin")[.size] as? Int
        XCTAssertEqual(size, (2 * 6 + 1) * 24 * 4, "Wx1.bin: (2H+1) × 4H float32")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/model.json"))) as? [String: Any]
        XCTAssertEqual(json?["format_version"] as? Int, 3)
        let layers = json?["layers"] as? [[String: Any]]
        XCTAssertEqual(layers?.map { $0["file"] as? String }, ["Wx.bin", "Wx1.bin"])
        XCTAssertEqual(layers?.map { $0["shape"] as? [Int] }, [[7 + 6 + 1, 24], [13, 24]])
        XCTAssertEqual(layers?[1]["input"] as? String, "h of layer 0")
        let loaded = try ModelDirectory.load(path: dir)
        XCTAssertTrue(loaded.checksumsVerified)
        XCTAssertEqual(loaded.weights.parameters.map(\.bitPattern), w.parameters.map(\.bitPattern))
        XCTAssertEqual(loaded.shape.layers, 2)

        // One layer: version 2, no layers key, no Wx1.bin.
        let one = try LSTMWeights(shape: w.shape.with(layers: 1), layerWx: [w.wx], wy: w.wy)
        let dir1 = root.appendingPathComponent("one").path
        try ModelDirectory.write(weights: one, groups: groups, to: dir1)
        let json1 = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir1 + "/model.json"))) as? [String: Any]
        XCTAssertEqual(json1?["format_version"] as? Int, 2)
        XCTAssertNil(json1?["layers"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir1).sorted(), ["Wx.bin", "Wy.bin", "model.json"])

        // A flipped byte in Wx1.bin, then a missing Wx1.bin.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: dir + "/Wx1.bin"))
        bytes[17] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: dir + "/Wx1.bin"))
        XCTAssertThrowsError(try ModelDirectory.load(path: dir)) { e in
            XCTAssertTrue("\(e)".contains("Wx1.bin") && "\(e)".contains("SHA-256"), "\(e)")
        }
        try FileManager.default.removeItem(atPath: dir + "/Wx1.bin")
        XCTAssertThrowsError(try ModelDirectory.load(path: dir)) { e in
            XCTAssertTrue("\(e)".contains("Wx1.bin") && "\(e)".contains("missing"), "\(e)")
        }
    }

    /// The sampler runs a stacked model through the same step, and a fixed seed samples the same.
    func testSamplerRunsStackedModel() throws {
        let (w, groups) = try originalLayoutModel()
        let sampler = try Sampler(weights: w, groups: groups)
        var a = SeededRNG(seed: 9), b = SeededRNG(seed: 9)
        let x = try sampler.generate(count: 200, rng: &a), y = try sampler.generate(count: 200, rng: &b)
        XCTAssertEqual(x, y)
        XCTAssertEqual(x.count, 200)
        // A one-layer sampler over the first layer's weights samples something else.
        let one = try Sampler(weights: try LSTMWeights(shape: w.shape.with(layers: 1), layerWx: [w.wx], wy: w.wy), groups: groups)
        var c = SeededRNG(seed: 9)
        XCTAssertNotEqual(try one.generate(count: 200, rng: &c).map(\.event), x.map(\.event))
    }
}
