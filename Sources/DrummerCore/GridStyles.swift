// The style input of a grid model: one more input group, "style", constant over a
// file, that says which style the file plays (its genre). Sampled without it, a model keeps to no
// style: bar by bar it drifts to the commonest (a rock backbeat); told the style, it keeps to
// it. The style of a training file comes from its path, by one of four rules:
//   groove-names          the Groove MIDI Dataset's file names, "<id>_<style>[-<substyle>]_<bpm>_<beat|fill>_<meter>.mid":
//                         the style before the first "-" ("1_funk-groove1_138_beat_4-4.mid": funk)
//   folders               the folder the file lies in ("rock/take3.mid": rock)
//   groove-drummers       the Groove dataset's drummer, the path's "drummer<N>" folder
//                         ("drummer5/session1/…": drummer5)
//   groove-drummer-names  both, "drummer5-latin": who plays, and what. A drummer's touch is
//                         set by the player and the kit (Groove's drummers' mean kick velocity
//                         runs from 34 to 104); a model told neither guesses it from its own
//                         first hits and plays the average of them.
// Styles with fewer than `minimumFiles` training files, and files the rule gives no style, are
// "other", always the last style. The sampler draws a file's style in proportion to the training
// steps of each style (so that the styles come back in the corpus's proportions), or takes the
// one it is told; told a part of a name ("latin", "drummer5": `indices(matching:)`), it draws
// among the styles that have it, in the same proportions.

/// How a grid model's style input reads a file's style from its path.
public enum GridStyleRule: String, CaseIterable, Sendable {
    case grooveNames = "groove-names"
    case folders
    case grooveDrummers = "groove-drummers"
    case grooveDrummerNames = "groove-drummer-names"

    /// The style of the file at `path` (relative to the dataset's source directory), lowercased;
    /// nil when the rule finds none there.
    public func style(ofPath path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        switch self {
        case .grooveNames:
            guard let file = parts.last else { return nil }
            let fields = file.split(separator: "_", omittingEmptySubsequences: false)
            guard fields.count >= 3, let id = fields.first, !id.isEmpty, id.allSatisfy(\.isNumber),
                  let top = fields[1].split(separator: "-").first, !top.isEmpty, !top.contains("\n") else { return nil }
            return top.lowercased()
        case .grooveDrummers:
            let prefix = "drummer"
            return parts.last(where: { $0.count > prefix.count && $0.lowercased().hasPrefix(prefix)
                                       && $0.dropFirst(prefix.count).allSatisfy { $0.isASCII && $0.isNumber } })
                .map { $0.lowercased() }
        case .grooveDrummerNames:
            guard let d = Self.grooveDrummers.style(ofPath: path), let n = Self.grooveNames.style(ofPath: path) else { return nil }
            return d + "-" + n
        case .folders:
            guard parts.count >= 2, !parts[parts.count - 2].contains("\n") else { return nil }
            return parts[parts.count - 2].lowercased()
        }
    }
}

/// The styles a grid model knows: their names (the input group "style", in this order), how
/// many training steps each had, and the rule that read them.
public struct GridStyles: Equatable, Sendable {
    /// A style needs this many training files of its own (else it is "other").
    public static let minimumFiles = 10
    /// The last style: files of rare styles and files without one.
    public static let other = "other"

    public var rule: GridStyleRule
    /// Style names, commonest (most training steps) first, "other" last.
    public var names: [String]
    /// Training 16th steps of each style (the sampler's draw weights).
    public var steps: [Int]

    public init(rule: GridStyleRule, names: [String], steps: [Int]) throws {
        self.rule = rule
        self.names = names
        self.steps = steps
        try validate()
    }

    /// The styles of training files given as (path, steps): each style with at least
    /// `minimumFiles` files, by steps (most first, then by name), then "other".
    public init(rule: GridStyleRule, files: [(path: String, steps: Int)]) throws {
        var fileCount: [String: Int] = [:], stepCount: [String: Int] = [:]
        for f in files {
            let s = rule.style(ofPath: f.path) ?? Self.other
            fileCount[s, default: 0] += 1
            stepCount[s, default: 0] += f.steps
        }
        let kept = fileCount.filter { $0.key != Self.other && $0.value >= Self.minimumFiles }.map(\.key)
            .sorted { (stepCount[$0]!, $1) > (stepCount[$1]!, $0) }
        let otherSteps = stepCount.filter { !kept.contains($0.key) }.values.reduce(0, +)
        try self.init(rule: rule, names: kept + [Self.other], steps: kept.map { stepCount[$0]! } + [otherSteps])
    }

    public var count: Int { names.count }

    /// The styles some training file had (an empty "other" has none): a style the model never
    /// learned is neither played nor chosen as the likeliest.
    public var trained: [Int] { names.indices.filter { steps[$0] > 0 } }

    /// The style index of the file at `path` ("other" for a style the model does not know).
    public func index(ofPath path: String) -> Int {
        rule.style(ofPath: path).flatMap { names.firstIndex(of: $0) } ?? names.count - 1
    }

    /// The index of the style named `name` (case does not matter), nil when the model has none.
    public func index(named name: String) -> Int? { names.firstIndex(of: name.lowercased()) }

    /// The styles `name` stands for (case does not matter): the one so named, else every style
    /// with `name` as one of its "-"-separated parts ("latin" for "drummer5-latin" and
    /// "drummer1-latin", "drummer5" for "drummer5-latin" and "drummer5-rock"); empty for none.
    public func indices(matching name: String) -> [Int] {
        if let i = index(named: name) { return [i] }
        let n = name.lowercased()
        guard !n.isEmpty, !n.contains("-") else { return [] }
        return names.indices.filter { names[$0].split(separator: "-").contains(Substring(n)) }
    }

    /// A style drawn in proportion to `steps` with a uniform u in [0, 1), among the styles
    /// `among` (indices of styles, not empty; nil: all); the first of them when none has steps.
    public func draw(uniform u: Double, among: [Int]? = nil) -> Int {
        precondition(among.map { !$0.isEmpty && $0.allSatisfy(names.indices.contains) } ?? true, "draw(among:) needs styles of the model")
        let style = { (k: Int) in among?[k] ?? k }
        return style(Softmax.draw(count: among?.count ?? steps.count, counts: { steps[style($0)] }, uniform: u) ?? 0)
    }

    public func validate() throws {
        guard names.count >= 1, names.count <= 1000, names.last == Self.other else {
            throw ModelGroupsError("grid styles: expected 1 to 1000 names, \"\(Self.other)\" last, got \(names.count)")
        }
        guard Set(names).count == names.count,
              names.allSatisfy({ !$0.isEmpty && $0 == $0.lowercased() && !$0.contains("\n") }) else {
            throw ModelGroupsError("grid styles: names must be distinct, lowercase, not empty, without a line break")
        }
        // At most 2^31 − 1 each: the sampler's draw adds them up.
        guard steps.count == names.count, steps.allSatisfy({ (0...Int(Int32.max)).contains($0) }), steps.contains(where: { $0 > 0 }) else {
            throw ModelGroupsError("grid styles: expected \(names.count) step counts 0...\(Int32.max), not all 0")
        }
    }
}
