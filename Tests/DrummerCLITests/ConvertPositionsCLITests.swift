// convert-midi's per-hit velocities.npy [N] and positions.npy [N, 2] (ticks from the bar line,
// bar length), row for row with events.npy in both splits, and the manifest's files[].meter.
// The arrays are read here by a minimal .npy reader of its own.
import Foundation
import XCTest

final class ConvertPositionsCLITests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("convert-positions") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    /// Shape and int32 values of a little-endian int32 .npy file (version 1).
    func npyInt32(_ url: URL) throws -> (shape: [Int], values: [Int32]) {
        let d = try Data(contentsOf: url)
        XCTAssertEqual(Array(d.prefix(6)), [0x93] + Array("NUMPY".utf8), url.path)
        let headerLength = Int(d[8]) | Int(d[9]) << 8
        let header = String(decoding: d[10..<(10 + headerLength)], as: UTF8.self)
        XCTAssertTrue(header.contains("'descr': '<i4'"), header)
        let shapeText = try XCTUnwrap(header.range(of: #"\([0-9, ]*\)"#, options: .regularExpression).map { header[$0] })
        let shape = shapeText.dropFirst().dropLast().split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let body = d[(10 + headerLength)...]
        var values: [Int32] = []
        var i = body.startIndex
        while i + 4 <= body.endIndex {
            values.append(Int32(bitPattern: UInt32(body[i]) | UInt32(body[i + 1]) << 8 | UInt32(body[i + 2]) << 16 | UInt32(body[i + 3]) << 24))
            i += 4
        }
        return (shape, values)
    }

    func testVelocitiesPositionsAndMetersRowForRow() throws {
        let src = tmp.appendingPathComponent("src")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        // a.mid: 6/8 (bars of 1440 at 480 PPQ). b.mid: no time signature (4/4 bars of 1920), 96 PPQ,
        // its second hit at 143 source ticks = 715 at 480 PPQ, quantized to 720 by --quantize 30.
        // Both have the same notes and deltas (0, 720, 720, 720), so the validation split keeps
        // every hit of whichever file it gets.
        let a: [(tick: Int, note: UInt8, velocity: UInt8)] = [(0, 36, 110), (720, 38, 64), (1440, 36, 127), (2160, 42, 9)]
        let b: [(tick: Int, note: UInt8, velocity: UInt8)] = [(0, 36, 100), (143, 38, 50), (288, 36, 101), (432, 42, 7)]
        try TinySMF.drums(a, meter: (6, 3)).write(to: src.appendingPathComponent("a.mid"))
        try TinySMF.drums(b, ppq: 96).write(to: src.appendingPathComponent("b.mid"))
        let expected: [String: (velocities: [Int32], positions: [Int32], onsets: [Int32])] = [
            "a.mid": ([110, 64, 127, 9], [0, 1440, 720, 1440, 0, 1440, 720, 1440], [0, 720, 1440, 2160]),
            "b.mid": ([100, 50, 101, 7], [0, 1920, 720, 1920, 1440, 1920, 240, 1920], [0, 720, 1440, 2160]),
        ]
        let out = tmp.appendingPathComponent("data")
        let r = try CLI.run(["convert-midi", src.path, "-o", out.path, "--quantize", "30", "--validation-fraction", "0.5"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let m = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("manifest.json"))) as? [String: Any])
        let files = try XCTUnwrap(m["files"] as? [[String: Any]])
        XCTAssertEqual(files.count, 2)
        XCTAssertEqual(Set(files.compactMap { $0["split"] as? String }), ["training", "validation"], "one file in each split")
        let formats = try XCTUnwrap(m["formats"] as? [String: String])
        XCTAssertTrue(formats["positions.npy"]?.contains("ticks from the bar line") == true, "\(formats)")
        for f in files {
            let path = try XCTUnwrap(f["path"] as? String), split = try XCTUnwrap(f["split"] as? String)
            let offset = try XCTUnwrap(f["offset"] as? Int), hits = try XCTUnwrap(f["hits"] as? Int)
            XCTAssertEqual(f["meter"] as? String, path == "a.mid" ? "6/8" : "4/4", path)
            let dir = split == "training" ? out : out.appendingPathComponent("validation")
            let events = try npyInt32(dir.appendingPathComponent("events.npy"))
            let velocities = try npyInt32(dir.appendingPathComponent("velocities.npy"))
            let positions = try npyInt32(dir.appendingPathComponent("positions.npy"))
            let onsets = try npyInt32(dir.appendingPathComponent("onsets.npy"))
            XCTAssertEqual(onsets.shape, [events.shape[0]], "\(split) onsets.npy: one per row of events.npy")
            XCTAssertEqual(velocities.shape, [events.shape[0]], "\(split) velocities.npy: one per row of events.npy")
            XCTAssertEqual(positions.shape, [events.shape[0], 2], "\(split) positions.npy: two per row of events.npy")
            let want = try XCTUnwrap(expected[path])
            XCTAssertEqual(hits, want.velocities.count, path)
            XCTAssertEqual(Array(velocities.values[offset..<(offset + hits)]), want.velocities, path)
            XCTAssertEqual(Array(positions.values[(2 * offset)..<(2 * offset + 2 * hits)]), want.positions, path)
            XCTAssertEqual(Array(onsets.values[offset..<(offset + hits)]), want.onsets, path)
        }
        let outputs = try XCTUnwrap(m["outputs"] as? [String: [Int]])
        XCTAssertNotNil(outputs["validation/positions.npy"])
        XCTAssertEqual(outputs["validation/onsets.npy"], [4])
        XCTAssertTrue(formats["onsets.npy"]?.contains("ticks from its file's start") == true, "\(formats)")
        XCTAssertNotNil(outputs["velocities.npy"])
    }

    /// A validation file whose hits convert-midi leaves out (a note or a delta the training
    /// split does not have) keeps its timeline for the grid: onsets.npy holds each kept hit's
    /// ticks from the file's start, so its bars stay on the bar lines. On the fixture, the
    /// New Orleans beat (with hits left out) is read whole: its 16th steps equal those of the file
    /// encoded alone, where nothing is left out (850 rows, a start row and 849 steps; the fill
    /// 15 rows). Without onsets.npy (a dataset of an earlier version) the deltas place it,
    /// off the bar lines, and it is left out, said so.
    func testAValidationFileWithHitsLeftOutKeepsItsBars() throws {
        let src = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src")
        let data = tmp.appendingPathComponent("data")
        let c = try CLI.run(["convert-midi", src.path, "-o", data.path, "--quantize", "30", "--onset-order", "note", "--validation-fraction", "0.3"])
        XCTAssertEqual(c.status, 0, c.stderr)
        XCTAssertTrue(c.stdout.contains("Validation: 3 files, 2851 hits kept, 13 dropped (out of vocabulary)"), c.stdout)
        var alone = 0
        for name in ["session1/100_neworleans-secondline_94_beat_4-4.mid", "session1/103_funk_95_fill_4-4.mid"] {
            let rows = tmp.appendingPathComponent("rows.npy").path
            let e = try CLI.run(["encode", "groove", "--data", src.appendingPathComponent("drummer1/" + name).path, "--quantize", "30", "-o", rows])
            XCTAssertEqual(e.status, 0, e.stderr)
            alone += try npyInt32(URL(fileURLWithPath: rows)).shape[0] - 1
        }
        XCTAssertEqual(alone, 849 + 14)
        let exact = try CLI.run(["train", "--data", data.path, "--steps", "0", "--checkpoint-dir", tmp.appendingPathComponent("ck").path])
        XCTAssertEqual(exact.status, 0, exact.stderr)
        XCTAssertTrue(exact.stdout.contains("grid validation: 2 files in 4/4, \(alone) 16th steps, "), exact.stdout)
        XCTAssertTrue(exact.stdout.contains("1 file left out (first: drummer1/session2/111_rock-prog_110_beat_5-4.mid: meter 5/4)"), exact.stdout)
        // An onsets.npy whose onsets go back within a file is refused by training and stats alike.
        let onsetsURL = data.appendingPathComponent("onsets.npy")
        let original = try Data(contentsOf: onsetsURL)
        var corrupt = original
        let body = corrupt.count - 4 * (try npyInt32(onsetsURL).shape[0])
        let row4 = try npyInt32(onsetsURL).values[4]
        withUnsafeBytes(of: (row4 - 1).littleEndian) { corrupt.replaceSubrange((body + 20)..<(body + 24), with: $0) }
        try corrupt.write(to: onsetsURL)
        let trainBad = try CLI.run(["train", "--data", data.path, "--steps", "0", "--checkpoint-dir", tmp.appendingPathComponent("ck-bad").path])
        XCTAssertEqual(trainBad.status, 1)
        XCTAssertTrue(trainBad.stderr.contains("onsets.npy: hit 5: onset \(row4 - 1) lies before the one before it, \(row4)"), trainBad.stderr)
        let statsBad = try CLI.run(["stats", src.appendingPathComponent("drummer1/session1/102_funk_95_beat_4-4.mid").path, "--reference", data.path])
        XCTAssertEqual(statsBad.status, 1)
        XCTAssertTrue(statsBad.stderr.contains("onsets.npy: row 5 holds onset \(row4 - 1), before the row before it (\(row4))"), statsBad.stderr)
        try original.write(to: onsetsURL)
        try FileManager.default.removeItem(at: data.appendingPathComponent("validation/onsets.npy"))
        try FileManager.default.removeItem(at: data.appendingPathComponent("onsets.npy"))
        // The onsets are part of what a grid run trained on: a resume on the data without them
        // (its validation read otherwise) is refused as other data.
        let resumed = try CLI.run(["train", "--resume", tmp.appendingPathComponent("ck/ckpt-0.h5").path, "--steps", "1"])
        XCTAssertEqual(resumed.status, 1, resumed.stderr)
        XCTAssertTrue(resumed.stderr.contains("contents differ from the data"), resumed.stderr)
        let old = try CLI.run(["train", "--data", data.path, "--steps", "0", "--checkpoint-dir", tmp.appendingPathComponent("ck-old").path])
        XCTAssertEqual(old.status, 0, old.stderr)
        XCTAssertTrue(old.stdout.contains("grid validation: 1 file in 4/4, 14 16th steps, "), old.stdout)
        XCTAssertTrue(old.stdout.contains("2 files left out (first: drummer1/session1/100_neworleans-secondline_94_beat_4-4.mid: hit 861 lies in a bar off the 4/4 bar lines before it (an empty bar of another length lies between, or a delta was clamped or a hit left out: convert the dataset again))"), old.stdout)
    }

    /// --onset-order note: the hits of one onset by note number, velocities and positions
    /// moving with them; recorded in the manifest.
    func testOnsetOrderNote() throws {
        let src = tmp.appendingPathComponent("src")
        try FileManager.default.createDirectory(at: src, withIntermediateDirectories: true)
        try TinySMF.drums([(0, 42, 80), (5, 36, 110), (480, 46, 70), (490, 38, 100)]).write(to: src.appendingPathComponent("a.mid"))
        let out = tmp.appendingPathComponent("data")
        let r = try CLI.run(["convert-midi", src.path, "-o", out.path, "--quantize", "30", "--onset-order", "note"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let vocab = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("vocab.json"))) as? [String: [Int]])
        let events = try npyInt32(out.appendingPathComponent("events.npy")).values
        let notes = stride(from: 0, to: events.count, by: 2).map { vocab["ix_to_note"]![Int(events[$0])] }
        let deltas = stride(from: 1, to: events.count, by: 2).map { vocab["ix_to_tick"]![Int(events[$0])] }
        XCTAssertEqual(notes, [36, 42, 38, 46])
        XCTAssertEqual(deltas, [0, 0, 480, 0])
        XCTAssertEqual(try npyInt32(out.appendingPathComponent("velocities.npy")).values, [110, 80, 100, 70])
        XCTAssertEqual(try npyInt32(out.appendingPathComponent("positions.npy")).values, [0, 1920, 0, 1920, 480, 1920, 480, 1920])
        let m = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("manifest.json"))) as? [String: Any])
        XCTAssertEqual((m["settings"] as? [String: Any])?["onset_order"] as? String, "note")
        let bad = try CLI.run(["convert-midi", src.path, "-o", out.path, "--onset-order", "pitch"])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.contains("'pitch'"), bad.stderr)
    }
}
