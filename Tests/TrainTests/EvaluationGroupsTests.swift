// `drummer eval` library side for groove models: per-group loss and accuracy equal the
// independent double-precision forward's; `loss` and `accuracy` stay note + tick; a dataset
// stored with another vocabulary maps its positions and velocities too; the JSON keys.
import DrummerCore
import Encode
import Foundation
import ReferenceModel
import XCTest
@testable import Checkpoints
@testable import Train
@testable import TrainRun
import FileOutput
import ModelFiles

final class EvaluationGroupsTests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws { root = try RunFixture.temporaryDirectory("eval-groups") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    /// A random model of `groups` at hidden size 5, written as a model directory and loaded back.
    func model(_ groups: ModelGroups, seed: UInt64 = 13) throws -> (EvaluatedModel, LSTMWeights) {
        var rng = SeededRNG(seed: seed)
        let w = try Initializer.weights(shape: groups.shape(hidden: 5), scheme: .keras, rng: &rng)
        let dir = root.appendingPathComponent("m-\(seed)-\(groups.inputNames.count)").path
        try ModelDirectory.write(weights: w, groups: groups, to: dir)
        return (try EvaluatedModel.load(path: dir), w)
    }

    func testPerGroupMetricsMatchTheDoubleForward() throws {
        try RunFixture.writeGrooveDataset(root.appendingPathComponent("d"), count: 80)
        let data = try TrainingData.load(path: root.appendingPathComponent("d").path)
        for encoding in PositionEncoding.allCases {
            let groups = try data.groups(position: true, velocity: true, encoding: encoding, velocityBins: 4)
            let (model, w) = try self.model(groups)
            let events = try ModelEvaluation.events(of: data, for: model)
            let m = try ModelEvaluation.evaluate(model, events: events, source: "test")

            // The reference reads the same class matrix; the velocity bin is its last column.
            let k = groups.shape(hidden: 5).inputGroups.count
            let reference = DoubleModel(inputs: w.shape.inputGroups, outputs: w.shape.outputGroups,
                                        targetColumns: [0, 1, k - 1], hidden: 5, params: (w.wx + w.wy).map(Double.init))
            var h = [Double](repeating: 0, count: 5), c = h
            var loss = [0.0, 0.0, 0.0], ok = [0, 0, 0], both = 0
            for e in 0..<79 {
                (h, c) = reference.cell(classes: (0..<k).map { Int(events[e * k + $0]) }, h: h, c: c)
                let r = reference.groupNLL(reference.logits(h), targets: [0, 1, k - 1].map { Int(events[(e + 1) * k + $0]) })
                for g in 0..<3 {
                    loss[g] += r[g].loss
                    ok[g] += r[g].ok ? 1 : 0
                }
                both += r[0].ok && r[1].ok ? 1 : 0
            }
            let what = encoding.rawValue
            XCTAssertEqual(m.events, 79, what)
            XCTAssertEqual(m.lossNote, loss[0] / 79, accuracy: 1e-5, what)
            XCTAssertEqual(m.lossTick, loss[1] / 79, accuracy: 1e-5, what)
            XCTAssertEqual(try XCTUnwrap(m.lossVelocity), loss[2] / 79, accuracy: 1e-5, what)
            XCTAssertEqual(m.loss, (loss[0] + loss[1]) / 79, accuracy: 1e-5, "loss stays note + tick (\(what))")
            XCTAssertEqual(m.lossAll, (loss[0] + loss[1] + loss[2]) / 79, accuracy: 1e-5, what)
            XCTAssertEqual(m.accuracyNote, Double(ok[0]) / 79, accuracy: 1e-12, what)
            XCTAssertEqual(m.accuracyTick, Double(ok[1]) / 79, accuracy: 1e-12, what)
            XCTAssertEqual(try XCTUnwrap(m.accuracyVelocity), Double(ok[2]) / 79, accuracy: 1e-12, what)
            XCTAssertEqual(m.accuracy, Double(both) / 79, accuracy: 1e-12, what)
            XCTAssertGreaterThan(ok[0] + ok[2], 0, "a model that gets nothing right does not test the accuracies")

            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONOutput.encode(m)) as? [String: Any])
            XCTAssertEqual(Set(json.keys), ["events", "loss", "accuracy", "accuracy_note", "accuracy_tick", "loss_note", "loss_tick",
                                            "loss_velocity", "accuracy_velocity", "loss_all"])
        }
    }

    /// An original-layout model over the same groove dataset: the arrays are not read, and the
    /// metrics have no velocity figures (absent from the JSON, not null).
    func testOriginalLayoutModelHasNoVelocityFigures() throws {
        try RunFixture.writeGrooveDataset(root.appendingPathComponent("d"), count: 40)
        let data = try TrainingData.load(path: root.appendingPathComponent("d").path)
        let (model, _) = try self.model(ModelGroups(vocabulary: data.vocabulary))
        let events = try ModelEvaluation.events(of: data, for: model)
        XCTAssertEqual(events, RunFixture.events(count: 40))
        let m = try ModelEvaluation.evaluate(model, events: events, source: "test")
        XCTAssertNil(m.lossVelocity)
        XCTAssertNil(m.accuracyVelocity)
        XCTAssertEqual(m.lossAll, m.loss, accuracy: 1e-12)
        XCTAssertEqual(m.loss, m.lossNote + m.lossTick, accuracy: 1e-12)
        let text = String(decoding: try JSONOutput.encode(m), as: UTF8.self)
        XCTAssertFalse(text.contains("velocity"), text)
    }

    /// The same hits stored with a permuted vocabulary give the same class matrix: notes and
    /// ticks are remapped through MIDI values, positions and velocities carried along.
    func testRemappedGrooveDatasetGivesTheSameClasses() throws {
        try RunFixture.writeGrooveDataset(root.appendingPathComponent("d"), count: 60)
        let data = try TrainingData.load(path: root.appendingPathComponent("d").path)
        let groups = try data.groups(position: true, velocity: true, encoding: .binary, velocityBins: 4)
        let (model, _) = try self.model(groups)
        let permuted = try Vocabulary(ixToNote: [46, 42, 38, 36], ixToTick: [96, 48, 24, 12, 0, 192])
        let events = RunFixture.events(count: 60)
        var remapped: [Int32] = []
        for e in 0..<60 {
            remapped.append(3 - events[2 * e])
            remapped.append(4 - events[2 * e + 1])
        }
        let other = root.appendingPathComponent("p")
        try RunFixture.writeDataset(other, events: remapped, vocabulary: permuted)
        for name in ["velocities.npy", "positions.npy", "manifest.json"] {
            try FileManager.default.copyItem(at: root.appendingPathComponent("d/" + name), to: other.appendingPathComponent(name))
        }
        let otherData = try TrainingData.load(path: other.path)
        XCTAssertEqual(try ModelEvaluation.events(of: otherData, for: model), try ModelEvaluation.events(of: data, for: model))
        // Without velocities.npy the velocity group has nothing to read: named.
        try FileManager.default.removeItem(at: other.appendingPathComponent("velocities.npy"))
        assertThrows(["\(other.path): the velocity group needs velocities.npy, which this dataset lacks"]) {
            try ModelEvaluation.events(of: try TrainingData.load(path: other.path), for: model)
        }
    }
}
