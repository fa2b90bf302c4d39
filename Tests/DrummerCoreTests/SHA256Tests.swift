import XCTest
import Foundation
import CKernels
@testable import DrummerCore

/// NIST FIPS 180-4 / CAVP example vectors for SHA-256.
final class SHA256Tests: XCTestCase {
    func testEmpty() {
        XCTAssertEqual(SHA256.hex([UInt8]()),
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    func testABC() {
        XCTAssertEqual(SHA256.hex(Array("abc".utf8)),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256.hash(Data("abc".utf8)).count, 32)
    }

    func test448BitMessage() {
        let m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        XCTAssertEqual(m.utf8.count * 8, 448)
        XCTAssertEqual(SHA256.hex(Data(m.utf8)),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    func test896BitMessage() {
        let m = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
            + "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
        XCTAssertEqual(SHA256.hex(Array(m.utf8)),
                       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    func testOneMillionA() {
        let m = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        XCTAssertEqual(SHA256.hex(m),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Padding boundaries: lengths 55, 56, 63, 64, 65 bytes land in one or two
    /// final blocks; each must differ from its neighbours and be stable.
    func testPaddingBoundariesAgreeWithDataOverload() {
        var seen = Set<String>()
        for n in [55, 56, 57, 63, 64, 65, 119, 120, 128] {
            let m = [UInt8](repeating: 0x61, count: n)
            let a = SHA256.hex(m), b = SHA256.hex(Data(m))
            XCTAssertEqual(a, b)
            XCTAssertEqual(a.count, 64)
            seen.insert(a)
        }
        XCTAssertEqual(seen.count, 9)
        // 64 'a's, from `printf 'a%.0s' {1..64} | sha256sum`.
        XCTAssertEqual(SHA256.hex([UInt8](repeating: 0x61, count: 64)),
                       "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }

    /// The two compression paths (the x86 SHA extensions, where this CPU has them, and portable C)
    /// give the same digests, on the vectors and on random inputs of every length up to 300 bytes
    /// and of a few thousand; on a CPU without the extensions both calls run the portable path.
    func testTheSHAExtensionsAndThePortablePathAgree() {
        let vectors: [(String, String)] = [
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ]
        for (m, digest) in vectors {
            let portable = Array(m.utf8).withUnsafeBytes { SHA256.hash($0, blocks: drummer_sha256_blocks_portable) }
            XCTAssertEqual(SHA256.hexString(portable), digest)
            XCTAssertEqual(SHA256.hex(Array(m.utf8)), digest)
        }
        var rng = SeededRNG(seed: 256)
        for n in Array(0...300) + [4096, 4097, 9999] {
            let bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.index(below: 256)) }
            let portable = bytes.withUnsafeBytes { SHA256.hash($0, blocks: drummer_sha256_blocks_portable) }
            XCTAssertEqual(SHA256.hash(bytes), portable, "length \(n)")
        }
        print("SHA-256: the SHA extensions are \(drummer_sha256_have_extensions() != 0 ? "used" : "not available") on this CPU")
    }
}
