// The lookback input: what the drummer played one bar ago, at this place in the bar.
//
// Real grooves repeat bar after bar. A model that sees only the current hit has to hold the
// whole last bar in its state to repeat it, which a small LSTM trained on a small corpus
// learns poorly (it memorises the training grooves instead). Magenta's Lookback RNN gives its
// model the events of one bar ago as input; this is that idea for a (note, delta) sequence:
//
//   For input hit i at onset t (ticks from the start of the sequence) in a bar of L ticks, the
//   matching onset one bar ago is the onset o nearest t − L with |o − (t − L)| ≤ tolerance
//   (on a tie the earlier). If hit i is the r-th hit at onset t (0-based, in sequence order),
//   j is the min(r, n − 1)-th of the n hits at o. The lookback of hit i is hit j + 1: the hit
//   that came after j, one bar ago (its note class and tick class). Without a matching onset
//   (the first bar, a bar that was silent there, a hit more than `window` hits back) the
//   lookback is "none": class N of the note group, class K of the tick group.
//
// Two input groups, `lookback_note` (N + 1 classes) and `lookback_tick` (K + 1), placed after
// the position group and before velocity. The trainer, the evaluator and the sampler all run
// the same `LookbackTracker` over their sequence, hit by hit, so they agree exactly; the
// sampler's copy is allocation-free (a fixed ring of `window` hits).

/// The lookback group's settings (model.json `groups.lookback`).
public struct LookbackGroup: Equatable, Sendable {
    /// Largest distance in ticks between t − L and the onset matched one bar ago.
    public var toleranceTicks: Int
    /// Hits remembered (a bar holding more hits than this matches less far back).
    public var window: Int

    public init(toleranceTicks: Int, window: Int = LookbackGroup.defaultWindow) {
        self.toleranceTicks = toleranceTicks
        self.window = window
    }

    public static let defaultWindow = 512

    /// The default tolerance at `ppq`: a 32nd note (60 ticks at 480 PPQ), half a sixteenth, so
    /// that a hit played a little early or late one bar ago still matches.
    package static func defaultTolerance(ppq: Int) -> Int { max(0, ppq / 8) }

    public func validate() throws {
        guard (0...1_048_576).contains(toleranceTicks) else {
            throw ModelGroupsError("lookback tolerance \(toleranceTicks) ticks outside 0...1048576")
        }
        guard (2...65_536).contains(window) else { throw ModelGroupsError("lookback window \(window) outside 2...65536") }
    }
}

/// Runs over a sequence of hits and gives each its lookback (see the header). Allocates only
/// in `init`.
public struct LookbackTracker {
    public let group: LookbackGroup
    /// "None" classes: the vocabulary's note and tick counts.
    let noneNote: Int32, noneTick: Int32
    private var onsets: [Int], notes: [Int32], ticks: [Int32]
    /// Hits pushed so far (the ring holds the last `window`).
    private var count = 0
    private var lastOnset = Int.min
    private var rank = 0

    public init(group: LookbackGroup, notes: Int, ticks: Int) {
        self.group = group
        noneNote = Int32(notes)
        noneTick = Int32(ticks)
        onsets = [Int](repeating: 0, count: group.window)
        self.notes = [Int32](repeating: 0, count: group.window)
        self.ticks = [Int32](repeating: 0, count: group.window)
    }

    /// Forgets every hit (a new sequence).
    public mutating func reset() {
        count = 0
        lastOnset = Int.min
        rank = 0
    }

    /// Adds the next hit of the sequence (its onset, note and tick classes, and the length in
    /// ticks of the bar it is in) and returns its lookback classes (note, tick).
    public mutating func push(onset t: Int, note: Int32, tick: Int32, barTicks L: Int) -> (note: Int32, tick: Int32) {
        let w = group.window
        if t == lastOnset { rank += 1 } else { rank = 0; lastOnset = t }
        let i = count
        onsets[i % w] = t
        notes[i % w] = note
        ticks[i % w] = tick
        count += 1
        let tol = group.toleranceTicks
        guard L > tol, i > 0 else { return (noneNote, noneTick) }
        let target = t - L
        // Scan back over the remembered hits before i for the onset nearest the target.
        var best = -1, bestDistance = Int.max
        var k = i - 1
        let oldest = max(0, i - (w - 1))
        while k >= oldest {
            let o = onsets[k % w]
            if o < target - tol { break }
            let d = abs(o - target)
            // On a tie the earlier onset wins: k moves back, so "≤" keeps the earlier.
            if o < t, d <= tol, d <= bestDistance {
                best = k
                bestDistance = d
            }
            k -= 1
        }
        guard best >= 0 else { return (noneNote, noneTick) }
        // The hits at that onset: indices first...last (contiguous; onsets never decrease).
        let o = onsets[best % w]
        var first = best
        while first - 1 >= oldest, onsets[(first - 1) % w] == o { first -= 1 }
        var last = best
        while last + 1 < i, onsets[(last + 1) % w] == o { last += 1 }
        let j = min(first + rank, last)
        let next = (j + 1) % w
        return (notes[next], ticks[next])
    }
}
