import XCTest
import Foundation
@testable import DrummerCore
import Synchronization
import FileOutput

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
        // DRUMMER_MAX_ISA: held down to its level (up from a weaker detection, down from a
        // stronger one), left alone at it, and never above the CPU's.
        XCTAssertEqual(BLASRuntime.preferredCoreType(detectedCore: "Prescott", cpuLevel: 3, userCoreType: nil, maxLevel: 2), "Haswell")
        XCTAssertEqual(BLASRuntime.preferredCoreType(detectedCore: "SkylakeX", cpuLevel: 3, userCoreType: nil, maxLevel: 2), "Haswell")
        XCTAssertEqual(BLASRuntime.preferredCoreType(detectedCore: "SkylakeX", cpuLevel: 3, userCoreType: nil, maxLevel: 0), "Prescott")
        XCTAssertNil(BLASRuntime.preferredCoreType(detectedCore: "Haswell", cpuLevel: 3, userCoreType: nil, maxLevel: 2))
        XCTAssertEqual(BLASRuntime.preferredCoreType(detectedCore: "Prescott", cpuLevel: 2, userCoreType: nil, maxLevel: 3), "Haswell")
        XCTAssertNil(BLASRuntime.preferredCoreType(detectedCore: "SkylakeX", cpuLevel: 3, userCoreType: "SkylakeX", maxLevel: 2))
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

        // A temperature whose inverse overflows gives the limit (all the mass on the largest
        // logit, the first on ties), where 0 · ∞ made it NaN; just above, the same.
        let three: [Float] = [0.5, 2, 2, -1]
        for t: Float in [Float.leastNormalMagnitude / 100, .leastNonzeroMagnitude, 1e-37, 1e-6] {
            three.withUnsafeBufferPointer { l in p.withUnsafeMutableBufferPointer { Softmax.probabilities(l, temperature: t, into: $0) } }
            XCTAssertEqual(p[0], 0, "T = \(t)")
            XCTAssertFalse(p.contains { $0.isNaN }, "T = \(t): \(p)")
            XCTAssertEqual(p[1] + p[2], 1, accuracy: 1e-6, "T = \(t): \(p)")
        }
        three.withUnsafeBufferPointer { l in p.withUnsafeMutableBufferPointer { Softmax.probabilities(l, temperature: .leastNonzeroMagnitude, into: $0) } }
        XCTAssertEqual(p, [0, 1, 0, 0])
    }
}

