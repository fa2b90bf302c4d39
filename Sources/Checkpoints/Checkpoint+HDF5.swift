// Writing and reading checkpoints in the HDF5 layout documented in Checkpoint.swift.
// The serialisation is written against two small internal interfaces
// (`HDF5Writing`, `HDF5Reading`) implemented on HDF5Kit in CheckpointArchive.swift.
import DrummerCore
import Foundation
import HDF5Kit
import FileOutput
import Train

/// What the checkpoint writer needs from an HDF5 file open for writing.
protocol HDF5Writing {
    func createGroup(_ path: String) throws
    func write(_ path: String, float32 values: [Float], shape: [Int]) throws
    func write(_ path: String, int64 values: [Int64], shape: [Int]) throws
    func write(_ path: String, uint64 values: [UInt64], shape: [Int]) throws
    func setAttribute(_ object: String, _ name: String, int64 value: Int64) throws
    func setAttribute(_ object: String, _ name: String, double value: Double) throws
    func setAttribute(_ object: String, _ name: String, string value: String) throws
}

/// What the checkpoint reader needs from an HDF5 file open for reading.
protocol HDF5Reading {
    func children(_ group: String) throws -> [String]
    func readFloat32(_ path: String) throws -> (values: [Float], shape: [Int])
    func readInt64(_ path: String) throws -> (values: [Int64], shape: [Int])
    func readUInt64(_ path: String) throws -> (values: [UInt64], shape: [Int])
    func int64Attribute(_ object: String, _ name: String) throws -> Int64
    func doubleAttribute(_ object: String, _ name: String) throws -> Double
    func stringAttribute(_ object: String, _ name: String) throws -> String
    func hasAttribute(_ object: String, _ name: String) throws -> Bool
}

