// events.npy (and X.npy) of one split, written by several threads at once: every file's
// rows have a known place (the split's row offsets), so each thread encodes a contiguous
// run of files and writes its rows there with pwrite. Rows go out in batches, so neither
// the int32 rows nor the one-hot matrix is ever held whole, and the bytes do not depend on
// the number of threads.
//
// X.npy is float32 [N, notes + ticks], row i one-hot in both halves (the original
// project's layout); for the Groove corpus it is about 1.8 GB.
import Dispatch
import Foundation
import Synchronization

struct EventsWriter {
    /// Rows encoded before they are written (512 KB of int32 pairs).
    static let batchRows = 1 << 16

    let notes: Int
    let ticks: Int
    let oneHot: Bool

    /// Writes `dir/events.npy` (and `X.npy`) with `total` rows: file k of `files` starts at
    /// row `offsets[k]`; `encode(k, &rows)` replaces `rows` with its (note, tick) index pairs.
    /// `prefix` names the files in errors.
    func write(dir: URL, prefix: String, total: Int, offsets: [Int], threads: Int,
               encode: @escaping @Sendable (Int, inout [Int32]) -> Void) throws {
        let width = notes + ticks
        let events = try OutputFile(path: dir.appendingPathComponent("events.npy").path, name: prefix + "events.npy")
        let eventsHeader = try NPY.header(dtype: .int32, shape: [total, 2])
        try events.write(eventsHeader)
        var x: OutputFile?
        var xHeader = Data()
        if oneHot {
            x = try OutputFile(path: dir.appendingPathComponent("X.npy").path, name: prefix + "X.npy")
            xHeader = try NPY.header(dtype: .float32, shape: [total, width])
            try x!.write(xHeader)
        }
        let files = offsets.count
        let workers = max(1, min(threads, files))
        // Contiguous runs of files with about the same number of rows each.
        var bounds = [0]
        for w in 1..<workers {
            let target = total * w / workers
            var lo = bounds[w - 1], hi = files
            while lo < hi {
                let mid = (lo + hi) / 2
                if offsets[mid] < target { lo = mid + 1 } else { hi = mid }
            }
            bounds.append(lo)
        }
        bounds.append(files)
        let failure = Mutex<OutputWriteError?>(nil)
        let xFile = x, eventsStart = eventsHeader.count, xStart = xHeader.count, notes = self.notes, runs = bounds
        let run: @Sendable (Int) -> Void = { w in
            do {
                var rows = [Int32](), fileRows = [Int32]()
                rows.reserveCapacity(2 * Self.batchRows)
                var oneHotBuffer = [Float]()
                var row = runs[w] < files ? offsets[runs[w]] : 0
                func flush() throws {
                    guard !rows.isEmpty else { return }
                    try rows.withUnsafeBytes { try events.write($0, at: eventsStart + row * 8) }
                    if let xFile {
                        try Self.writeOneHot(rows, notes: notes, width: width, to: xFile, at: xStart + row * width * 4,
                                             buffer: &oneHotBuffer)
                    }
                    row += rows.count / 2
                    rows.removeAll(keepingCapacity: true)
                }
                for k in runs[w]..<runs[w + 1] {
                    encode(k, &fileRows)
                    rows += fileRows
                    if rows.count >= 2 * Self.batchRows { try flush() }
                    if failure.withLock({ $0 != nil }) { return }
                }
                try flush()
            } catch let e as OutputWriteError {
                failure.withLock { if $0 == nil { $0 = e } }
            } catch {
                failure.withLock { if $0 == nil { $0 = OutputWriteError(file: prefix + "events.npy", code: EIO) } }
            }
        }
        if workers == 1 { run(0) } else { DispatchQueue.concurrentPerform(iterations: workers, execute: run) }
        if let e = failure.withLock({ $0 }) { throw e }
        try events.close()
        try x?.close()
    }

    /// `rows` as one-hot float32 rows written from byte `offset`, about 8 MB per write.
    static func writeOneHot(_ rows: [Int32], notes: Int, width: Int, to file: OutputFile, at offset: Int,
                            buffer: inout [Float]) throws {
        let n = rows.count / 2
        let batch = max(1, min(n, (8 << 20) / max(1, width * 4)))
        if buffer.count < batch * width { buffer = [Float](repeating: 0, count: batch * width) }
        var row = 0
        while row < n {
            let m = min(batch, n - row)
            for r in 0..<m {
                buffer[r * width + Int(rows[2 * (row + r)])] = 1
                buffer[r * width + notes + Int(rows[2 * (row + r) + 1])] = 1
            }
            try buffer.withUnsafeBytes {
                try file.write(UnsafeRawBufferPointer(rebasing: $0[0..<(m * width * 4)]), at: offset + row * width * 4)
            }
            for r in 0..<m {
                buffer[r * width + Int(rows[2 * (row + r)])] = 0
                buffer[r * width + notes + Int(rows[2 * (row + r) + 1])] = 0
            }
            row += m
        }
    }
}
