// events.npy (and X.npy) of one split, streamed: rows go to disk in batches as they are
// encoded, so neither the int32 rows nor the one-hot matrix is ever held whole.
//
// X.npy is float32 [N, notes + ticks], row i one-hot in both halves (the original
// project's layout); for the Groove corpus it is about 1.8 GB.
import Foundation

final class EventsWriter {
    private let events: OutputFile
    private let oneHot: OutputFile?
    private let notes: Int
    private let width: Int
    /// (note index, tick index) pairs not yet written.
    private var rows: [Int32] = []
    private var written = 0
    let count: Int
    static let batchRows = 1 << 16

    /// Creates `dir/events.npy` (and `dir/X.npy`) for `count` rows; `prefix` names them in errors.
    init(dir: URL, prefix: String, count: Int, notes: Int, ticks: Int, oneHot: Bool) throws {
        self.count = count
        self.notes = notes
        width = notes + ticks
        events = try OutputFile(path: dir.appendingPathComponent("events.npy").path, name: prefix + "events.npy")
        try events.write(try NPY.header(dtype: .int32, shape: [count, 2]))
        if oneHot {
            let x = try OutputFile(path: dir.appendingPathComponent("X.npy").path, name: prefix + "X.npy")
            try x.write(try NPY.header(dtype: .float32, shape: [count, notes + ticks]))
            self.oneHot = x
        } else {
            self.oneHot = nil
        }
        rows.reserveCapacity(2 * Self.batchRows)
    }

    /// Appends (note index, tick index) pairs.
    func append(_ pairs: UnsafeBufferPointer<Int32>) throws {
        rows.append(contentsOf: pairs)
        if rows.count >= 2 * Self.batchRows { try flush() }
    }

    private func flush() throws {
        guard !rows.isEmpty else { return }
        try rows.withUnsafeBytes { try events.write($0) }
        if let oneHot { try writeOneHot(oneHot) }
        written += rows.count / 2
        rows.removeAll(keepingCapacity: true)
    }

    /// The buffered rows as one-hot float32 rows, about 8 MB per write.
    private func writeOneHot(_ file: OutputFile) throws {
        let n = rows.count / 2
        let batch = max(1, min(n, (8 << 20) / max(1, width * 4)))
        var buffer = [Float](repeating: 0, count: batch * width)
        var row = 0
        while row < n {
            let m = min(batch, n - row)
            for r in 0..<m {
                buffer[r * width + Int(rows[2 * (row + r)])] = 1
                buffer[r * width + notes + Int(rows[2 * (row + r) + 1])] = 1
            }
            try buffer.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[0..<(m * width * 4)])) }
            for r in 0..<m {
                buffer[r * width + Int(rows[2 * (row + r)])] = 0
                buffer[r * width + notes + Int(rows[2 * (row + r) + 1])] = 0
            }
            row += m
        }
    }

    /// Writes what is buffered and closes the files; the row count must be the one announced.
    func finish() throws {
        try flush()
        precondition(written == count, "events.npy: wrote \(written) rows, announced \(count)")
        try events.close()
        try oneHot?.close()
    }
}
