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
            // The bar it leaves at its own length, the empty bars after it at the next hit's
            // (a pickup's few ticks do not measure the 4/4 bars after it).
            let end = line + length, nextLength = max(1, barTicks[i])
            let between = next >= end ? 1 + Int((Double(next - end) / Double(nextLength)).rounded())
                : Int((Double(next - line) / Double(length)).rounded())
            bars = bars.addingReportingOverflow(max(1, between)).partialValue
            line = next
            length = max(1, barTicks[i])
        }
        return bars
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
