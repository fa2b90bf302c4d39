// Weight initialisation: the original's truncated normal and Keras' LSTM defaults.
// Draw order (part of the seed contract): Wx row-major, then Wy row-major; for
// keras the input block, then the recurrent block (one H×4H orthogonal matrix),
// then Wy.
import Checkpoints
import DrummerCore

public enum Initializer {
    public static func weights(
        shape: ModelShape, scheme: InitScheme, rng: inout SeededRNG
    ) throws -> LSTMWeights {
        guard shape.isValid else { throw WeightsError.badShape(shape) }
        switch scheme {
        case .original:
            let wx = (0..<shape.wxCount).map { _ in Float(rng.truncatedNormal(stddev: 0.01)) }
            let wy = (0..<shape.wyCount).map { _ in Float(rng.truncatedNormal(stddev: 0.01)) }
            return try LSTMWeights(shape: shape, wx: wx, wy: wy)
        case .keras:
            let I = shape.inputWidth, O = shape.outputWidth, H = shape.hidden, G = shape.wxCols
            var wx = [Float](repeating: 0, count: shape.wxCount)
            let limitIn = (6.0 / Double(I + G)).squareRoot()
            for k in 0..<(I * G) { wx[k] = Float(rng.uniform(-limitIn, limitIn)) }
            let rec = try Orthogonal.matrix(rows: H, cols: G, rng: &rng)
            for k in 0..<(H * G) { wx[shape.recurrentRow * G + k] = rec.data[k] }
            // Bias row: zero, forget-gate block (columns 0..<H) 1.
            for j in 0..<H { wx[shape.wxBiasRow * G + j] = 1 }
            var wy = [Float](repeating: 0, count: shape.wyCount)
            let limitOut = (6.0 / Double(H + O)).squareRoot()
            for k in 0..<(H * O) { wy[k] = Float(rng.uniform(-limitOut, limitOut)) }
            return try LSTMWeights(shape: shape, wx: wx, wy: wy)
        }
    }
}
