import Foundation
import XCTest

/// Small Standard MIDI Files written byte by byte (format 0, one track), independent of
/// MIDIParse's writer.
enum TinySMF {
    /// `events`: (absolute tick, raw event bytes without the delta).
    static func bytes(ppq: Int = 480, events: [(Int, [UInt8])]) -> Data {
        var track: [UInt8] = []
        var last = 0
        for (tick, body) in events.sorted(by: { $0.0 < $1.0 }) {
            var v = tick - last, groups: [UInt8] = [UInt8(v & 0x7F)]
            v >>= 7
            while v > 0 { groups.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
            track += groups.reversed() + body
            last = tick
        }
        track += [0x00, 0xFF, 0x2F, 0x00]
        let n = track.count
        return Data(Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, UInt8(ppq >> 8), UInt8(ppq & 0xFF)]
                    + Array("MTrk".utf8) + [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + track)
    }

    /// NOTE ONs (note, velocity) at ticks, on channel index `channel`, plus a time signature.
    static func drums(_ hits: [(tick: Int, note: UInt8, velocity: UInt8)], channel: UInt8 = 9, meter: (UInt8, UInt8)? = nil,
                      ppq: Int = 480) -> Data {
        var events: [(Int, [UInt8])] = []
        if let (n, power) = meter { events.append((0, [0xFF, 0x58, 0x04, n, power, 24, 8])) }
        for h in hits {
            events.append((h.tick, [0x90 | channel, h.note, h.velocity]))
            events.append((h.tick + 60, [0x80 | channel, h.note, 64]))
        }
        return bytes(ppq: ppq, events: events)
    }

    /// One bar of a rock beat: crash on 1, eighth-note hi-hat, snare on 2 and 4 (a ghost before 4),
    /// bass drum on 1, 3 and the "&" of 3.
    static var rockBeat: Data {
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = [(0, 49, 120)]
        for i in 0..<8 { hits.append((i * 240, 42, 80)) }
        hits += [(480, 38, 100), (1320, 38, 30), (1440, 38, 100), (0, 36, 100), (960, 36, 100), (1200, 36, 90)]
        return drums(hits)
    }
}

final class TabCLITests: XCTestCase {
    private var tmp: URL!

