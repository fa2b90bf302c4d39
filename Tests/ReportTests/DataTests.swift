import Foundation
import XCTest
import MIDIParse
@testable import Report

final class CSVTests: XCTestCase {
    func testPlainQuotedAndCRLF() throws {
        let t = try CSVTable.parse("step,name,note\r\n1,\"a, b\",\"say \"\"hi\"\"\"\r\n\r\n2,,\"two\nlines\"\n3")
        XCTAssertEqual(t.header, ["step", "name", "note"])
        XCTAssertEqual(t.rows, [["1", "a, b", "say \"hi\""], ["2", "", "two\nlines"], ["3"]])
    }

    func testBOMEmptyAndUnterminated() throws {
        XCTAssertEqual(try CSVTable.parse("\u{FEFF}a,b\n").header, ["a", "b"])
        XCTAssertEqual(try CSVTable.parse(""), CSVTable(header: [], rows: []))
        XCTAssertThrowsError(try CSVTable.parse("a,b\n1,\"open\n2,3\n")) { e in
            XCTAssertEqual(e as? CSVError, .unterminatedQuote(line: 2))
        }
    }
}

final class TrainingLogTests: XCTestCase {
    /// train_log.csv as `drummer train` writes it today, plus a per-group column a later
    /// trainer adds and a row without validation.
    static let text = """
        step,epoch,smoothed_loss,learning_rate,train_loss,train_accuracy,train_accuracy_note,train_accuracy_tick,\
        validation_loss,validation_accuracy,validation_accuracy_note,validation_accuracy_tick,validation_loss_velocity
        1000,4,3.1,1.0,3.09,0.23,0.4,0.39,3.58,0.18,0.35,0.33,0.71
        2000,8,2.9,1.0,2.86,0.27,0.45,0.43,3.41,0.21,0.39,0.37,0.65
        3000,12,2.8,0.5,2.66,0.31,0.5,0.47,3.45,0.21,0.4,0.38,0.60
        4000,16,2.7,0.5,2.60,0.32,0.51,0.48,,,,,

        """

    func testColumnsByName() throws {
        let log = try TrainingLog(csv: Self.text, path: "train_log.csv")
        XCTAssertEqual(log.rowCount, 4)
        XCTAssertEqual(log.steps, [1000, 2000, 3000, 4000])
        XCTAssertEqual(log.lossColumns, ["smoothed_loss", "train_loss", "validation_loss", "validation_loss_velocity"])
        XCTAssertEqual(log.accuracyColumns.count, 6)
        XCTAssertEqual(log.learningRateColumns, ["learning_rate"])
        XCTAssertEqual(log.series("validation_loss").map(\.x), [1000, 2000, 3000], "empty fields are skipped")
        let best = try XCTUnwrap(log.bestValidation)
        XCTAssertEqual(best.row, 1)
        XCTAssertEqual(best.step, 2000)
        XCTAssertEqual(best.loss, 3.41, accuracy: 1e-12)
    }

    func testOlderOrSparseLogs() throws {
        // Only step and train_loss: no validation, no best step; a non-numeric step is skipped.
        let log = try TrainingLog(csv: "train_loss,step\n2.5,10\nx,oops\n2.0,20\n", path: "l.csv")
        XCTAssertEqual(log.steps, [10, 20])
        XCTAssertEqual(log.skippedRows, 1)
        XCTAssertNil(log.bestValidation)
        XCTAssertEqual(log.lossColumns, ["train_loss"])
    }

