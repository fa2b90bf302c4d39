// The weight layout shared by the trainer, the checkpoint, the exporter and the
// sampler. Letters used throughout the project:
//   N = notes in the vocabulary, K = tick values, H = hidden size, G = 4H, L = layers;
//   I = input width (the one-hot input groups side by side), O = output width
//   (the softmax output groups side by side). The original 2017 model has input
//   groups (note N, tick K), output groups (note N, tick K) and one layer: I = O = V = N + K.
//
//   layer 0:  z_t   = [x_t (I: one one-hot per input group), h⁰_{t-1} (H), 1]      (I+H+1)
//   layer k:  z_t   = [h^{k-1}_t (H), h^k_{t-1} (H), 1]                             (2H+1)
//             gates = z_t · Wx_k    Wx_k: rows(z) × G, column blocks f, i, o, g
//             c_t   = σ(f) ⊙ c_{t-1} + σ(i) ⊙ tanh(g)
//             h_t   = σ(o) ⊙ tanh(c_t)
//   head:     y_t   = [h^{L-1}_t, 1] · Wy   Wy: (H+1) × O, one softmax per output group
//
// The bias is the last row of each matrix. Matrices are row-major float32. Rows of
// Wx_0: the input groups in order, then the recurrent block W_rec (H rows), then the
// bias; rows of Wx_k (k ≥ 1): the input block (H rows, multiplying the layer below's h),
// W_rec (H rows), the bias; columns of Wy: the output groups in order.
//
// The parameters are one flat buffer: Wx_0, Wx_1, …, Wx_{L-1}, Wy. `ParameterLayout` is
// the one place that knows where each matrix, row block and column block lies in it
// (llm.c's ParameterTensors): everything else asks it for a named view.

/// Sizes of a model; everything else about the layout follows from them. The input groups
/// are, in Wx row order, note, tick, then (when the model has them) the position-in-bar
/// group(s) and the velocity group; the output groups, in Wy column order, note, tick, then
/// velocity. `ModelGroups` says what each group means.
public struct ModelShape: Equatable, Hashable, Sendable {
    /// Sizes of the one-hot input groups, in Wx row order (note, tick first).
    public let inputGroups: [Int]
    /// Sizes of the softmax output groups, in Wy column order (note, tick first).
    public let outputGroups: [Int]
    public let hidden: Int
    /// L: stacked LSTM layers (1 for the original model).
    public let layers: Int
    /// For each output group, the input group (column of the class matrix) holding its target
    /// in the next row. Default: note and tick are inputs 0 and 1, the other outputs the last
    /// inputs; the grid layout names its own.
    public let targetColumns: [Int]
    /// The leading output groups whose cross-entropies make the loss a run reports, early-stops
    /// and chooses checkpoints on: note and tick (2) for the 2017 layout, whose velocity
    /// output is reported beside it; every group for the grid layout.
    public let lossGroups: Int

    /// The original 2017 layout: inputs and outputs (note, tick).
    public init(notes: Int, ticks: Int, hidden: Int, layers: Int = 1) {
        self.init(inputGroups: [notes, ticks], outputGroups: [notes, ticks], hidden: hidden, layers: layers)
    }

    public init(inputGroups: [Int], outputGroups: [Int], hidden: Int, layers: Int = 1, targetColumns: [Int]? = nil,
                lossGroups: Int? = nil) {
        precondition(inputGroups.count >= 2 && outputGroups.count >= 2, "a model has at least two input and output groups")
        self.inputGroups = inputGroups
        self.outputGroups = outputGroups
        self.hidden = hidden
        self.layers = layers
        let k = inputGroups.count, m = outputGroups.count
        self.targetColumns = targetColumns ?? (0..<m).map { g in g < 2 ? g : k - (m - g) }
        self.lossGroups = lossGroups ?? 2
        precondition((1...m).contains(self.lossGroups), "the loss has 1 to \(m) output groups")
        precondition(self.targetColumns.count == m && self.targetColumns.allSatisfy { (0..<k).contains($0) },
                     "every output group's target is an input column")
    }

    /// The same groups with another hidden size or number of layers.
    public func with(hidden: Int? = nil, layers: Int? = nil) -> ModelShape {
        ModelShape(inputGroups: inputGroups, outputGroups: outputGroups, hidden: hidden ?? self.hidden,
                   layers: layers ?? self.layers, targetColumns: targetColumns, lossGroups: lossGroups)
    }

