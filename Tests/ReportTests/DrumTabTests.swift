import XCTest
import MIDIParse
@testable import Report

/// A drum performance built in memory: format 0, one track, NOTE ONs on `channel`.
func performance(_ hits: [(tick: Int, note: UInt8, velocity: UInt8)], ppq: Int = 480,
                 meter: (Int, Int)? = nil, channel: UInt8 = 9, path: String = "t.mid") -> DrumPerformance {
    var events: [MIDIEvent] = []
    if let (n, d) = meter {
        events.append(MIDIEvent(tick: 0, kind: .meta(.timeSignature(numerator: UInt8(n), denominatorPower: UInt8(d.trailingZeroBitCount),
                                                                      clocksPerClick: 24, thirtySecondsPerQuarter: 8))))
    }
    for h in hits.sorted(by: { $0.tick < $1.tick }) {
        events.append(MIDIEvent(tick: h.tick, kind: .channel(.noteOn(channel: channel, note: h.note, velocity: h.velocity))))
    }
    events.append(MIDIEvent(tick: (hits.map(\.tick).max() ?? 0) + 1, kind: .meta(.endOfTrack)))
    let file = MIDIFile(format: 0, division: .ppq(ppq), tracks: [MIDITrack(events: events)])
    return DrumPerformance(file: file, path: path)
}

final class DrumTabTests: XCTestCase {
    private func tab(_ p: DrumPerformance, grid: Int = 16, bars: Int? = nil, width: Int = 80) -> String {
        DrumTab.render(DrumGrid(p, options: DrumGridOptions(grid: grid, bars: bars)), style: DrumTabStyle(width: width))
    }