final class LSTMInferenceTests: XCTestCase {
    /// Independent reference: builds z = [onehot(note) | onehot(tick), h, 1] explicitly
    /// (indices from N = 3, K = 4, H = 5 here, not from ModelShape's helpers) and
    /// multiplies by the full Wx in Double.
    func testStepMatchesExplicitOneHotProduct() throws {
        let shape = ModelShape(notes: 3, ticks: 4, hidden: 5)
        var rng = SeededRNG(seed: 3)
        let wx = (0..<shape.wxCount).map { _ in Float(rng.uniform(-0.5, 0.5)) }
        let wy = (0..<shape.wyCount).map { _ in Float(rng.uniform(-0.5, 0.5)) }
        let h = (0..<5).map { _ in Float(rng.uniform(-1, 1)) }
        let c = (0..<5).map { _ in Float(rng.uniform(-1, 1)) }
        let (note, tick) = (2, 1)
        var z = [Double](repeating: 0, count: 3 + 4 + 5 + 1)
        z[note] = 1; z[3 + tick] = 1
        for j in 0..<5 { z[7 + j] = Double(h[j]) }
        z[12] = 1
        var pre = [Double](repeating: 0, count: 20)
        for r in 0..<13 { for j in 0..<20 { pre[j] += z[r] * Double(wx[r * 20 + j]) } }
        func sig(_ x: Double) -> Double { 1 / (1 + exp(-x)) }
        var hRef = [Float](), cRef = [Float]()
        for j in 0..<5 {
            let cn = sig(pre[j]) * Double(c[j]) + sig(pre[5 + j]) * tanh(pre[15 + j])
            cRef.append(Float(cn)); hRef.append(Float(sig(pre[10 + j]) * tanh(cn)))
        }
        let lstm = LSTMInference(weights: try LSTMWeights(shape: shape, wx: wx, wy: wy))
        lstm.setState(h: h, c: c)
        lstm.input[0] = Int32(note)
        lstm.input[1] = Int32(tick)
        lstm.step()
        let hOut = Array(lstm.h), cOut = Array(lstm.c)
        assertClose(hOut, hRef, tol: 1e-5, "h")
        assertClose(cOut, cRef, tol: 1e-5, "c")
        // y = [h, 1] · Wy
        var yRef = [Float](repeating: 0, count: 7)
        for j in 0..<7 {
            var s = Double(wy[5 * 7 + j])
            for r in 0..<5 { s += Double(hOut[r]) * Double(wy[r * 7 + j]) }
            yRef[j] = Float(s)
        }
        assertClose(Array(lstm.logits()), yRef, tol: 1e-5, "y")
        // A second step uses the new h and c (the state is carried).
        lstm.input[0] = 0
        lstm.input[1] = 3
        lstm.step()
        var z2 = [Double](repeating: 0, count: 13)
        z2[0] = 1; z2[3 + 3] = 1; z2[12] = 1
        for j in 0..<5 { z2[7 + j] = Double(hOut[j]) }
        var pre2 = [Double](repeating: 0, count: 20)
        for r in 0..<13 { for j in 0..<20 { pre2[j] += z2[r] * Double(wx[r * 20 + j]) } }
        var h2Ref = [Float]()
        for j in 0..<5 {
            let cn = sig(pre2[j]) * Double(cOut[j]) + sig(pre2[5 + j]) * tanh(pre2[15 + j])
            h2Ref.append(Float(sig(pre2[10 + j]) * tanh(cn)))
        }
        assertClose(Array(lstm.h), h2Ref, tol: 1e-5, "h after a second step")
    }

    func testLayoutOfOriginalModel() {
        let s = ModelShape(notes: 17, ticks: 209, hidden: 200)
        XCTAssertEqual(s.wxRows, 427); XCTAssertEqual(s.wxCols, 800)
        XCTAssertEqual(s.wyRows, 201); XCTAssertEqual(s.wyCols, 226)
        let layer = s.parameters.layers[0], head = s.parameters.head
        XCTAssertEqual(s.parameters.layers.count, 1)
        XCTAssertEqual(layer.inputGroupRows, [0..<17, 17..<226]); XCTAssertEqual(layer.recurrentRows, 226..<426)
        XCTAssertEqual(layer.biasRow, 426); XCTAssertEqual(layer.wx.name, "Wx"); XCTAssertEqual(layer.wx.range, 0..<(427 * 800))
        XCTAssertEqual(head.wy.name, "Wy"); XCTAssertEqual(head.wy.offset, 427 * 800)
        XCTAssertEqual(head.outputColumns, [0..<17, 17..<226]); XCTAssertEqual(head.bias, (427 * 800 + 200 * 226)..<(427 * 800 + 201 * 226))
        XCTAssertEqual(s.inputGroups, [17, 209]); XCTAssertEqual(s.outputGroups, [17, 209])
        XCTAssertEqual(s.inputWidth, 226); XCTAssertEqual(s.outputWidth, 226)
        XCTAssertEqual(s.parameterCount, 427 * 800 + 201 * 226)
        XCTAssertTrue(s.isOriginalLayout)
    }

