// Finite-difference check of the trainer's analytic gradient: every entry of Wx
// and Wy, non-zero initial state, central differences on a double-precision
// forward of the same loss.
import DrummerCore
import ReferenceModel
import XCTest
@testable import Checkpoints
@testable import Train

final class GradientCheckTests: XCTestCase {
    /// Worst relative error |analytic − numeric| / (|analytic| + |numeric|) over the entries
    /// with |analytic| + |numeric| > 1e-5 (smaller ones are at float32 rounding level), and
    /// the worst absolute error over all entries.
    ///
    /// `inputs`/`outputs`/`targets`: the groups (sizes in Wx row and Wy column order, and each
    /// output group's target column), written out by hand so that the layout code is not its
    /// own reference; the default is the original layout of 3 notes and 4 ticks.
    func check(batch: Int, pointer: Int, seed: UInt64, ownKernel: Bool? = nil, layers: Int = 1,
               inputs: [Int] = [3, 4], outputs: [Int] = [3, 4], targets: [Int] = [0, 1],
               dropout: Dropout? = nil, referenceClasses: Bool? = nil,
               silent: Double = 0, silentByGroup: [Double]? = nil) throws -> (rel: Double, abs: Double) {
        let shape = ModelShape(inputGroups: inputs, outputGroups: outputs, hidden: 5, layers: layers, targetColumns: targets)
        let U = 6
        var rng = SeededRNG(seed: seed)
        var state = try Problem.state(shape: shape, unroll: U, batch: batch, rng: &rng)
        state.pointer = pointer
        // `silent`: the share of classes drawn as their group's last class (as a drummer's rows sit
        // at the silent class of most groups), the rest uniform; `silentByGroup`: a share per group.
        let events = Problem.events(count: 16 * batch, groups: inputs, rng: &rng).enumerated().map { i, c in
            rng.nextDouble() < (silentByGroup?[i % inputs.count] ?? silent) ? Int32(inputs[i % inputs.count] - 1) : c
        }
        let trainer = try Trainer(state: state, events: events, optimizer: OptimizerConfig(learningRate: 0.1))
        XCTAssertEqual(trainer.usesReferenceClasses, !shape.isOriginalLayout, "reference classes by default but in the 2017 layout")
        if let referenceClasses { trainer.usesReferenceClasses = referenceClasses }
        if let own = ownKernel {
            trainer.usesOwnRecurrentKernel = own
            XCTAssertEqual(trainer.usesOwnRecurrentKernel, own, "recurrent kernel choice")
        }
        trainer.dropout = dropout
        // The trainer's masks (step 0, the chunk's events), given to the reference (the output
        // layer's input, keyed as layer `layers`, is never dropped).
        // (A table, read by the reference 2·P times: drawing each mask anew cost most of a check.)
        let eventCount = events.count / inputs.count, H = 5
        let masks: [Double]? = dropout == nil ? nil : (0...layers).flatMap { layer in
            (0..<eventCount).flatMap { event in
                (0..<H).map { unit in
                    (layer == layers ? nil : dropout).map { Double($0.scale(step: 0, layer: layer, event: event, unit: unit)) } ?? 1
                }
            }
        }
        let drop: ((Int, Int, Int) -> Double)? = masks.map { m in { layer, event, unit in m[(layer * eventCount + event) * H + unit] } }
        // Every gradient entry is written by a chunk, none left from before: NaN would show.
        trainer.grad.fill(.nan)
        trainer.groupGrad.fill(.nan)
        let (loss, analytic) = trainer.chunkGradient()
        XCTAssertTrue(analytic.allSatisfy(\.isFinite), "a gradient entry the chunk did not write")
        // Again on the same trainer: every gradient buffer is overwritten, not added to.
        XCTAssertTrue(trainer.chunkGradient().gradient == analytic, "a second pass gives the same gradient")
        var model = DoubleModel(inputs: inputs, outputs: outputs, targetColumns: targets, hidden: 5, layers: layers,
                                params: state.parameters.map(Double.init))
        XCTAssertEqual(model.count, state.parameters.count, "parameter count")
        let l0 = model.chunkLoss(events: events, unroll: U, batch: batch, pointer: pointer, h0: state.h, c0: state.c, drop: drop, fileStarts: nil)
        XCTAssertEqual(Double(loss), l0, accuracy: 1e-5 * l0, "chunk loss (unweighted)")
        let eps = 1e-5
        var worst = 0.0, worstAbs = 0.0, compared = 0
        for k in 0..<state.parameters.count {
            let saved = model.params[k]
            model.params[k] = saved + eps
            let lp = model.chunkLoss(events: events, unroll: U, batch: batch, pointer: pointer, h0: state.h, c0: state.c, drop: drop, fileStarts: nil)
            model.params[k] = saved - eps
            let lm = model.chunkLoss(events: events, unroll: U, batch: batch, pointer: pointer, h0: state.h, c0: state.c, drop: drop, fileStarts: nil)
            model.params[k] = saved
            let numeric = (lp - lm) / (2 * eps)
            let a = Double(analytic[k])
            worstAbs = max(worstAbs, abs(a - numeric))
            if abs(a) + abs(numeric) > 1e-5 {
                compared += 1
                worst = max(worst, abs(a - numeric) / (abs(a) + abs(numeric)))
            }
        }
        XCTAssertGreaterThan(compared, state.parameters.count / 2, "most entries have a sizeable gradient")
        return (worst, worstAbs)
    }

