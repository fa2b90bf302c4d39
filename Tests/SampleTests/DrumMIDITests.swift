import XCTest
import DrummerCore
import MIDIParse
@testable import Sample

final class DrumMIDITests: XCTestCase {
    private func parse(_ bytes: [UInt8]) throws -> MIDIFile {
        try MIDIFile.parse(bytes, path: "generated.mid").file
    }

    func testHeaderTempoChannelAndVelocity() throws {
        let hits = [DrumHit(note: 36, delta: 0), DrumHit(note: 42, delta: 0), DrumHit(note: 38, delta: 240)]
        let bytes = try DrumMIDI.encode(hits, options: DrumMIDIOptions(bpm: 90, velocity: 77))
        // MThd, length 6, format 0, one track, 480 PPQ.
        XCTAssertEqual(Array(bytes[0..<14]), Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0])
        let file = try parse(bytes)
        XCTAssertEqual(file.format, 0)
        XCTAssertEqual(file.division, .ppq(480))
        XCTAssertEqual(file.tracks.count, 1)
        var tempos: [Int] = [], ons: [(UInt8, UInt8, UInt8)] = [], offs = 0
        for e in file.tracks[0].events {
            switch e.kind {
            case .meta(.tempo(let us)): tempos.append(us); XCTAssertEqual(e.tick, 0)
            case .channel(.noteOn(let ch, let n, let v)) where v > 0: ons.append((ch, n, v))
            case .channel(.noteOff(let ch, _, _)): offs += 1; XCTAssertEqual(ch, 9)
            case .channel(.noteOn(let ch, _, _)): offs += 1; XCTAssertEqual(ch, 9)
            default: break
            }
        }
        XCTAssertEqual(tempos, [666_667])  // 60e6 / 90
        XCTAssertEqual(ons.map { $0.0 }, [9, 9, 9])
        XCTAssertEqual(ons.map { $0.1 }, [36, 42, 38])
        XCTAssertEqual(ons.map { $0.2 }, [77, 77, 77])
        XCTAssertEqual(offs, 3)
        XCTAssertTrue(bytes.contains(0x99), "status byte 0x99 (NOTE ON, channel index 9)")
        XCTAssertEqual(file.tempoMap.seconds(atTick: 480), 60.0 / 90, accuracy: 1e-6)
    }

    /// Sampled sequences from a model, with many simultaneous hits and short gaps,
    /// come back from the file exactly (after the documented same-key dedupe).
    func testRoundTripGivesBackTheSampledSequence() throws {
        let (w, v) = try TestModels.small()
        let sampler = try Sampler(weights: w, vocabulary: v)
        var sawSimultaneous = false
        for seed in 0..<10 as Range<UInt64> {
            var rng = SeededRNG(seed: seed)
            let hits = try sampler.generate(count: 300, rng: &rng).map(\.hit)
            sawSimultaneous = sawSimultaneous || hits.dropFirst().contains { $0.delta == 0 }
            let back = DrumMIDI.hits(in: try parse(DrumMIDI.encode(hits)), channel: 9)
            XCTAssertEqual(back, DrumMIDI.deduplicated(hits), "seed \(seed)")
        }
        XCTAssertTrue(sawSimultaneous)
    }

    func testDeduplicationOnlyDropsSameKeyAtSameOnset() {
        let hits = [DrumHit(note: 36, delta: 10), DrumHit(note: 42, delta: 0), DrumHit(note: 36, delta: 0),
                    DrumHit(note: 36, delta: 5), DrumHit(note: 36, delta: 0), DrumHit(note: 42, delta: 0)]
        XCTAssertEqual(DrumMIDI.deduplicated(hits),
                       [DrumHit(note: 36, delta: 10), DrumHit(note: 42, delta: 0),
                        DrumHit(note: 36, delta: 5), DrumHit(note: 42, delta: 0)])
        let clean = [DrumHit(note: 36, delta: 0), DrumHit(note: 36, delta: 1), DrumHit(note: 38, delta: 0)]
        XCTAssertEqual(DrumMIDI.deduplicated(clean), clean)
    }

    func testNoteLengthsNeverReachPastTheNextOnset() throws {
        let hits = [DrumHit(note: 36, delta: 0), DrumHit(note: 42, delta: 0), DrumHit(note: 38, delta: 7),
                    DrumHit(note: 36, delta: 1), DrumHit(note: 46, delta: 480)]
        let notes = try DrumMIDI.notes(hits)
        XCTAssertEqual(notes.map(\.tick), [0, 0, 7, 8, 488])
        XCTAssertEqual(notes.map(\.duration), [7, 7, 1, 120, 120])
        // Converting the note list back to onsets is exact too.
        let file = try parse(DrumMIDI.encode(hits))
        XCTAssertEqual(file.hits(channel: 9).map(\.tick), [0, 0, 7, 8, 488])
    }

    func testBadOptionsAndHitsAreErrors() {
        let ok = [DrumHit(note: 36, delta: 0)]
        for (o, message) in [
            (DrumMIDIOptions(bpm: 0), "tempo 0.0 BPM cannot be written"), (DrumMIDIOptions(bpm: .nan), "tempo nan BPM cannot be written"),
            (DrumMIDIOptions(bpm: 1e-300), "tempo 1e-300 BPM cannot be written"),
            (DrumMIDIOptions(velocity: 0), "velocity 0 is outside 1...127"), (DrumMIDIOptions(velocity: 128), "velocity 128 is outside 1...127"),
            (DrumMIDIOptions(channel: 16), "channel index 16 is outside 0...15"), (DrumMIDIOptions(ppq: 0), "PPQ 0 is outside 1...32767"),
            (DrumMIDIOptions(maxDuration: 0), "note length 0 is below 1 tick"),
        ] {
            XCTAssertThrowsError(try DrumMIDI.encode(ok, options: o), "\(o)") {
                XCTAssertTrue(($0 as? DrumMIDIError)?.description.hasPrefix(message) ?? false, "\($0)")
            }
        }
        XCTAssertThrowsError(try DrumMIDI.encode([DrumHit(note: 128, delta: 0)])) {
            XCTAssertEqual($0 as? DrumMIDIError, DrumMIDIError("hit 0 has note 128, outside 0...127"))
        }
        XCTAssertThrowsError(try DrumMIDI.encode([DrumHit(note: 36, delta: -1)])) {
            XCTAssertEqual($0 as? DrumMIDIError, DrumMIDIError("hit 0 has a negative delta -1"))
        }
        XCTAssertThrowsError(try DrumMIDI.encode([DrumHit(note: 36, delta: Int.max), DrumHit(note: 36, delta: Int.max)])) {
            XCTAssertEqual($0 as? DrumMIDIError, DrumMIDIError("hit 0 lies beyond the longest MIDI time line"))
        }
        XCTAssertNoThrow(try DrumMIDI.encode([]))
    }

    func testWriteIsAtomicAndReadable() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("drummidi-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("out.mid").path
        let hits = [DrumHit(note: 36, delta: 0), DrumHit(note: 38, delta: 480)]
        try DrumMIDI.write(hits, to: path)
        XCTAssertEqual(DrumMIDI.hits(in: try MIDIFile.read(path: path).file), hits)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["out.mid"])
    }
}
