// The model's own bars as lookback inputs (--lookback-from-model): which lookback inputs read a
// drawn step (the bar's step the data's lookback reads, when it lies in the chunk), what they
// read (the draw from the model's prediction of that step), and that every lookback reading one
// step reads the same draw. The expected values are worked out here from the grid sequences the
// rows were encoded from (file, step, bar), not from the rows' position inputs.
import DrummerCore
import XCTest
@testable import Train

final class ModelLookbackTests: XCTestCase {
    let vocabulary = RunFixture.vocabulary

    /// A grid of 3 velocity bins and 4 offset bins reading 1, 2 and 4 bars back as `lookback` says.
    func group(_ lookback: GridLookback) throws -> GridGroup {
        let v = try VelocityGroup(bins: [1...40, 41...80, 81...127], histogram: [Int](repeating: 1, count: 127))
        return try GridGroup(ppq: 480, velocity: v, offsets: [-60, -30, 0, 30], notes: [36, 38, 42, 46, 45, 48, 50, 49, 51],
                             lookback: lookback, lookbackBars: [1, 2, 4])
    }

    /// A random file of `steps` steps (about a third of the classes hit per step).
    func file(steps: Int, rng: inout SeededRNG) -> GridSequence {
        var seq = GridSequence()
        for _ in 0..<steps {
            var set = 0
            for c in 0..<GridGroup.classCount where rng.index(below: 3) == 0 { set |= 1 << c }
            let velocities = (0..<GridGroup.classCount).map { _ in rng.index(below: 3) }
            seq.append(hitSet: set, velocity: { velocities[$0] }, offset: { _ in 2 })
        }
        return seq
    }

    /// Two streams of two files each (segment 162 rows: a start row and one per step); the rows'
    /// files, first events and steps (−1: a start row).
    struct Streams {
        var events: [Int32] = []
        var files: [GridSequence] = []
        /// Per event: its file's index in `files`, the event of the file's start row, its step.
        var file: [Int] = [], start: [Int] = [], step: [Int] = []
    }

    func streams(_ g: GridGroup, seed: UInt64) -> Streams {
        var rng = SeededRNG(seed: seed)
        let encoder = GridEncoder(group: g)
        var s = Streams()
        let a = file(steps: 70, rng: &rng), b = file(steps: 90, rng: &rng)
        s.files = [a, b]
        for order in [[0, 1], [1, 0]] {
            for f in order {
                let first = s.step.count
                s.events += encoder.rows(of: s.files[f])
                for step in -1..<s.files[f].count {
                    s.file.append(f)
                    s.start.append(first)
                    s.step.append(step)
                }
            }
        }
        return s
    }

    /// The drawn hit set is the true one with every other class flipped; the drawn velocity bin of
    /// a class the true step hit is its bin + 1 (mod V), of one it did not hit bin 0.
    static func flipped(_ set: Int) -> Int { set ^ 0b1_0101_0101 }

