import XCTest
@testable import Encode
import DrummerCore
import MIDIParse
import FileOutput

final class DatasetConverterTests: XCTestCase {
    /// A folder with two drum files (channel 9), one nested, one bad file and one non-MIDI file.
    private func makeCorpus() throws -> URL {
        let dir = try makeTemporaryDirectory(self)
        let sub = dir.appendingPathComponent("b-sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        try Data(MIDIBytes.notes(ppq: 480, [(0, 36, 9), (240, 42, 9), (480, 38, 9)])).write(to: dir.appendingPathComponent("a.mid"))
        try Data(MIDIBytes.notes(ppq: 96, [(12, 36, 9), (36, 42, 9)])).write(to: sub.appendingPathComponent("c.MIDI"))
        try Data("not midi".utf8).write(to: dir.appendingPathComponent("bad.mid"))
        try Data("readme".utf8).write(to: dir.appendingPathComponent("notes.txt"))
        return dir
    }

    func testSourceFilesAreRecursiveSortedAndFiltered() throws {
        let dir = try makeCorpus()
        XCTAssertEqual(try MIDIDatasetConverter.sourceFiles(in: dir.path), ["a.mid", "b-sub/c.MIDI", "bad.mid"])
        XCTAssertThrowsError(try MIDIDatasetConverter.sourceFiles(in: dir.appendingPathComponent("a.mid").path))
    }

    func testConvertWritesEventsVocabAndManifest() throws {
        let dir = try makeCorpus()
        let out = dir.appendingPathComponent("out").path
        var settings = ConversionSettings()
        settings.oneHot = true
        let report = try MIDIDatasetConverter.convert(directory: dir.path, output: out, settings: settings)

        // a.mid: deltas 0, 240, 240. c.MIDI (96 PPQ -> ×5): onsets 60, 180; previous last hit 480
        // is on a beat, so it waits 480: deltas 540, 120.
        let vocab = try JSONDecoder().decode(Vocabulary.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/vocab.json")))
        XCTAssertEqual(vocab.ixToNote, [36, 38, 42])
        XCTAssertEqual(vocab.ixToTick, [0, 120, 240, 540])
        let events = try NPY.read(path: out + "/events.npy")
        XCTAssertEqual(events.shape, [5, 2])
        XCTAssertEqual(try events.int32Values(), [0, 0, 2, 2, 1, 2, 0, 3, 2, 1])
        let x = try NPY.read(path: out + "/X.npy")
        XCTAssertEqual(x.shape, [5, 7])
        let xv = try x.float32Values()
        for row in 0..<5 {
            let ones = (0..<7).filter { xv[row * 7 + $0] == 1 }
            let ev = try events.int32Values()
            XCTAssertEqual(ones, [Int(ev[2 * row]), 3 + Int(ev[2 * row + 1])])
            XCTAssertEqual(xv[(row * 7)..<(row * 7 + 7)].reduce(0, +), 2)
        }

        let m = report.manifest
        XCTAssertEqual(m.source, dir.path)
        XCTAssertEqual(m.files.map(\.path), ["a.mid", "b-sub/c.MIDI"])
        XCTAssertEqual(m.files.map(\.hits), [3, 2])
        XCTAssertEqual(m.files.map(\.offset), [0, 3])
        XCTAssertEqual(m.skipped.map(\.path), ["bad.mid"])
        XCTAssertEqual(m.skipped.first?.error, "not a MIDI file: starts with \"not \" (6E 6F 74 20), expected \"MThd\" or \"RIFF\"")
        XCTAssertEqual(m.skipped.first?.kind, "not MIDI")
        XCTAssertEqual(report.counts, ConversionCounts(files: 3, clean: 2, recovered: 0, skipped: ["not MIDI": 1]))
        XCTAssertEqual(report.counts.line, "3 files: 2 read cleanly, 0 recovered, 1 skipped (1 not MIDI)")
        XCTAssertEqual(m.statistics.hits, 5)
        XCTAssertEqual(m.statistics.files, 2)
        XCTAssertEqual(m.statistics.minHitsPerFile, 2)
        XCTAssertEqual(m.statistics.maxHitsPerFile, 3)
        XCTAssertEqual(m.statistics.meanHitsPerFile, 2.5, accuracy: 1e-9)
        XCTAssertEqual(report.skipped.count, 1)
        let onDisk = try JSONDecoder().decode(ConversionManifest.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))
        XCTAssertEqual(onDisk, m)
    }

    func testRunningTwiceGivesIdenticalBytes() throws {
        let dir = try makeCorpus()
        var settings = ConversionSettings()
        settings.validationFraction = 0.5
        _ = try MIDIDatasetConverter.convert(directory: dir.path, output: dir.path + "/o1", settings: settings)
        _ = try MIDIDatasetConverter.convert(directory: dir.path, output: dir.path + "/o2", settings: settings)
        for name in ["events.npy", "vocab.json", "manifest.json"] {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/o1/" + name)),
                           try Data(contentsOf: URL(fileURLWithPath: dir.path + "/o2/" + name)), name)
        }
    }

