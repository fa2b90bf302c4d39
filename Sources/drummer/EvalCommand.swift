// `drummer eval`: loss and accuracy of a model over a dataset or a MIDI file.
import ArgumentParser
import Checkpoints
import DrummerCore
import Foundation
import ModelFiles
import Train
import FileOutput
import TrainRun

struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Loss and accuracy of a model over a sequence, predicting each event from the ones before it.",
        discussion: """
            MODEL is an exported model directory or a training checkpoint (.h5). A grid model runs \
            over each file of a dataset from a zero state, as sampling starts a file and as the \
            training log's validation loss reads them (many files side by side on two threads); a \
            model of the 2017 layout runs from a zero state over the whole sequence, or with \
            --each-file over each file. Prints the predictions made, the mean loss (negative \
            log-likelihood of note + tick, nats per prediction) and the note, tick and joint accuracy, \
            and the loss over every output group (loss_all). A grid model prints its loss per 16th step, the hit set's loss and \
            accuracy, and per drum class the hits per bar it expects against the data's (--json: \
            hits_by_class) and the mean velocity it predicts against the data's (both as the \
            velocity bins' midpoints; --json: velocity_by_class): a model that predicts the density \
            and loudness right here but samples sparser or louder files drifts on its own draws.
            """)

    @Argument(help: "Exported model directory (Wx.bin, Wy.bin, model.json), the name of an installed one (groove: see docs/install.md), or checkpoint file (.h5).")
    var model: String

    @Option(help: "Dataset directory (convert-midi output; use DIR/validation for its validation set) or a MIDI file, converted as convert-midi converts it (see --ppq, --quantize).")
    var data: String

    @OptionGroup var reading: MIDIReadOptions

    @Flag(name: .customLong("each-file"), help: "For a dataset and a model of the 2017 layout: run the model over each of its files from a zero state, as sampling starts a file (default: the files one after another, the state carried from one to the next, as its training log's validation loss reads them; a grid model always reads each file from a zero state).")
    var eachFile = false

    @Flag(help: "Print one JSON object with keys events, loss, accuracy, accuracy_note, accuracy_tick, loss_note, loss_tick, loss_all; for a grid model events, loss, loss_all, loss_hits, accuracy_hits, hits_by_class, velocity_by_class, files and left_out (docs/training.md).")
    var json = false

    func validate() throws {
        guard !model.isEmpty else { throw ValidationError("MODEL must not be empty") }
        guard !data.isEmpty else { throw ValidationError("--data must not be empty") }
    }

    func run() throws {
        // Ctrl-C, SIGTERM and SIGHUP end the command at once, removing any output in progress.
        InterruptCleanup.install()
        let path = try ModelLocator.resolve(model)
        try ModelSource.checkRoom(path)
        let m = try EvaluatedModel.load(path: path)
        let (events, files, leftOut) = try EvalInput.events(path: data, model: m, ppq: reading.ppq, quantize: reading.quantize,
                                                            eachFile: eachFile || m.groups.grid != nil)
        // Files the grid model cannot read (not 4/4, too long) are said, not dropped unsaid.
        if let first = leftOut.first {
            Console.writeError(Data(("note: \(leftOut.count) file\(leftOut.count == 1 ? "" : "s") of \(data) left out: \(first.path): \(first.reason)"
                                     + (leftOut.count > 1 ? " (and \(leftOut.count - 1) more)" : "") + "\n").utf8))
        }
        let metrics = try ModelEvaluation.evaluate(m, events: events, fileRows: files, source: data)
        let calibration = m.groups.grid.map { ModelEvaluation.gridCalibration(weights: m.weights, grid: $0, events: events, fileRows: files) }
        let dataLine = "data \(data)" + (files.map { " (\($0.count) file\($0.count == 1 ? "" : "s"), each from a zero state"
            + (leftOut.isEmpty ? "" : "; \(leftOut.count) left out") + ")" } ?? "")
        if json {
            Console.write(try JSONOutput.encode(EvalJSON(metrics: metrics, calibration: calibration, files: files?.count ?? 1,
                                                         leftOut: leftOut.map { EvalJSON.LeftOut(path: $0.path, reason: $0.reason) })))
        } else {
            if let calibration {
                print("model \(model): grid layout, hidden size \(m.weights.shape.hidden)")
                print(dataLine)
                print("predictions \(metrics.events) (16th-note steps)")
                print(String(format: "loss %.6f nats per step (hit set + velocity and offset of each hit)", metrics.loss))
                print(String(format: "loss_hits %.6f", metrics.lossNote))
                print(String(format: "accuracy_hits %.4f", metrics.accuracyNote))
                print("hits per bar by class, the model reading the data: predicted / data")
                for h in calibration.hits {
                    print("  \(h.drumClass) " + String(format: "%.2f / %.2f", h.predicted, h.data))
                }
                print(String(format: "  all %.2f / %.2f", calibration.hits.map(\.predicted).reduce(0, +), calibration.hits.map(\.data).reduce(0, +)))
                print("velocity by class, the model reading the data (mean of the bins' midpoints): predicted / data, hits")
                for v in calibration.velocity {
                    print("  \(v.drumClass) " + String(format: "%.1f / %.1f, %d", v.predicted, v.data, v.hits))
                }
                return
            }
            print("model \(model): \(m.vocabulary.notes) notes, \(m.vocabulary.ticks) ticks, hidden size \(m.weights.shape.hidden)")
            print(dataLine)
            print("predictions \(metrics.events)")
            print(String(format: "loss %.6f nats per prediction (note + tick)", metrics.loss))
            print(String(format: "accuracy %.4f (note and tick)", metrics.accuracy))
            print(String(format: "accuracy_note %.4f", metrics.accuracyNote))
            print(String(format: "accuracy_tick %.4f", metrics.accuracyTick))
            print(String(format: "loss_all %.6f nats per prediction (every output group)", metrics.lossAll))
        }
    }
}

