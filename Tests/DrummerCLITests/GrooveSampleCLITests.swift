// `drummer sample` on groove models (position and velocity groups), end to end: exactly -n
// notes per file, velocities in the file and in --json, --velocity, --meter (default: the
// model's), primers with time signatures and velocities, and their errors. The model
// directories are written by hand (model.json format version 2 with "groups"), and the
// files read back with TinyMIDI.
import Foundation
import XCTest

/// A groove model directory written byte by byte.
struct GrooveModelFile {
    var notes: [Int]
    var ticks: [Int]
    var hidden: Int
    var binary = false
    var slots = 16
    var ticksPerSlot = 120
    var meter = "4/4"
    var bins: [ClosedRange<Int>]
    var histogram: [Int]
    /// Filled by `echo` or `random`.
    var wx: [Float] = []
    var wy: [Float] = []

    var N: Int { notes.count }
    var K: Int { ticks.count }
    var B: Int { bins.count }
    var bits: Int {
        var b = 1
        while 1 << b < slots { b += 1 }
        return b
    }
    var positionRows: Int { binary ? 2 * bits : slots }
    /// Input width, output width.
    var I: Int { N + K + positionRows + B }
    var O: Int { N + K + B }

    /// Weights from a fixed LCG in ±2, plus `noteBias` on note 0's logit and `zeroBias` on tick
    /// value 0's (so that repeating note 0 at an onset is very likely without the mask).
    mutating func random(seed: UInt32 = 777, noteBias: Float = 0, zeroBias: Float = 0) {
        var state = seed
        func next() -> Float {
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int(state >> 8) % 2001 - 1000) / 500
        }
        wx = (0..<((I + hidden + 1) * 4 * hidden)).map { _ in next() }
        wy = (0..<((hidden + 1) * O)).map { _ in next() }
        wy[hidden * O] += noteBias
        if let z = ticks.firstIndex(of: 0) { wy[hidden * O + N + z] += zeroBias }
    }

    /// The echo model (as in SampleTests' TestModels.positionEcho): note index = the slot of
    /// the event fed, velocity bin = the bin fed (2 bins); hidden = bits + 1, notes one per slot.
    mutating func echo() {
        precondition(N == slots && B == 2)
        hidden = bits + 1
        let H = hidden, G = 4 * H
        wx = [Float](repeating: 0, count: (I + H + 1) * G)
        wy = [Float](repeating: 0, count: (H + 1) * O)
        for k in 0..<H {
            wx[(I + H) * G + k] = -30
            wx[(I + H) * G + H + k] = 30
            wx[(I + H) * G + 2 * H + k] = 30
            wx[(I + H) * G + 3 * H + k] = -20
        }
        let position = N + K, velocity = N + K + positionRows
        for k in 0..<bits {
            if binary {
                wx[(position + 2 * k + 1) * G + 3 * H + k] += 40
            } else {
                for s in 0..<slots where s >> k & 1 == 1 { wx[(position + s) * G + 3 * H + k] += 40 }
            }
            for n in 0..<N { wy[k * O + n] = n >> k & 1 == 1 ? 20 : -20 }
        }
        wx[(velocity + 1) * G + 3 * H + bits] += 40
        wy[bits * O + N + K] = -20
        wy[bits * O + N + K + 1] = 20
    }

    func write(to dir: URL) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        func bytes(_ v: [Float]) -> Data {
            var d = Data()
            for x in v { withUnsafeBytes(of: x.bitPattern.littleEndian) { d.append(contentsOf: $0) } }
            return d
        }
        try bytes(wx).write(to: dir.appendingPathComponent("Wx.bin"))
        try bytes(wy).write(to: dir.appendingPathComponent("Wy.bin"))
        func entry(_ name: String, _ size: Int) -> String { "{\"name\": \"\(name)\", \"size\": \(size)}" }
        let positionInputs = binary ? (0..<bits).map { entry("position_bit\($0)", 2) } : [entry("position", slots)]
        let inputs = [entry("note", N), entry("tick", K)] + positionInputs + [entry("velocity", B)]
        let outputs = [entry("note", N), entry("tick", K), entry("velocity", B)]
        try """
            {"format": "drummer-model", "format_version": 2, "ix_to_note": \(notes), "ix_to_tick": \(ticks),
             "hidden_size": \(hidden), "Wx_shape": [\(I + hidden + 1), \(4 * hidden)], "Wy_shape": [\(hidden + 1), \(O)],
             "groups": {"inputs": [\(inputs.joined(separator: ", "))], "outputs": [\(outputs.joined(separator: ", "))],
                        "position": {"encoding": "\(binary ? "binary" : "onehot")", "slots": \(slots),
                                     "ticks_per_slot": \(ticksPerSlot), "ppq": 480, "meter": "\(meter)"},
                        "velocity": {"bins": \(bins.map { [$0.lowerBound, $0.upperBound] }), "histogram": \(histogram)}}}
            """.write(to: dir.appendingPathComponent("model.json"), atomically: true, encoding: .utf8)
    }
}

