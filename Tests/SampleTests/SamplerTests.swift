import XCTest
import DrummerCore
@testable import Sample

final class SamplerTests: XCTestCase {
    func testArgmaxMatchesReference() throws {
        let (w, v) = try TestModels.small()
        let sampler = try Sampler(weights: w, vocabulary: v)
        var rng = SeededRNG(seed: 11)
        let got = try sampler.generate(count: 60, options: SamplingOptions(temperature: 0), rng: &rng).map(\.event)
        let want = ReferenceLSTM.generate(w, zeroTick: 0, count: 60, temperature: 0, initScale: 0.1, primer: [], seed: 11)
        XCTAssertEqual(got, want)
        XCTAssertGreaterThan(Set(got).count, 1)
    }

    func testDrawsMatchReferenceAtSeveralTemperatures() throws {
        let (w, v) = try TestModels.small()
        let sampler = try Sampler(weights: w, vocabulary: v)
        for t in [Float(1), 0.5, 2] {
            var rng = SeededRNG(seed: 5)
            let got = try sampler.generate(count: 80, options: SamplingOptions(temperature: t), rng: &rng).map(\.event)
            let want = ReferenceLSTM.generate(w, zeroTick: 0, count: 80, temperature: Double(t), initScale: 0.1,
                                              primer: [], seed: 5)
            XCTAssertEqual(got, want, "temperature \(t)")
        }
    }

    func testSeedReproducesAndDifferentSeedsDiffer() throws {
        let (w, v) = try TestModels.small()
        let sampler = try Sampler(weights: w, vocabulary: v)
        var a = SeededRNG(seed: 99), b = SeededRNG(seed: 99), c = SeededRNG(seed: 100)
        let x = try sampler.generate(count: 200, rng: &a)
        let y = try sampler.generate(count: 200, rng: &b)
        let z = try sampler.generate(count: 200, rng: &c)
        XCTAssertEqual(x, y)
        XCTAssertNotEqual(x, z)
        // A second sampler over the same model gives the same stream.
        var d = SeededRNG(seed: 99)
        XCTAssertEqual(try Sampler(weights: w, vocabulary: v).generate(count: 200, rng: &d), x)
    }

    func testLowTemperatureApproachesArgmax() throws {
        let (w, v) = try TestModels.small()
        let sampler = try Sampler(weights: w, vocabulary: v)
        var r0 = SeededRNG(seed: 8), r1 = SeededRNG(seed: 8)
        let argmax = try sampler.generate(count: 100, options: SamplingOptions(temperature: 0), rng: &r0)
        let cold = try sampler.generate(count: 100, options: SamplingOptions(temperature: 1e-3), rng: &r1)
        XCTAssertEqual(cold, argmax)
        // A temperature so small that 1/T overflows is still argmax, not NaN.
        var r2 = SeededRNG(seed: 8)
        XCTAssertEqual(try sampler.generate(count: 100, options: SamplingOptions(temperature: .leastNonzeroMagnitude), rng: &r2), argmax)
        // Agreement with argmax grows as the temperature falls.
        func agreement(_ t: Float) throws -> Int {
            var total = 0
            for seed in 0..<20 as Range<UInt64> {
                var ra = SeededRNG(seed: seed), rb = SeededRNG(seed: seed)
                let a = try sampler.generate(count: 30, options: SamplingOptions(temperature: 0), rng: &ra)
                let b = try sampler.generate(count: 30, options: SamplingOptions(temperature: t), rng: &rb)
                total += zip(a, b).prefix { $0 == $1 }.count
            }
            return total
        }
        let figures = try [2, 1, 0.3, 0.1, 0.01, 0.001].map { try agreement(Float($0)) }
        print("greedy-prefix agreement (of 600) at T = 2, 1, 0.3, 0.1, 0.01, 0.001:", figures)
        XCTAssertLessThan(figures[0], figures[2])
        XCTAssertLessThan(figures[1], figures[3])
        XCTAssertLessThan(figures[3], figures[5])
        XCTAssertGreaterThan(figures[5], 570)
    }