    /// Each lookback input reading a step of a drawn bar that lies in the chunk reads the model's
    /// draw of it; every other input and every target stays what `gather` made it (the data's, a
    /// noisy position); some bars are drawn, not all.
    func testDrawnBarsFeedTheLookbackWhereTheyLieInTheChunk() throws {
        for lookback in GridLookback.allCases {
            let g = try group(lookback)
            let model = ModelGroups(vocabulary: vocabulary, grid: g)
            let shape = model.shape(hidden: 3)
            let m = try XCTUnwrap(try ModelLookback(probability: 0.5, seed: 3, modelGroups: model, unroll: 120))
            let s = streams(g, seed: 11)
            let k = shape.inputGroups.count, V = g.velocityBins
            let segment = s.step.count / 2, U = 120, B = 2, p = 20, step = 7
            let inputs = ChunkInputs(shape: shape, unroll: U, batch: B, firstStream: 0)
            inputs.modelLookback = m
            // Uniform noise on the position input: which bars are drawn follows the data's bars.
            var c = RunConfiguration(seed: 3)
            c.inputNoise = 0.5
            c.inputNoiseGroups = ["position"]
            inputs.noise = try InputNoise(configuration: c, modelGroups: model, shape: shape)
            inputs.noiseStep = step
            s.events.withUnsafeBufferPointer { inputs.gather(events: $0, segment: segment, pointer: p) }
            let clean = Array(inputs.inputRows.buffer(0, U * B * k)), targets = Array(inputs.targets.buffer(0, U * B * shape.outputGroups.count))
            let offsets = shape.parameters.layers[0].inputGroupRows.map(\.lowerBound)
            // The oracle's logits: +40 on the flipped step's classes.
            var logits = [Float](repeating: 0, count: shape.outputWidth)
            var firstColumn = [Int](), sum = 0
            for size in shape.outputGroups { firstColumn.append(sum); sum += size }
            let names = model.outputNames
            inputs.drawFromModel(segment: segment, pointer: p) { r, o in
                let set = Int(clean[r * k]) - offsets[0]
                let size = shape.outputGroups[o]
                var hot = 0
                if names[o] == "hits" {
                    hot = set < GridGroup.hitSets ? Self.flipped(set) : 0
                } else {
                    let c = GridGroup.classNames.firstIndex(of: String(names[o].dropFirst("velocity_".count)))!
                    let bin = Int(clean[r * k + 1 + c]) - offsets[1 + c]
                    hot = bin < V ? (bin + 1) % V : 0
                }
                for j in 0..<size { logits[firstColumn[o] + j] = j == hot ? 40 : 0 }
                return logits.withUnsafeBufferPointer { UnsafeBufferPointer(rebasing: $0[firstColumn[o]..<(firstColumn[o] + size)]) }
            }
            XCTAssertEqual(Array(inputs.targets.buffer(0, targets.count)), targets, "\(lookback): targets are never drawn")
            let lookbackColumns = Set(m.columns.flatMap { $0..<($0 + m.groupsPerBar) })
            var drawnBars = Set<Int>(), dataBars = Set<Int>(), changed = 0
            for t in 0..<U {
                for b in 0..<B {
                    let r = t * B + b, e = b * segment + p + t
                    for col in 0..<k where !lookbackColumns.contains(col) {
                        XCTAssertEqual(inputs.inputRows[r * k + col], clean[r * k + col], "\(lookback) row \(r) column \(col)")
                    }
                    let seq = s.files[s.file[e]]
                    for (bars, column) in zip([1, 2, 4], m.columns) {
                        let x = s.step[e] + 1 - bars * GridGroup.stepsPerBar  // the step this lookback reads
                        let source = s.start[e] + 1 + x
                        let barStart = s.start[e] + 1 + (x >= 0 ? x / GridGroup.stepsPerBar * GridGroup.stepsPerBar : 0)
                        let drawn = x >= 0 && source >= b * segment + p && m.drawsBar(step: step, barStart: barStart)
                        if x >= 0 && source >= b * segment + p { if drawn { drawnBars.insert(barStart) } else { dataBars.insert(barStart) } }
                        for c in 0..<m.groupsPerBar {
                            let fed = inputs.inputRows[r * k + column + c] - Int32(offsets[column + c])
                            let data = clean[r * k + column + c] - Int32(offsets[column + c])
                            guard drawn else {
                                XCTAssertEqual(fed, data, "\(lookback) row \(r) \(bars) bars back: the data's")
                                continue
                            }
                            let set = Self.flipped(Int(seq.hitSet(step: x)))
                            let expected: Int32
                            switch lookback {
                            case .hitSets: expected = Int32(set)
                            case .classes: expected = Int32((set >> c) & 1)
                            case .velocities:
                                let bin = Int(seq.velocityBin(step: x, class: c))
                                expected = set & (1 << c) == 0 ? Int32(V) : Int32(bin < 0 ? 0 : (bin + 1) % V)
                            }
                            XCTAssertEqual(fed, expected, "\(lookback) row \(r) \(bars) bars back, group \(c): the drawn step")
                            if fed != data { changed += 1 }
                        }
                    }
                }
            }
            XCTAssertGreaterThan(drawnBars.count, 5, "\(lookback): bars drawn")
            XCTAssertGreaterThan(dataBars.count, 5, "\(lookback): bars left the data's")
            XCTAssertGreaterThan(changed, 100, "\(lookback): inputs changed")
        }
    }

