// LiveNoteStream hands out, one hit at a time and in tick order, exactly the notes DrumMIDI
// writes to a file of the same hits (no JACK needed).
import DrummerCore
import Live
import MIDIParse
import Sample
import XCTest

final class LiveNoteStreamTests: XCTestCase {
    func testStreamedNotesAreTheFilesNotes() throws {
        var rng = SeededRNG(seed: 11)
        let notes = [36, 38, 42, 46, 49]
        for _ in 0..<20 {
            // Simultaneous hits, repeats of a note at an onset, gaps under and over a 16th.
            let hits = (0..<300).map { _ in
                DrumHit(note: notes[rng.index(below: notes.count)], delta: [0, 0, 10, 30, 120, 200, 500][rng.index(below: 7)],
                        velocity: 1 + rng.index(below: 127))
            }
            let expected = try DrumMIDI.notes(hits, options: DrumMIDIOptions(ppq: 480, maxDuration: 120))
            var stream = LiveNoteStream(maxDuration: 120)
            var out: [LiveEvent] = []
            var tick = 0
            for h in hits {
                tick += h.delta
                stream.hit(onset: tick, note: h.note, velocity: h.velocity) { out.append($0) }
            }
            let last = stream.finish { out.append($0) }
            XCTAssertEqual(last, expected.last.map { $0.tick + 120 })
            XCTAssertEqual(out.map(\.tick), out.map(\.tick).sorted(), "in tick order")
            XCTAssertEqual(out.filter(\.isNoteOn).map { [$0.tick, Int($0.data1), Int($0.data2)] },
                           expected.map { [$0.tick, Int($0.note), Int($0.velocity)] })
            let offs = out.filter { !$0.isNoteOn }.map { [$0.tick, Int($0.data1)] }.sorted { $0.lexicographicallyPrecedes($1) }
            XCTAssertEqual(offs, expected.map { [$0.tick + $0.duration, Int($0.note)] }.sorted { $0.lexicographicallyPrecedes($1) })
            // NOTE OFFs before the NOTE ONs of their tick.
            for (a, b) in zip(out, out.dropFirst()) where a.tick == b.tick {
                XCTAssertFalse(a.isNoteOn && !b.isNoteOn, "a NOTE OFF after a NOTE ON at tick \(a.tick)")
            }
        }
    }
}
