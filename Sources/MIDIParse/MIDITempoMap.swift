// Tempo map: converts ticks of the merged time line to seconds and to quarter notes,
// for PPQ and SMPTE divisions alike.
//
// PPQ:   quarter notes = tick / ppq; seconds integrate the tempo (µs per quarter).
// SMPTE: seconds = tick / (frames per second × ticks per frame); quarter notes integrate
//        1 / tempo over those seconds (the tempo events still say how long a quarter is).
// Before the first tempo event the tempo is 500,000 µs per quarter (120 BPM, SMF 1.0).

/// A tempo change on the merged time line.
public struct MIDITempoChange: Equatable, Hashable, Sendable {
    public var tick: Int
    public var microsecondsPerQuarter: Int
    public init(tick: Int, microsecondsPerQuarter: Int) {
        self.tick = tick
        self.microsecondsPerQuarter = microsecondsPerQuarter
    }
}

extension Array where Element == MIDITempoChange {
    /// The tempo that plays from tick 0 in microseconds per quarter, as a player reads the
    /// file: of the changes at tick 0 the last (nil when none is there).
    public var startMicrosecondsPerQuarter: Int? {
        last { $0.tick <= 0 && $0.microsecondsPerQuarter > 0 }?.microsecondsPerQuarter
    }

    /// The tempo in force at `tick` in BPM: the last change at or before it (before the first,
    /// the first); nil when there is none.
    public func bpm(at tick: Int) -> Double? {
        guard let change = last(where: { $0.tick <= tick }) ?? first, change.microsecondsPerQuarter > 0 else { return nil }
        return 60_000_000 / Double(change.microsecondsPerQuarter)
    }

    /// The tempo at tick `start` (at 0 when `start` lies before the file) and the changes heard
    /// after it up to `end`, at ticks from `start`: a part of the file written as a file of its own.
    public func window(from start: Int, through end: Int) -> (bpm: Double?, later: [MIDITempoChange]) {
        (bpm(at: Swift.max(0, start)), audibleChanges(after: startMicrosecondsPerQuarter ?? first?.microsecondsPerQuarter)
            .filter { $0.tick > start && $0.tick <= end }
            .map { MIDITempoChange(tick: $0.tick - start, microsecondsPerQuarter: $0.microsecondsPerQuarter) })
    }

    /// The changes after tick 0 that change the tempo, as a player reads them: of changes at
    /// one tick the last, and none that restates the tempo in force (`start` before the first).
    public func audibleChanges(after start: Int?) -> [MIDITempoChange] {
        let later = enumerated().filter { $0.element.tick > 0 && $0.element.microsecondsPerQuarter > 0 }
            .sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }.map(\.element)
        var lastAtTick: [MIDITempoChange] = []
        for c in later {
            if lastAtTick.last?.tick == c.tick { lastAtTick[lastAtTick.count - 1] = c } else { lastAtTick.append(c) }
        }
        var out: [MIDITempoChange] = []
        var current = start
        for c in lastAtTick where c.microsecondsPerQuarter != current {
            out.append(c)
            current = c.microsecondsPerQuarter
        }
        return out
    }
}

public struct MIDITempoMap: Sendable {
    package static let defaultMicrosecondsPerQuarter = 500_000

    public let division: MIDIDivision
    /// Tempo changes in merge order; at equal ticks the last one wins.
    public let changes: [MIDITempoChange]
    // Segment i starts at segmentTicks[i] with tempo segmentTempo[i], at segmentSeconds[i]
    // seconds and segmentQuarters[i] quarter notes.
    private let segmentTicks: [Int]
    private let segmentTempo: [Double]
    private let segmentSeconds: [Double]
    private let segmentQuarters: [Double]

    /// The first tempo change in quarter notes per minute (nil: the file sets none).
    public var firstBPM: Double? { changes.first.map { 60_000_000 / Double($0.microsecondsPerQuarter) } }

    public init(division: MIDIDivision, changes: [MIDITempoChange]) {
        self.division = division
        self.changes = changes
        var ticks = [0], tempo = [Double(Self.defaultMicrosecondsPerQuarter)], secs = [0.0], quarters = [0.0]
        for c in changes where c.microsecondsPerQuarter > 0 {
            let t = max(0, c.tick)
            let last = ticks.count - 1
            if t == ticks[last] {
                tempo[last] = Double(c.microsecondsPerQuarter)
                continue
            }
            let (s, q) = Self.advance(division, from: ticks[last], to: t, tempo: tempo[last])
            ticks.append(t)
            tempo.append(Double(c.microsecondsPerQuarter))
            secs.append(secs[last] + s)
            quarters.append(quarters[last] + q)
        }
        segmentTicks = ticks
        segmentTempo = tempo
        segmentSeconds = secs
        segmentQuarters = quarters
    }

    /// Seconds and quarter notes between two ticks at a constant tempo.
    private static func advance(_ division: MIDIDivision, from a: Int, to b: Int, tempo: Double) -> (Double, Double) {
        let dt = Double(b - a)
        switch division {
        case .ppq(let ppq):
            let q = dt / Double(ppq)
            return (q * tempo / 1e6, q)
        case .smpte:
            let s = dt / (division.smpteTicksPerSecond ?? 1)
            return (s, s * 1e6 / tempo)
        }
    }

    private func segment(_ tick: Int) -> Int {
        var lo = 0, hi = segmentTicks.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if segmentTicks[mid] <= tick { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    public func seconds(atTick tick: Int) -> Double {
        let i = segment(tick)
        return segmentSeconds[i] + Self.advance(division, from: segmentTicks[i], to: tick, tempo: segmentTempo[i]).0
    }

    public func quarterNotes(atTick tick: Int) -> Double {
        if case .ppq(let ppq) = division { return Double(tick) / Double(ppq) }
        let i = segment(tick)
        return segmentQuarters[i] + Self.advance(division, from: segmentTicks[i], to: tick, tempo: segmentTempo[i]).1
    }
}

extension MIDIFile {
    /// The tempo changes of all tracks on the merged time line.
    public var tempoMap: MIDITempoMap {
        let starts = trackStartTicks
        var changes: [MIDITempoChange] = []
        for (t, track) in tracks.enumerated() {
            for e in track.events {
                if case .meta(.tempo(let us)) = e.kind {
                    changes.append(MIDITempoChange(tick: e.tick + starts[t], microsecondsPerQuarter: us))
                }
            }
        }
        if tracks.count > 1 { Self.stableSortByTick(&changes, tick: \.tick) }
        return MIDITempoMap(division: division, changes: changes)
    }
}
