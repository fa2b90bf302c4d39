// `drummer humanize`: corpus performances snapped to 16ths and humanized by the shipped model
// come closer to the original performances' velocity and timing than the stiff beat does;
// every hit keeps its drum and stays near its place; bad input is refused.
import Foundation
import MIDIParse
import XCTest

final class HumanizeCLITests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws { root = try CLI.temporaryDirectory("humanize-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    static func hits(_ path: String, quantize: Int? = nil) throws -> FileHits {
        var s = HitExtractionSettings()
        s.ppq = 480
        s.quantize = quantize
        return try FileHits.read(path: path, settings: s)
    }

    /// Jensen–Shannon divergence (bits) of two histograms.
    static func js(_ a: [Int], _ b: [Int]) -> Double {
        let sa = Double(a.reduce(0, +)), sb = Double(b.reduce(0, +))
        var d = 0.0
        for (x, y) in zip(a, b) {
            let p = Double(x) / sa, q = Double(y) / sb, m = (p + q) / 2
            if p > 0 { d += 0.5 * p * log2(p / m) }
            if q > 0 { d += 0.5 * q * log2(q / m) }
        }
        return d
    }

    static func velocityHistogram(_ v: [Int]) -> [Int] {
        var h = [Int](repeating: 0, count: 16)
        for x in v { h[min(15, (x - 1) / 8)] += 1 }
        return h
    }

    /// Onsets' distance from the nearest 16th (120 ticks at 480 PPQ), to the nearest 64th note
    /// (30 ticks, the shipped model's tick resolution): −60, −30, 0, +30, +60.
    static func offsetHistogram(_ ticks: [Int]) -> [Int] {
        var h = [Int](repeating: 0, count: 5)
        for t in ticks {
            let off = t - Int((Double(t) / 120).rounded()) * 120
            h[min(4, max(0, Int((Double(off) / 30).rounded()) + 2))] += 1
        }
        return h
    }

