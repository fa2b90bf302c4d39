// A plain double-precision forward of the model (loss only), written apart from
// the trainer, for finite-difference gradient checks and evaluation checks. It uses
// no layout helper of the production code: every row and column index of Wx and Wy
// is computed here from N, K and H (Wx rows [notes | ticks | W_rec | bias], Wy rows
// [W_out | bias], columns [notes | ticks]).
import DrummerCore
import Checkpoints
import Train
import Foundation
import XCTest

struct DoubleModel {
    let shape: ModelShape
    /// Wx then Wy, as the trainer's parameter buffer.
    var params: [Double]

    var N: Int { shape.notes }
    var K: Int { shape.ticks }
    var H: Int { shape.hidden }
    var G: Int { 4 * shape.hidden }
    /// V = N + K: the one-hot input rows of Wx and the columns of Wy.
    var V: Int { shape.notes + shape.ticks }
    /// Floats in Wx: (V + H + 1) rows of G.
    var wxCount: Int { (V + H + 1) * G }

    func wx(_ row: Int, _ col: Int) -> Double { params[row * G + col] }
    func wy(_ row: Int, _ col: Int) -> Double { params[wxCount + row * V + col] }

    /// One LSTM step from (h, c) with input event (note, tick); returns the new (h, c).
    func cell(note: Int, tick: Int, h: [Double], c: [Double]) -> ([Double], [Double]) {
        var a = [Double](repeating: 0, count: G)
        for j in 0..<G {
            // x·Wx: the note's row, the tick's row (after the N note rows), then h·W_rec and the bias.
            var s = wx(note, j) + wx(N + tick, j) + wx(V + H, j)
            for k in 0..<H { s += h[k] * wx(V + k, j) }
            a[j] = s
        }
        func sig(_ x: Double) -> Double { 1 / (1 + exp(-x)) }
        var h2 = [Double](repeating: 0, count: H), c2 = h2
        for j in 0..<H {
            let f = sig(a[j]), i = sig(a[H + j]), o = sig(a[2 * H + j]), g = tanh(a[3 * H + j])
            c2[j] = f * c[j] + i * g
            h2[j] = o * tanh(c2[j])
        }
        return (h2, c2)
    }

    /// Logits y = [h, 1]·Wy.
    func logits(_ h: [Double]) -> [Double] {
        (0..<V).map { j in (0..<H).reduce(wy(H, j)) { $0 + h[$1] * wy($1, j) } }
    }

    /// NLL(note) + NLL(tick) of the next event, and whether the argmaxes hit.
    func nll(_ y: [Double], note: Int, tick: Int) -> (loss: Double, okNote: Bool, okTick: Bool) {
        func lse(_ v: ArraySlice<Double>) -> Double {
            let m = v.max() ?? 0
            return m + log(v.reduce(0) { $0 + exp($1 - m) })
        }
        let yn = y[0..<N], yt = y[N...]
        let argN = yn.indices.max { yn[$0] < yn[$1] } ?? 0
        let argT = (yt.indices.max { yt[$0] < yt[$1] } ?? N) - N
        return (lse(yn) - y[note] + lse(yt) - y[N + tick], argN == note, argT == tick)
    }

    /// Loss of one chunk: mean over U steps and B streams of note CE + tick CE.
    func chunkLoss(events: [Int32], unroll U: Int, batch B: Int, pointer p: Int, h0: [Float], c0: [Float]) -> Double {
        let L = events.count / 2 / B
        var total = 0.0
        for b in 0..<B {
            var h = (0..<H).map { Double(h0[b * H + $0]) }
            var c = (0..<H).map { Double(c0[b * H + $0]) }
            for t in 0..<U {
                let e = b * L + p + t
                (h, c) = cell(note: Int(events[2 * e]), tick: Int(events[2 * e + 1]), h: h, c: c)
                total += nll(logits(h), note: Int(events[2 * e + 2]), tick: Int(events[2 * e + 3])).loss
            }
        }
        return total / Double(U * B)
    }
}

/// Small random problems for the tests.
enum Problem {
    static func events(count: Int, shape: ModelShape, rng: inout SeededRNG) -> [Int32] {
        var e: [Int32] = []
        for _ in 0..<count {
            e.append(Int32(rng.index(below: shape.notes)))
            e.append(Int32(rng.index(below: shape.ticks)))
        }
        return e
    }

    static func uniform(_ n: Int, _ r: Double, rng: inout SeededRNG) -> [Float] {
        (0..<n).map { _ in Float(rng.uniform(-r, r)) }
    }

    /// A training state with weights of scale `scale` and a non-zero carried state.
    static func state(shape: ModelShape, unroll: Int, batch: Int, kind: OptimizerKind = .sgd,
                      scale: Double = 0.5, rng: inout SeededRNG) throws -> TrainingState {
        let w = try LSTMWeights(shape: shape, wx: uniform(shape.wxCount, scale, rng: &rng),
                                wy: uniform(shape.wyCount, scale, rng: &rng))
        var s = TrainingState(weights: w, unroll: unroll, batch: batch, optimizer: kind)
        s.h = uniform(batch * shape.hidden, 0.5, rng: &rng)
        s.c = uniform(batch * shape.hidden, 1.0, rng: &rng)
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

