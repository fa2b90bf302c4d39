// Seeded, serialisable random numbers. Every random choice in the toolchain
// (initialisation, sampling) goes through `SeededRNG`, so a run is reproduced
// from its seed, and a checkpoint stores the four state words to resume exactly.

/// xoshiro256** (Blackman & Vigna), seeded through SplitMix64.
public struct SeededRNG: RandomNumberGenerator, Sendable, Equatable {
    public private(set) var state: (UInt64, UInt64, UInt64, UInt64)

    public init(seed: UInt64) {
        var sm = seed
        func splitmix() -> UInt64 {
            sm &+= 0x9E37_79B9_7F4A_7C15
            var z = sm
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        state = (splitmix(), splitmix(), splitmix(), splitmix())
    }

    /// Restores a generator from `stateWords` (as saved in a checkpoint).
    public init?(stateWords w: [UInt64]) {
        guard w.count == 4, w.contains(where: { $0 != 0 }) else { return nil }
        state = (w[0], w[1], w[2], w[3])
    }

    public var stateWords: [UInt64] { [state.0, state.1, state.2, state.3] }

    public static func == (a: SeededRNG, b: SeededRNG) -> Bool { a.stateWords == b.stateWords }

    @inline(__always)
    private static func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    @inline(__always)
    public mutating func next() -> UInt64 {
        let result = SeededRNG.rotl(state.1 &* 5, 7) &* 9
        let t = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= t
        state.3 = SeededRNG.rotl(state.3, 45)
        return result
    }

    /// Uniform in [0, 1) with 53 random bits.
    @inline(__always)
    public mutating func nextDouble() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// Uniform in [lo, hi).
    public mutating func uniform(_ lo: Double, _ hi: Double) -> Double {
        lo + (hi - lo) * nextDouble()
    }

    /// Uniform integer in 0..<n (n > 0), without modulo bias.
    public mutating func index(below n: Int) -> Int {
        precondition(n > 0, "index(below:) needs a positive bound")
        return Int(next(upperBound: UInt64(n)))
    }

    /// Standard normal deviate (Box–Muller; one value per call, deterministic).
    public mutating func normal() -> Double {
        var u1 = nextDouble()
        while u1 <= 0 { u1 = nextDouble() }
        let u2 = nextDouble()
        return (-2 * _log(u1)).squareRoot() * _cos(2 * Double.pi * u2)
    }

    /// Normal with standard deviation `stddev`, redrawn until within two
    /// standard deviations (TensorFlow's `truncated_normal`).
    public mutating func truncatedNormal(stddev: Double) -> Double {
        while true {
            let z = normal()
            if abs(z) <= 2 { return z * stddev }
        }
    }
}

#if canImport(Glibc)
import Glibc
@inline(__always) func _log(_ x: Double) -> Double { Glibc.log(x) }
@inline(__always) func _cos(_ x: Double) -> Double { Glibc.cos(x) }
#elseif canImport(Darwin)
import Darwin
@inline(__always) func _log(_ x: Double) -> Double { Darwin.log(x) }
@inline(__always) func _cos(_ x: Double) -> Double { Darwin.cos(x) }
#endif
