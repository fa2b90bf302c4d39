import XCTest
import Foundation
@testable import DrummerCore

final class RNGTests: XCTestCase {
    func testSameSeedSameStreamAndStateRoundTrip() {
        var a = SeededRNG(seed: 42), b = SeededRNG(seed: 42)
        for _ in 0..<100 { XCTAssertEqual(a.next(), b.next()) }
        var c = SeededRNG(stateWords: a.stateWords)!
        for _ in 0..<100 { XCTAssertEqual(a.next(), c.next()) }
        XCTAssertNil(SeededRNG(stateWords: [0, 0, 0, 0]))
        XCTAssertNil(SeededRNG(stateWords: [1, 2, 3]))
        var d = SeededRNG(seed: 43)
        XCTAssertNotEqual(SeededRNG(seed: 42).stateWords, d.stateWords)
        _ = d.next()
    }

    func testDistributionsHaveExpectedMoments() {
        var rng = SeededRNG(seed: 1)
        let n = 200_000
        var s = 0.0, s2 = 0.0, tmax = 0.0, us = 0.0
        for _ in 0..<n {
            let z = rng.normal(); s += z; s2 += z * z
            tmax = max(tmax, abs(rng.truncatedNormal(stddev: 0.01)))
            us += rng.nextDouble()
        }
        XCTAssertEqual(s / Double(n), 0, accuracy: 0.01)
        XCTAssertEqual(s2 / Double(n), 1, accuracy: 0.02)
        XCTAssertLessThanOrEqual(tmax, 0.02)
        XCTAssertGreaterThan(tmax, 0.019)
        XCTAssertEqual(us / Double(n), 0.5, accuracy: 0.005)
        var counts = [Int](repeating: 0, count: 7)
        for _ in 0..<70_000 { counts[rng.index(below: 7)] += 1 }
        for c in counts { XCTAssertEqual(Double(c), 10_000, accuracy: 400) }
    }
}

final class BLASRuntimeTests: XCTestCase {
    func testCoreChoiceRule() {
        // Debian's OpenBLAS on an unknown Intel model: Prescott on an AVX-512 CPU.
        XCTAssertEqual(BLASRuntime.preferredCoreType(detectedCore: "Prescott", cpuLevel: 3, userCoreType: nil), "SkylakeX")
        XCTAssertEqual(BLASRuntime.preferredCoreType(detectedCore: "Prescott", cpuLevel: 2, userCoreType: nil), "Haswell")
        XCTAssertEqual(BLASRuntime.preferredCoreType(detectedCore: "Core2", cpuLevel: 1, userCoreType: ""), "SandyBridge")
        // Detection already good: leave it.
        XCTAssertNil(BLASRuntime.preferredCoreType(detectedCore: "Cooperlake", cpuLevel: 3, userCoreType: nil))
        XCTAssertNil(BLASRuntime.preferredCoreType(detectedCore: "Haswell", cpuLevel: 2, userCoreType: nil))
        XCTAssertNil(BLASRuntime.preferredCoreType(detectedCore: "Prescott", cpuLevel: 0, userCoreType: nil))
        // The user's own choice always wins.
        XCTAssertNil(BLASRuntime.preferredCoreType(detectedCore: "Prescott", cpuLevel: 3, userCoreType: "Prescott"))
    }

    func testCoreNameIsReported() {
        XCTAssertFalse(BLASRuntime.coreName.isEmpty)
        XCTAssertNotEqual(BLASRuntime.coreName, "unknown")
    }
}

final class SoftmaxTests: XCTestCase {
    func testProbabilitiesTemperatureAndDraw() {
        let logits: [Float] = [1, 2, 3, 1000]
        var p = [Float](repeating: 0, count: 4)
        logits.withUnsafeBufferPointer { l in p.withUnsafeMutableBufferPointer { Softmax.probabilities(l, into: $0) } }
        XCTAssertEqual(p[3], 1, accuracy: 1e-6)
        let small: [Float] = [0, log(3)]
        small.withUnsafeBufferPointer { l in p.withUnsafeMutableBufferPointer {
            Softmax.probabilities(l, into: UnsafeMutableBufferPointer(rebasing: $0[0..<2])) } }
        XCTAssertEqual(p[0], 0.25, accuracy: 1e-6)
        XCTAssertEqual(p[1], 0.75, accuracy: 1e-6)
        small.withUnsafeBufferPointer { l in p.withUnsafeMutableBufferPointer {
            Softmax.probabilities(l, temperature: 0.5, into: UnsafeMutableBufferPointer(rebasing: $0[0..<2])) } }
        XCTAssertEqual(p[1], 0.9, accuracy: 1e-6)  // 9 / (1 + 9)
        let probs: [Float] = [0.25, 0.75]
        probs.withUnsafeBufferPointer { pp in
            XCTAssertEqual(Softmax.draw(pp, uniform: 0.0), 0)
            XCTAssertEqual(Softmax.draw(pp, uniform: 0.2499), 0)
            XCTAssertEqual(Softmax.draw(pp, uniform: 0.25), 1)
            XCTAssertEqual(Softmax.draw(pp, uniform: 0.99999999), 1)
            XCTAssertEqual(Softmax.argmax(pp), 1)
        }
        let lse = small.withUnsafeBufferPointer { Softmax.logSumExp($0) }
        XCTAssertEqual(lse, log(4), accuracy: 1e-6)
    }
}

