// How two vocabularies differ, and a short list of numbers, for error messages.
import DrummerCore

/// Describes how two vocabularies differ, for error messages; nil when equal.
package func vocabularyDifference(_ a: Vocabulary, _ b: Vocabulary, aName: String, bName: String) -> String? {
    var parts: [String] = []
    func compare(_ x: [Int], _ y: [Int], _ table: String) {
        guard x != y else { return }
        let onlyX = Set(x).subtracting(y).sorted(), onlyY = Set(y).subtracting(x).sorted()
        var s = "\(table): \(aName) has \(x.count) entries, \(bName) \(y.count)"
        if !onlyX.isEmpty { s += "; only in \(aName): \(list(onlyX))" }
        if !onlyY.isEmpty { s += "; only in \(bName): \(list(onlyY))" }
        if onlyX.isEmpty && onlyY.isEmpty, let i = zip(x, y).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            s += "; same values in a different order (first difference at index \(i): \(x[i]) vs \(y[i]))"
        }
        parts.append(s)
    }
    compare(a.ixToNote, b.ixToNote, "ix_to_note")
    compare(a.ixToTick, b.ixToTick, "ix_to_tick")
    return parts.isEmpty ? nil : parts.joined(separator: "; ")
}

package func list(_ v: [Int], limit: Int = 12) -> String {
    let head = v.prefix(limit).map(String.init).joined(separator: ", ")
    return v.count > limit ? "\(head), … (\(v.count) in all)" : head
}