/// How eval and encode read a MIDI file given as --data: the model's dataset settings.
struct MIDIReadOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "For a MIDI file: ticks per quarter note to read it at (default: the model's, recorded with its grid group, else 480).")
    var ppq: Int?

    @Option(parsing: .unconditional, help: "For a MIDI file: snap onsets to this many ticks, as convert-midi --quantize does (give the model's dataset setting, e.g. 30 for models/groove).")
    var quantize: Int?

    func validate() throws {
        if let p = ppq, !(1...32_767).contains(p) { throw ValidationError("--ppq must be between 1 and 32767, got \(p)") }
        if let q = quantize, !(1...1_048_576).contains(q) { throw ValidationError("--quantize must be between 1 and 1048576, got \(q)") }
    }
}

/// The evaluation sequence of `--data`, in the model's indices; with `eachFile`, the rows of
/// each of a dataset's files (nil for a MIDI file: one file).
enum EvalInput {
    static func events(path: String, model: EvaluatedModel, ppq: Int?, quantize: Int?, eachFile: Bool = false) throws
        -> (events: [Int32], fileRows: [Int]?, leftOut: [(path: String, reason: String)])
    {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
            guard ppq == nil, quantize == nil else {
                throw ValidationError("--ppq and --quantize apply to a MIDI file; a dataset was converted with its own settings")
            }
            // A split's files are in the dataset's manifest.json, beside validation/: DIR/validation
            // is read as DIR's validation split (a grid model needs the files; --each-file too).
            let parent = PathNames.parent(of: path)
            let split = (path as NSString).lastPathComponent == "validation"
            let parentManifest = FileManager.default.fileExists(atPath: (parent as NSString).appendingPathComponent("manifest.json"))
            let validation = (model.groups.grid != nil || eachFile) && split && parentManifest
            if model.groups.grid != nil, split, !parentManifest,
               FileManager.default.fileExists(atPath: (parent as NSString).appendingPathComponent("events.npy")),
               !FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent("manifest.json")) {
                throw CommandFailure("\((parent as NSString).appendingPathComponent("manifest.json")): no such file: a grid model "
                    + "reads the validation split's files from its dataset's manifest.json; convert the dataset again with this drummer")
            }
            let data = try TrainingData.load(path: validation ? parent : path)
            if eachFile {
                let (events, rows, leftOut) = try ModelEvaluation.eventsByFile(of: data, validation: validation, for: model)
                return (events, rows, leftOut)
            }
            return (try ModelEvaluation.events(of: data, validation: validation, for: model), nil, [])
        }
        return (try ModelEvaluation.events(midiFile: path, for: model, ppq: ppq, quantize: quantize), nil, [])
    }
}

/// `eval --json`: the metrics' keys; for a grid model the keys of its text output instead (its
/// first output group is the hit set, not a note, and it has no tick group: the 2017 layout's
/// note, tick and joint figures would name other things), with `hits_by_class` and
/// `velocity_by_class`.
struct EvalJSON: Encodable {
    let metrics: Metrics
    let calibration: GridCalibration?
    /// A grid model's files read, each from a zero state (a MIDI file is one).
    let files: Int?
    /// A grid model's files left out of a dataset, with why.
    let leftOut: [LeftOut]

    struct LeftOut: Encodable {
        let path: String
        let reason: String
    }

    enum CodingKeys: String, CodingKey {
        case events, loss, lossAll = "loss_all", lossHits = "loss_hits", accuracyHits = "accuracy_hits"
        case hitsByClass = "hits_by_class", velocityByClass = "velocity_by_class", files, leftOut = "left_out"
    }

    func encode(to encoder: Encoder) throws {
        guard let calibration else { return try metrics.encode(to: encoder) }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(metrics.events, forKey: .events)
        try c.encode(metrics.loss, forKey: .loss)
        try c.encode(metrics.lossAll, forKey: .lossAll)
        try c.encode(metrics.lossNote, forKey: .lossHits)
        try c.encode(metrics.accuracyNote, forKey: .accuracyHits)
        try c.encode(calibration.hits, forKey: .hitsByClass)
        try c.encode(calibration.velocity, forKey: .velocityByClass)
        try c.encodeIfPresent(files, forKey: .files)
        try c.encode(leftOut, forKey: .leftOut)
    }
}