    func testHumanizedBeatsComeCloserToThePerformances() throws {
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let dir = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer1/eval_session")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix("4-4.mid") }.sorted().prefix(8)
        XCTAssertEqual(files.count, 8)
        var original = (v: [Int](), t: [Int]()), human = original, stiff = original
        for (i, f) in files.enumerated() {
            let src = dir.appendingPathComponent(f).path, out = root.appendingPathComponent("h\(i).mid").path
            let r = try CLI.run(["humanize", src, "--quantize", "120", "--model", model, "--seed", "\(i + 1)", "-o", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            let o = try Self.hits(src), q = try Self.hits(src, quantize: 120), h = try Self.hits(out)
            // The stiff beat: the performance snapped to 16ths, one drum once per onset.
            var seen = Set<[Int]>(), s = (notes: [Int](), ticks: [Int]())
            for (n, t) in zip(q.notes, q.ticks) where seen.insert([n, t]).inserted { s.notes.append(n); s.ticks.append(t) }
            XCTAssertEqual(h.notes.sorted(), s.notes.sorted(), "\(f): every hit keeps its drum")
            // Each drum's hits stay in order, each within a 32nd note (the default window) of its 16th.
            for note in Set(s.notes) {
                let a = zip(h.notes, h.ticks).filter { $0.0 == note }.map(\.1)
                let b = zip(s.notes, s.ticks).filter { $0.0 == note }.map(\.1)
                XCTAssertEqual(a.count, b.count)
                for (x, y) in zip(a, b) { XCTAssertLessThanOrEqual(abs(x - y), 60, "\(f), note \(note)") }
            }
            original.v += o.velocities; original.t += o.ticks
            human.v += h.velocities; human.t += h.ticks
            stiff.v += [Int](repeating: 100, count: s.ticks.count); stiff.t += s.ticks
        }
        let jsVelocity = (human: Self.js(Self.velocityHistogram(human.v), Self.velocityHistogram(original.v)),
                          stiff: Self.js(Self.velocityHistogram(stiff.v), Self.velocityHistogram(original.v)))
        let jsOffset = (human: Self.js(Self.offsetHistogram(human.t), Self.offsetHistogram(original.t)),
                        stiff: Self.js(Self.offsetHistogram(stiff.t), Self.offsetHistogram(original.t)))
        print(String(format: "humanize, 8 corpus files snapped to 16ths: velocity JS %.3f bits (stiff %.3f), timing-offset JS %.3f bits (stiff %.3f)",
                     jsVelocity.human, jsVelocity.stiff, jsOffset.human, jsOffset.stiff))
        XCTAssertLessThan(jsVelocity.human, jsVelocity.stiff / 4, "velocities come close to the performances'")
        XCTAssertLessThan(jsOffset.human, jsOffset.stiff / 2, "timing comes close to the performances'")
    }

    /// A 64th-note snare roll (four hits in each 16th, 30 ticks apart): each 16th's offset is
    /// drawn on its own, so a 16th could land on the one before it; every hit is still written,
    /// in order, near its place, and the status line counts what the file holds.
    func testAFastRollKeepsEveryHit() throws {
        let roll = (0..<64).map { (tick: $0 * 30, note: UInt8(38), velocity: UInt8(90)) }
        let beat = root.appendingPathComponent("roll.mid")
        try TinySMF.drums(roll).write(to: beat)
        for seed in 1...4 {
            let out = root.appendingPathComponent("roll-\(seed).mid").path
            let r = try CLI.run(["humanize", beat.path, "--seed", "\(seed)", "-o", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("humanized \(beat.path): 64 hits"), r.stdout)
            let ticks = try Self.hits(out).ticks
            XCTAssertEqual(ticks.count, 64, "seed \(seed): \(ticks)")
            XCTAssertEqual(ticks, ticks.sorted(), "seed \(seed)")
            XCTAssertEqual(Set(ticks).count, 64, "seed \(seed): two hits at one onset")
            for (k, t) in ticks.enumerated() { XCTAssertLessThan(abs(t - k * 30), 120, "seed \(seed), hit \(k)") }
        }
    }

    /// A beat whose tempo changes (120, 90 from bar 2, 140 from bar 3): humanize keeps the
    /// changes where they were (--bpm plays one tempo throughout), and `sample --primer` of it
    /// plays at the tempo the primer ends in, 140.
    func testTempoChangesAreKept() throws {
        func tempo(_ tick: Int, _ bpm: Int) -> (Int, [UInt8]) {
            let us = 60_000_000 / bpm
            return (tick, [0xFF, 0x51, 0x03, UInt8(us >> 16), UInt8(us >> 8 & 0xFF), UInt8(us & 0xFF)])
        }
        var events = [tempo(0, 120), tempo(1920, 90), tempo(3840, 140), (0, [0xFF, 0x58, 0x04, 4, 2, 24, 8])]
        for q in 0..<16 {
            events.append((q * 480, [0x99, q % 2 == 0 ? 36 : 38, 100]))
            events.append((q * 480 + 60, [0x89, q % 2 == 0 ? 36 : 38, 0]))
        }
        let beat = root.appendingPathComponent("tempo.mid")
        try TinySMF.bytes(events: events).write(to: beat)
        let out = root.appendingPathComponent("h.mid").path
        let r = try CLI.run(["humanize", beat.path, "--seed", "1", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Self.hits(out).tempos, [MIDITempoChange(tick: 0, microsecondsPerQuarter: 500_000),
                                                   MIDITempoChange(tick: 1920, microsecondsPerQuarter: 666_666),
                                                   MIDITempoChange(tick: 3840, microsecondsPerQuarter: 428_571)])
        let fixed = root.appendingPathComponent("h100.mid").path
        XCTAssertEqual(try CLI.run(["humanize", beat.path, "--seed", "1", "--bpm", "100", "-o", fixed]).status, 0)
        XCTAssertEqual(try Self.hits(fixed).tempos, [MIDITempoChange(tick: 0, microsecondsPerQuarter: 600_000)])
        let carried = root.appendingPathComponent("s.mid").path
        var s = try CLI.run(["sample", "--primer", beat.path, "--keep-primer", "--bars", "2", "--seed", "1", "-o", carried])
        XCTAssertEqual(s.status, 0, s.stderr)
        XCTAssertEqual(try Self.hits(carried).tempos, [MIDITempoChange(tick: 0, microsecondsPerQuarter: 428_571)])
        // The kept bars play as recorded (their tempo changes where they were), the generated
        // ones at the tempo the primer ends in; --bpm: one tempo for the whole file.
        s = try CLI.run(["sample", "--primer", beat.path, "--keep-primer", "--primer-bars", "4", "--bars", "2", "--seed", "1", "-o", carried])
        XCTAssertEqual(s.status, 0, s.stderr)
        let whole = try Self.hits(carried)
        XCTAssertEqual(whole.tempos, [MIDITempoChange(tick: 0, microsecondsPerQuarter: 500_000),
                                      MIDITempoChange(tick: 1920, microsecondsPerQuarter: 666_666),
                                      MIDITempoChange(tick: 3840, microsecondsPerQuarter: 428_571)])
        XCTAssertEqual(Array(whole.ticks.prefix(16)), (0..<16).map { $0 * 480 }, "the primer kept")
        XCTAssertGreaterThan(whole.ticks.last ?? 0, 7680, "bars generated after it")
        s = try CLI.run(["sample", "--primer", beat.path, "--keep-primer", "--primer-bars", "4", "--bars", "2", "--bpm", "100",
                         "--seed", "1", "-o", carried])
        XCTAssertEqual(s.status, 0, s.stderr)
        XCTAssertEqual(try Self.hits(carried).tempos, [MIDITempoChange(tick: 0, microsecondsPerQuarter: 600_000)])
        // Two tempos at tick 0: the last stands (90 BPM), as a player reads the file.
        events[0] = tempo(0, 120)
        events[1] = tempo(0, 90)
        events.remove(at: 2)
        try TinySMF.bytes(events: events).write(to: beat)
        let twice = root.appendingPathComponent("twice.mid").path
        XCTAssertEqual(try CLI.run(["humanize", beat.path, "--seed", "1", "-o", twice]).status, 0)
        XCTAssertEqual(try Self.hits(twice).tempos, [MIDITempoChange(tick: 0, microsecondsPerQuarter: 666_666)])
    }

    /// A loop whose last bar ends in a rest, with a tempo change in that rest: the humanized
    /// file keeps its length (its end of track, so the loop stays 4 bars long in a sequencer)
    /// and the tempo change; with --bpm the length too.
    func testTheBeatKeepsItsLengthAndTheTempoAfterItsLastHit() throws {
        var events: [(Int, [UInt8])] = [(0, [0xFF, 0x51, 0x03, 0x09, 0x27, 0xC0]),  // 100 BPM
                                        (7200, [0xFF, 0x51, 0x03, 0x0D, 0x14, 0x6C]),  // 70 BPM on bar 4's last beat
                                        (7680, [0xFF, 0x06, 0x00])]  // a marker on the loop's end
        for e in 0..<28 {  // 8ths, the last two beats of bar 4 rests
            let t = e * 240
            for n: UInt8 in e % 4 == 0 ? [42, e % 8 == 0 ? 36 : 38] : [42] {
                events.append((t, [0x99, n, 100]))
                events.append((t + 60, [0x89, n, 0]))
            }
        }
        let beat = root.appendingPathComponent("loop.mid")
        try TinySMF.bytes(events: events).write(to: beat)
        XCTAssertEqual(try Self.hits(beat.path).endTick, 7680)
        let out = root.appendingPathComponent("h.mid").path
        var r = try CLI.run(["humanize", beat.path, "--seed", "2", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        var h = try Self.hits(out)
        XCTAssertEqual(h.count, 35)
        XCTAssertEqual(h.endTick, 7680)
        XCTAssertEqual(h.tempos, [MIDITempoChange(tick: 0, microsecondsPerQuarter: 600_000),
                                  MIDITempoChange(tick: 7200, microsecondsPerQuarter: 857_196)])
        r = try CLI.run(["humanize", beat.path, "--seed", "2", "--bpm", "90", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        h = try Self.hits(out)
        XCTAssertEqual(h.endTick, 7680)
        XCTAssertEqual(h.tempos, [MIDITempoChange(tick: 0, microsecondsPerQuarter: 666_667)])
    }

    /// A beat that starts with a pickup (two beats of 16th snares, in a 2/4 bar; or in a 4/4 bar
    /// cut short by 4/4 restated two beats in) is read as the end of a 4/4 bar: humanized hit
    /// for hit as the same beat played from beat 3 of a whole first bar, and written with its
    /// own bar lines. Its hits go into training too (encode).
    func testAPickupIsTheEndOfABar() throws {
        func beat(meters: [(Int, UInt8, UInt8)], shift: Int) -> Data {
            var events: [(Int, [UInt8])] = meters.map { ($0.0, [0xFF, 0x58, 0x04, $0.1, $0.2, 24, 8]) }
            var hits = (0..<4).map { (480 + 120 * $0, UInt8(38)) }
            for q in 0..<16 {
                hits.append((960 + q * 480, q % 2 == 0 ? 36 : 38))
                hits.append((960 + q * 480, 42))
                hits.append((960 + q * 480 + 240, 42))
            }
            for (tick, note) in hits {
                events.append((tick + shift, [0x99, note, 100]))
                events.append((tick + shift + 60, [0x89, note, 0]))
            }
            return TinySMF.bytes(events: events)
        }
        let files = [("pickup", beat(meters: [(0, 2, 2), (960, 4, 2)], shift: 0)),
                     ("cut", beat(meters: [(0, 4, 2), (960, 4, 2)], shift: 0)),
                     ("whole", beat(meters: [(0, 4, 2)], shift: 960))]
        var out: [String: FileHits] = [:]
        for (name, bytes) in files {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(name), withIntermediateDirectories: true)
            let path = root.appendingPathComponent(name + "/beat.mid")
            try bytes.write(to: path)
            let h = root.appendingPathComponent(name + ".mid").path
            let r = try CLI.run(["humanize", path.path, "--seed", "3", "--style", "drummer1-funk", "-o", h])
            XCTAssertEqual(r.status, 0, name + ": " + r.stderr)
            out[name] = try Self.hits(h)
        }
        let pickup = try XCTUnwrap(out["pickup"]), cut = try XCTUnwrap(out["cut"]), whole = try XCTUnwrap(out["whole"])
        XCTAssertEqual(pickup.count, 52)
        XCTAssertEqual(pickup.notes, whole.notes)
        XCTAssertEqual(pickup.velocities, whole.velocities)
        XCTAssertEqual(pickup.ticks.map { $0 + 960 }, whole.ticks)
        XCTAssertNotEqual(pickup.velocities, [Int](repeating: 100, count: 52), "humanized")
        XCTAssertEqual(cut.notes, pickup.notes)
        XCTAssertEqual(cut.ticks, pickup.ticks)
        XCTAssertEqual(cut.velocities, pickup.velocities)
        // The pickup's bar lines: 2/4 then 4/4, and 4/4 restated mid-bar.
        XCTAssertEqual(pickup.meterRuns, [MIDITimeSignature(numerator: 2, denominator: 4), MIDITimeSignature(tick: 960, numerator: 4, denominator: 4)])
        XCTAssertEqual(cut.meterRuns, [MIDITimeSignature(numerator: 4, denominator: 4), MIDITimeSignature(tick: 960, numerator: 4, denominator: 4)])
        XCTAssertEqual(pickup.tickInBar[0..<4].map { $0 }, pickup.ticks[0..<4].map { $0 }, "the pickup stays in its own bar")
        // A primer with its pickup kept: written as the end of the file's first bar.
        var sampled: [Data] = []
        for name in ["pickup", "cut", "whole"] {
            let path = root.appendingPathComponent(name + "-sampled.mid").path
            let r = try CLI.run(["sample", "--primer", root.appendingPathComponent(name + "/beat.mid").path, "--primer-bars", "8",
                                 "--keep-primer", "--bars", "2", "--seed", "1", "--style", "drummer1-funk", "-o", path])
            XCTAssertEqual(r.status, 0, name + ": " + r.stderr)
            sampled.append(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        XCTAssertEqual(sampled[0], sampled[2])
        XCTAssertEqual(sampled[1], sampled[2])
        let kept = try Self.hits(root.appendingPathComponent("pickup-sampled.mid").path)
        XCTAssertEqual(Array(kept.ticks.prefix(5)), [1440, 1560, 1680, 1800, 1920])
        // Training reads the pickup as the whole bar's end: the same rows.
        var rows: [Data] = []
        for name in ["pickup", "cut", "whole"] {
            let path = root.appendingPathComponent(name + "-rows.npy").path
            let r = try CLI.run(["encode", "groove", "--data", root.appendingPathComponent(name + "/beat.mid").path, "-o", path])
            XCTAssertEqual(r.status, 0, name + ": " + r.stderr)
            XCTAssertTrue(r.stdout.contains("wrote \(path): 80 rows × 51 input groups"), r.stdout)
            rows.append(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        XCTAssertEqual(rows[0], rows[2])
        XCTAssertEqual(rows[1], rows[2])
    }

    /// Bars around a pickup: one followed by an empty bar, and one holding most of its beat's
    /// hits (3/4, which convert-midi names the file's meter), read as the same beats in whole
    /// 4/4 bars, by encode on the file and on a converted dataset (training's reading); a primer
    /// whose bars begin on a 2/4 bar mid-file keeps them on the file's bar lines; a beat's last
    /// meter and tempo change stay when its last hit is drawn before them.
    func testBarsAroundAPickup() throws {
        func file(_ name: String, meters: [(Int, UInt8, UInt8)], hits: [(Int, UInt8)]) throws -> String {
            var events: [(Int, [UInt8])] = meters.map { ($0.0, [0xFF, 0x58, 0x04, $0.1, $0.2, 24, 8]) }
            for (tick, note) in hits {
                events.append((tick, [0x99, note, 100]))
                events.append((tick + 60, [0x89, note, 0]))
            }
            let dir = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try TinySMF.bytes(events: events).write(to: dir.appendingPathComponent("beat.mid"))
            return dir.path
        }
        func bar(_ start: Int, beats: Int = 4) -> [(Int, UInt8)] {
            var hits: [(Int, UInt8)] = []
            for b in 0..<beats {
                let t = start + b * 480
                hits += [(t, b % 2 == 0 ? 36 : 38), (t, 42), (t + 240, 42)]
            }
            return hits
        }
        func rows(_ dir: String, converted: Bool) throws -> Data {
            var data = dir + "/beat.mid"
            if converted {
                data = dir + "-data"
                let c = try CLI.run(["convert-midi", dir, "-o", data, "--quantize", "30", "--onset-order", "note"])
                XCTAssertEqual(c.status, 0, c.stderr)
            }
            let out = dir + (converted ? "-dataset" : "-file") + "-rows.npy"
            let r = try CLI.run(["encode", "groove", "--data", data, "-o", out])
            XCTAssertEqual(r.status, 0, dir + ": " + r.stderr)
            return try Data(contentsOf: URL(fileURLWithPath: out))
        }
        // A 2/4 pickup, an empty bar, then a bar; and the same in 4/4 from beat 3.
        let pickup = [(0, UInt8(42)), (480, UInt8(38))] + bar(2880)
        let empty = try file("empty", meters: [(0, 2, 2), (960, 4, 2)], hits: pickup)
        let emptyCut = try file("empty-cut", meters: [(0, 4, 2), (960, 4, 2)], hits: pickup)
        let emptyWhole = try file("empty-whole", meters: [(0, 4, 2)], hits: pickup.map { ($0.0 + 960, $0.1) })
        // A 3/4 pickup of twelve 16th hi-hats before a bar of quarters; the same in 4/4 from beat 2.
        let busy = (0..<12).map { (120 * $0, UInt8(42)) } + [(1440, 36), (1920, 38), (2400, 36), (2880, 38)]
        let busyPickup = try file("busy", meters: [(0, 3, 2), (1440, 4, 2)], hits: busy)
        let busyWhole = try file("busy-whole", meters: [(0, 4, 2)], hits: busy.map { ($0.0 + 480, $0.1) })
        for (dir, reference) in [(empty, emptyWhole), (emptyCut, emptyWhole), (busyPickup, busyWhole)] {
            for converted in [false, true] {
                XCTAssertEqual(try rows(dir, converted: converted), try rows(reference, converted: converted), "\(dir), converted \(converted)")
            }
        }
        // stats counts the pickup's bars alike from the MIDI folder and from its dataset (3: the
        // pickup's bar, the empty one, the last), and continuation takes a pickup as a 1-bar primer.
        for reference in [empty, empty + "-data"] {
            let s = try CLI.run(["stats", emptyWhole + "/beat.mid", "--reference", reference, "--json"])
            XCTAssertEqual(s.status, 0, s.stderr)
            let counts = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(s.stdout.utf8)) as? [String: Any])?["counts"] as? [String: Any])
            XCTAssertEqual((counts["reference"] as? [String: Any])?["bars"] as? Int, 3, reference)
        }
        let continued = try CLI.run(["continuation", "groove", "--reference", empty, "--primer-bars", "1", "--bars", "1", "--seed", "1"])
        XCTAssertEqual(continued.status, 0, continued.stderr)
        XCTAssertTrue(continued.stdout.contains("continuation: 1 file of \(empty)"), continued.stdout)
        // A primer whose last two bars begin on a 2/4 bar: the 2/4 bar is kept at the end of the
        // file's first bar, as the same hits in 4/4 bars are.
        let middle = try file("middle", meters: [(0, 4, 2), (1920, 2, 2), (2880, 4, 2)], hits: bar(0) + bar(1920, beats: 2) + bar(2880))
        let middleWhole = try file("middle-whole", meters: [(0, 4, 2)], hits: bar(960, beats: 2) + bar(1920))
        var sampled: [Data] = []
        for dir in [middle, middleWhole] {
            let out = dir + "-sampled.mid"
            let r = try CLI.run(["sample", "--primer", dir + "/beat.mid", "--keep-primer", "--bars", "1", "--seed", "1",
                                 "--style", "drummer1-funk", "-o", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            sampled.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        XCTAssertEqual(sampled[0], sampled[1])
        // A 2/4 last bar at 90 BPM holding one crash: its meter and tempo stay in the output
        // whichever way the crash is drawn.
        let last = root.appendingPathComponent("last.mid")
        var events: [(Int, [UInt8])] = [(0, [0xFF, 0x58, 0x04, 4, 2, 24, 8]), (1920, [0xFF, 0x58, 0x04, 2, 2, 24, 8]),
                                        (0, [0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20]), (1920, [0xFF, 0x51, 0x03, 0x0A, 0x2C, 0x2A])]
        for (tick, note) in bar(0) + [(1920, UInt8(49))] {
            events.append((tick, [0x99, note, 100]))
            events.append((tick + 60, [0x89, note, 0]))
        }
        try TinySMF.bytes(events: events).write(to: last)
        var early = 0
        for seed in 1...6 {
            let out = root.appendingPathComponent("last-\(seed).mid").path
            let r = try CLI.run(["humanize", last.path, "--seed", "\(seed)", "-o", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            let h = try Self.hits(out)
            if h.ticks.last! < 1920 { early += 1 }
            XCTAssertEqual(h.meterRuns, [MIDITimeSignature(numerator: 4, denominator: 4), MIDITimeSignature(tick: 1920, numerator: 2, denominator: 4)], "seed \(seed)")
            XCTAssertEqual(h.tempos, [MIDITempoChange(tick: 0, microsecondsPerQuarter: 500_000), MIDITempoChange(tick: 1920, microsecondsPerQuarter: 666_666)], "seed \(seed)")
        }
        XCTAssertGreaterThan(early, 0, "a seed draws the crash early")
    }

    /// A band's file with the drums on channel index 0 and a bass line on index 1 (none on 10):
    /// read whole by default (humanize, sample --primer), and said so; humanize --channel 0
    /// reads the drums alone.
    func testTheDrumsChannelOfABandsFile() throws {
        var events: [(Int, [UInt8])] = [(0, [0xFF, 0x58, 0x04, 4, 2, 24, 8])]
        for q in 0..<8 {
            events.append((q * 480, [0x90, q % 2 == 0 ? 36 : 38, 100]))
            events.append((q * 480 + 60, [0x80, q % 2 == 0 ? 36 : 38, 0]))
            events.append((q * 480, [0x91, 40 + UInt8(q % 3), 90]))   // bass: E2, F2, F#2
            events.append((q * 480 + 400, [0x81, 40 + UInt8(q % 3), 0]))
        }
        let band = root.appendingPathComponent("band.mid")
        try TinySMF.bytes(events: events).write(to: band)
        let whole = root.appendingPathComponent("whole.mid").path, drums = root.appendingPathComponent("drums.mid").path
        let a = try CLI.run(["humanize", band.path, "--seed", "1", "-o", whole])
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertTrue(a.stdout.contains("note: \(band.path) has no notes on channel 10: every channel is read as drums (--channel picks one)"), a.stdout)
        XCTAssertEqual(try Self.hits(whole).count, 16)
        let b = try CLI.run(["humanize", band.path, "--seed", "1", "--channel", "0", "-o", drums])
        XCTAssertEqual(b.status, 0, b.stderr)
        XCTAssertFalse(b.stdout.contains("note:"), b.stdout)
        XCTAssertEqual(Set(try Self.hits(drums).notes), [36, 38])
        XCTAssertEqual(try Self.hits(drums).count, 8)
        // sample --primer reads it whole too, and says so.
        let c = try CLI.run(["sample", "--primer", band.path, "--bars", "1", "--seed", "1", "-o", root.appendingPathComponent("s.mid").path])
        XCTAssertEqual(c.status, 0, c.stderr)
        XCTAssertTrue(c.stdout.contains("note: --primer \(band.path) has no notes on channel 10: every channel is read as drums\n"), c.stdout)
        XCTAssertTrue(c.stdout.contains("primer \(band.path): 16 hits"), c.stdout)
        let bad = try CLI.run(["humanize", band.path, "--channel", "16", "-o", drums])
        XCTAssertEqual(bad.status, 64)
        XCTAssertTrue(bad.stderr.contains("--channel must be auto, all, or a channel index from 0 to 15 (got \"16\")"), bad.stderr)
        let none = try CLI.run(["humanize", band.path, "--channel", "10", "-o", drums])
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stderr.contains("no hits (NOTE ON with velocity > 0 not found on channel index 10, as --channel 10 asks"), none.stderr)
    }

    func testSameSeedSameFileAndBadInput() throws {
        let model = CLI.repoRoot.appendingPathComponent("models/groove").path
        let src = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer1/eval_session").path
        let f = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: src).filter { $0.hasSuffix(".mid") }.sorted().first)
        let a = root.appendingPathComponent("a.mid").path, b = root.appendingPathComponent("b.mid").path
        for out in [a, b] {
            let r = try CLI.run(["humanize", src + "/" + f, "--model", model, "--seed", "5", "-o", out])
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: a)), try Data(contentsOf: URL(fileURLWithPath: b)))
        let missing = try CLI.run(["humanize", root.appendingPathComponent("nope.mid").path, "--model", model, "-o", a])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("nope.mid"), missing.stderr)
        let garbage = root.appendingPathComponent("garbage.mid")
        try Data("not midi".utf8).write(to: garbage)
        let bad = try CLI.run(["humanize", garbage.path, "--model", model, "-o", root.appendingPathComponent("c.mid").path])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("garbage.mid"), bad.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("c.mid").path), "nothing written")
        let window = try CLI.run(["humanize", src + "/" + f, "--window", "-1", "-o", a])
        XCTAssertEqual(window.status, 64)
        // A beat the grid model cannot read (5/4): the error names the file, nothing is written.
        let fiveFour = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session2/111_rock-prog_110_beat_5-4.mid").path
        let odd = try CLI.run(["humanize", fiveFour, "--model", model, "-o", root.appendingPathComponent("d.mid").path])
        XCTAssertEqual(odd.status, 1)
        XCTAssertEqual(odd.stderr, "error: \(fiveFour): the grid model reads 4/4 beats only (a pickup and a shorter last bar allowed): the hit at tick 0 (480 per quarter note) lies in a bar of 2400 ticks, not 1920\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("d.mid").path))
        // A first tempo of 0 µs per quarter note (inf BPM), which the output would take: named
        // for humanize and for a primer, unless --bpm replaces it.
        let zero = root.appendingPathComponent("tempo0.mid").path
        let track: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0, 0, 0, 0x00, 0x99, 36, 100, 0x78, 0x89, 36, 0, 0x00, 0xFF, 0x2F, 0x00]
        try Data(Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8) + [0, 0, 0, UInt8(track.count)] + track)
            .write(to: URL(fileURLWithPath: zero))
        let out = root.appendingPathComponent("t.mid").path
        let tempo = "its first tempo, inf BPM, is outside what a MIDI file can hold (3.58 to 60,000,000 BPM): give --bpm"
        for (args, message) in [(["humanize", zero, "--model", model, "-o", out], "\(zero): \(tempo)"),
                                (["sample", model, "--primer", zero, "-n", "10", "-o", out], "--primer \(zero): \(tempo)")] {
            let r = try CLI.run(args)
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertEqual(r.stderr, "error: \(message)\n")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        }
        XCTAssertEqual(try CLI.run(["humanize", zero, "--model", model, "--bpm", "100", "-o", out]).status, 0)
    }

    /// --quantize has the bound every other command gives it: a grid wider than 2^20 ticks is
    /// refused before anything is read, not a beat squashed into one bar.
    func testQuantizeOutOfRangeIsRefused() throws {
        let src = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/grid/src/drummer1/session2/111_rock-prog_110_beat_5-4.mid").path
        let out = root.appendingPathComponent("q.mid").path
        for q in ["0", "1048577", "9223372036854775807"] {
            let r = try CLI.run(["humanize", src, "--quantize", q, "--seed", "1", "-o", out])
            assertRefused(r, "--quantize must be between 1 and 1048576 ticks, got \(q)", status: 64, nothingAt: out)
        }
    }

    /// A 32nd-note hi-hat roll on beat 4 stays about where it was: each 16th's pair of hits is
    /// placed where the model places a pair. Drawn among the single-hit offsets, the roll's
    /// hits moved 54–77 ticks late on average (seeds 1–8), nearly a 32nd; now 19–32.
    func testA32ndRollStaysInPlace() throws {
        var events: [(Int, [UInt8])] = [(0, [0xFF, 0x58, 0x04, 4, 2, 24, 8])]
        var hats: [Int] = []
        for bar in 0..<4 {
            let o = bar * 1920
            for q in 0..<4 { events.append((o + q * 480, [0x99, q % 2 == 0 ? 36 : 38, 100])) }
            hats += (0..<6).map { o + $0 * 240 } + (0..<8).map { o + 1440 + $0 * 60 }
        }
        events += hats.map { ($0, [0x99, 42, 90]) }
        let beat = root.appendingPathComponent("roll.mid")
        try TinySMF.bytes(events: events).write(to: beat)
        for seed in 1...4 {
            let out = root.appendingPathComponent("roll-\(seed).mid").path
            let r = try CLI.run(["humanize", beat.path, "--seed", "\(seed)", "-o", out])
            XCTAssertEqual(r.status, 0, r.stderr)
            let h = try Self.hits(out)
            let got = zip(h.notes, h.ticks).filter { $0.0 == 42 }.map(\.1)
            XCTAssertEqual(got.count, hats.count, "seed \(seed)")
            let roll = zip(got, hats).filter { $0.1 % 1920 >= 1440 }.map { $0.0 - $0.1 }
            XCTAssertEqual(roll.count, 32)
            XCTAssertLessThan(Double(roll.reduce(0, +)) / Double(roll.count), 45, "seed \(seed): the roll's shifts \(roll)")
        }
    }

    /// What the model reads otherwise than written is said: a triplet hi-hat (off the 16th grid)
    /// is read on its nearest 16th, a note with no drum class (100) is kept as written; a beat on
    /// 16ths says neither.
    func testOffGridHitsAndNotesOutsideTheKitAreSaid() throws {
        var events: [(Int, [UInt8])] = [(0, [0xFF, 0x58, 0x04, 4, 2, 24, 8])]
        for bar in 0..<2 {
            for k in 0..<12 { events.append((bar * 1920 + k * 160, [0x99, 42, 80])) }  // 8th-note triplets
            for q in 0..<4 { events.append((bar * 1920 + q * 480, [0x99, q % 2 == 0 ? 36 : 38, 100])) }
            events.append((bar * 1920 + 960, [0x99, 100, 90]))
        }
        let beat = root.appendingPathComponent("triplets.mid")
        try TinySMF.bytes(events: events).write(to: beat)
        let out = root.appendingPathComponent("t.mid").path
        let r = try CLI.run(["humanize", beat.path, "--seed", "1", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        // Of each bar's 12 triplets, 8 lie 40 ticks from a 16th line (more than 15): 16 of 34 hits.
        XCTAssertTrue(r.stdout.contains("note: 16 of 34 hits lie off the 16th grid (more than an eighth of a 16th from a line: "
                                        + "triplets, swing or 32nds): each is read on its nearest 16th"), r.stdout)
        XCTAssertTrue(r.stdout.contains("note: 2 hit(s) of notes with no drum class (100) kept as written"), r.stdout)
        let stiff = root.appendingPathComponent("stiff.mid")
        try TinySMF.bytes(events: events.filter { $0.0 % 120 == 0 && $0.1[1] != 100 }).write(to: stiff)
        let plain = try CLI.run(["humanize", stiff.path, "--seed", "1", "-o", out])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertFalse(plain.stdout.contains("note:"), plain.stdout)
    }
}