    /// A run that diverged: its losses are nan from the eleventh evaluation on. Those rows are
    /// evaluations still, and the log says from which step its losses are not finite.
    func testLossesThatBecomeNaNAreAStepNotAGap() throws {
        var text = "step,epoch,smoothed_loss,learning_rate,train_loss,train_accuracy,validation_loss,validation_accuracy\n"
        for i in 1...20 {
            let loss = i <= 10 ? String(5 - 0.1 * Double(i)) : "nan"
            text += "\(i * 100),\(i),\(loss),0.001,\(loss),0.3,\(loss),0.2\n"
        }
        let log = try TrainingLog(csv: text, path: "l.csv")
        XCTAssertEqual(log.evaluationCount, 20)
        let bad = try XCTUnwrap(log.nonFiniteLoss)
        XCTAssertEqual(bad.step, 1100)
        XCTAssertEqual(bad.rows, 10)
        XCTAssertTrue(bad.toTheEnd)
        XCTAssertEqual(log.series("train_loss").count, 10, "the chart draws the finite losses")
        // One inf between finite losses is not a divergence; an empty field is no loss at all.
        let once = try TrainingLog(csv: "step,train_loss\n1,2.5\n2,inf\n3,2.4\n4,\n", path: "l.csv")
        XCTAssertEqual(once.evaluationCount, 3)
        XCTAssertEqual(once.nonFiniteLoss?.step, 2)
        XCTAssertEqual(once.nonFiniteLoss?.rows, 1)
        XCTAssertEqual(once.nonFiniteLoss?.toTheEnd, false)
        XCTAssertNil(try TrainingLog(csv: Self.text, path: "l.csv").nonFiniteLoss)
    }

    func testHeaderOnlyEmptyAndNoStep() throws {
        XCTAssertEqual(try TrainingLog(csv: "step,train_loss\n", path: "l.csv").rowCount, 0)
        XCTAssertThrowsError(try TrainingLog(csv: "", path: "l.csv")) { XCTAssertEqual($0 as? TrainingLogError, .empty(path: "l.csv")) }
        XCTAssertThrowsError(try TrainingLog(csv: "a,b\n1,2\n", path: "l.csv")) {
            XCTAssertEqual("\($0)", "l.csv: no \"step\" column in the header (found: a, b)")
        }
    }
}

final class HistogramTests: XCTestCase {
    func testNotesDeltasVelocitiesPositions() {
        let n = HitHistograms.notes([36, 38, 36, 99], order: [38, 36])
        XCTAssertEqual(n.labels, ["SD", "BD"])
        XCTAssertEqual(n.counts, [1, 2])
        let d = HitHistograms.deltas([0, 0.25, 0.5, 0.26, 1, 2, 8])
        XCTAssertEqual(d.counts.count, HitHistograms.deltaBins)
        XCTAssertEqual(d.counts[0], 1)
        XCTAssertEqual(d.counts[2], 2, "a sixteenth (and one just after it)")
        XCTAssertEqual(d.counts[4], 1)
        XCTAssertEqual(d.counts[8], 1)
        XCTAssertEqual(d.counts[16], 2, "a half note and longer")
        XCTAssertEqual(Array(d.labels.prefix(5)), ["0", "1/32", "1/16", "3/32", "1/8"])
        XCTAssertEqual(d.labels.last, "≥1/2")
        let v = HitHistograms.velocities([0, 7, 8, 127, 100])
        XCTAssertEqual(v.counts[0], 2)
        XCTAssertEqual(v.counts[1], 1)
        XCTAssertEqual(v.counts[12], 1)
        XCTAssertEqual(v.counts[15], 1)
        let p = HitHistograms.positions([0, 4, 4, 20])
        XCTAssertEqual(p.counts.count, 21)
        XCTAssertEqual(Array(p.labels.prefix(6)), ["1", "e", "&", "a", "2", "e"])
        XCTAssertEqual(p.fractions[4], 0.5)
    }

    func testTotalVariation() {
        let a = Histogram(labels: ["x", "y"], counts: [1, 1]), b = Histogram(labels: ["x", "y"], counts: [0, 3])
        XCTAssertEqual(Histogram.totalVariation(a, a), 0)
        XCTAssertEqual(Histogram.totalVariation(a, b), 0.5)
        XCTAssertNil(Histogram.totalVariation(a, Histogram(labels: ["x", "y"], counts: [0, 0])))
    }