    /// One bar of a rock beat: crash (accent) on 1, eighth-note hi-hat, snare on 2 and 4 with a
    /// ghost note before 4, bass drum on 1, 3 and the "&" of 3.
    func testOneBarOfARockBeat() {
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = [(0, 49, 120)]
        for i in 0..<8 { hits.append((i * 240, 42, 80)) }
        hits += [(480, 38, 100), (1320, 38, 30), (1440, 38, 100), (0, 36, 100), (960, 36, 100), (1200, 36, 90)]
        XCTAssertEqual(tab(performance(hits)), """
            t.mid: 4/4, 120 BPM, 1 bar, 15 hits on channel 10
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

    /// Two tempo events at tick 0 (a sequencer's default, then the song's): the file plays at
    /// the last, so the header starts at 90 BPM; of the changes after, only the one heard (100) is listed.
    func testTheLastOfTwoTemposAtTickZeroIsTheOneShown() {
        func tempo(_ tick: Int, _ bpm: Int) -> MIDIEvent {
            MIDIEvent(tick: tick, kind: .meta(.tempo(microsecondsPerQuarter: 60_000_000 / bpm)))
        }
        var events = [tempo(0, 120), tempo(0, 90), tempo(1920, 90), tempo(3840, 140), tempo(3840, 100)]
        for i in 0..<12 { events.append(MIDIEvent(tick: i * 480, kind: .channel(.noteOn(channel: 9, note: 36, velocity: 100)))) }
        events.append(MIDIEvent(tick: 5761, kind: .meta(.endOfTrack)))
        let p = DrumPerformance(file: MIDIFile(format: 0, division: .ppq(480), tracks: [MIDITrack(events: events)]), path: "t.mid")
        XCTAssertEqual(p.initialBPM, 90, accuracy: 0.001)
        XCTAssertEqual(p.tempos.map { $0.rounded() }, [90, 100])
        XCTAssertTrue(tab(p).hasPrefix("t.mid: 4/4, 90, 100 BPM, 3 bars, 12 hits on channel 10\n"), tab(p))
    }

    /// Eighth-note triplets on the ride: off a 16 grid (marked ~ at the nearest sixteenth), on a 12 grid.
    func testTripletsAreOffASixteenthGridAndOnATwelveGrid() {
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for i in 0..<12 { hits.append((i * 160, 51, 90)) }
        hits += [(0, 36, 100), (960, 36, 100)]
        let p = performance(hits)
        XCTAssertEqual(tab(p), """
            t.mid: 4/4, 120 BPM, 1 bar, 14 hits on channel 10
            bars 1-1 of 1: 14 hits, grid 16 (sixteenth notes)

                  bar 1
                 |1 e & a 2 e & a 3 e & a 4 e & a |
              RD |x x~- x~x x~- x~x x~- x~x x~- x~|
              BD |o - - - - - - - o - - - - - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest
            ~ off the grid: 8 hits over 25% of a cell from the nearest cell, drawn there

            """)
        XCTAssertEqual(tab(p, grid: 12), """
            t.mid: 4/4, 120 BPM, 1 bar, 14 hits on channel 10
            bars 1-1 of 1: 14 hits, grid 12 (eighth-note triplets)

                  bar 1
                 |1 t l 2 t l 3 t l 4 t l |
              RD |x x x x x x x x x x x x |
              BD |o - - - - - o - - - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest

            """)
    }

    /// A snare 40 ticks (1/3 of a sixteenth) before the next bar line, after a bar of quarter
    /// notes on the bass drum, is early by more than the tolerance: no downbeat of a bar 2 but
    /// a late hit of bar 1, drawn off the grid at its last cell. The tab has one bar, not a
    /// second bar holding that hit alone.
    func testAHitEarlierThanTheToleranceBeforeTheBarLineMakesNoBarOfItsOwn() {
        let p = performance([(0, 36, 100), (480, 36, 100), (960, 36, 100), (1440, 36, 100), (1880, 38, 100)])
        XCTAssertEqual(tab(p), """
            t.mid: 4/4, 120 BPM, 1 bar, 5 hits on channel 10
            bars 1-1 of 1: 5 hits, grid 16 (sixteenth notes)

                  bar 1
                 |1 e & a 2 e & a 3 e & a 4 e & a |
              SD |- - - - - - - - - - - - - - - o~|
              BD |o - - - o - - - o - - - o - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest
            ~ off the grid: 1 hit over 25% of a cell from the nearest cell, drawn there

            """)
        // Within the tolerance (20 ticks, 1/6 of a sixteenth) it is bar 2's downbeat, played early.
        let early = performance([(0, 36, 100), (480, 36, 100), (960, 36, 100), (1440, 36, 100), (1900, 38, 100)])
        XCTAssertEqual(tab(early), """
            t.mid: 4/4, 120 BPM, 2 bars, 5 hits on channel 10
            bars 1-2 of 2: 5 hits, grid 16 (sixteenth notes)

                  bar 1                            bar 2
                 |1 e & a 2 e & a 3 e & a 4 e & a |1 e & a 2 e & a 3 e & a 4 e & a |
              SD |- - - - - - - - - - - - - - - - |o - - - - - - - - - - - - - - - |
              BD |o - - - o - - - o - - - o - - - |- - - - - - - - - - - - - - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest

            """)
    }

    /// A snare 40 ticks late (1/3 of a sixteenth) is off the grid; a hi-hat 20 ticks late
    /// (1/6) is not; a bass drum 5 ticks before the next bar line belongs to bar 2.
    func testOffGridHitIsMarkedAndALateHitNearTheBarLineMovesToTheNextBar() {
        let p = performance([(0, 36, 100), (500, 42, 70), (520, 38, 100), (1915, 36, 60)])
        XCTAssertEqual(tab(p), """
            t.mid: 4/4, 120 BPM, 2 bars, 4 hits on channel 10
            bars 1-2 of 2: 4 hits, grid 16 (sixteenth notes)

                  bar 1                            bar 2
                 |1 e & a 2 e & a 3 e & a 4 e & a |1 e & a 2 e & a 3 e & a 4 e & a |
              HH |- - - - x - - - - - - - - - - - |- - - - - - - - - - - - - - - - |
              SD |- - - - o~- - - - - - - - - - - |- - - - - - - - - - - - - - - - |
              BD |o - - - - - - - - - - - - - - - |o - - - - - - - - - - - - - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest
            ~ off the grid: 1 hit over 25% of a cell from the nearest cell, drawn there

            """)
    }

    /// Two bars of 6/8: six eighths, twelve sixteenth cells per bar.
    func testSixEight() {
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for bar in 0..<2 {
            let base = bar * 1440
            for i in 0..<6 { hits.append((base + i * 240, 42, 80)) }
            hits += [(base, 36, 100), (base + 720, 38, 100)]
        }
        XCTAssertEqual(tab(performance(hits, meter: (6, 8), path: "six.mid")), """
            six.mid: 6/8, 120 BPM, 2 bars, 16 hits on channel 10
            bars 1-2 of 2: 16 hits, grid 16 (sixteenth notes)

                  bar 1                    bar 2
                 |1 & 2 & 3 & 4 & 5 & 6 & |1 & 2 & 3 & 4 & 5 & 6 & |
              HH |x - x - x - x - x - x - |x - x - x - x - x - x - |
              SD |- - - - - - o - - - - - |- - - - - - o - - - - - |
              BD |o - - - - - - - - - - - |o - - - - - - - - - - - |

            x o hit, X O accent (velocity >= 110), g ghost (velocity < 50), - rest

            """)
    }

    /// Three bars at 80 columns: two bars per line; --bars/--from choose the range; 2-bar
    /// snare rolls merged into one cell count as merged.
    func testWrapsBetweenBarsAndShowsARange() {
        var hits: [(tick: Int, note: UInt8, velocity: UInt8)] = []
        for bar in 0..<3 { hits += [(bar * 1920, 36, 100), (bar * 1920 + 960, 38, 100), (bar * 1920 + 965, 38, 40)] }
        let p = performance(hits)
        let text = tab(p)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(lines[3], "      bar 1                            bar 2")
        XCTAssertEqual(lines[7], "")
        XCTAssertEqual(lines[8], "      bar 3")
        XCTAssertEqual(lines[9], "     |1 e & a 2 e & a 3 e & a 4 e & a |")
        XCTAssertTrue(lines.allSatisfy { $0.count <= 80 })
        XCTAssertTrue(text.contains("3 hits shared a cell with another hit of the same drum (the loudest is drawn)"), text)

        let second = DrumTab.render(DrumGrid(p, options: DrumGridOptions(firstBar: 1, bars: 1)))
        XCTAssertTrue(second.contains("bars 2-2 of 3: 3 hits"), second)
        XCTAssertTrue(second.contains("      bar 2\n"), second)
    }

    /// A run of 16 or more empty bars is one rest entry and one line; a shorter one is drawn
    /// bar by bar. Two hits 100,000 bars apart make three entries, not 100,000 bars of cells.
    func testALongRunOfEmptyBarsIsOneLine() {
        let short = DrumGrid(performance([(0, 36, 100), (16 * 1920, 38, 100)]))
        XCTAssertEqual(short.bars.count, 17, "15 empty bars are drawn")
        XCTAssertFalse(short.bars.contains { $0.isRest })

        let long = DrumGrid(performance([(0, 36, 100), (17 * 1920, 38, 100)]))
        XCTAssertEqual(long.bars.map(\.number), [1, 2, 18])
        XCTAssertEqual(long.bars[1].emptyBars, 16)
        XCTAssertEqual(long.bars[1].cells, 0)
        XCTAssertEqual(long.rows.map { $0.bars.map(\.count) }, [[16, 0, 16], [16, 0, 16]])

        let far = performance([(0, 36, 100), (100_000 * 1920 + 480, 38, 100)])
        let grid = DrumGrid(far)
        XCTAssertEqual(grid.bars.map(\.number), [1, 2, 100_001])
        XCTAssertEqual(grid.bars[1].emptyBars, 99_999)
        XCTAssertEqual(grid.bars[1].ticks, 99_999 * 1920)
        let text = DrumTab.render(grid)
        XCTAssertTrue(text.contains("bars 1-100001 of 100001: 2 hits"), text)
        XCTAssertTrue(text.contains("\n\n      bars 2-100000: 99999 empty bars, not drawn\n\n      bar 100001\n"), text)
        XCTAssertTrue(text.contains("  SD |- - - - o - - - - - - - - - - - |"), text)

        // A range of empty bars only: one rest line, the range in the header.
        let empty = DrumTab.render(DrumGrid(far, options: DrumGridOptions(firstBar: 2, bars: 100)))
        XCTAssertTrue(empty.contains("bars 3-102 of 100001: 0 hits"), empty)
        XCTAssertTrue(empty.contains("      bars 3-102: 100 empty bars, not drawn\n"), empty)
    }

    func testGlyphsByVelocityAndFamily() {
        XCTAssertEqual(DrumTab.glyph(velocity: 110, family: .cymbal), "X")
        XCTAssertEqual(DrumTab.glyph(velocity: 109, family: .hiHat), "x")
        XCTAssertEqual(DrumTab.glyph(velocity: 50, family: .snare), "o")
        XCTAssertEqual(DrumTab.glyph(velocity: 127, family: .kick), "O")
        XCTAssertEqual(DrumTab.glyph(velocity: 49, family: .cymbal), "g")
        XCTAssertEqual(DrumTab.glyph(velocity: 1, family: .tom), "g")
    }

    func testCountLabels() {
        XCTAssertEqual(DrumTab.countLabels(cells: 8, denominator: 4, grid: 8), ["1", "&", "2", "&", "3", "&", "4", "&"])
        XCTAssertEqual(DrumTab.countLabels(cells: 6, denominator: 4, grid: 24), ["1", ".", "t", "&", "l", "."])
        XCTAssertEqual(DrumTab.countLabels(cells: 3, denominator: 4, grid: 4), ["1", "2", "3"])
        XCTAssertEqual(DrumTab.countLabels(cells: 12, denominator: 8, grid: 8).suffix(3), ["10", "11", "12"])
    }

    func testNoHitsAndAnAllChannelsFile() {
        let empty = DrumTab.render(DrumGrid(performance([])))
        XCTAssertEqual(empty, "t.mid: 4/4, 120 BPM, 0 bars, 0 hits on all channels\nno hits: nothing to show\n")
        // Notes only on channel index 0: read from every channel, as convert-midi's auto does.
        let p = performance([(0, 36, 100)], channel: 0)
        XCTAssertNil(p.channel)
        XCTAssertTrue(DrumTab.render(DrumGrid(p)).hasPrefix("t.mid: 4/4, 120 BPM, 1 bar, 1 hit on all channels\n"))
    }

    func testJSONGridHasBarsRowsAndNullCells() throws {
        let p = performance([(0, 36, 100), (520, 38, 90)])
        let enc = JSONEncoder()
        enc.keyEncodingStrategy = .convertToSnakeCase
        let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: enc.encode(DrumGrid(p))) as? [String: Any])
        XCTAssertEqual(obj["grid"] as? Int, 16)
        XCTAssertEqual(obj["off_grid_hits"] as? Int, 1)
        let bars = try XCTUnwrap(obj["bars"] as? [[String: Any]])
        XCTAssertEqual(bars.count, 1)
        XCTAssertEqual(bars[0]["cells"] as? Int, 16)
        XCTAssertEqual(bars[0]["start_tick"] as? Int, 0)
        let rows = try XCTUnwrap(obj["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.compactMap { $0["short_name"] as? String }, ["SD", "BD"])
        let snare = try XCTUnwrap(rows[0]["bars"] as? [[Any]])
        XCTAssertEqual(snare[0].count, 16)
        XCTAssertTrue(snare[0][0] is NSNull)
        let cell = try XCTUnwrap(snare[0][4] as? [String: Any])
        XCTAssertEqual(cell["velocity"] as? Int, 90)
        XCTAssertEqual(cell["off_grid"] as? Bool, true)
        XCTAssertEqual(try XCTUnwrap(cell["offset"] as? Double), 1.0 / 3, accuracy: 1e-9)
    }
}