    func testGradientBatch1() throws {
        let (rel, absErr) = try check(batch: 1, pointer: 3, seed: 11)
        print("gradient check B=1: worst relative error \(rel), worst absolute error \(absErr)")
        XCTAssertLessThan(rel, 1e-3)
        XCTAssertLessThan(absErr, 1e-6)
    }

    /// Two stacked layers (the second reads the first's h): every entry of Wx, Wx1 and Wy, on
    /// one stream group with the helper thread's pipeline (B = 1), on two stream groups
    /// (B = 17), with groups and the recurrent kernel this CPU picks at 9 rows; and three layers.
    func testGradientTwoLayers() throws {
        for (batch, seed) in [(1, 31), (17, 33)] {
            let (rel, absErr) = try check(batch: batch, pointer: 2, seed: UInt64(seed), layers: 2)
            print("gradient check 2 layers, B=\(batch): worst relative error \(rel), worst absolute error \(absErr)")
            XCTAssertLessThan(rel, 1e-3, "B = \(batch)")
            XCTAssertLessThan(absErr, 1e-6, "B = \(batch)")
        }
        for own in [Kernels.haveGEMM] {
            let (rel, absErr) = try check(batch: 9, pointer: 1, seed: 34, ownKernel: own, layers: 2,
                                          inputs: [3, 4, 2, 2, 5], outputs: [3, 4, 5], targets: [0, 1, 4])
            print("gradient check 2 layers, groups, B=9 (recurrent \(own ? Kernels.isa.name : "openblas")): worst relative error \(rel), worst absolute error \(absErr)")
            XCTAssertLessThan(rel, 1e-3)
            XCTAssertLessThan(absErr, 1e-6)
        }
        let (rel, absErr) = try check(batch: 1, pointer: 0, seed: 35, layers: 3)
        print("gradient check 3 layers, B=1: worst relative error \(rel), worst absolute error \(absErr)")
        XCTAssertLessThan(rel, 1e-3)
        XCTAssertLessThan(absErr, 1e-6)
    }

    /// Dropout between layers: the gradient of the loss with the trainer's masks, checked
    /// against the reference fed the same masks (B = 1: one pipeline; B = 17: two stream groups).
    func testGradientWithDropoutBetweenLayers() throws {
        let dropout = try XCTUnwrap(Dropout(probability: 0.4, seed: 99))
        for (batch, seed, layers) in [(1, 41, 2), (17, 42, 3)] {
            let (rel, absErr) = try check(batch: batch, pointer: 2, seed: UInt64(seed), layers: layers, dropout: dropout)
            print("gradient check \(layers) layers, dropout 0.4, B=\(batch): worst relative error \(rel), worst absolute error \(absErr)")
            XCTAssertLessThan(rel, 1e-3)
            XCTAssertLessThan(absErr, 1e-6)
        }
        // The masks drop about P of the units and scale the rest by 1/(1 − P).
        var dropped = 0
        for e in 0..<2000 { for j in 0..<10 where dropout.scale(step: 3, layer: 1, event: e, unit: j) == 0 { dropped += 1 } }
        XCTAssertEqual(Double(dropped) / 20000, 0.4, accuracy: 0.02)
        XCTAssertEqual(dropout.scale(step: 3, layer: 1, event: 0, unit: 0), dropout.scale(step: 3, layer: 1, event: 0, unit: 0))
        let kept = (0..<100).map { dropout.scale(step: 5, layer: 2, event: $0, unit: 1) }.filter { $0 != 0 }
        XCTAssertTrue(kept.allSatisfy { abs($0 - 1 / 0.6) < 1e-6 })
        XCTAssertNil(Dropout(probability: 0, seed: 1))
        // A mask row as the trainer fills it (CKernels' loop) holds scale(row:unit:) unit for unit.
        for (width, layer) in [(5, 1), (256, 1), (300, 2)] {
            let key = dropout.rowKey(step: 7, layer: layer, event: 1234)
            var row = [Float](repeating: .nan, count: width)
            row.withUnsafeMutableBufferPointer { dropout.fillRow(key: key, $0) }
            XCTAssertEqual(row, (0..<width).map { dropout.scale(row: key, unit: $0) }, "width \(width)")
            XCTAssertTrue(row.contains(0) || width < 10, "width \(width): some units dropped")
        }
    }

