// Sampling temperatures by output group: what `--temperature` says (one number for every
// group, or group=T pairs), and the defaults a model directory may carry (model.json
// "sampling": {"temperature": {"velocity": 1.2}}) because the checkpoint was chosen on files
// sampled at them (`drummer choose-step --temperature`, `drummer export --temperature`).
//
// Resolution: one number applies to every group and ignores the model's defaults (so
// `--temperature 1` is always the model's own distribution); pairs set the groups they name and
// leave the others at the model's defaults; no option takes the defaults; a group named nowhere
// samples at 1. A grid model also takes `fills`, not an output group: the hit set's temperature
// in bars 4 and 8 of each 8-bar phrase, where the corpus's drummers play fills (named nowhere,
// or one number for every group: the hits' temperature there too).
//

/// `--temperature`'s text, parsed.
public struct TemperatureSetting: Equatable, Sendable {
    /// One temperature for every group (`--temperature 0.9`).
    public var all: Float?
    /// Temperatures of named groups (`--temperature hits=0.9,velocity=1.2`).
    public var groups: [String: Float]

    public init(all: Float? = nil, groups: [String: Float] = [:]) {
        self.all = all
        self.groups = groups
    }

    /// Every name any layout's output groups use, and `fills`.
    public static let knownGroups = ["note", "tick", "hits", "velocity", "offset", "fills"]

    /// Not an output group: a grid model's hit-set temperature in the fill bars (bars 4 and 8
    /// of each 8-bar phrase, `GridGroup.isFillBar`); where nothing names it, the hits'.
    public static let fills = "fills"

    /// The groups a model of `groups` draws with their own temperature.
    public static func names(for groups: ModelGroups) -> [String] {
        groups.grid != nil ? ["hits", "velocity", "offset"] : ["note", "tick"]
    }

    /// The highest temperature a setting or model.json takes (far past where a softmax is
    /// uniform to the eye), so that whatever one command accepts, another can read.
    public static let maximum: Float = 100

    /// Parses "0.9" or "note=0.9,tick=0.9"; `option` names the flag in messages.
    public init(parsing text: String, option: String = "--temperature") throws(TemperatureError) {
        let (all, groups) = try GroupValues.parse(text, option: option, pairs: "group=T pairs (hits=0.9,velocity=1.2)",
                                                  requirement: "a number from 0 to \(Int(Self.maximum))") { (t: Float) in
            t.isFinite && t >= 0 && t <= Self.maximum
        }
        self.init(all: all, groups: groups)
    }

    /// Throws when a named group is not one a model of `groups` predicts (or, for a grid
    /// model, `fills`).
    public func check(for groups: ModelGroups, option: String = "--temperature") throws(TemperatureError) {
        try GroupValues.check(Array(self.groups.keys), for: groups, option: option, kind: "temperature",
                              extra: groups.grid != nil ? [Self.fills] : [])
    }

    /// A grid model's hit-set temperature where it carries on a beat it heard (`sample
    /// --primer`, `play --answer`, `play` after the musician's hits), unless the setting names
    /// the hits: at the model's 1, `models/groove`'s bars after the first 4 bars of a Groove file
    /// resemble them less than the drummer's own next bars do (best similarity to a primer bar
    /// .64 against .73; a primer bar repeated in 32% of bars against 47%, 100 files); at 0.8
    /// both match (.73 and .73; 48% and 48%, 600 files; `drummer continuation`). Free sampling
    /// keeps the model's temperatures: its bar-structure figures are the corpus's at 1.
    public static let continuationHits: Float = 0.8

    /// The temperature of each of the model's groups: this setting over the model's `defaults`
    /// (`continuing`: over `continuationHits` for a grid model's hits, then the defaults).
    /// `fills` only where this setting's pairs or the defaults name it (one number for every
    /// group leaves it out: the fill bars then draw at the hits' temperature, that number).
    public func resolved(for groups: ModelGroups, defaults: [String: Float], continuing: Bool = false) -> [String: Float] {
        var defaults = defaults
        if continuing, groups.grid != nil { defaults["hits"] = Self.continuationHits }
        var out: [String: Float] = [:]
        for name in Self.names(for: groups) { out[name] = all ?? self.groups[name] ?? defaults[name] ?? 1 }
        if groups.grid != nil, all == nil, let f = self.groups[Self.fills] ?? defaults[Self.fills] { out[Self.fills] = f }
        return out
    }

    /// "1", "0.9" or "hits=1,offset=1,velocity=1.2" (groups in name order) for status lines.
    public static func describe(_ temperatures: [String: Float]) -> String { GroupValues.describe(temperatures) }
}

/// `--temperature`'s text: one number, or group=value pairs over the output groups' names.
enum GroupValues {
    static func parse<X: LosslessStringConvertible>(
        _ text: String, option: String, pairs: String, requirement: String, valid: (X) -> Bool
    ) throws(TemperatureError) -> (all: X?, groups: [String: X]) {
        if let x = X(text) {
            guard valid(x) else { throw TemperatureError("\(option) must be \(requirement), got \(x)") }
            return (x, [:])
        }
        var groups: [String: X] = [:]
        for pair in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2, let x = X(String(parts[1])) else {
                throw TemperatureError("\(option) takes a number or \(pairs), got \"\(text)\"")
            }
            let name = String(parts[0])
            guard TemperatureSetting.knownGroups.contains(name) else {
                throw TemperatureError("\(option) names \"\(name)\": the output groups are hits, velocity and offset, and fills (a model of the 2017 layout: note and tick)")
            }
            guard valid(x) else { throw TemperatureError("\(option) \(name) must be \(requirement), got \(x)") }
            guard groups[name] == nil else { throw TemperatureError("\(option) names \(name) twice") }
            groups[name] = x
        }
        return (nil, groups)
    }

    /// One value when every group has it (none: "1.0"), else group=value pairs in name order.
    static func describe<X: Hashable & ExpressibleByIntegerLiteral>(_ values: [String: X]) -> String {
        let distinct = Set(values.values)
        if distinct.count <= 1 { return "\(distinct.first ?? 1)" }
        return values.keys.sorted().map { "\($0)=\(values[$0]!)" }.joined(separator: ",")
    }

    static func check(_ named: [String], for groups: ModelGroups, option: String, kind: String,
                      extra: [String] = []) throws(TemperatureError) {
        let names = TemperatureSetting.names(for: groups) + extra
        if let name = named.sorted().first(where: { !names.contains($0) }) {
            if name == TemperatureSetting.fills {
                throw TemperatureError("\(option) names fills, a grid model's hit-set temperature in bars 4 and 8 of each phrase (--temperature only); this model's \(kind) groups: \(names.joined(separator: ", "))")
            }
            throw TemperatureError("\(option) names \(name), which this model does not predict (its \(kind) groups: \(names.joined(separator: ", ")))")
        }
    }
}

public struct TemperatureError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
