// A plain double-precision forward of the model (loss only), written apart from
// the trainer, for finite-difference gradient checks and evaluation checks. It uses
// no layout helper of the production code: every row and column index of Wx and Wy
// is computed here from the group sizes and H (Wx rows [group 0 | group 1 | … | W_rec | bias],
// Wy rows [W_out | bias], columns [output group 0 | output group 1 | …]; the original
// layout's groups are notes and ticks).
import DrummerCore
import Checkpoints
import Train
import Foundation
import XCTest

struct DoubleModel {
    /// One-hot input group sizes in Wx row order (note, tick, then any others), output group
    /// sizes in Wy column order, and for each output group the input column of the next event
    /// that holds its target. The original layout: [N, K], [N, K], [0, 1].
    let inputs: [Int]
    let outputs: [Int]
    let targetColumns: [Int]
    let H: Int
    /// Wx then Wy, as the trainer's parameter buffer.
    var params: [Double]

    init(inputs: [Int], outputs: [Int], targetColumns: [Int], hidden: Int, params: [Double]) {
        self.inputs = inputs
        self.outputs = outputs
        self.targetColumns = targetColumns
        H = hidden
        self.params = params
    }

    /// The original layout (note, tick in and out) of `shape`.
    init(shape: ModelShape, params: [Double]) {
        self.init(inputs: [shape.notes, shape.ticks], outputs: [shape.notes, shape.ticks], targetColumns: [0, 1],
                  hidden: shape.hidden, params: params)
    }

    var N: Int { inputs[0] }
    var G: Int { 4 * H }
    /// The one-hot input rows of Wx.
    var V: Int { inputs.reduce(0, +) }
    /// The columns of Wy.
    var Y: Int { outputs.reduce(0, +) }
    /// Floats in Wx: (V + H + 1) rows of G.
    var wxCount: Int { (V + H + 1) * G }
    var columns: Int { inputs.count }

    func wx(_ row: Int, _ col: Int) -> Double { params[row * G + col] }
    func wy(_ row: Int, _ col: Int) -> Double { params[wxCount + row * Y + col] }

    /// One LSTM step from (h, c) with input classes `x` (one per input group); returns the new (h, c).
    func cell(classes x: [Int], h: [Double], c: [Double]) -> ([Double], [Double]) {
        // Row of each group's first class: groups are stacked in order.
        var firstRow = [Int](), r = 0
        for n in inputs { firstRow.append(r); r += n }
        var a = [Double](repeating: 0, count: G)
        for j in 0..<G {
            // x·Wx: one row per input group, then h·W_rec and the bias.
            var s = wx(V + H, j)
            for (g, cls) in x.enumerated() { s += wx(firstRow[g] + cls, j) }
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

    /// The original layout's step with input event (note, tick).
    func cell(note: Int, tick: Int, h: [Double], c: [Double]) -> ([Double], [Double]) {
        cell(classes: [note, tick], h: h, c: c)
    }

    /// Logits y = [h, 1]·Wy.
    func logits(_ h: [Double]) -> [Double] {
        (0..<Y).map { j in (0..<H).reduce(wy(H, j)) { $0 + h[$1] * wy($1, j) } }
    }

    /// Per output group: NLL of its target class and whether the argmax hits it.
    func groupNLL(_ y: [Double], targets: [Int]) -> [(loss: Double, ok: Bool)] {
        var out: [(Double, Bool)] = []
        var first = 0
        for (g, n) in outputs.enumerated() {
            let v = y[first..<(first + n)]
            let m = v.max() ?? 0
            let lse = m + log(v.reduce(0) { $0 + exp($1 - m) })
            let arg = (v.indices.max { v[$0] < v[$1] } ?? first) - first
            out.append((lse - y[first + targets[g]], arg == targets[g]))
            first += n
        }
        return out
    }

    /// NLL(note) + NLL(tick) of the next event, and whether the argmaxes hit (original layout).
    func nll(_ y: [Double], note: Int, tick: Int) -> (loss: Double, okNote: Bool, okTick: Bool) {
        let r = groupNLL(y, targets: [note, tick])
        return (r[0].loss + r[1].loss, r[0].ok, r[1].ok)
    }

    /// Loss of one chunk: mean over U steps and B streams of the sum of the output groups' CE.
    /// `events`: the class matrix, `columns` per event.
    func chunkLoss(events: [Int32], unroll U: Int, batch B: Int, pointer p: Int, h0: [Float], c0: [Float]) -> Double {
        let k = columns
        let L = events.count / k / B
        var total = 0.0
        for b in 0..<B {
            var h = (0..<H).map { Double(h0[b * H + $0]) }
            var c = (0..<H).map { Double(c0[b * H + $0]) }
            for t in 0..<U {
                let e = b * L + p + t
                (h, c) = cell(classes: (0..<k).map { Int(events[e * k + $0]) }, h: h, c: c)
                let targets = targetColumns.map { Int(events[(e + 1) * k + $0]) }
                total += groupNLL(logits(h), targets: targets).reduce(0) { $0 + $1.loss }
            }
        }
        return total / Double(U * B)
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

