// Gluing files into one sequence of (note, delta) pairs.
//
// The gluing rule (the original project's): within a file, a hit's delta is the number of
// target ticks since the file's previous hit. The first hit of the first file has as delta
// its onset (ticks since the file's start). Every later file starts on the first beat
// boundary (a multiple of the target PPQ) strictly after the previous file's last hit: its
// first hit's delta is `ppq - (last mod ppq)` plus its own onset, where `last` is the
// previous file's last onset (in that file's own time, which starts on a beat boundary).
// A previous last hit exactly on a beat therefore waits a whole beat. Files without hits
// are left out of the chain. `--max-delta` clamps every delta afterwards, glue gaps included.
import MIDIParse

/// A sequence of hits: note numbers and deltas in target ticks, with each file's offset.
public struct HitSequence: Equatable, Sendable {
    public var notes: [Int] = []
    public var deltas: [Int] = []
    /// Index of each appended file's first hit.
    public var offsets: [Int] = []

    let maxDelta: Int?
    private var glue: Glue

    public init(ppq: Int, maxDelta: Int?) {
        glue = Glue(ppq: ppq)
        self.maxDelta = maxDelta
    }

    public var count: Int { notes.count }

    /// Appends one file's hits (absolute onsets from its start, non-decreasing).
    public mutating func append(_ file: FileHits) {
        offsets.append(notes.count)
        guard let first = file.ticks.first, let last = file.ticks.last else { return }
        var previous = 0
        let firstDelta = glue.firstDelta(onset: first, lastOnset: last)
        for (i, t) in file.ticks.enumerated() {
            var delta = i == 0 ? firstDelta : t - previous
            if let m = maxDelta, delta > m { delta = m }
            notes.append(file.notes[i])
            deltas.append(delta)
            previous = t
        }
    }
}

/// The gluing rule alone, for a split's files in order (the converter keeps files compact
/// and uses this directly).
struct Glue: Equatable, Sendable {
    let ppq: Int
    /// The previous file's last onset; nil before the first file with hits.
    private var lastTick: Int?

    init(ppq: Int) { self.ppq = ppq }

    /// The (unclamped) first delta of a file with hits whose first onset is `onset` and last
    /// onset `lastOnset`; remembers `lastOnset` for the next file.
    mutating func firstDelta(onset: Int, lastOnset: Int) -> Int {
        defer { lastTick = lastOnset }
        guard let last = lastTick else { return onset }
        return ppq - last % ppq + onset
    }
}
