import Foundation
import XCTest

/// `drummer report` end to end, through the built binary; the page is also loaded in
/// headless Chromium when it is installed (Scripts/test installs it).
final class ReportCLITests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("report-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    // MARK: Inputs

    /// A train_log.csv as `drummer train` writes it, plus a per-group column.
    private func checkpoints(rows: Int = 6, name: String = "ckpt") throws -> URL {
        let dir = tmp.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var text = "step,epoch,smoothed_loss,learning_rate,train_loss,train_accuracy,train_accuracy_note,"
            + "train_accuracy_tick,validation_loss,validation_accuracy,validation_accuracy_note,validation_accuracy_tick,"
            + "validation_loss_velocity\n"
        for i in 1...max(1, rows) where rows > 0 {
            let s = i * 500
            let v = 3.2 + 0.3 * abs(Double(i) - Double(rows) * 0.6) / Double(rows)
            text += "\(s),\(i),\(3.5 - 0.1 * Double(i)),1.0,\(3.4 - 0.1 * Double(i)),0.2,0.4,0.4,\(v),0.21,0.4,0.4,0.7\n"
        }
        try text.write(to: dir.appendingPathComponent("train_log.csv"), atomically: true, encoding: .utf8)
        try Data(count: 100).write(to: dir.appendingPathComponent("ckpt-500.h5"))
        return dir
    }

    private func sample(_ name: String, seed: Int) throws -> String {
        let path = tmp.appendingPathComponent(name).path
        let r = try CLI.run(["sample", CLI.repoRoot.appendingPathComponent("models/groove").path, "-n", "300",
                             "--seed", String(seed), "-o", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        return path
    }

    /// A folder of two hand-written MIDI files (with velocities) as a reference.
    private func referenceFolder() throws -> URL {
        let dir = tmp.appendingPathComponent("ref")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try TinySMF.rockBeat.write(to: dir.appendingPathComponent("a-rock.mid"))
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for bar in 0..<4 {
            for i in 0..<6 { hits.append((bar * 1440 + i * 240, 42, UInt8(60 + i * 5))) }
            hits += [(bar * 1440, 36, 100), (bar * 1440 + 720, 38, 110)]
        }
        try TinySMF.drums(hits, meter: (6, 3)).write(to: dir.appendingPathComponent("b-six.mid"))
        return dir
    }

    /// NOTE ONs with velocity > 0 before `tick`, read by the independent TinyMIDI reader.
    private func hitsBefore(_ path: String, tick: Int) throws -> Int {
        let midi = try XCTUnwrap(TinyMIDI([UInt8](Data(contentsOf: URL(fileURLWithPath: path)))))
        XCTAssertEqual(midi.ppq, 480)
        return midi.noteOns.filter { $0.tick < tick }.count
    }

    private func sections(_ html: String) -> [String] {
        html.components(separatedBy: "<section id=\"").dropFirst().compactMap { $0.split(separator: "\"").first.map(String.init) }
    }

    private var fluidsynthAvailable: Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/fluidsynth") }
            && FileManager.default.fileExists(atPath: "/usr/share/sounds/sf2/FluidR3_GM.sf2")
    }

    // MARK: The whole page

    func testFullReportHasEverySectionAndLoadsInChromium() throws {
        let ckpt = try checkpoints()
        let gen1 = try sample("gen-1.mid", seed: 1), gen2 = try sample("gen-2.mid", seed: 2)
        // The reference as a convert-midi dataset whose manifest points back at its source folder.
        let refDir = try referenceFolder()
        let data = tmp.appendingPathComponent("data")
        let conv = try CLI.run(["convert-midi", refDir.path, "-o", data.path])
        XCTAssertEqual(conv.status, 0, conv.stderr)
        let out = tmp.appendingPathComponent("report.html")
        let r = try CLI.run(["report", "--checkpoints", ckpt.path, "--model", CLI.repoRoot.appendingPathComponent("models/groove").path,
                             "--reference", data.path, gen1, gen2, "-o", out.path, "--bars", "4"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("wrote \(out.path)"), r.stderr)
        let html = try String(contentsOf: out, encoding: .utf8)
        XCTAssertEqual(sections(html).filter { $0 != "warnings" }, ["curves", "piano-rolls", "histograms", "model", "audio"])
        // convert-midi writes velocities.npy and positions.npy: the reference has both.
        XCTAssertFalse(html.contains("no velocities"), "the dataset reference has velocities")
        XCTAssertTrue(html.contains("validation_loss_velocity"), "extra log columns are drawn")
        XCTAssertTrue(html.contains("best validation: step 2000"), "rows 1...6: the lowest validation loss is at row 4")
        XCTAssertFalse(html.contains("<script"))
        // The bar-structure figures sit in the stats table, generated next to reference.
        for figure in ["bar similarity, lag 1", "bar similarity, lag 8", "patterns per 16 bars", "tom + crash share",
                       "similarity to previous bar", "simultaneous onsets", "mean velocity", "soft hits (velocity &lt; 50)",
                       "on 16th grid, by class: kick"] {
            XCTAssertTrue(html.contains("<tr><th>\(figure)</th><td>"), figure)
        }
        // The stats tables name the command as code, not in Markdown's backticks; the model card
        // wraps a long value between words where it can ("drum mer1-jazz" was cut mid-word).
        XCTAssertTrue(html.contains("The figures of <code>drummer stats</code> for these files"), "stats' heading note")
        XCTAssertFalse(html.contains("`drummer stats`"))
        let kv = try XCTUnwrap(html.components(separatedBy: "table.kv td{").dropFirst().first?.prefix { $0 != "}" })
        XCTAssertTrue(kv.contains("overflow-wrap:anywhere"), String(kv))
        XCTAssertFalse(kv.contains("break-all"), String(kv))
        if fluidsynthAvailable {
            XCTAssertEqual(html.components(separatedBy: "<audio").count - 1, 2)
            XCTAssertTrue(html.contains("src=\"data:audio/wav;base64,UklGR"), "a RIFF file inline")
        } else {
            XCTAssertTrue(html.contains("Audio skipped: fluidsynth is not installed"), "the page says what to install")
        }

        // The page in a real browser.
        guard let chromium = Browser.find() else {
            throw XCTSkip("chromium is not installed (Scripts/test installs Debian's chromium): the page was checked as text only")
        }
        let dom = try Browser.dumpDOM(chromium, page: out, profile: tmp.appendingPathComponent("profile"))
        XCTAssertTrue(dom.contains("</html>"), String(dom.prefix(500)))
        XCTAssertEqual(sections(dom).filter { $0 != "warnings" }, ["curves", "piano-rolls", "histograms", "model", "audio"])
        // One mark per hit in each roll, counted against the MIDI file: 4 bars of 4/4 at 480 PPQ.
        let figures = dom.components(separatedBy: "<figure").dropFirst()
        for path in [gen1, gen2] {
            let fig = try XCTUnwrap(figures.first { $0.contains("<figcaption>\(path):") }, "roll of \(path)")
            XCTAssertEqual(fig.components(separatedBy: "class=\"hit\"").count - 1, try hitsBefore(path, tick: 4 * 1920), path)
        }
        // The held-out reference file, found through the dataset's manifest: the rock beat (1 bar, 15 hits).
        let reference = try XCTUnwrap(figures.first { $0.contains("<figcaption>reference: ") }, "reference roll")
        XCTAssertTrue(reference.contains("a-rock.mid") || reference.contains("b-six.mid"), reference)
        XCTAssertEqual(reference.components(separatedBy: "class=\"hit\"").count - 1, reference.contains("a-rock.mid") ? 15 : 32)
        // Axis labels.
        for label in [">step</text>", ">loss</text>", ">accuracy</text>", ">learning rate</text>", ">bar</text>",
                      ">drum</text>", ">velocity</text>", ">position in bar</text>"] {
            XCTAssertTrue(dom.contains(label), label)
        }
        XCTAssertTrue(dom.contains(">Closed Hi-Hat</text>") || dom.contains(">Acoustic Snare</text>"), "GM row names")
        XCTAssertTrue(dom.contains("<th>bar similarity, lag 4</th>"), "the bar-structure rows in the browser's DOM")
        // No element refers to the network: every src and href is a data: URI or a fragment.
        let refs = Browser.attributeValues(dom, names: ["src", "href", "srcset", "poster", "data", "action", "xlink:href"])
        XCTAssertFalse(refs.isEmpty)
        for v in refs { XCTAssertTrue(v.hasPrefix("data:") || v.hasPrefix("#"), "refers outside the page: \(v.prefix(80))") }
        XCTAssertFalse(dom.contains("url("), "no CSS url()")

        // At 420 px (a phone) nothing is cut off: the page is no wider than its window. Headless
        // chromium's window is at least 500 px wide, so the page is laid out in a 420-px frame
        // (srcdoc: the same origin as the probe, which measures it once it has loaded).
        let narrow = tmp.appendingPathComponent("narrow.html")
        let escaped = html.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
        try ("<!doctype html><html><body style=\"margin:0\"><iframe id=\"f\" style=\"width:420px;height:900px;border:0\" srcdoc=\""
             + escaped + "\"></iframe><script>document.getElementById('f').addEventListener('load',()=>{"
             + "const f=document.getElementById('f');document.body.setAttribute('data-widths',"
             + "f.contentDocument.documentElement.scrollWidth+'/'+f.contentWindow.innerWidth)})</script></body></html>")
            .write(to: narrow, atomically: true, encoding: .utf8)
        let narrowDOM = try Browser.run(chromium, Browser.arguments(profile: tmp.appendingPathComponent("profile"))
                                        + ["--virtual-time-budget=10000", "--dump-dom", narrow.absoluteString])
        let widths = try XCTUnwrap(narrowDOM.range(of: #"data-widths="(\d+)/(\d+)""#, options: .regularExpression).map {
            narrowDOM[$0].dropFirst("data-widths=\"".count).dropLast().split(separator: "/").compactMap { Int($0) }
        }, "the probe did not run")
        XCTAssertEqual(widths.count, 2)
        XCTAssertEqual(widths.last, 420, "the frame is 420 px wide")
        XCTAssertLessThanOrEqual(widths.first ?? .max, 420, "the page is wider than a 420-px window: \(widths)")
        let phone = Browser.artifactsDirectory.appendingPathComponent("report-420.png")
        try? FileManager.default.removeItem(at: phone)
        _ = try Browser.run(chromium, Browser.arguments(profile: tmp.appendingPathComponent("profile"))
                            + ["--screenshot=\(phone.path)", "--window-size=420,2000", out.absoluteString])

        let shot = Browser.artifactsDirectory.appendingPathComponent("report.png")
        try Browser.screenshot(chromium, page: out, to: shot, profile: tmp.appendingPathComponent("profile"))
        let png = try Data(contentsOf: shot)
        XCTAssertEqual([UInt8](png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        XCTAssertGreaterThan(png.count, 20_000, "a blank page compresses to far less")
        print("report screenshot: \(shot.path)")
        try? FileManager.default.copyItem(at: out, to: Browser.artifactsDirectory.appendingPathComponent("report-\(UUID().uuidString.prefix(8)).html"))
    }

    // MARK: Audio

    func testAudioIsEmbeddedOrSkippedWithAVisibleNote() throws {
        let gen = try sample("g.mid", seed: 3)
        let hidden = tmp.appendingPathComponent("hidden.html")
        let skipped = try CLI.run(["report", gen, "-o", hidden.path], environment: ["PATH": "/nonexistent"])
        XCTAssertEqual(skipped.status, 0, skipped.stderr)
        XCTAssertTrue(skipped.stderr.contains("warning: audio skipped: fluidsynth is not installed (apt-get install fluidsynth fluid-soundfont-gm)"),
                      skipped.stderr)
        let page = try String(contentsOf: hidden, encoding: .utf8)
        XCTAssertTrue(page.contains("<section id=\"audio\">"))
        XCTAssertTrue(page.contains("Audio skipped: fluidsynth is not installed (apt-get install fluidsynth fluid-soundfont-gm)."))
        XCTAssertFalse(page.contains("<audio"))

        guard fluidsynthAvailable else {
            throw XCTSkip("fluidsynth or fluid-soundfont-gm not installed: only the skip path was tested")
        }
        let out = tmp.appendingPathComponent("audio.html")
        let r = try CLI.run(["report", gen, "-o", out.path, "--bars", "2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let html = try String(contentsOf: out, encoding: .utf8)
        let start = try XCTUnwrap(html.range(of: "data:audio/wav;base64,"))
        let b64 = html[start.upperBound...].prefix { $0 != "\"" }
        let wav = try XCTUnwrap(Data(base64Encoded: String(b64)))
        XCTAssertEqual(String(decoding: wav.prefix(4), as: UTF8.self), "RIFF")
        XCTAssertEqual(wav[22], 1, "mono")
        XCTAssertEqual(Int(wav[24]) | Int(wav[25]) << 8, 22050)
        // 2 bars at 120 BPM = 4 s, plus the 1.5 s tail: about 5.5 s of 16-bit samples, and
        // FluidSynth renders on until the voices still sounding at the track's end have died
        // away (a splash or ride struck late in bar 2 rings about 3 s more). The whole file,
        // 300 hits, is 16 bars: 32 s.
        let seconds = Double(wav.count - 44) / 44100
        XCTAssertGreaterThan(seconds, 4)
        XCTAssertLessThan(seconds, 10)
        // The label gives both lengths, the clip's as its samples make it (it gave the bars' only,
        // beside the size of the longer clip).
        let label = String(format: "(4.0 s of bars; the clip %.1f s with the last notes ringing out, ", seconds)
        XCTAssertTrue(html.contains(label), "\(label) in \(html.prefix(200))")
    }

    // MARK: Bad input

    func testBadInputsAreNamedAndTheRestIsDrawn() throws {
        let gen = try sample("g.mid", seed: 4)
        let empty = try checkpoints(rows: 0, name: "empty")
        let noLog = tmp.appendingPathComponent("nolog")
        try FileManager.default.createDirectory(at: noLog, withIntermediateDirectories: true)
        let silent = tmp.appendingPathComponent("silent.mid")
        try TinySMF.bytes(events: [(0, [0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20])]).write(to: silent)
        let junk = tmp.appendingPathComponent("junk.mid")
        try Data("MThd but not really".utf8).write(to: junk)
        let missing = tmp.appendingPathComponent("missing.mid").path
        let out = tmp.appendingPathComponent("r.html")

        let r = try CLI.run(["report", "--checkpoints", empty.path, gen, silent.path, junk.path, missing, "-o", out.path, "--no-audio"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let warnings = r.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        XCTAssertTrue(warnings.contains { $0.contains("\(empty.path)/train_log.csv: no evaluation rows yet") }, r.stderr)
        XCTAssertTrue(warnings.contains { $0.contains("\(silent.path): no drum hits") }, r.stderr)
        XCTAssertTrue(warnings.contains { $0.contains("\(junk.path): not a readable MIDI file") }, r.stderr)
        XCTAssertTrue(warnings.contains { $0.contains("\(missing): no such MIDI file") }, r.stderr)
        XCTAssertEqual(warnings.count, 4, r.stderr)
        let html = try String(contentsOf: out, encoding: .utf8)
        XCTAssertEqual(sections(html), ["warnings", "curves", "piano-rolls", "histograms", "audio"])
        XCTAssertTrue(html.contains("no evaluation rows yet"))
        XCTAssertEqual(html.components(separatedBy: "class=\"hit\"").count - 1, try hitsBefore(gen, tick: 8 * 1920))

        // A checkpoint directory without train_log.csv, and a model directory without model.json.
        let r2 = try CLI.run(["report", "--checkpoints", noLog.path, "--model", noLog.path, gen, "-o", out.path, "--no-audio"])
        XCTAssertEqual(r2.status, 0, r2.stderr)
        XCTAssertTrue(r2.stderr.contains("warning: \(noLog.path): no train_log.csv here"), r2.stderr)
        XCTAssertTrue(r2.stderr.contains("warning: \(noLog.path)/model.json: no such model manifest"), r2.stderr)

        // Nothing at all to draw: exit 1, no page.
        let none = tmp.appendingPathComponent("none.html")
        let r3 = try CLI.run(["report", "--checkpoints", empty.path, silent.path, "-o", none.path])
        XCTAssertEqual(r3.status, 1)
        XCTAssertTrue(r3.stderr.contains("error: nothing could be drawn"), r3.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: none.path))
        // A log whose rows hold nothing finite to draw is named, with why.
        let nan = tmp.appendingPathComponent("nan")
        try FileManager.default.createDirectory(at: nan, withIntermediateDirectories: true)
        try "step,epoch,smoothed_loss,learning_rate,train_loss,validation_loss\n9223372036854775807,1,nan,nan,nan,inf\n"
            .write(to: nan.appendingPathComponent("train_log.csv"), atomically: true, encoding: .utf8)
        let r6 = try CLI.run(["report", "--checkpoints", nan.path, "-o", none.path])
        XCTAssertEqual(r6.status, 1)
        XCTAssertTrue(r6.stderr.contains("warning: \(nan.path)/train_log.csv: none of its 1 row(s) has a finite loss, accuracy or learning rate to draw"), r6.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: none.path))

        // An output that cannot be written; no input at all.
        let blocker = tmp.appendingPathComponent("file")
        try Data().write(to: blocker)
        let r4 = try CLI.run(["report", gen, "--no-audio", "-o", blocker.appendingPathComponent("r.html").path])
        XCTAssertEqual(r4.status, 1)
        XCTAssertTrue(r4.stderr.contains("error: \(blocker.path)/r.html: \(blocker.path) is not a directory"), r4.stderr)
        let r5 = try CLI.run(["report"])
        XCTAssertNotEqual(r5.status, 0)
        XCTAssertTrue(r5.stderr.contains("nothing to report"), r5.stderr)
    }

    /// A run whose losses became nan (it diverged) is said to be one, on stderr and the page;
    /// its nan rows are evaluations, not logged steps between them.
    func testADivergedRunIsNamed() throws {
        let dir = tmp.appendingPathComponent("diverged")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var text = "step,epoch,smoothed_loss,learning_rate,train_loss,train_accuracy,validation_loss,validation_accuracy\n"
        for i in 1...20 {
            let loss = i <= 10 ? String(5 - 0.1 * Double(i)) : "nan"
            text += "\(i * 100),\(i),\(loss),0.001,\(loss),0.3,\(loss),0.2\n"
        }
        try text.write(to: dir.appendingPathComponent("train_log.csv"), atomically: true, encoding: .utf8)
        let out = tmp.appendingPathComponent("d.html")
        let r = try CLI.run(["report", "--checkpoints", dir.path, "-o", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let line = "\(dir.path)/train_log.csv: the losses are not finite (nan or inf) from step 1100 on, 10 row(s): "
            + "the run diverged; the loss curves stop at step 1000"
        XCTAssertTrue(r.stderr.contains("warning: \(line)"), r.stderr)
        let html = try String(contentsOf: out, encoding: .utf8)
        XCTAssertEqual(sections(html), ["warnings", "curves"])
        XCTAssertTrue(html.contains(line), "the page's warnings")
        XCTAssertTrue(html.contains("20 evaluation(s), steps 100 to 2k"), "nan rows are evaluations")
    }

    /// Files not named NAME-N beyond the colours are one set: a legend of one key, not eleven.
    func testManyLooseFilesAreOneSet() throws {
        let paths = try (1...11).map { i -> String in
            let url = tmp.appendingPathComponent("beat_\(i).mid")
            try TinySMF.rockBeat.write(to: url)
            return url.path
        }
        let out = tmp.appendingPathComponent("many.html")
        let r = try CLI.run(["report"] + paths + ["--no-audio", "-o", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let html = try String(contentsOf: out, encoding: .utf8)
        let notes = try XCTUnwrap(html.components(separatedBy: "<figure>").first { $0.contains("<figcaption>Notes") })
        XCTAssertEqual(notes.components(separatedBy: "class=\"key\"").count - 1, 1, "one set")
        XCTAssertTrue(notes.contains("11 files"), notes)
    }

    /// A 229-character file name breaks inside its legend key, heading and header cells: at
    /// 1280 px the page is no wider than its window and no card or table scrolls sideways.
    func testALongFileNameStaysInsideThePage() throws {
        let many = tmp.appendingPathComponent("many"), long = tmp.appendingPathComponent("long")
        for dir in [many, long] { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true) }
        var paths = try (1...3).map { i -> String in
            let url = many.appendingPathComponent("take-\(i).mid")
            try TinySMF.rockBeat.write(to: url)
            return url.path
        }
        let name = String(repeating: "a_very_long_generated_drum_file_name_", count: 6) + "end"
        XCTAssertEqual(name.count, 225, "229 characters with .mid")
        let longFile = long.appendingPathComponent(name + ".mid")
        try TinySMF.rockBeat.write(to: longFile)
        paths.append(longFile.path)
        let out = tmp.appendingPathComponent("long.html")
        let r = try CLI.run(["report"] + paths + ["--reference", try referenceFolder().path, "--no-audio", "-o", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let html = try String(contentsOf: out, encoding: .utf8)
        XCTAssertTrue(html.contains("<h3>drummer stats: \(name)</h3>"), "the long name's own stats table")
        guard let chromium = Browser.find() else {
            throw XCTSkip("chromium is not installed (Scripts/test installs Debian's chromium): the layout was not checked")
        }
        let layout = try Browser.overflow(chromium, html: html, width: 1280, scratch: tmp)
        XCTAssertEqual(layout.innerWidth, 1280, "the frame is 1280 px wide")
        XCTAssertLessThanOrEqual(layout.scrollWidth, 1280, "the page is wider than its window")
        XCTAssertEqual(layout.wider, [], "elements wider than their box (tag.class: scroll width/client width)")
        XCTAssertEqual(layout.broken, [], "the long name's swatch beside its first line; short names whole")
    }

    /// Three generated sets and a reference: each histogram's caption gives each set's total
    /// variation distance to the reference (a pair of histograms had one, three sets none).
    func testEachSetsDistanceToTheReference() throws {
        let a = tmp.appendingPathComponent("a"), b = tmp.appendingPathComponent("b")
        for dir in [a, b] { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true) }
        let six = TinySMF.drums((0..<6).map { (tick: $0 * 240, note: 42, velocity: UInt8(40 + $0 * 10)) }, meter: (6, 8))
        let files: [(URL, Data)] = [(a.appendingPathComponent("take-1.mid"), TinySMF.rockBeat),
                                    (a.appendingPathComponent("take-2.mid"), TinySMF.rockBeat),
                                    (b.appendingPathComponent("six.mid"), six),
                                    (b.appendingPathComponent("rock.mid"), TinySMF.rockBeat)]
        for (url, data) in files { try data.write(to: url) }
        let out = tmp.appendingPathComponent("sets.html")
        let r = try CLI.run(["report"] + files.map(\.0.path) + ["--reference", try referenceFolder().path, "--no-audio", "-o", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let html = try String(contentsOf: out, encoding: .utf8)
        for title in ["Notes", "Deltas", "Velocities", "Position in bar"] {
            let fig = try XCTUnwrap(html.components(separatedBy: "<figure>").first { $0.contains("<figcaption>\(title)") }, title)
            XCTAssertEqual(fig.components(separatedBy: "class=\"key\"").count - 1, 4, "three sets and the reference: \(title)")
            let caption = try XCTUnwrap(fig.components(separatedBy: "<figcaption>").last?.components(separatedBy: "<span").first)
            XCTAssertNotNil(caption.range(of: #" \(total variation distance to the reference: take \(2 files\) 0\.\d{3}, six [01]\.\d{3}, rock 0\.\d{3}\)$"#,
                                          options: .regularExpression), caption)
        }
        // The rock beat twice and once: the same shares, the same distance.
        let notes = try XCTUnwrap(html.components(separatedBy: "<figcaption>Notes").dropFirst().first?
            .components(separatedBy: "<span").first?.components(separatedBy: "to the reference: ").last)
        let values = notes.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",)")) }
            .filter { Double($0) != nil }
        XCTAssertEqual(values.count, 3, notes)
        XCTAssertEqual(values.first, values.last, notes)
    }

    /// A reference that plays its hi-hats on the Groove corpus's edge notes 22 and 26 in one bar and
    /// on 42 in the other: the Notes
    /// histogram reads them as the 42 and 46 a General MIDI kit sounds, as the stats table does,
    /// so the same beat on 42 and 46 is no different (22 and 26 were bars of their own).
    func testNotesAreReadAsAGeneralMIDIKitSoundsThem() throws {
        func beat(closed: [UInt8], open: UInt8) -> Data {
            var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
            for bar in 0..<2 {
                for i in 0..<8 { hits.append((bar * 1920 + i * 240, i == 7 ? open : closed[bar], 80)) }
                hits += [(bar * 1920, 36, 100), (bar * 1920 + 480, 38, 100), (bar * 1920 + 960, 36, 100), (bar * 1920 + 1440, 38, 100)]
            }
            return TinySMF.drums(hits, meter: (4, 2))
        }
        let ref = tmp.appendingPathComponent("edges")
        try FileManager.default.createDirectory(at: ref, withIntermediateDirectories: true)
        try beat(closed: [22, 42], open: 26).write(to: ref.appendingPathComponent("groove.mid"))
        let gen = tmp.appendingPathComponent("g.mid")
        try beat(closed: [42, 42], open: 46).write(to: gen)
        let out = tmp.appendingPathComponent("edges.html")
        let r = try CLI.run(["report", gen.path, "--reference", ref.path, "--no-audio", "-o", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let html = try String(contentsOf: out, encoding: .utf8)
        let notes = try XCTUnwrap(html.components(separatedBy: "<figure>").first { $0.contains("<figcaption>Notes") })
        XCTAssertTrue(notes.contains("<figcaption>Notes, read as a General MIDI kit sounds them (22 as 42, 26 as 46 …) "
                                     + "(total variation distance 0.000)"), notes)
        XCTAssertFalse(notes.contains("(22)") || notes.contains("(26)"), "no bar for the edge notes")
        XCTAssertTrue(html.contains("<tr><th>distinct notes</th><td>4</td><td>4</td></tr>"), "distinct notes as the kit sounds them")
    }

    /// A grid run logs train_loss and train_loss_all (and validation_loss and _all, train_accuracy
    /// and train_accuracy_note) alike: each such pair is one line, named "a = b" in the legend,
    /// not a line drawn exactly over another with a legend entry for nothing visible.
    func testIdenticalLogColumnsAreDrawnOnce() throws {
        let dir = tmp.appendingPathComponent("grid")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var text = "step,smoothed_loss,learning_rate,train_loss,train_accuracy,train_accuracy_note,validation_loss,"
            + "validation_accuracy,train_loss_all,validation_loss_all\n"
        for i in 1...8 {
            let t = 3 - 0.1 * Double(i), v = 3.2 - 0.05 * Double(i), a = 0.2 + 0.02 * Double(i)
            text += "\(i * 100),\(t + 0.3),0.002,\(t),\(a),\(a),\(v),\(a - 0.05),\(t),\(v)\n"
        }
        try text.write(to: dir.appendingPathComponent("train_log.csv"), atomically: true, encoding: .utf8)
        let out = tmp.appendingPathComponent("grid.html")
        let r = try CLI.run(["report", "--checkpoints", dir.path, "-o", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let html = try String(contentsOf: out, encoding: .utf8)
        let figures = html.components(separatedBy: "<figure>").dropFirst()
        func legend(_ title: String) throws -> [String] {
            let fig = try XCTUnwrap(figures.first { $0.contains("<figcaption>\(title)") }, title)
            XCTAssertTrue(fig.contains("<figcaption>\(title); columns with the same values are drawn once, named together<"), title)
            XCTAssertEqual(fig.components(separatedBy: "<polyline").count - 1, fig.components(separatedBy: "class=\"key\"").count - 1,
                           "one line per legend entry: \(title)")
            return fig.components(separatedBy: "</span>").filter { !$0.contains("<") && !$0.isEmpty }
        }
        XCTAssertEqual(try legend("Loss (nats per event)"), ["smoothed_loss", "train_loss = train_loss_all", "validation_loss = validation_loss_all"])
        XCTAssertEqual(try legend("Accuracy"), ["train_accuracy = train_accuracy_note", "validation_accuracy"])
    }

    func testReferenceFolderHasVelocitiesPositionsAndAHeldOutRoll() throws {
        let gen = try sample("g.mid", seed: 6)
        let ref = try referenceFolder()
        let out = tmp.appendingPathComponent("ref.html")
        let r = try CLI.run(["report", "--reference", ref.path, gen, "--no-audio", "-o", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stderr.contains("warning:"), r.stderr)
        let html = try String(contentsOf: out, encoding: .utf8)
        XCTAssertTrue(html.contains("(folder of MIDI files, 47 hits)"), "15 + 32 hits")
        XCTAssertTrue(html.contains("<figcaption>reference: \(ref.path)/"), "a held-out roll from the folder")
        // Velocity and position histograms have both sources: two bar groups each.
        for title in ["Velocities", "Position in bar (nearest sixteenth)"] {
            let fig = try XCTUnwrap(html.components(separatedBy: "<figure>").first { $0.contains("<figcaption>\(title)") }, title)
            XCTAssertEqual(fig.components(separatedBy: "class=\"bars\"").count - 1, 2, title)
            XCTAssertTrue(fig.contains("total variation distance"), title)
        }
        // A reference that does not exist: named, and the generated file still drawn.
        let missing = tmp.appendingPathComponent("no-such-dir").path
        let r2 = try CLI.run(["report", "--reference", missing, gen, "--no-audio", "-o", out.path])
        XCTAssertEqual(r2.status, 0, r2.stderr)
        XCTAssertTrue(r2.stderr.contains("warning: \(missing): no such reference"), r2.stderr)
        XCTAssertTrue(try String(contentsOf: out, encoding: .utf8).contains("class=\"hit\""))
    }

    func testPageToStdoutAndALongLogStaysSmall() throws {
        // 100k steps, an evaluation every 100: 1,000 rows.
        let dir = tmp.appendingPathComponent("long")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var text = "step,smoothed_loss,learning_rate,train_loss,train_accuracy,validation_loss,validation_accuracy\n"
        for i in 1...1000 {
            let x = Double(i)
            text += "\(i * 100),\(2.1 + 2 / x),\(1 / Double(1 + i / 200)),\(2 + 2 / x),\(0.4 - 0.2 / x),\(3 + abs(x - 700) / 1000),0.2\n"
        }
        try text.write(to: dir.appendingPathComponent("train_log.csv"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["report", "--checkpoints", dir.path, "-o", "-"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("<!DOCTYPE html>"))
        XCTAssertLessThan(r.stdout.utf8.count, 150_000, "a 1,000-row log gives a small page")
        let polylines = r.stdout.components(separatedBy: "<polyline points=\"").dropFirst()
        XCTAssertEqual(polylines.count, 6, "3 loss, 2 accuracy and 1 learning-rate series")
        for p in polylines {
            let points = p.prefix { $0 != "\"" }.split(separator: " ").count
            XCTAssertLessThanOrEqual(points, 500)
            XCTAssertGreaterThan(points, 100)
        }
        XCTAssertTrue(r.stdout.contains("best validation: step 70000"), "the best step survives downsampling")
    }

    /// A model whose weight files do not hold it (cut short, missing, changed) is named on
    /// stderr and in the model card as sample names it, and counted in the warnings; the
    /// checksums row says whether they were verified.
    func testABrokenModelIsNamedNotShownClean() throws {
        let groove = CLI.repoRoot.appendingPathComponent("models/groove")
        let gen = tmp.appendingPathComponent("g.mid")
        try TinySMF.rockBeat.write(to: gen)
        let out = tmp.appendingPathComponent("r.html")
        func model(_ name: String, _ damage: (URL) throws -> Void) throws -> URL {
            let dir = tmp.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for f in ["model.json", "Wx.bin", "Wx1.bin", "Wy.bin"] {
                try FileManager.default.copyItem(at: groove.appendingPathComponent(f), to: dir.appendingPathComponent(f))
            }
            try damage(dir)
            return dir
        }
        let cut = try model("cut") { dir in
            let wx = dir.appendingPathComponent("Wx.bin")
            let whole = try Data(contentsOf: wx)
            try whole.prefix(whole.count / 2).write(to: wx)
        }
        let noWy = try model("no-wy") { try FileManager.default.removeItem(at: $0.appendingPathComponent("Wy.bin")) }
        let changed = try model("changed") { dir in
            let wy = dir.appendingPathComponent("Wy.bin")
            var bytes = try Data(contentsOf: wy)
            bytes[0] ^= 1
            try bytes.write(to: wy)
        }
        for (dir, message) in [(cut, "\(cut.path)/Wx.bin: "), (noWy, "\(noWy.path)/Wy.bin: missing from the model directory"),
                               (changed, "\(changed.path)/Wy.bin: SHA-256 ")] {
            let r = try CLI.run(["report", gen.path, "--model", dir.path, "-o", out.path, "--no-audio"])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stderr.contains("warning: " + message), r.stderr)
            XCTAssertTrue((r.stdout + r.stderr).contains("; 1 warning(s)"), r.stdout + r.stderr)
            let html = try String(contentsOf: out, encoding: .utf8)
            XCTAssertTrue(html.contains("The model does not load: " + message), dir.path)
            XCTAssertTrue(html.contains(".bin files in model.json, not verified: the model does not load"), dir.path)
        }
        let r = try CLI.run(["report", gen.path, "--model", groove.path, "-o", out.path, "--no-audio"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse((r.stdout + r.stderr).contains("warning"), r.stdout + r.stderr)
        XCTAssertTrue(try String(contentsOf: out, encoding: .utf8).contains("SHA-256 of the 3 .bin files in model.json, verified"))
    }
}

/// Headless Chromium: found on PATH, run with a timeout, no sandbox (tests may run as root).
enum Browser {
    /// The first chromium on PATH that runs (`--version` exits 0: Ubuntu's snap stub does not).
    static func find() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            for dir in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
                let url = URL(fileURLWithPath: "\(dir)/\(name)")
                let p = Process()
                p.executableURL = url
                p.arguments = ["--version"]
                p.standardOutput = FileHandle.nullDevice
                p.standardError = FileHandle.nullDevice
                guard (try? p.run()) != nil else { continue }
                p.waitUntilExit()
                if p.terminationStatus == 0 { return url }
            }
        }
        return nil
    }

    /// Where the screenshot is kept: $DRUMMER_TEST_ARTIFACTS, or .build/test-artifacts.
    static var artifactsDirectory: URL {
        let dir = ProcessInfo.processInfo.environment["DRUMMER_TEST_ARTIFACTS"].map { URL(fileURLWithPath: $0) }
            ?? CLI.repoRoot.appendingPathComponent(".build/test-artifacts")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func arguments(profile: URL) -> [String] {
        ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
         "--no-first-run", "--user-data-dir=\(profile.path)"]
    }

    static func dumpDOM(_ chromium: URL, page: URL, profile: URL) throws -> String {
        try run(chromium, arguments(profile: profile) + ["--dump-dom", page.absoluteString])
    }

    static func screenshot(_ chromium: URL, page: URL, to png: URL, profile: URL) throws {
        try? FileManager.default.removeItem(at: png)
        _ = try run(chromium, arguments(profile: profile) + ["--screenshot=\(png.path)", "--window-size=1280,2000",
                                                              page.absoluteString])
        XCTAssertTrue(FileManager.default.fileExists(atPath: png.path), "chromium wrote no screenshot")
    }

    /// `html` laid out in a frame `width` px wide (srcdoc: the same origin as the probe, which
    /// measures it once it has loaded): the page's scroll width, the frame's inner width, and
    /// each figure, table, heading or caption whose content is wider than its box (tables
    /// scroll sideways inside themselves, so the page's width alone does not show them), and
    /// what wraps badly: a legend key whose name starts below its swatch, a header cell of one
    /// short word (12 characters at most) broken over lines.
    static func overflow(_ chromium: URL, html: String, width: Int, scratch: URL)
        throws -> (scrollWidth: Int, innerWidth: Int, wider: [String], broken: [String])
    {
        let page = scratch.appendingPathComponent("frame-\(width).html")
        let escaped = html.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
        try ("<!doctype html><html><body style=\"margin:0\"><iframe id=\"f\" style=\"width:\(width)px;height:900px;border:0\" srcdoc=\""
             + escaped + "\"></iframe><script>document.getElementById('f').addEventListener('load',()=>{"
             + "const f=document.getElementById('f'),d=f.contentDocument;"
             + "const wide=[...d.querySelectorAll('figure,figcaption,table,h2,h3,th,td,header,p')]"
             + ".filter(e=>e.scrollWidth>e.clientWidth+1)"
             + ".map(e=>e.tagName.toLowerCase()+'.'+e.className+': '+e.scrollWidth+'/'+e.clientWidth);"
             + "const text=e=>{const t=d.createTreeWalker(e,NodeFilter.SHOW_TEXT).nextNode(),r=d.createRange();"
             + "if(!t)return[];r.selectNodeContents(t);return[...r.getClientRects()]};"
             + "const broken=[...d.querySelectorAll('.key')].filter(k=>{const s=k.querySelector('.swatch'),r=text(k);"
             + "return s&&r.length>0&&r[0].top>=s.getBoundingClientRect().bottom}).map(k=>'key below its swatch: '+k.textContent.slice(0,30))"
             + ".concat([...d.querySelectorAll('th')].filter(e=>{const w=e.textContent;return w.length>0&&w.length<=12&&!w.includes(' ')"
             + "&&new Set(text(e).map(r=>Math.round(r.top))).size>1}).map(e=>'word broken: '+e.textContent));"
             + "document.body.setAttribute('data-broken',broken.join('|'));"
             + "document.body.setAttribute('data-widths',d.documentElement.scrollWidth+'/'+f.contentWindow.innerWidth);"
             + "document.body.setAttribute('data-wider',wide.join('|'))})</script></body></html>")
            .write(to: page, atomically: true, encoding: .utf8)
        let dom = try run(chromium, arguments(profile: scratch.appendingPathComponent("profile"))
                          + ["--virtual-time-budget=10000", "--dump-dom", page.absoluteString])
        guard let w = dom.range(of: #"data-widths="(\d+)/(\d+)""#, options: .regularExpression),
              let o = dom.range(of: #"data-wider="[^"]*""#, options: .regularExpression),
              let b = dom.range(of: #"data-broken="[^"]*""#, options: .regularExpression) else {
            XCTFail("the probe did not run: \(dom.prefix(300))")
            return (.max, 0, [], [])
        }
        let widths = dom[w].dropFirst("data-widths=\"".count).dropLast().split(separator: "/").compactMap { Int($0) }
        let wider = dom[o].dropFirst("data-wider=\"".count).dropLast().split(separator: "|").map(String.init)
        let broken = dom[b].dropFirst("data-broken=\"".count).dropLast().split(separator: "|").map(String.init)
        return (widths.first ?? .max, widths.last ?? 0, wider, broken)
    }

    /// Runs `tool`, returns its stdout; fails after 120 s.
    static func run(_ tool: URL, _ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = tool
        p.arguments = args
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: out) }
        let handle = try FileHandle(forWritingTo: out)
        p.standardOutput = handle
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(120)
        while p.isRunning, Date() < deadline { usleep(50_000) }
        if p.isRunning {
            p.terminate()
            p.waitUntilExit()
            XCTFail("chromium did not finish within 120 s")
        }
        try handle.close()
        return String(decoding: try Data(contentsOf: out), as: UTF8.self)
    }

    /// Values of the named attributes anywhere in `html` (double-quoted, as Chromium serialises).
    static func attributeValues(_ html: String, names: [String]) -> [String] {
        var values: [String] = []
        for name in names {
            var rest = html[...]
            while let r = rest.range(of: " \(name)=\"") {
                let after = rest[r.upperBound...]
                values.append(String(after.prefix { $0 != "\"" }))
                rest = after
            }
        }
        return values
    }
}
