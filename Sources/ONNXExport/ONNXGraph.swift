// A drummer model as a one-step ONNX graph (IR version 8, opset 17), for ONNX Runtime in DAW
// plugins, the web and mobile. One call is one LSTM step of every layer, for a batch of
// independent streams:
//
//   inputs   classes  int64 [batch, k]       one class per input group (model.json's groups,
//                                            in order; `drummer encode` writes them)
//            h{l}, c{l}  float [batch, H]    the state of layer l (zeros to start)
//   outputs  logits_{group}  float [batch, size]  each output group's logits (note, tick, …)
//            h{l}_next, c{l}_next  float [batch, H]
//
// The graph is the model's math (README "How it works"), with Wx split by rows:
//   rows      = Gather(W_in0, classes + offsets)          the one-hot product, [batch, k, 4H]
//   x         = ReduceSum(rows, axis 1)                    layer 0's input block · x_t
//   gates     = x + h{l} · W_rec{l} + b{l}                 (layer l ≥ 1: x = h{l-1}_next · W_in{l})
//   f, i, o, g = Split(gates, 4 × H, axis 1)               Wx's column blocks, in that order
//   c{l}_next = σ(f) ⊙ c{l} + σ(i) ⊙ tanh(g);  h{l}_next = σ(o) ⊙ tanh(c{l}_next)
//   y         = h_top_next · W_head + b_head;  logits_{group} = the group's columns of y
// Initializers hold Wx's blocks and Wy as float32 raw data, the group offsets as int64. The
// model's model.json is in the metadata ("model_json").
import DrummerCore
import Foundation
import ModelFiles
import SwiftProtobuf

public enum ONNXGraph {
    public static let irVersion: Int64 = 8
    public static let opset: Int64 = 17

    /// The ONNX model's bytes for `weights` with `groups` (names for the inputs and outputs)
    /// and the model.json text to carry in the metadata.
    public static func encode(weights: LSTMWeights, groups: ModelGroups, modelJSON: String) throws -> Data {
        try model(weights: weights, groups: groups, modelJSON: modelJSON).serializedData()
    }

