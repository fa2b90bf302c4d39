// The weight layout shared by the trainer, the checkpoint, the exporter and the
// sampler. Letters used throughout the project:
//   N = notes in the vocabulary, K = tick values, V = N + K, H = hidden size.
//
//   z_t   = [x_t (V: one-hot note | one-hot tick), h_{t-1} (H), 1]      (V+H+1)
//   gates = z_t · Wx        Wx: (V+H+1) × 4H, column blocks f, i, o, g
//   c_t   = σ(f) ⊙ c_{t-1} + σ(i) ⊙ tanh(g)
//   h_t   = σ(o) ⊙ tanh(c_t)
//   y_t   = [h_t, 1] · Wy   Wy: (H+1) × V; y[0..<N] note logits, y[N..<V] tick logits
//
// The bias is the last row of each matrix. Matrices are row-major float32.

/// Sizes of a model; everything else about the layout follows from them.
public struct ModelShape: Equatable, Hashable, Sendable, Codable {
    public let notes: Int
    public let ticks: Int
    public let hidden: Int

    public init(notes: Int, ticks: Int, hidden: Int) {
        self.notes = notes
        self.ticks = ticks
        self.hidden = hidden
    }

    /// V = notes + ticks.
    public var vocab: Int { notes + ticks }
    /// Rows of Wx: V + H + 1 (input block, recurrent block, bias row).
    public var wxRows: Int { vocab + hidden + 1 }
    /// Columns of Wx: 4H (gate blocks f, i, o, g).
    public var wxCols: Int { 4 * hidden }
    /// Rows of Wy: H + 1 (hidden, bias row).
    public var wyRows: Int { hidden + 1 }
    /// Columns of Wy: V (note logits, then tick logits).
    public var wyCols: Int { vocab }
    public var wxCount: Int { wxRows * wxCols }
    public var wyCount: Int { wyRows * wyCols }

    /// Row of Wx holding the input weights of note index `n`.
    @inline(__always) public func noteRow(_ n: Int) -> Int { n }
    /// Row of Wx holding the input weights of tick index `t`.
    @inline(__always) public func tickRow(_ t: Int) -> Int { notes + t }
    /// First row of the recurrent block of Wx.
    public var recurrentRow: Int { vocab }
    /// Bias row of Wx.
    public var wxBiasRow: Int { vocab + hidden }

    /// Gate order of Wx's column blocks.
    public static let gateOrder = ["f", "i", "o", "g"]

    public var isValid: Bool { notes > 0 && ticks > 0 && hidden > 0 }
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

    /// Index of a MIDI note number, or nil when it is not in the vocabulary.
    public func noteIndex(_ note: Int) -> Int? { ixToNote.firstIndex(of: note) }
    /// Index of a tick value, or nil when it is not in the vocabulary.
    public func tickIndex(_ tick: Int) -> Int? { ixToTick.firstIndex(of: tick) }
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
