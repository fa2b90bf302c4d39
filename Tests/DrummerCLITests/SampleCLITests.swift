import XCTest
import Foundation
import MIDIParse

/// A minimal, independent reader for the files `drummer sample` writes (format 0,
/// no running status): enough to check header, tempo, channel, velocity and onsets.
struct TinyMIDI {
    var format = -1, tracks = 0, ppq = 0
    var tempos: [Int] = []
    /// (absolute tick, status, note, velocity) of every NOTE ON with velocity > 0.
    var noteOns: [(tick: Int, status: UInt8, note: Int, velocity: Int)] = []
    var noteOffs = 0
    /// (absolute tick, numerator, denominator) of every time signature.
    var timeSignatures: [(tick: Int, numerator: Int, denominator: Int)] = []

    init?(_ b: [UInt8]) {
        guard b.count >= 22, Array(b[0..<4]) == Array("MThd".utf8) else { return nil }
        format = Int(b[8]) << 8 | Int(b[9])
        tracks = Int(b[10]) << 8 | Int(b[11])
        ppq = Int(b[12]) << 8 | Int(b[13])
        guard Array(b[14..<18]) == Array("MTrk".utf8) else { return nil }
        let len = Int(b[18]) << 24 | Int(b[19]) << 16 | Int(b[20]) << 8 | Int(b[21])
        var i = 22, tick = 0
        let end = 22 + len
        guard end <= b.count else { return nil }
        func vlq() -> Int {
            var v = 0
            while i < end {
                let x = b[i]; i += 1
                v = v << 7 | Int(x & 0x7F)
                if x & 0x80 == 0 { break }
            }
            return v
        }
        while i < end {
            tick += vlq()
            guard i < end else { return nil }
            let status = b[i]; i += 1
            if status == 0xFF {
                let type = b[i]; i += 1
                let n = vlq()
                if type == 0x51, n == 3 { tempos.append(Int(b[i]) << 16 | Int(b[i + 1]) << 8 | Int(b[i + 2])) }
                if type == 0x58, n == 4 { timeSignatures.append((tick, Int(b[i]), 1 << Int(b[i + 1]))) }
                i += n
            } else if status & 0xF0 == 0x90, b[i + 1] > 0 {
                noteOns.append((tick, status, Int(b[i]), Int(b[i + 1]))); i += 2
            } else if status & 0xF0 == 0x80 || status & 0xF0 == 0x90 {
                noteOffs += 1; i += 2
            } else {
                return nil  // not something drummer writes
            }
        }
    }

    /// [note, delta] per hit.
    var events: [[Int]] {
        var last = 0
        return noteOns.map { on in
            defer { last = on.tick }
            return [on.note, on.tick - last]
        }
    }
}

