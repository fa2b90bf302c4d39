// `drummer eval`: a model (exported directory or checkpoint) run over a dataset's
// sequence from zero state. The dataset's events are mapped through its own
// vocabulary to MIDI note numbers and tick values, then to the model's indices (a grid
// model reads the hits' drum classes, places in their bars and velocities); notes and ticks
// a 2017-layout model does not know are an error naming them.
import Checkpoints
import DrummerCore
import Encode
import FileOutput
import Foundation
import MIDIParse
import ModelFiles
import Train

/// A model to evaluate, from either kind of file.
public struct EvaluatedModel: Sendable {
    public let weights: LSTMWeights
    public let groups: ModelGroups
    public var vocabulary: Vocabulary { groups.vocabulary }
    public let source: String

    /// A directory is read as an exported model (Wx.bin, Wy.bin, model.json),
    /// a file as a training checkpoint.
    public static func load(path: String) throws -> EvaluatedModel {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            let ext = (path as NSString).pathExtension.lowercased()
            if ext == "h5" || ext == "hdf5" { throw CheckpointError.missing(path: path) }
            throw ModelDirectoryError.missingDirectory(path: path)
        }
        if isDir.boolValue {
            // A checkpoint directory holds many models: which one is the caller's to say.
            if let last = CheckpointDirectory.inPlaceOfModel(path)?.list().last {
                throw CheckpointChoiceError(description: "\(path) is a checkpoint directory, not a model directory: "
                    + "name one of its checkpoints (the latest: \(last.path)), or export one (drummer export \(ShellWords.quoted(path)) -o model)")
            }
            let m = try ModelDirectory.load(path: path)
            return EvaluatedModel(weights: m.weights, groups: m.groups, source: path)
        }
        let m = try CheckpointReader.loadModel(path: path)
        return EvaluatedModel(weights: m.weights, groups: m.groups, source: path)
    }
}

extension CheckpointDirectory {
    /// A checkpoint directory given where a model is asked for: a directory holding checkpoints
    /// and no model.json (an exported model's directory holds one). nil: a model directory, a
    /// file, or nothing there. Every command that takes a model tells the two apart by this.
    public static func inPlaceOfModel(_ path: String) -> CheckpointDirectory? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
              !FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent(ModelDirectory.manifestFile)) else {
            return nil
        }
        let directory = CheckpointDirectory(path: path)
        return directory.list().isEmpty ? nil : directory
    }
}

/// Hits in MIDI terms, for mapping into a model's classes: note numbers, deltas (ticks
/// since the previous hit), and when known each hit's velocity and position in its bar.
public struct HitValues: Sendable {
    public var notes: [Int]
    public var deltas: [Int]
    public var velocities: [Int]?
    /// Ticks from the bar line and the bar's length, at `ppq`.
    public var tickInBar: [Int]?
    public var barTicks: [Int]?
    public var ppq: Int

    public init(notes: [Int], deltas: [Int], velocities: [Int]? = nil, tickInBar: [Int]? = nil, barTicks: [Int]? = nil,
                ppq: Int = 480) {
        self.notes = notes
        self.deltas = deltas
        self.velocities = velocities
        self.tickInBar = tickInBar
        self.barTicks = barTicks
        self.ppq = ppq
    }
}

public enum ModelEvaluation {
    /// The class matrix of `hits` for a model with `groups`; throws naming every note and tick
    /// value outside a 2017-layout model's vocabulary, and a missing position or velocity a grid
    /// model needs.
    public static func classes(_ hits: HitValues, for groups: ModelGroups, source: String) throws -> [Int32] {
        precondition(hits.notes.count == hits.deltas.count, "notes and deltas must pair up")
        if let grid = groups.grid { return try gridClasses(hits, grid: grid, source: source) }
        let index = VocabularyIndex(groups.vocabulary)
        var badNotes = Set<Int>(), badTicks = Set<Int>()
        var noteTick = [Int32]()
        noteTick.reserveCapacity(2 * hits.notes.count)
        for (n, t) in zip(hits.notes, hits.deltas) {
            let a = index.note(n), b = index.tick(t)
            if a == nil { badNotes.insert(n) }
            if b == nil { badTicks.insert(t) }
            noteTick.append(Int32(a ?? 0))
            noteTick.append(Int32(b ?? 0))
        }
        guard badNotes.isEmpty && badTicks.isEmpty else {
            throw DatasetError.outsideVocabulary(path: source, notes: badNotes.sorted(), ticks: badTicks.sorted())
        }
        return noteTick
    }

