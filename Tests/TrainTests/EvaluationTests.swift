// `drummer eval` library side: metrics equal the independent double-precision
// forward's, vocabularies are remapped through MIDI values, unknown values are named.
import DrummerCore
import ReferenceModel
import XCTest
@testable import Checkpoints
@testable import Train
import ModelFiles
@testable import TrainRun

final class EvaluationTests: XCTestCase {
    func testMetricsMatchTheDoubleForwardAndRemappingKeepsThem() throws {
        let root = try RunFixture.temporaryDirectory("eval")
        defer { try? FileManager.default.removeItem(at: root) }
        var rng = SeededRNG(seed: 11)
        let w = try Initializer.weights(shape: RunFixture.vocabulary.shape(hidden: 5), scheme: .keras, rng: &rng)
        try ModelDirectory.write(weights: w, vocabulary: RunFixture.vocabulary, to: root.appendingPathComponent("m").path)
        let model = try EvaluatedModel.load(path: root.appendingPathComponent("m").path)
        let events = RunFixture.events(count: 60)
        let m = try ModelEvaluation.evaluate(model, events: events, source: "test")
        // The independent double-precision forward, from zero state over the same events.
        let reference = DoubleModel(shape: w.shape, params: (w.wx + w.wy).map(Double.init))
        var h = [Double](repeating: 0, count: 5), c = h
        var loss = 0.0, okNote = 0, okTick = 0, okBoth = 0
        for e in 0..<59 {
            (h, c) = reference.cell(note: Int(events[2 * e]), tick: Int(events[2 * e + 1]), h: h, c: c)
            let r = reference.nll(reference.logits(h), note: Int(events[2 * e + 2]), tick: Int(events[2 * e + 3]))
            loss += r.loss
            okNote += r.okNote ? 1 : 0
            okTick += r.okTick ? 1 : 0
            okBoth += r.okNote && r.okTick ? 1 : 0
        }
        XCTAssertEqual(m.events, 59)
        XCTAssertEqual(m.loss, loss / 59, accuracy: 1e-5)
        XCTAssertEqual(m.accuracy, Double(okBoth) / 59, accuracy: 1e-12)
        XCTAssertEqual(m.accuracyNote, Double(okNote) / 59, accuracy: 1e-12)
        XCTAssertEqual(m.accuracyTick, Double(okTick) / 59, accuracy: 1e-12)
        XCTAssertGreaterThan(okNote, 0, "a model that gets nothing right does not test the accuracies")

        // The same sequence stored with a permuted vocabulary evaluates identically.
        let permuted = try Vocabulary(ixToNote: [46, 42, 38, 36], ixToTick: [96, 48, 24, 12, 0, 192])
        var remapped: [Int32] = []
        for e in 0..<60 {
            remapped.append(Int32(3 - Int(events[2 * e])))
            remapped.append(Int32(4 - Int(events[2 * e + 1])))
        }
        try RunFixture.writeDataset(root.appendingPathComponent("d"), events: remapped, vocabulary: permuted)
        let data = try TrainingData.load(path: root.appendingPathComponent("d").path)
        XCTAssertEqual(try ModelEvaluation.events(of: data, for: model), events)
    }

    func testValuesOutsideTheModelsVocabularyAreNamed() throws {
        let v = RunFixture.vocabulary
        let groups = ModelGroups(vocabulary: v)
        XCTAssertEqual(try ModelEvaluation.classes(HitValues(notes: [36, 46], deltas: [96, 0]), for: groups, source: "x"), [0, 4, 3, 0])
        assertThrows(["song.mid: notes 40, 51 are not in the model's vocabulary; tick values 7 are not in the model's vocabulary"]) {
            try ModelEvaluation.classes(HitValues(notes: [36, 51, 40, 51], deltas: [0, 7, 12, 0]), for: groups, source: "song.mid")
        }
    }

    func testTooShortSequenceIsAnError() throws {
        var rng = SeededRNG(seed: 1)
        let w = try Initializer.weights(shape: RunFixture.vocabulary.shape(hidden: 3), scheme: .original, rng: &rng)
        let model = EvaluatedModel(weights: w, groups: ModelGroups(vocabulary: RunFixture.vocabulary), source: "m")
        assertThrows(["needs at least 2"]) { try ModelEvaluation.evaluate(model, events: [0, 0], source: "d") }
    }
}
