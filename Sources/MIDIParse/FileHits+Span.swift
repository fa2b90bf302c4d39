// How many bars a file's hits span, and the most bars a model that reads every step of a
// file (a grid model: humanize, eval) is given.

extension FileHits {
    /// Most bars a grid model reads of one file. It steps through every 16th of every bar,
    /// empty or not (about 1.2 ms a bar for the shipped model, and its class matrix grows with
    /// the bars), so a small file of a few hits far apart, 140,000 bars at 480 PPQ, would mean
    /// minutes of silent work and a gigabyte of memory. 10,000 bars of 4/4 are 5.5 hours at
    /// 120 BPM, far longer than any drum take.
    public static let maximumBarsRead = 10_000

    /// Bars from the first hit's bar to the last hit's, both included, empty bars between
    /// them counted (each run at the length of the bar after it, exact unless the meter
    /// changes inside a run of empty bars); 0 without hits. Linear in the hits.
    public var barSpan: Int {
        guard !ticks.isEmpty else { return 0 }
        var bars = 1
        var line = ticks[0] - tickInBar[0], length = max(1, barTicks[0])
        for i in 1..<ticks.count {
            let next = ticks[i] - tickInBar[i]
            guard next != line else { continue }
            bars = bars.addingReportingOverflow(Self.bars(from: line, length: length, to: next, length: barTicks[i])).partialValue
            line = next
            length = max(1, barTicks[i])
        }
        return bars
    }

    /// Bars from the bar line `line` (of a bar `length` ticks long) to a later bar line `next`
    /// (of a bar `nextLength` long), at least 1: the bar it leaves at its own length, the empty
    /// bars after it at the next's (a pickup's few ticks do not measure the 4/4 bars after it;
    /// exact unless the meter changes inside a run of empty bars).
    public static func bars(from line: Int, length: Int, to next: Int, length nextLength: Int) -> Int {
        let end = line + max(1, length)
        let between = next >= end ? 1 + Int((Double(next - end) / Double(max(1, nextLength))).rounded())
            : Int((Double(next - line) / Double(max(1, length))).rounded())
        return max(1, between)
    }

    /// Refuses hits spanning more than `maximumBarsRead` bars, before any work over them.
    /// - Throws: `HitExtractionError.tooManyBars` naming `path`, the bars and the limit.
    public func checkBarSpan(path: String) throws {
        let bars = barSpan
        guard bars <= Self.maximumBarsRead else {
            throw HitExtractionError.tooManyBars(path: path, bars: bars, limit: Self.maximumBarsRead)
        }
    }
}