    /// A grid model's rows for `hits` read as one file (its own notes and deltas decode it: the
    /// grid reads drum classes, not the model's dataset vocabulary).
    static func gridClasses(_ hits: HitValues, grid: GridGroup, source: String) throws -> [Int32] {
        guard let inBar = hits.tickInBar, let bars = hits.barTicks, let v = hits.velocities else {
            throw DatasetError.missingGroup(path: source, group: "grid", file: "positions.npy and velocities.npy")
        }
        guard hits.ppq == grid.ppq else {
            throw DatasetError.invalid(path: source, reason: "read at \(hits.ppq) PPQ; the grid model's steps are at \(grid.ppq)")
        }
        let notes = Array(Set(hits.notes)).sorted(), ticks = Array(Set(hits.deltas)).sorted()
        let vocabulary = try Vocabulary(ixToNote: notes, ixToTick: ticks)
        let index = VocabularyIndex(vocabulary)
        var events = [Int32]()
        events.reserveCapacity(2 * hits.notes.count)
        for (n, t) in zip(hits.notes, hits.deltas) {
            events.append(Int32(index.note(n)!))
            events.append(Int32(index.tick(t)!))
        }
        var onset = 0
        let split = try DatasetSplit(events: events,
                                     positions: zip(inBar, bars).flatMap { [Int32(clamping: $0), Int32(clamping: max(1, $1))] },
                                     velocities: v.map { Int32(clamping: min(127, max(1, $0))) },
                                     onsets: hits.deltas.map { onset += $0; return Int32(clamping: onset) }, path: source)
        let data = try TrainingData(path: source, vocabulary: vocabulary, training: split, validation: nil, ppq: hits.ppq,
                                    files: [DatasetFile(path: source, validation: false, offset: 0, hits: split.count, meter: nil)],
                                    source: source)
        let (classes, files, _) = try data.gridClasses(validation: false, group: grid)
        if let skipped = files.skipped.first {
            throw DatasetError.invalid(path: source, reason: "the grid model reads 4/4 beats only (a pickup and a shorter last bar allowed): \(skipped.reason)")
        }
        return classes
    }

    /// The events of one split of a dataset directory (its training sequence unless `validation`),
    /// in the model's classes.
    public static func events(of data: TrainingData, validation: Bool = false, for model: EvaluatedModel) throws -> [Int32] {
        let split = try requireSplit(of: data, validation: validation)
        if model.groups.grid != nil {
            // The grid reads drum classes: the dataset's own vocabulary decodes its notes.
            var groups = model.groups
            groups.vocabulary = data.vocabulary
            return try data.classes(split, for: groups).classes
        }
        if data.vocabulary == model.vocabulary { return try data.classes(split, for: model.groups).classes }
        var values = HitValues(notes: [], deltas: [], ppq: data.ppq)
        values.notes.reserveCapacity(split.count)
        values.deltas.reserveCapacity(split.count)
        for e in 0..<split.count {
            values.notes.append(data.vocabulary.ixToNote[Int(split.events[2 * e])])
            values.deltas.append(data.vocabulary.ixToTick[Int(split.events[2 * e + 1])])
        }
        values.velocities = split.velocities?.map(Int.init)
        if let p = split.positions {
            values.tickInBar = stride(from: 0, to: p.count, by: 2).map { Int(p[$0]) }
            values.barTicks = stride(from: 1, to: p.count, by: 2).map { Int(p[$0]) }
        }
        return try classes(values, for: model.groups, source: split.path)
    }

    /// A split of `data`, or the error that the dataset has none.
    private static func requireSplit(of data: TrainingData, validation: Bool) throws -> DatasetSplit {
        guard let split = validation ? data.validationSplit : data.training else {
            throw DatasetError.missingFile(path: data.path + "/validation", expected: "no validation split in this dataset")
        }
        return split
    }

