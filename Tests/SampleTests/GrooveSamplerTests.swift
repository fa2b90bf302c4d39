// The sampler on groove models (position-in-bar and velocity groups): draws against the
// double-precision reference (ReferenceLSTM.generate(groups:)), the position fed back at
// each step, the meter, duplicate onsets, and velocities within their bins.
import XCTest
import DrummerCore
import MIDIParse
@testable import Sample

final class GrooveSamplerTests: XCTestCase {
    /// The reference's view of `g` sampled in bars of numerator/denominator (computed by the
    /// reference, not by Meter).
    private func reference(_ g: ModelGroups, meter: (Int, Int)) -> ReferenceLSTM.Groups {
        ReferenceLSTM.Groups(
            tickValues: g.vocabulary.ixToTick,
            position: g.position.map {
                (binary: $0.encoding == .binary, slots: $0.slots, ticksPerSlot: $0.ticksPerSlot,
                 barTicks: ReferenceLSTM.barTicks(meter.0, meter.1, ppq: $0.ppq))
            },
            velocity: g.velocity.map { (bins: $0.bins, histogram: $0.histogram) })
    }

    /// The meters tried: the model's own (4/4, by leaving SamplingOptions.meter nil), 3/4, 6/8, 7/8.
    private let meters: [(Meter?, (Int, Int))] = [(nil, (4, 4)), (Meter(numerator: 3, denominator: 4), (3, 4)),
                                                  (Meter(numerator: 6, denominator: 8), (6, 8)),
                                                  (Meter(numerator: 7, denominator: 8), (7, 8))]

    func testDrawsMatchReferenceAtSeveralTemperaturesMetersAndEncodings() throws {
        for encoding in PositionEncoding.allCases {
            let (w, g) = try TestModels.groove(encoding: encoding)
            let sampler = try Sampler(weights: w, groups: g)
            for (meter, bar) in meters {
                for t in [Float(1), 0.5, 2, 0] {
                    let label = "\(encoding) \(bar.0)/\(bar.1) T=\(t)"
                    var rng = SeededRNG(seed: 5)
                    let got = try sampler.generate(count: 120, options: SamplingOptions(temperature: t, meter: meter), rng: &rng)
                    let want = ReferenceLSTM.generate(w, groups: reference(g, meter: bar), count: 120, temperature: Double(t),
                                                      initScale: 0.1, primer: [], seed: 5)
                    XCTAssertEqual(got.map(\.event), want.events, label)
                    XCTAssertEqual(got.map(\.hit.velocity), want.velocities, label)
                    XCTAssertEqual(got.map(\.hit), zip(want.events, want.velocities).map {
                        DrumHit(note: g.vocabulary.ixToNote[$0.note], delta: g.vocabulary.ixToTick[$0.tick], velocity: $1)
                    }, label)
                    // The positions fed stay inside the bar and vary; several velocity bins are drawn.
                    let barTicks = bar.0 * 1920 / bar.1
                    XCTAssertTrue(want.fed.allSatisfy { (0..<barTicks).contains($0) }, label)
                    XCTAssertGreaterThan(Set(want.fed.map { $0 / 120 }).count, t == 0 ? 1 : 5, label)
                    if t > 0 { XCTAssertGreaterThan(Set(got.map(\.event.velocity)).count, 2, label) }
                }
            }
        }
    }

    /// The comparison above sees positions: a reference fed the positions of other bars (4/4
    /// where the sampler counts 3/4, or positions left at the bar line) draws differently.
    func testReferenceWithOtherPositionsDisagrees() throws {
        let (w, g) = try TestModels.groove()
        let sampler = try Sampler(weights: w, groups: g)
        var rng = SeededRNG(seed: 5)
        let got = try sampler.generate(count: 120, options: SamplingOptions(temperature: 1, meter: Meter("3/4")), rng: &rng)
        let right = ReferenceLSTM.generate(w, groups: reference(g, meter: (3, 4)), count: 120, temperature: 1,
                                           initScale: 0.1, primer: [], seed: 5)
        let fourFour = ReferenceLSTM.generate(w, groups: reference(g, meter: (4, 4)), count: 120, temperature: 1,
                                              initScale: 0.1, primer: [], seed: 5)
        var atBarLine = reference(g, meter: (3, 4))
        atBarLine.position?.barTicks = 1  // every event at tick 0 of its bar
        let still = ReferenceLSTM.generate(w, groups: atBarLine, count: 120, temperature: 1, initScale: 0.1, primer: [], seed: 5)
        XCTAssertEqual(got.map(\.event), right.events)
        XCTAssertNotEqual(got.map(\.event), fourFour.events)
        XCTAssertNotEqual(got.map(\.event), still.events)
        XCTAssertTrue(right.fed.allSatisfy { (0..<1440).contains($0) })
        XCTAssertTrue(fourFour.fed.contains { $0 >= 1440 })
    }