    func testHitSampleFromAFile() {
        // 4/4 at 480 PPQ: hits at 0, 0, 240 (an eighth), 1915 (nearest the next bar line), 2040.
        let p = performance([(0, 36, 100), (0, 42, 60), (240, 42, 70), (1915, 38, 90), (2040, 42, 80)])
        var s = HitSample()
        s.append(p)
        XCTAssertEqual(s.files, 1)
        XCTAssertEqual(s.hits, 5)
        XCTAssertEqual(s.velocities, [100, 60, 70, 90, 80])
        XCTAssertEqual(s.positions, [0, 0, 2, 0, 1])
        XCTAssertEqual(s.deltas.count, 4)
        XCTAssertEqual(s.deltas[0], 0)
        XCTAssertEqual(s.deltas[1], 0.5, accuracy: 1e-12)
        XCTAssertEqual(s.bars, 2)
    }
}

final class PianoRollTests: XCTestCase {
    func testOneMarkPerHitInTheBarsDrawn() {
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for i in 0..<40 { hits.append((i * 240, i % 3 == 0 ? 36 : 42, UInt8(20 + i * 2))) }  // 5 bars of eighths
        hits.append((240, 22, 50))  // a non-GM note: row "Note 22"
        let p = performance(hits)
        let roll = PianoRoll(p, bars: 2)
        XCTAssertEqual(roll.endTick, 3840)
        let out = roll.render(label: "roll")
        XCTAssertEqual(out.marks, 17)
        XCTAssertEqual(out.omitted, 0)
        XCTAssertEqual(out.svg.components(separatedBy: "class=\"hit\"").count - 1, 17)
        XCTAssertTrue(out.svg.contains(">Closed Hi-Hat</text>"))
        XCTAssertTrue(out.svg.contains(">Bass Drum 1</text>"))
        XCTAssertTrue(out.svg.contains(">Note 22</text>"))
        XCTAssertTrue(out.svg.contains("class=\"axis-label\""))
        // Rows in display order: hi-hat, kick, then the non-GM note.
        let hh = out.svg.range(of: ">Closed Hi-Hat<")?.lowerBound, bd = out.svg.range(of: ">Bass Drum 1<")?.lowerBound
        XCTAssertLessThan(try XCTUnwrap(hh), try XCTUnwrap(bd))
        // More bars than the file has: all of it.
        XCTAssertEqual(PianoRoll(p, bars: 99).render(label: "r").marks, 41)
        XCTAssertEqual(PianoRoll(p, bars: 99, maxMarks: 10).render(label: "r").omitted, 31)
    }
}

final class WAVTests: XCTestCase {
    func testStereoToMono() throws {
        // A hand-made 16-bit stereo file with an extra chunk before the data: frames (100, 300), (-4, -2).
        var d = Data("RIFF".utf8) + le32(4 + 24 + 12 + 16) + Data("WAVE".utf8)
        d += Data("fmt ".utf8) + le32(16) + le16(1) + le16(2) + le32(22050) + le32(22050 * 4) + le16(4) + le16(16)
        d += Data("LIST".utf8) + le32(4) + Data("INFO".utf8)
        d += Data("data".utf8) + le32(8) + le16(100) + le16(300) + le16(0xFFFC) + le16(0xFFFE)
        let mono = try WAVAudio.monoPCM16(d)
        let (format, samples) = try WAVAudio.parse(mono)
        XCTAssertEqual(format, WAVAudio.Format(channels: 1, sampleRate: 22050, bitsPerSample: 16))
        XCTAssertEqual([UInt8](samples), [200, 0, 0xFD, 0xFF])
        XCTAssertEqual(mono.count, 44 + 4)
        XCTAssertThrowsError(try WAVAudio.parse(Data("RIFX....WAVE".utf8)))
    }

