// A plain double-precision forward of the model (loss only), written apart from
// the trainer, for finite-difference gradient checks and evaluation checks. It uses
// no code of the product: every row and column index of Wx and Wy is computed here from
// the group sizes and H (Wx rows [group 0 | group 1 | … | W_rec | bias], Wy rows
// [W_out | bias], columns [output group 0 | output group 1 | …]; the original layout's
// groups are notes and ticks).
//
// Its own target, built optimized even in a debug build (Package.swift): the finite-difference
// checks run it twice per parameter, which took minutes unoptimized.
import Foundation

public struct DoubleModel {
    /// One-hot input group sizes in Wx row order (note, tick, then any others), output group
    /// sizes in Wy column order, and for each output group the input column of the next event
    /// that holds its target. The original layout: [N, K], [N, K], [0, 1].
    public let inputs: [Int]
    public let outputs: [Int]
    public let targetColumns: [Int]
    public let H: Int
    /// Stacked layers: layer 0 reads the one-hot inputs, layer k the h of layer k − 1.
    public let layers: Int
    /// Every layer's Wx, then Wy, as the trainer's parameter buffer.
    public var params: [Double]

    public init(inputs: [Int], outputs: [Int], targetColumns: [Int], hidden: Int, layers: Int = 1, params: [Double]) {
        self.inputs = inputs
        self.outputs = outputs
        self.targetColumns = targetColumns
        H = hidden
        self.layers = layers
        self.params = params
    }

    public var N: Int { inputs[0] }
    public var G: Int { 4 * H }
    /// The one-hot input rows of Wx.
    public var V: Int { inputs.reduce(0, +) }
    /// The columns of Wy.
    public var Y: Int { outputs.reduce(0, +) }
    /// Floats in layer 0's Wx: (V + H + 1) rows of G.
    public var wxCount: Int { (V + H + 1) * G }
    public var columns: Int { inputs.count }
    /// First float of layer k's Wx: layer 0's, then (2H + 1) rows of G per layer above.
    public func wxOffset(layer k: Int) -> Int { k == 0 ? 0 : wxCount + (k - 1) * (2 * H + 1) * G }
    /// First float of Wy, after every layer's Wx.
    public var wyOffset: Int { wxOffset(layer: layers) }
    /// All parameters.
    public var count: Int { wyOffset + (H + 1) * Y }

    public func wx(_ row: Int, _ col: Int) -> Double { params[row * G + col] }
    /// Layer k's Wx (k ≥ 1): rows [input (the h below) H | W_rec H | bias].
    public func wx(layer k: Int, _ row: Int, _ col: Int) -> Double { params[wxOffset(layer: k) + row * G + col] }
    public func wy(_ row: Int, _ col: Int) -> Double { params[wyOffset + row * Y + col] }

    /// One step of layer k ≥ 1 from (h, c) with input x (the h of layer k − 1 at this step).
    public func cell(layer k: Int, x: [Double], h: [Double], c: [Double]) -> ([Double], [Double]) {
        var a = [Double](repeating: 0, count: G)
        for j in 0..<G {
            var s = wx(layer: k, 2 * H, j)
            for i in 0..<H { s += x[i] * wx(layer: k, i, j) + h[i] * wx(layer: k, H + i, j) }
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

    /// One step of the whole stack: (h, c) of every layer, updated; returns the top layer's h.
    /// `drop(k, j)`: the factor of unit j of layer k − 1's h entering layer k (dropout; 1 without).
    public func step(classes x: [Int], state: inout [(h: [Double], c: [Double])], drop: ((Int, Int) -> Double)? = nil) -> [Double] {
        state[0] = cell(classes: x, h: state[0].h, c: state[0].c)
        for k in 1..<max(1, layers) {
            let below = state[k - 1].h
            let x = drop.map { d in below.indices.map { below[$0] * d(k, $0) } } ?? below
            state[k] = cell(layer: k, x: x, h: state[k].h, c: state[k].c)
        }
        return state[layers - 1].h
    }

    /// One LSTM step from (h, c) with input classes `x` (one per input group); returns the new (h, c).
    public func cell(classes x: [Int], h: [Double], c: [Double]) -> ([Double], [Double]) {
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
    public func cell(note: Int, tick: Int, h: [Double], c: [Double]) -> ([Double], [Double]) {
        cell(classes: [note, tick], h: h, c: c)
    }

    /// Logits y = [h, 1]·Wy.
    public func logits(_ h: [Double]) -> [Double] {
        (0..<Y).map { j in (0..<H).reduce(wy(H, j)) { $0 + h[$1] * wy($1, j) } }
    }

    /// Per output group: NLL of its target class and whether the argmax hits it (0 and false
    /// where the target is the group's size: not predicted).
    public func groupNLL(_ y: [Double], targets: [Int]) -> [(loss: Double, ok: Bool)] {
        var out: [(Double, Bool)] = []
        var first = 0
        for (g, n) in outputs.enumerated() {
            // A target equal to the group's size is "nothing to predict": no loss term.
            if targets[g] >= n {
                out.append((0, false))
                first += n
                continue
            }
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
    public func nll(_ y: [Double], note: Int, tick: Int) -> (loss: Double, okNote: Bool, okTick: Bool) {
        let r = groupNLL(y, targets: [note, tick])
        return (r[0].loss + r[1].loss, r[0].ok, r[1].ok)
    }

    /// Loss of one chunk: mean over U steps and B streams of the sum of the output groups' CE.
    /// `events`: the class matrix, `columns` per event; h0, c0: every layer's carried state,
    /// layer-major (layer l's stream b at (l·B + b)·H).
    /// `drop(layer, event, unit)`: the dropout factor of that unit entering that layer (1 without;
    /// layer `layers` is the output layer).
    /// `fileStarts[e]`: the state before event e is zero (a file's first row).
    public func chunkLoss(events: [Int32], unroll U: Int, batch B: Int, pointer p: Int, h0: [Float], c0: [Float],
                   drop: ((Int, Int, Int) -> Double)? = nil, fileStarts: [Bool]? = nil) -> Double {
        let k = columns
        let L = events.count / k / B
        var total = 0.0
        for b in 0..<B {
            var state = (0..<layers).map { l in
                (h: (0..<H).map { Double(h0[(l * B + b) * H + $0]) }, c: (0..<H).map { Double(c0[(l * B + b) * H + $0]) })
            }
            for t in 0..<U {
                let e = b * L + p + t
                if fileStarts?[e] == true {
                    state = (0..<layers).map { _ in (h: [Double](repeating: 0, count: H), c: [Double](repeating: 0, count: H)) }
                }
                let h = step(classes: (0..<k).map { Int(events[e * k + $0]) }, state: &state,
                             drop: drop.map { d in { layer, unit in d(layer, e, unit) } })
                // The output layer's input: h, masked as a layer above the top one (output dropout).
                let hOut = drop.map { d in h.indices.map { h[$0] * d(layers, e, $0) } } ?? h
                let targets = targetColumns.map { Int(events[(e + 1) * k + $0]) }
                total += groupNLL(logits(hOut), targets: targets).reduce(0) { $0 + $1.loss }
            }
        }
        return total / Double(U * B)
    }
}
