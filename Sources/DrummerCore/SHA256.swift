// SHA-256 (FIPS 180-4), used for integrity, not for security: the checksums of the
// model files (Wx.bin, Wy.bin) that model.json lists, the seal of every checkpoint, and
// the dataset fingerprint. The compression runs in CKernels (sha256.c): with the x86 SHA
// extensions where the CPU has them (Intel from Ice Lake, AMD from Zen), else portable C; this
// file pads and formats. Tested against the FIPS 180-4 / NIST vectors, both paths.
//
// Why not swift-crypto (apple/swift-crypto, in the package mirror), measured on the
// project's 2-core AMD EPYC in Nov 2026: on Linux its SHA256 comes with BoringSSL, so
// the runtime `drummer` binary would grow from 2.3 MB to about 4.3 MB stripped (+2.0 MB,
// all of it for one hash function), and every clean build (CI builds from scratch)
// would compile BoringSSL's ~300 C files: +157 s in debug, +278 s in release. The SHA
// extensions give the same speed as BoringSSL's assembly where the CPU has them.
// On Apple platforms `import Crypto` is CryptoKit and would cost nothing: an iOS port of
// the runtime should use CryptoKit's SHA256.hash, which gives the same digests.
import CKernels
import Foundation

public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { hash(UnsafeRawBufferPointer($0)) }
    }

    /// The 32-byte digest of `data`.
    public static func hash(_ data: Data) -> [UInt8] {
        data.withUnsafeBytes { hash($0) }
    }

    /// The digest as 64 lowercase hex digits.
    public static func hex(_ bytes: [UInt8]) -> String { hexString(hash(bytes)) }

    /// The digest as 64 lowercase hex digits.
    public static func hex(_ data: Data) -> String { hexString(hash(data)) }

    package static func hexString(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(digest.count * 2)
        for b in digest {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func hash(_ input: UnsafeRawBufferPointer) -> [UInt8] {
        hash(input, blocks: drummer_sha256_blocks)
    }

    /// The digest with `compress` running the whole blocks (the dispatching one, or in tests the
    /// portable one alone).
    package static func hash(_ input: UnsafeRawBufferPointer,
                             blocks compress: (UnsafeMutablePointer<UInt32>?, UnsafePointer<UInt8>?, Int) -> Void) -> [UInt8] {
        var state: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
        let n = input.count, whole = n / 64
        state.withUnsafeMutableBufferPointer { st in
            if whole > 0 { compress(st.baseAddress, input.baseAddress?.assumingMemoryBound(to: UInt8.self), whole) }
            // Padding: the remaining bytes, 0x80, zeros, then the bit length (big-endian).
            var tail = [UInt8](repeating: 0, count: 128)
            let rest = n - 64 * whole
            for i in 0..<rest { tail[i] = input[64 * whole + i] }
            tail[rest] = 0x80
            let tailLen = rest + 1 + 8 <= 64 ? 64 : 128
            let bits = UInt64(n) &* 8
            for i in 0..<8 { tail[tailLen - 1 - i] = UInt8(truncatingIfNeeded: bits >> (8 * UInt64(i))) }
            tail.withUnsafeBufferPointer { compress(st.baseAddress, $0.baseAddress, tailLen / 64) }
        }
        var out = [UInt8]()
        out.reserveCapacity(32)
        for v in state {
            out.append(UInt8(truncatingIfNeeded: v >> 24))
            out.append(UInt8(truncatingIfNeeded: v >> 16))
            out.append(UInt8(truncatingIfNeeded: v >> 8))
            out.append(UInt8(truncatingIfNeeded: v))
        }
        return out
    }
}