    func testClipIsCutToBarsAndSecondsAndPlaysOnTheDrumChannel() throws {
        // 120 BPM, 480 PPQ: one hit per beat for 20 beats on channel index 0.
        let p = performance((0..<20).map { ($0 * 480, 38, 90) }, channel: 0)
        let end = PianoRoll(p, bars: 2).endTick
        let clip = AudioClip.clip(p, endTick: end, maxSeconds: 30)
        XCTAssertEqual(clip.count, 8)
        XCTAssertEqual(AudioClip.clip(p, endTick: end, maxSeconds: 1.6).count, 4, "0, 0.5, 1, 1.5 s")
        let (file, _) = try MIDIFile.parse(try AudioClip.midi(clip), path: "clip.mid")
        let hits = file.hits()
        XCTAssertEqual(hits.count, 8)
        XCTAssertTrue(hits.allSatisfy { $0.channel == 9 })
        XCTAssertEqual(hits.map(\.tick), (0..<8).map { $0 * 480 }, "120 BPM at 480 PPQ: seconds kept")
        XCTAssertEqual(file.tracks[0].endTick, 7 * 480 + 1440, "1.5 s of tail")
    }

    private func le32(_ v: Int) -> Data { withUnsafeBytes(of: UInt32(v).littleEndian) { Data($0) } }
    private func le16(_ v: Int) -> Data { withUnsafeBytes(of: UInt16(v).littleEndian) { Data($0) } }
}

