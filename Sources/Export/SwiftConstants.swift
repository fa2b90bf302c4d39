// `drummer export --swift FILE`: a Swift source file declaring the model's sizes
// and its two lookup tables, to drop into an app beside Wx.bin and Wy.bin.

import DrummerCore

public enum SwiftConstants {
    /// The enum name for `path`: its file name without extension when that is a
    /// plain Swift identifier (e.g. `DrumModel.swift` → `DrumModel`), else `DrummerModel`.
    public static func typeName(forFile path: String) -> String {
        var name = Substring(path.split(separator: "/").last ?? "")
        if let dot = name.lastIndex(of: ".") { name = name[..<dot] }
        guard let first = name.unicodeScalars.first,
              first == "_" || (first.properties.isAlphabetic && first.isASCII),
              name.unicodeScalars.allSatisfy({ $0 == "_" || ($0.isASCII && $0.properties.isAlphabetic)
                  || ("0"..."9").contains($0) }),
              !reserved.contains(String(name))
        else { return "DrummerModel" }
        return String(name)
    }

    private static let reserved: Set<String> = [
        "Any", "Self", "Type", "Protocol", "class", "struct", "enum", "protocol", "extension",
        "func", "let", "var", "import", "return", "if", "else", "for", "while", "in", "do",
        "switch", "case", "default", "self", "super", "true", "false", "nil", "public", "private",
        "internal", "static", "init", "deinit", "subscript", "operator", "throws", "try",
    ]

    /// The constants of a model of the original layout.
    public static func source(vocabulary: Vocabulary, shape: ModelShape, step: Int, typeName: String) -> String {
        source(groups: ModelGroups(vocabulary: vocabulary), shape: shape, step: step, typeName: typeName)
    }

    public static func source(groups: ModelGroups, shape: ModelShape, step: Int?, typeName: String) -> String {
        let vocabulary = groups.vocabulary
        func table(_ values: [Int]) -> String {
            var lines: [String] = []
            var i = 0
            while i < values.count {
                let row = values[i..<min(i + 16, values.count)].map(String.init).joined(separator: ", ")
                lines.append("        \(row),")
                i += 16
            }
            return "[\n" + lines.joined(separator: "\n") + "\n    ]"
        }
        func strings(_ values: [String]) -> String { "[" + values.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        var extra = ""
        if let g = groups.grid {
            extra += """

                /// Grid layout (16th-note steps of 4/4 bars; see docs/research.md, The grid layout): input row s is step s's
                /// hit set (bit c = class c; 512 = start), each class's velocity bin and offset class (their
                /// "not hit" = the group's last class), the next step's 16th and bar in an 8-bar phrase,
                /// the hit sets gridLookbackBars bars before it (gridLookback "hit-sets": one group of 513 per bar,
                /// 512 = none; "classes": per bar back and class a group of 3, 0 not hit, 1 hit, 2 none;
                /// "velocities": per bar back and class a group of V + 2, the velocity bin, V not hit, V + 1
                /// none), and whether step s repeats the hit sets one and two bars before it.
                public static let gridLookback = "\(g.lookback.rawValue)"
                public static let gridLookbackBars = \(g.lookbackBars)
                public static let gridPPQ = \(g.ppq)
                public static let gridVelocityBins: [ClosedRange<Int>] = [\(g.velocity.bins.map { "\($0.lowerBound)...\($0.upperBound)" }.joined(separator: ", "))]
                public static let gridVelocityHistogram: [Int] = \(table(g.velocity.histogram))
                /// Offset class k < F: one hit at gridOffsets[k] ticks from its step; k ≥ F: two, at
                /// gridOffsets[k − F] and a 32nd note later.
                public static let gridOffsets: [Int] = \(g.offsets)
                /// Share of steps whose classes draw their offsets with one shared uniform number.
                public static let gridOffsetCoupling = \(g.offsetCoupling)
                /// Each class's training notes: 9 rows of 128 counts (draw a written note from its row).
                public static let gridNoteCounts: [[Int]] = [\(g.noteCounts.map { table($0) }.joined(separator: ", "))]
            """
            if let st = g.styles {
                extra += """

                    /// Style input (group "style", the last input group): one class per style, the same for
                    /// every row of a file; draw a file's style in proportion to gridStyleSteps (its training steps).
                    public static let gridStyles: [String] = [\(st.names.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined(separator: ", "))]
                    public static let gridStyleSteps: [Int] = \(st.steps)
                """
            }
        }
        return """
            // Generated by `drummer export` (drummer \(DrummerVersion.string))\(step.map { ", training step \($0)" } ?? "").
            // Do not edit. The weights are in Wx.bin and Wy.bin beside model.json: flat
            // float32, little-endian, row-major; Wx is wxRows × wxCols (column blocks in
            // gateOrder), Wy is wyRows × wyCols; the bias is the last row of each.
            // Input x = one one-hot per input group, side by side in inputGroups order (Wx's
            // first inputWidth rows); output y = one softmax per output group, side by side in
            // outputGroups order (Wy's columns).

            public enum \(typeName) {
                /// Notes in the vocabulary (N).
                public static let noteCount = \(vocabulary.ixToNote.count)
                /// Tick values in the vocabulary (K).
                public static let tickCount = \(vocabulary.ixToTick.count)
                /// The input groups in Wx row order, and their sizes.
                public static let inputGroups: [String] = \(strings(groups.inputNames))
                public static let inputGroupSizes: [Int] = \(shape.inputGroups)
                /// The output groups in Wy column order, and their sizes.
                public static let outputGroups: [String] = \(strings(groups.outputNames))
                public static let outputGroupSizes: [Int] = \(shape.outputGroups)
                /// Rows of the input block (the sum of inputGroupSizes; N + K for the original layout).
                public static let vocabularySize = \(shape.inputWidth)
                /// Hidden size (H) of every layer.
                public static let hiddenSize = \(shape.hidden)
                /// Stacked LSTM layers (L): Wx.bin, then Wx1.bin … for layers 1…L−1, each
                /// (2H + 1) × 4H (input rows: the h of the layer below; then W_rec; then the bias).
                public static let layerCount = \(shape.layers)
                /// Wx: (inputWidth + H + 1) × 4H.
                public static let wxRows = \(shape.wxRows)
                public static let wxCols = \(shape.wxCols)
                /// Wy: (H + 1) × outputWidth.
                public static let wyRows = \(shape.wyRows)
                public static let wyCols = \(shape.wyCols)
                /// Order of Wx's column blocks.
                public static let gateOrder = [\(ModelShape.gateOrder.map { "\"\($0)\"" }.joined(separator: ", "))]
                /// Note index → MIDI note number.
                public static let ixToNote: [Int] = \(table(vocabulary.ixToNote))
                /// Tick index → ticks (480 PPQ) since the previous hit.
                public static let ixToTick: [Int] = \(table(vocabulary.ixToTick))\(extra)
            }

            """
    }
}