    func testGradientBatch2() throws {
        let (rel, absErr) = try check(batch: 2, pointer: 2, seed: 12)
        print("gradient check B=2: worst relative error \(rel), worst absolute error \(absErr)")
        XCTAssertLessThan(rel, 1e-3)
        XCTAssertLessThan(absErr, 1e-6)
    }

    /// B = 9 with the recurrent products on CKernels' own kernel (an 8-row tile and a
    /// 1-row tail; G = 20 and H = 5 columns are partly masked tiles), and on OpenBLAS.
    func testGradientBatch9BothRecurrentKernels() throws {
        for own in Kernels.haveGEMM ? [true, false] : [false] {
            let (rel, absErr) = try check(batch: 9, pointer: 1, seed: 13, ownKernel: own)
            print("gradient check B=9 (recurrent \(own ? Kernels.isa.name : "openblas")): worst relative error \(rel), worst absolute error \(absErr)")
            XCTAssertLessThan(rel, 1e-3)
            XCTAssertLessThan(absErr, 1e-6)
        }
        if !Kernels.haveGEMM { print("own recurrent kernel not checked: the kernels run at the baseline level here") }
    }

    /// B = 17: two stream groups (8 + 9 streams) whose gradients are added.
    func testGradientBatch17StreamGroups() throws {
        let (rel, absErr) = try check(batch: 17, pointer: 0, seed: 14)
        print("gradient check B=17 (two stream groups): worst relative error \(rel), worst absolute error \(absErr)")
        XCTAssertLessThan(rel, 1e-3)
        XCTAssertLessThan(absErr, 1e-6)
    }

    /// Groove layout: note, tick, a one-hot position of 6 slots and a velocity of 3 bins in;
    /// note, tick and velocity out (the velocity target is the next event's column 3).
    /// The grid layout's masked targets: each input group has one class more than the output
    /// group predicting it, and a target of that class (about a fifth of them here) adds no
    /// loss and no gradient; the targets name their columns (not the event layouts' order).
    func testGradientMaskedTargets() throws {
        for (batch, layers) in [(1, 1), (3, 2)] {
            let (rel, absErr) = try check(batch: batch, pointer: 1, seed: 33, layers: layers, inputs: [4, 3, 5, 2, 6],
                                          outputs: [3, 2, 4, 5], targets: [0, 1, 2, 4])
            print("gradient check masked targets B=\(batch) L=\(layers): worst relative error \(rel), worst absolute error \(absErr)")
            XCTAssertLessThan(rel, 1e-3)
            XCTAssertLessThan(absErr, 1e-6)
        }
    }

    /// Output groups predicted in few rows take the head's sparse path (OutputHead.swift): here
    /// group 0 is predicted in about 3 rows of 4 (the dense product), group 1 in about 1 of 15,
    /// group 2 in none (its gradient columns must still be overwritten) and group 3 in about 1
    /// of 4. B = 3 runs six blocks (the later ones accumulate), B = 17 two stream groups.
    func testGradientSparseOutputGroups() throws {
        let inputs = [4, 3, 5, 2, 6], outputs = [3, 2, 4, 5], targets = [0, 1, 2, 4]
        for batch in [3, 17] {
            let (rel, absErr) = try check(batch: batch, pointer: 1, seed: 61, layers: 2, inputs: inputs, outputs: outputs,
                                          targets: targets, silentByGroup: [0, 0.9, 1, 0, 0.7])
            print("gradient check sparse output groups B=\(batch): worst relative error \(rel), worst absolute error \(absErr)")
            XCTAssertLessThan(rel, 1e-3, "B = \(batch)")
            XCTAssertLessThan(absErr, 1e-6, "B = \(batch)")
        }
    }

    func testGradientPositionAndVelocityGroups() throws {
        for batch in [1, 3] {
            let (rel, absErr) = try check(batch: batch, pointer: 1, seed: 21, inputs: [3, 4, 6, 3], outputs: [3, 4, 3],
                                          targets: [0, 1, 3])
            print("gradient check groups B=\(batch): worst relative error \(rel), worst absolute error \(absErr)")
            XCTAssertLessThan(rel, 1e-3)
            XCTAssertLessThan(absErr, 1e-6)
        }
    }

