// X.npy, streamed to disk: float32 [N, notes + ticks], row i one-hot in both halves
// (the original project's layout). For the Groove corpus this is about 1.9 GB, so rows
// are written in batches and never held in memory at once.
import Foundation

enum OneHotWriter {
    /// `rows` holds (note index, tick index) pairs.
    static func write(rows: [Int32], notes: Int, ticks: Int, to path: String) throws {
        let count = rows.count / 2
        let width = notes + ticks
        let header = try NPY.header(dtype: .float32, shape: [count, width])
        guard FileManager.default.createFile(atPath: path, contents: header) else {
            throw ConversionError.output(path: path, message: "cannot create the file")
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seekToEnd()
        } catch {
            throw ConversionError.output(path: path, message: "cannot open for writing: \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        let batch = max(1, min(count, (8 << 20) / max(1, width * 4)))  // about 8 MB per write
        var buffer = [Float](repeating: 0, count: batch * width)
        var row = 0
        while row < count {
            let n = min(batch, count - row)
            for r in 0..<n {
                buffer[r * width + Int(rows[2 * (row + r)])] = 1
                buffer[r * width + notes + Int(rows[2 * (row + r) + 1])] = 1
            }
            do {
                try buffer.withUnsafeBytes { raw in
                    try handle.write(contentsOf: Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: raw.baseAddress!),
                                                      count: n * width * 4, deallocator: .none))
                }
            } catch {
                throw ConversionError.output(path: path, message: "cannot write: \(error.localizedDescription)")
            }
            for r in 0..<n {
                buffer[r * width + Int(rows[2 * (row + r)])] = 0
                buffer[r * width + notes + Int(rows[2 * (row + r) + 1])] = 0
            }
            row += n
        }
    }
}
