// train_log.csv beside the checkpoints: one row per evaluation, header once,
// appended across resumed runs (rewritten through a temporary file each time).
import Checkpoints
import DrummerCore
import Foundation

/// One evaluation of the model during training.
public struct EvaluationRecord: Sendable, Equatable {
    public var step: Int
    public var epoch: Int
    public var smoothedLoss: Double
    public var learningRate: Float
    public var train: Metrics
    public var validation: Metrics?
}

public enum TrainLog {
    public static let fileName = "train_log.csv"
    public static let header = "step,epoch,smoothed_loss,learning_rate,train_loss,train_accuracy,"
        + "train_accuracy_note,train_accuracy_tick,validation_loss,validation_accuracy,"
        + "validation_accuracy_note,validation_accuracy_tick"

    public static func row(_ r: EvaluationRecord) -> String {
        func f(_ x: Double) -> String { String(format: "%.6f", x) }
        var cols = [String(r.step), String(r.epoch), f(r.smoothedLoss), String(r.learningRate),
                    f(r.train.loss), f(r.train.accuracy), f(r.train.accuracyNote), f(r.train.accuracyTick)]
        if let v = r.validation {
            cols += [f(v.loss), f(v.accuracy), f(v.accuracyNote), f(v.accuracyTick)]
        } else {
            cols += ["", "", "", ""]
        }
        return cols.joined(separator: ",")
    }

    /// Appends `record` to `<directory>/train_log.csv`, writing the header when
    /// the file is new.
    public static func append(_ record: EvaluationRecord, directory: String) throws {
        let path = (directory as NSString).appendingPathComponent(fileName)
        var text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        if text.isEmpty { text = header + "\n" }
        if !text.hasSuffix("\n") { text += "\n" }
        text += row(record) + "\n"
        try AtomicOutput.write(Data(text.utf8), to: path)
    }

    /// Drops the rows after `step` (left by a run that went further before this
    /// one resumed from an earlier checkpoint); returns how many were dropped.
    @discardableResult
    public static func truncate(after step: Int, directory: String) throws -> Int {
        let path = (directory as NSString).appendingPathComponent(fileName)
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
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
