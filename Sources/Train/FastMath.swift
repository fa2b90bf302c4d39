// Vectorised exp, sigmoid and tanh on float32 buffers, in place. Eight lanes at a
// time (SIMD8), no libm calls, no lane-dependent branches.
//
// exp: Cephes expf: n = round(x·log2 e), r = x − n·ln 2 (in two parts), a degree-6
// polynomial for e^r, scaled by 2^n built in the exponent bits. Relative error
// about 2 ulp over the clamped range [−87.3, 88.4].
// tanh: Cephes tanhf: an odd polynomial for |x| < 0.625, 1 − 2/(1 + e^{2x}) beyond.
// sigmoid: 1/(1 + e^{−x}).

typealias F8 = SIMD8<Float>

enum FastMath {
    @inline(__always)
    static func exp8(_ x0: F8) -> F8 {
        let x = x0.clamped(lowerBound: F8(repeating: -87.3), upperBound: F8(repeating: 88.4))
        // Round x·log2(e) to the nearest integer with the 1.5·2^23 trick.
        let magic = F8(repeating: 12_582_912)
        let shifted = x * 1.442_695_04 + magic
        let n = shifted - magic
        let r = x - n * 0.693_359_375 + n * 2.121_944_4e-4
        let z = r * r
        var p = F8(repeating: 1.987_569_15e-4)
        p = p * r + 1.398_199_95e-3
        p = p * r + 8.333_451_9e-3
        p = p * r + 4.166_579_59e-2
        p = p * r + 1.666_666_55e-1
        p = p * r + 5.000_000_12e-1
        let e = p * z + r + 1
        // 2^n: the low bits of `shifted` hold n + 2^22; move n + 127 into the exponent field.
        let bits = unsafeBitCast(shifted, to: SIMD8<UInt32>.self)
        let scale = (bits &- 0x4B40_0000 &+ 127) &<< 23
        return e * unsafeBitCast(scale, to: F8.self)
    }

    @inline(__always)
    static func sigmoid8(_ x: F8) -> F8 {
        1 / (1 + exp8(-x))
    }

    @inline(__always)
    static func tanh8(_ x: F8) -> F8 {
        let big = 1 - 2 / (1 + exp8(x + x))
        let z = x * x
        var p = F8(repeating: -5.704_988_727_45e-3)
        p = p * z + 2.063_908_879_54e-2
        p = p * z - 5.373_971_555_31e-2
        p = p * z + 1.333_144_220_36e-1
        p = p * z - 3.333_328_194_22e-1
        let small = p * z * x + x
        return big.replacing(with: small, where: z .< 0.390_625)  // |x| < 0.625
    }

    @inline(__always)
    static func apply(_ x: UnsafeMutablePointer<Float>, count n: Int, _ f: (F8) -> F8) {
        let raw = UnsafeMutableRawPointer(x)
        var j = 0
        while j + 8 <= n {
            let v = raw.loadUnaligned(fromByteOffset: 4 * j, as: F8.self)
            raw.storeBytes(of: f(v), toByteOffset: 4 * j, as: F8.self)
            j += 8
        }
        if j < n {
            var v = F8(repeating: 0)
            for k in 0..<(n - j) { v[k] = x[j + k] }
            let y = f(v)
            for k in 0..<(n - j) { x[j + k] = y[k] }
        }
    }

    static func exp(_ x: UnsafeMutablePointer<Float>, count n: Int) { apply(x, count: n, exp8) }
    static func sigmoid(_ x: UnsafeMutablePointer<Float>, count n: Int) { apply(x, count: n, sigmoid8) }
    static func tanh(_ x: UnsafeMutablePointer<Float>, count n: Int) { apply(x, count: n, tanh8) }
}