final class ModelCardTests: XCTestCase {
    private var tmp: URL!
    override func setUpWithError() throws {
        tmp = FileManager.default.temporaryDirectory.appendingPathComponent("modelcard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    private func value(_ rows: [(String, String)], _ key: String) -> String? { rows.first { $0.0 == key }?.1 }

    func testVersionOneManifest() throws {
        try """
            {"format": "drummer-model", "format_version": 1, "ix_to_note": [36, 38, 42], "ix_to_tick": [0, 120, 240, 480],
             "hidden_size": 8, "Wx_shape": [16, 32], "Wy_shape": [9, 7], "gate_order": ["f","i","o","g"],
             "metadata": {"step": "500", "dataset_fingerprint": "abc123"}}
            """.write(to: tmp.appendingPathComponent("model.json"), atomically: true, encoding: .utf8)
        try Data(count: 16 * 32 * 4).write(to: tmp.appendingPathComponent("Wx.bin"))
        let card = try ModelCard.load(directory: tmp.path)
        XCTAssertEqual(card.notes, [36, 38, 42])
        XCTAssertEqual(card.ticks, [0, 120, 240, 480])
        XCTAssertEqual(value(card.summary, "format"), "drummer-model v1")
        XCTAssertEqual(value(card.summary, "hidden size H"), "8")
        XCTAssertEqual(value(card.summary, "parameters"), "575 (float32, 2.2 KiB)")
        XCTAssertEqual(value(card.summary, "Wx.bin"), "2.0 KiB")
        XCTAssertEqual(value(card.summary, "Wy.bin"), "missing")
        XCTAssertEqual(card.metadata.map(\.0), ["dataset_fingerprint", "step"])
        XCTAssertTrue(card.groups.isEmpty)
        XCTAssertTrue(card.other.isEmpty)
        XCTAssertEqual(value(card.summary, "sampling temperature"), "1 for every output group")
        XCTAssertNil(card.summary.first { $0.0 == "sampling warm-up" }, "no warm-up: no row")
    }

    /// A stacked model's card counts every layer's matrix: its files, sizes and parameters.
    func testAStackedModelsLayersAreCounted() throws {
        try """
            {"format": "drummer-model", "format_version": 3, "ix_to_note": [36], "ix_to_tick": [0], "hidden_size": 4,
             "Wx_shape": [10, 16], "Wy_shape": [5, 3], "sha256": {"Wx.bin": "a", "Wx1.bin": "b", "Wy.bin": "c"},
             "layers": [{"file": "Wx.bin", "shape": [10, 16]}, {"file": "Wx1.bin", "shape": [9, 16]}]}
            """.write(to: tmp.appendingPathComponent("model.json"), atomically: true, encoding: .utf8)
        try Data(count: 9 * 16 * 4).write(to: tmp.appendingPathComponent("Wx1.bin"))
        let card = try ModelCard.load(directory: tmp.path)
        XCTAssertEqual(value(card.summary, "layers"), "2 stacked LSTM layers")
        XCTAssertEqual(value(card.summary, "Wx1"), "9 × 16")
        XCTAssertEqual(value(card.summary, "parameters"), "319 (float32, 1.2 KiB)")
        XCTAssertEqual(value(card.summary, "Wx1.bin"), "576 bytes")
        XCTAssertEqual(value(card.summary, "Wx.bin"), "missing")
        XCTAssertEqual(value(card.summary, "checksums"), "SHA-256 of the 3 .bin files in model.json, not verified: the model does not load")
        XCTAssertEqual(card.problem, "\(tmp.path)/model.json: missing key groups (format version 3 lists them)",
                       "named as sample names it")
        XCTAssertTrue(card.other.isEmpty, "layers is a key the card reads, not an other key: \(card.other)")
    }

    func testSamplingTemperaturesAreShown() throws {
        try """
            {"format": "drummer-model", "format_version": 2, "ix_to_note": [36], "ix_to_tick": [0], "hidden_size": 4,
             "sampling": {"temperature": {"velocity": 1.3, "hits": 0.98}, "warmup_bars": 16}}
            """.write(to: tmp.appendingPathComponent("model.json"), atomically: true, encoding: .utf8)
        let card = try ModelCard.load(directory: tmp.path)
        XCTAssertEqual(value(card.summary, "sampling temperature"), "hits 0.98, velocity 1.3 (sample's and humanize's defaults; other groups 1)")
        XCTAssertEqual(value(card.summary, "sampling warm-up"), "16 bars drawn and not written before a file without a primer (sample's default)")
        XCTAssertTrue(card.other.isEmpty, "sampling is a known key: \(card.other)")
    }

    func testVersionTwoWithGroupsAndUnknownKeysIsShownGenerically() throws {
        try """
            {"format": "drummer-model", "format_version": 2, "ix_to_note": [36], "ix_to_tick": [0], "hidden_size": 4,
             "groups": [{"name": "note", "size": 1, "table": [36]}, {"name": "velocity", "size": 4, "table": [32, 64, 96, 127]}],
             "metadata": {"step": 7, "nested": {"a": [1, 2]}}, "future_key": {"x": true}}
            """.write(to: tmp.appendingPathComponent("model.json"), atomically: true, encoding: .utf8)
        let card = try ModelCard.load(directory: tmp.path)
        XCTAssertEqual(value(card.summary, "format"), "drummer-model v2")
        XCTAssertEqual(card.groups.count, 2)
        XCTAssertEqual(value(card.groups[1], "name"), "velocity")
        XCTAssertEqual(value(card.groups[1], "table"), "[32,64,96,127]")
        XCTAssertEqual(value(card.metadata, "step"), "7")
        XCTAssertEqual(value(card.metadata, "nested"), "{\"a\":[1,2]}")
        XCTAssertEqual(card.other.map(\.0), ["future_key"])
    }

    func testMissingAndBadManifests() throws {
        XCTAssertThrowsError(try ModelCard.load(directory: tmp.appendingPathComponent("none").path)) {
            XCTAssertTrue("\($0)".hasSuffix("none: no such model directory"), "\($0)")
        }
        XCTAssertThrowsError(try ModelCard.load(directory: tmp.path)) {
            XCTAssertTrue("\($0)".contains("model.json: no such model manifest"), "\($0)")
        }
        try "[1, 2]".write(to: tmp.appendingPathComponent("model.json"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ModelCard.load(directory: tmp.path)) { XCTAssertTrue("\($0)".hasSuffix("not a JSON object")) }
        try "{oops".write(to: tmp.appendingPathComponent("model.json"), atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ModelCard.load(directory: tmp.path)) { XCTAssertTrue("\($0)".contains("not valid JSON")) }
    }
}
