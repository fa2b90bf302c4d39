// Files evaluated side by side (Evaluator.evaluateFiles, BatchedInference) give the figures of
// the files evaluated one after the other, each from its own zero state, with the one-stream
// step (Evaluator.evaluate per file, summed in file order): the same predictions and
// accuracies, the same losses up to float32 rounding of the batched products; the same bits
// from one run to the next; and a stop request ends it with nothing.
import DrummerCore
import XCTest
@testable import Train

final class EvaluateFilesTests: XCTestCase {
    /// A model of several input groups, a masked output target (the grid's "not hit": a target
    /// class equal to its group's size) and `layers` layers; and `events` over it cut into
    /// files, some too short to predict anything.
    func problem(layers: Int, seed: UInt64) throws -> (LSTMWeights, [Int32], [Int]) {
        // Output group 2's targets come from input group 2 (4 classes), one more than it has: the
        // last is "not predicted".
        let shape = ModelShape(inputGroups: [5, 7, 4], outputGroups: [5, 7, 3], hidden: 12, layers: layers,
                               targetColumns: [0, 1, 2], lossGroups: 3)
        var rng = SeededRNG(seed: seed)
        let w = try LSTMWeights(shape: shape, parameters: Problem.uniform(shape.parameterCount, 0.6, rng: &rng))
        let fileRows = [1, 40, 17, 2, 90, 0, 33, 5, 61, 12, 3, 77, 28, 1, 44]
        let events = Problem.events(count: fileRows.reduce(0, +), groups: shape.inputGroups, rng: &rng)
        return (w, events, fileRows)
    }

    /// The reference: each file alone through the one-stream evaluator, summed in file order.
    func oneByOne(_ w: LSTMWeights, _ events: [Int32], _ fileRows: [Int]) -> EvaluationResult {
        let k = w.shape.inputGroups.count
        var total = EvaluationResult(groups: w.shape.outputGroups.count, lossGroups: w.shape.lossGroups)
        var start = 0
        for rows in fileRows {
            defer { start += rows }
            guard rows >= 2 else { continue }
            total.add(Evaluator.evaluate(weights: w, events: Array(events[(start * k)..<((start + rows) * k)])))
        }
        return total
    }

    func testSideBySideEqualsOneByOne() throws {
        for (layers, seed) in [(1, 3), (2, 4), (3, 5)] {
            let (w, events, fileRows) = try problem(layers: layers, seed: UInt64(seed))
            let want = oneByOne(w, events, fileRows)
            XCTAssertEqual(want.predictions, fileRows.filter { $0 >= 2 }.map { $0 - 1 }.reduce(0, +))
            for (batch, threads) in [(1, 1), (3, 1), (4, 2), (32, 2), (2, 3)] {
                let what = "\(layers) layer(s), batch \(batch), \(threads) thread(s)"
                let got = try XCTUnwrap(Evaluator.evaluateFiles(weights: w, events: events, fileRows: fileRows,
                                                                batch: batch, threads: threads))
                XCTAssertEqual(got.predictions, want.predictions, what)
                XCTAssertEqual(got.correct, want.correct, what)
                XCTAssertEqual(got.correctBoth, want.correctBoth, what)
                for g in 0..<3 {
                    XCTAssertEqual(got.lossSums[g], want.lossSums[g], accuracy: 1e-5 * want.lossSums[g], "\(what), group \(g)")
                }
                XCTAssertGreaterThan(want.lossSums[2], 0, "the masked group still predicts some rows")
                let again = try XCTUnwrap(Evaluator.evaluateFiles(weights: w, events: events, fileRows: fileRows,
                                                                  batch: batch, threads: threads))
                XCTAssertEqual(again.lossSums.map(\.bitPattern), got.lossSums.map(\.bitPattern), "\(what): the same bits again")
            }
        }
    }

    /// The state of one file does not reach the next: a file's figures are the same whatever
    /// file came before it on its stream (here, one stream playing the files in another order).
    func testEachFileStartsFromZero() throws {
        let (w, events, fileRows) = try problem(layers: 2, seed: 9)
        let k = w.shape.inputGroups.count
        var starts = [0]
        for r in fileRows { starts.append(starts.last! + r) }
        let order = Array(fileRows.indices.reversed())
        let reordered = order.flatMap { f in events[(starts[f] * k)..<(starts[f + 1] * k)] }
        let a = try XCTUnwrap(Evaluator.evaluateFiles(weights: w, events: events, fileRows: fileRows, batch: 1, threads: 1))
        let b = try XCTUnwrap(Evaluator.evaluateFiles(weights: w, events: reordered, fileRows: order.map { fileRows[$0] },
                                                      batch: 1, threads: 1))
        XCTAssertEqual(a.predictions, b.predictions)
        XCTAssertEqual(a.correct, b.correct)
        for g in 0..<3 { XCTAssertEqual(a.lossSums[g], b.lossSums[g], accuracy: 1e-9 * a.lossSums[g]) }
    }

    func testAStopRequestEndsWithNothing() throws {
        let (w, events, fileRows) = try problem(layers: 1, seed: 6)
        XCTAssertNil(Evaluator.evaluateFiles(weights: w, events: events, fileRows: fileRows, threads: 2, shouldStop: { true }))
    }
}
