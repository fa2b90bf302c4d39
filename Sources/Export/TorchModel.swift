// A drummer model as PyTorch holds it: an `nn.LSTM` named `lstm` (its layers' weight_ih_l{k},
// weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}) and an `nn.Linear` head named `head` (weight,
// bias), so `module.load_state_dict(safetensors.torch.load_file(path))` loads it into
//
//     class Drummer(nn.Module):
//         def __init__(self, inputs, hidden, layers, outputs):
//             super().__init__()
//             self.lstm = nn.LSTM(inputs, hidden, layers, batch_first=True)
//             self.head = nn.Linear(hidden, outputs)
//
// (python/drummer_torch.py). The input is the one-hot concatenation of the input groups (the
// rows of Wx's input block), the output the concatenated logits of the output groups.
//
// Mapping (H hidden, in_k = the inputs of layer k: the one-hot width for layer 0, H above):
//   PyTorch gate blocks are i, f, g, o (rows of weight_ih and weight_hh); Wx's column blocks
//   are f, i, o, g. Torch block t ∈ (i, f, g, o) is Wx block (1, 0, 3, 2)[t].
//   weight_ih_l{k}[t·H + j, r] = Wx_k[r, b(t)·H + j]            r < in_k        (4H × in_k)
//   weight_hh_l{k}[t·H + j, r] = Wx_k[in_k + r, b(t)·H + j]     r < H           (4H × H)
//   bias_ih_l{k}[t·H + j]      = Wx_k[in_k + H, b(t)·H + j],  bias_hh_l{k} = 0   (4H)
//   head.weight[o, j] = Wy[j, o],  head.bias[o] = Wy[H, o]                       (O × H, O)
// Reading sums the two bias vectors into the bias row (PyTorch trains both).
//
// The safetensors file's metadata holds "format": "drummer-model" and "model_json": the
// model.json a model directory of these weights holds (vocabulary, groups, sizes, training
// metadata, checksums), so import writes back the same directory byte for byte.
import DrummerCore
import Foundation
import ModelFiles

public enum TorchModel {
    /// Wx column block of each PyTorch gate block (i, f, g, o).
    static let wxBlock = [1, 0, 3, 2]

    /// The tensors' names, nn.LSTM's and the head's nn.Linear's, as python/train_torch.py's
    /// model holds them: layer k's input and hidden weights and their biases.
    static func layerTensors(_ k: Int) -> (weightIH: String, weightHH: String, biasIH: String, biasHH: String) {
        ("lstm.weight_ih_l\(k)", "lstm.weight_hh_l\(k)", "lstm.bias_ih_l\(k)", "lstm.bias_hh_l\(k)")
    }
    static let headWeight = "head.weight", headBias = "head.bias"

    /// The PyTorch tensors of `weights`.
    public static func tensors(_ weights: LSTMWeights) -> [String: Tensor] {
        let shape = weights.shape, H = shape.hidden, G = 4 * H
        var out: [String: Tensor] = [:]
        for k in 0..<shape.layers {
            let wx = weights.layerWx[k]
            let inputs = shape.wxRows(layer: k) - H - 1
            var ih = [Float](repeating: 0, count: G * inputs), hh = [Float](repeating: 0, count: G * H)
            var bias = [Float](repeating: 0, count: G)
            for t in 0..<4 {
                let c0 = wxBlock[t] * H
                for j in 0..<H {
                    let row = t * H + j, col = c0 + j
                    for r in 0..<inputs { ih[row * inputs + r] = wx[r * G + col] }
                    for r in 0..<H { hh[row * H + r] = wx[(inputs + r) * G + col] }
                    bias[row] = wx[(inputs + H) * G + col]
                }
            }
            let names = layerTensors(k)
            out[names.weightIH] = Tensor(shape: [G, inputs], values: ih)
            out[names.weightHH] = Tensor(shape: [G, H], values: hh)
            out[names.biasIH] = Tensor(shape: [G], values: bias)
            out[names.biasHH] = Tensor(shape: [G], values: [Float](repeating: 0, count: G))
        }
        let O = shape.outputWidth
        var head = [Float](repeating: 0, count: O * H)
        for j in 0..<H { for o in 0..<O { head[o * H + j] = weights.wy[j * O + o] } }
        out[headWeight] = Tensor(shape: [O, H], values: head)
        out[headBias] = Tensor(shape: [O], values: Array(weights.wy[(H * O)...]))
        return out
    }

