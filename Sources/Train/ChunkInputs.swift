// What a chunk reads from the data: for each of its R = U·B rows (row r = t·B + b, step t,
// stream b), the Wx rows of its one-hot input classes (in(r, g), k per row) and the class
// each output group must predict (target(r, g), m per row). The layers only read these buffers.
//
// Schedule (Trainer.swift): the batch's stream s covers events [s·L, (s+1)·L) of the
// sequence (L = `segment`); a chunk at pointer p has inputs p..p+U−1 and targets p+1..p+U
// of each of this group's streams firstStream..<firstStream+B.
import DrummerCore

final class ChunkInputs: @unchecked Sendable {
    let U: Int, B: Int, k: Int, m: Int
    /// Streams firstStream..<firstStream + B of the batch (a stream group).
    let firstStream: Int
    /// Each input group's first row in Wx_0.
    let inputOffsets: [Int]
    /// Output group g's target is the class in column targetColumn[g] of the next event.
    let targetColumn: [Int]
    let inputRows: Int32Buffer, targets: Int32Buffer
    /// The training step of the chunk (the dropout masks' key).
    var step = 0

    init(shape: ModelShape, unroll: Int, batch: Int, firstStream: Int) {
        U = unroll; B = batch
        k = shape.inputGroups.count; m = shape.outputGroups.count
        self.firstStream = firstStream
        inputOffsets = shape.parameters.layers[0].inputGroupRows.map(\.lowerBound)
        targetColumn = targetColumns(of: shape)
        inputRows = Int32Buffer(count: U * B * k)
        targets = Int32Buffer(count: U * B * m)
    }

    /// Bytes of the per-row buffers of a chunk (inputs, targets, and layer 0's scatter order of
    /// the inputs); nil on overflow.
    static func workspaceBytes(shape: ModelShape, unroll: Int, batch: Int) -> Int? {
        let (rows, o1) = max(0, unroll).multipliedReportingOverflow(by: max(0, batch))
        let (bytes, o2) = rows.multipliedReportingOverflow(by: 4 * (2 * shape.inputGroups.count + shape.outputGroups.count))
        return o1 || o2 ? nil : bytes
    }

    /// The event of row r (step t, stream b) at pointer p.
    @inline(__always) func event(step t: Int, stream b: Int, segment: Int, pointer p: Int) -> Int {
        (firstStream + b) * segment + p + t
    }

    /// Fills inputRows and targets for the chunk at pointer `p` (`events`: k class indices per
    /// event, one per input group).
    func gather(events: UnsafeBufferPointer<Int32>, segment: Int, pointer p: Int) {
        for t in 0..<U {
            for b in 0..<B {
                let r = t * B + b
                let e = event(step: t, stream: b, segment: segment, pointer: p)
                for g in 0..<k { inputRows[r * k + g] = Int32(inputOffsets[g]) + events[e * k + g] }
                for g in 0..<m { targets[r * m + g] = events[(e + 1) * k + targetColumn[g]] }
            }
        }
    }
}
