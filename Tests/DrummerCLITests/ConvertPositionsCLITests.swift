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
        let expected: [String: (velocities: [Int32], positions: [Int32])] = [
            "a.mid": ([110, 64, 127, 9], [0, 1440, 720, 1440, 0, 1440, 720, 1440]),
            "b.mid": ([100, 50, 101, 7], [0, 1920, 720, 1920, 1440, 1920, 240, 1920]),
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
            XCTAssertEqual(velocities.shape, [events.shape[0]], "\(split) velocities.npy: one per row of events.npy")
            XCTAssertEqual(positions.shape, [events.shape[0], 2], "\(split) positions.npy: two per row of events.npy")
            let want = try XCTUnwrap(expected[path])
            XCTAssertEqual(hits, want.velocities.count, path)
            XCTAssertEqual(Array(velocities.values[offset..<(offset + hits)]), want.velocities, path)
            XCTAssertEqual(Array(positions.values[(2 * offset)..<(2 * offset + 2 * hits)]), want.positions, path)
        }
        let outputs = try XCTUnwrap(m["outputs"] as? [String: [Int]])
        XCTAssertNotNil(outputs["validation/positions.npy"])
        XCTAssertNotNil(outputs["velocities.npy"])
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
