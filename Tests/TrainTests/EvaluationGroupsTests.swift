// `drummer eval` library side: an original-layout model over a dataset with per-hit arrays
// reads none of them and reports no velocity figures.
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

    /// An original-layout model over the same groove dataset: the arrays are not read, and the
    /// metrics have no velocity figures (absent from the JSON, not null).
    func testOriginalLayoutModelHasNoVelocityFigures() throws {
        try RunFixture.writeGrooveDataset(root.appendingPathComponent("d"), count: 40)
        let data = try TrainingData.load(path: root.appendingPathComponent("d").path)
        let (model, _) = try self.model(ModelGroups(vocabulary: data.vocabulary))
        let events = try ModelEvaluation.events(of: data, for: model)
        XCTAssertEqual(events, RunFixture.events(count: 40))
        let m = try ModelEvaluation.evaluate(model, events: events, source: "test")
        XCTAssertEqual(m.lossAll, m.loss, accuracy: 1e-12)
        XCTAssertEqual(m.loss, m.lossNote + m.lossTick, accuracy: 1e-12)
        let text = String(decoding: try JSONOutput.encode(m), as: UTF8.self)
        XCTAssertFalse(text.contains("velocity"), text)
    }
}
