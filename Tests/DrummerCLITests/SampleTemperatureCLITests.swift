// `drummer sample --temperature` per output group, on the shipped grid model: at 1 it samples
// exactly what sampling does without it; a lower temperature of the hit sets moves the
// velocities less than a global one does; bad values are refused.
import Foundation
import MIDIParse
import XCTest

final class SampleTemperatureCLITests: XCTestCase {
    var root: URL!
    let model = CLI.repoRoot.appendingPathComponent("models/groove").path

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
        _ = try sample("groups", ["--temperature", "hits=1,velocity=1,offset=1,fills=1"])
        let plain = try bytes("plain")
        for name in ["one", "groups"] { XCTAssertEqual(try bytes(name), plain, name) }
    }

    /// Velocities over 8 files × 400 hits: JS divergence (bits) of 16-bin histograms from T = 1's.
    func testHitsTemperatureKeepsTheTouch() throws {
        func histogram(_ files: [FileHits]) -> [Int] {
            var h = [Int](repeating: 0, count: 16)
            for f in files { for v in f.velocities { h[min(15, (v - 1) / 8)] += 1 } }
            return h
        }
        let base = histogram(try sample("t1", [], count: 8, notes: 400))
        let groups = histogram(try sample("h", ["--temperature", "hits=0.8"], count: 8, notes: 400))
        let global = histogram(try sample("g", ["--temperature", "0.8"], count: 8, notes: 400))
        let jsGroups = HumanizeCLITests.js(groups, base), jsGlobal = HumanizeCLITests.js(global, base)
        print(String(format: "velocity JS against T = 1: hits 0.8 %.4f bits, global 0.8 %.4f bits", jsGroups, jsGlobal))
        // The grid's velocities are drawn per drum class, so a hit-set temperature moves their
        // histogram by changing which drums play (the event model's note/tick temperature moved
        // it by less than half the global one's; here it is about two thirds).
        XCTAssertLessThan(jsGroups, jsGlobal, "a lower hit-set temperature keeps more of the model's velocities than a global one")
        // And it is applied: the files differ from T = 1's, and their velocities move (a
        // temperature that is never applied would give T = 1's files, and a divergence of 0).
        XCTAssertNotEqual(try bytes("h-1"), try bytes("t1-1"), "hits=0.8 samples other hits than T = 1")
        XCTAssertGreaterThan(jsGroups, 0.2 * jsGlobal, "hits=0.8 moves the velocities through the drums it plays")
    }

    func testBadValues() throws {
        let out = root.appendingPathComponent("x.mid").path
        for (args, text) in [(["--temperature", "snare=0.5"], "the output groups are hits, velocity and offset, and fills (a model of the 2017 layout: note and tick)"),
                             (["--temperature", "hits=0.5,hits=0.6"], "names hits twice"),
                             (["--temperature", "fast"], "takes a number or group=T pairs"),
                             (["--temperature", "velocity=-1"], "--temperature velocity must be a number from 0 to 100, got -1.0")] {
            assertRefused(try CLI.run(["sample", model, "-n", "10", "-o", out] + args), text, status: 64, nothingAt: out)
        }
    }
}
