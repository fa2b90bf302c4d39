// What a chunk reads from the data: for each of its R = U·B rows (row r = t·B + b, step t,
// stream b), the Wx rows of its one-hot input classes (in(r, g), k per row) and the class
// each output group must predict (target(r, g), m per row); and the training input noise
// (InputNoise.swift) that replaces some of those inputs. The layers only read these buffers.
//
// Schedule (Trainer.swift): the batch's stream s covers events [s·L, (s+1)·L) of the
// sequence (L = `segment`); a chunk at pointer p has inputs p..p+U−1 and targets p+1..p+U
// of each of this group's streams firstStream..<firstStream+B.
//
// With `fileStarts` (drummer train --reset-state-per-file), the row whose input is a file's
// first event starts from a zero state, as sampling starts a file: `resets` marks those rows.
import DrummerCore

/// The rows of a chunk whose LSTM state starts from zero (row r = t·B + b): every layer reads
/// h_{t−1} = c_{t−1} = 0 there and passes no gradient back past it. Written by
/// ChunkInputs.gather, read by the layers (LSTMLayer.swift).
final class StateResets: @unchecked Sendable {
    let U: Int, B: Int
    /// U·B: 1 where the row starts from a zero state.
    let rows: RawBuffer<UInt8>
    /// U: 1 where any stream of step t does.
    let steps: RawBuffer<UInt8>

    init(unroll: Int, batch: Int) {
        U = unroll; B = batch
        rows = RawBuffer(count: unroll * batch, value: 0)
        steps = RawBuffer(count: unroll, value: 0)
    }

    @inline(__always) func row(_ r: Int) -> Bool { rows[r] != 0 }
    @inline(__always) func any(step t: Int) -> Bool { steps[t] != 0 }

    /// Whether any of `rows` (whole steps) resets.
    func any(rows r: Range<Int>) -> Bool {
        guard !r.isEmpty else { return false }
        return (r.lowerBound / B...(r.upperBound - 1) / B).contains { steps[$0] != 0 }
    }
}

final class ChunkInputs: @unchecked Sendable {
    let U: Int, B: Int, k: Int, m: Int
    /// Streams firstStream..<firstStream + B of the batch (a stream group).
    let firstStream: Int
    /// Each input group's first row in Wx_0.
    let inputOffsets: [Int]
    /// Output group g's target is the class in column targetColumn[g] of the next event.
    let targetColumn: [Int]
    let inputRows: Int32Buffer, targets: Int32Buffer
    /// Training input noise and the step whose draws `gather` makes.
    var noise: InputNoise?
    /// Whether `drawFromModel` has anything to draw (the chunk needs the model's predictions).
    var drawsFromModel: Bool { noise?.draw == .model }
    var noiseStep = 0
    /// Per event of the sequence, whether it is a file's first (its row starts from a zero
    /// state); nil: the state flows from file to file.
    var fileStarts: [Bool]?
    let resets: StateResets

    init(shape: ModelShape, unroll: Int, batch: Int, firstStream: Int) {
        U = unroll; B = batch
        k = shape.inputGroups.count; m = shape.outputGroups.count
        self.firstStream = firstStream
        inputOffsets = shape.parameters.layers[0].inputGroupRows.map(\.lowerBound)
        targetColumn = targetColumns(of: shape)
        inputRows = Int32Buffer(count: U * B * k)
        targets = Int32Buffer(count: U * B * m)
        resets = StateResets(unroll: unroll, batch: batch)
    }

    /// Bytes of the per-row buffers of a chunk (inputs, targets, resets); nil on overflow.
    static func workspaceBytes(shape: ModelShape, unroll: Int, batch: Int) -> Int? {
        let (rows, o1) = max(0, unroll).multipliedReportingOverflow(by: max(0, batch))
        let (bytes, o2) = rows.multipliedReportingOverflow(by: 4 * (shape.inputGroups.count + shape.outputGroups.count) + 1)
        return o1 || o2 ? nil : bytes
    }

    /// The event of row r (step t, stream b) at pointer p.
    @inline(__always) func event(step t: Int, stream b: Int, segment: Int, pointer p: Int) -> Int {
        (firstStream + b) * segment + p + t
    }

    /// Fills inputRows, targets and resets for the chunk at pointer `p` (`events`:
    /// k class indices per event, one per input group), with uniform or drop input noise where asked.
    func gather(events: UnsafeBufferPointer<Int32>, segment: Int, pointer p: Int) {
        for t in 0..<U {
            resets.steps[t] = 0
            for b in 0..<B {
                let r = t * B + b
                let e = event(step: t, stream: b, segment: segment, pointer: p)
                let reset: UInt8 = fileStarts?[e] == true ? 1 : 0
                resets.rows[r] = reset
                resets.steps[t] |= reset
                for g in 0..<k { inputRows[r * k + g] = Int32(inputOffsets[g]) + events[e * k + g] }
                if let noise, noise.draw != .model {
                    for (j, g) in noise.groups.enumerated() {
                        if let c = noise.replacement(step: noiseStep, event: e, slot: j, current: Int(events[e * k + g])) {
                            inputRows[r * k + g] = Int32(inputOffsets[g] + c)
                        }
                    }
                }
                for g in 0..<m { targets[r * m + g] = events[(e + 1) * k + targetColumn[g]] }
            }
        }
    }

    /// Model-drawn inputs, after `gather` and a forward sweep over the true inputs: for each row
    /// r (step t, stream b) where the noise replaces a group's class (draw == .model), a draw
    /// from the model's prediction of that input, `prediction(r, o)`: the logits of output group
    /// o at row r computed from h_{t−1,b}.
    func drawFromModel(segment: Int, pointer p: Int, prediction: (Int, Int) -> UnsafeBufferPointer<Float>) {
        if let noise, noise.draw == .model {
            for t in 0..<U {
                for b in 0..<B {
                    let r = t * B + b
                    let e = event(step: t, stream: b, segment: segment, pointer: p)
                    for (j, g) in noise.groups.enumerated() {
                        let current = Int(inputRows[r * k + g]) - inputOffsets[g]
                        guard let w = noise.replacementWord(step: noiseStep, event: e, slot: j, current: current) else { continue }
                        let c = InputNoise.draw(from: prediction(r, noise.outputGroups[j]), w)
                        inputRows[r * k + g] = Int32(inputOffsets[g] + c)
                    }
                }
            }
        }
    }
}
