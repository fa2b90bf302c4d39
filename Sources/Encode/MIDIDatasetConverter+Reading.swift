// Reading every file on all cores. Workers take the next file from a shared counter (no
// batches, so one long file never holds the others back), keep only its compact record,
// and count the training vocabulary as they go. Results land in per-file slots and are
// assembled in sorted path order afterwards, so the output is the same for any number of
// threads.
import Dispatch
import Foundation
import MIDIParse
import Synchronization

/// One converted file, kept compact until the dataset is written. The per-hit arrays are
/// parallel (hit i is notes[i], deltas[i]); per-hit data added later (velocities,
/// positions in the bar) belongs beside them as arrays of the same length.
struct FileRecord: Sendable {
    /// Note numbers after the note map (0...127).
    var notes: [UInt8]
    /// deltas[0]: the first hit's onset from the file's start; deltas[i]: ticks since hit i − 1.
    /// Unclamped; each at most `FileHits.maximumTick`.
    var deltas: [Int32]
    /// NOTE ON velocities 1...127.
    var velocities: [UInt8]
    /// Ticks from each hit's bar line, and that bar's length (target resolution, after quantizing).
    var tickInBar: [Int32]
    var barTicks: [Int32]
    /// The meter most hits are in ("4/4").
    var meter: String
    /// Onset of the last hit (where the next file of the split is glued from).
    var lastOnset: Int
    /// "9" or "all" for `--channel auto`, else the selection itself.
    var channelUsed: String
    var warnings: [MIDIWarning]

    var count: Int { notes.count }

    init(_ hits: FileHits) {
        notes = hits.notes.map { UInt8(truncatingIfNeeded: $0) }  // 0...127 (note maps are checked)
        var deltas = [Int32]()
        deltas.reserveCapacity(hits.ticks.count)
        var previous = 0
        for t in hits.ticks {
            deltas.append(Int32(clamping: t - previous))  // exact: 0 ≤ t − previous ≤ FileHits.maximumTick
            previous = t
        }
        self.deltas = deltas
        velocities = hits.velocities.map { UInt8(truncatingIfNeeded: $0) }  // 1...127
        // Both below FileHits.maximumTick (Int32): a position is at most its onset, a bar at most
        // the 4 × 2^20 × 32767 / 1 ticks of a 2^20/1 bar... clamped for safety.
        tickInBar = hits.tickInBar.map { Int32(clamping: $0) }
        barTicks = hits.barTicks.map { Int32(clamping: $0) }
        meter = hits.meter
        lastOnset = hits.ticks.last ?? 0
        channelUsed = hits.channelUsed
        warnings = hits.warnings
    }
}

/// What reading one file gave.
enum FileOutcome: Sendable {
    case converted(FileRecord)
    /// `reason` without the path; `kind` for the summary ("not MIDI", "truncated", ...).
    case skipped(reason: String, kind: String)
}

/// The training vocabulary as it is seen: hits per note and the set of deltas (clamped).
struct VocabularyCounts: Sendable {
    /// Deltas below this are bits of `small`; larger ones go to `large`.
    static let smallLimit = 1 << 20
    var noteHits = [Int](repeating: 0, count: 128)
    var small = [UInt64](repeating: 0, count: smallLimit / 64)
    var large = Set<Int>()

    @inline(__always) mutating func addTick(_ t: Int) {
        if t < Self.smallLimit {
            small[t >> 6] |= 1 << UInt64(t & 63)
        } else {
            large.insert(t)
        }
    }

    mutating func merge(_ other: VocabularyCounts) {
        for i in 0..<128 { noteHits[i] += other.noteHits[i] }
        for i in small.indices { small[i] |= other.small[i] }
        large.formUnion(other.large)
    }

    var notes: [Int] { (0..<128).filter { noteHits[$0] > 0 } }

    /// The distinct deltas, ascending.
    var ticks: [Int] {
        var out: [Int] = []
        for (w, word) in small.enumerated() where word != 0 {
            var bits = word
            while bits != 0 {
                out.append(w << 6 | bits.trailingZeroBitCount)
                bits &= bits - 1
            }
        }
        return out + large.sorted()
    }
}

