// `drummer sample --bars N`, `--primer FILE --primer-bars K --keep-primer`, and the primer's
// tempo: read back from the files written.
import Foundation
import MIDIParse
import XCTest

final class SampleLengthCLITests: XCTestCase {
    var root: URL!
    let model = CLI.repoRoot.appendingPathComponent("models/groove").path
    let primer = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer1/eval_session/6_hiphop-groove6_87_beat_4-4.mid").path

    override func setUpWithError() throws { root = try CLI.temporaryDirectory("sample-length-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    func read(_ path: String) throws -> FileHits {
        var s = HitExtractionSettings()
        s.ppq = 480
        return try FileHits.read(path: path, settings: s)
    }

    /// The drum class (0...8) of each note the grid model reads, from its model.json's note counts.
    func gridClasses() throws -> [Int: Int] {
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: model + "/model.json"))) as? [String: Any])
        let counts = try XCTUnwrap(((json["groups"] as? [String: Any])?["grid"] as? [String: Any])?["note_counts"] as? [[Int]])
        var classes: [Int: Int] = [:]
        for (k, row) in counts.enumerated() { for (note, n) in row.enumerated() where n > 0 { classes[note] = k } }
        return classes
    }

    func testBarsWritesWholeBars() throws {
        let out = root.appendingPathComponent("b.mid").path
        let r = try CLI.run(["sample", model, "--bars", "8", "--seed", "4", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        let hits = try read(out)
        XCTAssertGreaterThan(hits.count, 40)
        XCTAssertLessThan(hits.ticks.max()!, 8 * 1920, "every hit within the 8 bars")
        XCTAssertGreaterThanOrEqual(hits.ticks.max()!, 7 * 1920, "the 8th bar is played")
        // The file is 8 bars long: the track ends at the bar line and a note sounding there stops
        // at it (a last note held 120 ticks ran past it: a sequencer showed 9 bars).
        let track = try XCTUnwrap(try MIDIFile.read(path: out).file.tracks.first)
        XCTAssertEqual(track.endTick, 8 * 1920)
        for seed in ["1", "3", "5", "7"] {
            let s = root.appendingPathComponent("b\(seed).mid").path
            XCTAssertEqual(try CLI.run(["sample", model, "--bars", "2", "--seed", seed, "-o", s]).status, 0)
            let events = try XCTUnwrap(try MIDIFile.read(path: s).file.tracks.first).events
            XCTAssertEqual(events.last?.tick, 2 * 1920, "seed \(seed): the end of track at the bar line")
            XCTAssertLessThanOrEqual(events.map(\.tick).max() ?? .max, 2 * 1920, "seed \(seed): no NOTE OFF past it")
        }
        let both = try CLI.run(["sample", model, "--bars", "8", "-n", "10", "-o", out])
        XCTAssertEqual(both.status, 64)
        XCTAssertTrue(both.stderr.contains("-n and --bars"), both.stderr)
    }

    /// A hit of the next bar's downbeat played early sounds before the end's bar line, but is
    /// the next bar's: left out of --bars N. What is left in the last 32nd before the line is
    /// a double's second hit only (its first a 32nd before, the same note and velocity).
    func testBarsLeavesOutTheNextBarsEarlyDownbeat() throws {
        // --count 24 files of 1 bar: seeds 11 … 34.
        let out = root.appendingPathComponent("d.mid").path
        let r = try CLI.run(["sample", model, "--bars", "1", "--seed", "11", "--count", "24", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        var late = 0
        for k in 1...24 {
            let hits = try read(root.appendingPathComponent("d-\(k).mid").path)
            XCTAssertLessThan(hits.ticks.max() ?? 0, 1920, "file \(k)")
            for i in 0..<hits.count where hits.ticks[i] >= 1920 - 60 {
                late += 1
                let first = (0..<hits.count).contains { j in
                    hits.ticks[j] == hits.ticks[i] - 60 && hits.notes[j] == hits.notes[i] && hits.velocities[j] == hits.velocities[i]
                }
                XCTAssertTrue(first, "file \(k): a hit at tick \(hits.ticks[i]), the next bar's downbeat played early")
            }
        }
        print("hits in the last 32nd before the end, each a double's second: \(late)")
    }

    func testPrimerBarsKeepPrimerAndTempo() throws {
        let whole = try read(primer)
        // The primer's last 2 bars, as the primer holds them.
        let lines = zip(whole.ticks, whole.tickInBar).map { $0 - $1 }
        var starts: [Int] = []
        for l in lines where starts.last != l { starts.append(l) }
        let from = starts[starts.count - 2]
        let kept = zip(whole.notes, whole.ticks).filter { $0.1 >= from }

        let out = root.appendingPathComponent("k.mid").path
        let r = try CLI.run(["sample", model, "--primer", primer, "--keep-primer", "--bars", "4", "--seed", "2", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("\(kept.count) hits (its last 2 bar(s) of \(whole.count) hits)"), r.stdout)
        let file = try MIDIFile.read(path: out).file
        let bpm = 60_000_000 / Double(try XCTUnwrap(file.tempoMap.changes.first).microsecondsPerQuarter)
        XCTAssertEqual(bpm, 87, accuracy: 0.5, "the primer's tempo (87 BPM)")
        // A primer read only by the safe mode (bytes after its last chunk) gives its tempo too:
        // the tempo comes with its hits, not from a second, strict reading.
        let trailing = root.appendingPathComponent("trailing.mid").path
        try (try Data(contentsOf: URL(fileURLWithPath: primer)) + Data([0, 1, 2])).write(to: URL(fileURLWithPath: trailing))
        XCTAssertThrowsError(try MIDIFile.read(path: trailing))
        let fromTrailing = root.appendingPathComponent("t.mid").path
        XCTAssertEqual(try CLI.run(["sample", model, "--primer", trailing, "-n", "20", "--seed", "2", "-o", fromTrailing]).status, 0)
        let t = try MIDIFile.read(path: fromTrailing).file
        XCTAssertEqual(60_000_000 / Double(try XCTUnwrap(t.tempoMap.changes.first).microsecondsPerQuarter), 87, accuracy: 0.5)
        let hits = try read(out)
        // The file starts with the primer's last two bars as the grid model reads them: the same
        // drums (by the model's classes: it writes each class's own notes) on the same 16ths.
        let classes = try gridClasses()
        let head = zip(hits.notes, hits.ticks).prefix(kept.count)
        XCTAssertEqual(head.map { classes[$0.0] ?? -1 }.sorted(), kept.map { classes[$0.0] ?? -1 }.sorted())
        func sixteenth(_ tick: Int) -> Int { Int((Double(tick) / 120).rounded()) }
        XCTAssertEqual(head.map { sixteenth($0.1) }.sorted(), kept.map { sixteenth($0.1 - from) }.sorted())
        XCTAssertGreaterThan(hits.count, kept.count, "then the generated hits")
        // Two bars of primer, and four bars after them: six bars.
        XCTAssertLessThan(hits.ticks.max()!, 6 * 1920)
        XCTAssertGreaterThanOrEqual(hits.ticks.max()!, 5 * 1920, "the sixth bar is played")

        // --bpm wins over the primer's tempo; --keep-primer needs --primer.
        let fast = root.appendingPathComponent("f.mid").path
        XCTAssertEqual(try CLI.run(["sample", model, "--primer", primer, "--bpm", "140", "-n", "20", "-o", fast]).status, 0)
        let f = try MIDIFile.read(path: fast).file
        XCTAssertEqual(60_000_000 / Double(try XCTUnwrap(f.tempoMap.changes.first).microsecondsPerQuarter), 140, accuracy: 0.5)
        XCTAssertEqual(try CLI.run(["sample", model, "--keep-primer", "-o", fast]).status, 64)
        // --primer-bars without --primer was ignored in silence.
        let lone = try CLI.run(["sample", model, "--primer-bars", "3", "-o", fast])
        XCTAssertEqual(lone.status, 64)
        XCTAssertTrue(lone.stderr.contains("--primer-bars needs --primer"), lone.stderr)
    }

    /// `--json`'s events are the file as written: the first delta from the file's start (with a
    /// primer it was from the primer's last hit, every onset shifted).
    func testJSONEventsAreTheFileAsWritten() throws {
        for extra in [[], ["--keep-primer"]] {
            let out = root.appendingPathComponent("j.mid").path
            let r = try CLI.run(["sample", model, "--primer", primer, "--bars", "2", "--seed", "1", "--json", "-o", out] + extra)
            XCTAssertEqual(r.status, 0, r.stderr)
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let events = try XCTUnwrap(((json["files"] as? [[String: Any]])?.first)?["events"] as? [[Int]])
            var t = 0
            let onsets = events.map { t += $0[1]; return t }
            let file = try MIDIFile.read(path: out).file
            let written = file.tracks[0].events.compactMap { e -> Int? in
                if case .channel(.noteOn) = e.kind { return e.tick }
                return nil
            }
            XCTAssertEqual(onsets, written, "\(extra)")
            XCTAssertGreaterThan(onsets.count, 10)
        }
    }
}
