import Foundation

// Keeping long series small: a 100k-step run with an evaluation every 100 steps has 1,000
// rows per column; the page draws at most `maxPoints` of them per series.

public enum Downsample {
    /// Indices (ascending) of at most `maxPoints` of `ys` that keep the series' shape: the
    /// first and the last point, the minimum and the maximum of each of equal buckets of
    /// indices, and every index in `keep` (such as the best-validation row, so its marker
    /// stays exactly on the curve). All indices when `ys.count ≤ maxPoints`.
    /// `maxPoints` below 4 + keep.count is raised to that.
    public static func indices(_ ys: [Double], maxPoints: Int, keep: Set<Int> = []) -> [Int] {
        let n = ys.count
        let kept = keep.filter { $0 >= 0 && $0 < n }
        guard n > max(maxPoints, 0) else { return Array(0..<n) }
        var chosen = Set(kept)
        chosen.insert(0)
        chosen.insert(n - 1)
        let budget = max(2, maxPoints - chosen.count)
        let buckets = max(1, budget / 2)
        for b in 0..<buckets {
            let lo = b * n / buckets, hi = (b + 1) * n / buckets
            guard lo < hi else { continue }
            var minI = lo, maxI = lo
            for i in lo..<hi {
                if ys[i] < ys[minI] { minI = i }
                if ys[i] > ys[maxI] { maxI = i }
            }
            chosen.insert(minI)
            chosen.insert(maxI)
        }
        return chosen.sorted()
    }
}

/// Axis ticks at "nice" values (1, 2 or 5 × a power of ten).
public enum NiceScale {
    /// About `count` evenly spaced nice values covering lo...hi (at least 2 values).
    public static func ticks(lo: Double, hi: Double, count: Int = 5) -> [Double] {
        guard lo.isFinite, hi.isFinite else { return [0, 1] }
        var a = min(lo, hi), b = max(lo, hi)
        if a == b { a -= a == 0 ? 1 : abs(a) * 0.1; b += b == 0 ? 1 : abs(b) * 0.1 }
        let raw = (b - a) / Double(max(1, count))
        let mag = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 5, 10].map { $0 * mag }.first { $0 >= raw } ?? 10 * mag
        let first = (a / step).rounded(.down) * step
        var out: [Double] = []
        var v = first
        while v <= b + step * 1e-9, out.count < 100 {
            out.append(abs(v) < step * 1e-9 ? 0 : v)
            v += step
        }
        if out.last.map({ $0 < b }) ?? true { out.append(v) }
        return out
    }

    /// Labels of evenly spaced `ticks`, each with the digits their step needs, so that
    /// neighbours differ however narrow the range: a constant rate of 0.001 is drawn on ticks
    /// 0.0009, 0.00095, 0.001 … (two significant digits read 0.001 twice); a step that needs more
    /// than 5 decimals gives 1e-4, 1.005e-4 …; steps in thousands and millions 1M, 1.0001M ….
    public static func labels(_ ticks: [Double]) -> [String] {
        let step = zip(ticks, ticks.dropFirst()).map { abs($1 - $0) }.filter { $0 > 0 && $0.isFinite }.min()
        return ticks.map { v in step.map { label(v, step: $0) } ?? label(v) }
    }

    /// `v` with the decimals `step` needs (in k or M from a thousand, a million on); more than
    /// 5 decimals (a step below 0.00001) as a power of ten, "1.005e-4", which stays short.
    static func label(_ v: Double, step: Double) -> String {
        let a = abs(v)
        guard a >= step * 1e-9 else { return "0" }
        let (scale, suffix) = a >= 1_000_000 ? (1_000_000.0, "M") : a >= 1_000 ? (1_000.0, "k") : (1.0, "")
        // The decimals of the step itself: those of its leading digit, and more while it is not
        // whole in them (a step of 0.25 needs two).
        let unit = step / scale
        var decimals = max(0, Int(-(log10(unit) + 1e-9).rounded(.down)))
        while decimals < 15, abs(unit * pow(10, Double(decimals)) - (unit * pow(10, Double(decimals))).rounded()) > 1e-6 {
            decimals += 1
        }
        if decimals > 5, suffix.isEmpty {
            let exponent = Int(log10(a).rounded(.down))
            let digits = max(0, exponent + decimals)
            let mantissa = trimZeros(String(format: "%.\(digits)f", v / pow(10, Double(exponent))))
            return "\(mantissa)e\(exponent)"
        }
        let s = trimZeros(String(format: "%.\(decimals)f", v / scale))
        return (s == "-0" ? "0" : s) + suffix
    }

    private static func trimZeros(_ s: String) -> String {
        guard s.contains(".") else { return s }
        var s = s
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }

    /// A short label: "0", "0.25", "1.5k", "20k", "3M", "0.0156".
    public static func label(_ v: Double) -> String {
        let a = abs(v)
        if a >= 1_000_000 { return trim(v / 1_000_000) + "M" }
        if a >= 1_000 { return trim(v / 1_000) + "k" }
        if a == 0 { return "0" }
        if a >= 0.01 { return trim(v) }
        return String(format: "%.2g", v)
    }

    private static func trim(_ v: Double) -> String {
        var s = String(format: "%.3f", v)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s == "-0" ? "0" : s
    }
}