    /// Two layers: Wx_0 (I+H+1)×4H, Wx_1 (2H+1)×4H, then Wy, back to back; each named view is
    /// where the layout's own sums say.
    func testLayoutOfStackedModel() {
        let s = ModelShape(inputGroups: [3, 4, 5], outputGroups: [3, 4], hidden: 6, layers: 2)
        let p = s.parameters
        XCTAssertEqual(p.layers.map(\.wx.name), ["Wx", "Wx1"])
        XCTAssertEqual(p.layers[0].wx.rows, 12 + 6 + 1); XCTAssertEqual(p.layers[0].wx.cols, 24)
        XCTAssertEqual(p.layers[1].wx.offset, 19 * 24); XCTAssertEqual(p.layers[1].wx.rows, 13)
        XCTAssertEqual(p.layers[1].inputGroupRows, [0..<6]); XCTAssertEqual(p.layers[1].recurrentRows, 6..<12)
        XCTAssertEqual(p.layers[1].biasRow, 12); XCTAssertFalse(p.layers[1].oneHotInputs)
        XCTAssertEqual(p.layers[1].bias, (19 * 24 + 12 * 24)..<(19 * 24 + 13 * 24))
        XCTAssertEqual(p.head.wy.offset, 19 * 24 + 13 * 24); XCTAssertEqual(p.head.wy.rows, 7); XCTAssertEqual(p.head.wy.cols, 7)
        XCTAssertEqual(p.count, 19 * 24 + 13 * 24 + 7 * 7); XCTAssertEqual(s.parameterCount, p.count)
        XCTAssertEqual(ParameterLayout.columns(of: .o, hidden: 6), 12..<18)
        XCTAssertFalse(s.isOriginalLayout)
        // The flat buffer splits into the named matrices and back.
        let flat = (0..<p.count).map(Float.init)
        let w = try! LSTMWeights(shape: s, parameters: flat)
        XCTAssertEqual(w.layerWx[1].first, Float(19 * 24)); XCTAssertEqual(w.wy.first, Float(p.head.wy.offset))
        XCTAssertEqual(w.parameters, flat)
        XCTAssertThrowsError(try LSTMWeights(shape: s, wx: w.wx, wy: w.wy), "a 2-layer shape needs both Wx")
    }

