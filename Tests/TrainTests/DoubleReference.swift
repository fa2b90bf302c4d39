// Test support beside the double-precision reference model (Tests/ReferenceModel): the
// original layout's reference of a shape, small random problems, a tolerance check.
import DrummerCore
import Checkpoints
import Train
import Foundation
import ReferenceModel
import XCTest

extension DoubleModel {
    /// The original layout (note, tick in and out) of `shape`.
    init(shape: ModelShape, params: [Double]) {
        self.init(inputs: [shape.notes, shape.ticks], outputs: [shape.notes, shape.ticks], targetColumns: [0, 1],
                  hidden: shape.hidden, params: params)
    }
}


/// Small random problems for the tests.
enum Problem {
    static func events(count: Int, shape: ModelShape, rng: inout SeededRNG) -> [Int32] {
        events(count: count, groups: [shape.notes, shape.ticks], rng: &rng)
    }

    /// `count` rows of uniformly random classes, one column per input group of size `groups[i]`.
    static func events(count: Int, groups: [Int], rng: inout SeededRNG) -> [Int32] {
        var e: [Int32] = []
        for _ in 0..<count {
            for n in groups { e.append(Int32(rng.index(below: n))) }
        }
        return e
    }

    static func uniform(_ n: Int, _ r: Double, rng: inout SeededRNG) -> [Float] {
        (0..<n).map { _ in Float(rng.uniform(-r, r)) }
    }

    /// A training state with weights of scale `scale` and a non-zero carried state.
    static func state(shape: ModelShape, unroll: Int, batch: Int, kind: OptimizerKind = .sgd,
                      scale: Double = 0.5, rng: inout SeededRNG) throws -> TrainingState {
        let w = try LSTMWeights(shape: shape, parameters: uniform(shape.parameterCount, scale, rng: &rng))
        var s = TrainingState(weights: w, unroll: unroll, batch: batch, optimizer: kind)
        s.h = uniform(shape.layers * batch * shape.hidden, 0.5, rng: &rng)
        s.c = uniform(shape.layers * batch * shape.hidden, 1.0, rng: &rng)
        return s
    }
}

func assertClose(_ a: [Float], _ b: [Double], abs: Double, rel: Double, _ what: String,
                 file: StaticString = #filePath, line: UInt = #line) -> Double {
    XCTAssertEqual(a.count, b.count, "\(what): sizes differ", file: file, line: line)
    var worst = 0.0
    var firstBad: Int?
    for k in 0..<min(a.count, b.count) {
        let d = Swift.abs(Double(a[k]) - b[k])
        worst = max(worst, d)
        if d > abs + rel * Swift.abs(b[k]), firstBad == nil { firstBad = k }
    }
    if let k = firstBad {
        XCTFail("\(what)[\(k)] = \(a[k]), reference \(b[k]) (worst abs diff \(worst))", file: file, line: line)
    }
    return worst
}

