// The class matrix a run reads: one column per input group, one row per step (a grid
// model's, TrainingData+Grid.swift) or per hit (the 2017 layout's: note index, tick index).

import DrummerCore
import Foundation

extension TrainingData {
    /// The class matrix of `split` for `groups` (`groups.shape(hidden:).inputGroups.count` columns
    /// per row).
    public func classes(_ split: DatasetSplit, for groups: ModelGroups) throws -> (classes: [Int32], rows: Int) {
        precondition(groups.vocabulary == vocabulary, "classes(for:) takes groups over this dataset's vocabulary")
        if let grid = groups.grid {
            let validation = validationSplit.map { $0.path == split.path } ?? false
            let classes = try gridClasses(validation: validation, group: grid).classes
            return (classes, classes.count / grid.inputGroups.count)
        }
        // The 2017 layout: events.npy's (note, tick) pairs as they are.
        return (Array(split.events.prefix(2 * split.count)), split.count)
    }
}