    /// The weights of `shape` from PyTorch tensors (`path` names the file in errors): every
    /// tensor present with its shape; no other tensor.
    public static func weights(_ tensors: [String: Tensor], shape: ModelShape, path: String) throws -> LSTMWeights {
        let H = shape.hidden, G = 4 * H, O = shape.outputWidth
        func tensor(_ name: String, _ dims: [Int]) throws -> [Float] {
            guard let t = tensors[name] else { throw SafeTensorsError(path, "no tensor \"\(name)\" (a model of \(shape.layers) layer(s) needs it)") }
            guard t.shape == dims else {
                throw SafeTensorsError(path, "tensor \"\(name)\" has shape \(t.shape), the model's groups and sizes give \(dims)")
            }
            return t.values
        }
        var expected: Set<String> = [headWeight, headBias]
        var layerWx: [[Float]] = []
        for k in 0..<shape.layers {
            let inputs = shape.wxRows(layer: k) - H - 1
            let names = layerTensors(k)
            let ih = try tensor(names.weightIH, [G, inputs]), hh = try tensor(names.weightHH, [G, H])
            let bi = try tensor(names.biasIH, [G]), bh = try tensor(names.biasHH, [G])
            expected.formUnion([names.weightIH, names.weightHH, names.biasIH, names.biasHH])
            var wx = [Float](repeating: 0, count: (inputs + H + 1) * G)
            for t in 0..<4 {
                let c0 = wxBlock[t] * H
                for j in 0..<H {
                    let row = t * H + j, col = c0 + j
                    for r in 0..<inputs { wx[r * G + col] = ih[row * inputs + r] }
                    for r in 0..<H { wx[(inputs + r) * G + col] = hh[row * H + r] }
                    wx[(inputs + H) * G + col] = bi[row] + bh[row]
                }
            }
            layerWx.append(wx)
        }
        let head = try tensor(headWeight, [O, H]), headBias = try tensor(Self.headBias, [O])
        if let extra = tensors.keys.sorted().first(where: { !expected.contains($0) }) {
            throw SafeTensorsError(path, "tensor \"\(extra)\" is not part of a \(shape.layers)-layer drummer model")
        }
        var wy = [Float](repeating: 0, count: (H + 1) * O)
        for j in 0..<H { for o in 0..<O { wy[j * O + o] = head[o * H + j] } }
        for o in 0..<O { wy[H * O + o] = headBias[o] }
        do { return try LSTMWeights(shape: shape, layerWx: layerWx, wy: wy) } catch {
            throw SafeTensorsError(path, "\(error)")
        }
    }

    public static let formatName = "drummer-model"

    /// The tensors that hold a model directory's weight file `file` (Wy.bin: head.weight and
    /// head.bias; Wx.bin, Wx1.bin, …: layer k's lstm tensors), as an error names them.
    static func tensorNames(of file: String, layers: Int) -> String {
        if file == ModelDirectory.wyFile { return "\(headWeight) and \(headBias)" }
        guard let k = (0..<layers).first(where: { ParameterLayout.wxName(layer: $0) + ".bin" == file }) else { return file }
        let n = layerTensors(k)
        return "\(n.weightIH), \(n.weightHH), \(n.biasIH) and \(n.biasHH)"
    }

    /// The safetensors bytes of a model (its model.json in the metadata).
    public static func encode(weights: LSTMWeights, groups: ModelGroups, metadata: [String: String],
                              sampling: SamplingDefaults = SamplingDefaults(), path: String) throws -> Data {
        let manifest = try Exporter.manifest(weights: weights, groups: groups, metadata: metadata, sampling: sampling, path: path)
        return try SafeTensors.encode(tensors(weights), metadata: ["format": formatName, "model_json": manifest])
    }

    /// A model from safetensors bytes: its weights, groups and model.json metadata. The
    /// model.json in the metadata gives the groups and sizes; its checksums, when present, must
    /// match the weights read.
    public static func decode(_ data: Data, path: String) throws
        -> (weights: LSTMWeights, groups: ModelGroups, metadata: [String: String], sampling: SamplingDefaults)
    {
        let (tensors, meta) = try SafeTensors.decode(data, path: path)
        guard let text = meta["model_json"] else {
            throw SafeTensorsError(path, "__metadata__ has no \"model_json\" (the model.json of a drummer model: vocabulary, groups, sizes; "
                                   + "python/drummer_torch.py writes it)")
        }
        let manifest = try ModelManifest.decode(Data(text.utf8), file: path + ": __metadata__.model_json")
        let (groups, shape) = try manifest.validated(file: path + ": __metadata__.model_json")
        let weights = try weights(tensors, shape: shape, path: path)
        let sampling = manifest.sampling?.defaults ?? SamplingDefaults()
        if let sums = manifest.sha256 {
            let files = try ModelDirectory.encode(weights: weights, groups: groups, metadata: manifest.metadata ?? [:],
                                                  sampling: sampling, path: path)
            for (name, bytes) in files where name != ModelDirectory.manifestFile {
                if let expected = sums[name], expected.lowercased() != SHA256.hex(bytes) {
                    throw SafeTensorsError(path, "the tensors \(tensorNames(of: name, layers: shape.layers)) do not match the "
                                           + "SHA-256 model_json records for them (\(expected.prefix(16))…, the model directory's \(name)): "
                                           + "the file was changed after it was written")
                }
            }
        }
        return (weights, groups, manifest.metadata ?? [:], sampling)
    }
}
