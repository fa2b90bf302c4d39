// train_log.csv beside the checkpoints: one row per evaluation, and one per logged step
// (--log-every) between them with the running loss and the rate only (its evaluation fields
// empty); header once, appended across resumed runs (rewritten through a temporary file each
// time).
import Checkpoints
import DrummerCore
import Foundation
import Train
import FileOutput

/// One evaluation of the model during training.
public struct EvaluationRecord: Sendable, Equatable {
    public var step: Int
    public var epoch: Int
    public var smoothedLoss: Double
    public var learningRate: Float
    public var train: Metrics
    public var validation: Metrics?
    /// The loss of the step's own batch (the progress line's "loss"), when the step was trained here.
    public var stepLoss: Double? = nil
}

/// A logged step between evaluations: where the run is and its running (smoothed) loss.
public struct ProgressRecord: Sendable, Equatable {
    public var step: Int
    public var epoch: Int
    public var smoothedLoss: Double
    public var learningRate: Float
    /// The loss of the step's own batch (the progress line's "loss").
    public var stepLoss: Double
}

/// A train_log.csv that this drummer did not write.
public struct TrainLogError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let problem: String
    public var description: String {
        "\(path): \(problem): not a drummer training log; move it away to train in this directory"
    }
}

public enum TrainLog {
    package static let fileName = "train_log.csv"
    /// `*_loss` is what the run reports (the 2017 layout: note + tick; a grid model: every output
    /// group per 16th step), `*_accuracy` the first groups' (note and tick; a grid model's hit
    /// set); the velocity columns are empty (they were the retired event layout's); `*_loss_all`
    /// (every output group: what training minimises) follows, then `step_loss`, the loss of the
    /// row's step's own batch (one batch: noisy, but free of the smoothed loss's start value).
    /// A grid run's train figures are of a sample of the training files (TrainingRun.evaluationSets).
    public static let header = "step,epoch,smoothed_loss,learning_rate,train_loss,train_accuracy,"
        + "train_accuracy_note,train_accuracy_tick,validation_loss,validation_accuracy,"
        + "validation_accuracy_note,validation_accuracy_tick,"
        + "train_loss_velocity,train_accuracy_velocity,validation_loss_velocity,validation_accuracy_velocity,"
        + "train_loss_all,validation_loss_all,step_loss"

    public static func row(_ r: EvaluationRecord) -> String {
        func f(_ x: Double) -> String { String(format: "%.6f", x) }
        var cols = [String(r.step), String(r.epoch), f(r.smoothedLoss), String(r.learningRate),
                    f(r.train.loss), f(r.train.accuracy), f(r.train.accuracyNote), f(r.train.accuracyTick)]
        if let v = r.validation {
            cols += [f(v.loss), f(v.accuracy), f(v.accuracyNote), f(v.accuracyTick)]
        } else {
            cols += ["", "", "", ""]
        }
        // The velocity columns were the event layout's (docs/research.md): kept, empty, so that a
        // log keeps its columns across resumes.
        cols += ["", "", "", "",
                 f(r.train.lossAll), r.validation.map { f($0.lossAll) } ?? "", r.stepLoss.map(f) ?? ""]
        return cols.joined(separator: ",")
    }

    /// A logged step's row: step, epoch, smoothed loss, rate and the step's batch loss; every
    /// evaluation field empty.
    public static func row(_ r: ProgressRecord) -> String {
        let fields = [String(r.step), String(r.epoch), String(format: "%.6f", r.smoothedLoss), String(r.learningRate)]
        let empty = [String](repeating: "", count: header.split(separator: ",").count - fields.count - 1)
        return (fields + empty + [String(format: "%.6f", r.stepLoss)]).joined(separator: ",")
    }

    /// Appends a logged step's row (`row(_: ProgressRecord)`).
    public static func append(progress record: ProgressRecord, directory: String) throws {
        try append(line: row(record), directory: directory)
    }

    /// Appends `record` to `<directory>/train_log.csv`, writing the header when
    /// the file is new.
    public static func append(_ record: EvaluationRecord, directory: String) throws {
        try append(line: row(record), directory: directory)
    }

    private static func append(line: String, directory: String) throws {
        let path = (directory as NSString).appendingPathComponent(fileName)
        var text = try existing(path) ?? ""
        if text.isEmpty { text = header + "\n" }
        text = upgraded(text)
        if !text.hasSuffix("\n") { text += "\n" }
        text += line + "\n"
        try AtomicOutput.write(Data(text.utf8), to: path)
    }

    /// The log at `path` (nil: none), refused when this drummer cannot have written it: not
    /// UTF-8 text, or a first line that is not the header or an older drummer's shorter one.
    /// Appending to it would put rows under another file's header; replacing it would lose it.
    static func existing(_ path: String) throws -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let text = String(data: data, encoding: .utf8) else {
            throw TrainLogError(path: path, problem: "is not UTF-8 text")
        }
        let first = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard first.isEmpty || first == header || header.hasPrefix(first + ",") else {
            throw TrainLogError(path: path, problem: "its first line is not the log's header (step,epoch,smoothed_loss,…): \"\(first.prefix(60))\"")
        }
        return text
    }

    /// A log written with fewer columns (by an older drummer, before the velocity and
    /// all-groups columns) gets the current header, its rows padded with empty cells.
    static func upgraded(_ text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard let first = lines.first, first != header, header.hasPrefix(first + ",") else { return text }
        let missing = header.split(separator: ",").count - first.split(separator: ",").count
        lines[0] = header
        for i in lines.indices.dropFirst() { lines[i] += String(repeating: ",", count: missing) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Drops the rows after `step` (left by a run that went further before this
    /// one resumed from an earlier checkpoint); returns how many were dropped.
    @discardableResult
    public static func truncate(after step: Int, directory: String) throws -> Int {
        let path = (directory as NSString).appendingPathComponent(fileName)
        guard let text = try existing(path) else { return 0 }
        var kept: [Substring] = [], dropped = 0
        for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            if i > 0, let s = line.split(separator: ",").first.flatMap({ Int($0) }), s > step {
                dropped += 1
            } else {
                kept.append(line)
            }
        }
        if dropped > 0 {
            try AtomicOutput.write(Data((kept.joined(separator: "\n") + "\n").utf8), to: path)
        }
        return dropped
    }
}
