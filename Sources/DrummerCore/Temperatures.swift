// Sampling temperatures by output group: what `--temperature` says (one number for every
// group, or group=T pairs), and the defaults a model directory may carry (model.json
// "sampling": {"temperature": {"velocity": 1.2}}) because the checkpoint was chosen on files
// sampled at them (`drummer choose-step --temperature`, `drummer export --temperature`).
//
// Resolution: one number applies to every group and ignores the model's defaults (so
// `--temperature 1` is always the model's own distribution); pairs set the groups they name and
// leave the others at the model's defaults; no option takes the defaults; a group named nowhere
// samples at 1.

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

    /// Every name any layout's output groups use.
    public static let knownGroups = ["note", "tick", "velocity", "hits", "offset"]

    /// The groups a model of `groups` draws with their own temperature.
    public static func names(for groups: ModelGroups) -> [String] {
        groups.grid != nil ? ["hits", "velocity", "offset"]
            : groups.velocity != nil ? ["note", "tick", "velocity"] : ["note", "tick"]
    }

    /// Parses "0.9" or "note=0.9,tick=0.9"; `option` names the flag in messages.
    public init(parsing text: String, option: String = "--temperature") throws(TemperatureError) {
        if let t = Float(text) {
            guard t.isFinite, t >= 0 else { throw TemperatureError("\(option) must be a finite number ≥ 0, got \(t)") }
            self.init(all: t)
            return
        }
        var groups: [String: Float] = [:]
        for pair in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", omittingEmptySubsequences: false)
            guard parts.count == 2, let t = Float(parts[1]) else {
                throw TemperatureError("\(option) takes a number or group=T pairs (note=0.9,tick=0.9,velocity=1.0), got \"\(text)\"")
            }
            let name = String(parts[0])
            guard Self.knownGroups.contains(name) else {
                throw TemperatureError("\(option) names \"\(name)\": the output groups are note, tick and velocity (a grid model: hits, velocity and offset)")
            }
            guard t.isFinite, t >= 0 else { throw TemperatureError("\(option) \(name) must be a finite number ≥ 0, got \(t)") }
            guard groups[name] == nil else { throw TemperatureError("\(option) names \(name) twice") }
            groups[name] = t
        }
        self.init(groups: groups)
    }

    /// Throws when a named group is not one a model of `groups` predicts.
    public func check(for groups: ModelGroups, option: String = "--temperature") throws(TemperatureError) {
        let names = Self.names(for: groups)
        if let name = self.groups.keys.sorted().first(where: { !names.contains($0) }) {
            throw TemperatureError("\(option) names \(name), which this model does not predict (its temperature groups: \(names.joined(separator: ", ")))")
        }
    }

    /// The temperature of each of the model's groups: this setting over the model's `defaults`.
    public func resolved(for groups: ModelGroups, defaults: [String: Float]) -> [String: Float] {
        var out: [String: Float] = [:]
        for name in Self.names(for: groups) { out[name] = all ?? self.groups[name] ?? defaults[name] ?? 1 }
        return out
    }

    /// "1", "0.9" or "hits=1,offset=1,velocity=1.2" (groups in name order) for status lines.
    public static func describe(_ temperatures: [String: Float]) -> String {
        let values = Set(temperatures.values)
        if values.count <= 1 { return "\(values.first ?? 1)" }
        return temperatures.keys.sorted().map { "\($0)=\(temperatures[$0]!)" }.joined(separator: ",")
    }
}

public struct TemperatureError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