    /// Every file convert-midi writes (--onehot and validation/ included) is one the dataset
    /// directory kind owns: the two lists of names (the converter's outputs and
    /// DirectoryKind.dataset's, which lets a second convert-midi replace the first) agree.
    func testEverythingTheConverterWritesIsOwnedByTheDatasetDirectoryKind() throws {
        let dir = try makeCorpus()
        var settings = ConversionSettings()
        settings.validationFraction = 0.5
        settings.oneHot = true
        let out = dir.path + "/o"
        let m = try MIDIDatasetConverter.convert(directory: dir.path, output: out, settings: settings).manifest
        let written = try FileManager.default.subpathsOfDirectory(atPath: out).sorted()
        XCTAssertTrue(written.contains("X.npy") && written.contains("validation/positions.npy"), "\(written)")
        XCTAssertEqual(Set(m.outputs.keys), Set(written.filter { $0 != "validation" }))
        XCTAssertEqual(DirectoryKind.dataset.foreignEntries(in: out), [])
        // And a second conversion into it replaces it.
        _ = try MIDIDatasetConverter.convert(directory: dir.path, output: out, settings: settings)
    }

    func testStrictFailsAndNoHitsIsAnError() throws {
        let dir = try makeCorpus()
        let out = dir.appendingPathComponent("out").path
        var strict = ConversionSettings()
        strict.extraction.parseMode = .strict
        XCTAssertThrowsError(try MIDIDatasetConverter.convert(directory: dir.path, output: out, settings: strict)) { error in
            guard case ConversionError.badFiles(let lines, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(lines.count, 1)
            XCTAssertTrue(lines[0].hasSuffix("bad.mid: not a MIDI file: starts with \"not \" (6E 6F 74 20), expected \"MThd\" or \"RIFF\""), lines[0])
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))

        var settings = ConversionSettings()
        settings.extraction.channel = .index(3)
        XCTAssertThrowsError(try MIDIDatasetConverter.convert(directory: dir.path, output: out, settings: settings)) { error in
            // Each file that holds no hit on the selected channel is named.
            guard case .noHits(let d, let n, let split, let channel, let paths)? = error as? ConversionError else { return XCTFail("\(error)") }
            XCTAssertEqual(d, dir.path); XCTAssertEqual(n, 2); XCTAssertEqual(split, ""); XCTAssertEqual(channel, .index(3))
            XCTAssertEqual(paths.count, 2, "\(paths)")
            XCTAssertTrue("\(error)".contains(paths[0]), "\(error)")
        }
        let empty = dir.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        XCTAssertThrowsError(try MIDIDatasetConverter.convert(directory: empty.path, output: out, settings: ConversionSettings())) { error in
            XCTAssertEqual(error as? ConversionError, .noMIDIFiles(empty.path))
        }
    }

