// The weight layout shared by the trainer, the checkpoint, the exporter and the
// sampler. Letters used throughout the project:
//   N = notes in the vocabulary, K = tick values, H = hidden size, G = 4H;
//   I = input width (the one-hot input groups side by side), O = output width
//   (the softmax output groups side by side). The original 2017 model has input
//   groups (note N, tick K) and output groups (note N, tick K): I = O = V = N + K.
//
//   z_t   = [x_t (I: one one-hot per input group), h_{t-1} (H), 1]   (I+H+1)
//   gates = z_t · Wx        Wx: (I+H+1) × G, column blocks f, i, o, g
//   c_t   = σ(f) ⊙ c_{t-1} + σ(i) ⊙ tanh(g)
//   h_t   = σ(o) ⊙ tanh(c_t)
//   y_t   = [h_t, 1] · Wy   Wy: (H+1) × O, one softmax per output group
//
// The bias is the last row of each matrix. Matrices are row-major float32. Rows of
// Wx: the input groups in order, then the recurrent block W_rec (H rows), then the
// bias; columns of Wy: the output groups in order.

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

    /// The original 2017 layout: inputs and outputs (note, tick).
    public init(notes: Int, ticks: Int, hidden: Int) {
        self.init(inputGroups: [notes, ticks], outputGroups: [notes, ticks], hidden: hidden)
    }

    public init(inputGroups: [Int], outputGroups: [Int], hidden: Int) {
        precondition(inputGroups.count >= 2 && outputGroups.count >= 2, "a model has note and tick groups")
        self.inputGroups = inputGroups
        self.outputGroups = outputGroups
        self.hidden = hidden
    }

    /// N: notes in the vocabulary.
    public var notes: Int { inputGroups[0] }
    /// K: tick values in the vocabulary.
    public var ticks: Int { inputGroups[1] }
    /// True for the original layout: inputs and outputs are exactly (note, tick).
    public var isOriginalLayout: Bool { inputGroups.count == 2 && outputGroups.count == 2 }
    /// I: rows of Wx's input block (the sum of the input group sizes).
    public var inputWidth: Int { Self.sum(inputGroups, count: inputGroups.count) }
    /// O: columns of Wy (the sum of the output group sizes).
    public var outputWidth: Int { Self.sum(outputGroups, count: outputGroups.count) }

    /// Rows of Wx: I + H + 1 (input block, recurrent block, bias row).
    public var wxRows: Int { inputWidth + hidden + 1 }
    /// Columns of Wx: 4H (gate blocks f, i, o, g).
    public var wxCols: Int { 4 * hidden }
    /// Rows of Wy: H + 1 (hidden, bias row).
    public var wyRows: Int { hidden + 1 }
    /// Columns of Wy: O (the output groups' logits).
    public var wyCols: Int { outputWidth }
    public var wxCount: Int { wxRows * wxCols }
    public var wyCount: Int { wyRows * wyCols }

    /// First row of input group `g` in Wx.
    public func inputOffset(_ g: Int) -> Int { Self.sum(inputGroups, count: g) }
    /// First column of output group `g` in Wy.
    public func outputOffset(_ g: Int) -> Int { Self.sum(outputGroups, count: g) }

    /// The sum of the first `count` sizes (a plain loop: no closure, nothing allocated).
    @inline(__always) static func sum(_ sizes: [Int], count: Int) -> Int {
        var total = 0
        for i in 0..<count { total += sizes[i] }
        return total
    }
    /// First row of the recurrent block of Wx.
    public var recurrentRow: Int { inputWidth }
    /// Bias row of Wx.
    public var wxBiasRow: Int { inputWidth + hidden }

    /// Gate order of Wx's column blocks.
    public static let gateOrder = ["f", "i", "o", "g"]

    public var isValid: Bool {
        hidden > 0 && inputGroups.allSatisfy { $0 > 0 } && outputGroups.allSatisfy { $0 > 0 }
    }
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

/// The two fused matrices of a model, validated against its shape.
public struct LSTMWeights: Equatable, Sendable {
    public let shape: ModelShape
    public var wx: [Float]
    public var wy: [Float]

    public init(shape: ModelShape, wx: [Float], wy: [Float]) throws {
        guard shape.isValid else { throw WeightsError.badShape(shape) }
        guard wx.count == shape.wxCount else {
            throw WeightsError.wrongCount(matrix: "Wx", expected: shape.wxCount, found: wx.count)
        }
        guard wy.count == shape.wyCount else {
            throw WeightsError.wrongCount(matrix: "Wy", expected: shape.wyCount, found: wy.count)
        }
        self.shape = shape
        self.wx = wx
        self.wy = wy
    }

    /// Throws when any weight is NaN or infinite, naming the first one.
    public func checkFinite() throws {
        if let i = wx.firstIndex(where: { !$0.isFinite }) {
            throw WeightsError.notFinite(
                matrix: "Wx", row: i / shape.wxCols, col: i % shape.wxCols, value: wx[i])
        }
        if let i = wy.firstIndex(where: { !$0.isFinite }) {
            throw WeightsError.notFinite(
                matrix: "Wy", row: i / shape.wyCols, col: i % shape.wyCols, value: wy[i])
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
            return "invalid model shape: \(s.notes) notes, \(s.ticks) ticks, hidden size \(s.hidden)"
        case .wrongCount(let m, let e, let f):
            return "\(m) holds \(f) values, expected \(e)"
        case .notFinite(let m, let r, let c, let v):
            return "\(m)[\(r), \(c)] is \(v): weights must be finite"
        }
    }
}
