// Validation of a class matrix (one column per input group, see ModelGroups) against a
// model shape.
import DrummerCore

/// Checks of a training or evaluation sequence against a model shape.
public enum EventValidation {
    /// Throws unless `classes` holds whole rows of `shape.inputGroups.count` classes, each
    /// inside its group.
    public static func check(_ classes: [Int32], shape: ModelShape) throws {
        let groups = shape.inputGroups, k = groups.count
        guard classes.count % k == 0 else { throw TrainError.oddEventBuffer(count: classes.count, columns: k) }
        for e in 0..<(classes.count / k) {
            for g in 0..<k {
                let c = classes[e * k + g]
                if c < 0 || Int(c) >= groups[g] {
                    throw TrainError.eventOutOfRange(event: e, field: groupName(g, of: k), value: c, count: groups[g])
                }
            }
        }
    }

    static func groupName(_ g: Int, of k: Int) -> String {
        switch g {
        case 0: return "note"
        case 1: return "tick"
        default: return "input group \(g)"
        }
    }
}

/// For each output group, the column of the class matrix that holds its target (the shape's
/// `targetColumns`).
func targetColumns(of shape: ModelShape) -> [Int] { shape.targetColumns }