    func testMissingEndOfTrackIsRecoveredByDefaultAndRefusedWhenStrict() throws {
        let dir = try makeTemporaryDirectory(self)
        var bytes = try MIDIBytes.notes(ppq: 480, [(0, 36, 9), (10, 38, 9)])
        bytes.removeLast(4)  // drop the end-of-track event ...
        let len = bytes.count - 22
        bytes.replaceSubrange(18..<22, with: [UInt8(len >> 24), UInt8(len >> 16 & 0xFF), UInt8(len >> 8 & 0xFF), UInt8(len & 0xFF)])
        try Data(bytes).write(to: dir.appendingPathComponent("x.mid"))
        let out = dir.appendingPathComponent("out").path
        var strict = ConversionSettings()
        strict.extraction.parseMode = .strict
        XCTAssertThrowsError(try MIDIDatasetConverter.convert(directory: dir.path, output: out, settings: strict)) { error in
            XCTAssertEqual(error as? ConversionError, .badFiles(["\(dir.path)/x.mid: byte \(bytes.count): track ends without an end-of-track event, expected FF 2F 00"]))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        for mode in [MIDIParseMode.safe, .lenient] {
            var settings = ConversionSettings()
            settings.extraction.parseMode = mode
            let report = try MIDIDatasetConverter.convert(directory: dir.path, output: out, settings: settings)
            XCTAssertEqual(report.manifest.statistics.hits, 2)
            let warning = "byte \(bytes.count): track ends without an end-of-track event, expected FF 2F 00 (ended the track at the end of its chunk)"
            XCTAssertEqual(report.manifest.files.first?.warnings, [warning])
            XCTAssertEqual(report.manifest.recovered, [.init(path: "x.mid", warnings: [warning])])
            XCTAssertEqual(report.manifest.settings.parseMode, mode.rawValue)
            XCTAssertEqual(report.manifest.settings.lenient, mode == .lenient)
            XCTAssertEqual(report.warnings, ["\(dir.path)/x.mid: " + warning])
            XCTAssertEqual(report.counts.line, "1 file: 0 read cleanly, 1 recovered (warnings above), 0 skipped")
        }
    }

    func testValidationSplitUsesTrainingVocabularyAndDropsUnknownHits() throws {
        let dir = try makeTemporaryDirectory(self)
        // Find names on each side of the hash split for fraction 0.5.
        var names = (0..<40).map { "f\($0).mid" }
        let val = names.filter { MIDIDatasetConverter.isValidation($0, fraction: 0.5) }
        names = names.filter { !MIDIDatasetConverter.isValidation($0, fraction: 0.5) }
        let trainName = try XCTUnwrap(names.first), valName = try XCTUnwrap(val.first)
        try Data(MIDIBytes.notes(ppq: 480, [(0, 36, 9), (120, 38, 9), (240, 36, 9)])).write(to: dir.appendingPathComponent(trainName))
        // Validation: 36@0 (kept), 99@120 (note unknown), 38@130 (delta 10 unknown), 36@250 (kept).
        try Data(MIDIBytes.notes(ppq: 480, [(0, 36, 9), (120, 99, 9), (130, 38, 9), (250, 36, 9)])).write(to: dir.appendingPathComponent(valName))
        var settings = ConversionSettings()
        settings.validationFraction = 0.5
        let out = dir.appendingPathComponent("out").path
        let report = try MIDIDatasetConverter.convert(directory: dir.path, output: out, settings: settings)
        let v = try XCTUnwrap(report.manifest.validation)
        XCTAssertEqual(v.files, 1)
        XCTAssertEqual(v.hits, 2)
        XCTAssertEqual(v.droppedHits, 2)
        XCTAssertEqual(v.droppedNotes, ["99": 1])
        XCTAssertEqual(v.droppedTicks, ["10": 1])
        XCTAssertEqual(report.validationNotes, [
            "validation: dropped 1 hit(s) whose note is not in the training vocabulary: 99 (1)",
            "validation: dropped 1 hit(s) whose delta (ticks) is not in the training vocabulary: 10 (1)",
        ])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out + "/validation/vocab.json")),
                       try Data(contentsOf: URL(fileURLWithPath: out + "/vocab.json")))
        let events = try NPY.read(path: out + "/validation/events.npy")
        // Training vocabulary: notes [36, 38], ticks [0, 120]. Kept: (36, 0) and (36, 120).
        XCTAssertEqual(try events.int32Values(), [0, 0, 0, 1])
        XCTAssertEqual(report.manifest.files.first { $0.path == valName }?.split, "validation")
    }

    func testAFewGrooveFilesMatchTheReader() throws {
        let groove = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/corpus/groove")
        guard FileManager.default.fileExists(atPath: groove.path) else {
            throw XCTSkip("../shared/corpus/groove is absent; this test needs the Groove MIDI Dataset")
        }
        let all = try MIDIDatasetConverter.sourceFiles(in: groove.path)
        XCTAssertEqual(all.count, 1150)
        let dir = try makeTemporaryDirectory(self)
        var expected = 0
        for (i, rel) in all.prefix(5).enumerated() {
            let src = groove.appendingPathComponent(rel)
            try FileManager.default.copyItem(at: src, to: dir.appendingPathComponent("\(i).mid"))
            let file = try MIDIFile.read(path: src.path).file
            expected += file.hits(channel: file.hasNotes(onChannel: 9) ? 9 : nil).count
        }
        let report = try MIDIDatasetConverter.convert(directory: dir.path, output: dir.path + "/out", settings: ConversionSettings())
        XCTAssertEqual(report.manifest.statistics.hits, expected)
        XCTAssertTrue(report.manifest.skipped.isEmpty)
    }
}

