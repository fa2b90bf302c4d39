// Small datasets and runs for the run-layer tests (H, U tiny: each run takes milliseconds).
import DrummerCore
import Encode
import Foundation
import XCTest
@testable import Checkpoints
@testable import Train
@testable import TrainRun
import FileOutput

enum RunFixture {
    static let vocabulary = (try? Vocabulary(ixToNote: [36, 38, 42, 46], ixToTick: [0, 12, 24, 48, 96]))!

    /// A deterministic sequence over `vocabulary`: a 4-event pattern with some tick noise.
    static func events(count: Int, seed: UInt64 = 7) -> [Int32] {
        var rng = SeededRNG(seed: seed)
        let pattern: [(Int32, Int32)] = [(0, 2), (2, 1), (1, 3), (2, 1)]
        var out: [Int32] = []
        for i in 0..<count {
            let (n, t) = pattern[i % 4]
            out.append(n)
            out.append(rng.index(below: 10) == 0 ? 4 : t)
        }
        return out
    }

    static func temporaryDirectory(_ name: String = "run") throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("drummer-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes events.npy + vocab.json (and validation/ when given) into `dir`.
    static func writeDataset(_ dir: URL, events: [Int32], vocabulary: Vocabulary = vocabulary,
                             validation: [Int32]? = nil) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try NPY.write(int32: events, shape: [events.count / 2, 2], to: dir.appendingPathComponent("events.npy").path)
        try JSONOutput.encode(vocabulary).write(to: dir.appendingPathComponent("vocab.json"))
        if let validation {
            try writeDataset(dir.appendingPathComponent("validation"), events: validation, vocabulary: vocabulary)
        }
    }

    /// Per-hit (ticks from the bar line, bar length) pairs of `count` hits: eighth notes
    /// through 4/4 bars of 1920 ticks (480 PPQ), starting `offset` eighths into the bar.
    static func positions(count: Int, offset: Int = 0) -> [Int32] {
        (0..<count).flatMap { [Int32(((offset + $0) % 8) * 240), 1920] }
    }

    /// Per-hit velocities 1...127: accents on the beat, ghost notes between, some noise.
    static func velocities(count: Int, seed: UInt64 = 5) -> [Int32] {
        var rng = SeededRNG(seed: seed)
        let pattern: [Int32] = [112, 38, 84, 52]
        return (0..<count).map { pattern[$0 % 4] + Int32(rng.index(below: 9)) - 4 }
    }

    /// A convert-midi-style dataset with velocities.npy and positions.npy beside events.npy in
    /// each split, and a manifest.json saying ppq 480, --quantize 240 (so a model's position
    /// group has 8 slots of an eighth note).
    static func writeGrooveDataset(_ dir: URL, count: Int, validation: Int? = nil) throws {
        try writeDataset(dir, events: events(count: count), validation: validation.map { events(count: $0, seed: 3) })
        try NPY.write(int32: velocities(count: count), shape: [count], to: dir.appendingPathComponent("velocities.npy").path)
        try NPY.write(int32: positions(count: count), shape: [count, 2], to: dir.appendingPathComponent("positions.npy").path)
        if let validation {
            let v = dir.appendingPathComponent("validation")
            try NPY.write(int32: velocities(count: validation, seed: 8), shape: [validation],
                          to: v.appendingPathComponent("velocities.npy").path)
            try NPY.write(int32: positions(count: validation, offset: 3), shape: [validation, 2],
                          to: v.appendingPathComponent("positions.npy").path)
        }
        try Data(#"{"settings": {"ppq": 480, "quantize": 240}}"#.utf8).write(to: dir.appendingPathComponent("manifest.json"))
    }

    /// Options of a tiny run: H = 6, U = 8, logging and evaluation off the critical path.
    static func options(data: URL, checkpoints: URL, steps: Int?, batch: Int = 1,
                        optimizer: OptimizerKind = .sgd, lr: Float = 0.5) -> RunOptions {
        RunOptions(data: data.path, hidden: 6, unroll: 8, batchSize: batch, optimizer: optimizer,
                   learningRate: lr, seed: 42, steps: steps, checkpointEvery: 5,
                   checkpointDirectory: checkpoints.path, keep: 100, logEvery: 5, evalEvery: 5)
    }
}

/// Collects a run's output lines.
final class LineSink: @unchecked Sendable {
    private(set) var lines: [String] = []
    var reporter: RunReporter { RunReporter(line: { self.lines.append($0) }) }
    var text: String { lines.joined(separator: "\n") }
}

extension XCTestCase {
    /// Runs `body` expecting it to throw an error whose description contains every fragment.
    func assertThrows<T>(_ fragments: [String], file: StaticString = #filePath, line: UInt = #line,
                         _ body: () throws -> T) {
        do {
            _ = try body()
            XCTFail("expected an error containing \(fragments)", file: file, line: line)
        } catch {
            let text = "\(error)"
            for f in fragments {
                XCTAssertTrue(text.contains(f), "error \"\(text)\" lacks \"\(f)\"", file: file, line: line)
            }
        }
    }
}