    static func model(weights: LSTMWeights, groups: ModelGroups, modelJSON: String) -> Onnx_ModelProto {
        let shape = weights.shape, layout = shape.parameters
        let H = shape.hidden, G = 4 * H, O = shape.outputWidth, k = shape.inputGroups.count
        var graph = Onnx_GraphProto()
        graph.name = "drummer_step"
        graph.docString = "One LSTM step of a drummer model (\(shape.layers) layer(s) of \(H)); see model_json in the metadata."

        func floats(_ name: String, _ dims: [Int], _ values: [Float]) {
            var t = Onnx_TensorProto()
            t.name = name
            t.dims = dims.map(Int64.init)
            t.dataType = Int32(Onnx_TensorProto.DataType.float.rawValue)
            t.rawData = ModelDirectory.littleEndianBytes(values)
            graph.initializer.append(t)
        }
        func ints(_ name: String, _ values: [Int]) {
            var t = Onnx_TensorProto()
            t.name = name
            t.dims = [Int64(values.count)]
            t.dataType = Int32(Onnx_TensorProto.DataType.int64.rawValue)
            t.int64Data = values.map(Int64.init)
            graph.initializer.append(t)
        }
        func node(_ op: String, _ inputs: [String], _ outputs: [String], _ attributes: [Onnx_AttributeProto] = []) {
            var n = Onnx_NodeProto()
            n.opType = op
            n.input = inputs
            n.output = outputs
            n.name = "\(op)_\(graph.node.count)"
            n.attribute = attributes
            graph.node.append(n)
        }
        func intAttribute(_ name: String, _ value: Int) -> Onnx_AttributeProto {
            var a = Onnx_AttributeProto()
            a.name = name
            a.type = .int
            a.i = Int64(value)
            return a
        }
        func value(_ name: String, _ type: Onnx_TensorProto.DataType, _ dims: [Any]) -> Onnx_ValueInfoProto {
            var v = Onnx_ValueInfoProto()
            v.name = name
            var t = Onnx_TypeProto.Tensor()
            t.elemType = Int32(type.rawValue)
            var s = Onnx_TensorShapeProto()
            s.dim = dims.map { d in
                var dim = Onnx_TensorShapeProto.Dimension()
                if let n = d as? Int { dim.dimValue = Int64(n) } else { dim.dimParam = "\(d)" }
                return dim
            }
            t.shape = s
            v.type.tensorType = t
            return v
        }

        // Rows r..<r+n of a Wx matrix (G columns each).
        func rows(_ wx: [Float], _ r: Range<Int>) -> [Float] { Array(wx[(r.lowerBound * G)..<(r.upperBound * G)]) }
        graph.input.append(value("classes", .int64, ["batch", k]))
        ints("offsets", layout.layers[0].inputGroupRows.map(\.lowerBound))
        ints("split4", [H, H, H, H])
        ints("axis1", [1])
        node("Add", ["classes", "offsets"], ["rows_index"])
        var below = ""
        for (l, layer) in layout.layers.enumerated() {
            let wx = weights.layerWx[l]
            let inputs = layer.wx.rows - H - 1
            graph.input.append(value("h\(l)", .float, ["batch", H]))
            graph.input.append(value("c\(l)", .float, ["batch", H]))
            floats("W_in\(l)", [inputs, G], rows(wx, 0..<inputs))
            floats("W_rec\(l)", [H, G], rows(wx, inputs..<(inputs + H)))
            floats("b\(l)", [G], rows(wx, (inputs + H)..<(inputs + H + 1)))
            if l == 0 {
                node("Gather", ["W_in0", "rows_index"], ["rows"], [intAttribute("axis", 0)])
                node("ReduceSum", ["rows", "axis1"], ["x0"], [intAttribute("keepdims", 0)])
            } else {
                node("MatMul", [below, "W_in\(l)"], ["x\(l)"])
            }
            node("MatMul", ["h\(l)", "W_rec\(l)"], ["rec\(l)"])
            node("Add", ["x\(l)", "rec\(l)"], ["sum\(l)"])
            node("Add", ["sum\(l)", "b\(l)"], ["gates\(l)"])
            node("Split", ["gates\(l)", "split4"], ["f\(l)", "i\(l)", "o\(l)", "g\(l)"], [intAttribute("axis", 1)])
            for g in ["f", "i", "o"] { node("Sigmoid", ["\(g)\(l)"], ["s\(g)\(l)"]) }
            node("Tanh", ["g\(l)"], ["tg\(l)"])
            node("Mul", ["sf\(l)", "c\(l)"], ["keep\(l)"])
            node("Mul", ["si\(l)", "tg\(l)"], ["write\(l)"])
            node("Add", ["keep\(l)", "write\(l)"], ["c\(l)_next"])
            node("Tanh", ["c\(l)_next"], ["tc\(l)"])
            node("Mul", ["so\(l)", "tc\(l)"], ["h\(l)_next"])
            below = "h\(l)_next"
        }
        let head = layout.head
        floats("W_head", [H, O], Array(weights.wy[0..<(H * O)]))
        floats("b_head", [O], Array(weights.wy[(H * O)...]))
        node("MatMul", [below, "W_head"], ["y_raw"])
        node("Add", ["y_raw", "b_head"], ["y"])
        for (g, columns) in head.outputColumns.enumerated() {
            let name = groups.outputNames[g]
            ints("start_\(name)", [columns.lowerBound])
            ints("end_\(name)", [columns.upperBound])
            node("Slice", ["y", "start_\(name)", "end_\(name)", "axis1"], ["logits_\(name)"])
            graph.output.append(value("logits_\(name)", .float, ["batch", columns.count]))
        }
        for l in 0..<shape.layers {
            graph.output.append(value("h\(l)_next", .float, ["batch", H]))
            graph.output.append(value("c\(l)_next", .float, ["batch", H]))
        }

        var m = Onnx_ModelProto()
        m.irVersion = irVersion
        var op = Onnx_OperatorSetIdProto()
        op.domain = ""
        op.version = opset
        m.opsetImport = [op]
        m.producerName = "drummer"
        m.producerVersion = DrummerVersion.string
        m.docString = "A drummer LSTM model, one step per call: feed classes and the state, read each output group's logits."
        m.graph = graph
        func entry(_ key: String, _ value: String) -> Onnx_StringStringEntryProto {
            var e = Onnx_StringStringEntryProto()
            e.key = key
            e.value = value
            return e
        }
        m.metadataProps = [entry("model_json", modelJSON), entry("input_groups", groups.inputNames.joined(separator: ",")),
                           entry("output_groups", groups.outputNames.joined(separator: ",")), entry("layers", String(shape.layers)),
                           entry("hidden_size", String(H))]
        return m
    }
}