final class ConverterScaleTests: XCTestCase {
    /// The fast manifest writer gives JSONEncoder's bytes, strings that need escaping included.
    func testManifestJSONEqualsJSONEncoder() throws {
        func file(_ i: Int, _ path: String, warnings: [String] = []) -> ConversionManifest.SourceFile {
            .init(path: path, split: i % 3 == 0 ? "validation" : "training", hits: i * 7, offset: i * 100, channel: i % 2 == 0 ? "9" : "all", meter: i % 5 == 0 ? "6/8" : "4/4",
                  warnings: warnings)
        }
        var files = (0..<2500).map { file($0, "dir/sub \($0)/groove-\($0).mid") }
        files[3] = file(3, "quote\"back\\slash/tab\tnew\nline\u{1}\u{1F}é😀.mid", warnings: ["byte 3: x (y)", "a \"b\""])
        files[4] = file(4, "w.mid", warnings: ["one"])
        let manifest = ConversionManifest(
            tool: "drummer convert-midi", version: "0.1.0", source: "some/dir",
            settings: .init(channel: "auto", ppq: 480, quantize: 30, maxDelta: nil, noteMap: "none", onehot: false,
                            validationFraction: 0.1, lenient: false, parseMode: "safe"),
            files: files, skipped: [.init(path: "bad.mid", error: "not a MIDI file", kind: "not MIDI")],
            recovered: [.init(path: "w.mid", warnings: ["one"])],
            statistics: .init(files: 3, hits: 10, uniqueNotes: 2, uniqueTicks: 3, minHitsPerFile: 1, maxHitsPerFile: 5,
                              meanHitsPerFile: 3.333, notesOutsideGMPercussion: ["22": 4]),
            validation: nil, outputs: ["events.npy": [10, 2], "vocab.json": []])
        let expected = try JSONOutput.encode(manifest)
        for threads in [1, 2, 5] {
            XCTAssertEqual(String(decoding: try manifest.encodedJSON(threads: threads), as: UTF8.self),
                           String(decoding: expected, as: UTF8.self), "threads \(threads)")
        }
        var empty = manifest
        empty.files = []
        XCTAssertEqual(try empty.encodedJSON(threads: 2), try JSONOutput.encode(empty))
    }