    /// N: notes in the vocabulary.
    public var notes: Int { inputGroups[0] }
    /// K: tick values in the vocabulary.
    public var ticks: Int { inputGroups[1] }
    /// True for the original layout: inputs and outputs are exactly (note, tick), one layer.
    public var isOriginalLayout: Bool { inputGroups.count == 2 && outputGroups.count == 2 && layers == 1 }
    /// I: rows of Wx's input block (the sum of the input group sizes).
    public var inputWidth: Int { Self.sum(inputGroups, count: inputGroups.count) }
    /// O: columns of Wy (the sum of the output group sizes).
    public var outputWidth: Int { Self.sum(outputGroups, count: outputGroups.count) }

    /// Rows of layer 0's Wx: I + H + 1 (input block, recurrent block, bias row).
    public var wxRows: Int { wxRows(layer: 0) }
    /// Rows of layer k's Wx: its input block (I for layer 0, the H of the layer below after),
    /// the recurrent block (H) and the bias row.
    public func wxRows(layer k: Int) -> Int { (k == 0 ? inputWidth : hidden) + hidden + 1 }
    /// Columns of every layer's Wx: 4H (gate blocks f, i, o, g).
    public var wxCols: Int { 4 * hidden }
    /// Rows of Wy: H + 1 (hidden, bias row).
    public var wyRows: Int { hidden + 1 }
    /// Columns of Wy: O (the output groups' logits).
    public var wyCols: Int { outputWidth }
    /// Floats in layer 0's Wx.
    public var wxCount: Int { wxRows * wxCols }
    /// Floats in layer k's Wx.
    public func wxCount(layer k: Int) -> Int { wxRows(layer: k) * wxCols }
    public var wyCount: Int { wyRows * wyCols }
    /// P: floats in the flat parameter buffer (every layer's Wx, then Wy).
    public var parameterCount: Int {
        var total = wyCount
        for k in 0..<layers { total += wxCount(layer: k) }
        return total
    }

    /// Where every named matrix and block lies in the flat parameter buffer.
    public var parameters: ParameterLayout { ParameterLayout(self) }

    /// First row of input group `g` in layer 0's Wx (the layout's own arithmetic).
    func inputOffset(_ g: Int) -> Int { Self.sum(inputGroups, count: g) }
    /// First column of output group `g` in Wy.
    func outputOffset(_ g: Int) -> Int { Self.sum(outputGroups, count: g) }

    /// The sum of the first `count` sizes (a plain loop: no closure, nothing allocated).
    @inline(__always) static func sum(_ sizes: [Int], count: Int) -> Int {
        var total = 0
        for i in 0..<count { total += sizes[i] }
        return total
    }
    /// Gate order of Wx's column blocks.
    public static let gateOrder = ["f", "i", "o", "g"]

    package var isValid: Bool {
        hidden > 0 && layers >= 1 && layers <= ModelLimits.maximumLayers && inputGroups.allSatisfy { $0 > 0 }
            && outputGroups.allSatisfy { $0 > 0 }
    }
}

/// Where each named parameter lies in a model's flat parameter buffer (Wx_0, …, Wx_{L-1}, Wy):
/// one value computed once from the shape, with a view per matrix, row block and column
/// block. Nothing outside this type computes an offset into the parameters.
public struct ParameterLayout: Equatable, Sendable {
    /// A row-major matrix inside the flat buffer.
    public struct Matrix: Equatable, Sendable {
        /// Its name in checkpoints and model directories ("Wx", "Wx1", …, "Wy").
        public let name: String
        /// First float in the flat buffer.
        public let offset: Int
        public let rows: Int, cols: Int
        public var count: Int { rows * cols }
        /// Its floats in the flat buffer.
        public var range: Range<Int> { offset..<(offset + count) }
        /// The floats of rows `r` in the flat buffer.
        public func rows(_ r: Range<Int>) -> Range<Int> { (offset + r.lowerBound * cols)..<(offset + r.upperBound * cols) }
        /// The floats of row `r` in the flat buffer.
        public func row(_ r: Int) -> Range<Int> { rows(r..<(r + 1)) }
        /// Matrix-relative: the floats of rows `r` counted from the matrix's first float.
        public func local(_ r: Range<Int>) -> Range<Int> { (r.lowerBound * cols)..<(r.upperBound * cols) }
    }

