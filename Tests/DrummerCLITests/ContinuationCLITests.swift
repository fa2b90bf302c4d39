// `drummer continuation`: the drummers' side against figures worked out by hand, the model's
// against `drummer sample --primer` run on each file's first bars and read back here.
import Foundation
import MIDIParse
import XCTest

final class ContinuationCLITests: XCTestCase {
    var root: URL!
    let model = CLI.repoRoot.appendingPathComponent("models/groove").path

    override func setUpWithError() throws { root = try CLI.temporaryDirectory("continuation-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    /// (note, sixteenth) per bar, at 480 PPQ (a sixteenth is 120 ticks).
    typealias Bar = [(note: UInt8, cell: Int)]
    // A: kick on 1 and 3, snare on 2 and 4, eighth-note hi-hats: 12 (class, sixteenth) pairs.
    let a: Bar = [(36, 0), (36, 8), (38, 4), (38, 12)] + stride(from: 0, to: 16, by: 2).map { (UInt8(42), $0) }
    // B: A without the hi-hats on 2 and 6: J(A, B) = 10/12, a repeat (≥ 0.8).
    var b: Bar { a.filter { !($0.note == 42 && ($0.cell == 2 || $0.cell == 6)) } }
    // F: toms only: J(A, F) = J(B, F) = 0.
    let f: Bar = [(45, 0), (45, 4), (48, 8), (48, 12)]

    func midi(_ bars: [Bar]) -> Data {
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for (i, bar) in bars.enumerated() { for h in bar { hits.append((i * 1920 + h.cell * 120, h.note, 90)) } }
        return TinySMF.drums(hits.sorted { ($0.tick, $0.note) < ($1.tick, $1.note) })
    }

    /// Magenta's nine drum classes of the notes this test meets (the bar-structure figures' map).
    static let classes: [Int: Int] = [36: 0, 35: 0, 38: 1, 37: 1, 40: 1, 42: 2, 44: 2, 22: 2, 46: 3, 26: 3, 45: 4, 43: 4,
                                      48: 5, 47: 5, 50: 6, 49: 7, 57: 7, 55: 7, 51: 8, 53: 8, 59: 8]

    struct Pair: Hashable { var drumClass: Int, cell: Int }

    func set(_ bar: Bar) -> Set<Pair> { Set(bar.map { Pair(drumClass: Self.classes[Int($0.note)]!, cell: $0.cell) }) }

    func jaccard(_ x: Set<Pair>, _ y: Set<Pair>) -> Double {
        x.union(y).isEmpty ? 1 : Double(x.intersection(y).count) / Double(x.union(y).count)
    }

    /// A row's numbers: the model's and the drummers' figures.
    func figures(_ out: String, row: String) throws -> (model: Double, drummers: Double) {
        let line = try XCTUnwrap(out.split(separator: "\n").first { $0.hasPrefix(row) }, out)
        let numbers = line.dropFirst(row.count).split(separator: " ").prefix(2).map { Double($0.replacingOccurrences(of: "%", with: "")) }
        return (try XCTUnwrap(numbers[0], String(line)), try XCTUnwrap(numbers[1], String(line)))
    }

    func testDrummersWorkedByHandAndTheModelAsSampleWithAPrimerPlaysIt() throws {
        let reference = root.appendingPathComponent("reference")
        try FileManager.default.createDirectory(at: reference, withIntermediateDirectories: true)
        let files: [[Bar]] = [
            Array(repeating: a, count: 12),                 // 8 bars after: each 1, a repeat
            [a, a, a, a, b, b, f, f, a, a, a, a],           // 10/12, 10/12, 0, 0, 1, 1, 1, 1: 6 repeats
        ]
        for (k, bars) in files.enumerated() {
            try midi(bars).write(to: reference.appendingPathComponent("\(k).mid"))
        }
        // Too short (11 bars) and passed over.
        try midi(Array(repeating: a, count: 11)).write(to: reference.appendingPathComponent("2.mid"))
        let r = try CLI.run(["continuation", model, "--reference", reference.path, "--seed", "10"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("continuation: 2 files of \(reference.path) (1 passed over: not all 4/4, or shorter than 12 bars)"), r.stdout)
        // The temperatures it measured at, as sample --primer plays: the hits at 0.8 (its help said 1).
        XCTAssertTrue(r.stdout.contains("; seeds 10…11; temperature hits=0.8,offset=1.0,velocity=1.0\n"), r.stdout)
        let similarity = try figures(r.stdout, row: "similarity to the primer (best bar)")
        let repeats = try figures(r.stdout, row: "bars repeating a primer bar (≥ 0.8)")
        XCTAssertEqual(similarity.drummers, (8 + 2 * 10.0 / 12 + 4) / 16, accuracy: 0.0005)
        XCTAssertEqual(repeats.drummers, 14.0 / 16 * 100, accuracy: 0.05)

        // The model's side: file k is `sample --primer` of its first 4 bars with seed 10 + k.
        var similaritySum = 0.0, repeated = 0
        for (k, bars) in files.enumerated() {
            let primer = root.appendingPathComponent("primer-\(k).mid"), out = root.appendingPathComponent("out-\(k).mid")
            try midi(Array(bars[0..<4])).write(to: primer)
            let s = try CLI.run(["sample", model, "--primer", primer.path, "--primer-bars", "4", "--keep-primer", "--bars", "8",
                                 "--seed", "\(10 + k)", "-o", out.path])
            XCTAssertEqual(s.status, 0, s.stderr)
            XCTAssertTrue(s.stdout.contains("temperature hits=0.8,"), "after a primer the hits draw at 0.8: \(s.stdout)")
            var settings = HitExtractionSettings()
            settings.ppq = 480
            let hits = try FileHits.read(path: out.path, settings: settings)
            // The primer is kept from its first hit, on the file's first bar line.
            var after = [Set<Pair>](repeating: [], count: 8)
            for i in 0..<hits.count {
                guard let c = Self.classes[hits.notes[i]] else { continue }
                var bar = hits.ticks[i] / 1920, cell = Int((Double(hits.ticks[i] % 1920) / 120 + 0.5).rounded(.down))
                if cell >= 16 { bar += 1; cell -= 16 }
                if (4..<12).contains(bar) { after[bar - 4].insert(Pair(drumClass: c, cell: cell)) }
            }
            XCTAssertLessThan(hits.ticks.max()!, 12 * 1920, "the file ends with the 12th bar")
            let primerSets = bars[0..<4].map(set)
            for bar in after {
                let best = primerSets.map { jaccard($0, bar) }.max()!
                similaritySum += best
                if best >= 0.8 { repeated += 1 }
            }
        }
        XCTAssertEqual(similarity.model, similaritySum / 16, accuracy: 0.0005)
        XCTAssertEqual(repeats.model, Double(repeated) / 16 * 100, accuracy: 0.05)
        // --temperature sets the hits: at 1 the run draws other bars (same files, same seeds).
        let warm = try CLI.run(["continuation", model, "--reference", reference.path, "--seed", "10", "--temperature", "hits=1"])
        XCTAssertEqual(warm.status, 0, warm.stderr)
        XCTAssertEqual(try figures(warm.stdout, row: "similarity to the primer (best bar)").drummers, similarity.drummers)
    }

    /// --split picks a dataset's rows as stats --split does: the files of each split are measured,
    /// the two splits' files together are --split all's; a dataset's validation/ alone is refused
    /// naming --split, and --split on MIDI files is a usage error.
    func testADatasetsSplits() throws {
        let reference = root.appendingPathComponent("reference")
        try FileManager.default.createDirectory(at: reference, withIntermediateDirectories: true)
        // The drummers' similarity of each file's 8 bars after its 4: 1, 0, 10/12 and 1/2.
        let after: [[Bar]] = [Array(repeating: a, count: 8), Array(repeating: f, count: 8), Array(repeating: b, count: 8),
                              [a, a, a, a, f, f, f, f]]
        let similarities = [1, 0, 10.0 / 12, 0.5]
        for (k, bars) in after.enumerated() {
            try midi(Array(repeating: a, count: 4) + bars).write(to: reference.appendingPathComponent("\(k).mid"))
        }
        let data = root.appendingPathComponent("data").path
        let c = try CLI.run(["convert-midi", reference.path, "-o", data, "--quantize", "30", "--validation-fraction", "0.5"])
        XCTAssertEqual(c.status, 0, c.stderr)
        var measured: [String: (files: Int, drummers: Double)] = [:]
        for split in ["training", "validation", "all"] {
            let r = try CLI.run(["continuation", model, "--reference", data, "--split", split])
            XCTAssertEqual(r.status, 0, r.stderr)
            let line = try XCTUnwrap(r.stdout.split(separator: "\n").first { $0.hasPrefix("continuation: ") }, r.stdout)
            let files = try XCTUnwrap(Int(line.split(separator: " ")[1]), String(line))
            measured[split] = (files, try figures(r.stdout, row: "similarity to the primer (best bar)").drummers)
        }
        let training = try XCTUnwrap(measured["training"]), validation = try XCTUnwrap(measured["validation"])
        let all = try XCTUnwrap(measured["all"])
        XCTAssertEqual(all.files, 4)
        XCTAssertEqual(training.files + validation.files, 4)
        XCTAssertGreaterThan(validation.files, 0)
        XCTAssertGreaterThan(training.files, 0)
        XCTAssertEqual(all.drummers, similarities.reduce(0, +) / 4, accuracy: 0.0005)
        // Each split's figure is the mean of its own files' (the four files' sets of that size
        // have distinct means), and the two splits share no file.
        func means(of size: Int) -> [(Set<Int>, Double)] {
            (0..<16).filter { $0.nonzeroBitCount == size }.map { mask in
                let files = Set((0..<4).filter { mask & (1 << $0) != 0 })
                return (files, files.map { similarities[$0] }.reduce(0, +) / Double(size))
            }
        }
        let v = try XCTUnwrap(means(of: validation.files).first { abs($0.1 - validation.drummers) < 0.0005 }, "\(validation)")
        let t = try XCTUnwrap(means(of: training.files).first { abs($0.1 - training.drummers) < 0.0005 }, "\(training)")
        XCTAssertTrue(v.0.isDisjoint(with: t.0), "\(v.0) and \(t.0)")

        let alone = try CLI.run(["continuation", model, "--reference", data + "/validation"])
        XCTAssertEqual(alone.status, 1)
        XCTAssertTrue(alone.stderr.contains("give the dataset and --split validation (--reference \(data) --split validation)"), alone.stderr)
        // Commands without --split (report, choose-step) do not point at it.
        let page = root.appendingPathComponent("r.html").path
        let report = try CLI.run(["report", "--model", model, "--reference", data + "/validation", "-o", page])
        XCTAssertTrue(report.stderr.contains("the validation split of the dataset \(data): this command reads a dataset's "
                                             + "training split: give the dataset (--reference \(data))"), report.stderr)
        XCTAssertFalse(report.stderr.contains("--split"), report.stderr)
        let midi = try CLI.run(["continuation", model, "--reference", reference.path, "--split", "validation"])
        XCTAssertEqual(midi.status, 64, midi.stderr)
        XCTAssertTrue(midi.stderr.contains("--split picks the rows of a convert-midi dataset"), midi.stderr)
        let bad = try CLI.run(["continuation", model, "--reference", data, "--split", "test"])
        XCTAssertEqual(bad.status, 64, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("--split must be training, validation or all (got \"test\")"), bad.stderr)
    }

    func testBadInputIsAClearError() throws {
        let reference = root.appendingPathComponent("short")
        try FileManager.default.createDirectory(at: reference, withIntermediateDirectories: true)
        try midi(Array(repeating: a, count: 6)).write(to: reference.appendingPathComponent("0.mid"))
        let short = try CLI.run(["continuation", model, "--reference", reference.path])
        XCTAssertEqual(short.status, 1, "a run-time failure of the input, not a usage error")
        XCTAssertTrue(short.stderr.contains("no file in 4/4 with 12 bars or more"), short.stderr)
        let fewer = try CLI.run(["continuation", model, "--reference", reference.path, "--primer-bars", "2", "--bars", "4"])
        XCTAssertEqual(fewer.status, 0, fewer.stderr)
        XCTAssertTrue(fewer.stdout.contains("continuation: 1 file of"), fewer.stdout)
        let original = try OriginalModel.write(to: root.appendingPathComponent("original")).path
        let r = try CLI.run(["continuation", original, "--reference", reference.path])
        XCTAssertEqual(r.status, 1, "as play --answer refuses a 2017-layout model")
        XCTAssertTrue(r.stderr.contains("2017 layout"), r.stderr)
        let missing = try CLI.run(["continuation", model, "--reference", root.appendingPathComponent("nowhere").path])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("nowhere"), missing.stderr)
        // File k's seed is --seed + k: past the largest seed it is refused, as sample refuses it
        // (continuation and choose-step wrapped to 0 unsaid).
        for args in [["continuation", model, "--reference", reference.path, "--count", "3"],
                     ["choose-step", root.path, "--reference", reference.path, "--count", "3"]] {
            let r = try CLI.run(args + ["--seed", "18446744073709551615"])
            XCTAssertEqual(r.status, 64, args[0] + ": " + r.stderr)
            XCTAssertTrue(r.stderr.contains("--seed 18446744073709551615 with --count 3: the files' seeds S … S + 2 must stay within"),
                          r.stderr)
        }
    }

    /// A reference file cut short is named on stderr by every command that reads the
    /// reference: left out where it is read as convert-midi reads files (continuation, stats),
    /// its recovery said where it is read leniently (report, stats --lenient).
    func testAReferenceFileCutShortIsNamed() throws {
        let reference = root.appendingPathComponent("reference")
        try FileManager.default.createDirectory(at: reference, withIntermediateDirectories: true)
        let whole = midi(Array(repeating: a, count: 12))
        try whole.write(to: reference.appendingPathComponent("0.mid"))
        let cut = reference.appendingPathComponent("zz_cut.mid")
        try whole.prefix(whole.count / 2 + 1).write(to: cut)
        let leftOut = "warning: \(reference.path): 1 of its MIDI files could not be read and were left out (first: \(cut.path): "
        let r = try CLI.run(["continuation", model, "--reference", reference.path, "--seed", "1", "--bars", "1"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("continuation: 1 file of \(reference.path)"), r.stdout)
        XCTAssertTrue(r.stderr.contains(leftOut), r.stderr)
        let generated = root.appendingPathComponent("0.mid").path
        try whole.write(to: URL(fileURLWithPath: generated))
        let stats = try CLI.run(["stats", generated, "--reference", reference.path])
        XCTAssertEqual(stats.status, 0, stats.stderr)
        XCTAssertTrue(stats.stderr.contains(leftOut), stats.stderr)
        let recovered = "\(reference.path): 1 of its MIDI files were read with a defect recovered (first: \(cut.path): "
        let lenient = try CLI.run(["stats", generated, "--reference", reference.path, "--lenient"])
        XCTAssertEqual(lenient.status, 0, lenient.stderr)
        XCTAssertTrue(lenient.stderr.contains("warning: " + recovered), lenient.stderr)
        let page = root.appendingPathComponent("r.html").path
        let report = try CLI.run(["report", generated, "--reference", reference.path, "-o", page, "--no-audio"])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertTrue(report.stderr.contains("warning: " + recovered), report.stderr)
        XCTAssertTrue(try String(contentsOfFile: page, encoding: .utf8).contains(recovered), "named in the page too")
    }
}
