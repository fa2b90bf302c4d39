// Training input noise (--input-noise): the draws' rate and uniformity, their determinism,
// which groups get them, and what the trainer feeds with them (inputs change, targets never).
import DrummerCore
import XCTest
@testable import Checkpoints
@testable import Train

final class InputNoiseTests: XCTestCase {
    let vocabulary = RunFixture.vocabulary  // 4 notes, 5 ticks

    func velocityGroups() throws -> ModelGroups {
        var histogram = [Int](repeating: 1, count: 127)
        histogram[99] = 5
        let v = try VelocityGroup(bins: [1...40, 41...80, 81...127], histogram: histogram)
        return ModelGroups(vocabulary: vocabulary, velocity: v)
    }

    func noise(_ p: Float, groups: [String]? = nil, on model: ModelGroups, seed: UInt64 = 9) throws -> InputNoise? {
        var c = RunConfiguration(seed: seed)
        c.inputNoise = p
        c.inputNoiseGroups = groups
        return try InputNoise(configuration: c, modelGroups: model, shape: model.shape(hidden: 3))
    }

    func testDefaultGroupsAreNoteAndVelocityWhereTheModelHasThem() throws {
        let original = ModelGroups(vocabulary: vocabulary)
        let o = try XCTUnwrap(try noise(0.2, on: original))
        XCTAssertEqual(o.groups, [0])
        XCTAssertEqual(o.sizes, [4])
        let v = try XCTUnwrap(try noise(0.2, on: try velocityGroups()))
        XCTAssertEqual(v.groups, [0, 2])
        XCTAssertEqual(v.sizes, [4, 3])
        XCTAssertEqual(try XCTUnwrap(try noise(0.2, groups: ["velocity", "tick", "tick"], on: try velocityGroups())).groups, [2, 1])
        XCTAssertNil(try noise(0, on: original), "P = 0 is no noise")
    }

    func testAGroupTheModelLacksIsNamed() throws {
        for p: Float in [0, 0.1] {
            XCTAssertThrowsError(try noise(p, groups: ["note", "velocity"], on: ModelGroups(vocabulary: vocabulary))) { e in
                XCTAssertEqual("\(e)", "--input-noise-groups names \"velocity\", which this model does not have (its inputs: note, tick)")
            }
        }
    }

    func testRateAndUniformity() throws {
        let p = 0.15
        let n = try XCTUnwrap(try noise(Float(p), on: try velocityGroups()))
        let events = 40_000
        for (j, size) in n.sizes.enumerated() {
            var counts = [Int](repeating: 0, count: size)
            var replaced = 0
            for e in 0..<events {
                if let c = n.replacement(step: 7, event: e, slot: j) {
                    XCTAssertTrue((0..<size).contains(c))
                    counts[c] += 1
                    replaced += 1
                }
            }
            // Binomial(events, p): within 5 standard deviations.
            let sd = (Double(events) * p * (1 - p)).squareRoot()
            XCTAssertEqual(Double(replaced), Double(events) * p, accuracy: 5 * sd, "group slot \(j)")
            // Each class: Binomial(replaced, 1/size).
            let q = 1 / Double(size), sdc = (Double(replaced) * q * (1 - q)).squareRoot()
            for (c, count) in counts.enumerated() {
                XCTAssertEqual(Double(count), Double(replaced) * q, accuracy: 5 * sdc, "slot \(j) class \(c)")
            }
        }
    }

    func testDrawsDependOnSeedStepEventAndGroupOnly() throws {
        let model = try velocityGroups()
        let a = try XCTUnwrap(try noise(0.5, on: model)), b = try XCTUnwrap(try noise(0.5, on: model))
        let otherSeed = try XCTUnwrap(try noise(0.5, on: model, seed: 10))
        func pattern(_ n: InputNoise, step: Int, slot: Int) -> [Int] {
            (0..<2_000).map { n.replacement(step: step, event: $0, slot: slot) ?? -1 }
        }
        XCTAssertEqual(pattern(a, step: 3, slot: 0), pattern(b, step: 3, slot: 0))
        // Independent draws agree on "replaced or not" about half the time at P = 0.5; equal
        // patterns would mean the key is ignored.
        for other in [pattern(a, step: 4, slot: 0), pattern(a, step: 3, slot: 1), pattern(otherSeed, step: 3, slot: 0)] {
            let same = zip(pattern(a, step: 3, slot: 0), other).filter { ($0 < 0) == ($1 < 0) }.count
            XCTAssertEqual(Double(same), 1_000, accuracy: 150)
        }
    }

    /// What the layer feeds: the noise groups' classes change at about the rate P, the other
    /// groups' and every target never.
    func testGatherChangesOnlyTheNoiseGroupsInputs() throws {
        let model = try velocityGroups()
        let shape = model.shape(hidden: 3)
        let n = try XCTUnwrap(try noise(0.3, groups: ["tick", "velocity"], on: model))
        let U = 50, B = 4, k = shape.inputGroups.count
        let segment = U + 1
        var rng = SeededRNG(seed: 4)
        let events: [Int32] = (0..<(B * segment * k)).map { i in Int32(rng.index(below: shape.inputGroups[i % k])) }
        func gathered(_ noise: InputNoise?, step: Int) -> (rows: [Int32], targets: [Int32]) {
            let params = FloatBuffer(count: shape.wxCount + shape.wyCount), grad = FloatBuffer(count: params.count)
            let layer = LSTMLayer(shape: shape, unroll: U, batch: B, params: params, grad: grad)
            layer.noise = noise
            layer.noiseStep = step
            events.withUnsafeBufferPointer {
                layer.gather(events: $0, segment: segment, pointer: 0, targetColumn: targetColumns(of: shape))
            }
            return (Array(layer.inputRows.buffer(0, U * B * k)), Array(layer.targets.buffer(0, U * B * shape.outputGroups.count)))
        }
        let clean = gathered(nil, step: 0), noisy = gathered(n, step: 0), later = gathered(n, step: 1)
        XCTAssertEqual(noisy.targets, clean.targets)
        XCTAssertNotEqual(noisy.rows, later.rows, "another step draws again")
        for g in 0..<k {
            let lo = Int32(shape.inputOffset(g)), hi = lo + Int32(shape.inputGroups[g])
            var changed = 0
            for r in 0..<(U * B) {
                let v = noisy.rows[r * k + g]
                XCTAssertTrue(v >= lo && v < hi, "row \(r) group \(g): \(v) outside its group's rows")
                if v != clean.rows[r * k + g] { changed += 1 }
            }
            if g == 0 {
                XCTAssertEqual(changed, 0, "the note group gets no noise here")
            } else {
                // A replacement equals the true class 1/size of the time: the rate of a change is
                // P · (1 − 1/size), over U·B = 200 rows (within about 4 standard deviations).
                let rate = 0.3 * (1 - 1 / Double(shape.inputGroups[g]))
                XCTAssertEqual(Double(changed), 200 * rate, accuracy: 4 * (200 * rate * (1 - rate)).squareRoot(), "group \(g)")
            }
        }
    }
}