final class GrooveSampleCLITests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("groove-sample-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    /// Velocities 21...127 seen in training (none below), uneven counts.
    private static let histogram: [Int] = (1...127).map { $0 <= 20 ? 0 : $0 * 31 % 7 + 1 }

    /// A random groove model (one-hot position, 4/4, 4 velocity bins over 21...127) biased so that
    /// note 0 at delta 0 dominates.
    private func randomModel(_ name: String = "groove", binary: Bool = false) throws -> URL {
        var m = GrooveModelFile(notes: [36, 38, 42, 46], ticks: [0, 60, 120, 240, 480], hidden: 6, binary: binary,
                                bins: [21...50, 51...80, 81...100, 101...127], histogram: Self.histogram)
        m.random(noteBias: 4, zeroBias: 10)
        let dir = tmp.appendingPathComponent(name)
        try m.write(to: dir)
        return dir
    }

    /// The echo model in `meter` (16 slots of 120 ticks: bars of up to 1920 ticks).
    private func echoModel(_ name: String = "echo", meter: String, binary: Bool = false) throws -> URL {
        var m = GrooveModelFile(notes: Array(40..<56), ticks: [0, 90, 120, 240, 480, 1000], hidden: 0, binary: binary,
                                meter: meter, bins: [1...63, 64...127], histogram: [Int](repeating: 1, count: 127))
        m.echo()
        let dir = tmp.appendingPathComponent(name)
        try m.write(to: dir)
        return dir
    }

    private func files(_ r: CLIResult) throws -> [[String: Any]] {
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return try XCTUnwrap(obj?["files"] as? [[String: Any]], r.stdout)
    }

    private func midi(_ path: String) throws -> TinyMIDI {
        try XCTUnwrap(TinyMIDI([UInt8](Data(contentsOf: URL(fileURLWithPath: path)))), path)
    }

    /// The notes of each onset (a new onset at every non-zero delta).
    private func onsets(_ events: [[Int]]) -> [[Int]] {
        var out: [[Int]] = []
        for (i, e) in events.enumerated() {
            if i == 0 || e[1] != 0 { out.append([]) }
            out[out.count - 1].append(e[0])
        }
        return out
    }

    func testGrooveModelWritesExactlyNNotesPerFileReproducibly() throws {
        for binary in [false, true] {
            let model = try randomModel(binary ? "binary" : "onehot", binary: binary)
            let out = tmp.appendingPathComponent("g.mid").path
            let r = try CLI.run(["sample", model.path, "-n", "500", "--count", "3", "--seed", "1", "-o", out, "--json"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let report = try files(r)
            XCTAssertEqual(report.count, 3)
            for (k, file) in report.enumerated() {
                let path = tmp.appendingPathComponent("g-\(k + 1).mid").path
                XCTAssertEqual(file["path"] as? String, path)
                XCTAssertEqual(file["seed"] as? Int, 1 + k)
                let events = try XCTUnwrap(file["events"] as? [[Int]])
                let velocities = try XCTUnwrap(file["velocities"] as? [Int])
                let m = try midi(path)
                XCTAssertEqual(events.count, 500, path)
                XCTAssertEqual(velocities.count, 500, path)
                XCTAssertEqual(m.noteOns.count, 500, path)
                XCTAssertEqual(m.events, events, path)
                XCTAssertEqual(m.noteOns.map(\.velocity), velocities, path)
                XCTAssertTrue(velocities.allSatisfy { (21...127).contains($0) }, path)
                XCTAssertGreaterThan(Set(velocities).count, 20, path)
                XCTAssertEqual(m.timeSignatures.map { [$0.tick, $0.numerator, $0.denominator] }, [[0, 4, 4]])
                // Delta 0 is common, yet no onset holds a note twice.
                XCTAssertGreaterThan(events.filter { $0[1] == 0 }.count, 250, path)
                XCTAssertTrue(onsets(events).allSatisfy { Set($0).count == $0.count }, path)
            }
            // The same seed writes the same bytes; the status lines say 500 notes each.
            let again = tmp.appendingPathComponent("h.mid").path
            let s = try CLI.run(["sample", model.path, "-n", "500", "--count", "3", "--seed", "1", "-o", again])
            XCTAssertEqual(s.status, 0, s.stderr)
            for k in 1...3 {
                XCTAssertEqual(try Data(contentsOf: tmp.appendingPathComponent("g-\(k).mid")),
                               try Data(contentsOf: tmp.appendingPathComponent("h-\(k).mid")))
                XCTAssertTrue(s.stdout.contains("wrote \(tmp.appendingPathComponent("h-\(k).mid").path): 500 notes, seed \(k)"), s.stdout)
            }
            XCTAssertFalse(s.stdout.contains("written once"), s.stdout)
        }
    }

    /// --velocity N writes N for every note and changes nothing else.
    func testVelocityOptionForcesEveryNote() throws {
        let model = try randomModel()
        let a = tmp.appendingPathComponent("a.mid").path, b = tmp.appendingPathComponent("b.mid").path
        let sampled = try CLI.run(["sample", model.path, "-n", "300", "--seed", "4", "-o", a, "--json"])
        let forced = try CLI.run(["sample", model.path, "-n", "300", "--seed", "4", "--velocity", "77", "-o", b, "--json"])
        XCTAssertEqual(sampled.status, 0, sampled.stderr)
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertEqual(try files(forced)[0]["velocities"] as? [Int], [Int](repeating: 77, count: 300))
        XCTAssertEqual(try midi(b).noteOns.map(\.velocity), [Int](repeating: 77, count: 300))
        XCTAssertEqual(try files(forced)[0]["events"] as? [[Int]], try files(sampled)[0]["events"] as? [[Int]])
        XCTAssertEqual(try midi(a).noteOns.map(\.velocity), try files(sampled)[0]["velocities"] as? [Int])
    }

    /// With the echo model, note i + 1 names the slot of onset i in its bar: the bars are the
    /// model's meter (model.json) unless --meter says otherwise, and the file says which.
    func testMeterDefaultIsTheModelsAndMeterOptionChangesPositions() throws {
        for binary in [false, true] {
            let model = try echoModel(binary ? "echo-binary" : "echo", meter: "3/4", binary: binary)
            for (option, bar, signature) in [([String](), 1440, [0, 3, 4]), (["--meter", "4/4"], 1920, [0, 4, 4]),
                                             (["--meter", "7/8"], 1680, [0, 7, 8]), (["--meter", "6/8"], 1440, [0, 6, 8])] {
                let label = "binary \(binary) \(option)"
                let out = tmp.appendingPathComponent("m.mid").path
                let r = try CLI.run(["sample", model.path, "-n", "300", "--seed", "2", "-o", out, "--json"] + option)
                XCTAssertEqual(r.status, 0, r.stderr)
                let events = try XCTUnwrap(try files(r)[0]["events"] as? [[Int]])
                XCTAssertEqual(events.count, 300, label)
                var onset = 0, slots = Set<Int>()
                for (i, e) in events.enumerated() {
                    XCTAssertEqual(e[0] - 40, onset % bar / 120, "\(label): note \(i) after onset \(onset)")
                    slots.insert(onset % bar / 120)
                    onset += e[1]
                }
                XCTAssertEqual(slots, Set(0..<(bar / 120)), label)
                XCTAssertEqual(try midi(out).timeSignatures.map { [$0.tick, $0.numerator, $0.denominator] }, [signature], label)
            }
        }
    }

    func testMeterErrorsAreClear() throws {
        let groove = try randomModel()
        let original = tmp.appendingPathComponent("original")
        try FileManager.default.createDirectory(at: original, withIntermediateDirectories: true)
        try Data(count: (9 + 2 + 1) * 8 * 4).write(to: original.appendingPathComponent("Wx.bin"))
        try Data(count: 3 * 9 * 4).write(to: original.appendingPathComponent("Wy.bin"))
        try #"{"ix_to_note": [36, 38, 42, 46], "ix_to_tick": [0, 60, 120, 240, 480], "hidden_size": 2}"#
            .write(to: original.appendingPathComponent("model.json"), atomically: true, encoding: .utf8)
        let out = tmp.appendingPathComponent("x.mid").path
        func fails(_ args: [String], _ message: String, status: Int32, file: StaticString = #filePath, line: UInt = #line) throws {
            let r = try CLI.run(["sample"] + args + ["-n", "10", "-o", out])
            XCTAssertEqual(r.status, status, r.stderr, file: file, line: line)
            XCTAssertTrue(r.stderr.contains(message), "stderr: \(r.stderr)", file: file, line: line)
            XCTAssertFalse(r.stderr.contains("Fatal error"), file: file, line: line)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out), file: file, line: line)
        }
        for bad in ["7/3", "3", "0/4", "4/0", "x/4", "65/4", "4/4/4"] {
            try fails([groove.path, "--meter", bad], "--meter must be N/D with D a power of two (e.g. 4/4, 6/8), got \"\(bad)\"", status: 64)
        }
        try fails([groove.path, "--meter", "5/4"],
                  "meter 5/4 has bars longer than the model knows (16 position slots, bars of at most 1920 ticks)", status: 1)
        try fails([original.path, "--meter", "4/4"],
                  "--meter needs a model with the position group (\(original.path) has inputs note, tick)", status: 64)
        // The longest meter the model knows is accepted.
        XCTAssertEqual(try CLI.run(["sample", groove.path, "-n", "10", "--meter", "8/8", "-o", out]).status, 0)
    }

    /// A primer's positions come from its own time signature and its velocities become bins:
    /// the echo model's first note names the slot the primer ended on and its velocity bin is
    /// the primer's last; the file starts at that place in the bar.
    func testPrimerSuppliesPositionAndVelocity() throws {
        let model = try echoModel(meter: "3/4")
        for (velocity, range) in [(UInt8(40), 1...63), (100, 64...127)] {
            // 3/4: the last hit, at 2040, is 600 ticks (slot 5) into the second bar.
            let primer = tmp.appendingPathComponent("p\(velocity).mid")
            try TinySMF.drums([(0, 40, 100), (480, 43, 100), (2040, 41, velocity)], meter: (3, 2)).write(to: primer)
            let out = tmp.appendingPathComponent("o.mid").path
            let r = try CLI.run(["sample", model.path, "--primer", primer.path, "-n", "100", "--seed", "3", "-o", out, "--json"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let file = try files(r)[0]
            let events = try XCTUnwrap(file["events"] as? [[Int]])
            XCTAssertEqual(events.first?[0], 45)
            XCTAssertTrue(try XCTUnwrap(file["velocities"] as? [Int]).allSatisfy { range.contains($0) }, "\(velocity)")
            XCTAssertEqual(try midi(out).noteOns.first?.tick, 600 + events[0][1])
            var onset = 600
            for (i, e) in events.enumerated() {
                XCTAssertEqual(e[0] - 40, onset % 1440 / 120, "note \(i) after onset \(onset)")
                onset += e[1]
            }
        }
    }

    /// Without --meter, generation carries on in the meter of the primer's last bar (2/4 on a
    /// 3/4 model: bars of 960 ticks, and the file says 2/4); --meter still wins.
    func testGenerationCarriesOnInThePrimersMeter() throws {
        let model = try echoModel(meter: "3/4")
        let primer = tmp.appendingPathComponent("two-four.mid")
        // 2/4: the last hit, at 1200, is 240 ticks (slot 2) into the second bar.
        try TinySMF.drums([(0, 40, 100), (480, 43, 100), (1200, 42, 100)], meter: (2, 2)).write(to: primer)
        for (option, bar, signature) in [([String](), 960, [0, 2, 4]), (["--meter", "3/4"], 1440, [0, 3, 4])] {
            let out = tmp.appendingPathComponent("o.mid").path
            let r = try CLI.run(["sample", model.path, "--primer", primer.path, "-n", "200", "--seed", "4", "-o", out, "--json"] + option)
            XCTAssertEqual(r.status, 0, r.stderr)
            let events = try XCTUnwrap(try files(r)[0]["events"] as? [[Int]])
            XCTAssertEqual(events.first?[0], 42, "\(option): the echo of the primer's last slot")
            var onset = 240
            for (i, e) in events.enumerated() {
                XCTAssertEqual(e[0] - 40, onset % bar / 120, "\(option): note \(i) after onset \(onset)")
                onset += e[1]
            }
            XCTAssertEqual(try midi(out).timeSignatures.map { [$0.tick, $0.numerator, $0.denominator] }, [signature], "\(option)")
        }
    }

    func testPrimerErrorsNameTheFileAndTheProblem() throws {
        let model = try randomModel()
        let out = tmp.appendingPathComponent("x.mid").path
        let soft = tmp.appendingPathComponent("soft.mid")
        try TinySMF.drums([(0, 36, 100), (240, 38, 10), (480, 42, 90)]).write(to: soft)
        let long = tmp.appendingPathComponent("long.mid")
        try TinySMF.drums([(0, 36, 100), (480, 38, 90)], meter: (5, 2)).write(to: long)
        for (primer, message) in [
            (soft.path, "\(soft.path): primer hit 1 has velocity 10, outside the range 21...127 the model learned"),
            (long.path, "\(long.path): the primer is in 5/4, whose bars (2400 ticks) are longer than the model knows (1920 ticks)"),
        ] {
            let r = try CLI.run(["sample", model.path, "--primer", primer, "-n", "10", "-o", out])
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains(message), r.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        }
    }

    /// convert-midi → train → export → sample on a 3/4 corpus with velocities: the model's
    /// groups (model.json) carry the meter 3/4 and the dataset's PPQ, and sampling uses both:
    /// the bars are 3/4 by default, the file is written at the model's PPQ (its tick values'
    /// unit) and a primer is read at it (a primer of quarter notes maps onto the tick value of
    /// a quarter note exactly).
    func testTrainedGrooveModelSamplesInItsMeterAndPPQ() throws {
        let corpus = tmp.appendingPathComponent("corpus")
        try FileManager.default.createDirectory(at: corpus, withIntermediateDirectories: true)
        for f in 0..<4 {
            var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
            for bar in 0..<8 {
                let t = bar * 1440
                hits += [(t, 36, UInt8(90 + f)), (t + 480, 38, 70), (t + 960, 38, 60), (t, 42, 50), (t + 720, 42, UInt8(40 + bar))]
            }
            try TinySMF.drums(hits, meter: (3, 2)).write(to: corpus.appendingPathComponent("w\(f).mid"))
        }
        let primer = tmp.appendingPathComponent("primer.mid")
        try TinySMF.drums([(0, 36, 90), (480, 38, 70), (960, 38, 60)], meter: (3, 2)).write(to: primer)
        for ppq in [480, 96] {
            let data = tmp.appendingPathComponent("data\(ppq)"), ck = tmp.appendingPathComponent("ck\(ppq)")
            let model = tmp.appendingPathComponent("model\(ppq)")
            let c = try CLI.run(["convert-midi", corpus.path, "-o", data.path, "--ppq", String(ppq)])
            XCTAssertEqual(c.status, 0, c.stderr)
            let t = try CLI.run(["train", "--recipe", "original", "--data", data.path, "--checkpoint-dir", ck.path, "--hidden", "8", "--unroll", "8",
                                 "--steps", "20", "--log-every", "10"])
            XCTAssertEqual(t.status, 0, t.stderr)
            let e = try CLI.run(["export", ck.appendingPathComponent("ckpt-20.h5").path, "-o", model.path])
            XCTAssertEqual(e.status, 0, e.stderr)
            let manifest = try XCTUnwrap(JSONSerialization.jsonObject(
                with: Data(contentsOf: model.appendingPathComponent("model.json"))) as? [String: Any])
            let ticks = try XCTUnwrap(manifest["ix_to_tick"] as? [Int])
            XCTAssertEqual(ticks, [0, ppq / 2, ppq], "eighth-note steps at \(ppq) PPQ")
            let groups = try XCTUnwrap(manifest["groups"] as? [String: Any])
            let position = try XCTUnwrap(groups["position"] as? [String: Any])
            XCTAssertEqual(position["meter"] as? String, "3/4")
            XCTAssertEqual(position["ppq"] as? Int, ppq)
            let bins = try XCTUnwrap((groups["velocity"] as? [String: Any])?["bins"] as? [[Int]])
            XCTAssertEqual(bins.first?.first, 40)
            XCTAssertEqual(bins.last?.last, 93)
            let out = tmp.appendingPathComponent("s\(ppq).mid").path
            let s = try CLI.run(["sample", model.path, "-n", "200", "--seed", "5", "-o", out, "--json"])
            XCTAssertEqual(s.status, 0, s.stderr)
            let file = try files(s)[0]
            let events = try XCTUnwrap(file["events"] as? [[Int]])
            XCTAssertEqual(events.count, 200)
            XCTAssertTrue(events.allSatisfy { ticks.contains($0[1]) }, "\(ppq)")
            XCTAssertTrue(try XCTUnwrap(file["velocities"] as? [Int]).allSatisfy { (40...93).contains($0) })
            let m = try midi(out)
            XCTAssertEqual(m.ppq, ppq)
            XCTAssertEqual(m.events, events)
            XCTAssertEqual(m.timeSignatures.map { [$0.tick, $0.numerator, $0.denominator] }, [[0, 3, 4]])
            let p = try CLI.run(["sample", model.path, "--primer", primer.path, "-n", "20", "--seed", "5",
                                 "-o", tmp.appendingPathComponent("p\(ppq).mid").path])
            XCTAssertEqual(p.status, 0, p.stderr)
            XCTAssertTrue(p.stdout.contains("primer \(primer.path): 3 hits (channel 10)\n"), "\(ppq): \(p.stdout)")
        }
    }
}