final class SampleCLITests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("sample-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    /// A small model directory written by hand (no checksums, like the original's):
    /// 4 notes, 5 ticks, H = 6, weights from a fixed LCG.
    private func tinyModel(_ name: String = "tiny") throws -> URL {
        let dir = tmp.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let N = 4, K = 5, H = 6, V = N + K
        var state: UInt32 = 12345
        func next() -> Float {
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int(state >> 8) % 2001 - 1000) / 500
        }
        func bytes(_ n: Int) -> Data {
            var d = Data()
            for _ in 0..<n { withUnsafeBytes(of: next().bitPattern.littleEndian) { d.append(contentsOf: $0) } }
            return d
        }
        try bytes((V + H + 1) * 4 * H).write(to: dir.appendingPathComponent("Wx.bin"))
        try bytes((H + 1) * V).write(to: dir.appendingPathComponent("Wy.bin"))
        try """
            {"ix_to_note": [36, 38, 42, 46], "ix_to_tick": [0, 60, 120, 240, 480], "hidden_size": 6,
             "Wx_shape": [\(V + H + 1), \(4 * H)], "Wy_shape": [\(H + 1), \(V)]}
            """.write(to: dir.appendingPathComponent("model.json"), atomically: true, encoding: .utf8)
        return dir
    }

    private func json(_ r: CLIResult) throws -> [[String: Any]] {
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return try XCTUnwrap(obj?["files"] as? [[String: Any]], r.stdout)
    }

    func testSampleWritesDrumChannelFileMatchingTheSampledEvents() throws {
        let model = try tinyModel()
        let out = tmp.appendingPathComponent("g.mid").path
        let r = try CLI.run(["sample", model.path, "-n", "400", "--seed", "9", "--bpm", "100", "-o", out, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let files = try json(r)
        XCTAssertEqual(files.count, 1)
        XCTAssertEqual(files[0]["path"] as? String, out)
        let events = try XCTUnwrap(files[0]["events"] as? [[Int]])
        let midi = try XCTUnwrap(TinyMIDI([UInt8](Data(contentsOf: URL(fileURLWithPath: out)))))
        XCTAssertEqual(midi.format, 0)
        XCTAssertEqual(midi.tracks, 1)
        XCTAssertEqual(midi.ppq, 480)
        XCTAssertEqual(midi.tempos, [600_000])
        XCTAssertTrue(midi.noteOns.allSatisfy { $0.status == 0x99 && $0.velocity == 100 }, "a model without velocity plays at 100")
        XCTAssertEqual(midi.noteOffs, midi.noteOns.count)
        XCTAssertEqual(midi.events, events)
        XCTAssertGreaterThan(events.count, 300)  // same-key hits at one onset are written once
        XCTAssertTrue(events.dropFirst().contains { $0[1] == 0 }, "simultaneous hits occur")
        XCTAssertTrue(events.allSatisfy { [36, 38, 42, 46].contains($0[0]) && [0, 60, 120, 240, 480].contains($0[1]) })
    }

    /// `drummer convert-midi` on a folder holding one generated file gives back exactly the
    /// sampled (note, delta) sequence, simultaneous hits (delta 0) included.
    func testConvertMIDIGivesBackTheSampledSequence() throws {
        let model = try tinyModel()
        let folder = tmp.appendingPathComponent("generated")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let s = try CLI.run(["sample", model.path, "-n", "500", "--seed", "12", "--json",
                             "-o", folder.appendingPathComponent("g.mid").path])
        XCTAssertEqual(s.status, 0, s.stderr)
        let sampled = try XCTUnwrap(try json(s)[0]["events"] as? [[Int]])
        XCTAssertTrue(sampled.dropFirst().contains { $0[1] == 0 })
        let data = tmp.appendingPathComponent("data")
        let c = try CLI.run(["convert-midi", folder.path, "-o", data.path])
        XCTAssertEqual(c.status, 0, c.stderr + c.stdout)
        let vocab = try XCTUnwrap(JSONSerialization.jsonObject(
            with: Data(contentsOf: data.appendingPathComponent("vocab.json"))) as? [String: Any])
        let ixToNote = try XCTUnwrap(vocab["ix_to_note"] as? [Int])
        let ixToTick = try XCTUnwrap(vocab["ix_to_tick"] as? [Int])
        let pairs = try Self.int32Pairs(npy: Data(contentsOf: data.appendingPathComponent("events.npy")))
        XCTAssertEqual(pairs.map { [ixToNote[$0.0], ixToTick[$0.1]] }, sampled)
    }

    /// The (note index, tick index) rows of an int32 [E, 2] .npy file.
    static func int32Pairs(npy d: Data) throws -> [(Int, Int)] {
        let b = [UInt8](d)
        guard b.count > 10, b[0] == 0x93, Array(b[1..<6]) == Array("NUMPY".utf8) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        let (headerLength, start) = b[6] == 1 ? (Int(b[8]) | Int(b[9]) << 8, 10)
            : (Int(b[8]) | Int(b[9]) << 8 | Int(b[10]) << 16 | Int(b[11]) << 24, 12)
        let header = String(decoding: b[start..<(start + headerLength)], as: UTF8.self)
        guard header.contains("'<i4'"), header.contains("False") else { throw CocoaError(.fileReadCorruptFile) }
        var out: [(Int, Int)] = []
        var i = start + headerLength
        func int32(_ k: Int) -> Int { Int(Int32(bitPattern: UInt32(b[k]) | UInt32(b[k + 1]) << 8 | UInt32(b[k + 2]) << 16 | UInt32(b[k + 3]) << 24)) }
        while i + 8 <= b.count {
            out.append((int32(i), int32(i + 4)))
            i += 8
        }
        return out
    }

    func testSeedReproducesAndCountNamesFiles() throws {
        let model = try tinyModel()
        let a = tmp.appendingPathComponent("a.mid").path, b = tmp.appendingPathComponent("b.mid").path
        let many = tmp.appendingPathComponent("many.mid").path
        XCTAssertEqual(try CLI.run(["sample", model.path, "--seed", "5", "-o", a]).status, 0)
        XCTAssertEqual(try CLI.run(["sample", model.path, "--seed", "5", "-o", b]).status, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: a)), try Data(contentsOf: URL(fileURLWithPath: b)))
        let r = try CLI.run(["sample", model.path, "--seed", "4", "--count", "3", "-o", many])
        XCTAssertEqual(r.status, 0, r.stderr)
        for k in 1...3 {
            let p = tmp.appendingPathComponent("many-\(k).mid").path
            XCTAssertTrue(r.stdout.contains("wrote \(p)"), r.stdout)
            XCTAssertTrue(FileManager.default.fileExists(atPath: p))
        }
        // File k uses seed S + k - 1.
        XCTAssertEqual(try Data(contentsOf: tmp.appendingPathComponent("many-2.mid")),
                       try Data(contentsOf: URL(fileURLWithPath: a)))
        XCTAssertNotEqual(try Data(contentsOf: tmp.appendingPathComponent("many-1.mid")),
                          try Data(contentsOf: URL(fileURLWithPath: a)))
        XCTAssertFalse(FileManager.default.fileExists(atPath: many))
        let names = try FileManager.default.contentsOfDirectory(atPath: tmp.path)
        XCTAssertFalse(names.contains { $0.hasPrefix(".") }, "no temporary files left: \(names)")
        // The last seeds: S + K − 1 may be the largest seed, not wrap past it to 0 (it did, unsaid).
        let last = try CLI.run(["sample", model.path, "-n", "5", "--seed", "18446744073709551614", "--count", "2", "-o", many, "--json"])
        XCTAssertEqual(last.status, 0, last.stderr)
        XCTAssertTrue(last.stdout.contains("\"seed\":18446744073709551615") || last.stdout.contains("\"seed\" : 18446744073709551615"), last.stdout)
        let wrap = try CLI.run(["sample", model.path, "-n", "5", "--seed", "18446744073709551615", "--count", "2", "-o", many])
        XCTAssertEqual(wrap.status, 64, wrap.stderr)
        XCTAssertTrue(wrap.stderr.contains("--seed 18446744073709551615 with --count 2: the files' seeds S … S + 1 must stay within 0 … 18446744073709551615"),
                      wrap.stderr)
    }

    func testTemperatureZeroAndPrimer() throws {
        let model = try tinyModel()
        let g = tmp.appendingPathComponent("g.mid").path
        let r0 = try CLI.run(["sample", model.path, "--seed", "1", "--temperature", "0", "-n", "50", "-o", g, "--json"])
        let r1 = try CLI.run(["sample", model.path, "--seed", "1", "--temperature", "0.001", "-n", "50", "-o", g, "--json"])
        XCTAssertEqual(r0.status, 0, r0.stderr)
        XCTAssertEqual(try json(r0)[0]["events"] as? [[Int]], try json(r1)[0]["events"] as? [[Int]])
        // A generated file primes the next run.
        let p = try CLI.run(["sample", model.path, "--primer", g, "-n", "20", "-o", tmp.appendingPathComponent("p.mid").path])
        XCTAssertEqual(p.status, 0, p.stderr)
        XCTAssertTrue(p.stdout.contains("primer \(g): "), p.stdout)
    }

    /// --wav without FluidSynth on PATH: the MIDI file is written, the audio is skipped
    /// with a message, exit 0. With FluidSynth and a soundfont installed: a RIFF/WAVE file.
    func testWavRendersOrSkipsCleanly() throws {
        let model = try tinyModel()
        let mid = tmp.appendingPathComponent("w.mid").path
        let wav = tmp.appendingPathComponent("w.wav").path
        let skipped = try CLI.run(["sample", model.path, "-n", "20", "--seed", "1", "-o", mid, "--wav", wav],
                                  environment: ["PATH": "/nonexistent"])
        XCTAssertEqual(skipped.status, 0, skipped.stderr)
        XCTAssertTrue(skipped.stderr.contains("--wav skipped: fluidsynth is not installed"), skipped.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: mid))
        XCTAssertFalse(FileManager.default.fileExists(atPath: wav))
        let bad = try CLI.run(["sample", model.path, "-n", "20", "-o", mid, "--soundfont", "x.sf2"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("--soundfont is used with --wav"), bad.stderr)

        let hasSynth = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/fluidsynth") }
        let hasFont = ["/usr/share/sounds/sf2/FluidR3_GM.sf2", "/usr/share/sounds/sf2/default-GM.sf2",
                       "/usr/share/sounds/sf3/default-GM.sf3"].contains { FileManager.default.fileExists(atPath: $0) }
        guard hasSynth && hasFont else {
            throw XCTSkip("fluidsynth or fluid-soundfont-gm not installed: only the skip path was tested")
        }
        let rendered = try CLI.run(["sample", model.path, "-n", "20", "--seed", "1", "-o", mid, "--wav", wav, "--json"])
        XCTAssertEqual(rendered.status, 0, rendered.stderr)
        // --json names the audio file beside the MIDI file.
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(rendered.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((report["files"] as? [[String: Any]])?.first?["wav"] as? String, wav, rendered.stdout)
        // Dense toms and crashes at velocity 127 (the shipped model at 300 BPM, temperature 1.5)
        // stay under full scale (the gain of 0.8 clipped them).
        let groove = CLI.repoRoot.appendingPathComponent("models/groove").path
        let dense = try CLI.run(["sample", groove, "-n", "800", "--seed", "2", "--bpm", "300", "--temperature", "1.5",
                                 "-o", mid, "--wav", wav])
        XCTAssertEqual(dense.status, 0, dense.stderr)
        let pcm = try Data(contentsOf: URL(fileURLWithPath: wav)).dropFirst(44)
        let peak = stride(from: pcm.startIndex, to: pcm.endIndex - 1, by: 2).reduce(0) { m, i in
            max(m, abs(Int(Int16(bitPattern: UInt16(pcm[i]) | UInt16(pcm[i + 1]) << 8))))
        }
        XCTAssertGreaterThan(peak, 8000, "audible")
        XCTAssertLessThan(peak, 32767, "not clipped")
        let data = try Data(contentsOf: URL(fileURLWithPath: wav))
        XCTAssertGreaterThan(data.count, 44)
        XCTAssertEqual(String(decoding: data.prefix(4), as: UTF8.self), "RIFF")
        XCTAssertEqual(String(decoding: data[8..<12], as: UTF8.self), "WAVE")

        // A disk that fills while FluidSynth writes: it exits 0 with the audio cut short (its
        // header made to match); its error line fails the command, naming the WAV and why,
        // and neither file is left.
        let full = tmp.appendingPathComponent("full")
        try FileManager.default.createDirectory(at: full, withIntermediateDirectories: true)
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=200k", "tmpfs", full.path]
        try mount.run()
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else { throw XCTSkip("cannot mount a 200 KiB tmpfs here (needs root): the full-disk case is not tested") }
        defer {
            let u = Process()
            u.executableURL = URL(fileURLWithPath: "/bin/umount")
            u.arguments = [full.path]
            try? u.run()
            u.waitUntilExit()
        }
        try Data(count: 190 * 1024).write(to: full.appendingPathComponent("fill"))
        let cut = full.appendingPathComponent("cut.wav").path, cutMid = tmp.appendingPathComponent("cut.mid").path
        let r = try CLI.run(["sample", model.path, "-n", "200", "--seed", "1", "-o", cutMid, "--wav", cut])
        XCTAssertEqual(r.status, 1, r.stdout + r.stderr)
        XCTAssertTrue(r.stderr.contains("error: \(cut): FluidSynth could not render the audio: "), r.stderr)
        XCTAssertTrue(r.stderr.contains("No space left on device"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: cut))
        XCTAssertFalse(FileManager.default.fileExists(atPath: cutMid), "the run's files go in together, or none")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: full.path), ["fill"], "no temporary left")
    }

    func testErrorsAreClear() throws {
        let model = try tinyModel()
        let out = tmp.appendingPathComponent("x.mid").path
        func fails(_ args: [String], _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
            let r = try CLI.run(["sample"] + args + ["-o", out])
            XCTAssertNotEqual(r.status, 0, file: file, line: line)
            XCTAssertTrue(r.stderr.contains(message), "stderr: \(r.stderr)", file: file, line: line)
            XCTAssertFalse(r.stderr.contains("Fatal error"), file: file, line: line)
        }
        try fails([tmp.appendingPathComponent("none").path], "no such model directory")
        try fails([model.path, "-n", "0"], "-n must be between")
        try fails([model.path, "--temperature", "-1"], "--temperature")
        try fails([model.path, "--bpm", "0"], "--bpm")
        try fails([model.path, "--count", "0"], "--count")
        try fails([model.path, "--primer", tmp.appendingPathComponent("missing.mid").path], "missing.mid")
        let junk = tmp.appendingPathComponent("junk.mid")
        try Data("MThd garbage".utf8).write(to: junk)
        try fails([model.path, "--primer", junk.path], "junk.mid")
        // A broken model directory: truncated Wy.bin, then a missing model.json.
        let broken = try tinyModel("broken")
        let wy = broken.appendingPathComponent("Wy.bin")
        try Data(contentsOf: wy).dropLast(8).write(to: wy)
        try fails([broken.path], "Wy.bin: 244 bytes, expected 252")
        try FileManager.default.removeItem(at: broken.appendingPathComponent("model.json"))
        try fails([broken.path], "model.json: missing from the model directory")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    /// A 2017-layout primer whose tempo changes (120, then 90 from bar 2): with --keep-primer
    /// the kept hits play as recorded, the change where it was (the whole file was written at
    /// 90); without, the file plays at the tempo the primer ends in.
    func testKeptPrimerKeepsItsTempoChanges() throws {
        let model = try tinyModel()
        let out = tmp.appendingPathComponent("kept.mid").path
        func tempo(_ tick: Int, _ bpm: Int) -> (Int, [UInt8]) {
            let us = 60_000_000 / bpm
            return (tick, [0xFF, 0x51, 0x03, UInt8(us >> 16), UInt8(us >> 8 & 0xFF), UInt8(us & 0xFF)])
        }
        var events = [tempo(0, 120), tempo(1920, 90)]
        for q in 0..<8 { events.append((q * 480, [0x99, q % 2 == 0 ? 36 : 38, 100])) }
        let primer = tmp.appendingPathComponent("tempo.mid")
        try TinySMF.bytes(events: events).write(to: primer)
        func tempos(_ extra: [String]) throws -> [MIDITempoChange] {
            let r = try CLI.run(["sample", model.path, "--primer", primer.path, "--primer-bars", "2", "-n", "4", "--seed", "1",
                                 "-o", out] + extra)
            XCTAssertEqual(r.status, 0, r.stderr)
            return try MIDIFile.read(path: out).file.tempoMap.changes
        }
        XCTAssertEqual(try tempos(["--keep-primer"]), [MIDITempoChange(tick: 0, microsecondsPerQuarter: 500_000),
                                                       MIDITempoChange(tick: 1920, microsecondsPerQuarter: 666_666)])
        XCTAssertEqual(try tempos([]), [MIDITempoChange(tick: 0, microsecondsPerQuarter: 666_666)])
        XCTAssertEqual(try tempos(["--keep-primer", "--bpm", "100"]), [MIDITempoChange(tick: 0, microsecondsPerQuarter: 600_000)])
        // The last bar kept alone: it starts at the tempo in force there.
        let r = try CLI.run(["sample", model.path, "--primer", primer.path, "--primer-bars", "1", "--keep-primer", "-n", "4",
                             "--seed", "1", "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try MIDIFile.read(path: out).file.tempoMap.changes, [MIDITempoChange(tick: 0, microsecondsPerQuarter: 666_666)])
    }

    /// The original project's pretrained weights play through the CLI.
    func testOriginalPretrainedModel() throws {
        let src = CLI.repoRoot.appendingPathComponent("Tests/Fixtures/rnn-drummer")
        guard FileManager.default.fileExists(atPath: src.appendingPathComponent("Wx.bin").path) else {
            throw VendoredFixtureMissing()
        }
        let dir = tmp.appendingPathComponent("original")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (a, b) in [("Wx.bin", "Wx.bin"), ("Wy.bin", "Wy.bin"), ("vocab.json", "model.json")] {
            try FileManager.default.copyItem(at: src.appendingPathComponent(a), to: dir.appendingPathComponent(b))
        }
        let out = tmp.appendingPathComponent("orig.mid").path
        let r = try CLI.run(["sample", dir.path, "--seed", "1", "--primer", src.appendingPathComponent("pattern1.mid").path,
                             "-o", out, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let events = try XCTUnwrap(try json(r)[0]["events"] as? [[Int]])
        let midi = try XCTUnwrap(TinyMIDI([UInt8](Data(contentsOf: URL(fileURLWithPath: out)))))
        XCTAssertEqual(midi.events, events)
        // Exactly -n notes (1000 by default), at one velocity, 100; 4/4 bars.
        XCTAssertEqual(events.count, 1000)
        XCTAssertEqual(try json(r)[0]["velocities"] as? [Int], [Int](repeating: 100, count: 1000))
        XCTAssertTrue(midi.noteOns.allSatisfy { $0.velocity == 100 })
        XCTAssertEqual(midi.timeSignatures.map { [$0.tick, $0.numerator, $0.denominator] }, [[0, 4, 4]])
    }
}