/// Result slots and per-worker state shared by the reading threads. Each file index is
/// taken once (from `next`), so no two threads write the same slot; each worker writes
/// only its own counts. Everything is read after all workers have returned.
final class ReadingState: @unchecked Sendable {
    let outcomes: UnsafeMutablePointer<FileOutcome?>
    let count: Int
    let counts: UnsafeMutablePointer<VocabularyCounts?>
    let workers: Int
    let next = Atomic<Int>(0)
    let done = Atomic<Int>(0)

    init(count: Int, workers: Int) {
        self.count = count
        self.workers = workers
        outcomes = .allocate(capacity: max(1, count))
        outcomes.initialize(repeating: nil, count: count)
        counts = .allocate(capacity: workers)
        counts.initialize(repeating: nil, count: workers)
    }

    deinit {
        outcomes.deinitialize(count: count)
        outcomes.deallocate()
        counts.deinitialize(count: workers)
        counts.deallocate()
    }
}

extension MIDIDatasetConverter {
    /// Reads and converts the files on `threads` threads. `isValidation[i]` says which split
    /// file i goes to (only training files count towards the vocabulary).
    static func readAll(_ entries: [SourceEntry], root: String, isValidation: [Bool], settings: ConversionSettings,
                        threads: Int, progress: (@Sendable (Int, Int) -> Void)?) -> ([FileOutcome], VocabularyCounts) {
        let n = entries.count
        let workers = max(1, min(threads, n))
        let state = ReadingState(count: n, workers: workers)
        let maxDelta = settings.maxDelta
        let step = max(1, min(256, n / 1000))  // progress calls: at most about 1000
        @Sendable func work(_ worker: Int) {
            var counts = VocabularyCounts()
            while true {
                let i = state.next.add(1, ordering: .relaxed).oldValue
                guard i < n else { break }
                let outcome = readOne(entries[i], root: root, settings: settings.extraction)
                if case .converted(let r) = outcome, !isValidation[i] {
                    for note in r.notes { counts.noteHits[Int(note)] += 1 }
                    for k in r.deltas.indices.dropFirst() {
                        let d = Int(r.deltas[k])
                        counts.addTick(maxDelta.map { min(d, $0) } ?? d)
                    }
                }
                state.outcomes[i] = outcome
                let finished = state.done.add(1, ordering: .relaxed).newValue
                if let progress, finished % step == 0 || finished == n { progress(finished, n) }
            }
            state.counts[worker] = counts
        }
        if workers == 1 {
            work(0)
        } else {
            DispatchQueue.concurrentPerform(iterations: workers) { work($0) }
        }
        var total = VocabularyCounts()
        for w in 0..<workers { if let c = state.counts[w] { total.merge(c) } }
        return ((0..<n).map { state.outcomes[$0]! }, total)
    }

    /// One file: read, parse (hits only), compact; or why not.
    static func readOne(_ entry: SourceEntry, root: String, settings: HitExtractionSettings) -> FileOutcome {
        if let problem = entry.problem {
            // A directory that cannot be listed, a name that is not UTF-8: unreadable.
            return .skipped(reason: problem, kind: problem.hasPrefix("not a regular file") ? "not a regular file" : "unreadable")
        }
        do {
            return .converted(FileRecord(try FileHits.read(path: root + entry.path, settings: settings)))
        } catch let e as MIDIFileError {
            return .skipped(reason: e.reason, kind: e.defect.kind)
        } catch let e as MIDIReadError {
            return .skipped(reason: e.message, kind: e.message.hasPrefix("not a regular file") ? "not a regular file" : "unreadable")
        } catch let e as HitExtractionError {
            if case .hitTooLate(_, let tick) = e {
                return .skipped(reason: "a hit at tick \(tick) lies beyond \(FileHits.maximumTick) target ticks", kind: "out of range")
            }
            return .skipped(reason: "\(e)", kind: "out of range")
        } catch {
            return .skipped(reason: "\(error)", kind: "unreadable")
        }
    }
}
