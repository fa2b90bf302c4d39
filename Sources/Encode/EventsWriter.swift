// events.npy, velocities.npy, positions.npy, onsets.npy (and X.npy) of one split, written by several
// threads at once: every file's
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
    /// Rows encoded before they are written (1.3 MB of int32 rows).
    static let batchRows = 1 << 16
    /// Int32 values per encoded hit: note index, tick index (events.npy), velocity
    /// (velocities.npy), ticks from the bar line, bar length (positions.npy), ticks from the
    /// file's start (onsets.npy).
    static let columns = 6

    let notes: Int
    let ticks: Int
    let oneHot: Bool

    /// Writes `dir/events.npy`, `velocities.npy`, `positions.npy`, `onsets.npy` (and `X.npy`) with `total`
    /// rows: file k of `files` starts at row `offsets[k]`; `encode(k, &rows)` replaces `rows`
    /// with its hits, `columns` values each. `prefix` names the files in errors.
    func write(dir: URL, prefix: String, total: Int, offsets: [Int], threads: Int,
               encode: @escaping @Sendable (Int, inout [Int32]) -> Void) throws {
        let width = notes + ticks
        let events = try OutputFile(path: dir.appendingPathComponent("events.npy").path, name: prefix + "events.npy")
        let eventsHeader = try NPY.header(dtype: .int32, shape: [total, 2])
        try events.write(eventsHeader)
        let velocities = try OutputFile(path: dir.appendingPathComponent("velocities.npy").path, name: prefix + "velocities.npy")
        let velocitiesHeader = try NPY.header(dtype: .int32, shape: [total])
        try velocities.write(velocitiesHeader)
        let positions = try OutputFile(path: dir.appendingPathComponent("positions.npy").path, name: prefix + "positions.npy")
        let positionsHeader = try NPY.header(dtype: .int32, shape: [total, 2])
        try positions.write(positionsHeader)
        let onsets = try OutputFile(path: dir.appendingPathComponent("onsets.npy").path, name: prefix + "onsets.npy")
        let onsetsHeader = try NPY.header(dtype: .int32, shape: [total])
        try onsets.write(onsetsHeader)
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
        let velocitiesStart = velocitiesHeader.count, positionsStart = positionsHeader.count, onsetsStart = onsetsHeader.count
        let C = Self.columns
        let run: @Sendable (Int) -> Void = { w in
            do {
                var rows = [Int32](), fileRows = [Int32]()
                rows.reserveCapacity(C * Self.batchRows)
                var pairs = [Int32](), singles = [Int32](), places = [Int32](), times = [Int32]()
                var oneHotBuffer = [Float]()
                var row = runs[w] < files ? offsets[runs[w]] : 0
                func flush() throws {
                    guard !rows.isEmpty else { return }
                    let n = rows.count / C
                    pairs.removeAll(keepingCapacity: true)
                    singles.removeAll(keepingCapacity: true)
                    places.removeAll(keepingCapacity: true)
                    times.removeAll(keepingCapacity: true)
                    for r in 0..<n {
                        pairs.append(rows[C * r]); pairs.append(rows[C * r + 1])
                        singles.append(rows[C * r + 2])
                        places.append(rows[C * r + 3]); places.append(rows[C * r + 4])
                        times.append(rows[C * r + 5])
                    }
                    try pairs.withUnsafeBytes { try events.write($0, at: eventsStart + row * 8) }
                    try singles.withUnsafeBytes { try velocities.write($0, at: velocitiesStart + row * 4) }
                    try places.withUnsafeBytes { try positions.write($0, at: positionsStart + row * 8) }
                    try times.withUnsafeBytes { try onsets.write($0, at: onsetsStart + row * 4) }
                    if let xFile {
                        try Self.writeOneHot(pairs, notes: notes, width: width, to: xFile, at: xStart + row * width * 4,
                                             buffer: &oneHotBuffer)
                    }
                    row += n
                    rows.removeAll(keepingCapacity: true)
                }
                for k in runs[w]..<runs[w + 1] {
                    encode(k, &fileRows)
                    rows += fileRows
                    if rows.count >= C * Self.batchRows { try flush() }
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
        try velocities.close()
        try positions.close()
        try onsets.close()
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
