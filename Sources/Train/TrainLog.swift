// train_log.csv beside the checkpoints: one row per evaluation, header once,
// appended across resumed runs (rewritten through a temporary file each time).
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
}
