// Dataset directories: convert-midi output, the original's one-hot X.npy with
// pickled tables, fingerprints, and an error naming the file for every inconsistency.
import DrummerCore
import Encode
import Foundation
import XCTest
@testable import Checkpoints
@testable import Train
import FileOutput
@testable import TrainRun

final class TrainingDataTests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws { root = try RunFixture.temporaryDirectory("data") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    /// A protocol-2 pickle of a list of small ints, as Python's pickle.dump writes it:
    /// PROTO 2, EMPTY_LIST, BINPUT 0, MARK, BININT1 × n, APPENDS, STOP.
    func pickle(_ values: [UInt8]) -> Data {
        var d = Data([0x80, 0x02, 0x5D, 0x71, 0x00, 0x28])
        for v in values { d.append(contentsOf: [0x4B, v]) }
        d.append(contentsOf: [0x65, 0x2E])
        return d
    }

    /// One-hot rows of `events` (flat pairs) over N notes and K ticks.
    func oneHot(_ events: [Int32], notes: Int, ticks: Int) -> [Float] {
        let v = notes + ticks
        var x = [Float](repeating: 0, count: events.count / 2 * v)
        for e in 0..<(events.count / 2) {
            x[e * v + Int(events[2 * e])] = 1
            x[e * v + notes + Int(events[2 * e + 1])] = 1
        }
        return x
    }

