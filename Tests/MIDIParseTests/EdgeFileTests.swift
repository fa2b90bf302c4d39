import Foundation
import XCTest
@testable import MIDIParse

/// Every file of ../shared/midi-edge and every Tests/Fixtures/rnn-drummer/*.mid has one
/// expectation here, justified by the Standard MIDI File 1.0 specification (SMF 1.0, MMA RP-001)
/// or the MIDI 1.0 specification. A file without an expectation fails the test.
///
/// - accepted: strict parsing succeeds; format, division, track count, hit count and the first
///   and last hit ([tick, channel, note, velocity]) are checked (hits on the merged time line).
/// - lenient: strict parsing throws `error`; lenient parsing succeeds with exactly `warnings`
///   and `hits` hits; `safe` says what the default policy does: recover as lenient does (the
///   defects need no guessing), refuse with the strict error, or refuse with another error.
/// - rejected: all three modes throw this error.
/// Accepted files parse identically, without warnings, in all three modes.
final class EdgeFileTests: XCTestCase {
    struct W: Equatable, CustomStringConvertible {
        let offset: Int
        let defect: MIDIDefect
        init(_ offset: Int, _ defect: MIDIDefect) {
            self.offset = offset
            self.defect = defect
        }
        var description: String { "byte \(offset): \(defect.message)" }
    }

    enum Expect {
        case accepted(format: Int, division: MIDIDivision, tracks: Int, hits: Int, first: [Int]?, last: [Int]?)
        case lenient(error: W, warnings: [W], hits: Int, safe: Safe)
        case rejected(W)
    }

    /// What the safe (default) policy does with a file lenient mode recovers.
    enum Safe {
        case recovers
        case refusesLikeStrict
        case refuses(W)
    }

    struct E {
        let path: String
        let expect: Expect
        let why: String
        init(_ path: String, _ expect: Expect, why: String) {
            self.path = path
            self.expect = expect
            self.why = why
        }
    }