    /// One LSTM layer: its fused Wx and the row blocks inside it.
    public struct Layer: Equatable, Sendable {
        /// k: 0 reads the one-hot input groups, k ≥ 1 the h of layer k − 1.
        public let index: Int
        /// (inputs + H + 1) × 4H.
        public let wx: Matrix
        /// Rows of Wx fed by each input group: layer 0 one block per one-hot group (the class c
        /// of group g selects row inputGroupRows[g].lowerBound + c); layer k ≥ 1 one block of H
        /// rows, multiplied by the layer below's h.
        public let inputGroupRows: [Range<Int>]
        /// All input rows, the recurrent block W_rec (H rows) and the bias row, in Wx.
        public let inputRows: Range<Int>
        public let recurrentRows: Range<Int>
        public let biasRow: Int
        /// True when the input rows are one-hot groups (layer 0), false for a dense h input.
        public var oneHotInputs: Bool { index == 0 }
        /// Floats of the input block, W_rec and the bias row in the flat buffer.
        package var inputBlock: Range<Int> { wx.rows(inputRows) }
        public var recurrent: Range<Int> { wx.rows(recurrentRows) }
        public var bias: Range<Int> { wx.row(biasRow) }
    }

    /// The output layer: Wy and its column block per output group.
    public struct Head: Equatable, Sendable {
        /// (H + 1) × O.
        public let wy: Matrix
        /// Columns of Wy of each output group (its logits).
        public let outputColumns: [Range<Int>]
        /// Floats of W_out (the H weight rows) and of the bias row in the flat buffer.
        public var weights: Range<Int> { wy.rows(0..<(wy.rows - 1)) }
        public var bias: Range<Int> { wy.row(wy.rows - 1) }
    }

    public let layers: [Layer]
    public let head: Head
    /// P: floats in the buffer.
    public let count: Int

    /// Gate blocks of Wx's columns, in order.
    public enum Gate: Int, CaseIterable, Sendable { case f, i, o, g }

    /// Columns of gate `gate` in every layer's Wx (H columns each).
    public static func columns(of gate: Gate, hidden: Int) -> Range<Int> {
        (gate.rawValue * hidden)..<((gate.rawValue + 1) * hidden)
    }

    /// The name of layer k's Wx: "Wx" for layer 0 (the original's), "Wx1", "Wx2", … above it.
    package static func wxName(layer k: Int) -> String { k == 0 ? "Wx" : "Wx\(k)" }
    static let wyName = "Wy"

    public init(_ shape: ModelShape) {
        let H = shape.hidden, G = shape.wxCols
        var offset = 0
        var layers: [Layer] = []
        for k in 0..<shape.layers {
            let rows = shape.wxRows(layer: k)
            let inputs = k == 0 ? shape.inputWidth : H
            let groupRows = k == 0
                ? shape.inputGroups.indices.map { g in shape.inputOffset(g)..<(shape.inputOffset(g) + shape.inputGroups[g]) }
                : [0..<H]
            layers.append(Layer(index: k, wx: Matrix(name: Self.wxName(layer: k), offset: offset, rows: rows, cols: G),
                                inputGroupRows: groupRows, inputRows: 0..<inputs, recurrentRows: inputs..<(inputs + H),
                                biasRow: inputs + H))
            offset += rows * G
        }
        let O = shape.outputWidth
        let wy = Matrix(name: Self.wyName, offset: offset, rows: H + 1, cols: O)
        head = Head(wy: wy, outputColumns: shape.outputGroups.indices.map { g in
            shape.outputOffset(g)..<(shape.outputOffset(g) + shape.outputGroups[g])
        })
        self.layers = layers
        count = offset + wy.count
    }

    /// Every matrix in buffer order (Wx, Wx1, …, Wy).
    public var matrices: [Matrix] { layers.map(\.wx) + [head.wy] }
}

/// Lookup tables from class index to MIDI note number and to tick value.
public struct Vocabulary: Equatable, Sendable, Codable {
    public let ixToNote: [Int]
    public let ixToTick: [Int]

    enum CodingKeys: String, CodingKey {
        case ixToNote = "ix_to_note"
        case ixToTick = "ix_to_tick"
    }

    public init(ixToNote: [Int], ixToTick: [Int]) throws {
        self.ixToNote = ixToNote
        self.ixToTick = ixToTick
        try validate()
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        ixToNote = try c.decode([Int].self, forKey: .ixToNote)
        ixToTick = try c.decode([Int].self, forKey: .ixToTick)
        do { try validate() } catch let e as VocabularyError {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: e.description))
        }
    }

    private func validate() throws {
        guard !ixToNote.isEmpty else { throw VocabularyError("ix_to_note is empty") }
        guard !ixToTick.isEmpty else { throw VocabularyError("ix_to_tick is empty") }
        if let bad = ixToNote.first(where: { $0 < 0 || $0 > 127 }) {
            throw VocabularyError("ix_to_note holds \(bad), outside the MIDI note range 0...127")
        }
        if let bad = ixToTick.first(where: { $0 < 0 }) {
            throw VocabularyError("ix_to_tick holds a negative tick value \(bad)")
        }
        // A delta is at most a file's span, which MIDI reading bounds (FileHits.maximumTick).
        if let bad = ixToTick.first(where: { $0 > Int(Int32.max) }) {
            throw VocabularyError("ix_to_tick holds \(bad), more ticks than a file can span (\(Int32.max))")
        }
        if Set(ixToNote).count != ixToNote.count { throw VocabularyError("ix_to_note has duplicates") }
        if Set(ixToTick).count != ixToTick.count { throw VocabularyError("ix_to_tick has duplicates") }
    }

    public var notes: Int { ixToNote.count }
    public var ticks: Int { ixToTick.count }

    public func shape(hidden: Int) -> ModelShape { ModelShape(notes: notes, ticks: ticks, hidden: hidden) }

}

