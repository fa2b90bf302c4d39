// Weight initialisation: the original's truncated normal and Keras' LSTM defaults.
// Draw order (part of the seed contract): each layer's Wx row-major (layer 0 first),
// then Wy row-major; for keras, per layer, the input block, then the recurrent block (one
// H×4H orthogonal matrix); then Wy.

import DrummerCore

public enum Initializer {
    public static func weights(
        shape: ModelShape, scheme: InitScheme, rng: inout SeededRNG
    ) throws -> LSTMWeights {
        guard shape.isValid else { throw WeightsError.badShape(shape) }
        let layout = shape.parameters
        switch scheme {
        case .original:
            let wx = layout.layers.map { l in (0..<l.wx.count).map { _ in Float(rng.truncatedNormal(stddev: 0.01)) } }
            let wy = (0..<shape.wyCount).map { _ in Float(rng.truncatedNormal(stddev: 0.01)) }
            return try LSTMWeights(shape: shape, layerWx: wx, wy: wy)
        case .keras:
            let O = shape.outputWidth, H = shape.hidden, G = shape.wxCols
            var layers: [[Float]] = []
            for l in layout.layers {
                // Matrix-relative views of this layer's Wx.
                let inputs = l.wx.local(l.inputRows), recurrent = l.wx.local(l.recurrentRows)
                let bias = l.wx.local(l.biasRow..<(l.biasRow + 1))
                var wx = [Float](repeating: 0, count: l.wx.count)
                let limitIn = (6.0 / Double(l.inputRows.count + G)).squareRoot()
                for k in inputs { wx[k] = Float(rng.uniform(-limitIn, limitIn)) }
                let rec = try Orthogonal.matrix(rows: H, cols: G, rng: &rng)
                for k in 0..<(H * G) { wx[recurrent.lowerBound + k] = rec.data[k] }
                // Bias row: zero, forget-gate block 1.
                for j in ParameterLayout.columns(of: .f, hidden: H) { wx[bias.lowerBound + j] = 1 }
                layers.append(wx)
            }
            var wy = [Float](repeating: 0, count: shape.wyCount)
            let limitOut = (6.0 / Double(H + O)).squareRoot()
            for k in layout.head.wy.local(0..<H) { wy[k] = Float(rng.uniform(-limitOut, limitOut)) }
            return try LSTMWeights(shape: shape, layerWx: layers, wy: wy)
        }
    }
}
