// The one timing harness of `drummer bench`: warm up, then several timed runs, each
// repeating the work until it has lasted a minimum time; figures are work per second of
// each run, summarised by the median (the machines are shared and noisy: medians of
// several runs, never a single timing).
import Dispatch

/// How long and how often to time.
public struct TimingSettings: Sendable, Equatable {
    /// Timed runs per figure (the median is reported).
    public var runs: Int
    /// Minimum seconds per timed run (0: one call per run).
    public var minimumSeconds: Double

    public init(runs: Int, minimumSeconds: Double) {
        self.runs = runs
        self.minimumSeconds = minimumSeconds
    }

    /// Throws naming the option when a setting is out of range.
    public func validate() throws {
        guard (1...1000).contains(runs) else { throw BenchmarkError("--runs must be between 1 and 1000, got \(runs)") }
        guard minimumSeconds.isFinite, minimumSeconds >= 0, minimumSeconds <= 3600 else {
            throw BenchmarkError("--seconds must be between 0 and 3600, got \(minimumSeconds)")
        }
    }
}

/// Rates of several timed runs.
public struct Rates: Sendable, Equatable {
    /// Work per second of each run, ascending.
    public let sorted: [Double]

    public init(_ rates: [Double]) { sorted = rates.sorted() }

    public var median: Double { sorted.isEmpty ? 0 : sorted[sorted.count / 2] }
    public var min: Double { sorted.first ?? 0 }
    public var max: Double { sorted.last ?? 0 }
}

public struct BenchmarkError: Error, CustomStringConvertible, Equatable, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public enum Timing {
    /// Monotonic seconds.
    public static var now: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Calls `body` `warmup` times, then times `settings.runs` runs; each run calls `body` in
    /// groups of `group` until `settings.minimumSeconds` have passed. One call of `body` does
    /// `work` units (FLOPs, timesteps, notes, …); returns units per second of each run.
    package static func rates(_ settings: TimingSettings, work: Double, warmup: Int = 1, group: Int = 1,
                             _ body: () throws -> Void) rethrows -> Rates {
        for _ in 0..<warmup { try body() }
        var rates: [Double] = []
        for _ in 0..<settings.runs {
            var calls = 0
            let start = now
            var elapsed = 0.0
            repeat {
                for _ in 0..<Swift.max(1, group) { try body() }
                calls += Swift.max(1, group)
                elapsed = now - start
            } while elapsed < settings.minimumSeconds
            rates.append(work * Double(calls) / elapsed)
        }
        return Rates(rates)
    }

    /// Times `settings.runs` single calls of `body` (for work that is long by itself);
    /// returns `work` per second of each call.
    static func singleCalls(_ settings: TimingSettings, work: Double, _ body: () throws -> Void) rethrows -> Rates {
        var rates: [Double] = []
        for _ in 0..<settings.runs {
            let start = now
            try body()
            rates.append(work / Swift.max(now - start, 1e-12))
        }
        return Rates(rates)
    }
}
