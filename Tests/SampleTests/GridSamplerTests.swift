// The grid runtime (Sample/GridSampler.swift) on a model whose logits are its biases alone
// (all weights zero), so that what it must draw is known: a step of kick and snare, uniform
// velocity bins and single-hit offset bins. Checks the hit count, the onsets (step·120 +
// an offset of the table), the notes (each class's training notes) and the offset coupling:
// with coupling 1 a step's kick and snare always land together, with 0 a quarter of the time.
import DrummerCore
import MIDIParse
import XCTest
@testable import Sample

final class GridSamplerTests: XCTestCase {
    /// `hitSets`: the hit-set logits (nil: {kick, snare} at 30, the others 0); `velocityBins`:
    /// every class's velocity-bin logits (nil: 0, uniform).
    func model(coupling: Double, hitSets: [Int: Float]? = nil, velocityBins: [Float]? = nil) throws -> Sampler {
        var counts = [[Int]](repeating: [Int](repeating: 0, count: 128), count: 9)
        for (c, n) in DrumClasses.representatives.enumerated() { counts[c][n] = 1 }
        counts[1][38] = 3
        counts[1][40] = 1
        let histogram = (1...127).map { _ in 1 }
        let group = try GridGroup(ppq: 480, velocity: VelocityGroup(bins: [1...63, 64...127], histogram: histogram),
                                  offsets: [-60, -30, 0, 30], notes: DrumClasses.representatives, noteCounts: counts,
                                  offsetCoupling: coupling)
        let groups = ModelGroups(vocabulary: try Vocabulary(ixToNote: [36], ixToTick: [0]), grid: group)
        let shape = groups.shape(hidden: 4)
        let H = shape.hidden, O = shape.outputWidth
        var wy = [Float](repeating: 0, count: (H + 1) * O)
        let columns = shape.parameters.head.outputColumns
        if let hitSets {
            for set in 0..<GridGroup.hitSets { wy[H * O + columns[0].lowerBound + set] = hitSets[set] ?? -30 }
        } else {
            wy[H * O + columns[0].lowerBound + 0b11] = 30  // hit set {kick, snare}
        }
        for c in 0..<9 {
            for (b, y) in (velocityBins ?? []).enumerated() { wy[H * O + columns[1 + c].lowerBound + b] = y }
            let off = columns[10 + c]
            for k in 4..<8 { wy[H * O + off.lowerBound + k] = -30 }  // no double hits
        }
        let weights = try LSTMWeights(shape: shape, wx: [Float](repeating: 0, count: shape.wxCount), wy: wy)
        return try Sampler(weights: weights, groups: groups)
    }

    /// A grid model's Sampler and Humanizer step in their GridSampler's LSTMInference: the
    /// runtime holds one copy of the parameters, not a second, unused event-layout one.
    func testOneCopyOfTheParameters() throws {
        let sampler = try model(coupling: 0.5)
        let grid = try XCTUnwrap(sampler.grid)
        XCTAssertTrue(sampler.lstm === grid.lstm)
        let humanizer = try Humanizer(weights: sampler.weights, groups: sampler.groups)
        let humanizerGrid = try XCTUnwrap(humanizer.grid)
        XCTAssertTrue(humanizer.lstm === humanizerGrid.lstm)
    }

    func onsets(_ hits: [GeneratedHit]) -> [Int] {
        var t = 0
        return hits.map { t += $0.hit.delta; return t }
    }

    func testCountsOnsetsNotesVelocities() throws {
        var rng = SeededRNG(seed: 9)
        let hits = try model(coupling: 0.5).generate(count: 2000, rng: &rng)
        XCTAssertEqual(hits.count, 2000)
        XCTAssertTrue(hits.allSatisfy { $0.hit.delta >= 0 })
        let ts = onsets(hits)
        XCTAssertTrue(ts.allSatisfy { [0, 30, 60, 90].contains($0 % 120) }, "onsets: a step's line plus an offset of the table")
        let notes = Dictionary(grouping: hits.map(\.hit.note), by: { $0 }).mapValues(\.count)
        XCTAssertEqual(Set(notes.keys), [36, 38, 40], "kick 36; snare 38 and 40 from its note counts")
        XCTAssertEqual(notes[36], 1000)
        let share40 = Double(notes[40] ?? 0) / 1000
        XCTAssertEqual(share40, 0.25, accuracy: 0.05, "snare notes in their counts' proportion (1 in 4)")
        XCTAssertEqual(Set(hits.map { $0.hit.velocity >= 64 }), [false, true], "both velocity bins drawn")
        XCTAssertTrue(hits.allSatisfy { (1...127).contains($0.hit.velocity) })
        // Same seed, same hits.
        var again = SeededRNG(seed: 9)
        XCTAssertEqual(try model(coupling: 0.5).generate(count: 2000, rng: &again).map(\.hit), hits.map(\.hit))
    }

    func testOffsetCoupling() throws {
        for (coupling, expected, tolerance) in [(1.0, 1.0, 0.0), (0.0, 0.25, 0.05), (0.5, 0.625, 0.06)] {
            var rng = SeededRNG(seed: 3)
            let hits = try model(coupling: coupling).generate(count: 4000, rng: &rng)
            // Every step holds one kick and one snare: the steps whose two hits share an onset.
            let together = Double(hits.filter { $0.hit.delta == 0 }.count) / 2000
            XCTAssertEqual(together, expected, accuracy: tolerance, "coupling \(coupling)")
        }
    }

    /// `fillsTemperature`: the hit set's temperature in bars 4 and 8 of each phrase (0-based bars
    /// 3, 7, 11, …), the other bars at the hits'. With the rest the likeliest set, a temperature
    /// of 0 plays rests only, so the bars that have hits say which temperature drew them.
    func testFillsTemperatureDrawsBars4And8OfEachPhrase() throws {
        let sampler = try model(coupling: 0.5, hitSets: [0: log(0.5), 0b11: log(0.3), 0b01: log(0.2)])
        /// The bars (0-based) of the hits drawn with these temperatures; a hit's step is the
        /// 16th its onset lies within −60…+30 ticks of.
        func bars(hits: Float?, fills: Float?, count: Int = 1500) throws -> [Int] {
            var options = SamplingOptions()
            options.hitsTemperature = hits
            options.fillsTemperature = fills
            var rng = SeededRNG(seed: 5)
            return onsets(try sampler.generate(count: count, options: options, rng: &rng)).map { ($0 + 60) / 120 / 16 }
        }
        let drawn = try bars(hits: nil, fills: nil)
        XCTAssertTrue(drawn.contains { GridGroup.isFillBar($0) }, "at temperature 1 the fill bars have hits")
        let restsInFills = try bars(hits: nil, fills: 0)
        XCTAssertFalse(restsInFills.contains { GridGroup.isFillBar($0) }, "fills=0: rests only in bars 4 and 8")
        XCTAssertEqual(Set(restsInFills.map { $0 % 8 }), [0, 1, 2, 4, 5, 6])
        XCTAssertEqual(Array(restsInFills.prefix { $0 < 3 }), Array(drawn.prefix { $0 < 3 }), "bars 1–3 are drawn alike")
        let onlyFills = try bars(hits: 0, fills: 1, count: 300)
        XCTAssertEqual(Set(onlyFills.map { $0 % 8 }), [3, 7], "hits=0, fills=1: hits in bars 4 and 8 only")
        XCTAssertEqual(try bars(hits: 1, fills: 1), drawn, "fills at the hits' temperature is the plain draw")
    }
}
