// The grid layout's dataset view and step encoder against an independent reference:
// Scripts/reference/grid_steps.py (mido, written from the definition) frozen in
// Tests/Fixtures/grid/expected.json for three Groove files in 4/4 and one in 5/4.
import DrummerCore
import Encode
import Foundation
import MIDIParse
import XCTest
@testable import Train
@testable import TrainRun

final class GridDataTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/grid")

    func converted() throws -> TrainingData {
        let out = try RunFixture.temporaryDirectory("grid-data")
        addTeardownBlock { try? FileManager.default.removeItem(at: out) }
        var settings = ConversionSettings()
        settings.extraction.onsetOrder = .note
        _ = try MIDIDatasetConverter.convert(directory: Self.fixtures.appendingPathComponent("src").path,
                                             output: out.path, settings: settings)
        return try TrainingData.load(path: out.path)
    }

    func testGridHitsMatchTheReference() throws {
        let data = try converted()
        let expected = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixtures.appendingPathComponent("expected.json")))
            as! [String: Any]
        let grid = try data.gridFiles(validation: false)
        let kept = data.files.filter { !$0.validation && $0.meter == "4/4" }
        XCTAssertEqual(kept.count, 3)
        XCTAssertEqual(grid.files.count, 3)
        XCTAssertEqual(grid.skipped.map(\.path), ["drummer1/session2/111_rock-prog_110_beat_5-4.mid"])
        XCTAssertEqual(grid.skipped.first?.reason, "meter 5/4")
        XCTAssertTrue(expected["drummer1/session2/111_rock-prog_110_beat_5-4.mid"] is NSNull, "the reference skips it too")
        var doubles = 0
        for (file, g) in zip(kept, grid.files) {
            let rows = try XCTUnwrap(expected[file.path] as? [[Int]], file.path)
            let ours = g.hits.sorted { ($0.step, $0.drumClass) < ($1.step, $1.drumClass) }
                .map { [$0.step, $0.drumClass, $0.velocity, $0.offset, $0.note, $0.double ? 1 : 0] }
            XCTAssertEqual(ours.count, rows.count, file.path)
            for (i, (a, b)) in zip(ours, rows).enumerated() where a != b {
                XCTFail("\(file.path): grid hit \(i) is \(a) (step, class, velocity, offset, note, double), the reference's \(b)")
                break
            }
            XCTAssertEqual(g.steps, (rows.map { $0[0] }.max() ?? -1) + 1, file.path)
            doubles += rows.filter { $0[5] == 1 }.count
        }
        XCTAssertGreaterThan(doubles, 100, "the files hold double hits")
    }

    /// Velocity bins and offsets from the training hits; sequences and rows as GridGroup.swift
    /// defines them, checked on the first bars of a file by hand-written rules, for each lookback.
    func testRowsFollowTheDefinition() throws {
        let data = try converted()
        XCTAssertEqual(try data.gridGroup().lookback, .classes, "new grid runs read the bars back per class")
        try checkRows(data: data, lookback: .hitSets)
        try checkRows(data: data, lookback: .classes)
        try checkRows(data: data, lookback: .velocities)
        XCTAssertEqual(try data.gridGroup().lookbackBars, [1, 2])
        try checkRows(data: data, lookback: .hitSets, bars: [1, 2, 4])
        try checkRows(data: data, lookback: .velocities, bars: [1, 2, 4])
        try checkRows(data: data, lookback: .classes, bars: [1])
    }

    func checkRows(data: TrainingData, lookback: GridLookback, bars: [Int] = [1, 2]) throws {
        let group = try data.gridGroup(lookback: lookback, lookbackBars: bars)
        let lookbackColumns = (lookback == .hitSets ? 1 : 9) * bars.count
        if lookback == .velocities {
            XCTAssertEqual(Array(group.inputGroups[21..<(21 + lookbackColumns)]),
                           [Int](repeating: group.velocityBins + 2, count: lookbackColumns),
                           "lookback velocities: a velocity bin, not hit, before the start")
        }
        XCTAssertEqual(group.inputNames[21 + lookbackColumns - 1],
                       lookback == .hitSets ? "lookback_\(bars.last!)" : "lookback_\(bars.last!)_ride")
        XCTAssertEqual(group.offsetBins, 8, "no --quantize: 8 offset bins")
        XCTAssertEqual(group.offsets.count, 8)
        for (b, o) in group.offsets.enumerated() {
            XCTAssertTrue((-60 + b * 15)..<(-60 + (b + 1) * 15) ~= o, "offset \(o) lies in bin \(b)")
        }
        XCTAssertEqual(group.noteCounts[0][36] + group.noteCounts[0][35], group.noteCounts[0].reduce(0, +), "kick notes")
        let (sequences, files) = try data.gridSequences(validation: false, group: group)
        let seq = sequences[0], hits = files.files[0].hits
        let encoder = GridEncoder(group: group)
        let rows = encoder.rows(of: seq)
        let k = encoder.inputCount
        XCTAssertEqual(k, 23 + lookbackColumns)
        XCTAssertEqual(rows.count, (seq.count + 1) * k)
        XCTAssertEqual(group.inputNames.count, k)
        XCTAssertEqual(group.inputNames[21], lookback == .hitSets ? "lookback_1" : "lookback_1_kick")
        XCTAssertEqual(group.inputNames.last, "repeat_2")
        let r1 = 21 + lookbackColumns  // the repeat flags
        var sets = [Int](repeating: 0, count: seq.count)
        var bins = [[Int]](repeating: [Int](repeating: -1, count: 9), count: seq.count)
        for h in hits {
            sets[h.step] |= 1 << h.drumClass
            bins[h.step][h.drumClass] = try XCTUnwrap(group.velocity.bin(of: h.velocity))
        }
        /// The lookback columns of the row before step `t`: hit sets, or per class 0/1 (2: before
        /// the start), or per class the velocity bin (V: not hit, V + 1: before the start).
        func expectedLookback(_ t: Int) -> [Int32] {
            let back = bars.map { t - 16 * $0 }.map { $0 >= 0 ? $0 : nil }
            let V = group.velocityBins
            switch lookback {
            case .hitSets: return back.map { Int32($0.map { sets[$0] } ?? 512) }
            case .classes:
                return back.flatMap { b in (0..<9).map { c in b.map { Int32((sets[$0] >> c) & 1) } ?? 2 } }
            case .velocities:
                return back.flatMap { b in (0..<9).map { c in b.map { bins[$0][c] < 0 ? Int32(V) : Int32(bins[$0][c]) } ?? Int32(V + 1) } }
            }
        }
        // The start row: nothing played, step 0 next (bar 0 of the phrase), nothing to look back at.
        XCTAssertEqual(rows[0], 512)
        XCTAssertEqual(Array(rows[1..<10]), [Int32](repeating: Int32(group.velocityBins), count: 9))
        XCTAssertEqual(Array(rows[10..<19]), [Int32](repeating: Int32(group.offsetClasses), count: 9))
        XCTAssertEqual(Array(rows[19..<k]), [0, 0] + expectedLookback(0) + [0, 0])
        for s in 0..<seq.count {
            let r = Array(rows[((s + 1) * k)..<((s + 2) * k)])
            XCTAssertEqual(Int(r[0]), sets[s], "step \(s) hit set")
            for h in hits where h.step == s {
                XCTAssertEqual(Int(r[1 + h.drumClass]), group.velocity.bin(of: h.velocity), "step \(s) velocity bin")
                let bin = (h.offset + 60) * 8 / 120
                XCTAssertEqual(Int(r[10 + h.drumClass]), h.double ? 8 + bin : bin, "step \(s) offset class")
            }
            XCTAssertEqual(Int(r[19]), (s + 1) % 16, "position of the next step")
            XCTAssertEqual(Int(r[20]), (s + 1) / 16 % 8, "phrase bar of the next step")
            XCTAssertEqual(Array(r[21..<r1]), expectedLookback(s + 1), "step \(s) lookbacks (bars \(bars))")
            XCTAssertEqual(Int(r[r1]), s >= 16 && sets[s] == sets[s - 16] ? 1 : 0, "repeat flag one bar")
            XCTAssertEqual(Int(r[r1 + 1]), s >= 32 && sets[s] == sets[s - 32] ? 1 : 0, "repeat flag two bars")
        }
        // Some steps repeat the bar before: the flags are not all zero.
        XCTAssertTrue((0..<seq.count).contains { rows[($0 + 1) * k + r1] == 1 })
    }

    /// --shuffle-files' order: a permutation, the same for a seed, another for another seed;
    /// the shuffled class matrix holds each file's rows (its start row, then its steps) whole,
    /// in that order.
    func testShuffledFilesKeepEachFilesRows() throws {
        for count in [0, 1, 2, 10, 1031] {
            let order = TrainingData.fileOrder(count: count, seed: 3)
            XCTAssertEqual(order.sorted(), Array(0..<count), "a permutation of \(count) files")
            XCTAssertEqual(order, TrainingData.fileOrder(count: count, seed: 3), "the same order for the same seed")
        }
        let orders = (1...5).map { TrainingData.fileOrder(count: 1031, seed: $0) }
        XCTAssertEqual(Set(orders).count, 5, "another order for another seed")
        for order in orders {
            // Few files keep their place (about 1 of 1,031 expected) and few neighbours stay neighbours.
            XCTAssertLessThan(zip(order, 0...).filter { $0 == $1 }.count, 10)
            XCTAssertLessThan(zip(order, order.dropFirst()).filter { $1 == $0 + 1 }.count, 10)
        }

        let data = try converted()
        let group = try data.gridGroup()
        let (sequences, _) = try data.gridSequences(validation: false, group: group)
        XCTAssertEqual(sequences.count, 3)
        let encoder = GridEncoder(group: group)
        let inDatasetOrder = try data.gridClasses(validation: false, group: group).classes
        XCTAssertEqual(inDatasetOrder, sequences.flatMap { encoder.rows(of: $0) })
        var shuffledOnce = false
        for seed: UInt64 in 1...6 {
            let order = TrainingData.fileOrder(count: 3, seed: seed)
            let shuffled = try data.gridClasses(validation: false, group: group, shuffleSeed: seed).classes
            XCTAssertEqual(shuffled, order.flatMap { encoder.rows(of: sequences[$0]) }, "seed \(seed): files whole, in the order")
            if order != [0, 1, 2] {
                shuffledOnce = true
                XCTAssertNotEqual(shuffled, inDatasetOrder, "seed \(seed)")
            }
        }
        XCTAssertTrue(shuffledOnce, "some seed moves a file")
    }

    /// Each file from a zero state: the sums of the three files' own evaluations (their rows
    /// built file by file), no prediction across a file boundary; the state carried from file to
    /// file gives other figures.
    func testEachFileFromAZeroState() throws {
        let (group, events, shape, weights) = try calibrationModel(seed: 5, equalLogits: [])
        let data = try converted()
        let (sequences, files) = try data.gridSequences(validation: false, group: group)
        let encoder = GridEncoder(group: group)
        let own = sequences.map { Metrics.evaluate(weights: weights, events: encoder.rows(of: $0)) }
        let rows = files.files.map { $0.steps + 1 }
        XCTAssertEqual(rows, sequences.map { encoder.rows(of: $0).count / shape.inputGroups.count })
        let each = Metrics.evaluate(weights: weights, events: events, fileRows: rows)
        XCTAssertEqual(each.events, own.map(\.events).reduce(0, +))
        XCTAssertEqual(each.events, rows.reduce(0, +) - rows.count)
        let lossSum = zip(own, own.map { Double($0.events) }).map { $0.loss * $1 }.reduce(0, +)
        XCTAssertEqual(each.loss, lossSum / Double(each.events), accuracy: 1e-9)
        let hitSum = zip(own, own.map { Double($0.events) }).map { $0.accuracyNote * $1 }.reduce(0, +)
        XCTAssertEqual(each.accuracyNote, hitSum / Double(each.events), accuracy: 1e-12)
        let carried = Metrics.evaluate(weights: weights, events: events)
        XCTAssertEqual(carried.events, each.events + rows.count - 1)
        XCTAssertNotEqual(carried.loss, each.loss, "the carried state changes the later files' predictions")
    }

    /// A 1-layer H = 4 grid model of the fixture's group with random weights, except that the
    /// output groups `equalLogits` get all-zero Wy columns (every class's logit 0), and the
    /// fixture's training rows.
    func calibrationModel(seed: UInt64, equalLogits groups: [Int]) throws
        -> (group: GridGroup, events: [Int32], shape: ModelShape, weights: LSTMWeights)
    {
        let data = try converted()
        let group = try data.gridGroup()
        let (events, _, _) = try data.gridClasses(validation: false, group: group)
        let shape = ModelGroups(vocabulary: data.vocabulary, grid: group).shape(hidden: 4, layers: 1)
        var rng = SeededRNG(seed: seed)
        var w = try Initializer.weights(shape: shape, scheme: .keras, rng: &rng)
        let columns = shape.parameters.head.outputColumns, cols = shape.outputWidth
        for g in groups {
            for j in columns[g] { for r in 0...shape.hidden { w.wy[r * cols + j] = 0 } }
        }
        return (group, events, shape, w)
    }

    /// `drummer eval`'s velocity by class: with a class's velocity logits all equal the model
    /// predicts the mean of the bins' midpoints; with one bin's bias far above the others, that
    /// bin's midpoint; the data's side is the mean midpoint of the bins the rows hold.
    func testVelocityCalibrationFollowsTheDefinition() throws {
        let (group, events, shape, model) = try calibrationModel(seed: 3, equalLogits: Array(1...9))
        var w = model
        let columns = shape.parameters.head.outputColumns, cols = shape.outputWidth, H = shape.hidden
        w.wy[H * cols + columns[2].lowerBound + 2] = 60  // the snare's bin 2, far above its others
        let mids = group.velocity.bins.map { Double($0.lowerBound + $0.upperBound) / 2 }
        let k = shape.inputGroups.count, V = group.velocityBins
        var sums = [Double](repeating: 0, count: 9), counts = [Int](repeating: 0, count: 9)
        for r in 1..<(events.count / k) {
            for c in 0..<9 where events[r * k + 1 + c] < V {
                sums[c] += mids[Int(events[r * k + 1 + c])]
                counts[c] += 1
            }
        }
        let got = ModelEvaluation.gridCalibration(weights: w, grid: group, events: events).velocity
        XCTAssertEqual(got.map(\.drumClass), (0..<9).filter { counts[$0] > 0 }.map { GridGroup.classNames[$0] })
        XCTAssertTrue(got.contains { $0.drumClass == "kick" } && got.contains { $0.drumClass == "snare" })
        for v in got {
            let c = try XCTUnwrap(GridGroup.classNames.firstIndex(of: v.drumClass))
            XCTAssertEqual(v.hits, counts[c], v.drumClass)
            XCTAssertEqual(v.data, sums[c] / Double(counts[c]), accuracy: 1e-9, v.drumClass)
            let expected = c == 1 ? mids[2] : mids.reduce(0, +) / Double(mids.count)
            XCTAssertEqual(v.predicted, expected, accuracy: 1e-6, v.drumClass)
        }
    }

    /// `drummer eval`'s hits per bar by class: with the hit set's logits all equal but one set's
    /// far above, each class is expected at the chance of the sets holding it (by counting the
    /// sets, not by the code's marginals); the data's side counts the rows' hit sets, leaving out
    /// the targets that start the next file.
    func testHitCalibrationFollowsTheDefinition() throws {
        let (group, events, shape, model) = try calibrationModel(seed: 5, equalLogits: [0])
        var w = model
        let columns = shape.parameters.head.outputColumns, cols = shape.outputWidth, H = shape.hidden
        let favoured = 0b1_0000_0101  // kick, closed hi-hat, ride
        w.wy[H * cols + columns[0].lowerBound + favoured] = log(511.0)  // as likely as the other 511 together
        // P(favoured) = 511 / (511 + 511) = 1/2; each other set 1/1022. A class is in 256 of the
        // 512 sets: 256 · 1/1022, plus 1/2 for the three classes of the favoured set.
        var expected = [Double](repeating: 0, count: 9)
        for s in 0..<512 {
            let p = s == favoured ? 0.5 : 1.0 / 1022
            for c in 0..<9 where s >> c & 1 == 1 { expected[c] += p }
        }
        XCTAssertEqual(expected[0], 0.5 + 255.0 / 1022, accuracy: 1e-12)
        let k = shape.inputGroups.count
        var counts = [Int](repeating: 0, count: 9), steps = 0
        for r in 1..<(events.count / k) where events[r * k] < 512 {
            steps += 1
            for c in 0..<9 where events[r * k] >> c & 1 == 1 { counts[c] += 1 }
        }
        XCTAssertLessThan(steps, events.count / k - 1, "the data has a start of file among its targets")
        let got = ModelEvaluation.gridCalibration(weights: w, grid: group, events: events).hits
        XCTAssertEqual(got.map(\.drumClass), GridGroup.classNames)
        for (c, h) in got.enumerated() {
            XCTAssertEqual(h.predicted, 16 * expected[c], accuracy: 1e-4, h.drumClass)
            XCTAssertEqual(h.data, 16 * Double(counts[c]) / Double(steps), accuracy: 1e-9, h.drumClass)
        }
        XCTAssertGreaterThan(got[0].data, 0, "the fixture plays the kick")
    }

    /// The grid's targets: the next row's same-named inputs, masked where a class is not hit.
    func testShapeTargetsAndLoss() throws {
        let group = try converted().gridGroup()
        let groups = ModelGroups(vocabulary: try Vocabulary(ixToNote: [36], ixToTick: [0]), grid: group)
        let shape = groups.shape(hidden: 8, layers: 2)
        XCTAssertEqual(shape.inputGroups.count, 23 + 18)
        XCTAssertEqual(Array(shape.inputGroups[21..<39]), [Int](repeating: 3, count: 18), "lookback classes: not hit, hit, before the start")
        XCTAssertEqual(shape.outputGroups, [512] + [Int](repeating: group.velocityBins, count: 9) + [Int](repeating: 16, count: 9))
        XCTAssertEqual(shape.targetColumns, Array(0..<19))
        XCTAssertEqual(shape.lossGroups, 19)
        XCTAssertFalse(groups.isOriginalLayout)
        for g in 0..<19 { XCTAssertEqual(shape.inputGroups[shape.targetColumns[g]], shape.outputGroups[g] + 1, "group \(g): one class more, \"not predicted\"") }
    }
}