    /// Thread counts do not change a byte, whatever the file sizes and splits.
    func testConversionIsTheSameForAnyThreadCount() throws {
        let dir = try makeTemporaryDirectory(self)
        for i in 0..<60 {
            let hits = (0..<(1 + (i * 37) % 50)).map { (tick: $0 * (10 + i % 7), note: UInt8(35 + ($0 + i) % 12), channel: UInt8(9)) }
            try Data(MIDIBytes.notes(ppq: 96 + i, hits)).write(to: dir.appendingPathComponent("f\(i).mid"))
        }
        try Data("junk".utf8).write(to: dir.appendingPathComponent("junk.mid"))
        var settings = ConversionSettings()
        settings.validationFraction = 0.3
        settings.maxDelta = 500
        settings.oneHot = true
        var reference: [String: Data] = [:]
        for threads in [1, 2, 4, 16] {
            let out = dir.appendingPathComponent("out\(threads)").path
            let report = try MIDIDatasetConverter.convert(directory: dir.path, output: out, settings: settings, threads: threads)
            XCTAssertEqual(report.counts.line, "61 files: 60 read cleanly, 0 recovered, 1 skipped (1 not MIDI)")
            for name in ["events.npy", "X.npy", "vocab.json", "manifest.json", "validation/events.npy", "validation/X.npy"] {
                let data = try Data(contentsOf: URL(fileURLWithPath: out + "/" + name))
                if let r = reference[name] { XCTAssertEqual(data, r, "\(name) with \(threads) threads") } else { reference[name] = data }
            }
        }
    }

    /// The converter's compact path gives what gluing FileHits with HitSequence gives.
    func testCompactRecordsMatchHitSequence() throws {
        let groove = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("corpus/groove/drummer1/session1")
        let names = try FileManager.default.contentsOfDirectory(atPath: groove.path).filter { $0.hasSuffix(".mid") }.sorted().prefix(12)
        let dir = try makeTemporaryDirectory(self)
        var seq = HitSequence(ppq: 480, maxDelta: 960)
        var settings = ConversionSettings()
        settings.maxDelta = 960
        settings.extraction.quantize = 30
        for name in names {
            try FileManager.default.copyItem(at: groove.appendingPathComponent(name), to: dir.appendingPathComponent(name))
            seq.append(try FileHits.read(path: groove.appendingPathComponent(name).path, settings: settings.extraction))
        }
        let out = dir.appendingPathComponent("out").path
        _ = try MIDIDatasetConverter.convert(directory: dir.path, output: out, settings: settings)
        let vocab = try JSONDecoder().decode(Vocabulary.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/vocab.json")))
        XCTAssertEqual(vocab.ixToNote, IndexEncoder.sortedUnique(seq.notes))
        XCTAssertEqual(vocab.ixToTick, IndexEncoder.sortedUnique(seq.deltas))
        let rows = try NPY.read(path: out + "/events.npy").int32Values()
        XCTAssertEqual(rows.count, 2 * seq.count)
        for i in 0..<seq.count {
            XCTAssertEqual(vocab.ixToNote[Int(rows[2 * i])], seq.notes[i])
            XCTAssertEqual(vocab.ixToTick[Int(rows[2 * i + 1])], seq.deltas[i])
        }
    }

    func testSourcesListsEntriesThatCannotBeFilesAndSortsByUTF8() throws {
        let dir = try makeTemporaryDirectory(self)
        for name in ["b.mid", "a-c.mid", "é.mid", "Z.MIDI", "x.rmi", "readme.txt", ".mid"] {
            try Data().write(to: dir.appendingPathComponent(name))
        }
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("a/inner.mid"), withIntermediateDirectories: true)
        try Data().write(to: dir.appendingPathComponent("a/inner.mid/deep.mid"))
        let entries = try MIDIDatasetConverter.sources(in: dir.path)
        XCTAssertEqual(entries.map(\.path), ["Z.MIDI", "a-c.mid", "a/inner.mid", "a/inner.mid/deep.mid", "b.mid", "x.rmi", "é.mid"])
        XCTAssertEqual(entries.map(\.problem), [nil, nil, "not a regular file (a directory)", nil, nil, nil, nil])
        // Walked by several threads: the same list.
        for d in 0..<30 {
            let sub = dir.appendingPathComponent("t\(d % 5)/u\(d)")
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
            for f in 0..<(d % 4) { try Data().write(to: sub.appendingPathComponent("\(f).mid")) }
        }
        let one = try MIDIDatasetConverter.sources(in: dir.path, threads: 1)
        XCTAssertEqual(one.count, 7 + (0..<30).map { $0 % 4 }.reduce(0, +))
        for threads in [2, 3, 8] { XCTAssertEqual(try MIDIDatasetConverter.sources(in: dir.path, threads: threads), one) }
    }
}