    /// `events(of:validation:for:)` and the rows each file of the split gives them, in order: a
    /// grid model's kept files (a start row and one per 16th step; one pass over the files for
    /// both) and the files it leaves out (not 4/4, or spanning too many bars) with why; a
    /// 2017-layout model's files (one row per hit) as the dataset's manifest lists them.
    public static func eventsByFile(of data: TrainingData, validation: Bool = false, for model: EvaluatedModel) throws
        -> (events: [Int32], fileRows: [Int], leftOut: [(path: String, reason: String)])
    {
        if let grid = model.groups.grid {
            _ = try requireSplit(of: data, validation: validation)
            let (classes, files, rows) = try data.gridClasses(validation: validation, group: grid)
            // Files left out (not 4/4, or spanning too many bars) are skipped; when that leaves
            // nothing, say which file and why rather than "0 events".
            if files.files.isEmpty, let skipped = files.skipped.first {
                throw DatasetError.invalid(path: data.path, reason: "no file the grid model reads: \(skipped.path): \(skipped.reason)"
                                           + (files.skipped.count > 1 ? " (and \(files.skipped.count - 1) more left out)" : ""))
            }
            return (classes, rows, files.skipped)
        }
        let events = try events(of: data, validation: validation, for: model)
        let split = validation ? data.validationSplit : data.training
        let files = data.files.filter { $0.validation == validation }.sorted { $0.offset < $1.offset }
        guard !files.isEmpty else {
            throw DatasetError.invalid(path: data.path, reason:
                "lists no files (no manifest.json, as in an original X.npy dataset): --each-file cuts a dataset into the files convert-midi lists")
        }
        var next = 0
        for f in files {
            guard f.offset == next else { break }
            next += f.hits
        }
        guard next == split?.count else {
            throw DatasetError.invalid(path: data.path + "/manifest.json", reason:
                "its files do not cover the \(validation ? "validation" : "training") split's \(split?.count ?? 0) hits one after another: the split cannot be cut into files")
        }
        return (events, files.map(\.hits), [])
    }

    /// The hits of one MIDI file, read as `convert-midi` reads it (as a one-file dataset would
    /// be) at `ppq` (default: the model's, recorded with its position group, else 480) with
    /// `quantize`, in the model's classes.
    public static func events(midiFile path: String, for model: EvaluatedModel, ppq: Int? = nil, quantize: Int? = nil) throws -> [Int32] {
        var settings = HitExtractionSettings()
        settings.ppq = ppq ?? model.groups.ticksPerQuarter
        settings.quantize = quantize
        let hits = try FileHits.read(path: path, settings: settings)
        guard hits.count > 0 else { throw DatasetError.invalid(path: path, reason: "no hits (NOTE ON with velocity > 0 not found)") }
        // A grid model reads every step, empty bars too (a 2017-layout model reads the hits only):
        // a file spanning too many bars is refused before its class matrix is built.
        if model.groups.grid != nil { try hits.checkBarSpan(path: path) }
        return try classes(HitValues(notes: hits.notes, deltas: hits.deltas, velocities: hits.velocities,
                                     tickInBar: hits.tickInBar, barTicks: hits.barTicks, ppq: settings.ppq),
                           for: model.groups, source: path)
    }

    /// Runs the model over `events` (its class matrix) from zero state.
    /// With `fileRows`, each file from its own zero state (`Metrics.evaluate(weights:events:fileRows:)`).
    public static func evaluate(_ model: EvaluatedModel, events: [Int32], fileRows: [Int]? = nil, source: String) throws -> Metrics {
        let k = model.weights.shape.inputGroups.count
        guard events.count / k >= 2 else { throw DatasetError.tooShort(path: source, events: events.count / k) }
        if let fileRows { return Metrics.evaluate(weights: model.weights, events: events, fileRows: fileRows) }
        return Metrics.evaluate(weights: model.weights, events: events)
    }
}

/// A grid model's hits for one drum class, teacher-forced over a class matrix: per 4/4 bar (16
/// steps), the hits it expects (the sum over the steps of the chance that the step's hit set holds
/// the class) against the data's. Equal means the model plays the class as densely as the data
/// when it reads the data; a sampled file sparser than the data then thins on its own draws.
public struct HitCalibration: Codable, Equatable, Sendable {
    public var drumClass: String
    public var predicted: Double
    public var data: Double

    enum CodingKeys: String, CodingKey {
        case drumClass = "class", predicted, data
    }
}

/// A grid model's velocity for one drum class, teacher-forced over a class matrix: the mean of
/// its predicted velocity (the bins' midpoints weighted by the softmax) over the steps the data
/// hits the class, against the mean midpoint of the data's bins there. Equal means the model
/// predicts the class's loudness right when it reads the data; a sampled file louder than
/// the data then gets louder from its own draws.
public struct VelocityCalibration: Codable, Equatable, Sendable {
    public var drumClass: String
    public var hits: Int
    public var predicted: Double
    public var data: Double

    enum CodingKeys: String, CodingKey {
        case drumClass = "class", hits, predicted, data
    }
}

