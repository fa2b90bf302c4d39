// A grid model with a style input (GridStyles) at run time, on hand-set weights whose style row
// alone decides what is played: style 0 drives hidden unit 0 up and the model plays a kick every
// 16th, style 1 drives it down and the model plays a snare. Checks that `SamplingOptions.style`
// is what is played, that the drawn style follows the training steps (3 : 1) and is the first
// random number (drawStyle then passing it samples the same), that a style the model lacks is
// refused, and that humanize's likeliest style is the one that plays the beat's hits.
import DrummerCore
import MIDIParse
import XCTest
@testable import Sample

final class GridStyleSamplerTests: XCTestCase {
    func model() throws -> Sampler {
        let histogram = (1...127).map { _ in 1 }
        let group = try GridGroup(ppq: 480, velocity: VelocityGroup(bins: [1...63, 64...127], histogram: histogram),
                                  offsets: [-60, -30, 0, 30], notes: DrumClasses.representatives,
                                  styles: GridStyles(rule: .folders, names: ["kicks", "snares", "other"], steps: [3, 1, 0]))
        let groups = ModelGroups(vocabulary: try Vocabulary(ixToNote: [36], ixToTick: [0]), grid: group)
        let shape = groups.shape(hidden: 4)
        let H = shape.hidden, G = 4 * H, O = shape.outputWidth
        var wx = [Float](repeating: 0, count: shape.wxCount)
        // Gate blocks f, i, o, g; rows: the inputs' one-hots, then h, then the bias.
        let styleRow = shape.inputWidth - 3, bias = shape.inputWidth + H
        wx[bias * G + 1 * H] = 30   // i of unit 0 open
        wx[bias * G + 2 * H] = 30   // o of unit 0 open
        wx[styleRow * G + 3 * H] = 30          // style 0: g of unit 0 = +1
        wx[(styleRow + 1) * G + 3 * H] = -30   // style 1: g of unit 0 = −1
        var wy = [Float](repeating: 0, count: (H + 1) * O)
        let columns = shape.parameters.head.outputColumns
        wy[columns[0].lowerBound + 0b01] = 40    // h0 > 0: kick
        wy[columns[0].lowerBound + 0b10] = -40   // h0 < 0: snare
        for c in 0..<9 {
            for k in 4..<8 { wy[H * O + columns[10 + c].lowerBound + k] = -30 }  // no double hits
        }
        let weights = try LSTMWeights(shape: shape, wx: wx, wy: wy)
        return try Sampler(weights: weights, groups: groups)
    }

    func notes(_ sampler: Sampler, style: Int?, seed: UInt64) throws -> [Int] {
        var options = SamplingOptions()
        options.style = style
        var rng = SeededRNG(seed: seed)
        return try sampler.generate(count: 64, options: options, rng: &rng).map(\.hit.note)
    }

    func testTheStyleIsPlayed() throws {
        let sampler = try model()
        XCTAssertEqual(Set(try notes(sampler, style: 0, seed: 1)), [36])
        XCTAssertEqual(Set(try notes(sampler, style: 1, seed: 1)), [38])
        XCTAssertThrowsError(try notes(sampler, style: 3, seed: 1)) {
            XCTAssertEqual($0 as? SamplerError, .badStyle(3, styles: 3))
        }
    }

    func testTheDrawnStyle() throws {
        let sampler = try model()
        var kicks = 0
        for seed in UInt64(0)..<400 {
            let played = try notes(sampler, style: nil, seed: seed)
            var rng = SeededRNG(seed: seed)
            let drawn = try XCTUnwrap(sampler.drawStyle(rng: &rng))
            var options = SamplingOptions()
            options.style = drawn
            XCTAssertEqual(try sampler.generate(count: 64, options: options, rng: &rng).map(\.hit.note), played,
                           "seed \(seed): drawing first and passing the style samples the same")
            XCTAssertEqual(Set(played), drawn == 0 ? [36] : [38])
            XCTAssertNotEqual(drawn, 2, "other has no training steps")
            if drawn == 0 { kicks += 1 }
        }
        XCTAssertEqual(Double(kicks) / 400, 0.75, accuracy: 0.06, "styles drawn 3 : 1, as their training steps")
    }