    /// With a model whose drawn note is the slot it was fed, the positions fed back are read off
    /// the output: hit i + 1's note is the slot of hit i's onset (the sum of the deltas so far)
    /// in its bar, hit 1's the slot of the start event (the bar line).
    func testPositionFedBackIsTheSlotOfTheAccumulatedTicks() throws {
        let ticks = [0, 90, 120, 240, 480, 1000]
        for encoding in PositionEncoding.allCases {
            let (w, g) = try TestModels.positionEcho(encoding: encoding, ticks: ticks)
            let sampler = try Sampler(weights: w, groups: g)
            for (meter, bar) in meters {
                let barTicks = bar.0 * 480 * 4 / bar.1
                for t in [Float(1), 0] {
                    let label = "\(encoding) \(bar.0)/\(bar.1) T=\(t)"
                    var rng = SeededRNG(seed: 17)
                    let out = try sampler.generate(count: 600, options: SamplingOptions(temperature: t, meter: meter), rng: &rng)
                    var onset = 0, slots = Set<Int>()
                    for (i, h) in out.enumerated() {
                        let slot = onset % barTicks / 120
                        slots.insert(slot)
                        XCTAssertEqual(h.event.note, slot, "\(label): hit \(i) after onset \(onset)")
                        XCTAssertEqual(h.hit.note, 40 + slot, label)
                        onset += h.hit.delta
                    }
                    if t == 1 {
                        // Every slot of the bar, and none past it, was fed.
                        XCTAssertEqual(slots, Set(0..<(barTicks / 120)), label)
                    }
                }
            }
        }
    }

    /// After a primer the position goes on from the primer's last event's place in its bar;
    /// primer events are fed at their own places.
    func testPrimerPositionsAndVelocitiesMatchReference() throws {
        let primer = [
            Sampler.PrimerEvent(event: SampledEvent(note: 1, tick: 0, velocity: 2), tickInBar: 0, barTicks: 1440),
            Sampler.PrimerEvent(event: SampledEvent(note: 0, tick: 3, velocity: 1), tickInBar: 240, barTicks: 1440),
            Sampler.PrimerEvent(event: SampledEvent(note: 2, tick: 5, velocity: 3), tickInBar: 1240, barTicks: 1440),
            Sampler.PrimerEvent(event: SampledEvent(note: 3, tick: 1, velocity: 0), tickInBar: 1330, barTicks: 1440),
        ]
        let refPrimer = primer.map { (event: $0.event, tickInBar: $0.tickInBar) }
        for encoding in PositionEncoding.allCases {
            let (w, g) = try TestModels.groove(encoding: encoding)
            let sampler = try Sampler(weights: w, groups: g)
            for t in [Float(1), 0] {
                var rng = SeededRNG(seed: 23)
                let got = try sampler.generate(count: 60, options: SamplingOptions(temperature: t, meter: Meter("3/4")),
                                               primer: primer, rng: &rng)
                let want = ReferenceLSTM.generate(w, groups: reference(g, meter: (3, 4)), count: 60, temperature: Double(t),
                                                  initScale: 0.1, primer: refPrimer, seed: 23)
                XCTAssertEqual(got.map(\.event), want.events, "\(encoding) T=\(t)")
                XCTAssertEqual(got.map(\.hit.velocity), want.velocities, "\(encoding) T=\(t)")
                XCTAssertEqual(want.fed.first, 1330)
            }
        }
        // The echo model names the slot and the velocity bin the primer left off at
        // (1330 / 120 = 11), and then goes on from there: 1330 + 240 is slot 1 of the next 3/4 bar.
        let (w, g) = try TestModels.positionEcho(encoding: .binary, ticks: [0, 90, 120, 240, 480, 1000])
        let sampler = try Sampler(weights: w, groups: g)
        for bin in 0..<2 {
            var rng = SeededRNG(seed: 2)
            let echoed = try sampler.generate(
                count: 200, options: SamplingOptions(temperature: 1, meter: Meter("3/4")),
                primer: [Sampler.PrimerEvent(event: SampledEvent(note: 0, tick: 0, velocity: 1 - bin), tickInBar: 130, barTicks: 1440),
                         Sampler.PrimerEvent(event: SampledEvent(note: 5, tick: 2, velocity: bin), tickInBar: 1330, barTicks: 1440)],
                rng: &rng)
            XCTAssertEqual(echoed.first?.event.note, 11)
            XCTAssertEqual(echoed.count > 1 ? echoed[1].event.note : nil, (1330 + echoed[0].hit.delta) % 1440 / 120)
            XCTAssertTrue(echoed.allSatisfy { $0.event.velocity == bin }, "bin \(bin)")
            XCTAssertTrue(echoed.allSatisfy { (bin == 0 ? 1...63 : 64...127).contains($0.hit.velocity) }, "bin \(bin)")
        }
    }