    static let table: [E] = [
        E("midi-edge/go-audio/LICENSE", .rejected(W(0, .notMIDI(found: [32, 32, 32, 32]))),
          why: "Not a MIDI file (license text): SMF 1.0 files begin with the \"MThd\" chunk, RMID (RP-029) files with \"RIFF\""),
        E("midi-edge/go-audio/fixtures/bossa.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 18, first: [0, 0, 36, 48], last: [336, 0, 51, 48]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/c-maj-scale.mid", .accepted(format: 1, division: .ppq(480), tracks: 1, hits: 8, first: [0, 0, 48, 80], last: [3360, 0, 60, 80]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/closedHat.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 12, first: [0, 0, 36, 123], last: [674, 0, 42, 55]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/elise.mid", .accepted(format: 1, division: .ppq(960), tracks: 4, hits: 1068, first: [960, 0, 76, 71], last: [185760, 0, 33, 45]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/elise1track.mid", .accepted(format: 0, division: .ppq(480), tracks: 1, hits: 1068, first: [480, 0, 76, 71], last: [92880, 0, 69, 45]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/example-format0.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 4, first: [0, 2, 48, 96], last: [192, 0, 76, 32]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/example-format0.mid.hex", .rejected(W(0, .notMIDI(found: [47, 47, 32, 72]))),
          why: "A hex dump (text), not MIDI: SMF 1.0 files begin with the \"MThd\" chunk"),
        E("midi-edge/go-audio/fixtures/example-format1.mid", .accepted(format: 1, division: .ppq(96), tracks: 4, hits: 4, first: [0, 2, 48, 96], last: [192, 0, 76, 32]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/example-format1.mid.hex", .rejected(W(0, .notMIDI(found: [47, 47, 32, 72]))),
          why: "A hex dump (text), not MIDI: SMF 1.0 files begin with the \"MThd\" chunk"),
        E("midi-edge/go-audio/fixtures/satb-basic.mid", .accepted(format: 1, division: .ppq(480), tracks: 4, hits: 24, first: [0, 0, 60, 80], last: [1680, 3, 57, 80]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/unquantized.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 32, first: [0, 0, 36, 126], last: [1487, 0, 38, 66]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/unquantized2bars-quantized1_16.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 23, first: [0, 0, 48, 88], last: [672, 0, 72, 88]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/unquantized2bars-quantized1_32.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 23, first: [0, 0, 48, 88], last: [672, 0, 72, 88]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/unquantized2bars-quantized1_8.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 23, first: [0, 0, 48, 88], last: [672, 0, 72, 88]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/unquantized2bars.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 23, first: [0, 0, 48, 88], last: [677, 0, 52, 70]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/unquantized_quantized-1_32.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 32, first: [0, 0, 36, 126], last: [1488, 0, 38, 66]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/go-audio/fixtures/unquantized_quantized-1_32_start_end.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 32, first: [0, 0, 36, 126], last: [1488, 0, 38, 66]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/LICENSE.md", .rejected(W(0, .notMIDI(found: [77, 73, 84, 32]))),
          why: "Not a MIDI file (license text): SMF 1.0 files begin with the \"MThd\" chunk, RMID (RP-029) files with \"RIFF\""),
        E("midi-edge/jazz-soft/midi/test-2-tracks-type-0.mid", .lenient(error: W(10, .format0TrackCount(2)), warnings: [W(10, .format0TrackCount(2))], hits: 16, safe: .refusesLikeStrict),
          why: "SMF 1.0: \"format 0: the file contains a single multi-channel track\"; two MTrk chunks is a defect. Lenient reads both tracks as in format 1; safe refuses (simultaneous or sequential would be a guess)"),
        E("midi-edge/jazz-soft/midi/test-2-tracks-type-1.mid", .accepted(format: 1, division: .ppq(96), tracks: 2, hits: 16, first: [96, 0, 60, 127], last: [768, 1, 73, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); format 1 tracks are simultaneous and merge by tick"),
        E("midi-edge/jazz-soft/midi/test-2-tracks-type-2.mid", .accepted(format: 2, division: .ppq(96), tracks: 2, hits: 16, first: [96, 0, 60, 127], last: [1632, 1, 73, 127]),
          why: "SMF 1.0: \"format 2: one or more sequentially independent single-track patterns\"; track 2 starts where track 1 ends, so the last hit lies past track 1's end"),
        E("midi-edge/jazz-soft/midi/test-all-gm-percussion.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 183, first: [0, 9, 27, 127], last: [26112, 9, 87, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); every GM percussion hit is on channel index 9"),
        E("midi-edge/jazz-soft/midi/test-all-gm-sounds.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 512, first: [0, 0, 60, 127], last: [67344, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-all-gm2-sounds.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 1060, first: [0, 0, 60, 127], last: [139680, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-all-gs-sounds.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 5044, first: [0, 0, 60, 127], last: [665568, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-all-microsoft-gs-wavetable-synth-sounds.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 904, first: [0, 0, 60, 127], last: [119088, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-all-xg-sounds.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 4560, first: [0, 0, 60, 127], last: [601680, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-c-major-scale.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 60, 127], last: [672, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-control-00-20-bank-select.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 60, 127], last: [864, 9, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-control-40-damper.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 60, 127], last: [1152, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-control-41-portamento.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 60, 127], last: [1152, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-control-54-portamento-control.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 1, first: [0, 0, 60, 127], last: [0, 0, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-control-7c-omni-mode-off.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-control-7d-omni-mode-on.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-control-7e-mono-mode-on.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-control-7f-poly-mode-on.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-corrupt-file-extra-byte.mid", .lenient(error: W(275, .trailingGarbage(bytes: 1)), warnings: [W(275, .trailingGarbage(bytes: 1))], hits: 8, safe: .recovers),
          why: "SMF 1.0: a file is a series of chunks (4-character type, 32-bit length); one byte after the last chunk is no chunk. Lenient and safe ignore it (no event is lost)"),
        E("midi-edge/jazz-soft/midi/test-corrupt-file-missing-byte.mid", .lenient(error: W(18, .chunkPastEnd(declared: 246, available: 245)), warnings: [W(18, .chunkPastEnd(declared: 246, available: 245)), W(267, .truncated(expected: "a meta event length"))], hits: 8, safe: .refuses(W(267, .truncated(expected: "a meta event length")))),
          why: "SMF 1.0: the MTrk length (246) must fit in the file (245 bytes remain), and the track's FF 2F lacks its length byte. Lenient reads to the end of the file and drops the incomplete meta event; safe reads to the end too but refuses the event cut short"),
        E("midi-edge/jazz-soft/midi/test-empty-file.mid", .rejected(W(0, .emptyFile)),
          why: "Zero bytes: SMF 1.0 requires the MThd header chunk first"),
        E("midi-edge/jazz-soft/midi/test-empty.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: one track holding only FF 2F 00 is a valid, empty sequence: accepted with no hits"),
        E("midi-edge/jazz-soft/midi/test-gm2-doggy-78-00-38-4c.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 3, first: [0, 0, 76, 127], last: [192, 0, 76, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-gm2-doggy-79-01-7b.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 3, first: [0, 0, 60, 127], last: [192, 0, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-gs-doggy-01-00-7b.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 3, first: [0, 0, 60, 127], last: [192, 0, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-all.mid", .lenient(error: W(187, .illegalStatus(241)), warnings: [W(187, .illegalStatus(241)), W(190, .illegalStatus(242)), W(194, .illegalStatus(243)), W(197, .illegalStatus(244)), W(199, .illegalStatus(245)), W(201, .illegalStatus(246)), W(203, .illegalStatus(248)), W(205, .illegalStatus(249)), W(207, .illegalStatus(250)), W(209, .illegalStatus(251)), W(211, .illegalStatus(252)), W(213, .illegalStatus(253)), W(215, .illegalStatus(254))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; system common F1-F6 and real-time F8-FE are not events of a file. Lenient steps over each with its MIDI 1.0 data length"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-f1-xx.mid", .lenient(error: W(216, .illegalStatus(241)), warnings: [W(216, .illegalStatus(241))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-f2-xx-xx.mid", .lenient(error: W(221, .illegalStatus(242)), warnings: [W(221, .illegalStatus(242))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-f3-xx.mid", .lenient(error: W(213, .illegalStatus(243)), warnings: [W(213, .illegalStatus(243))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-f4.mid", .lenient(error: W(205, .illegalStatus(244)), warnings: [W(205, .illegalStatus(244))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-f5.mid", .lenient(error: W(205, .illegalStatus(245)), warnings: [W(205, .illegalStatus(245))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-f6.mid", .lenient(error: W(208, .illegalStatus(246)), warnings: [W(208, .illegalStatus(246))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-f8.mid", .lenient(error: W(208, .illegalStatus(248)), warnings: [W(208, .illegalStatus(248))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-f9.mid", .lenient(error: W(205, .illegalStatus(249)), warnings: [W(205, .illegalStatus(249))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-fa.mid", .lenient(error: W(201, .illegalStatus(250)), warnings: [W(201, .illegalStatus(250))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-fb.mid", .lenient(error: W(204, .illegalStatus(251)), warnings: [W(204, .illegalStatus(251))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-fc.mid", .lenient(error: W(200, .illegalStatus(252)), warnings: [W(200, .illegalStatus(252))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-fd.mid", .lenient(error: W(205, .illegalStatus(253)), warnings: [W(205, .illegalStatus(253))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-illegal-message-fe.mid", .lenient(error: W(210, .illegalStatus(254)), warnings: [W(210, .illegalStatus(254))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: <event> is a channel message, a sysex (F0/F7) or a meta (FF) event; this system common or real-time status is not. Lenient steps over it with its MIDI 1.0 data length; safe refuses (the data length is a guess)"),
        E("midi-edge/jazz-soft/midi/test-karaoke-kar.mid", .accepted(format: 1, division: .ppq(100), tracks: 3, hits: 29, first: [0, 0, 64, 127], last: [1500, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-multichannel-chords-0.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 24, first: [0, 0, 60, 127], last: [672, 2, 79, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-multichannel-chords-1.mid", .accepted(format: 1, division: .ppq(96), tracks: 3, hits: 24, first: [0, 0, 60, 127], last: [672, 2, 79, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-multichannel-chords-2.mid", .accepted(format: 1, division: .ppq(96), tracks: 2, hits: 24, first: [0, 0, 60, 127], last: [672, 2, 79, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-multichannel-chords-3.mid", .accepted(format: 1, division: .ppq(96), tracks: 3, hits: 24, first: [0, 0, 60, 127], last: [672, 0, 79, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-non-midi-track.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 60, 127], last: [672, 0, 72, 127]),
          why: "SMF 1.0: \"programs should expect alien chunks and treat them as if they weren't there\": the \"Junk\" chunk is skipped and its \"MTrk\" text is not read as a chunk"),
        E("midi-edge/jazz-soft/midi/test-not-a-midi-file.mid", .rejected(W(0, .notMIDI(found: [110, 111, 116, 32]))),
          why: "Text, not MIDI: SMF 1.0 files begin with the \"MThd\" chunk"),
        E("midi-edge/jazz-soft/midi/test-note-on-velocity.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 9, first: [0, 0, 60, 1], last: [768, 0, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); NOTE ONs with velocities 1, 16, ..., 127 are nine hits (velocity 1 is a hit, only 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-rpn-00-00-pitch-bend-range.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 5, first: [0, 0, 60, 127], last: [4608, 0, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-rpn-00-01-fine-tuning.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 25, first: [0, 0, 64, 127], last: [2304, 0, 76, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-rpn-00-02-coarse-tuning.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 60, 127], last: [672, 0, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-rpn-00-05-modulation-depth-range.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 5, first: [0, 0, 60, 127], last: [2688, 0, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-running-status-metaevent.mid", .lenient(error: W(234, .runningStatusCancelled(found: 67)), warnings: [W(234, .runningStatusCancelled(found: 67))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: \"Sysex events and meta-events cancel any running status which was in effect\"; the data byte after the text meta event has no status. Lenient continues with the cancelled status; safe refuses (a guess)"),
        E("midi-edge/jazz-soft/midi/test-running-status-sysex.mid", .lenient(error: W(225, .runningStatusCancelled(found: 67)), warnings: [W(225, .runningStatusCancelled(found: 67))], hits: 8, safe: .refusesLikeStrict),
          why: "SMF 1.0: \"Sysex events and meta-events cancel any running status which was in effect\"; the data byte after the F0 sysex has no status. Lenient continues with the cancelled status; safe refuses (a guess)"),
        E("midi-edge/jazz-soft/midi/test-silence-all-notes-off.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); the track holds only meta events before its end (no NOTE ON), so no hits"),
        E("midi-edge/jazz-soft/midi/test-silence-end-of-track.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); the track holds only meta events before its end (no NOTE ON), so no hits"),
        E("midi-edge/jazz-soft/midi/test-silence-text-metaevent.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); the track holds only meta events before its end (no NOTE ON), so no hits"),
        E("midi-edge/jazz-soft/midi/test-smpte-offset.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 60, 127], last: [672, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); the FF 54 SMPTE offset (1 minute) is decoded as a meta event and does not move tick times"),
        E("midi-edge/jazz-soft/midi/test-sysex-7e-06-01-id-request.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-sysex-7e-09-01-gm1-enable.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-sysex-7e-09-02-gm-disable.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-sysex-7e-09-03-gm2-enable.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 0, first: nil, last: nil),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-sysex-7f-04-03-master-fine-tuning.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 5, first: [0, 0, 60, 127], last: [384, 0, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-sysex-7f-04-04-master-coarse-tuning.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 60, 127], last: [672, 7, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-sysex-7x-08-0x-scale-tuning.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 65, first: [0, 0, 60, 127], last: [6432, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-sysex-gs-40-1x-15-drum-part-change.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 48, 127], last: [864, 9, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-sysex-gs-40-1x-4x-scale-tuning.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 3, first: [0, 0, 60, 127], last: [192, 0, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-syx-7e-06-01-id-request.syx", .rejected(W(0, .notMIDI(found: [240, 126, 127, 6]))),
          why: "A raw sysex dump (F0 ... F7), not a file: SMF 1.0 files begin with the \"MThd\" chunk"),
        E("midi-edge/jazz-soft/midi/test-track-length.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 1, first: [0, 0, 60, 127], last: [0, 0, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); the delta time before FF 2F 00 sets the track's length past its one note"),
        E("midi-edge/jazz-soft/midi/test-vlq-2-byte.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 60, 127], last: [672, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); delta times are variable-length quantities of up to 4 bytes (SMF 1.0: the largest is 0FFFFFFF), here padded with 0x80 continuation bytes"),
        E("midi-edge/jazz-soft/midi/test-vlq-3-byte.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 60, 127], last: [672, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); delta times are variable-length quantities of up to 4 bytes (SMF 1.0: the largest is 0FFFFFFF), here padded with 0x80 continuation bytes"),
        E("midi-edge/jazz-soft/midi/test-vlq-4-byte.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 8, first: [0, 0, 60, 127], last: [672, 0, 72, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); delta times are variable-length quantities of up to 4 bytes (SMF 1.0: the largest is 0FFFFFFF), here padded with 0x80 continuation bytes"),
        E("midi-edge/jazz-soft/midi/test-xg-doggy-40-00-30.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 3, first: [0, 0, 60, 127], last: [192, 0, 60, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi/test-xg-doggy-7e-00-00-54.mid", .accepted(format: 0, division: .ppq(96), tracks: 1, hits: 3, first: [0, 0, 84, 127], last: [192, 0, 84, 127]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF)"),
        E("midi-edge/jazz-soft/midi2/test-c-major-scale-m1-g0.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-c-major-scale-m1-g1.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-c-major-scale-m2-g0.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-c-major-scale-m2-g1.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-data.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-empty-file.midi2", .rejected(W(0, .emptyFile)),
          why: "Zero bytes: SMF 1.0 requires the MThd header chunk first"),
        E("midi-edge/jazz-soft/midi2/test-empty.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "SMF 1.0: one track holding only FF 2F 00 is a valid, empty sequence: accepted with no hits"),
        E("midi-edge/jazz-soft/midi2/test-gm2-doggy-78-00-38-4c.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-gm2-doggy-79-01-7b.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-gs-doggy-01-00-7b.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-minimal.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-no-header.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-not-a-midi-file.midi2", .rejected(W(0, .notMIDI(found: [110, 111, 116, 32]))),
          why: "Text, not MIDI: SMF 1.0 files begin with the \"MThd\" chunk"),
        E("midi-edge/jazz-soft/midi2/test-out-of-order-data.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-out-of-order-sysex.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-out-of-order-text.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-text-message.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-xg-doggy-40-00-30.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("midi-edge/jazz-soft/midi2/test-xg-doggy-7e-00-00-54.midi2", .rejected(W(0, .notMIDI(found: [83, 77, 70, 50]))),
          why: "A MIDI 2.0 Clip File (\"SMF2CLIP\"), not an SMF 1.0 file: SMF 1.0 requires \"MThd\" first (this reader is SMF 1.0 only)"),
        E("fixtures/rnn-drummer/demo.mid", .accepted(format: 0, division: .ppq(480), tracks: 1, hits: 200, first: [3, 10, 36, 100], last: [19804, 10, 38, 100]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); the original sampler's output, written on channel index 10 (status 9A)"),
        E("fixtures/rnn-drummer/pattern1.mid", .accepted(format: 0, division: .ppq(480), tracks: 1, hits: 12, first: [0, 0, 36, 80], last: [1680, 0, 44, 80]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); the original project's training pattern 1: 12 hits on channel index 0"),
        E("fixtures/rnn-drummer/pattern2.mid", .accepted(format: 0, division: .ppq(480), tracks: 1, hits: 10, first: [0, 0, 36, 80], last: [1440, 0, 51, 80]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); the original project's training pattern 2: 10 hits on channel index 0"),
        E("fixtures/rnn-drummer/random.mid", .accepted(format: 0, division: .ppq(480), tracks: 1, hits: 200, first: [112, 10, 37, 100], last: [34895, 10, 51, 100]),
          why: "SMF 1.0: MThd of length 6, a format 0/1/2 header whose track count matches its MTrk chunks, each ending with FF 2F 00; hits are NOTE ONs with velocity > 0 (MIDI 1.0: velocity 0 is a NOTE OFF); the original's uniform random output, on channel index 10 (status 9A)"),
    ]

    func testEveryFileHasAnExpectation() throws {
        let shared = SharedData.root
        _ = try SharedData.require("midi-edge")
        var found: [String] = []
        let fm = FileManager.default
        if let walker = fm.enumerator(atPath: shared.appendingPathComponent("midi-edge").path) {
            for case let rel as String in walker {
                var isDir: ObjCBool = false
                if fm.fileExists(atPath: shared.appendingPathComponent("midi-edge/\(rel)").path, isDirectory: &isDir), !isDir.boolValue {
                    found.append("midi-edge/\(rel)")
                }
            }
        }
        for name in try fm.contentsOfDirectory(atPath: SharedData.repoRoot.appendingPathComponent("Tests/Fixtures/rnn-drummer").path)
        where name.hasSuffix(".mid") {
            found.append("fixtures/rnn-drummer/\(name)")
        }
        let listed = Set(Self.table.map(\.path))
        XCTAssertEqual(listed.count, Self.table.count, "a file is listed twice")
        for f in found.sorted() where !listed.contains(f) {
            XCTFail("\(f) has no expectation in EdgeFileTests.table")
        }
        for f in listed.sorted() where !found.contains(f) {
            XCTFail("\(f) is listed but absent from ../shared (or Tests/Fixtures for fixtures/rnn-drummer)")
        }
        for e in Self.table { XCTAssertFalse(e.why.isEmpty, "\(e.path) has no justification") }
    }

    func testEveryFileBehavesAsExpected() throws {
        let shared = try SharedData.require("midi-edge").deletingLastPathComponent()
        for e in Self.table {
            _ = shared
            let path = SharedData.url(of: e.path).path
            let bytes = try MIDIFile.readBytes(path: path)
            let context = "\(e.path) (\(e.why))"
            switch e.expect {
            case let .accepted(format, division, tracks, hits, first, last):
                do {
                    let (file, warnings) = try MIDIFile.parse(bytes, path: path, mode: .strict)
                    XCTAssertTrue(warnings.isEmpty, context)
                    XCTAssertEqual(file.format, format, context)
                    XCTAssertEqual(file.division, division, context)
                    XCTAssertEqual(file.tracks.count, tracks, context)
                    let h = file.hits()
                    XCTAssertEqual(h.count, hits, context)
                    XCTAssertEqual(h.first.map { [$0.tick, Int($0.channel), Int($0.note), Int($0.velocity)] }, first, context)
                    XCTAssertEqual(h.last.map { [$0.tick, Int($0.channel), Int($0.note), Int($0.velocity)] }, last, context)
                    // Safe and lenient mode agree on a valid file.
                    for mode in [MIDIParseMode.safe, .lenient] {
                        let (other, w) = try MIDIFile.parse(bytes, path: path, mode: mode)
                        XCTAssertEqual(other, file, "\(context) in \(mode) mode")
                        XCTAssertTrue(w.isEmpty, "\(context) in \(mode) mode")
                    }
                } catch {
                    XCTFail("\(context): unexpected error \(error)")
                }
            case let .lenient(expectedError, expectedWarnings, hits, safe):
                XCTAssertThrowsError(try MIDIFile.parse(bytes, path: path, mode: .strict), context) { error in
                    guard let error = error as? MIDIFileError else { return XCTFail("\(context): \(error)") }
                    XCTAssertEqual(W(error.offset, error.defect), expectedError, context)
                    XCTAssertEqual(error.path, path)
                }
                do {
                    let (file, warnings) = try MIDIFile.parse(bytes, path: path, mode: .lenient)
                    XCTAssertEqual(warnings.map { W($0.offset, $0.defect) }, expectedWarnings, context)
                    XCTAssertEqual(file.hits().count, hits, context)
                } catch {
                    XCTFail("\(context): lenient mode threw \(error)")
                }
                switch safe {
                case .recovers:
                    do {
                        let (file, warnings) = try MIDIFile.parse(bytes, path: path, mode: .safe)
                        XCTAssertEqual(warnings.map { W($0.offset, $0.defect) }, expectedWarnings, context)
                        XCTAssertEqual(file.hits().count, hits, context)
                        XCTAssertEqual(file, try MIDIFile.parse(bytes, path: path, mode: .lenient).file, context)
                    } catch {
                        XCTFail("\(context): safe mode threw \(error)")
                    }
                case .refusesLikeStrict, .refuses:
                    var expected = expectedError
                    if case .refuses(let w) = safe { expected = w }
                    XCTAssertThrowsError(try MIDIFile.parse(bytes, path: path, mode: .safe), context) { error in
                        guard let error = error as? MIDIFileError else { return XCTFail("\(context): \(error)") }
                        XCTAssertEqual(W(error.offset, error.defect), expected, "\(context) in safe mode")
                    }
                }
            case let .rejected(expected):
                for mode in MIDIParseMode.allCases {
                    XCTAssertThrowsError(try MIDIFile.parse(bytes, path: path, mode: mode), context) { error in
                        guard let error = error as? MIDIFileError else { return XCTFail("\(context): \(error)") }
                        XCTAssertEqual(W(error.offset, error.defect), expected, "\(context) in \(mode) mode")
                    }
                }
            }
        }
    }
}