final class LSTMCellTests: XCTestCase {
    /// Independent reference: builds z = [onehot(note) | onehot(tick), h, 1] explicitly
    /// and multiplies by the full Wx in Double.
    func testStepMatchesExplicitOneHotProduct() {
        let shape = ModelShape(notes: 3, ticks: 4, hidden: 5)
        var rng = SeededRNG(seed: 3)
        let wx = (0..<shape.wxCount).map { _ in Float(rng.uniform(-0.5, 0.5)) }
        let wy = (0..<shape.wyCount).map { _ in Float(rng.uniform(-0.5, 0.5)) }
        var h = (0..<5).map { _ in Float(rng.uniform(-1, 1)) }
        var c = (0..<5).map { _ in Float(rng.uniform(-1, 1)) }
        let (note, tick) = (2, 1)
        var z = [Double](repeating: 0, count: shape.wxRows)
        z[note] = 1; z[shape.notes + tick] = 1
        for j in 0..<5 { z[shape.vocab + j] = Double(h[j]) }
        z[shape.wxRows - 1] = 1
        var pre = [Double](repeating: 0, count: 20)
        for r in 0..<shape.wxRows { for j in 0..<20 { pre[j] += z[r] * Double(wx[r * 20 + j]) } }
        func sig(_ x: Double) -> Double { 1 / (1 + exp(-x)) }
        var hRef = [Float](), cRef = [Float]()
        for j in 0..<5 {
            let cn = sig(pre[j]) * Double(c[j]) + sig(pre[5 + j]) * tanh(pre[15 + j])
            cRef.append(Float(cn)); hRef.append(Float(sig(pre[10 + j]) * tanh(cn)))
        }
        var gates = [Float](repeating: 0, count: 20)
        wx.withUnsafeBufferPointer { w in h.withUnsafeMutableBufferPointer { ph in
            c.withUnsafeMutableBufferPointer { pc in gates.withUnsafeMutableBufferPointer { pg in
                LSTMCell.step(shape: shape, wx: w, note: note, tick: tick, h: ph, c: pc, gates: pg) } } } }
        assertClose(h, hRef, tol: 1e-5, "h")
        assertClose(c, cRef, tol: 1e-5, "c")
        // y = [h, 1] · Wy
        var yRef = [Float](repeating: 0, count: 7)
        for j in 0..<7 {
            var s = Double(wy[5 * 7 + j])
            for r in 0..<5 { s += Double(h[r]) * Double(wy[r * 7 + j]) }
            yRef[j] = Float(s)
        }
        var y = [Float](repeating: 0, count: 7)
        wy.withUnsafeBufferPointer { w in h.withUnsafeBufferPointer { ph in
            y.withUnsafeMutableBufferPointer { LSTMCell.output(shape: shape, wy: w, h: ph, logits: $0) } } }
        assertClose(y, yRef, tol: 1e-5, "y")
    }

    func testLayoutOfOriginalModel() {
        let s = ModelShape(notes: 17, ticks: 209, hidden: 200)
        XCTAssertEqual(s.wxRows, 427); XCTAssertEqual(s.wxCols, 800)
        XCTAssertEqual(s.wyRows, 201); XCTAssertEqual(s.wyCols, 226)
        XCTAssertEqual(s.tickRow(0), 17); XCTAssertEqual(s.recurrentRow, 226); XCTAssertEqual(s.wxBiasRow, 426)
    }

    func testWeightsValidation() throws {
        let s = ModelShape(notes: 1, ticks: 1, hidden: 1)
        XCTAssertThrowsError(try LSTMWeights(shape: s, wx: [0], wy: [0, 0, 0, 0]))
        var w = try LSTMWeights(shape: s, wx: [Float](repeating: 0, count: 16), wy: [0, 0, 0, 0])
        XCTAssertNoThrow(try w.checkFinite())
        w.wx[5] = .nan
        XCTAssertThrowsError(try w.checkFinite()) { XCTAssertTrue("\($0)".contains("Wx[1, 1]"), "\($0)") }
        XCTAssertThrowsError(try Vocabulary(ixToNote: [36, 36], ixToTick: [0]))
        XCTAssertThrowsError(try Vocabulary(ixToNote: [200], ixToTick: [0]))
        let v = try Vocabulary(ixToNote: [36, 38], ixToTick: [0, 120])
        XCTAssertEqual(v.noteIndex(38), 1); XCTAssertNil(v.tickIndex(7))
        let json = try JSONOutput.encode(v)
        XCTAssertEqual(try JSONDecoder().decode(Vocabulary.self, from: json), v)
        XCTAssertThrowsError(try JSONDecoder().decode(Vocabulary.self, from: Data(#"{"ix_to_note":[],"ix_to_tick":[1]}"#.utf8)))
    }
}