    func testMeterLongerThanTheSlotsIsRefused() throws {
        let (w, g) = try TestModels.groove()
        let sampler = try Sampler(weights: w, groups: g)
        var rng = SeededRNG(seed: 1)
        let fiveFour = try XCTUnwrap(Meter("5/4"))
        XCTAssertThrowsError(try sampler.generate(count: 10, options: SamplingOptions(meter: fiveFour), rng: &rng)) {
            XCTAssertEqual($0 as? SamplerError, .meterTooLong(meter: fiveFour, slots: 16, longestBar: 1920))
            XCTAssertEqual("\($0)", "meter 5/4 has bars longer than the model knows (16 position slots, bars of at most 1920 ticks)")
        }
        // The longest meter that fits, 4/4 = 8/8 = 2/2, is accepted; so is a shorter one.
        for m in ["8/8", "2/2", "1/4"] {
            XCTAssertEqual(try sampler.generate(count: 10, options: SamplingOptions(meter: Meter(m)), rng: &rng).count, 10, m)
        }
        // A velocity bin outside the model's bins in a primer is a typed error.
        XCTAssertThrowsError(try sampler.generate(count: 1, primer: [Sampler.PrimerEvent(event: SampledEvent(note: 0, tick: 0, velocity: 4))],
                                                  rng: &rng)) {
            XCTAssertEqual($0 as? SamplerError, .primerOutOfRange(position: 0, event: SampledEvent(note: 0, tick: 0, velocity: 4), notes: 4, ticks: 6))
        }
    }

    // MARK: - Duplicate onsets

    /// A model biased towards note 0 (+8 on its logit) at delta 0 (+16): without the mask
    /// nearly every hit would repeat note 0 at the onset already struck.
    private func biased(_ w: LSTMWeights, zeroTick: Int) throws -> LSTMWeights {
        let s = w.shape, O = s.outputWidth
        var wy = w.wy
        wy[s.hidden * O] += 8
        wy[s.hidden * O + s.notes + zeroTick] += 16
        return try LSTMWeights(shape: s, wx: w.wx, wy: wy)
    }

    /// The hits grouped by onset (a new onset at every non-zero delta).
    private func onsets(_ hits: [DrumHit]) -> [[Int]] {
        var out: [[Int]] = []
        for (i, h) in hits.enumerated() {
            if i == 0 || h.delta != 0 { out.append([]) }
            out[out.count - 1].append(h.note)
        }
        return out
    }

    func testExactlyNHitsAndNoNoteTwiceAtAnOnset() throws {
        let (gw, g) = try TestModels.groove()
        let (ow, v) = try TestModels.small()
        for (name, w, groups) in [("groove", try biased(gw, zeroTick: 0), g),
                                  ("original", try biased(ow, zeroTick: 0), ModelGroups(vocabulary: v))] {
            let sampler = try Sampler(weights: w, groups: groups)
            for t in [Float(1), 0.5, 0] {
                var rng = SeededRNG(seed: 3)
                let out = try sampler.generate(count: 2000, options: SamplingOptions(temperature: t), rng: &rng)
                let hits = out.map(\.hit)
                XCTAssertEqual(out.count, 2000, "\(name) T=\(t)")
                let groupsByOnset = onsets(hits)
                XCTAssertTrue(groupsByOnset.allSatisfy { Set($0).count == $0.count }, "\(name) T=\(t): a note twice at an onset")
                XCTAssertEqual(DrumMIDI.deduplicated(hits), hits, "\(name) T=\(t)")
                // Delta 0 dominates: onsets fill up with every note (4), so the mask excluded
                // every note there and the next hit had to move on.
                XCTAssertGreaterThan(hits.filter { $0.delta == 0 }.count, 1000, "\(name) T=\(t)")
                XCTAssertEqual(groupsByOnset.map(\.count).max(), 4, "\(name) T=\(t)")
                // The draws are the reference's (joint masking, renormalised).
                let want = ReferenceLSTM.generate(w, groups: reference(groups, meter: (4, 4)), count: 2000,
                                                  temperature: Double(t), initScale: 0.1, primer: [], seed: 3)
                XCTAssertEqual(out.map(\.event), want.events, "\(name) T=\(t)")
            }
        }
    }