    override func setUpWithError() throws { tmp = try CLI.temporaryDirectory("tab-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: tmp) }

    private func write(_ data: Data, _ name: String) throws -> String {
        let url = tmp.appendingPathComponent(name)
        try data.write(to: url)
        return url.path
    }

    /// A --channel that holds no hit says which channel was read, not "any channel".
    func testAChannelWithoutHitsIsNamed() throws {
        let path = try write(TinySMF.rockBeat, "rock.mid")
        let r = try CLI.run(["tab", path, "--channel", "3"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "error: \(path): no drum hits (no NOTE ON with velocity > 0 on channel index 3, as --channel 3 asks; "
                       + "--channel auto reads the drum channel, index 9)\n")
        let s = try CLI.run(["stats", path, "--reference", path, "--channel", "3"])
        XCTAssertEqual(s.status, 1)
        XCTAssertTrue(s.stderr.contains("on channel index 3, as --channel 3 asks"), s.stderr)
    }

    func testRockBeat() throws {
        let path = try write(TinySMF.rockBeat, "rock.mid")
        let r = try CLI.run(["tab", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, """
            \(path): 4/4, 120 BPM, 1 bar, 15 hits on channel 10
            bars 1-1 of 1: 15 hits, grid 16 (sixteenth notes)

                  bar 1
                 |1 e & a 2 e & a 3 e & a 4 e & a |
              CR |X - - - - - - - - - - - - - - - |
              HH |x - x - x - x - x - x - x - x - |
              SD |- - - - o - - - - - - g o - - - |
              BD |o - - - - - - - o - o - - - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest

            """)
    }

    /// Eighth-note triplets (ride) with a bass drum on 1 and 3, on a 16 and a 12 grid.
    func testTriplets() throws {
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = (0..<12).map { ($0 * 160, 51, 90) }
        hits += [(0, 36, 100), (960, 36, 100)]
        let path = try write(TinySMF.drums(hits), "triplets.mid")
        let sixteen = try CLI.run(["tab", path])
        XCTAssertEqual(sixteen.status, 0, sixteen.stderr)
        XCTAssertEqual(sixteen.stdout, """
            \(path): 4/4, 120 BPM, 1 bar, 14 hits on channel 10
            bars 1-1 of 1: 14 hits, grid 16 (sixteenth notes)

                  bar 1
                 |1 e & a 2 e & a 3 e & a 4 e & a |
              RD |x x~- x~x x~- x~x x~- x~x x~- x~|
              BD |o - - - - - - - o - - - - - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest
            ~ off the grid: 8 hits over 25% of a cell from the nearest cell, drawn there

            """)
        let twelve = try CLI.run(["tab", path, "--grid", "12"])
        XCTAssertEqual(twelve.stdout, """
            \(path): 4/4, 120 BPM, 1 bar, 14 hits on channel 10
            bars 1-1 of 1: 14 hits, grid 12 (eighth-note triplets)

                  bar 1
                 |1 t l 2 t l 3 t l 4 t l |
              RD |x x x x x x x x x x x x |
              BD |o - - - - - o - - - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest

            """)
    }

    /// One snare a third of a sixteenth late; the hi-hat a sixth late stays on the grid.
    func testOffGridHit() throws {
        let path = try write(TinySMF.drums([(0, 36, 100), (500, 42, 70), (520, 38, 100)]), "late.mid")
        let r = try CLI.run(["tab", path])
        XCTAssertEqual(r.stdout, """
            \(path): 4/4, 120 BPM, 1 bar, 3 hits on channel 10
            bars 1-1 of 1: 3 hits, grid 16 (sixteenth notes)

                  bar 1
                 |1 e & a 2 e & a 3 e & a 4 e & a |
              HH |- - - - x - - - - - - - - - - - |
              SD |- - - - o~- - - - - - - - - - - |
              BD |o - - - - - - - - - - - - - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest
            ~ off the grid: 1 hit over 25% of a cell from the nearest cell, drawn there

            """)
        // A wider tolerance takes it back onto the grid.
        XCTAssertFalse(try CLI.run(["tab", path, "--tolerance", "0.4"]).stdout.contains("~"))
    }

    /// A 6/8 file (time signature 6/8 at tick 0), two bars, on channel index 0 (read as all channels).
    func testSixEight() throws {
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for bar in 0..<2 {
            for i in 0..<6 { hits.append((bar * 1440 + i * 240, 42, 80)) }
            hits += [(bar * 1440, 36, 100), (bar * 1440 + 720, 38, 115)]
        }
        let path = try write(TinySMF.drums(hits, channel: 0, meter: (6, 3)), "six.mid")
        let r = try CLI.run(["tab", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, """
            \(path): 6/8, 120 BPM, 2 bars, 16 hits on all channels
            bars 1-2 of 2: 16 hits, grid 16 (sixteenth notes)

                  bar 1                    bar 2
                 |1 & 2 & 3 & 4 & 5 & 6 & |1 & 2 & 3 & 4 & 5 & 6 & |
              HH |x - x - x - x - x - x - |x - x - x - x - x - x - |
              SD |- - - - - - O - - - - - |- - - - - - O - - - - - |
              BD |o - - - - - - - - - - - |o - - - - - - - - - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest

            """)
    }

    /// A tempo change is listed as a meter change is (the header read the first tempo alone);
    /// --json keeps `bpm` the first and lists them all in `tempos`; many read as a range.
    func testTempoChangesAreListed() throws {
        func tempo(_ tick: Int, _ bpm: Int) -> (Int, [UInt8]) {
            let us = 60_000_000 / bpm
            return (tick, [0xFF, 0x51, 0x03, UInt8(us >> 16), UInt8(us >> 8 & 0xFF), UInt8(us & 0xFF)])
        }
        var events: [(Int, [UInt8])] = [(0, [0xFF, 0x58, 0x04, 4, 2, 24, 8]), (3840, [0xFF, 0x58, 0x04, 3, 2, 24, 8]),
                                         tempo(0, 100), tempo(3840, 140)]
        for beat in 0..<11 { events += [(beat * 480, [0x99, 36, 100]), (beat * 480 + 60, [0x89, 36, 64])] }
        let path = try write(TinySMF.bytes(events: events), "tempo.mid")
        let r = try CLI.run(["tab", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("\(path): 4/4, 3/4, 100, 140 BPM, 3 bars, 11 hits on channel 10\n"), r.stdout)
        let j = try CLI.run(["tab", path, "--json"])
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(obj["bpm"] as? Double ?? 0, 100, accuracy: 1e-9)
        let tempos = try XCTUnwrap(obj["tempos"] as? [Double])
        XCTAssertEqual(tempos.count, 2)
        XCTAssertEqual(tempos.last ?? 0, 140, accuracy: 0.001)
        // Six tempos (one repeated at a later tick is no change) read as their range.
        events += [tempo(960, 100), tempo(1920, 110), tempo(2400, 150), tempo(2880, 120), tempo(4320, 130)]
        let many = try write(TinySMF.bytes(events: events), "tempi.mid")
        let m = try CLI.run(["tab", many])
        XCTAssertTrue(m.stdout.hasPrefix("\(many): 4/4, 3/4, 100-150 BPM (6 tempos), 3 bars"), m.stdout)
    }

    func testJSONGrid() throws {
        let path = try write(TinySMF.rockBeat, "rock.mid")
        let r = try CLI.run(["tab", path, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(obj["hits_shown"] as? Int, 15)
        XCTAssertEqual(obj["channel"] as? Int, 10)
        let rows = try XCTUnwrap(obj["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.compactMap { $0["note"] as? Int }, [49, 42, 38, 36])
        XCTAssertEqual(rows.compactMap { $0["name"] as? String }, ["Crash Cymbal 1", "Closed Hi-Hat", "Acoustic Snare", "Bass Drum 1"])
        let snare = try XCTUnwrap(rows[2]["bars"] as? [[Any]])
        XCTAssertEqual(snare.count, 1)
        XCTAssertEqual(snare[0].map { ($0 as? [String: Any])?["velocity"] as? Int ?? 0 },
                       [0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 30, 100, 0, 0, 0])
    }

    func testGrooveFileAndBadInput() throws {
        let groove = CLI.repoRoot.appendingPathComponent("corpus/groove/drummer1/session1/1_funk_80_beat_4-4.mid").path
        let r = try CLI.run(["tab", groove, "--bars", "2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines[0], "\(groove): 4/4, 80 BPM, 29 bars, 773 hits on channel 10")
        XCTAssertEqual(lines[1], "bars 1-2 of 29: 33 hits, grid 16 (sixteenth notes)")
        XCTAssertTrue(lines.dropFirst(2).allSatisfy { $0.count <= 80 }, r.stdout)  // the header names the path

        // The last bar can be asked for; a bar past it is an error naming the file (it printed
        // "no bars in the range asked for" and exited 0), as text and as JSON.
        let last = try CLI.run(["tab", groove, "--from", "29"])
        XCTAssertEqual(last.status, 0, last.stderr)
        XCTAssertTrue(last.stdout.contains("bars 29-29 of 29: "), last.stdout)
        for extra in [[], ["--json"]] {
            let past = try CLI.run(["tab", groove, "--from", "30"] + extra)
            XCTAssertEqual(past.status, 1, past.stderr)
            XCTAssertEqual(past.stdout, "")
            XCTAssertEqual(past.stderr, "error: \(groove): --from 30 is past its last bar (its hits span 29 bars)\n")
        }
        // The largest bar numbers too (a sum with the bars shown overflowed).
        let far = try CLI.run(["tab", groove, "--from", String(Int.max)])
        XCTAssertEqual(far.status, 1, far.stderr)
        XCTAssertEqual(far.stderr, "error: \(groove): --from \(Int.max) is past its last bar (its hits span 29 bars)\n")

        let missing = try CLI.run(["tab", tmp.appendingPathComponent("nope.mid").path])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("nope.mid: no such file"), missing.stderr)
        let junk = try write(Data("not midi at all".utf8), "junk.mid")
        let bad = try CLI.run(["tab", junk])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("junk.mid: not a readable MIDI file"), bad.stderr)
        let silent = try write(TinySMF.bytes(events: [(0, [0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20])]), "silent.mid")
        let none = try CLI.run(["tab", silent])
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stderr.contains("silent.mid: no drum hits"), none.stderr)
        let badGrid = try CLI.run(["tab", junk, "--grid", "0"])
        XCTAssertNotEqual(badGrid.status, 0)
        XCTAssertTrue(badGrid.stderr.contains("--grid must be between 1 and 192"), badGrid.stderr)
    }

    func testConvertMIDISummaryNamesTheNotes() throws {
        let dir = tmp.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try TinySMF.drums([(0, 36, 100), (480, 38, 100), (960, 36, 100), (1440, 22, 90)]).write(to: dir.appendingPathComponent("a.mid"))
        let r = try CLI.run(["convert-midi", dir.path, "-o", tmp.appendingPathComponent("data").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("Notes found: Acoustic Snare (38) ×1, Bass Drum 1 (36) ×2, Note 22 ×1\n"), r.stdout)
    }
}
