// model.json's "groups" (format version 2): the model's input and output groups in
// order, with their sizes, and the grid's tables.
//
//   "groups": {
//     "inputs":  [{"name": "hits", "size": 513}, …],
//     "outputs": [{"name": "hits", "size": 512}, …],
//     "grid": {"ppq": 480, "velocity": {"bins": [[lo, hi], …], "histogram": [127 counts, velocity 1 first]}, "offsets": [ticks per offset bin], "notes": [9 MIDI notes],
//              "note_counts": [9 rows of 128 counts: each class's training notes], "offset_coupling": 0.6,
//              "lookback": "classes",   (absent: "hit-sets", the first grid models' lookback)
//              "lookback_bars": [1, 2, 4],   (absent: [1, 2]; the bars back the lookback reads)
//              "styles": {"rule": "groove-names", "names": ["rock", …, "other"], "steps": [training steps per style]}}
//                (absent: no style input; present: the input group "style", one class per name)
//   }
// "position", "lookback" and "velocity" beside "grid" were the event layout's, which drummer no
// longer has (docs/research.md): a manifest with them is refused with a message that says so.
// "inputs" and "outputs" follow from the rest (they are there for readers of the file)
// and are checked against it. A manifest without "groups" (version 1, the original's
// vocab.json) is the original layout: (note, tick) in and out.
import Foundation
import DrummerCore

/// The "groups" object of model.json.
public struct GroupsManifest: Codable, Equatable, Sendable {
    public struct Entry: Codable, Equatable, Sendable {
        public var name: String
        public var size: Int
    }

    public struct Velocity: Codable, Equatable, Sendable {
        public var bins: [[Int]]
        public var histogram: [Int]
    }

    public struct Grid: Codable, Equatable, Sendable {
        public var ppq: Int
        public var velocity: Velocity
        public var offsets: [Int]
        public var notes: [Int]
        public var noteCounts: [[Int]]
        public var offsetCoupling: Double
        /// GridLookback's name; nil (not written) for hit sets.
        public var lookback: String?
        /// The bars back the lookback reads; nil (not written) for 1 and 2.
        public var lookbackBars: [Int]?
        /// The style input (GridStyles); nil (not written) for none.
        public var styles: Styles?

        enum CodingKeys: String, CodingKey {
            case ppq, velocity, offsets, notes, lookback, styles
            case noteCounts = "note_counts"
            case offsetCoupling = "offset_coupling"
            case lookbackBars = "lookback_bars"
        }
    }

    public struct Styles: Codable, Equatable, Sendable {
        public var rule: String
        public var names: [String]
        public var steps: [Int]
    }

    public var inputs: [Entry]
    public var outputs: [Entry]
    public var grid: Grid?

    public init(_ groups: ModelGroups) {
        let shape = groups.shape(hidden: 1)
        inputs = zip(groups.inputNames, shape.inputGroups).map { Entry(name: $0, size: $1) }
        outputs = zip(groups.outputNames, shape.outputGroups).map { Entry(name: $0, size: $1) }
        grid = groups.grid.map {
            Grid(ppq: $0.ppq, velocity: Velocity(bins: $0.velocity.bins.map { [$0.lowerBound, $0.upperBound] },
                                                 histogram: $0.velocity.histogram),
                 offsets: $0.offsets, notes: $0.notes, noteCounts: $0.noteCounts, offsetCoupling: $0.offsetCoupling,
                 lookback: $0.lookback == .hitSets ? nil : $0.lookback.rawValue,
                 lookbackBars: $0.lookbackBars == GridGroup.defaultLookbackBars ? nil : $0.lookbackBars,
                 styles: $0.styles.map { Styles(rule: $0.rule.rawValue, names: $0.names, steps: $0.steps) })
        }
    }

    /// The groups these tables describe, checked against `vocabulary` and the listed sizes.
    func groups(vocabulary: Vocabulary, file: String) throws -> ModelGroups {
        func bad(_ m: String) -> ModelDirectoryError { .badManifest(file: file, message: "groups: " + m) }
        var g = ModelGroups(vocabulary: vocabulary)
        func velocityGroup(_ v: Velocity, _ key: String) throws -> VelocityGroup {
            var bins: [ClosedRange<Int>] = []
            for (i, pair) in v.bins.enumerated() {
                guard pair.count == 2, pair[0] <= pair[1] else { throw bad("\(key) bins[\(i)] is \(pair), expected [low, high]") }
                bins.append(pair[0]...pair[1])
            }
            do { return try VelocityGroup(bins: bins, histogram: v.histogram) } catch { throw bad("\(error)") }
        }
        if let gr = grid {
            let velocity = try velocityGroup(gr.velocity, "grid.velocity")
            guard let lookback = gr.lookback.map(GridLookback.init(rawValue:)) ?? .hitSets else {
                throw bad("grid.lookback \"\(gr.lookback ?? "")\" is not one of " + GridLookback.allCases.map(\.rawValue).joined(separator: ", "))
            }
            var styles: GridStyles?
            if let s = gr.styles {
                guard let rule = GridStyleRule(rawValue: s.rule) else {
                    throw bad("grid.styles.rule \"\(s.rule)\" is not one of " + GridStyleRule.allCases.map(\.rawValue).joined(separator: ", "))
                }
                do { styles = try GridStyles(rule: rule, names: s.names, steps: s.steps) } catch { throw bad("grid.styles: \(error)") }
            }
            do {
                g.grid = try GridGroup(ppq: gr.ppq, velocity: velocity, offsets: gr.offsets, notes: gr.notes,
                                       noteCounts: gr.noteCounts, offsetCoupling: gr.offsetCoupling, lookback: lookback,
                                       lookbackBars: gr.lookbackBars ?? GridGroup.defaultLookbackBars, styles: styles)
            } catch { throw bad("\(error)") }
        }
        let expected = GroupsManifest(g)
        guard inputs == expected.inputs else {
            throw bad("inputs \(describe(inputs)) do not match the vocabulary and tables, which give \(describe(expected.inputs))")
        }
        guard outputs == expected.outputs else {
            throw bad("outputs \(describe(outputs)) do not match the vocabulary and tables, which give \(describe(expected.outputs))")
        }
        return g
    }