    /// When every note has been struck at the onset (more hits there than notes) the mask
    /// excludes them all at delta 0: the next hit takes a later tick, drawn from the ticks
    /// after 0, and nothing hangs.
    func testAnOnsetHoldingEveryNoteMovesOn() throws {
        let vocab = try Vocabulary(ixToNote: [36, 38], ixToTick: [0, 120])
        let groups = ModelGroups(vocabulary: vocab)
        let shape = groups.shape(hidden: 2)
        var wy = [Float](repeating: 0, count: shape.wyCount)
        wy[2 * 4 + 2] = 30  // tick value 0 is e^30 times as likely as 120
        let w = try LSTMWeights(shape: shape, wx: [Float](repeating: 0, count: shape.wxCount), wy: wy)
        let sampler = try Sampler(weights: w, groups: groups)
        for t in [Float(1), 0] {
            var rng = SeededRNG(seed: 9)
            let hits = try sampler.generate(count: 1000, options: SamplingOptions(temperature: t), rng: &rng).map(\.hit)
            XCTAssertEqual(hits.count, 1000)
            // Every onset after the first holds both notes: the one the second hit moves away from.
            let byOnset = onsets(hits)
            XCTAssertTrue(byOnset.allSatisfy { Set($0).count == $0.count }, "T=\(t)")
            XCTAssertTrue(byOnset.dropFirst().dropLast().allSatisfy { $0.count == 2 }, "T=\(t): \(byOnset.prefix(10))")
            XCTAssertEqual(hits.filter { $0.delta == 120 }.count, byOnset.count - (hits[0].delta == 120 ? 0 : 1), "T=\(t)")
        }
    }

    /// A vocabulary whose only tick value is 0 cannot place more hits than notes without
    /// repeating one: the sampler still ends with n hits (nothing can be masked), and the file
    /// holds each note once (DrumMIDI writes a repeated note at one onset once).
    func testOnlySimultaneousTicksEndsAndWritesEachNoteOnce() throws {
        let vocab = try Vocabulary(ixToNote: [36, 38], ixToTick: [0])
        let shape = vocab.shape(hidden: 2)
        let w = try LSTMWeights(shape: shape, wx: [Float](repeating: 0.1, count: shape.wxCount),
                                wy: [Float](repeating: 0.1, count: shape.wyCount))
        var rng = SeededRNG(seed: 1)
        let hits = try Sampler(weights: w, vocabulary: vocab).generate(count: 50, rng: &rng).map(\.hit)
        XCTAssertEqual(hits.count, 50)
        XCTAssertTrue(hits.allSatisfy { $0.delta == 0 })
        XCTAssertEqual(try DrumMIDI.notes(hits).map(\.note).sorted(), [36, 38])
    }

    // MARK: - Velocities

    func testVelocityWithinABinIsTheHistogramsQuantile() throws {
        var histogram = [Int](repeating: 0, count: 127)
        histogram[0] = 1; histogram[2] = 3; histogram[4] = 2  // velocities 1, 3, 5
        let v = try VelocityGroup(bins: [1...3, 4...5, 6...9], histogram: histogram)
        // Bin 0: 1 with u < 1/4, then 3 (2 never); bin 1: only 5; bin 2 is empty: its middle.
        XCTAssertEqual([0, 0.2499, 0.25, 0.9999].map { v.velocity(bin: 0, uniform: $0) }, [1, 1, 3, 3])
        XCTAssertEqual([0, 0.5, 0.9999].map { v.velocity(bin: 1, uniform: $0) }, [5, 5, 5])
        XCTAssertEqual(v.velocity(bin: 2, uniform: 0.3), 7)
        XCTAssertEqual(v.range, 1...9)
        XCTAssertEqual([1, 3, 4, 9, 10, 0].map { v.bin(of: $0) }, [0, 0, 1, 2, nil, nil])
    }

