// train_log.csv as the report reads it: columns found by header name, so logs from newer
// trainers (extra per-group columns such as validation_loss_velocity) and older ones
// (fewer columns) both draw. Only `step` is required.
import Foundation

/// One checkpoint directory's evaluation log.
public struct TrainingLog: Sendable {
    package static let fileName = "train_log.csv"

    public let path: String
    /// Column names in header order.
    public let columns: [String]
    /// The step of each row.
    public let steps: [Double]
    /// Per column, one value per row; nil where the field is empty or not a finite number.
    public let values: [String: [Double?]]
    /// Per column, the rows whose field is a number that is not finite (nan, inf): nil in
    /// `values`, as nothing can be drawn there, but a figure that was logged (a diverged run
    /// logs nan losses at each evaluation).
    public let nonFinite: [String: Set<Int>]
    /// Rows left out because their step is not a number.
    public let skippedRows: Int

    public var rowCount: Int { steps.count }

    /// The rows of evaluations: those with a training loss (a logged step's row between
    /// evaluations holds the running loss and the rate only); every row in a log without a
    /// train_loss column.
    public var evaluationCount: Int {
        guard let col = values["train_loss"] else { return rowCount }
        let notFinite = nonFinite["train_loss"] ?? []
        return col.indices.filter { col[$0] != nil || notFinite.contains($0) }.count
    }

    /// The first step at which a loss column holds a number that is not finite, how many rows
    /// hold one, and whether no loss is finite from there on (the run diverged; its loss curves
    /// stop there while the rate and accuracy run on). Nil when every loss logged is finite.
    public var nonFiniteLoss: (step: Double, rows: Int, toTheEnd: Bool)? {
        let losses = columns.filter { $0 != "step" && $0.lowercased().contains("loss") }
        let bad = losses.reduce(into: Set<Int>()) { $0.formUnion(nonFinite[$1] ?? []) }
        guard let first = bad.min() else { return nil }
        let finiteAfter = losses.contains { name in
            (values[name] ?? []).dropFirst(first + 1).contains { $0 != nil }
        }
        return (steps[first], bad.count, !finiteAfter)
    }

    /// Parses the text of a log.
    /// - Throws: `TrainingLogError` when the text has no header or no `step` column, or a
    ///   quote is never closed.
    public init(csv text: String, path: String) throws {
        let table: CSVTable
        do { table = try CSVTable.parse(text) } catch let e as CSVError {
            throw TrainingLogError.badCSV(path: path, message: e.description)
        }
        guard !table.header.isEmpty else { throw TrainingLogError.empty(path: path) }
        guard let stepIndex = table.header.firstIndex(of: "step") else {
            throw TrainingLogError.noStepColumn(path: path, header: table.header)
        }
        self.path = path
        columns = table.header
        var steps: [Double] = []
        var values: [String: [Double?]] = [:]
        var nonFinite: [String: Set<Int>] = [:]
        for name in table.header { values[name] = [] }
        var skipped = 0
        for row in table.rows {
            guard stepIndex < row.count, let step = Self.number(row[stepIndex]) else {
                skipped += 1
                continue
            }
            for (i, name) in table.header.enumerated() {
                let field = i < row.count ? row[i].trimmingCharacters(in: .whitespaces) : ""
                values[name, default: []].append(Self.number(field))
                if let v = Double(field), !v.isFinite { nonFinite[name, default: []].insert(steps.count) }
            }
            steps.append(step)
        }
        self.steps = steps
        self.values = values
        self.nonFinite = nonFinite
        skippedRows = skipped
    }

    /// Reads `path`.
    public static func load(path: String) throws -> TrainingLog {
        guard FileManager.default.fileExists(atPath: path) else { throw TrainingLogError.missing(path: path) }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw TrainingLogError.unreadable(path: path, message: error.localizedDescription)
        }
        return try TrainingLog(csv: String(decoding: data, as: UTF8.self), path: path)
    }

    static func number(_ field: String) -> Double? {
        guard let v = Double(field.trimmingCharacters(in: .whitespaces)), v.isFinite else { return nil }
        return v
    }

    /// (step, value) for every row where `column` has a value.
    public func series(_ column: String) -> [(x: Double, y: Double)] {
        guard let col = values[column] else { return [] }
        var out: [(x: Double, y: Double)] = []
        for (i, v) in col.enumerated() { if let v { out.append((steps[i], v)) } }
        return out
    }

    /// Columns with at least one value whose name says loss (train_loss, validation_loss,
    /// smoothed_loss, validation_loss_velocity, ...), in header order.
    public var lossColumns: [String] { plotted { $0.contains("loss") } }

    /// Columns with at least one value whose name says accuracy, in header order.
    public var accuracyColumns: [String] { plotted { $0.contains("accuracy") } }

    /// Learning-rate columns (learning_rate, or lr / per-group rates), in header order.
    public var learningRateColumns: [String] {
        plotted { $0 == "lr" || $0.contains("learning_rate") }
    }

    private func plotted(_ match: (String) -> Bool) -> [String] {
        columns.filter { $0 != "step" && match($0.lowercased()) && (values[$0]?.contains { $0 != nil } ?? false) }
    }

    /// The row with the lowest `validation_loss` (the first of equals), if any row has one.
    public var bestValidation: (row: Int, step: Double, loss: Double)? {
        guard let col = values["validation_loss"] else { return nil }
        var best: (row: Int, step: Double, loss: Double)?
        for (i, v) in col.enumerated() {
            if let v, v < (best?.loss ?? .infinity) { best = (i, steps[i], v) }
        }
        return best
    }
}

public enum TrainingLogError: Error, Equatable, CustomStringConvertible {
    case missing(path: String)
    case unreadable(path: String, message: String)
    case empty(path: String)
    case noStepColumn(path: String, header: [String])
    case badCSV(path: String, message: String)

    public var description: String {
        switch self {
        case .missing(let p): return "\(p): no such file"
        case .unreadable(let p, let m): return "\(p): cannot read: \(m)"
        case .empty(let p): return "\(p): empty file (no header, no rows)"
        case .noStepColumn(let p, let h):
            return "\(p): no \"step\" column in the header (found: \(h.prefix(8).joined(separator: ", ")))"
        case .badCSV(let p, let m): return "\(p): not a valid CSV file: \(m)"
        }
    }
}