    func testWeightsValidation() throws {
        let s = ModelShape(notes: 1, ticks: 1, hidden: 1)
        XCTAssertThrowsError(try LSTMWeights(shape: s, wx: [0], wy: [0, 0, 0, 0])) {
            XCTAssertEqual($0 as? WeightsError, .wrongCount(matrix: "Wx", expected: 16, found: 1))
        }
        var w = try LSTMWeights(shape: s, wx: [Float](repeating: 0, count: 16), wy: [0, 0, 0, 0])
        XCTAssertNoThrow(try w.checkFinite())
        w.wx[5] = .nan
        XCTAssertThrowsError(try w.checkFinite()) { XCTAssertTrue("\($0)".contains("Wx[1, 1]"), "\($0)") }
        XCTAssertThrowsError(try Vocabulary(ixToNote: [36, 36], ixToTick: [0])) {
            XCTAssertEqual($0 as? VocabularyError, VocabularyError("ix_to_note has duplicates"))
        }
        XCTAssertThrowsError(try Vocabulary(ixToNote: [200], ixToTick: [0])) {
            XCTAssertEqual($0 as? VocabularyError, VocabularyError("ix_to_note holds 200, outside the MIDI note range 0...127"))
        }
        let v = try Vocabulary(ixToNote: [36, 38], ixToTick: [0, 120])
        XCTAssertEqual(VocabularyIndex(v).note(38), 1); XCTAssertNil(VocabularyIndex(v).tick(7))
        let json = try JSONOutput.encode(v)
        XCTAssertEqual(try JSONDecoder().decode(Vocabulary.self, from: json), v)
        XCTAssertThrowsError(try JSONDecoder().decode(Vocabulary.self, from: Data(#"{"ix_to_note":[],"ix_to_tick":[1]}"#.utf8))) {
            guard case DecodingError.dataCorrupted(let c)? = $0 as? DecodingError else { return XCTFail("\($0)") }
            XCTAssertEqual(c.debugDescription, "ix_to_note is empty")
        }
    }
}

/// A step split across two threads (`LSTMInference(weights:threads: 2)`) gives the one-thread
/// step's h, c and logits up to float32 rounding, step after step, with 1 to 3 layers, an odd
/// hidden size and an odd output width (halves of unequal sizes), from a non-zero state; and
/// an instance that goes away stops its thread.
final class SplitInferenceTests: XCTestCase {
    func testTwoThreadsGiveTheOneThreadStep() throws {
        for (layers, hidden, seed) in [(1, 9, 1), (2, 33, 2), (3, 16, 3)] {
            let shape = ModelShape(inputGroups: [5, 7, 3], outputGroups: [5, 7, 3], hidden: hidden, layers: layers)
            var rng = SeededRNG(seed: UInt64(seed))
            let w = try LSTMWeights(shape: shape, parameters: (0..<shape.parameterCount).map { _ in Float(rng.uniform(-0.7, 0.7)) })
            let one = LSTMInference(weights: w), two = LSTMInference(weights: w, threads: 2)
            for layer in 0..<layers {
                let h = (0..<hidden).map { _ in Float(rng.uniform(-0.5, 0.5)) }, c = (0..<hidden).map { _ in Float(rng.uniform(-1, 1)) }
                one.setState(layer: layer, h: h, c: c)
                two.setState(layer: layer, h: h, c: c)
            }
            var worst = Float(0)
            for step in 0..<200 {
                for (g, size) in shape.inputGroups.enumerated() {
                    let k = Int32(rng.index(below: size))
                    one.input[g] = k
                    two.input[g] = k
                }
                one.step()
                two.step()
                let a = Array(one.logits()), b = Array(two.logits())
                for (x, y) in zip(a, b) { worst = max(worst, abs(x - y) / max(1, abs(x))) }
                for (x, y) in zip(Array(one.h) + Array(one.c), Array(two.h) + Array(two.c)) {
                    XCTAssertEqual(x, y, accuracy: 1e-5 * max(1, abs(x)), "\(layers) layer(s), H=\(hidden), step \(step)")
                }
            }
            XCTAssertLessThan(worst, 1e-4, "\(layers) layer(s), H=\(hidden): logits")
        }
    }

    /// At the shipped model's shape (1,218 one-hot inputs in 51 groups, two layers of 256, 710
    /// outputs) the halves run one after the other on one thread (`halves: true`, a grid
    /// sampler's step on one core) give the split step's h, c and logits bit for bit, step after
    /// step, so `drummer sample` writes a seed's file alike on one core and on two (and
    /// choose-step's one-thread samplers the files `sample` writes).
    func testTheShippedShapeSplitsToTheSameBits() throws {
        let inputs = [513] + Array(repeating: 15, count: 9) + Array(repeating: 9, count: 9) + [16, 8]
            + Array(repeating: 16, count: 27) + [2, 2, 29]
        let outputs = [512] + Array(repeating: 14, count: 9) + Array(repeating: 8, count: 9)
        let shape = ModelShape(inputGroups: inputs, outputGroups: outputs, hidden: 256, layers: 2)
        XCTAssertEqual(shape.inputWidth, 1218)
        XCTAssertEqual(shape.outputWidth, 710)
        var rng = SeededRNG(seed: 11)
        let w = try LSTMWeights(shape: shape, parameters: (0..<shape.parameterCount).map { _ in Float(rng.uniform(-0.15, 0.15)) })
        let one = LSTMInference(weights: w, halves: true), two = LSTMInference(weights: w, threads: 2)
        var differing = 0, compared = 0
        for _ in 0..<100 {
            let (d, n) = Self.stepBoth(one, two, rng: &rng)
            differing += d
            compared += n
        }
        XCTAssertEqual(compared, 100 * (710 + 512))
        XCTAssertEqual(differing, 0, "values of the split step not bitwise the one-thread step's")
    }

    /// The calling thread takes the worker's half when the worker has not begun it (asleep
    /// between steps that come 2 ms apart), and with every core busy (threads spinning beside the
    /// step: halves taken, waited for, or stages run alone after a late worker, as the scheduler
    /// has it): the same bits as the halves on one thread.
    func testATakenOrLoneHalfGivesTheSameBits() throws {
        let shape = ModelShape(inputGroups: [40, 9, 16], outputGroups: [40, 9], hidden: 64, layers: 2)
        var rng = SeededRNG(seed: 5)
        let w = try LSTMWeights(shape: shape, parameters: (0..<shape.parameterCount).map { _ in Float(rng.uniform(-0.3, 0.3)) })
        let one = LSTMInference(weights: w, halves: true), two = LSTMInference(weights: w, threads: 2)
        let stop = Atomic<Bool>(false)
        var spinners: [Thread] = []
        var differing = 0
        for round in 0..<2 {
            // Round 0: steps 2 ms apart on a quiet machine. Round 1: every core busy.
            if round == 1 {
                for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
                    let t = Thread { while !stop.load(ordering: .relaxed) {} }
                    t.start()
                    spinners.append(t)
                }
            }
            for _ in 0..<(round == 0 ? 60 : 3_000) {
                differing += Self.stepBoth(one, two, rng: &rng).differing
                if round == 0 { usleep(2_000) }
            }
            if round == 0 { XCTAssertGreaterThan(two.splitStages.taken, 0, "no half taken from a sleeping worker") }
        }
        stop.store(true, ordering: .relaxed)
        XCTAssertEqual(differing, 0, "split stages \(two.splitStages) not bitwise the halves on one thread")
    }

    /// A ticket at or below the newest claimed is refused: the worker that read ticket 17 and
    /// woke after the calling thread had taken it and ticket 33 does not run 17's half again.
    /// (An exchange-based claim gave 17 to it: a busy machine then changed a seed's file.)
    func testAStaleTicketIsNotClaimed() {
        let claim = TicketClaim()
        XCTAssertTrue(claim.claim(17))
        XCTAssertFalse(claim.claim(17), "a ticket claimed twice")
        XCTAssertTrue(claim.claim(33))
        XCTAssertFalse(claim.claim(17), "a stale ticket claimed after a later one")
        XCTAssertFalse(claim.claim(33))
        XCTAssertTrue(claim.claim(49))
    }

    /// Two threads claiming the same rising tickets at once: no ticket goes to both.
    func testRacingClaimsTakeEachTicketOnce() {
        let claim = TicketClaim(), n = 200_000
        let won = Mutex<[Set<Int>]>([[], []])
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            // One thread claims every ticket, the other every ticket in turn with gaps (a worker
            // that missed some), so that their claims cross at every distance.
            var mine = Set<Int>(), t = 1
            while t <= n {
                if claim.claim(t) { mine.insert(t) }
                t += i == 0 ? 1 : 1 + t % 3
            }
            won.withLock { $0[i] = mine }
        }
        let (both, taken) = won.withLock { ($0[0].intersection($0[1]).count, $0[0].union($0[1]).count) }
        XCTAssertEqual(both, 0, "tickets claimed by both threads")
        XCTAssertGreaterThan(taken, n / 2)
    }