    /// Through the pipeline with the model's own predictions (random weights, no input noise):
    /// the extra forward sweep runs, the carried state is kept, only lookback inputs change, and
    /// the lookbacks one and two bars back that read the same step read the same draw.
    func testEveryLookbackOfAStepReadsOneDraw() throws {
        let g = try group(.velocities)
        let model = ModelGroups(vocabulary: vocabulary, grid: g)
        let shape = model.shape(hidden: 4)
        let s = streams(g, seed: 5)
        let k = shape.inputGroups.count, H = shape.hidden, U = 100, B = 2, segment = s.step.count / 2, p = 30
        var rng = SeededRNG(seed: 8)
        let params = Problem.uniform(shape.parameterCount, 1.5, rng: &rng)
        let h0 = Problem.uniform(B * H, 0.5, rng: &rng), c0 = Problem.uniform(B * H, 1, rng: &rng)
        let pipeline = ChunkPipeline(shape: shape, unroll: U, batch: B, params: FloatBuffer(params), grad: FloatBuffer(count: params.count))
        pipeline.setState(layer: 0, h: h0[...], c: c0[...])
        let inputs = pipeline.inputs
        inputs.modelLookback = try ModelLookback(probability: 0.6, seed: 2, modelGroups: model, unroll: 100)
        inputs.noiseStep = 4
        var clean: [Int32] = []
        s.events.withUnsafeBufferPointer {
            inputs.gather(events: $0, segment: segment, pointer: p)
            clean = Array(inputs.inputRows.buffer(0, U * B * k))
            pipeline.drawInputsFromModel(segment: segment, pointer: p)
        }
        XCTAssertEqual(Array(pipeline.layers[0].hs.buffer(0, B * H)), h0, "the carried state is kept")
        let names = model.inputNames
        let one = try XCTUnwrap(names.firstIndex(of: "lookback_1_kick")), two = try XCTUnwrap(names.firstIndex(of: "lookback_2_kick"))
        var changed = Set<Int>(), pairs = 0, changedPairs = 0
        for r in 0..<(U * B) {
            for col in 0..<k where inputs.inputRows[r * k + col] != clean[r * k + col] { changed.insert(col) }
        }
        XCTAssertFalse(changed.isEmpty)
        XCTAssertTrue(changed.allSatisfy { names[$0].hasPrefix("lookback_") }, "\(changed.map { names[$0] })")
        // Row t reads, one bar back, the step row t + 16 (of the same file) reads two bars back.
        let inputRows = shape.parameters.layers[0].inputGroupRows
        for t in 0..<(U - 16) {
            for b in 0..<B {
                let r = t * B + b, q = (t + 16) * B + b, e = b * segment + p + t
                guard s.start[e] == s.start[e + 16] else { continue }
                for c in 0..<GridGroup.classCount {
                    let readA = inputs.inputRows[r * k + one + c] - Int32(inputRows[one + c].lowerBound)
                    let readB = inputs.inputRows[q * k + two + c] - Int32(inputRows[two + c].lowerBound)
                    guard readA != Int32(g.velocityBins + 1) else { continue }  // before the file's start
                    pairs += 1
                    XCTAssertEqual(readA, readB, "row \(r) one bar back and row \(q) two bars back read the same step")
                    if inputs.inputRows[r * k + one + c] != clean[r * k + one + c] { changedPairs += 1 }
                }
            }
        }
        XCTAssertGreaterThan(pairs, 500)
        XCTAssertGreaterThan(changedPairs, 20, "some of those steps are drawn")
    }

    /// Off at 0; refused on a model without the grid's lookback.
    func testNeedsAGridModel() throws {
        XCTAssertNil(try ModelLookback(probability: 0, seed: 1, modelGroups: ModelGroups(vocabulary: vocabulary, grid: try group(.velocities)), unroll: 64))
        XCTAssertThrowsError(try ModelLookback(probability: 0.2, seed: 1, modelGroups: ModelGroups(vocabulary: vocabulary), unroll: 64)) { e in
            XCTAssertEqual("\(e)", "--lookback-from-model needs a grid model (--layout grid): only a grid model's lookback inputs read the bars before")
        }
    }
}
