// Training input noise (--input-noise): the draws' rate and uniformity, their determinism,
// which groups get them, and what the trainer feeds with them (inputs change, targets never).
import DrummerCore
import ReferenceModel
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

    /// A grid group of 3 velocity bins and 4 offset bins (V = 3, 2F = 8) reading the bars back
    /// as `lookback` says.
    func grid(_ lookback: GridLookback, bars: [Int] = GridGroup.defaultLookbackBars, styles: GridStyles? = nil) throws -> GridGroup {
        let v = try VelocityGroup(bins: [1...40, 41...80, 81...127], histogram: [Int](repeating: 1, count: 127))
        return try GridGroup(ppq: 480, velocity: v, offsets: [-60, -30, 0, 30], notes: [36, 38, 42, 46, 45, 48, 50, 49, 51],
                             lookback: lookback, lookbackBars: bars, styles: styles)
    }

    func noise(_ p: Float, groups: [String]? = nil, on model: ModelGroups, seed: UInt64 = 9,
               draw: InputNoiseDraw = .uniform) throws -> InputNoise? {
        var c = RunConfiguration(seed: seed)
        c.inputNoise = p
        c.inputNoiseGroups = groups
        c.inputNoiseDraw = draw
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

    /// A grid model: `velocity` stands for its nine velocity_<class> groups; a class not hit (the
    /// group's last, which no output predicts) is never replaced and never drawn, so noise
    /// changes how a class was hit, never whether; the model may draw them (output size + 1).
    func testGridGroupsKeepTheirNotHitClass() throws {
        let model = ModelGroups(vocabulary: vocabulary, grid: try grid(.classes))
        let n = try XCTUnwrap(try noise(0.5, groups: ["velocity", "offset_kick"], on: model))
        let names = model.inputNames
        XCTAssertEqual(n.groups.map { names[$0] }, GridGroup.classNames.map { "velocity_" + $0 } + ["offset_kick"])
        XCTAssertEqual(n.sizes, [Int](repeating: 4, count: 9) + [9])
        for (j, notHit) in zip(n.groups.indices, [Int](repeating: 3, count: 9) + [8]) {
            var drawn = Set<Int>(), replaced = 0
            for e in 0..<4_000 {
                XCTAssertNil(n.replacement(step: 1, event: e, slot: j, current: notHit), "slot \(j): a class not hit stays")
                if let c = n.replacement(step: 1, event: e, slot: j, current: 0) { drawn.insert(c); replaced += 1 }
            }
            XCTAssertEqual(drawn, Set(0..<notHit), "slot \(j): every predicted class, never the not-hit one")
            XCTAssertEqual(Double(replaced), 2_000, accuracy: 200)
        }
        XCTAssertNotNil(try noise(0.2, groups: ["velocity"], on: model, draw: .model), "the model predicts them")
        XCTAssertThrowsError(try noise(0.2, groups: ["lookback_1"], on: model, draw: .model)) { e in
            XCTAssertTrue("\(e)".contains("names \"lookback_1_kick\", which the model does not predict"), "\(e)")
        }
    }

    // MARK: --input-noise-draw drop

    /// A grid model's per-class groups: a hit class becomes the not-hit class at about the rate
    /// P; a class not hit, or before the start, stays. With --grid-lookback velocities the
    /// lookback's hits are its V velocity bins (V not hit, V + 1 before the start); with
    /// classes, class 1 (0 not hit, 2 before the start); an offset group's hits are its 2F.
    func testDropFeedsAHitAsNotHit() throws {
        for (lookback, hits, notHit, stays) in [(GridLookback.velocities, 0..<3, 3, [3, 4]), (.classes, 1..<2, 0, [0, 2])] {
            let model = ModelGroups(vocabulary: vocabulary, grid: try grid(lookback, bars: [1, 4]))
            let n = try XCTUnwrap(try noise(0.3, groups: ["lookback", "offset_snare"], on: model, draw: .drop))
            let names = model.inputNames
            XCTAssertEqual(n.groups.map { names[$0] },
                           [1, 4].flatMap { k in GridGroup.classNames.map { "lookback_\(k)_" + $0 } } + ["offset_snare"])
            for j in n.groups.indices {
                let (hit, gone) = j < 18 ? (hits, notHit) : (0..<8, 8)
                for c in hit {
                    var dropped = 0
                    for e in 0..<4_000 {
                        guard let r = n.replacement(step: 2, event: e, slot: j, current: c) else { continue }
                        XCTAssertEqual(r, gone, "\(lookback) slot \(j): a hit is fed as not hit")
                        dropped += 1
                    }
                    XCTAssertEqual(Double(dropped), 1_200, accuracy: 5 * (4_000 * 0.3 * 0.7).squareRoot(), "\(lookback) slot \(j) class \(c)")
                }
                for c in j < 18 ? stays : [8] {
                    XCTAssertTrue((0..<4_000).allSatisfy { n.replacement(step: 2, event: $0, slot: j, current: c) == nil },
                                  "\(lookback) slot \(j): class \(c) (not hit or before the start) stays")
                }
            }
        }
    }

    /// GridGroup.hitClasses runs along the input groups for every lookback, with a style input
    /// too: one entry per group, each class it names inside its group, the per-class groups'
    /// entries where their names say.
    func testHitClassesLineUpWithTheInputGroups() throws {
        for lookback in GridLookback.allCases {
            for styles in [nil, try GridStyles(rule: .folders, names: ["a", "b", "other"], steps: [2, 1, 1])] {
                let g = try grid(lookback, bars: [1, 2, 4], styles: styles)
                let sizes = g.inputGroups, names = g.inputNames, classes = g.hitClasses
                XCTAssertEqual(classes.count, sizes.count, "\(lookback)")
                for (i, c) in classes.enumerated() {
                    let perClass = GridGroup.classNames.contains { names[i].hasSuffix("_" + $0) }
                    XCTAssertEqual(c != nil, perClass, "\(lookback) \(names[i])")
                    guard let c else { continue }
                    XCTAssertTrue(c.hit.upperBound <= sizes[i] && !c.hit.isEmpty && !c.hit.contains(c.notHit) && c.notHit < sizes[i],
                                  "\(lookback) \(names[i]): \(c) in \(sizes[i]) classes")
                }
            }
        }
    }

    /// Only one class's groups have hits to drop: the hit set, the position, a hit-set lookback
    /// and an event model's groups are refused, with or without a rate.
    func testDropNeedsOneClasssGroups() throws {
        let model = ModelGroups(vocabulary: vocabulary, grid: try grid(.hitSets))
        XCTAssertNotNil(try noise(0.1, groups: ["velocity"], on: model, draw: .drop))
        for (groups, on, named) in [(["velocity", "hits"], model, "hits"), (["position"], model, "position"),
                                    (["lookback_1"], model, "lookback_1"), (["velocity"], try velocityGroups(), "velocity")] {
            for p: Float in [0, 0.1] {
                XCTAssertThrowsError(try noise(p, groups: groups, on: on, draw: .drop)) { e in
                    XCTAssertTrue("\(e)".hasPrefix("--input-noise-groups names \"\(named)\", which is not one drum class's, so --input-noise-draw drop"), "\(e)")
                }
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
                if let c = n.replacement(step: 7, event: e, slot: j, current: 0) {
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
            (0..<2_000).map { n.replacement(step: step, event: $0, slot: slot, current: 0) ?? -1 }
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
            let inputs = ChunkInputs(shape: shape, unroll: U, batch: B, firstStream: 0)
            inputs.noise = noise
            inputs.noiseStep = step
            events.withUnsafeBufferPointer { inputs.gather(events: $0, segment: segment, pointer: 0) }
            return (Array(inputs.inputRows.buffer(0, U * B * k)), Array(inputs.targets.buffer(0, U * B * shape.outputGroups.count)))
        }
        let clean = gathered(nil, step: 0), noisy = gathered(n, step: 0), later = gathered(n, step: 1)
        XCTAssertEqual(noisy.targets, clean.targets)
        XCTAssertNotEqual(noisy.rows, later.rows, "another step draws again")
        for g in 0..<k {
            let lo = Int32(shape.parameters.layers[0].inputGroupRows[g].lowerBound), hi = lo + Int32(shape.inputGroups[g])
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

    // MARK: --input-noise-draw model

    func testModelDrawNeedsGroupsTheModelPredicts() throws {
        let positions = PositionGroup(encoding: .oneHot, slots: 4, ticksPerSlot: 1, ppq: 1, meter: .common)
        let model = ModelGroups(vocabulary: vocabulary, position: positions)
        XCTAssertThrowsError(try noise(0.1, groups: ["note", "position"], on: model, draw: .model)) { e in
            XCTAssertEqual("\(e)", "--input-noise-groups names \"position\", which the model does not predict, so --input-noise-draw model cannot draw it (it predicts: note, tick)")
        }
        let n = try XCTUnwrap(try noise(0.1, groups: ["tick", "note"], on: model, draw: .model))
        XCTAssertEqual(n.groups, [1, 0])
        XCTAssertEqual(n.outputGroups, [1, 0])
        let v = try XCTUnwrap(try noise(0.1, on: try velocityGroups(), draw: .model))
        XCTAssertEqual(v.groups, [0, 2], "the default groups: note and velocity")
        XCTAssertEqual(v.outputGroups, [0, 2])
    }

    /// `draw(from:_:)` picks class c with probability softmax(logits)[c].
    func testDrawFollowsTheSoftmax() {
        let logits: [Float] = [0, logf(2), logf(3), -200, logf(4)]
        let expected = [1.0, 2, 3, 0, 4].map { $0 / 10 }
        var counts = [Int](repeating: 0, count: logits.count)
        let n = 50_000
        logits.withUnsafeBufferPointer { l in
            for i in 0..<n { counts[InputNoise.draw(from: l, InputNoise.mix(UInt64(i)))] += 1 }
            XCTAssertEqual(InputNoise.draw(from: l, 0), 0)
            XCTAssertEqual(InputNoise.draw(from: l, .max), 4, "u just below 1: the last class")
        }
        XCTAssertEqual(counts[3], 0, "a class of probability e^-200 is never drawn")
        for (c, q) in expected.enumerated() where q > 0 {
            XCTAssertEqual(Double(counts[c]), Double(n) * q, accuracy: 5 * (Double(n) * q * (1 - q)).squareRoot(), "class \(c)")
        }
    }

    /// What the layer feeds with model draws: each replaced class is the one the random word
    /// picks from the model's prediction of that input, computed here by the double-precision
    /// reference from the carried state and the true events before it; all else is unchanged.
    func testModelDrawsComeFromTheModelsPrediction() throws {
        try checkModelDraws(fileStarts: nil)
    }

    /// The same where some rows start a file (--reset-state-per-file): there the prediction
    /// comes from a zero state, and the rows after it follow on from that.
    func testModelDrawsAfterAStateReset() throws {
        try checkModelDraws(fileStarts: (0..<39).map { $0 % 5 == 3 })
    }

    private func checkModelDraws(fileStarts starts: [Bool]?) throws {
        let model = try velocityGroups()
        let shape = model.shape(hidden: 4)
        let n = try XCTUnwrap(try noise(0.5, groups: ["note", "tick", "velocity"], on: model, draw: .model))
        let U = 12, B = 3, k = shape.inputGroups.count, H = shape.hidden, O = shape.outputWidth
        let segment = U + 1, p = 0
        var rng = SeededRNG(seed: 21)
        let events = Problem.events(count: B * segment, groups: shape.inputGroups, rng: &rng)
        // Large weights, so that the predictions are far from uniform.
        let params = Problem.uniform(shape.parameterCount, 1.5, rng: &rng)
        let h0 = Problem.uniform(B * H, 0.5, rng: &rng), c0 = Problem.uniform(B * H, 1, rng: &rng)
        let pipeline = ChunkPipeline(shape: shape, unroll: U, batch: B, params: FloatBuffer(params),
                                     grad: FloatBuffer(count: params.count))
        let layer = pipeline.layers[0], inputs = pipeline.inputs
        pipeline.setState(layer: 0, h: h0[...], c: c0[...])
        inputs.noise = n
        inputs.noiseStep = 5
        inputs.fileStarts = starts
        let columns = targetColumns(of: shape)
        events.withUnsafeBufferPointer {
            inputs.gather(events: $0, segment: segment, pointer: p)
            pipeline.drawInputsFromModel(segment: segment, pointer: p)
        }
        XCTAssertEqual(Array(layer.hs.buffer(0, B * H)), h0, "the carried state is kept")
        XCTAssertEqual(Array(layer.cs.buffer(0, B * H)), c0)
        let reference = DoubleModel(inputs: shape.inputGroups, outputs: shape.outputGroups, targetColumns: columns,
                                    hidden: H, params: params.map(Double.init))
        var firstColumn = [Int](), sum = 0
        for size in shape.outputGroups { firstColumn.append(sum); sum += size }
        XCTAssertEqual(sum, O)
        var replaced = 0, changed = 0, checked = 0
        for b in 0..<B {
            var h = (0..<H).map { Double(h0[b * H + $0]) }, c = (0..<H).map { Double(c0[b * H + $0]) }
            for t in 0..<U {
                let r = t * B + b, e = b * segment + p + t
                let truth = (0..<k).map { Int(events[e * k + $0]) }
                if starts?[e] == true { (h, c) = ([Double](repeating: 0, count: H), [Double](repeating: 0, count: H)) }
                let y = reference.logits(h)
                for g in 0..<k {
                    let fed = Int(inputs.inputRows[r * k + g]) - shape.parameters.layers[0].inputGroupRows[g].lowerBound
                    guard let j = n.groups.firstIndex(of: g), let w = n.replacementWord(step: 5, event: e, slot: j, current: truth[g]) else {
                        XCTAssertEqual(fed, truth[g], "row \(r) group \(g): not replaced")
                        continue
                    }
                    replaced += 1
                    if fed != truth[g] { changed += 1 }
                    // The reference's cumulative softmax of output group o: the drawn class is
                    // the first whose cumulative probability exceeds u.
                    let o = n.outputGroups[j]
                    let v = y[firstColumn[o]..<(firstColumn[o] + shape.outputGroups[o])].map { $0 }
                    let top = v.max()!
                    let probabilities = v.map { exp($0 - top) }
                    let total = probabilities.reduce(0, +)
                    var cumulative = [Double](), running = 0.0
                    for q in probabilities { running += q / total; cumulative.append(running) }
                    let u = Double(w >> 11) * 0x1.0p-53
                    // Skip a u within float rounding of a boundary, where either class is right.
                    if cumulative.contains(where: { abs($0 - u) < 1e-4 }) { continue }
                    XCTAssertEqual(fed, cumulative.firstIndex { u < $0 } ?? v.count - 1, "row \(r) group \(g)")
                    checked += 1
                }
                // The predictions follow the true events, not the drawn ones.
                (h, c) = reference.cell(classes: truth, h: h, c: c)
            }
        }
        XCTAssertGreaterThan(checked, 40, "most of the \(replaced) replacements are checked against the reference")
        XCTAssertGreaterThan(changed, 10, "draws differ from the true class")
        // Targets are never drawn.
        var clean = [Int32](repeating: 0, count: U * B * shape.outputGroups.count)
        for t in 0..<U {
            for b in 0..<B {
                for (g, col) in columns.enumerated() {
                    clean[(t * B + b) * columns.count + g] = events[(b * segment + p + t + 1) * k + col]
                }
            }
        }
        XCTAssertEqual(Array(inputs.targets.buffer(0, clean.count)), clean)
    }
}