/// `ModelEvaluation.gridCalibration`: hits per bar of every class, velocity of the classes hit.
public struct GridCalibration: Equatable, Sendable {
    public var hits: [HitCalibration]
    public var velocity: [VelocityCalibration]
}

extension ModelEvaluation {
    /// Per drum class, HitCalibration (every class) and VelocityCalibration (the classes with
    /// hits), over `events` (a grid class matrix, rows of the model's input groups) run from zero
    /// state as `evaluate` runs them. A step whose target is the start of the next file counts
    /// for neither side. OpenBLAS runs on one thread meanwhile (the same figures on any machine).
    public static func gridCalibration(weights: LSTMWeights, grid: GridGroup, events: [Int32], fileRows: [Int]? = nil) -> GridCalibration {
        BLASRuntime.onOneThread { calibrate(weights: weights, grid: grid, events: events, fileRows: fileRows) }
    }

    private static func calibrate(weights: LSTMWeights, grid: GridGroup, events: [Int32], fileRows: [Int]?) -> GridCalibration {
        let C = GridGroup.classCount, k = weights.shape.inputGroups.count, V = grid.velocityBins, S = GridGroup.hitSets
        let rows = events.count / k
        // With fileRows, the state is zeroed at each file's first row (the step before it then
        // predicts nothing: its next row is another file's start row, which holds no target).
        precondition(fileRows.map { $0.reduce(0, +) == rows } ?? true, "gridCalibration: file rows")
        let fileStarts = fileRows.map(TrainingData.fileStarts(rows:))
        let zero = [Float](repeating: 0, count: weights.shape.hidden)
        let mids = grid.velocity.bins.map { Double($0.lowerBound + $0.upperBound) / 2 }
        let columns = weights.shape.parameters.head.outputColumns
        let lstm = LSTMInference(weights: weights)
        let setProbs = UnsafeMutableBufferPointer<Float>.allocate(capacity: S), probs = UnsafeMutableBufferPointer<Float>.allocate(capacity: V)
        defer { setProbs.deallocate(); probs.deallocate() }
        var predicted = [Double](repeating: 0, count: C), data = predicted, hits = [Int](repeating: 0, count: C)
        var expectedHits = [Double](repeating: 0, count: C), dataHits = [Int](repeating: 0, count: C), steps = 0
        var marginal = [Double](repeating: 0, count: C)
        for r in 0..<max(0, rows - 1) {
            if fileStarts?[r] == true {
                for layer in 0..<weights.shape.layers { lstm.setState(layer: layer, h: zero, c: zero) }
            }
            for g in 0..<k { lstm.input[g] = events[r * k + g] }
            lstm.step()
            let y = lstm.logits()
            let set = Int(events[(r + 1) * k])
            if set < S {
                Softmax.probabilities(UnsafeBufferPointer(rebasing: y[columns[0]]), into: setProbs)
                var total = 0.0
                for c in 0..<C { marginal[c] = 0 }
                for s in 0..<S {
                    let p = Double(setProbs[s])
                    total += p
                    for c in 0..<C where s & (1 << c) != 0 { marginal[c] += p }
                }
                for c in 0..<C {
                    expectedHits[c] += marginal[c] / total
                    if set & (1 << c) != 0 { dataHits[c] += 1 }
                }
                steps += 1
            }
            for c in 0..<C {
                let bin = Int(events[(r + 1) * k + 1 + c])
                guard bin < V else { continue }  // not hit (or the start of the next file)
                Softmax.probabilities(UnsafeBufferPointer(rebasing: y[columns[1 + c]]), into: probs)
                // Over Σp in double, so that float rounding of the probabilities does not scale the mean.
                var total = 0.0, weighted = 0.0
                for b in 0..<V {
                    total += Double(probs[b])
                    weighted += Double(probs[b]) * mids[b]
                }
                predicted[c] += weighted / total
                data[c] += mids[bin]
                hits[c] += 1
            }
        }
        let bars = Double(max(steps, 1)) / Double(GridGroup.stepsPerBar)
        return GridCalibration(
            hits: (0..<C).map { c in
                HitCalibration(drumClass: GridGroup.classNames[c], predicted: expectedHits[c] / bars, data: Double(dataHits[c]) / bars)
            },
            velocity: (0..<C).filter { hits[$0] > 0 }.map { c in
                VelocityCalibration(drumClass: GridGroup.classNames[c], hits: hits[c],
                                    predicted: predicted[c] / Double(hits[c]), data: data[c] / Double(hits[c]))
            })
    }
}
