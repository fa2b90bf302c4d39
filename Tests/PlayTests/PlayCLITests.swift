// `drummer play` end to end, each test on its own dummy JACK server (jackd2's dummy driver, in
// real time: a bar at 120 BPM takes 2 s, so the tests that may play faster do), recorded and fed
// by JackProbe (Tests/JackProbe). Skipped with a message when jackd is not installed.
import Foundation
import Glibc
import MIDIParse
import Sample
import XCTest

final class PlayCLITests: XCTestCase {
    let model = PlayCLITests.repoRoot.appendingPathComponent("models/groove").path
    var root: URL!
    var server: DummyJack!

    static var repoRoot: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }

    static var products: URL {
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    static var drummer: URL { products.appendingPathComponent("drummer") }
    static var probe: URL { products.appendingPathComponent("JackProbe") }

    /// Frames per tick at 120 BPM, 48 kHz, 480 PPQ; ticks per bar.
    let framesPerTick = 50, bar = 1920

    override func setUpWithError() throws {
        guard let jackd = DummyJack.jackd else { throw XCTSkip("jackd is not installed (Debian: apt-get install jackd2): drummer play's tests skipped") }
        guard FileManager.default.isExecutableFile(atPath: Self.probe.path) else {
            throw XCTSkip("JackProbe is not built (swift build --build-tests builds it): drummer play's tests skipped")
        }
        root = FileManager.default.temporaryDirectory.appendingPathComponent("play-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        server = try DummyJack(jackd: jackd, in: root)
    }

    override func tearDownWithError() throws {
        server?.stop()
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    /// A recording probe connected from drummer's output once it exists (started first: the
    /// player connects to it with --connect probe:in).
    func recorder(_ name: String = "probe") throws -> (Background, URL) {
        let file = root.appendingPathComponent("\(name).txt")
        let p = try Background(Self.probe, ["--server", server.name, "--name", name, "--record", file.path, "--seconds", "60"], in: root)
        XCTAssertTrue(p.wait(for: "ready", seconds: 10), p.stderrText)
        return (p, file)
    }

    func play(_ args: [String]) throws -> Background {
        try Background(Self.drummer, ["play", model, "--server", server.name] + args, in: root)
    }

    /// The first bar line's frame the player announces.
    func firstBarFrame(_ p: Background) throws -> Int {
        XCTAssertTrue(p.wait(for: "bar 1 starts at frame ", seconds: 20), p.stdoutText + p.stderrText)
        let text = p.stdoutText
        let range = try XCTUnwrap(text.range(of: #"bar 1 starts at frame [0-9]+"#, options: .regularExpression))
        return try XCTUnwrap(Int(text[range].split(separator: " ").last!))
    }

    /// Recorded events: (frame, bytes).
    func events(_ file: URL) throws -> [(frame: Int, bytes: [Int])] {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map { line in
            let v = line.split(separator: " ").compactMap { Int($0) }
            return (v[0], Array(v.dropFirst()))
        }
    }

    /// Recorded NOTE ONs on the drum channel (velocity above 0).
    func noteOns(_ file: URL) throws -> [(frame: Int, bytes: [Int])] {
        try events(file).filter { $0.bytes.count == 3 && $0.bytes[0] == 0x99 && $0.bytes[2] > 0 }
    }

    /// `drummer play` with `args` (30 s at most), the lines of `send` sent into its input from its
    /// first bar line by a second probe: its result, that frame, and the NOTE ONs recorded (the
    /// whole recording is `probe.txt` in `root`).
    func playWithBeatSent(_ args: [String], send: URL) throws
        -> (r: (status: Int32, stdout: String, stderr: String), f0: Int, ons: [(frame: Int, bytes: [Int])])
    {
        let (rec, recording) = try recorder()
        let player = try play(args + ["--connect", "probe:in"])
        let f0 = try firstBarFrame(player)
        let sender = try Background(Self.probe, ["--server", server.name, "--name", "sender", "--send", send.path,
                                                 "--at", "\(f0)", "--to", "drummer:in", "--seconds", "60"], in: root)
        XCTAssertTrue(sender.wait(for: "ready", seconds: 10), sender.stderrText)
        let r = player.finish(seconds: 30)
        _ = sender.stop()
        _ = rec.stop()
        return (r, f0, try noteOns(recording))
    }

    /// The recording's events, checked: more than 10 NOTE ONs, each with exactly one NOTE OFF
    /// (none struck again while it sounds, no NOTE OFF of a note not sounding), and an All Notes
    /// Off last.
    func assertEveryNoteEndsThenAllNotesOff(_ recording: URL, file: StaticString = #filePath, line: UInt = #line) throws
        -> [(frame: Int, bytes: [Int])]
    {
        let got = try events(recording)
        var sounding = Set<Int>(), ons = 0, struckAgain: [[Int]] = [], offsWithoutOn: [[Int]] = []
        for e in got where e.bytes.count == 3 {
            if e.bytes[0] == 0x99, e.bytes[2] > 0 {
                if !sounding.insert(e.bytes[1]).inserted { struckAgain.append([e.frame, e.bytes[1]]) }
                ons += 1
            }
            if e.bytes[0] == 0x89 || (e.bytes[0] == 0x99 && e.bytes[2] == 0) {
                if sounding.remove(e.bytes[1]) == nil { offsWithoutOn.append([e.frame, e.bytes[1]]) }
            }
        }
        XCTAssertGreaterThan(ons, 10, file: file, line: line)
        XCTAssertEqual(sounding, [], "notes left sounding", file: file, line: line)
        XCTAssertEqual(struckAgain, [], "NOTE ONs (frame, note) of a note sounding", file: file, line: line)
        XCTAssertEqual(offsWithoutOn, [], "NOTE OFFs (frame, note) of a note not sounding", file: file, line: line)
        XCTAssertEqual(got.last?.bytes, [0xB9, 123, 0], "All Notes Off last", file: file, line: line)
        return got
    }

    /// The notes a `drummer sample` file holds, as written (DrumMIDI's rule: onset, note, velocity, duration).
    func fileNotes(_ path: String) throws -> [MIDINote] {
        let file = try MIDIFile.read(path: path).file
        return try DrumMIDI.notes(DrumMIDI.hits(in: file), options: DrumMIDIOptions(ppq: 480, maxDuration: 120))
    }

    func sample(_ args: [String]) throws -> String {
        let out = root.appendingPathComponent("sample-\(UUID().uuidString).mid").path
        let r = try Background(Self.drummer, ["sample", model] + args + ["-o", out], in: root).finish(seconds: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        return out
    }

    // MARK: The tests

    /// 8 bars at 120 BPM: the NOTE ONs and OFFs, velocities and frames of `drummer sample`'s file
    /// of that seed, each at its tick's frame from the first bar line.
    func testEightBarsAreTheFilesNotesAtTheirFrames() throws {
        let (rec, recording) = try recorder()
        let player = try play(["--bars", "8", "--seed", "7", "--bpm", "120", "--connect", "probe:in"])
        let f0 = try firstBarFrame(player)
        let r = player.finish(seconds: 30)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("played: "), r.stdout)
        print(r.stdout.split(separator: "\n").filter { !$0.hasPrefix("status: ") }.joined(separator: "\n"))
        _ = rec.stop()
        let got = try events(recording).filter { $0.bytes.count == 3 && ($0.bytes[0] == 0x99 || $0.bytes[0] == 0x89) }
        let expected = try fileNotes(try sample(["--bars", "8", "--seed", "7", "--bpm", "120"]))
        XCTAssertGreaterThan(expected.count, 40)
        let ons = got.filter { $0.bytes[0] == 0x99 && $0.bytes[2] > 0 }
        XCTAssertEqual(ons.map { [$0.bytes[1], $0.bytes[2]] }, expected.map { [Int($0.note), Int($0.velocity)] }, "notes and velocities")
        XCTAssertEqual(ons.count, expected.count)
        for (o, e) in zip(ons, expected) {
            XCTAssertEqual(Double(o.frame - f0), Double(e.tick * framesPerTick), accuracy: 1, "note \(e.note) at tick \(e.tick)")
        }
        // NOTE OFFs where the file's notes end.
        let offs = got.filter { $0.bytes[0] == 0x89 }.map { [$0.frame - f0, $0.bytes[1]] }.sorted { $0.lexicographicallyPrecedes($1) }
        let ends = expected.map { [($0.tick + $0.duration) * framesPerTick, Int($0.note)] }.sorted { $0.lexicographicallyPrecedes($1) }
        XCTAssertEqual(offs, ends)
    }

    /// jack_transport as timebase master on the test's server, rolling at `bpm`: it reads its
    /// commands from standard input and quits at its end, so the pipe stays open until `stop`.
    final class TransportMaster {
        let process = Process(), commands = Pipe()

        init(server: String, bpm: Int) throws {
            let transport = try XCTUnwrap(DummyJack.tool("jack_transport"), "jackd2 installs jack_transport with jackd")
            process.executableURL = transport
            var env = ProcessInfo.processInfo.environment
            env["JACK_DEFAULT_SERVER"] = server
            env["JACK_NO_START_SERVER"] = "1"
            process.environment = env
            process.standardInput = commands
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            send("master\ntempo \(bpm)\nplay\n")
            usleep(1_000_000)   // jack_transport connects and rolls in well under a second
        }

        func send(_ text: String) { commands.fileHandleForWriting.write(Data(text.utf8)) }

        /// Its input closed, then SIGTERM, then (jack_transport stuck on a server that waits on
        /// it, as after a relocation) SIGKILL.
        func stop() {
            try? commands.fileHandleForWriting.close()
            if process.isRunning { process.terminate() }
            let deadline = Date().addingTimeInterval(3)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    /// The same 8 bars with JACK transport rolling at 93 BPM (jack_transport as timebase master,
    /// --bpm 120 given and overruled): the file's notes, each at its tick's frame at 93 BPM.
    func testEightBarsFollowTransportAt93BPM() throws {
        let (rec, recording) = try recorder()
        let master = try TransportMaster(server: server.name, bpm: 93)
        defer { master.stop() }
        let player = try play(["--bars", "8", "--seed", "7", "--bpm", "120", "--connect", "probe:in"])
        let f0 = try firstBarFrame(player)
        let r = player.finish(seconds: 45)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("on JACK transport"), r.stdout)
        _ = rec.stop()
        let ons = try noteOns(recording)
        let expected = try fileNotes(try sample(["--bars", "8", "--seed", "7", "--bpm", "93"]))
        XCTAssertGreaterThan(expected.count, 40)
        XCTAssertEqual(ons.map { [$0.bytes[1], $0.bytes[2]] }, expected.map { [Int($0.note), Int($0.velocity)] }, "notes and velocities")
        let fpt93 = 48000.0 * 60 / (93 * 480)
        for (o, e) in zip(ons, expected) {
            XCTAssertEqual(Double(o.frame - f0), Double(e.tick) * fpt93, accuracy: 1, "note \(e.note) at tick \(e.tick)")
        }
        // The lead it reports is in transport's time: about a bar at 93 BPM (2,581 ms), not at
        // --bpm 120 (2,000 ms).
        let range = try XCTUnwrap(r.stdout.range(of: #"drew at least [0-9]+ ms ahead"#, options: .regularExpression), r.stdout)
        let lead = try XCTUnwrap(Double(r.stdout[range].split(separator: " ")[3]))
        XCTAssertGreaterThan(lead, 2_200, r.stdout)
        XCTAssertLessThanOrEqual(lead, 2_600, r.stdout)
    }

    /// Transport's tempo changed from 93 to 140 BPM while the player plays 6 bars: the notes are
    /// the file's, the bars before some bar line at 93 BPM and the bars from it on at 140, each
    /// bar line on the frame the tempo before it puts it (the change waits for a bar line).
    func testATransportTempoChangeTakesEffectAtTheNextBarLine() throws {
        let (rec, recording) = try recorder()
        let master = try TransportMaster(server: server.name, bpm: 93)
        defer { master.stop() }
        let player = try play(["--bars", "6", "--seed", "7", "--connect", "probe:in"])
        let f0 = try firstBarFrame(player)
        usleep(4_000_000)   // the first bar starts about a bar (2.6 s) after it is announced
        master.send("tempo 140\n")
        let r = player.finish(seconds: 45)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        _ = rec.stop()
        let ons = try noteOns(recording)
        let expected = try fileNotes(try sample(["--bars", "6", "--seed", "7"]))
        XCTAssertEqual(ons.map { [$0.bytes[1], $0.bytes[2]] }, expected.map { [Int($0.note), Int($0.velocity)] }, "notes and velocities")
        // For each bar k where 140 BPM may start: the ticks before bar k's line at 93 BPM from the
        // first bar's frame, the line itself on a whole frame, the ticks from it on at 140 BPM.
        let slow: Double = 48000.0 * 60 / (93 * 480), fast: Double = 48000.0 * 60 / (140 * 480)
        func worst(changeAt k: Int) -> Double {
            let line: Double = (Double(f0) + Double(k * bar) * slow).rounded()
            var largest = 0.0
            for (o, e) in zip(ons, expected) {
                let place: Double = e.tick < k * bar ? Double(f0) + Double(e.tick) * slow
                                                     : line + Double(e.tick - k * bar) * fast
                largest = max(largest, abs(Double(o.frame) - place))
            }
            return largest
        }
        let fits = (1..<6).filter { worst(changeAt: $0) <= 1 }
        XCTAssertEqual(fits.count, 1, "one bar line where 140 BPM starts: \((1..<6).map { worst(changeAt: $0) })")
        print("transport 93 → 140 BPM: the player changed at bar \(fits.first.map { $0 + 1 } ?? 0)'s line")
    }

    /// The player on transport at 120 BPM for `bars` bars of seed 5 (a note of it sounds across
    /// each of its first four bar lines), transport stopped a bar and a half after the first bar
    /// line is announced (the player then stops at its next bar line, every sounding note off),
    /// and `restart` sent to jack_transport once the player waits for it; `then` runs after that.
    /// The player's result and the recording.
    func playAcrossATransportRestart(bars: Int, restart: String, then: (Background) -> Void = { _ in }) throws
        -> (r: (status: Int32, stdout: String, stderr: String), recording: URL)
    {
        let (rec, recording) = try recorder()
        let master = try TransportMaster(server: server.name, bpm: 120)
        defer { master.stop() }
        let player = try play(["--bars", "\(bars)", "--seed", "5", "--connect", "probe:in"])
        _ = try firstBarFrame(player)
        usleep(3_000_000)
        master.send("stop\n")
        XCTAssertTrue(player.wait(for: "waiting for transport", seconds: 10), player.stdoutText)
        master.send(restart)
        then(player)
        let r = player.finish(seconds: 45)
        _ = rec.stop()
        return (r, recording)
    }

    /// Transport stopped mid-bar and started again: the player's NOTE OFFs for the notes sounding
    /// at the bar line it stopped on went out there, and again (for notes no longer sounding) at
    /// the bar line it started from. Each NOTE ON has its one NOTE OFF.
    func testATransportRestartEndsEachNoteOnce() throws {
        let (r, recording) = try playAcrossATransportRestart(bars: 4, restart: "play\n")
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        _ = try assertEveryNoteEndsThenAllNotesOff(recording)
    }

    /// Transport stopped, moved to a bar line (frame 0) and started there: the player starts
    /// again at once, each NOTE ON with its one NOTE OFF.
    func testATransportRestartFromABarLineEndsEachNoteOnce() throws {
        let (r, recording) = try playAcrossATransportRestart(bars: 4, restart: "locate 0\nplay\n")
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        _ = try assertEveryNoteEndsThenAllNotesOff(recording)
    }

    /// Transport starting while the player plays at its --bpm: the player ends its sounding notes
    /// at its next bar line and starts its next bar on transport's next one, each NOTE ON with
    /// its one NOTE OFF.
    func testTransportStartingMidPerformanceEndsEachNoteOnce() throws {
        let (rec, recording) = try recorder()
        let player = try play(["--bars", "4", "--seed", "5", "--bpm", "150", "--connect", "probe:in"])
        _ = try firstBarFrame(player)
        usleep(2_000_000)
        let master = try TransportMaster(server: server.name, bpm: 120)
        defer { master.stop() }
        let r = player.finish(seconds: 45)
        _ = rec.stop()
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("on JACK transport"), r.stdout)
        _ = try assertEveryNoteEndsThenAllNotesOff(recording)
    }

    /// Transport relocated while it rolls: jack_transport holds it "starting" for seconds (the
    /// player stops at its bar line), then rolls from a position that is no place in a bar (beat
    /// 5 of 4, tick 32767). The player starts again within a bar, its queued notes at their
    /// frames, not all at once and late (109 to 145 of 263 were), each NOTE ON with its one NOTE
    /// OFF. On a server that is not synchronous: on a synchronous one, jackd2 waits 5 s on
    /// jack_transport after the relocation, and the player gives the server up at 3 s.
    func testATransportRelocationWhileRollingPlaysOnInTime() throws {
        server.stop()
        server = try DummyJack(jackd: try XCTUnwrap(DummyJack.jackd), in: root, synchronous: false)
        let (rec, recording) = try recorder()
        let master = try TransportMaster(server: server.name, bpm: 120)
        defer { master.stop() }
        let player = try play(["--bars", "6", "--seed", "5", "--connect", "probe:in"])
        _ = try firstBarFrame(player)
        usleep(3_000_000)
        master.send("locate 100000\n")
        let r = player.finish(seconds: 60)
        _ = rec.stop()
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let played = try XCTUnwrap(r.stdout.split(separator: "\n").last { $0.hasPrefix("played: ") }, r.stdout)
        let late = try XCTUnwrap(Int(played.split(separator: ",")[1].split(separator: " ")[0]), String(played))
        XCTAssertLessThan(late, 10, String(played))
        _ = try assertEveryNoteEndsThenAllNotesOff(recording)
    }

    /// Ctrl-C just after transport starts again (before the player's next bar line): each NOTE
    /// ON with its one NOTE OFF, then All Notes Off; exit status 130.
    func testCtrlCRightAfterATransportRestartEndsEachNoteOnce() throws {
        let (r, recording) = try playAcrossATransportRestart(bars: 8, restart: "play\n") { player in
            usleep(100_000)
            player.signal(SIGINT)
        }
        XCTAssertEqual(r.status, 130, r.stdout + r.stderr)
        _ = try assertEveryNoteEndsThenAllNotesOff(recording)
    }

    /// --answer 2 at 240 BPM: a two-bar beat sent in bars 3–4 (after bars 1–2 heard nothing);
    /// bars 5–6 play what `drummer sample --primer` of that beat writes with the same seed.
    /// A two-bar beat (kick on the beats, snare on 2 and 4, hi-hat on the 8ths and the last 16th,
    /// velocities apart) as a MIDI file, and as JackProbe's lines to send it from bar 3's line at
    /// 240 BPM (25 frames a tick): NOTE ON and NOTE OFF of each hit, in time order.
    /// (`from` and `fpt`: another first tick, and the frames a tick at another tempo.)
    func twoBarBeat(from start: Int? = nil, fpt: Int? = nil) throws -> (notes: [MIDINote], file: URL, send: URL) {
        var beat: [MIDINote] = []
        for step in 0..<32 {
            let t = step * 120
            if step % 4 == 0 { beat.append(MIDINote(tick: t, note: step % 8 == 0 ? 36 : 38, velocity: UInt8(90 + step % 3 * 10), channel: 9, duration: 60)) }
            if step % 2 == 0 || step == 31 { beat.append(MIDINote(tick: t + (step % 4 == 2 ? 10 : 0), note: 42, velocity: UInt8(50 + step), channel: 9, duration: 60)) }
        }
        let beatFile = root.appendingPathComponent("beat.mid")
        try Data(try MIDIWriter.format0(ppq: 480, tempos: [MIDITempoChange(tick: 0, microsecondsPerQuarter: 500_000)],
                                        timeSignatures: [MIDITimeSignature(numerator: 4, denominator: 4)], notes: beat)).write(to: beatFile)
        let fpt = fpt ?? framesPerTick / 2, start = start ?? 2 * bar
        var lines: [(Int, String)] = []
        for n in beat {
            lines.append(((start + n.tick) * fpt, "153 \(n.note) \(n.velocity)"))
            lines.append(((start + n.tick + n.duration) * fpt, "137 \(n.note) 0"))
        }
        let sendFile = root.appendingPathComponent("send.txt")
        try lines.sorted { $0.0 < $1.0 }.map { "\($0.0) \($0.1)" }.joined(separator: "\n").write(to: sendFile, atomically: true, encoding: .utf8)
        return (beat, beatFile, sendFile)
    }

    func testAnswerCarriesOnAsSamplePrimerDoes() throws {
        let (beat, beatFile, sendFile) = try twoBarBeat()
        let fpt = framesPerTick / 2

        let (r, f0, ons) = try playWithBeatSent(["--answer", "2", "--bars", "6", "--bpm", "240", "--seed", "5"], send: sendFile)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("answering \(beat.count) hit(s) heard"), r.stdout)
        // The file: the rest of the beat's last bar, then two bars (file ticks 1920 ..< 5760).
        let file = try fileNotes(try sample(["--primer", beatFile.path, "--primer-bars", "2", "--bars", "2", "--seed", "5"]))
        let answer = file.filter { $0.tick >= bar }
        XCTAssertGreaterThan(answer.count, 10)
        XCTAssertEqual(ons.map { [$0.bytes[1], $0.bytes[2]] }, answer.map { [Int($0.note), Int($0.velocity)] }, r.stdout)
        XCTAssertTrue(ons.allSatisfy { $0.frame - f0 >= 4 * bar * fpt }, "nothing before the answer's bars")
        // Each at its tick's frame, but for the notes drawn after it (counted late: the answer's
        // first notes are due as the listening ends).
        let played = try XCTUnwrap(r.stdout.split(separator: "\n").last { $0.hasPrefix("played: ") }, r.stdout)
        let late = try XCTUnwrap(Int(played.split(separator: ",")[1].split(separator: " ")[0]), String(played))
        let onTime = zip(ons, answer).filter { abs($0.0.frame - f0 - ($0.1.tick + 3 * bar) * fpt) <= 1 }.count
        XCTAssertGreaterThanOrEqual(onTime, ons.count - late, String(played))
    }

    /// --bars N ends --answer at N bars: with --answer 2 --bars 5 and the beat sent in bars 3–4,
    /// bar 5 plays the first bar of the answer (`sample --primer` of the beat with --bars 1) and
    /// the player stops at its end (it played bar 6 too); with --bars 3 and nothing sent, bar 3
    /// listens for 1 bar and the player stops at its end (it listened for 2 bars, to bar 4's end).
    func testAnswerStopsAtTheLastBar() throws {
        let (beat, beatFile, sendFile) = try twoBarBeat()
        let fpt = framesPerTick / 2
        let (r, f0, ons) = try playWithBeatSent(["--answer", "2", "--bars", "5", "--bpm", "240", "--seed", "5"], send: sendFile)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("bar 5: answering \(beat.count) hit(s) heard"), r.stdout)
        // The file: the rest of the beat's last bar, then one bar (file ticks 1920 ..< 3840).
        let answer = try fileNotes(try sample(["--primer", beatFile.path, "--primer-bars", "2", "--bars", "1", "--seed", "5"]))
            .filter { $0.tick >= bar }
        XCTAssertGreaterThan(answer.count, 5)
        XCTAssertEqual(ons.map { [$0.bytes[1], $0.bytes[2]] }, answer.map { [Int($0.note), Int($0.velocity)] }, r.stdout)
        XCTAssertTrue(ons.allSatisfy { $0.frame - f0 < 5 * bar * fpt }, "nothing after bar 5")
        // All Notes Off at bar 6's line, or at the last note's end past it (as the file's).
        let end = max(5 * bar, answer.map { $0.tick + 3 * bar + $0.duration }.max() ?? 0)
        let last = try XCTUnwrap(try events(root.appendingPathComponent("probe.txt")).last)
        XCTAssertEqual(last.bytes, [0xB9, 123, 0])
        XCTAssertEqual(Double(last.frame - f0), Double(end * fpt), accuracy: 1, r.stdout)

        let (rec, recording) = try recorder("probe2")
        let player = try play(["--answer", "2", "--bars", "3", "--bpm", "240", "--seed", "5", "--connect", "probe2:in"])
        let start = try firstBarFrame(player)
        let r2 = player.finish(seconds: 30)
        _ = rec.stop()
        XCTAssertEqual(r2.status, 0, r2.stdout + r2.stderr)
        XCTAssertTrue(r2.stdout.contains("bar 3: listening for 1 bar(s)"), r2.stdout)
        let got = try events(recording)
        XCTAssertEqual(got.map(\.bytes), [[0xB9, 123, 0]], "only the All Notes Off")
        XCTAssertEqual(Double((got.last?.frame ?? 0) - start), Double(3 * bar * fpt), accuracy: 1, r2.stdout)
    }

    /// An answer's first notes are due as it is drawn: at 1000 BPM (6 frames a tick, a 16th in
    /// 15 ms) with --answer 8 and the beat sent in bars 7–8, notes of the answer's first bar go out
    /// late, NOTE ON and NOTE OFF both past due. Each keeps its length (at least a tick: a
    /// NOTE OFF goes out as late as its NOTE ON; both went out at the period's start, notes of no
    /// length), each NOTE ON with its one NOTE OFF.
    func testLateNotesKeepTheirLength() throws {
        let fpt = 6
        let (_, _, sendFile) = try twoBarBeat(from: 6 * bar, fpt: fpt)
        let (r, f0, ons) = try playWithBeatSent(["--answer", "8", "--bars", "16", "--bpm", "1000", "--seed", "5"], send: sendFile)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("bar 9: answering"), r.stdout)
        let played = try XCTUnwrap(r.stdout.split(separator: "\n").last { $0.hasPrefix("played: ") }, r.stdout)
        let late = try XCTUnwrap(Int(played.split(separator: ",")[1].split(separator: " ")[0]), String(played))
        XCTAssertGreaterThan(late, 0, "notes drawn after their frames: \(played)")
        let got = try assertEveryNoteEndsThenAllNotesOff(root.appendingPathComponent("probe.txt"))
        var struck: [Int: Int] = [:], lengths: [[Int]] = []
        for e in got where e.bytes.count == 3 && e.bytes[0] & 0xF0 != 0xB0 {
            if e.bytes[0] == 0x99, e.bytes[2] > 0 { struck[e.bytes[1]] = e.frame } else if let on = struck.removeValue(forKey: e.bytes[1]) {
                lengths.append([on, e.bytes[1], e.frame - on])
            }
        }
        XCTAssertEqual(lengths.filter { $0[2] < fpt }, [], "notes (frame, note, length in frames) shorter than a tick")
        // The notes after the late ones go out at their own frames: the answer's NOTE ONs off
        // their ticks' frames are late ones. (A late note's NOTE OFF written in its period as
        // late as the note was could hold back the next onset's notes as much, and theirs the
        // next; on this server's short periods the lateness mostly runs past the period, where
        // the put-off NOTE OFFs were already written in time order, so this does not catch
        // that every time.)
        let answer = ons.filter { $0.frame >= f0 + 8 * bar * fpt }
        let offTheirFrames = answer.filter { ($0.frame - f0) % fpt != 0 }
        XCTAssertGreaterThan(answer.count, 50, "the answer's 8 bars")
        XCTAssertLessThanOrEqual(offTheirFrames.count, late, "answer NOTE ONs (of \(answer.count)) off their frames, beyond the \(late) late events")
    }

    /// --answer with only notes outside the drum map heard: the model reads nothing, so the
    /// player listens again instead of answering from nothing.
    func testAnswerToNotesOutsideTheDrumMapIsListeningAgain() throws {
        let fpt = framesPerTick / 2
        let lines = (0..<8).flatMap { k in ["\(k * 240 * fpt) 153 100 90", "\((k * 240 + 60) * fpt) 137 100 0"] }
        let sendFile = root.appendingPathComponent("unmapped.txt")
        try lines.joined(separator: "\n").write(to: sendFile, atomically: true, encoding: .utf8)
        let (r, _, ons) = try playWithBeatSent(["--answer", "1", "--bars", "3", "--bpm", "240", "--seed", "3"], send: sendFile)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("bar 2: 8 hit(s) heard, all outside the drum map: listening again"), r.stdout)
        XCTAssertFalse(r.stdout.contains("answering"), r.stdout)
        XCTAssertEqual(ons.count, 0, "nothing played: \(ons)")
    }

    /// The end of --bars at a tempo whose bar line falls inside a period (128 BPM, 256-frame
    /// periods): its last NOTE OFFs and the All Notes Off go out after the period's notes, in
    /// time order (JACK refuses an event written before an earlier one's time: the All Notes Off
    /// at the period's start was dropped), every NOTE ON with its NOTE OFF.
    func testTheLastBarLineInsideAPeriodEndsWithEveryNoteOffAndAllNotesOff() throws {
        let (rec, recording) = try recorder()
        let player = try play(["--bars", "2", "--seed", "1", "--bpm", "128", "--connect", "probe:in"])
        _ = try firstBarFrame(player)
        let r = player.finish(seconds: 30)
        _ = rec.stop()
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let got = try assertEveryNoteEndsThenAllNotesOff(recording)
        XCTAssertEqual(got.map(\.frame), got.map(\.frame).sorted(), "in time order")
    }

    /// Without --answer, at 240 BPM: a two-bar beat sent in bars 3–4 goes out as it comes instead
    /// of the model's own notes, and once it stops the model carries on from it as `drummer
    /// sample --primer` of it does with the same seed.
    func testHitsHeardTakeOverAndTheModelCarriesOn() throws {
        let (beat, beatFile, sendFile) = try twoBarBeat()
        let fpt = framesPerTick / 2
        let (r, f0, recorded) = try playWithBeatSent(["--bars", "8", "--bpm", "240", "--seed", "4"], send: sendFile)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("bar 3: playing what it hears"), r.stdout)
        let range = try XCTUnwrap(r.stdout.range(of: #"carrying on from tick [0-9]+"#, options: .regularExpression), r.stdout)
        let from = try XCTUnwrap(Int(r.stdout[range].split(separator: " ").last!))
        let ons = recorded.map { (tick: Double($0.frame - f0) / Double(fpt), note: $0.bytes[1], velocity: $0.bytes[2]) }
        // Bars 3–4: the beat, each hit at its frame (those of the first onset, which made it take
        // over, a period or two late).
        let along = ons.filter { $0.tick >= Double(2 * bar) && $0.tick < Double(4 * bar) }
        XCTAssertEqual(along.map { [$0.note, $0.velocity] }, beat.map { [Int($0.note), Int($0.velocity)] })
        for (o, n) in zip(along, beat) where n.tick > beat[0].tick {
            XCTAssertEqual(o.tick, Double(2 * bar + n.tick), accuracy: 1.0 / Double(fpt))
        }
        XCTAssertTrue(ons.filter { $0.tick >= Double(4 * bar) && $0.tick < Double(from) }.isEmpty, "silent until it carries on")
        // Then `sample --primer` of the beat (file tick 0: the beat's second bar line, tick 5760 here).
        let file = try fileNotes(try sample(["--primer", beatFile.path, "--primer-bars", "2", "--bars", "5", "--seed", "4"]))
        let carried = file.filter { $0.tick + 3 * bar >= from && $0.tick + 3 * bar < 8 * bar }
        let after = ons.filter { $0.tick >= Double(from) }
        XCTAssertGreaterThan(carried.count, 5)
        XCTAssertEqual(after.map { [$0.note, $0.velocity] }, carried.map { [Int($0.note), Int($0.velocity)] }, r.stdout)
        // What that file holds between the beat and then is counted, as what it is (there are no
        // listening bars without --answer).
        let played = try XCTUnwrap(r.stdout.split(separator: "\n").last { $0.hasPrefix("played: ") }, r.stdout)
        XCTAssertTrue(played.contains(" hit(s) carrying on from the hits heard not played (due before it carried on)"), String(played))
        XCTAssertFalse(played.contains("listening bars"), String(played))
    }

    /// Hits heard in the last bar of --bars take over as in any other: with --bars 3 at 240 BPM
    /// and the beat sent from an 8th into bar 3 (the end already queued), bar 3 plays the beat
    /// from its first hit on, each hit at its frame, instead of the model's own notes (it played
    /// its own notes and only counted the hits), and the All Notes Off goes out on the last line.
    func testHitsHeardInTheLastBarTakeOver() throws {
        let first = 2 * bar + bar / 8
        let (beat, _, sendFile) = try twoBarBeat(from: first)
        let fpt = framesPerTick / 2
        let (r, f0, recorded) = try playWithBeatSent(["--bars", "3", "--bpm", "240", "--seed", "4"], send: sendFile)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("bar 3: playing what it hears"), r.stdout)
        let ons = recorded.map { (tick: Double($0.frame - f0) / Double(fpt), note: $0.bytes[1], velocity: $0.bytes[2]) }
        // From the beat's second onset (the first goes out a period or two late) to the end.
        let along = ons.filter { $0.tick >= Double(first + 120) }
        let sent = beat.filter { $0.tick >= 120 && first + $0.tick < 3 * bar }
        XCTAssertGreaterThan(sent.count, 5)
        XCTAssertEqual(along.map { [$0.note, $0.velocity] }, sent.map { [Int($0.note), Int($0.velocity)] }, r.stdout)
        for (o, n) in zip(along, sent) {
            XCTAssertEqual(o.tick, Double(first + n.tick), accuracy: 1.0 / Double(fpt))
        }
        let last = try XCTUnwrap(try events(root.appendingPathComponent("probe.txt")).last)
        XCTAssertEqual(last.bytes, [0xB9, 123, 0])
        XCTAssertEqual(Double(last.frame - f0), Double(3 * bar * fpt), accuracy: 1, r.stdout)
    }

    /// SIGINT mid-bar: every NOTE ON sent has its NOTE OFF, then All Notes Off; exit status 130.
    func testCtrlCEndsWithEveryNoteOff() throws { try stopMidBar(with: SIGINT) }

    /// The terminal closing (SIGHUP) used to end the player at once, its notes left sounding.
    func testHangupEndsWithEveryNoteOff() throws { try stopMidBar(with: SIGHUP) }

    /// Under nohup SIGHUP stays ignored: the player plays its bars to the end and exits 0.
    func testHangupUnderNohupIsIgnored() throws {
        let player = try Background(URL(fileURLWithPath: "/usr/bin/nohup"),
                                    [Self.drummer.path, "play", model, "--server", server.name, "--seed", "3", "--bars", "2"],
                                    in: root)
        _ = try firstBarFrame(player)
        usleep(300_000)
        player.signal(SIGHUP)
        let r = player.finish(seconds: 20)
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        XCTAssertFalse(r.stdout.contains("every sounding note off"), r.stdout)
    }

    private func stopMidBar(with sig: Int32) throws {
        let (rec, recording) = try recorder()
        let player = try play(["--seed", "3", "--connect", "probe:in"])
        _ = try firstBarFrame(player)
        usleep(1_300_000)  // into the first bar's second half
        player.signal(sig)
        let r = player.finish(seconds: 10)
        _ = rec.stop()
        XCTAssertEqual(r.status, 128 + sig, r.stdout + r.stderr)
        XCTAssertTrue(r.stdout.contains("every sounding note off"), r.stdout)
        _ = try assertEveryNoteEndsThenAllNotesOff(recording)
    }

    /// `drummer play` with `args`, its standard output a pipe whose reader has gone (as `| head -1`
    /// once head has its line), started once its client is on the server: its process.
    func playWithTheReaderGone(_ args: [String]) throws -> Process {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        // Not inherited: the player's copy of the reading end would keep the pipe open.
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        close(fds[0])
        let p = Process()
        p.executableURL = Self.drummer
        p.arguments = ["play", model, "--server", server.name] + args
        p.currentDirectoryURL = root
        p.standardOutput = FileHandle(fileDescriptor: fds[1], closeOnDealloc: true)
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let lsp = try XCTUnwrap(DummyJack.tool("jack_lsp"), "jackd2 installs jack_lsp with jackd")
        let deadline = Date().addingTimeInterval(20)
        while p.isRunning, Date() < deadline {
            let ports = Pipe(), list = Process()
            list.executableURL = lsp
            list.arguments = ["-s", server.name]
            list.standardOutput = ports
            list.standardError = FileHandle.nullDevice
            try list.run()
            let text = String(decoding: ports.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            list.waitUntilExit()
            if text.contains("drummer:out") { break }
            usleep(100_000)
        }
        return p
    }

    /// Its exit status (-1: still running after `seconds`, then killed).
    func exitStatus(_ p: Process, seconds: Double) -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while p.isRunning, Date() < deadline { usleep(10_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        return p.terminationReason == .exit ? p.terminationStatus : -1
    }

    /// Standard output's reader gone: the music plays on, and the player exits quietly with 141
    /// as a reader gone ends `cat`; stopped by SIGTERM it exits with 143, the signal's status
    /// (the reader gone overruled it with 141).
    func testAReaderGoneIs141UnlessASignalStopsThePlayer() throws {
        let played = try playWithTheReaderGone(["--bars", "1", "--bpm", "240", "--seed", "3"])
        XCTAssertEqual(exitStatus(played, seconds: 20), 141)
        let stopped = try playWithTheReaderGone(["--seed", "3"])
        usleep(500_000)
        XCTAssertTrue(stopped.isRunning)
        kill(stopped.processIdentifier, SIGTERM)
        XCTAssertEqual(exitStatus(stopped, seconds: 10), 128 + SIGTERM)
    }

    /// The server killed mid-play: the player says so and exits non-zero within a few seconds.
    func testServerGoingAwayEndsThePlayer() throws {
        let player = try play(["--seed", "2"])
        _ = try firstBarFrame(player)
        usleep(300_000)
        server.kill()
        let start = Date()
        let r = player.finish(seconds: 10)
        XCTAssertLessThan(Date().timeIntervalSince(start), 6, "ended within a few seconds")
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("JACK server went away"), r.stderr)
    }

    /// The server frozen mid-play (stopped, not exited): the player gives it up after 3 s with no
    /// process cycle and exits 1, instead of waiting on libjack for ever as it closes.
    func testAFrozenServerEndsThePlayer() throws {
        let player = try play(["--seed", "2"])
        _ = try firstBarFrame(player)
        usleep(300_000)
        server.signal(SIGSTOP)
        defer { server.signal(SIGCONT) }
        let start = Date()
        let r = player.finish(seconds: 12)
        XCTAssertLessThan(Date().timeIntervalSince(start), 7, "ended a few seconds after the last cycle")
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("the JACK server went away mid-play (no process cycle for 3 s): stopped"), r.stderr)
    }

    /// A flood of every kind of event on the input port: ignored and counted, and the bars played
    /// note for note, each at its frame, as without it.
    func testFloodOnTheInputPortIsCountedNotFatal() throws {
        let (rec, recording) = try recorder()
        // Under the allocation counter the tests preload (Scripts/count-allocations): the JACK
        // process callback, reading the flood and writing the notes, allocates nothing.
        let callbacks = root.appendingPathComponent("callbacks.txt")
        setenv("MALLOC_COUNT_CALLBACK_FILE", callbacks.path, 1)
        let player = try Background(Self.repoRoot.appendingPathComponent("Scripts/count-allocations"),
                                    [Self.drummer.path, "play", model, "--server", server.name,
                                     "--bars", "4", "--bpm", "240", "--seed", "9", "--connect", "probe:in"], in: root)
        unsetenv("MALLOC_COUNT_CALLBACK_FILE")
        let f0 = try firstBarFrame(player)
        let flood = try Background(Self.probe, ["--server", server.name, "--name", "flood", "--flood", "--to", "drummer:in", "--seconds", "30"], in: root)
        XCTAssertTrue(flood.wait(for: "ready", seconds: 10), flood.stderrText)
        let r = player.finish(seconds: 30)
        _ = flood.stop()
        _ = rec.stop()
        XCTAssertEqual(r.status, 0, r.stdout + r.stderr)
        let played = try XCTUnwrap(r.stdout.split(separator: "\n").last { $0.hasPrefix("played: ") }, r.stdout)
        for word in ["sysex", "truncated or malformed", "other channels", "dropped"] {
            XCTAssertTrue(played.contains(word), "\(word): \(played)")
        }
        XCTAssertTrue(played.contains(" 0 late"), String(played))
        let counted = try String(contentsOf: callbacks, encoding: .utf8).split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(counted.count, 2)
        XCTAssertGreaterThan(counted[0], 500, "the callback ran (4 bars at 240 BPM: 4 s, 750 periods of 256 frames)")
        XCTAssertEqual(counted[1], 0, "allocations in \(counted[0]) callbacks")
        print("drummer play under a flood: \(counted[1]) allocations in \(counted[0]) process callbacks")
        let ons = try noteOns(recording)
        let expected = try fileNotes(try sample(["--bars", "4", "--seed", "9", "--bpm", "240"]))
        XCTAssertEqual(ons.map { [$0.frame - f0, $0.bytes[1], $0.bytes[2]] },
                       expected.map { [$0.tick * framesPerTick / 2, Int($0.note), Int($0.velocity)] })
    }

    /// Without a server: a clear error naming it, not a hang.
    func testNoServerIsAClearError() throws {
        let r = try play(["--bars", "1", "--server", "no-such-\(UUID().uuidString.prefix(8))"]).finish(seconds: 20)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("no JACK server"), r.stderr)
    }
}

/// A dummy JACK server, 48 kHz, 256 frames a period, synchronous. Its name is one of four, fixed
/// for the test process (its pid mod 4), and each test stops its server before the next starts:
/// JACK keeps a machine-wide table of at most 8 servers, and the entry of a server that was
/// killed (as `testServerGoingAwayEndsThePlayer` kills one) is freed only when a server of the same
/// name registers again, so servers of new names every run would fill the table for good.
final class DummyJack {
    let name = "drummer-test-\(getpid() % 4)"
    let process = Process()

    static var jackd: URL? { tool("jackd") }

    /// A program of jackd2's on the PATH.
    static func tool(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":").map(String.init) + ["/usr/bin"] {
            let url = URL(fileURLWithPath: dir).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    init(jackd: URL, in dir: URL, synchronous: Bool = true) throws {
        process.executableURL = jackd
        // -S (synchronous): a cycle waits for every client, so that on a loaded machine a late
        // cycle is late, not lost (the comparisons are to the event).
        process.arguments = ["--no-realtime"] + (synchronous ? ["-S"] : []) + ["-n", name, "-d", "dummy", "-r", "48000", "-p", "256"]
        var env = ProcessInfo.processInfo.environment
        env["JACK_NO_AUDIO_RESERVATION"] = "1"
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Up when jack_wait finds it (or a client can open, for want of jack_wait).
        let wait = Process()
        wait.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        wait.arguments = ["jack_wait", "-s", name, "-w", "-t", "10"]
        wait.standardOutput = FileHandle.nullDevice
        wait.standardError = FileHandle.nullDevice
        try wait.run()
        wait.waitUntilExit()
        if wait.terminationStatus != 0 { usleep(1_000_000) }
    }

    func kill() { Glibc.kill(process.processIdentifier, SIGKILL) }
    func signal(_ sig: Int32) { Glibc.kill(process.processIdentifier, sig) }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(3)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill() }
        process.waitUntilExit()
    }
}

/// A process in the background, its output in files.
final class Background {
    let process = Process()
    private let outURL: URL, errURL: URL

    init(_ executable: URL, _ args: [String], in dir: URL) throws {
        outURL = dir.appendingPathComponent(".out-\(UUID().uuidString)")
        errURL = dir.appendingPathComponent(".err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.executableURL = executable
        process.arguments = args
        process.currentDirectoryURL = dir
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var stdoutText: String { (try? String(contentsOf: outURL, encoding: .utf8)) ?? "" }
    var stderrText: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    func wait(for text: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if stdoutText.contains(text) { return true }
            if !process.isRunning { return stdoutText.contains(text) }
            usleep(5000)
        }
        return false
    }

    func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// Waits up to `seconds` for the exit (then kills it: the test fails on its status).
    func finish(seconds: Double) -> (status: Int32, stdout: String, stderr: String) {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(5000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return (-1, stdoutText, stderrText + "\n(killed: still running after \(seconds) s)")
        }
        process.waitUntilExit()
        return (process.terminationStatus, stdoutText, stderrText)
    }

    /// SIGTERM, then the exit.
    func stop() -> (status: Int32, stdout: String, stderr: String) {
        if process.isRunning { signal(SIGTERM) }
        return finish(seconds: 5)
    }
}