    func writeOriginal(_ dir: URL, x: [Float], rows: Int, width: Int) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try NPY.write(float32: x, shape: [rows, width], to: dir.appendingPathComponent("X.npy").path)
        try pickle([36, 38, 42, 46]).write(to: dir.appendingPathComponent("ix_to_note.p"))
        try pickle([0, 12, 24, 48, 96]).write(to: dir.appendingPathComponent("ix_to_tick.p"))
    }

    func testConvertMidiLayoutWithValidation() throws {
        let events = RunFixture.events(count: 50), val = RunFixture.events(count: 12, seed: 2)
        try RunFixture.writeDataset(root, events: events, validation: val)
        let d = try TrainingData.load(path: root.path)
        XCTAssertEqual(d.events, events)
        XCTAssertEqual(d.validation, val)
        XCTAssertEqual(d.vocabulary, RunFixture.vocabulary)
        XCTAssertEqual(d.eventCount, 50)
        XCTAssertEqual(d.fingerprint.count, 64)
        XCTAssertEqual(d.fingerprint, try TrainingData(path: "x", vocabulary: RunFixture.vocabulary, events: events,
                                                       validation: val, source: "x").fingerprint)
        XCTAssertNotEqual(d.fingerprint, try TrainingData(path: "x", vocabulary: RunFixture.vocabulary, events: events,
                                                          validation: nil, source: "x").fingerprint)
    }

    func testOriginalOneHotWithPicklesGivesTheSameSequenceAndFingerprint() throws {
        let events = RunFixture.events(count: 40)
        try writeOriginal(root, x: oneHot(events, notes: 4, ticks: 5), rows: 40, width: 9)
        let d = try TrainingData.load(path: root.path)
        XCTAssertEqual(d.events, events)
        XCTAssertEqual(d.vocabulary, RunFixture.vocabulary)
        XCTAssertNil(d.validation)
        let other = root.appendingPathComponent("npy")
        try RunFixture.writeDataset(other, events: events)
        XCTAssertEqual(try TrainingData.load(path: other.path).fingerprint, d.fingerprint)
    }

    func testOneHotInOtherDtypesAndWithVocabJSON() throws {
        let events = RunFixture.events(count: 10)
        let x = oneHot(events, notes: 4, ticks: 5)
        // float64 one-hot (numpy's default dtype) with vocab.json instead of pickles.
        var file = try NPY.header(dtype: .float64, shape: [10, 9])
        for v in x { withUnsafeBytes(of: Double(v).bitPattern.littleEndian) { file.append(contentsOf: $0) } }
        try file.write(to: root.appendingPathComponent("X.npy"))
        try JSONOutput.encode(RunFixture.vocabulary).write(to: root.appendingPathComponent("vocab.json"))
        XCTAssertEqual(try TrainingData.load(path: root.path).events, events)
    }

    func testBadOneHotRowsAreNamed() throws {
        let events = RunFixture.events(count: 6)
        let good = oneHot(events, notes: 4, ticks: 5)
        let cases: [(String, (inout [Float]) -> Void)] = [
            ("row 2: more than one note column is set (1 and 3)", { $0[2 * 9 + 3] = 1 }),
            ("row 1: no note column is set", { x in for j in 0..<4 { x[9 + j] = 0 } }),
            ("row 4: no tick column is set", { x in for j in 4..<9 { x[4 * 9 + j] = 0 } }),
            ("row 3, column 5: value 0.5", { $0[3 * 9 + 5] = 0.5 }),
            ("row 0, column 8: value nan", { $0[8] = .nan }),
            ("row 5: more than one tick column is set", { x in x[5 * 9 + 4] = 1; x[5 * 9 + 5] = 1 }),
        ]
        for (message, damage) in cases {
            var x = good
            damage(&x)
            try writeOriginal(root, x: x, rows: 6, width: 9)
            assertThrows([root.appendingPathComponent("X.npy").path, message]) { try TrainingData.load(path: root.path) }
        }
        try writeOriginal(root, x: Array(good.prefix(6 * 8)), rows: 6, width: 8)
        assertThrows(["X.npy", "shape [6, 8] is not [events, 9] (4 notes + 5 ticks"]) { try TrainingData.load(path: root.path) }
    }

    func testInconsistentDatasetsAreClearErrors() throws {
        assertThrows(["no such dataset directory"]) { try TrainingData.load(path: root.appendingPathComponent("none").path) }
        assertThrows(["no vocabulary: expected vocab.json"]) { try TrainingData.load(path: root.path) }
        try JSONOutput.encode(RunFixture.vocabulary).write(to: root.appendingPathComponent("vocab.json"))
        assertThrows(["no events: expected events.npy"]) { try TrainingData.load(path: root.path) }

        let npy = root.appendingPathComponent("events.npy").path
        try NPY.write(int32: [0, 0, 4, 1, 0, 0], shape: [3, 2], to: npy)
        assertThrows([npy, "event 1: note index 4 is outside the vocabulary's 4 notes"]) { try TrainingData.load(path: root.path) }
        try NPY.write(int32: [0, 0, 1, -1], shape: [2, 2], to: npy)
        assertThrows([npy, "event 1: tick index -1"]) { try TrainingData.load(path: root.path) }
        try NPY.write(int32: [0, 0, 1], shape: [3, 1], to: npy)
        assertThrows([npy, "shape [3, 1] is not [events, 2]"]) { try TrainingData.load(path: root.path) }
        try NPY.write(float32: [0, 0, 1, 1], shape: [2, 2], to: npy)
        assertThrows([npy, "dtype <f4 is not an integer type"]) { try TrainingData.load(path: root.path) }
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: npy))
        assertThrows([npy]) { try TrainingData.load(path: root.path) }

        try Data("{\"ix_to_note\": [36, 36], \"ix_to_tick\": [0]}".utf8).write(to: root.appendingPathComponent("vocab.json"))
        assertThrows(["vocab.json", "duplicates"]) { try TrainingData.load(path: root.path) }
        try FileManager.default.removeItem(at: root.appendingPathComponent("vocab.json"))
        try pickle([36]).write(to: root.appendingPathComponent("ix_to_note.p"))
        assertThrows(["ix_to_tick.p", "missing"]) { try TrainingData.load(path: root.path) }
        try Data([0x80, 0x02, 0x5D, 0x28, 0x4B]).write(to: root.appendingPathComponent("ix_to_tick.p"))
        assertThrows(["ix_to_tick.p"]) { try TrainingData.load(path: root.path) }
    }

    /// manifest.json's files tile each split's events: an entry it cannot read, a list cut short
    /// or hits moved are errors naming the manifest, not rows quietly left to no file.
    func testManifestFilesMustTileTheSplits() throws {
        try RunFixture.writeDataset(root, events: RunFixture.events(count: 20), validation: RunFixture.events(count: 6))
        let manifest = root.appendingPathComponent("manifest.json")
        func write(_ files: [[String: Any]]) throws {
            try JSONSerialization.data(withJSONObject: ["settings": ["ppq": 480], "files": files]).write(to: manifest)
        }
        func file(_ path: String, _ split: String, _ offset: Any, _ hits: Any) -> [String: Any] {
            ["path": path, "split": split, "offset": offset, "hits": hits, "meter": "4/4"]
        }
        let good = [file("a.mid", "training", 0, 12), file("b.mid", "training", 12, 8), file("v.mid", "validation", 0, 6)]
        try write(good)
        XCTAssertEqual(try TrainingData.load(path: root.path).files.count, 3)
        let path = manifest.path
        for (files, message) in [
            (Array(good.dropFirst(1)), "file b.mid: its 8 hits start at 12 in the training split's events.npy, not at 0, at the split's start"),
            ([good[0], good[2]], "the training files' hits add up to 12, but the training split's events.npy holds 20"),
            ([file("a.mid", "training", 0, 13), good[1], good[2]],
             "file b.mid: its 8 hits start at 12 in the training split's events.npy, not at 13, where a.mid's 13 hits from 0 end"),
            ([good[0], good[1], file("v.mid", "validation", 0, 5)], "the validation files' hits add up to 5, but the validation split's events.npy holds 6"),
            ([good[0], file("b.mid", "training", 12, -8), good[2]], "file b.mid: hits is -8, a count (0 or more)"),
            ([good[0], file("b.mid", "training", 12, "x"), good[2]], "files[1].hits is missing or not a number"),
            ([good[0], good[1], file("v.mid", "test", 0, 6)], "files[2].split is \"test\", expected training or validation"),
        ] {
            try write(files)
            assertThrows([path, message]) { try TrainingData.load(path: root.path) }
        }
        try Data(#"{"files": 3}"#.utf8).write(to: manifest)
        assertThrows([path, "files is not a list"]) { try TrainingData.load(path: root.path) }
    }

    /// A file whose deltas add up past what a MIDI file spans is refused naming it (the grid and
    /// the figures count steps and bars over the span); a delta alone past it is no vocabulary.
    func testAFileSpanningMoreThanAMIDIFileCanIsRefused() throws {
        let v = try Vocabulary(ixToNote: [36, 38], ixToTick: [0, Int(Int32.max)])
        try RunFixture.writeDataset(root, events: [0, 0, 1, 1, 0, 1, 1, 0], vocabulary: v)
        let manifest = root.appendingPathComponent("manifest.json")
        try JSONSerialization.data(withJSONObject: ["settings": ["ppq": 480], "files": [
            ["path": "a.mid", "split": "training", "offset": 0, "hits": 2, "meter": "4/4"],
            ["path": "b.mid", "split": "training", "offset": 2, "hits": 2, "meter": "4/4"]]]).write(to: manifest)
        XCTAssertEqual(try TrainingData.load(path: root.path).files.count, 2, "one delta of 2^31 − 1 each: within")
        try JSONSerialization.data(withJSONObject: ["settings": ["ppq": 480], "files": [
            ["path": "a.mid", "split": "training", "offset": 0, "hits": 4, "meter": "4/4"]]]).write(to: manifest)
        assertThrows([root.path, "file a.mid: its hits span 4294967294 ticks, more than a file can (2147483647)"]) {
            try TrainingData.load(path: root.path)
        }
        XCTAssertThrowsError(try Vocabulary(ixToNote: [36], ixToTick: [0, Int(Int32.max) + 1]))
    }

    func testValidationWithAnotherVocabularyIsRefused() throws {
        try RunFixture.writeDataset(root, events: RunFixture.events(count: 20))
        let v = try Vocabulary(ixToNote: [36, 38, 42, 46], ixToTick: [0, 12, 24, 48, 95])
        try RunFixture.writeDataset(root.appendingPathComponent("validation"), events: RunFixture.events(count: 8), vocabulary: v)
        assertThrows(["validation", "vocabulary differs", "only in validation/: 95"]) { try TrainingData.load(path: root.path) }
    }

    func testTooShortForTheUnrollIsAClearError() throws {
        try RunFixture.writeDataset(root, events: RunFixture.events(count: 20))
        var o = RunFixture.options(data: root, checkpoints: root.appendingPathComponent("c"), steps: 1)
        o.unroll = 30
        assertThrows([root.path, "too few"]) { try TrainingRun(options: o, reporter: LineSink().reporter) }
    }
}