    /// Binary position (three 2-row bit groups), with and without velocity; B = 17 for the
    /// two stream groups.
    func testGradientBinaryPositionGroups() throws {
        var (rel, absErr) = try check(batch: 2, pointer: 0, seed: 22, inputs: [3, 4, 2, 2, 2, 3], outputs: [3, 4, 3],
                                      targets: [0, 1, 5])
        print("gradient check binary position + velocity: worst relative error \(rel), worst absolute error \(absErr)")
        XCTAssertLessThan(rel, 1e-3)
        XCTAssertLessThan(absErr, 1e-6)
        (rel, absErr) = try check(batch: 17, pointer: 2, seed: 23, inputs: [3, 4, 2, 2], outputs: [3, 4], targets: [0, 1])
        print("gradient check binary position, B=17: worst relative error \(rel), worst absolute error \(absErr)")
        XCTAssertLessThan(rel, 1e-3)
        XCTAssertLessThan(absErr, 1e-6)
    }

    /// Layer 0's input from a reference class per group (the default but in the 2017 layout)
    /// and the direct sum: both the reference's gradient, on rows mostly at one class per group
    /// (as a drummer's) and on uniform rows, in one pipeline (B = 3) and two stream groups
    /// (B = 17); and the two forms agree with each other more closely than with the reference.
    func testGradientReferenceClassesAndDirectSum() throws {
        let inputs = [4, 3, 5, 2, 6], outputs = [3, 2, 4, 5], targets = [0, 1, 2, 4]
        for (batch, silent) in [(3, 0.8), (17, 0.8), (17, 0.0)] {
            for reference in [true, false] {
                let (rel, absErr) = try check(batch: batch, pointer: 1, seed: 51, layers: 2, inputs: inputs, outputs: outputs,
                                              targets: targets, referenceClasses: reference, silent: silent)
                print("gradient check reference classes \(reference) B=\(batch) silent \(silent): worst relative error \(rel), worst absolute error \(absErr)")
                XCTAssertLessThan(rel, 1e-3, "reference \(reference), B = \(batch), silent \(silent)")
                XCTAssertLessThan(absErr, 1e-6, "reference \(reference), B = \(batch), silent \(silent)")
            }
        }
        // The original layout can take the form too (it does not by default, to keep its bits).
        let (rel, absErr) = try check(batch: 2, pointer: 2, seed: 52, referenceClasses: true, silent: 0.6)
        XCTAssertLessThan(rel, 1e-3)
        XCTAssertLessThan(absErr, 1e-6)

        // The two forms side by side on one problem: the same loss and gradient to float32
        // rounding, and different bits (so the form in use is the one switched on).
        let shape = ModelShape(inputGroups: inputs, outputGroups: outputs, hidden: 5, layers: 2, targetColumns: targets)
        var rng = SeededRNG(seed: 53)
        let state = try Problem.state(shape: shape, unroll: 6, batch: 17, rng: &rng)
        let events = Problem.events(count: 16 * 17, groups: inputs, rng: &rng).enumerated().map { i, c in
            rng.nextDouble() < 0.8 ? Int32(inputs[i % inputs.count] - 1) : c
        }
        var results: [(loss: Float, gradient: [Float])] = []
        for reference in [true, false] {
            let trainer = try Trainer(state: state, events: events, optimizer: OptimizerConfig(learningRate: 0.1))
            trainer.usesReferenceClasses = reference
            XCTAssertEqual(trainer.usesReferenceClasses, reference)
            results.append(trainer.chunkGradient())
        }
        XCTAssertEqual(results[0].loss, results[1].loss, accuracy: 1e-6 * results[1].loss)
        let scale = results[1].gradient.map(abs).max() ?? 0
        XCTAssertGreaterThan(scale, 0)
        for (a, b) in zip(results[0].gradient, results[1].gradient) { XCTAssertEqual(a, b, accuracy: 1e-6 * scale) }
        XCTAssertNotEqual(results[0].gradient, results[1].gradient, "the two forms round differently")
    }

    /// With clipping active, an SGD step moves every parameter by −lr·clip(gradient).
    func testClippedUpdateEqualsClippedGradient() throws {
        let shape = ModelShape(notes: 3, ticks: 4, hidden: 5)
        var rng = SeededRNG(seed: 13)
        let state = try Problem.state(shape: shape, unroll: 6, batch: 2, rng: &rng)
        let events = Problem.events(count: 40, shape: shape, rng: &rng)
        let clip: Float = 0.01, lr: Float = 0.5
        let trainer = try Trainer(state: state, events: events,
                                  optimizer: OptimizerConfig(kind: .sgd, learningRate: lr, clip: clip))
        let (_, g) = trainer.chunkGradient()
        let clipped = g.filter { abs($0) > clip }.count
        XCTAssertGreaterThan(clipped, 10, "the problem must exercise clipping")
        XCTAssertGreaterThan(g.count - clipped, 10, "and leave some entries unclipped")
        trainer.step()
        let after = trainer.snapshot().parameters
        for k in 0..<g.count {
            let expected = state.parameters[k] - lr * min(max(g[k], -clip), clip)
            XCTAssertEqual(after[k], expected, accuracy: 1e-7, "parameter \(k)")
        }
    }
}