    /// Over many draws each velocity lies in its sampled bin, and within a bin the values
    /// follow the training histogram (Pearson chi-square below its 99.9% quantile).
    func testSampledVelocitiesLieInTheirBinAndFollowTheHistogram() throws {
        let (w, g) = try TestModels.groove()
        let velocity = try XCTUnwrap(g.velocity)
        let sampler = try Sampler(weights: w, groups: g)
        var counts = [[Int]](repeating: [Int](repeating: 0, count: 128), count: velocity.bins.count)
        var total = 0
        for seed in 0..<10 as Range<UInt64> {
            var rng = SeededRNG(seed: seed)
            for h in try sampler.generate(count: 3000, rng: &rng) {
                XCTAssertTrue(velocity.bins[h.event.velocity].contains(h.hit.velocity), "\(h)")
                counts[h.event.velocity][h.hit.velocity] += 1
                total += 1
            }
        }
        XCTAssertEqual(total, 30_000)
        // Bin 0 holds no training velocity: its middle, 10.
        XCTAssertEqual(counts[0].indices.filter { counts[0][$0] > 0 }, counts[0][10] > 0 ? [10] : [])
        for b in 1..<velocity.bins.count {
            let r = velocity.bins[b]
            let n = r.reduce(0) { $0 + counts[b][$1] }
            let mass = r.reduce(0) { $0 + TestModels.grooveHistogram[$1 - 1] }
            XCTAssertGreaterThan(n, 1000, "bin \(b) drawn too rarely to test")
            var chi2 = 0.0, cells = 0
            for v in r {
                let expected = Double(n) * Double(TestModels.grooveHistogram[v - 1]) / Double(mass)
                if expected == 0 {
                    XCTAssertEqual(counts[b][v], 0, "velocity \(v) has no training hits but was drawn")
                    continue
                }
                chi2 += (Double(counts[b][v]) - expected) * (Double(counts[b][v]) - expected) / expected
                cells += 1
            }
            let limit = chiSquareQuantile999(degrees: cells - 1)
            print("velocity bin \(r): \(n) draws, chi-square \(chi2) over \(cells - 1) dof (99.9% quantile \(limit))")
            XCTAssertLessThan(chi2, limit, "bin \(r)")
        }
    }

    /// Wilson–Hilferty: the 99.9% quantile of chi-square with k degrees of freedom (z = 3.0902).
    private func chiSquareQuantile999(degrees k: Int) -> Double {
        let a = 2 / (9 * Double(k))
        let x = 1 - a + 3.0902 * a.squareRoot()
        return Double(k) * x * x * x
    }

    func testModelWithoutVelocityGroupWritesVelocity100() throws {
        let (w, v) = try TestModels.small()
        var rng = SeededRNG(seed: 4)
        let out = try Sampler(weights: w, vocabulary: v).generate(count: 200, rng: &rng)
        XCTAssertTrue(out.allSatisfy { $0.hit.velocity == 100 && $0.event.velocity == 0 })
    }

    /// A file written with the sampled velocities reads back (MIDIParse) with them; a forced
    /// velocity replaces every one.
    func testWrittenFileHoldsTheSampledVelocities() throws {
        let (w, g) = try TestModels.groove()
        var rng = SeededRNG(seed: 8)
        let hits = try Sampler(weights: w, groups: g).generate(count: 400, rng: &rng).map(\.hit)
        XCTAssertGreaterThan(Set(hits.map(\.velocity)).count, 20)
        let back = DrumMIDI.hits(in: try MIDIFile.parse(DrumMIDI.encode(hits), path: "g.mid").file, channel: 9)
        XCTAssertEqual(back, hits)
        let forced = DrumMIDI.hits(in: try MIDIFile.parse(DrumMIDI.encode(hits, options: DrumMIDIOptions(velocity: 77)),
                                                          path: "f.mid").file, channel: 9)
        XCTAssertEqual(forced, hits.map { DrumHit(note: $0.note, delta: $0.delta, velocity: 77) })
    }
}
