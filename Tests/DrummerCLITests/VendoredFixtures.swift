// The 2017 project's files the tests read are vendored in Tests/Fixtures/rnn-drummer (see
// ORIGIN.md there): a missing one is a broken checkout, so the test fails instead of skipping.
import Foundation

struct VendoredFixtureMissing: Error, CustomStringConvertible {
    var description: String { "Tests/Fixtures/rnn-drummer is missing or incomplete: it is part of the repository" }
}

/// The 2017 project's pretrained model (Tests/Fixtures/rnn-drummer) as a model directory.
enum OriginalModel {
    static var fixtures: URL { CLI.repoRoot.appendingPathComponent("Tests/Fixtures/rnn-drummer") }

    /// Writes the model directory `dir` (Wx.bin, Wy.bin, and vocab.json as model.json) and returns it.
    @discardableResult
    static func write(to dir: URL) throws -> URL {
        guard FileManager.default.fileExists(atPath: fixtures.appendingPathComponent("Wx.bin").path) else {
            throw VendoredFixtureMissing()
        }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (a, b) in [("Wx.bin", "Wx.bin"), ("Wy.bin", "Wy.bin"), ("vocab.json", "model.json")] {
            try FileManager.default.copyItem(at: fixtures.appendingPathComponent(a), to: dir.appendingPathComponent(b))
        }
        return dir
    }
}
