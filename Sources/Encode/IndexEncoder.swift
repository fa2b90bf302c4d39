// Building a vocabulary's tables from the values a corpus holds; the lookup itself is
// DrummerCore's VocabularyIndex.
import DrummerCore

typealias IndexEncoder = VocabularyIndex

extension VocabularyIndex {
    /// The distinct values of `values`, ascending (sort and drop repeats: no hashing).
    static func sortedUnique(_ values: [Int]) -> [Int] {
        var sorted = values.sorted()
        var w = 0
        for r in sorted.indices where r == 0 || sorted[r] != sorted[w - 1] {
            sorted[w] = sorted[r]
            w += 1
        }
        sorted.removeLast(sorted.count - w)
        return sorted
    }
}