    func testPrimerSetsStateAndIsNotRepeated() throws {
        let (w, v) = try TestModels.small()
        let sampler = try Sampler(weights: w, vocabulary: v)
        let primer = [SampledEvent(note: 0, tick: 0), SampledEvent(note: 2, tick: 3),
                      SampledEvent(note: 1, tick: 5), SampledEvent(note: 3, tick: 2)]
        var rng = SeededRNG(seed: 21)
        let out = try sampler.generate(count: 50, options: SamplingOptions(temperature: 1),
                                       primer: primer, rng: &rng)
        XCTAssertEqual(out.count, 50)
        XCTAssertEqual(out.map(\.event), ReferenceLSTM.generate(w, zeroTick: 0, count: 50, temperature: 1, initScale: 0.1,
                                                             primer: primer, seed: 21))
        // Continuation: priming with primer + the first k outputs continues the same
        // greedy sequence, so the primer's last event is what the first draw is conditioned on.
        let greedy = SamplingOptions(temperature: 0)
        var r0 = SeededRNG(seed: 4)
        let full = try sampler.generate(count: 40, options: greedy, primer: primer, rng: &r0)
        var r1 = SeededRNG(seed: 4)
        let rest = try sampler.generate(count: 30, options: greedy, primer: primer + full[..<10].map(\.event), rng: &r1)
        XCTAssertEqual(Array(full[10...]), rest)
        // A different last primer event changes what follows.
        var r2 = SeededRNG(seed: 4)
        var other = primer
        other[3] = SampledEvent(note: 0, tick: 4)
        XCTAssertNotEqual(try sampler.generate(count: 40, options: greedy, primer: other, rng: &r2), full)
    }

    func testInitScaleZeroMakesGreedyOutputSeedIndependentWithPrimer() throws {
        let (w, v) = try TestModels.small()
        let sampler = try Sampler(weights: w, vocabulary: v)
        let opts = SamplingOptions(temperature: 0, initScale: 0)
        let primer = [SampledEvent(note: 1, tick: 1)]
        var a = SeededRNG(seed: 1), b = SeededRNG(seed: 2)
        XCTAssertEqual(try sampler.generate(count: 20, options: opts, primer: primer, rng: &a),
                       try sampler.generate(count: 20, options: opts, primer: primer, rng: &b))
    }

    func testInvalidArgumentsAreTypedErrors() throws {
        let (w, v) = try TestModels.small()
        let sampler = try Sampler(weights: w, vocabulary: v)
        var rng = SeededRNG(seed: 1)
        XCTAssertThrowsError(try sampler.generate(count: -1, rng: &rng)) {
            XCTAssertEqual($0 as? SamplerError, .badCount(-1))
        }
        for t in [Float(-1), .infinity] {
            XCTAssertThrowsError(try sampler.generate(count: 1, options: SamplingOptions(temperature: t), rng: &rng)) {
                XCTAssertEqual($0 as? SamplerError, .badTemperature(t))
            }
        }
        XCTAssertThrowsError(try sampler.generate(count: 1, options: SamplingOptions(temperature: .nan), rng: &rng)) {
            guard case .badTemperature(let t)? = $0 as? SamplerError else { return XCTFail("\($0)") }
            XCTAssertTrue(t.isNaN)
        }
        XCTAssertThrowsError(try sampler.generate(count: 1, options: SamplingOptions(initScale: -0.1), rng: &rng)) {
            XCTAssertEqual($0 as? SamplerError, .badInitScale(-0.1))
        }
        XCTAssertThrowsError(try sampler.generate(count: 1, primer: [SampledEvent(note: 4, tick: 0)], rng: &rng)) {
            guard case .primerOutOfRange(0, _, 4, 6)? = $0 as? SamplerError else {
                return XCTFail("\($0)")
            }
        }
        let other = try Vocabulary(ixToNote: [36], ixToTick: [0])
        XCTAssertThrowsError(try Sampler(weights: w, vocabulary: other)) {
            XCTAssertEqual($0 as? SamplerError, .vocabularyMismatch(
                "weights have input groups [4, 6] and output groups [4, 6], the model's tables [1, 1] and [1, 1]"))
        }
        XCTAssertEqual(try sampler.generate(count: 0, rng: &rng), [])
    }

    func testHitsMapIndicesToMIDIValues() throws {
        let (_, v) = try TestModels.small()
        XCTAssertEqual(v.hits([SampledEvent(note: 2, tick: 0), SampledEvent(note: 0, tick: 5)]),
                       [DrumHit(note: 42, delta: 0), DrumHit(note: 36, delta: 480)])
    }
}
