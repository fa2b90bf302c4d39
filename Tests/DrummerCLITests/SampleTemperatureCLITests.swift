// `drummer sample --temperature` per output group and `--top-p`: at 1 they sample exactly what
// sampling did before them; a lower note/tick temperature leaves the velocities to the model
// (a global one pushes them up); nucleus sampling narrows each group; bad values are refused.
import Foundation
import MIDIParse
import XCTest

final class SampleTemperatureCLITests: XCTestCase {
    var root: URL!
    let model = CLI.repoRoot.appendingPathComponent("models/groove-events").path

    override func setUpWithError() throws { root = try CLI.temporaryDirectory("sample-temperature-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    func sample(_ name: String, _ extra: [String], count: Int = 1, notes: Int = 300) throws -> [FileHits] {
        let out = root.appendingPathComponent(name + ".mid").path
        let r = try CLI.run(["sample", model, "-n", "\(notes)", "--seed", "3", "--count", "\(count)", "-o", out] + extra)
        XCTAssertEqual(r.status, 0, r.stderr)
        var s = HitExtractionSettings()
        s.ppq = 480
        let paths = count == 1 ? [out] : (1...count).map { root.appendingPathComponent("\(name)-\($0).mid").path }
        return try paths.map { try FileHits.read(path: $0, settings: s) }
    }

    func bytes(_ name: String) throws -> Data { try Data(contentsOf: root.appendingPathComponent(name + ".mid")) }

    func testOneSamplesAsBefore() throws {
        _ = try sample("plain", [])
        _ = try sample("one", ["--temperature", "1"])
        _ = try sample("groups", ["--temperature", "note=1,tick=1,velocity=1"])
        _ = try sample("p1", ["--top-p", "1"])
        _ = try sample("pgroups", ["--top-p", "note=1,tick=1,velocity=1"])
        let plain = try bytes("plain")
        for name in ["one", "groups", "p1", "pgroups"] { XCTAssertEqual(try bytes(name), plain, name) }
    }

    /// Velocities over 8 files × 400 hits: JS divergence (bits) of 16-bin histograms from T = 1's.
    func testNoteTickTemperatureKeepsTheTouch() throws {
        func histogram(_ files: [FileHits]) -> [Int] {
            var h = [Int](repeating: 0, count: 16)
            for f in files { for v in f.velocities { h[min(15, (v - 1) / 8)] += 1 } }
            return h
        }
        let base = histogram(try sample("t1", [], count: 8, notes: 400))
        let groups = histogram(try sample("nt", ["--temperature", "note=0.8,tick=0.8"], count: 8, notes: 400))
        let global = histogram(try sample("g", ["--temperature", "0.8"], count: 8, notes: 400))
        let jsGroups = HumanizeCLITests.js(groups, base), jsGlobal = HumanizeCLITests.js(global, base)
        print(String(format: "velocity JS against T = 1: note/tick 0.8 %.4f bits, global 0.8 %.4f bits", jsGroups, jsGlobal))
        XCTAssertLessThan(jsGroups, jsGlobal / 2, "a lower note/tick temperature keeps the model's velocities")
        func loud(_ h: [Int]) -> Double { Double(h[13...].reduce(0, +)) / Double(h.reduce(0, +)) }
        XCTAssertGreaterThan(loud(global), loud(base), "a global temperature pushes velocities up")
    }

    func testTopPNarrowsTheDraws() throws {
        let all = try sample("all", [], count: 4, notes: 400), narrow = try sample("narrow", ["--top-p", "0.5"], count: 4, notes: 400)
        func distinct(_ f: [FileHits]) -> Int { Set(f.flatMap(\.notes)).count }
        XCTAssertLessThan(distinct(narrow), distinct(all))
        func distinctDeltas(_ f: [FileHits]) -> Int { Set(f.flatMap(\.deltas)).count }
        XCTAssertLessThan(distinctDeltas(narrow), distinctDeltas(all))
    }

    /// --top-p note=P narrows the notes alone: the tick draws keep every class.
    func testTopPByGroup() throws {
        let all = try sample("all", [], count: 4, notes: 400), notes = try sample("notes", ["--top-p", "note=0.5"], count: 4, notes: 400)
        XCTAssertLessThan(Set(notes.flatMap(\.notes)).count, Set(all.flatMap(\.notes)).count)
        let r = try CLI.run(["sample", model, "-n", "10", "--seed", "1", "-o", root.appendingPathComponent("s.mid").path,
                             "--top-p", "tick=0.9,note=0.5"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("top-p note=0.5,tick=0.9,velocity=1.0"), r.stdout)
    }

    /// A grid model takes --top-p per group too (GridSamplerTests: its hit set keeps the rests).
    func testGridTopPByGroup() throws {
        let grid = CLI.repoRoot.appendingPathComponent("models/groove").path
        let out = root.appendingPathComponent("grid.mid").path
        let plain = try CLI.run(["sample", grid, "-n", "300", "--seed", "7", "-o", out])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        let plainBytes = try Data(contentsOf: URL(fileURLWithPath: out))
        let one = try CLI.run(["sample", grid, "-n", "300", "--seed", "7", "-o", out, "--top-p", "hits=1,velocity=1,offset=1"])
        XCTAssertEqual(one.status, 0, one.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), plainBytes, "top-p 1 in every group samples as before")
        let r = try CLI.run(["sample", grid, "-n", "300", "--seed", "7", "-o", out, "--top-p", "hits=0.5"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("top-p hits=0.5,offset=1.0,velocity=1.0"), r.stdout)
        XCTAssertNotEqual(try Data(contentsOf: URL(fileURLWithPath: out)), plainBytes)
    }

    func testBadValues() throws {
        let out = root.appendingPathComponent("x.mid").path
        for (args, status, text) in [(["--temperature", "snare=0.5"], 64, "the output groups are note, tick and velocity"),
                                     (["--temperature", "note=0.5,note=0.6"], 64, "names note twice"),
                                     (["--temperature", "fast"], 64, "takes a number or group=T pairs"),
                                     (["--top-p", "0"], 64, "--top-p must be above 0 and at most 1"),
                                     (["--top-p", "note=1.5"], 64, "--top-p note must be above 0 and at most 1, got 1.5"),
                                     (["--top-p", "hits=0.9"], 64, "--top-p names hits, which this model does not predict (its top-p groups: note, tick, velocity)"),
                                     (["--temperature", "note=0,tick=0.5"], 1, "applies to note and tick together")] {
            let r = try CLI.run(["sample", model, "-n", "10", "-o", out] + args)
            XCTAssertEqual(r.status, Int32(status), "\(args): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(text), "\(args): \(r.stderr)")
        }
    }

    /// `--warmup-bars W` on models/groove: the file is the one the seed gives without warm-up from
    /// bar W on, W bars earlier (its state, lookback and phrase carried on; a hit played early
    /// before bar W's line is written at 0); 0 samples as before; refusals.
    func testWarmupBars() throws {
        let grid = CLI.repoRoot.appendingPathComponent("models/groove").path
        func run(_ name: String, _ extra: [String]) throws -> (FileHits, CLIResult) {
            let out = root.appendingPathComponent(name + ".mid").path
            let r = try CLI.run(["sample", grid, "--seed", "7", "-o", out] + extra)
            XCTAssertEqual(r.status, 0, r.stderr)
            var settings = HitExtractionSettings()
            settings.ppq = 480
            return (try FileHits.read(path: out, settings: settings), r)
        }
        let (whole, _) = try run("whole", ["-n", "1500"])
        let (warm, r) = try run("warm", ["-n", "300", "--warmup-bars", "8"])
        XCTAssertTrue(r.stdout.contains("after 8 warm-up bar(s)"), r.stdout)
        let start = 8 * 1920
        let expected = (0..<whole.count).filter { whole.ticks[$0] >= start - 60 }.prefix(300)
            .map { [max(0, whole.ticks[$0] - start), whole.notes[$0], whole.velocities[$0]] }
        XCTAssertEqual(expected.count, 300)
        XCTAssertEqual((0..<warm.count).map { [warm.ticks[$0], warm.notes[$0], warm.velocities[$0]] }, Array(expected))
        _ = try run("zero", ["-n", "300", "--warmup-bars", "0"])
        _ = try run("plain", ["-n", "300"])
        XCTAssertEqual(try bytes("zero"), try bytes("plain"), "--warmup-bars 0 samples as before")
        let out = root.appendingPathComponent("x.mid").path
        let primer = root.appendingPathComponent("whole.mid").path
        for (m, args, text) in [(grid, ["--warmup-bars", "-1"], "--warmup-bars must be between 0 and 10000, got -1"),
                                (grid, ["--warmup-bars", "2", "--primer", primer], "--warmup-bars and --primer both set the state"),
                                (grid, ["--warmup-bars", "2", "--random"], "--warmup-bars has no effect with it"),
                                (model, ["--warmup-bars", "2"], "--warmup-bars needs a grid-layout model")] {
            assertRefused(try CLI.run(["sample", m, "-n", "10", "-o", out] + args), text, status: 64, nothingAt: out)
        }
    }
}
