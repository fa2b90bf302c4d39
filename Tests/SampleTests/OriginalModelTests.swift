// The original 2017 project's pretrained model (vendored in Tests/Fixtures/rnn-drummer):
// Wx.bin, Wy.bin and vocab.json (as model.json) load as a model directory and
// sample drums whose note histogram is close to demo.mid's, which that model
// generated, and much closer than the uniform random baseline's.
import XCTest
import Foundation
import DrummerCore
import MIDIParse
@testable import Sample
import ModelFiles

enum SharedFixtures {
    static var rnnDrummer: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tests/Fixtures/rnn-drummer")
            .standardizedFileURL
    }

    /// A temporary model directory holding the original's files; skips when absent.
    static func originalModelDirectory() throws -> URL {
        let src = rnnDrummer
        guard FileManager.default.fileExists(atPath: src.appendingPathComponent("Wx.bin").path) else {
            throw VendoredFixtureMissing()
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("original-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (a, b) in [("Wx.bin", "Wx.bin"), ("Wy.bin", "Wy.bin"), ("vocab.json", "model.json")] {
            try FileManager.default.copyItem(at: src.appendingPathComponent(a), to: dir.appendingPathComponent(b))
        }
        return dir
    }
}

/// Jensen–Shannon divergence in bits between two histograms over the same support
/// (0 = identical, 1 = disjoint).
func jensenShannonBits(_ a: [Int], _ b: [Int]) -> Double {
    let sa = Double(a.reduce(0, +)), sb = Double(b.reduce(0, +))
    var js = 0.0
    for (x, y) in zip(a, b) {
        let p = Double(x) / sa, q = Double(y) / sb, m = (p + q) / 2
        if p > 0 { js += 0.5 * p * log2(p / m) }
        if q > 0 { js += 0.5 * q * log2(q / m) }
    }
    return js
}

final class OriginalModelTests: XCTestCase {
    func testJensenShannonReference() {
        XCTAssertEqual(jensenShannonBits([1, 0], [0, 1]), 1, accuracy: 1e-12)
        XCTAssertEqual(jensenShannonBits([3, 5, 2], [6, 10, 4]), 0, accuracy: 1e-12)
        // p = (1/2, 1/2), q = (1, 0): m = (3/4, 1/4); JS = ½·KL(p‖m) + ½·KL(q‖m).
        let want = 0.5 * (0.5 * log2(0.5 / 0.75) + 0.5 * log2(0.5 / 0.25)) + 0.5 * log2(1 / 0.75)
        XCTAssertEqual(jensenShannonBits([1, 1], [1, 0]), want, accuracy: 1e-12)
    }

    func testPretrainedModelSamplesDrumsCloseToDemo() throws {
        let dir = try SharedFixtures.originalModelDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = try ModelDirectory.load(path: dir.path)
        let vocab = model.vocabulary
        XCTAssertEqual(model.shape, ModelShape(notes: 17, ticks: 209, hidden: 200))

        // demo.mid: the original wrote its notes on channel index 10.
        let demo = try MIDIFile.read(path: SharedFixtures.rnnDrummer.appendingPathComponent("demo.mid").path).file
        let demoHits = demo.hits(channel: 10)
        XCTAssertGreaterThan(demoHits.count, 100)
        var demoNotes = [Int](repeating: 0, count: vocab.notes)
        for h in demoHits {
            let i = try XCTUnwrap(VocabularyIndex(vocab).note(Int(h.note)), "demo.mid note \(h.note) not in the vocabulary")
            demoNotes[i] += 1
        }

        let sampler = try Sampler(model: model)
        var modelNotes = [Int](repeating: 0, count: vocab.notes)
        var randomNotes = modelNotes
        var modelTicks = [Int](repeating: 0, count: vocab.ticks)
        for seed in 1...10 as ClosedRange<UInt64> {
            var rng = SeededRNG(seed: seed)
            for e in try sampler.generate(count: 1000, rng: &rng).map(\.event) {
                modelNotes[e.note] += 1
                modelTicks[e.tick] += 1
            }
            var r2 = SeededRNG(seed: seed)
            // The original's baseline: notes uniform over the vocabulary.
            for _ in 0..<1000 { randomNotes[r2.index(below: vocab.notes)] += 1 }
        }
        let jsModel = jensenShannonBits(modelNotes, demoNotes)
        let jsRandom = jensenShannonBits(randomNotes, demoNotes)
        print(String(format: "note-histogram JS divergence vs demo.mid (%d hits), bits: model %.4f, random %.4f, ratio %.3f",
                     demoHits.count, jsModel, jsRandom, jsModel / jsRandom))
        XCTAssertLessThan(jsModel, 0.5 * jsRandom)
        XCTAssertLessThan(jsModel, 0.1)

        // Ticks: the original wrote onsets one tick late for tick 0, so compare with
        // ticks 0 and 1 merged into one bin.
        var demoTicks = [Int](repeating: 0, count: vocab.ticks)
        var last = 0
        for h in demoHits {
            let d = h.tick - last
            last = h.tick
            if let i = VocabularyIndex(vocab).tick(d) { demoTicks[i] += 1 }
        }
        func merged(_ t: [Int]) -> [Int] { [t[0] + t[1]] + t[2...] }
        let jsTicks = jensenShannonBits(merged(modelTicks), merged(demoTicks))
        let uniformTicks = [Int](repeating: 1, count: vocab.ticks)
        let jsTicksRandom = jensenShannonBits(merged(uniformTicks), merged(demoTicks))
        print(String(format: "tick-histogram JS divergence vs demo.mid, bits: model %.4f, uniform %.4f", jsTicks, jsTicksRandom))
        XCTAssertLessThan(jsTicks, 0.5 * jsTicksRandom)
    }
}