    /// One step of both on the same random classes; the logits, h and c values whose bits
    /// differ, and how many were compared.
    private static func stepBoth(_ one: LSTMInference, _ two: LSTMInference,
                                 rng: inout SeededRNG) -> (differing: Int, compared: Int) {
        for (g, size) in one.shape.inputGroups.enumerated() {
            let k = Int32(rng.index(below: size))
            one.input[g] = k
            two.input[g] = k
        }
        one.step()
        two.step()
        let a = Array(one.logits()) + Array(one.h) + Array(one.c)
        let b = Array(two.logits()) + Array(two.h) + Array(two.c)
        return (zip(a, b).filter { $0.bitPattern != $1.bitPattern }.count, a.count)
    }

    func testSplitInstancesComeAndGo() throws {
        let shape = ModelShape(inputGroups: [4, 4], outputGroups: [4, 4], hidden: 8, layers: 2)
        let w = try LSTMWeights(shape: shape, parameters: [Float](repeating: 0.1, count: shape.parameterCount))
        // Threads of this process (Linux: one entry each in /proc/self/task).
        func threads() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count }
        let before = try threads()
        for _ in 0..<50 {
            let lstm = LSTMInference(weights: w, threads: 2)
            lstm.step()
            _ = lstm.logits()
        }
        // Each instance's helper thread ends with it: 50 left running would show here.
        var after = try threads()
        for _ in 0..<100 where after > before + 4 {
            usleep(10_000)  // a joined thread leaves the task list as it exits
            after = try threads()
        }
        XCTAssertLessThanOrEqual(after, before + 4, "helper threads outlive their instances: \(before) → \(after)")
    }
}