    func testHumanizeTakesTheLikeliestStyle() throws {
        let sampler = try model()
        let humanizer = try Humanizer(weights: sampler.weights, groups: sampler.groups)
        func beat(_ note: Int) -> [BeatHit] {
            (0..<32).map { BeatHit(note: note, onset: $0 * 120, velocity: 90, tickInBar: ($0 * 120) % 1920, barTicks: 1920) }
        }
        XCTAssertEqual(try humanizer.likeliestStyle(beat(36)), 0)
        XCTAssertEqual(try humanizer.likeliestStyle(beat(38)), 1)
        var rng = SeededRNG(seed: 4)
        var options = HumanizeOptions()
        options.style = 5
        XCTAssertThrowsError(try humanizer.humanize(beat(36), options: options, rng: &rng))
    }

    /// The styles read side by side (one BatchedInference stream each) score a beat as a pass per
    /// style with the one-stream LSTMInference does (a reference written here: reset, encode
    /// each step's row, sum the hit sets' log-probabilities), on random weights with two layers,
    /// and choose the same style.
    func testTheStylesReadSideBySideScoreAsOnePassEach() throws {
        let sampler = try model()
        let group = try XCTUnwrap(sampler.groups.grid)
        let shape = sampler.groups.shape(hidden: 8, layers: 2)
        var rng = SeededRNG(seed: 21)
        let weights = try LSTMWeights(shape: shape, parameters: (0..<shape.parameterCount).map { _ in Float(rng.uniform(-0.8, 0.8)) })
        let grid = GridSampler(weights: weights, group: group)
        let encoder = GridEncoder(group: group)
        let row = UnsafeMutableBufferPointer<Int32>.allocate(capacity: encoder.inputCount)
        defer { row.deallocate() }
        let hits = shape.parameters.head.outputColumns[0]
        for trial in 0..<6 {
            let notes = [36, 38, 42, 46, 49, 51]
            var beat: [BeatHit] = []
            for step in 0..<(16 + 8 * trial) where rng.uniform(0, 1) < 0.6 {
                let onset = step * 120 + Int(rng.uniform(-20, 20)) + 40
                beat.append(BeatHit(note: notes[rng.index(below: notes.count)], onset: onset, velocity: 30 + rng.index(below: 90),
                                    tickInBar: onset % 1920, barTicks: 1920))
            }
            let read = try GridBeat(beat, group: group, reading: "reads")
            let scores = grid.styleScores(of: read, candidates: [0, 1, 2])
            var reference: [Double] = []
            for style in 0..<3 {
                var seq = group.sequence(read.cells, steps: min(read.steps, GridSampler.styleScoringSteps), style: style)
                seq.style = style
                let lstm = LSTMInference(weights: weights)
                var score = 0.0
                for s in -1..<(seq.count - 1) {
                    encoder.encode(row: s, of: seq, into: row)
                    for g in 0..<encoder.inputCount { lstm.input[g] = row[g] }
                    lstm.step()
                    let y = Array(lstm.logits()[hits])
                    let top = y.max()!
                    let lse = Double(top) + log(y.map { exp(Double($0 - top)) }.reduce(0, +))
                    score += Double(y[Int(seq.hitSet(step: s + 1))]) - lse
                }
                reference.append(score)
            }
            for (a, b) in zip(scores, reference) {
                XCTAssertEqual(a, b, accuracy: 1e-4 * max(1, abs(b)), "trial \(trial): \(scores) against \(reference)")
            }
            XCTAssertEqual(reference.firstIndex(of: reference.max()!), try grid.likeliestStyle(beat), "trial \(trial)")
            XCTAssertEqual(try grid.likeliestStyle(beat, among: [2, 1]), reference[2] >= reference[1] ? 2 : 1, "trial \(trial)")
        }
    }
}