extension Checkpoint {
    /// Writes the checkpoint to `path` through a temporary file in the same
    /// directory and rename(2): `path` is either absent, the old file, or complete.
    public func write(to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        } catch {
            throw CheckpointError.writeFailed(path: path, reason: "cannot create its directory: \(ErrorText.describe(error))")
        }
        do {
            try CheckpointArchive.create(path: path) { try encode(into: $0) }
        } catch let e as CheckpointError {
            throw e
        } catch let e as HDF5Error {
            throw CheckpointError.writeFailed(path: path, reason: e.kind == .noSpace ? "no space left on device" : e.description)
        } catch {
            throw CheckpointError.writeFailed(path: path, reason: ErrorText.describe(error))
        }
    }

    /// Reads and validates a checkpoint; every failure is a `CheckpointError` naming the file.
    /// A version 2 file's seal is checked before libhdf5 opens it (see CheckpointSeal).
    public static func read(path: String) throws -> Checkpoint {
        do {
            let checkpoint = try CheckpointArchive.open(path: path) { try decode(from: $0, path: path, sealed: $1) }
            // A checkpoint directory chooses by the names (latest, best, --step N): a file named
            // for another step than it holds would be chosen for the wrong one.
            if let named = CheckpointDirectory.step(ofFileName: (path as NSString).lastPathComponent), named != checkpoint.state.step {
                throw CheckpointError.invalid(path: path, field: "/state attribute step",
                                              reason: "is \(checkpoint.state.step), but the file is named for step \(named) "
                                                  + "(checkpoint directories choose by the name): rename it ckpt-\(checkpoint.state.step).h5")
            }
            return checkpoint
        } catch let e as CheckpointError {
            throw e
        } catch let e as HDF5Error {
            switch e.kind {
            case .checksumMismatch:
                throw CheckpointError.corrupt(path: path, reason: "an HDF5 checksum failed (\(e.description))")
            case .notHDF5:
                throw CheckpointError.notACheckpoint(path: path, reason: "not an HDF5 file")
            case .fileNotFound:
                throw CheckpointError.missing(path: path)
            case .notFound, .typeMismatch, .shapeMismatch, .countMismatch, .wrongKind:
                throw CheckpointError.notACheckpoint(path: path, reason: e.description)
            default:
                throw CheckpointError.corrupt(path: path, reason: "libhdf5 cannot read it (corrupt or truncated?): \(e.description)")
            }
        }
    }

    func encode(into f: HDF5Writing) throws {
        let s = state.shape, c = configuration
        try f.setAttribute("/", "format", string: Checkpoint.formatName)
        try f.setAttribute("/", "format_version", int64: Int64(Checkpoint.version(for: s)))
        try f.setAttribute("/", "created_by", string: createdBy)
        try f.setAttribute("/", "run_id", string: runID)

        try f.createGroup("/model")
        for m in s.parameters.matrices {
            try f.write("/model/\(m.name)", float32: Array(state.parameters[m.range]), shape: [m.rows, m.cols])
        }

        try f.createGroup("/state")
        try f.setAttribute("/state", "step", int64: Int64(state.step))
        try f.setAttribute("/state", "epoch", int64: Int64(state.epoch))
        try f.setAttribute("/state", "pointer", int64: Int64(state.pointer))
        // One layer: [B, H] (as before layers existed); more: [L, B, H].
        let stateShape = s.layers == 1 ? [state.batch, s.hidden] : [s.layers, state.batch, s.hidden]
        try f.write("/state/h", float32: state.h, shape: stateShape)
        try f.write("/state/c", float32: state.c, shape: stateShape)

        try f.createGroup("/optimizer")
        try f.setAttribute("/optimizer", "kind", string: c.optimizer.rawValue)
        for (name, values) in state.optimizer.slots.sorted(by: { $0.key < $1.key }) {
            try f.write("/optimizer/\(name)", float32: values, shape: [values.count])
        }

        try f.createGroup("/rng")
        try f.write("/rng/state", uint64: rngState, shape: [rngState.count])
        try f.write("/rng/seed", uint64: [c.seed], shape: [1])

        try f.createGroup("/vocabulary")
        try f.write("/vocabulary/ix_to_note", int64: vocabulary.ixToNote.map(Int64.init), shape: [vocabulary.notes])
        try f.write("/vocabulary/ix_to_tick", int64: vocabulary.ixToTick.map(Int64.init), shape: [vocabulary.ticks])

        try f.createGroup("/groups")
        if let g = groups.grid {
            // The grid layout (GridGroup): ppq, its velocity bins and histogram, offsets, notes.
            try f.createGroup("/groups/grid")
            try f.setAttribute("/groups/grid", "ppq", int64: Int64(g.ppq))
            try f.setAttribute("/groups/grid", "offset_coupling", double: g.offsetCoupling)
            // Written only when it is not the first grid models' (whose files have no key).
            if g.lookback != .hitSets { try f.setAttribute("/groups/grid", "lookback", string: g.lookback.rawValue) }
            // The bars back, only when they are not the first grid models' 1 and 2.
            if g.lookbackBars != GridGroup.defaultLookbackBars {
                try f.write("/groups/grid/lookback_bars", int64: g.lookbackBars.map(Int64.init), shape: [g.lookbackBars.count])
            }
            try f.write("/groups/grid/velocity_bins", int64: g.velocity.bins.flatMap { [Int64($0.lowerBound), Int64($0.upperBound)] },
                        shape: [g.velocity.bins.count, 2])
            try f.write("/groups/grid/velocity_histogram", int64: g.velocity.histogram.map(Int64.init), shape: [127])
            try f.write("/groups/grid/offsets", int64: g.offsets.map(Int64.init), shape: [g.offsets.count])
            try f.write("/groups/grid/notes", int64: g.notes.map(Int64.init), shape: [g.notes.count])
            try f.write("/groups/grid/note_counts", int64: g.noteCounts.flatMap { $0.map(Int64.init) }, shape: [g.noteCounts.count, 128])
            // The style input (GridStyles), only when the model has one: its rule, its names (one
            // per line) and each style's training steps.
            if let s = g.styles {
                try f.setAttribute("/groups/grid", "style_rule", string: s.rule.rawValue)
                try f.setAttribute("/groups/grid", "style_names", string: s.names.joined(separator: "\n"))
                try f.write("/groups/grid/style_steps", int64: s.steps.map(Int64.init), shape: [s.steps.count])
            }
        }

        // Every training setting, as the settings table stores it.
        let hp = "/hyperparameters"
        try f.createGroup(hp)
        for setting in Settings.all {
            switch setting.stored(in: c) {
            case .int(let v): try f.setAttribute(hp, setting.name, int64: v)
            case .double(let v): try f.setAttribute(hp, setting.name, double: v)
            case .string(let v): try f.setAttribute(hp, setting.name, string: v)
            }
        }

        try f.createGroup("/dataset")
        try f.setAttribute("/dataset", "path", string: datasetPath)
        try f.setAttribute("/dataset", "fingerprint", string: datasetFingerprint)
        try f.setAttribute("/dataset", "events", int64: Int64(datasetEvents))
        try f.setAttribute("/dataset", "validation_events", int64: Int64(validationEvents))

        try f.createGroup("/progress")
        try f.setAttribute("/progress", "smoothed_loss", double: smoothedLoss)
        try f.setAttribute("/progress", "best_validation_loss", double: bestValidationLoss)
        try f.setAttribute("/progress", "best_step", int64: Int64(bestStep))
        try f.setAttribute("/progress", "plateau_decays", int64: Int64(schedule.plateauDecays))
        try f.setAttribute("/progress", "plateau_bad_evaluations", int64: Int64(schedule.badEvaluations))
        try f.setAttribute("/progress", "plateau_best", double: schedule.bestMonitored)
        if let pending = pendingEvaluation {
            try f.setAttribute("/progress", "pending_evaluation_step_loss", double: pending.stepLoss ?? .nan)
        }
    }

    static func decode(from f: HDF5Reading, path: String, sealed: Bool) throws -> Checkpoint {
        func bad(_ field: String, _ reason: String) -> CheckpointError { .invalid(path: path, field: field, reason: reason) }
        let format = try f.stringAttribute("/", "format")
        guard format == formatName else {
            throw CheckpointError.notACheckpoint(path: path, reason: "its format attribute is \"\(format)\", not \"\(formatName)\"")
        }
        let version = try f.int64Attribute("/", "format_version")
        guard (1...Int64(formatVersion)).contains(version) else {
            throw CheckpointError.unsupportedVersion(path: path, version: version)
        }
        // Version 2 files are always written sealed: one without its seal has been rewritten.
        if version >= 2, !sealed {
            throw CheckpointError.corrupt(path: path, reason: "a version \(version) checkpoint without its SHA-256 header")
        }
        let hp = "/hyperparameters"
        func int(_ object: String, _ name: String, min: Int64 = 0) throws -> Int {
            let v = try f.int64Attribute(object, name)
            guard v >= min, let i = Int(exactly: v) else { throw bad("\(object) attribute \(name)", "is \(v), out of range") }
            return i
        }
        func finite(_ values: [Float], _ field: String, columns: Int) throws {
            if let i = values.firstIndex(where: { !$0.isFinite }) {
                let at = columns > 1 ? "[\(i / columns), \(i % columns)]" : "[\(i)]"
                throw bad(field + at, "is \(values[i]); a checkpoint holds finite values only")
            }
        }
        // Every training setting from its attribute (the settings table says its type and the value
        // of a checkpoint written before it existed). The seed was only in /rng/seed before version 3.
        func attribute(_ name: String, _ storage: SettingStorage) throws -> SettingValue {
            switch storage {
            case .int: return .int(try f.int64Attribute(hp, name))
            case .double: return .double(try f.doubleAttribute(hp, name))
            case .string: return .string(try f.stringAttribute(hp, name))
            }
        }
        var config = RunConfiguration()
        for setting in Settings.all {
            var stored: SettingValue?
            if try f.hasAttribute(hp, setting.name) {
                stored = try attribute(setting.name, setting.storage)
            } else if setting.name == Settings.seed.name {
                let seed = try f.readUInt64("/rng/seed")
                guard seed.values.count == 1 else { throw bad("/rng/seed", "holds \(seed.values.count) values, expected 1") }
                stored = .int(Int64(bitPattern: seed.values[0]))
            }
            do { try setting.restore(stored, into: &config) } catch let e as SettingDecodingError {
                throw bad("\(hp) attribute \(setting.name)", e.description)
            }
        }
        // Settings drummer no longer has, stored with a value other than off.
        var retiredInUse: [String] = []
        for retired in Settings.retired where try f.hasAttribute(hp, retired.name) {
            let stored = try attribute(retired.name, retired.off.storage)
            if stored != retired.off { retiredInUse.append("\(retired.flag) \(stored)") }
        }
        // The same ranges as the command line (the settings table), before any array is sized from them.
        do { try config.validate() } catch let e as SettingError {
            throw bad(hp, "hold a setting out of range: \(e.description)")
        }
        guard version >= 3 || config.layers == 1 else {
            throw bad("\(hp) attribute layers", "is \(config.layers) in a version \(version) checkpoint (one layer only)")
        }
        let optimizer = config.optimizer

        let notes = try f.readInt64("/vocabulary/ix_to_note").values
        let ticks = try f.readInt64("/vocabulary/ix_to_tick").values
        guard ticks.count <= ModelLimits.maximumTicks else {
            throw bad("/vocabulary/ix_to_tick", "has \(ticks.count) entries, more than \(ModelLimits.maximumTicks)")
        }
        let vocabulary: Vocabulary
        do {
            vocabulary = try Vocabulary(ixToNote: notes.map { Int(truncatingIfNeeded: $0) },
                                        ixToTick: ticks.map { Int(truncatingIfNeeded: $0) })
        } catch {
            throw bad("/vocabulary", "is not a vocabulary: \(error)")
        }
        var groups = ModelGroups(vocabulary: vocabulary)
        // Version 2 files written before the groups existed have no /groups: the original layout.
        if version >= 2, try f.children("/").contains("groups") {
            let members = try f.children("/groups")
            // The event layout's groups: drummer no longer trains or plays that layout.
            for retired in ["position", "lookback", "velocity"] where members.contains(retired) {
                throw bad("/groups/\(retired)", "belongs to the event layout, which drummer no longer reads "
                          + "(docs/research.md, The event layout); checkpoints of the 2017 layout and of the grid read")
            }
            func velocityGroup(bins binsPath: String, histogram histogramPath: String) throws -> VelocityGroup {
                let bins = try f.readInt64(binsPath), histogram = try f.readInt64(histogramPath)
                guard bins.shape.count == 2, bins.shape[1] == 2, bins.values.count == bins.shape[0] * 2, bins.shape[0] <= 127 else {
                    throw bad(binsPath, "has shape \(bins.shape), expected [B, 2] with B ≤ 127")
                }
                guard histogram.values.count == 127, histogram.values.allSatisfy({ (0...Int64(Int32.max)).contains($0) }) else {
                    throw bad(histogramPath, "is not 127 non-negative counts")
                }
                let ranges = stride(from: 0, to: bins.values.count, by: 2).map { (bins.values[$0], bins.values[$0 + 1]) }
                guard ranges.allSatisfy({ (1...127).contains($0.0) && (1...127).contains($0.1) && $0.0 <= $0.1 }) else {
                    throw bad(binsPath, "holds a range outside 1...127")
                }
                do {
                    return try VelocityGroup(bins: ranges.map { Int($0.0)...Int($0.1) }, histogram: histogram.values.map { Int($0) })
                } catch {
                    // Named by the group holding the bins (/groups/grid).
                    throw bad(String(binsPath[..<(binsPath.lastIndex(of: "/") ?? binsPath.endIndex)]), "\(error)")
                }
            }
            if members.contains("grid") {
                let g = "/groups/grid"
                let velocity = try velocityGroup(bins: g + "/velocity_bins", histogram: g + "/velocity_histogram")
                func small(_ path: String) throws -> [Int] {
                    let a = try f.readInt64(path)
                    guard a.shape.count == 1, a.values.count <= 64, a.values.allSatisfy({ (-32_768...32_767).contains($0) }) else {
                        throw bad(path, "has shape \(a.shape) or values out of range")
                    }
                    return a.values.map { Int($0) }
                }
                func noteCounts() throws -> [[Int]] {
                    let a = try f.readInt64(g + "/note_counts")
                    guard a.shape.count == 2, a.shape[1] == 128, a.shape[0] <= 64, a.values.count == a.shape[0] * 128,
                          a.values.allSatisfy({ (0...Int64(Int32.max)).contains($0) }) else {
                        throw bad(g + "/note_counts", "has shape \(a.shape), expected [9, 128] non-negative counts")
                    }
                    return (0..<a.shape[0]).map { r in a.values[(r * 128)..<(r * 128 + 128)].map { Int($0) } }
                }
                var lookback = GridLookback.hitSets
                if try f.hasAttribute(g, "lookback") {
                    let name = try f.stringAttribute(g, "lookback")
                    guard let l = GridLookback(rawValue: name) else {
                        throw bad(g, "has lookback \"\(name)\", expected one of " + GridLookback.allCases.map(\.rawValue).joined(separator: ", "))
                    }
                    lookback = l
                }
                let lookbackBars = try f.children(g).contains("lookback_bars") ? try small(g + "/lookback_bars")
                    : GridGroup.defaultLookbackBars
                var styles: GridStyles?
                if try f.hasAttribute(g, "style_rule") {
                    let name = try f.stringAttribute(g, "style_rule")
                    guard let rule = GridStyleRule(rawValue: name) else {
                        throw bad(g, "has style_rule \"\(name)\", expected one of " + GridStyleRule.allCases.map(\.rawValue).joined(separator: ", "))
                    }
                    let steps = try f.readInt64(g + "/style_steps")
                    guard steps.shape.count == 1, steps.values.allSatisfy({ (0...Int64(Int32.max) * 64).contains($0) }) else {
                        throw bad(g + "/style_steps", "has shape \(steps.shape) or values out of range")
                    }
                    do {
                        styles = try GridStyles(rule: rule, names: try f.stringAttribute(g, "style_names").components(separatedBy: "\n"),
                                                steps: steps.values.map { Int($0) })
                    } catch let e as ModelGroupsError { throw bad(g, e.description) }
                }
                do {
                    groups.grid = try GridGroup(ppq: try int(g, "ppq", min: 4), velocity: velocity, offsets: try small(g + "/offsets"),
                                                notes: try small(g + "/notes"), noteCounts: try noteCounts(),
                                                offsetCoupling: try f.doubleAttribute(g, "offset_coupling"), lookback: lookback,
                                                lookbackBars: lookbackBars, styles: styles)
                } catch let e as ModelGroupsError { throw bad(g, e.description) }
            }
        }
        let shape = groups.shape(hidden: config.hidden, layers: config.layers)
        var parameters: [Float] = []
        parameters.reserveCapacity(shape.parameterCount)
        for m in shape.parameters.matrices {
            let name = "/model/\(m.name)"
            let a = try f.readFloat32(name)
            guard a.shape == [m.rows, m.cols], a.values.count == m.count else {
                var sizes = ""
                if m.name == "Wx" {
                    sizes = " for " + (groups.isOriginalLayout ? "\(shape.notes) notes, \(shape.ticks) ticks"
                        : "input groups " + zip(groups.inputNames, shape.inputGroups).map { "\($0) \($1)" }.joined(separator: ", "))
                        + ", hidden size \(shape.hidden)"
                }
                throw bad(name, "has shape \(a.shape), expected [\(m.rows), \(m.cols)]\(sizes)")
            }
            try finite(a.values, name, columns: m.cols)
            parameters += a.values
        }
        let h = try f.readFloat32("/state/h"), c = try f.readFloat32("/state/c")
        let stateShape = shape.layers == 1 ? [config.batchSize, config.hidden] : [shape.layers, config.batchSize, config.hidden]
        for (name, a) in [("/state/h", h), ("/state/c", c)] {
            guard a.shape == stateShape, a.values.count == stateShape.reduce(1, *) else {
                throw bad(name, "has shape \(a.shape), expected \(stateShape)")
            }
            try finite(a.values, name, columns: config.hidden)
        }
        var slots: [String: [Float]] = [:]
        for name in try f.children("/optimizer") {
            let slot = try f.readFloat32("/optimizer/\(name)")
            guard slot.values.count == parameters.count, slot.shape == [parameters.count] else {
                throw bad("/optimizer/\(name)", "has shape \(slot.shape), expected [\(parameters.count)]")
            }
            try finite(slot.values, "/optimizer/\(name)", columns: 1)
            slots[name] = slot.values
        }
        let kind = try f.stringAttribute("/optimizer", "kind")
        guard kind == optimizer.rawValue else {
            throw bad("/optimizer attribute kind", "is \"\(kind)\" but the hyperparameters say \"\(optimizer.rawValue)\"")
        }
        for name in OptimizerState.slotNames(optimizer) where slots[name] == nil {
            throw bad("/optimizer/\(name)", "is missing (optimizer \(optimizer.rawValue) needs it)")
        }
        let events = try int("/dataset", "events")
        let pointer = try int("/state", "pointer")
        guard pointer <= events else { throw bad("/state attribute pointer", "is \(pointer), beyond the dataset's \(events) events") }
        let state = TrainingState(
            shape: shape, unroll: config.unroll, batch: config.batchSize, parameters: parameters,
            optimizer: OptimizerState(slots: slots), h: h.values, c: c.values,
            step: try int("/state", "step"), epoch: try int("/state", "epoch"), pointer: pointer)
        let rng = try f.readUInt64("/rng/state").values
        guard SeededRNG(stateWords: rng) != nil else { throw bad("/rng/state", "is not a valid generator state (4 words, not all zero)") }
        let smoothed = try f.doubleAttribute("/progress", "smoothed_loss")
        guard smoothed.isFinite else { throw bad("/progress attribute smoothed_loss", "is \(smoothed)") }
        let runID = version >= 2 ? try f.stringAttribute("/", "run_id") : ""
        if version >= 2, !Checkpoint.isValidRunID(runID) {
            throw bad("/ attribute run_id", "is \"\(runID)\", not 32 lowercase hex digits")
        }
        var checkpoint = Checkpoint(
            configuration: config, state: state, groups: groups, rngState: rng,
            datasetPath: try f.stringAttribute("/dataset", "path"),
            datasetFingerprint: try f.stringAttribute("/dataset", "fingerprint"),
            datasetEvents: events, validationEvents: try int("/dataset", "validation_events"),
            smoothedLoss: smoothed,
            schedule: ScheduleProgress(plateauDecays: try int("/progress", "plateau_decays"),
                                       badEvaluations: try int("/progress", "plateau_bad_evaluations"),
                                       bestMonitored: try f.doubleAttribute("/progress", "plateau_best")),
            bestValidationLoss: try f.doubleAttribute("/progress", "best_validation_loss"),
            bestStep: try int("/progress", "best_step", min: -1),
            runID: runID, formatVersion: Int(version),
            createdBy: try f.stringAttribute("/", "created_by"))
        checkpoint.retiredSettingsInUse = retiredInUse
        if try f.hasAttribute("/progress", "pending_evaluation_step_loss") {
            let loss = try f.doubleAttribute("/progress", "pending_evaluation_step_loss")
            checkpoint.pendingEvaluation = PendingEvaluation(stepLoss: loss.isFinite ? loss : nil)
        }
        return checkpoint
    }
}
