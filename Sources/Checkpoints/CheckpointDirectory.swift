// Naming and pruning of `ckpt-<step>.h5` files in a checkpoint directory.
import Foundation

public struct CheckpointDirectory: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// `<dir>/ckpt-<step>.h5`.
    public func file(step: Int) -> String { (path as NSString).appendingPathComponent("ckpt-\(step).h5") }

    /// The checkpoints present, by step.
    public func list() -> [(step: Int, path: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("ckpt-"), name.hasSuffix(".h5") else { return nil }
            guard let step = Int(name.dropFirst(5).dropLast(3)), step >= 0 else { return nil }
            return (step, (path as NSString).appendingPathComponent(name))
        }.sorted { $0.0 < $1.0 }
    }

    /// Removes all but the last `keep` checkpoints, never removing the steps in
    /// `protect` (the best by validation loss). Returns the removed paths.
    @discardableResult
    public func prune(keep: Int, protect: Set<Int>) -> [String] {
        let all = list()
        guard all.count > keep else { return [] }
        var removed: [String] = []
        for (step, file) in all.dropLast(keep) where !protect.contains(step) {
            if (try? FileManager.default.removeItem(atPath: file)) != nil { removed.append(file) }
        }
        return removed
    }
}
