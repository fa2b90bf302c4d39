// A grid sequence that forgets its old steps (the sampler's window) encodes the rows it still
// reads exactly as the whole sequence does, for every lookback kind and bars back.
import XCTest
@testable import DrummerCore

final class GridSequenceTests: XCTestCase {
    func group(_ lookback: GridLookback, bars: [Int]) throws -> GridGroup {
        let v = try VelocityGroup(bins: [1...40, 41...80, 81...127], histogram: [Int](repeating: 1, count: 127))
        return try GridGroup(ppq: 480, velocity: v, offsets: [-40, -10, 20], notes: [36, 38, 42, 46, 45, 48, 50, 49, 51],
                             lookback: lookback, lookbackBars: bars)
    }

    /// Steps mostly repeat an 8-step pattern, so that lookbacks and repeat flags take both values.
    func append(_ n: Int, to seq: inout GridSequence, rng: inout SeededRNG) {
        for _ in 0..<n {
            let s = seq.count
            let set = rng.nextDouble() < 0.97 ? [5, 0, 2, 0, 7, 0, 2, 0][s % 8] : Int(rng.nextDouble() * 512)
            let v = (0..<9).map { _ in Int(rng.nextDouble() * 3) }, o = (0..<9).map { _ in Int(rng.nextDouble() * 6) }
            seq.append(hitSet: set, velocity: { v[$0] }, offset: { o[$0] })
        }
    }

    func row(_ s: Int, of seq: GridSequence, _ encoder: GridEncoder) -> [Int32] {
        var out = [Int32](repeating: -7, count: encoder.inputCount)
        out.withUnsafeMutableBufferPointer { encoder.encode(row: s, of: seq, into: $0) }
        return out
    }

    func testForgettingKeepsTheRowsRead() throws {
        for (lookback, bars) in [(GridLookback.hitSets, [1, 2]), (.classes, [1, 2]), (.velocities, [1, 2, 4]), (.velocities, [1, 8])] {
            let g = try group(lookback, bars: bars), encoder = GridEncoder(group: g)
            XCTAssertEqual(g.stepsRead, max(bars.last! * 16 - 1, 32) + 1)
            var rng = SeededRNG(seed: 11)
            var whole = GridSequence(style: 0), windowed = GridSequence(style: 0)
            var checked = 0, repeats = 0
            for chunk in 0..<40 {
                var r1 = rng, r2 = rng
                append(7, to: &whole, rng: &r1)
                append(7, to: &windowed, rng: &r2)
                rng = r1
                XCTAssertEqual(windowed.count, whole.count)
                windowed.keepLast(g.stepsRead)  // as the sampler keeps them
                XCTAssertLessThan(windowed.count - windowed.first, 2 * g.stepsRead, "the kept steps stay bounded")
                XCTAssertGreaterThanOrEqual(windowed.count - windowed.first, min(windowed.count, g.stepsRead))
                // Every row that reads only kept steps: the last one, as the sampler reads it, and
                // the rows before it back to the window's start.
                for s in max(windowed.first + g.stepsRead - 1, 0)..<max(windowed.count, windowed.first + g.stepsRead - 1, 0) {
                    let a = row(s, of: whole, encoder), b = row(s, of: windowed, encoder)
                    XCTAssertEqual(a, b, "\(lookback) \(bars) row \(s) after chunk \(chunk)")
                    checked += 1
                    repeats += Int(a[a.count - 2])
                }
            }
            XCTAssertGreaterThan(windowed.first, 0, "steps were forgotten")
            XCTAssertEqual(windowed.count, 280)
            XCTAssertGreaterThan(checked, 100)
            XCTAssertGreaterThan(repeats, 0, "some rows flag a repeat")
        }
    }

    func testForgetBeyondTheEndAndTwice() throws {
        var seq = GridSequence()
        var rng = SeededRNG(seed: 1)
        append(10, to: &seq, rng: &rng)
        let kept = seq.hitSet(step: 9)
        seq.forget(before: 4)
        XCTAssertEqual(seq.first, 4)
        seq.forget(before: 2)
        XCTAssertEqual(seq.first, 4, "forgotten steps stay forgotten")
        XCTAssertEqual(seq.hitSet(step: 9), kept)
        seq.forget(before: 50)
        XCTAssertEqual([seq.first, seq.count], [10, 10], "forgetting past the end keeps the count")
        append(1, to: &seq, rng: &rng)
        XCTAssertEqual(seq.count, 11)
    }
}