    private func describe(_ entries: [Entry]) -> String {
        "[" + entries.map { "\($0.name) \($0.size)" }.joined(separator: ", ") + "]"
    }

    /// Reads the "groups" object through the manifest reader's typed accessors.
    static func read(_ value: JSONValue, file: String) throws -> GroupsManifest {
        func bad(_ m: String) -> ModelDirectoryError { .badManifest(file: file, message: "groups" + m) }
        guard case .object(let o) = value else { throw bad(" is \(value.described), expected an object") }
        func entries(_ key: String) throws -> [Entry] {
            guard case .array(let items)? = o[key] else { throw bad(".\(key) is missing or not an array") }
            return try items.enumerated().map { i, item in
                guard case .object(let e) = item, case .string(let name)? = e["name"], let size = e["size"]?.wholeNumber else {
                    throw bad(".\(key)[\(i)] is \(item.described), expected {\"name\": string, \"size\": whole number}")
                }
                return Entry(name: name, size: size)
            }
        }
        var m = GroupsManifest(inputs: try entries("inputs"), outputs: try entries("outputs"))
        for key in ["position", "lookback", "velocity"] where o[key] != nil && o[key] != .null {
            throw bad(".\(key): a model of the event layout, which drummer no longer plays (docs/research.md, "
                      + "The event layout); models of the 2017 layout and of the grid play")
        }
        // A velocity table: the grid's "groups.grid.velocity" (`key`).
        func velocity(_ v: JSONValue, _ key: String) throws -> Velocity {
            guard case .object(let vo) = v, case .array(let rawBins)? = vo["bins"] else {
                throw bad("\(key) is \(v.described), expected {\"bins\": [[low, high], …], \"histogram\": [127 counts]}")
            }
            let bins: [[Int]] = try rawBins.enumerated().map { i, b in
                guard case .array(let pair) = b else { throw bad("\(key).bins[\(i)] is \(b.described), expected [low, high]") }
                return try pair.map { x in
                    guard let n = x.wholeNumber else { throw bad("\(key).bins[\(i)] holds \(x.described), expected whole numbers") }
                    return n
                }
            }
            let r = ManifestReader(object: vo, file: file, keyPath: "groups\(key).")
            return Velocity(bins: bins, histogram: try r.required(r.ints("histogram"), "histogram"))
        }
        if let gv = o["grid"], gv != .null {
            guard case .object(let go) = gv else { throw bad(".grid is \(gv.described), expected an object") }
            let r = ManifestReader(object: go, file: file, keyPath: "groups.grid.")
            guard let vv = go["velocity"] else { throw bad(".grid.velocity is missing") }
            let gridVelocity = try velocity(vv, ".grid.velocity")
            func coupling() throws -> Double {
                switch go["offset_coupling"] {
                case .double(let d)?: return d
                case .int(let i)?: return Double(i)
                case let v?: throw bad(".grid.offset_coupling is \(v.described), expected a number in [0, 1]")
                case nil: throw bad(".grid.offset_coupling is missing")
                }
            }
            func styles() throws -> Styles? {
                guard let sv = go["styles"], sv != .null else { return nil }
                guard case .object(let so) = sv else { throw bad(".grid.styles is \(sv.described), expected an object") }
                let sr = ManifestReader(object: so, file: file, keyPath: "groups.grid.styles.")
                return Styles(rule: try sr.required(sr.string("rule"), "rule"), names: try sr.required(sr.strings("names"), "names"),
                              steps: try sr.required(sr.ints("steps"), "steps"))
            }
            func noteCounts() throws -> [[Int]] {
                guard case .array(let rows)? = go["note_counts"] else { throw bad(".grid.note_counts is missing or not an array") }
                return try rows.enumerated().map { i, row in
                    guard case .array(let items) = row, items.allSatisfy({ $0.wholeNumber != nil }) else {
                        throw bad(".grid.note_counts[\(i)] is \(row.described), expected 128 whole numbers")
                    }
                    return items.compactMap(\.wholeNumber)
                }
            }
            m.grid = Grid(ppq: try r.required(r.int("ppq"), "ppq"),
                          velocity: gridVelocity,
                          offsets: try r.required(r.ints("offsets"), "offsets"), notes: try r.required(r.ints("notes"), "notes"),
                          noteCounts: try noteCounts(), offsetCoupling: try coupling(),
                          lookback: try r.string("lookback"), lookbackBars: try r.ints("lookback_bars"), styles: try styles())
        }
        return m
    }

    init(inputs: [Entry], outputs: [Entry]) {
        self.inputs = inputs
        self.outputs = outputs
    }
}
