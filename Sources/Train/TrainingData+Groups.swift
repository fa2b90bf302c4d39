// The groups a run trains (ModelGroups) and the class matrix it reads: one column per
// input group, one row per hit (note index, tick index, then the position group's
// classes and the velocity bin when the model has them).

import DrummerCore
import Foundation

extension TrainingData {
    /// Velocity bins of a new model unless told otherwise (chosen from the data by quantiles).
    public static let defaultVelocityBins = 16

    /// The groups of a new run on this dataset: note and tick always; the position group
    /// when `position` is true (default: when the dataset has positions.npy), the velocity
    /// group when `velocity` is true (default: when it has velocities.npy).
    ///
    /// Position: slots of `ticksPerSlot` ticks (the dataset's --quantize grid, else a 64th note:
    /// ppq/16), as many as the longest bar in the training data needs; the default meter is the
    /// one most training hits are in. Velocity: `velocityBins` bins holding about the same share
    /// of the training hits each.
    ///
    /// Lookback (`lookback`, default off; it needs the position group): the hit that came next one bar
    /// ago (see DrummerCore/Lookback.swift), matched within a 32nd note.
    public func groups(position: Bool?, velocity: Bool?, lookback: Bool? = nil, encoding: PositionEncoding = .oneHot,
                       velocityBins: Int = TrainingData.defaultVelocityBins) throws -> ModelGroups {
        var g = ModelGroups(vocabulary: vocabulary)
        if position ?? hasPositions {
            guard let positions = training.positions else {
                throw DatasetError.missingGroup(path: path, group: "position", file: "positions.npy")
            }
            guard hasPositions else {
                throw DatasetError.missingGroup(path: path + "/validation", group: "position", file: "positions.npy")
            }
            let ticksPerSlot = max(1, quantize ?? ppq / 16)
            var longest: Int32 = 1
            var barHits: [Int32: Int] = [:]
            var e = 1
            while e < positions.count {
                longest = max(longest, positions[e])
                barHits[positions[e], default: 0] += 1
                e += 2
            }
            let slots = (Int(longest) + ticksPerSlot - 1) / ticksPerSlot
            g.position = PositionGroup(encoding: encoding, slots: max(1, slots), ticksPerSlot: ticksPerSlot, ppq: ppq,
                                       meter: mostCommonMeter(barHits: barHits))
            try g.position?.validate()
        }
        if lookback ?? false {
            guard g.position != nil else {
                throw DatasetError.missingGroup(path: path, group: "lookback", file: "positions.npy")
            }
            g.lookback = LookbackGroup(toleranceTicks: LookbackGroup.defaultTolerance(ppq: ppq))
        }
        if velocity ?? hasVelocities {
            guard let velocities = training.velocities else {
                throw DatasetError.missingGroup(path: path, group: "velocity", file: "velocities.npy")
            }
            guard hasVelocities else {
                throw DatasetError.missingGroup(path: path + "/validation", group: "velocity", file: "velocities.npy")
            }
            var histogram = [Int](repeating: 0, count: 127)
            for v in velocities { histogram[Int(v) - 1] += 1 }
            g.velocity = try VelocityGroup.quantileBins(histogram: histogram, count: velocityBins)
        }
        return g
    }

    /// The meter most training hits are in, from the manifest; without one, from the most
    /// common bar length (N/4 when it is a whole number of quarter notes, else N/8).
    func mostCommonMeter(barHits: [Int32: Int]) -> Meter {
        if let (name, _) = meterHits.max(by: { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }),
           let m = Meter(name) {
            return m
        }
        guard let (ticks, _) = barHits.max(by: { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }) else {
            return .common
        }
        let t = Int(ticks)
        if t % ppq == 0, let m = Meter(numerator: t / ppq, denominator: 4) { return m }
        if (2 * t) % ppq == 0, let m = Meter(numerator: 2 * t / ppq, denominator: 8) { return m }
        return .common
    }

    /// The class matrix of `split` for `groups` (`groups.shape(hidden:).inputGroups.count` columns
    /// per hit). Positions are rescaled to the group's ppq; a position past the last slot (a bar
    /// longer than any the model learned) takes the last slot, and a velocity outside the bins
    /// the nearest bin: both are counted.
    public func classes(_ split: DatasetSplit, for groups: ModelGroups) throws
        -> (classes: [Int32], clampedPositions: Int, clampedVelocities: Int)
    {
        precondition(groups.vocabulary == vocabulary, "classes(for:) takes groups over this dataset's vocabulary")
        if let grid = groups.grid {
            let validation = validationSplit.map { $0.path == split.path } ?? false
            return (try gridClasses(validation: validation, group: grid).classes, 0, 0)
        }
        if groups.position != nil, split.positions == nil {
            throw DatasetError.missingGroup(path: split.path, group: "position", file: "positions.npy")
        }
        if groups.velocity != nil, split.velocities == nil {
            throw DatasetError.missingGroup(path: split.path, group: "velocity", file: "velocities.npy")
        }
        var encoder = HitEncoder(groups: groups)
        let k = encoder.inputCount
        var out = [Int32](repeating: 0, count: split.count * k)
        var clampedPositions = 0, clampedVelocities = 0
        var onset = 0
        let tickValues = vocabulary.ixToTick
        // Ticks at the position group's resolution.
        let groupPPQ = groups.position?.ppq ?? ppq
        func rescaled(_ ticks: Int) -> Int { ppq == groupPPQ ? ticks : ticks * groupPPQ / ppq }
        out.withUnsafeMutableBufferPointer { o in
            for e in 0..<split.count {
                let note = split.events[2 * e], tick = split.events[2 * e + 1]
                onset += tickValues[Int(tick)]
                var tickInBar = 0, barTicks = 1, bin: Int32 = 0
                if let positions = split.positions, groups.position != nil {
                    tickInBar = rescaled(Int(positions[2 * e]))
                    barTicks = rescaled(Int(positions[2 * e + 1]))
                }
                if let v = groups.velocity, let velocities = split.velocities {
                    let value = Int(velocities[e])
                    if let b = v.bin(of: value) {
                        bin = Int32(b)
                    } else {
                        bin = value < v.range.lowerBound ? 0 : Int32(v.bins.count - 1)
                        clampedVelocities += 1
                    }
                }
                // Onsets and bar lengths are rescaled like positions (the lookback compares them).
                if encoder.encode(note: note, tick: tick, onset: rescaled(onset), tickInBar: tickInBar, barTicks: barTicks,
                                  velocityBin: bin, into: UnsafeMutableBufferPointer(rebasing: o[(e * k)..<(e * k + k)])) {
                    clampedPositions += 1
                }
            }
        }
        return (out, clampedPositions, clampedVelocities)
    }
}