public struct VocabularyError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ d: String) { description = d }
}

/// A model's weights: the fused Wx of each layer and the head's Wy, validated against its shape.
public struct LSTMWeights: Equatable, Sendable {
    public let shape: ModelShape
    /// Wx of layer k (`shape.wxCount(layer: k)` floats, row-major), k = 0..<L.
    public var layerWx: [[Float]]
    public var wy: [Float]

    /// Layer 0's Wx (the whole input-side matrix of a one-layer model).
    public var wx: [Float] {
        get { layerWx[0] }
        set { layerWx[0] = newValue }
    }

    /// A one-layer model.
    public init(shape: ModelShape, wx: [Float], wy: [Float]) throws {
        try self.init(shape: shape, layerWx: [wx], wy: wy)
    }

    public init(shape: ModelShape, layerWx: [[Float]], wy: [Float]) throws {
        guard shape.isValid else { throw WeightsError.badShape(shape) }
        guard layerWx.count == shape.layers else {
            throw WeightsError.wrongCount(matrix: "the list of Wx matrices", expected: shape.layers, found: layerWx.count)
        }
        for (k, wx) in layerWx.enumerated() where wx.count != shape.wxCount(layer: k) {
            throw WeightsError.wrongCount(matrix: ParameterLayout.wxName(layer: k), expected: shape.wxCount(layer: k),
                                          found: wx.count)
        }
        guard wy.count == shape.wyCount else {
            throw WeightsError.wrongCount(matrix: "Wy", expected: shape.wyCount, found: wy.count)
        }
        self.shape = shape
        self.layerWx = layerWx
        self.wy = wy
    }

    /// From the flat parameter buffer (Wx_0, …, Wx_{L-1}, Wy; `shape.parameterCount` floats).
    public init(shape: ModelShape, parameters p: [Float]) throws {
        guard shape.isValid else { throw WeightsError.badShape(shape) }
        guard p.count == shape.parameterCount else {
            throw WeightsError.wrongCount(matrix: "the parameter buffer (every Wx, then Wy)", expected: shape.parameterCount,
                                          found: p.count)
        }
        let layout = shape.parameters
        try self.init(shape: shape, layerWx: layout.layers.map { Array(p[$0.wx.range]) }, wy: Array(p[layout.head.wy.range]))
    }

    /// The flat parameter buffer: every layer's Wx, then Wy.
    public var parameters: [Float] {
        var p = [Float]()
        p.reserveCapacity(shape.parameterCount)
        for wx in layerWx { p += wx }
        return p + wy
    }

    /// Each matrix with its name and values, in buffer order (Wx, Wx1, …, Wy).
    var namedMatrices: [(matrix: ParameterLayout.Matrix, values: [Float])] {
        let layout = shape.parameters
        return zip(layout.layers, layerWx).map { ($0.wx, $1) } + [(layout.head.wy, wy)]
    }

    /// Throws when any weight is NaN or infinite, naming the first one.
    public func checkFinite() throws {
        for (m, values) in namedMatrices {
            if let i = values.firstIndex(where: { !$0.isFinite }) {
                throw WeightsError.notFinite(matrix: m.name, row: i / m.cols, col: i % m.cols, value: values[i])
            }
        }
    }
}

public enum WeightsError: Error, CustomStringConvertible, Equatable {
    case badShape(ModelShape)
    case wrongCount(matrix: String, expected: Int, found: Int)
    case notFinite(matrix: String, row: Int, col: Int, value: Float)

    public var description: String {
        switch self {
        case .badShape(let s):
            return "invalid model shape: \(s.notes) notes, \(s.ticks) ticks, hidden size \(s.hidden), \(s.layers) layer(s)"
        case .wrongCount(let m, let e, let f):
            return "\(m) holds \(f) values, expected \(e)"
        case .notFinite(let m, let r, let c, let v):
            return "\(m)[\(r), \(c)] is \(v): weights must be finite"
        }
    }
}
