// The input encoding of a hit, written once. A hit is fed to the model as one class per
// input group (ModelGroups' fixed order):
//   note | tick | position (one slot, or one bit per group) | lookback note | lookback tick | velocity
// The trainer's class matrix (TrainingData.classes, which `drummer eval` also reads) and
// the sampler's every step both come from `HitEncoder.encode`, so a model is always fed
// what it was trained on.

/// Encodes hits, one after the other, as the input classes of a model's groups. Holds the
/// lookback group's memory of the hits encoded so far (`reset` starts a new sequence).
public struct HitEncoder {
    public let groups: ModelGroups
    private var lookback: LookbackTracker?
    /// k: classes written per hit (one per input group).
    public let inputCount: Int

    public init(groups: ModelGroups) {
        self.groups = groups
        lookback = groups.lookback.map {
            LookbackTracker(group: $0, notes: groups.vocabulary.notes, ticks: groups.vocabulary.ticks)
        }
        inputCount = groups.inputNames.count
    }

    /// Forgets the hits encoded so far (the lookback's memory).
    public mutating func reset() { lookback?.reset() }

    /// Writes the `inputCount` input classes of a hit into `out`: its note and tick classes, and
    /// where the model has them, its position (`tickInBar` ticks after the line of a bar of
    /// `barTicks`, at the position group's ppq; `onset` ticks from the start, for the lookback)
    /// and its velocity bin. Returns true when the position lies past the model's last slot
    /// (it is read as the last slot).
    @inline(__always)
    public mutating func encode(note: Int32, tick: Int32, onset: Int, tickInBar: Int, barTicks: Int, velocityBin: Int32,
                                into out: UnsafeMutableBufferPointer<Int32>) -> Bool {
        out[0] = note
        out[1] = tick
        var o = 2
        var clamped = false
        if let p = groups.position {
            let (slot, past) = p.inputSlot(tickInBar: tickInBar)
            clamped = past
            if p.encoding == .oneHot {
                out[o] = Int32(slot)
                o += 1
            } else {
                for b in 0..<p.bits {
                    out[o] = Int32((slot >> b) & 1)
                    o += 1
                }
            }
        }
        if lookback != nil {
            let back = lookback!.push(onset: onset, note: note, tick: tick, barTicks: barTicks)
            out[o] = back.note
            out[o + 1] = back.tick
            o += 2
        }
        if groups.velocity != nil { out[o] = velocityBin }
        return clamped
    }
}
