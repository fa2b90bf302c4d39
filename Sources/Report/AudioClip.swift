// The report's audio: the start of a drum file rendered by FluidSynth, as WAV bytes.
//
// The file is cut to its first bars (at most `maxSeconds`), its hits rewritten on the GM
// drum channel with notes every GM kit sounds (`GeneralMIDIDrums.audible`: 22 → 42, …,
// as `drummer sample` writes them) at 480 PPQ and 120 BPM with their times in seconds kept (so tempo changes
// and SMPTE files play as written), with 1.5 s of tail for the last cymbals to ring.
// FluidSynth renders 16-bit stereo at 22,050 Hz; the clip is kept as mono (44 kB/s).
import FileOutput
import Foundation
import MIDIParse

public enum AudioClip {
    public enum Outcome: Equatable, Sendable {
        /// The 16-bit mono WAV, the seconds of the bars it plays, and its own length (the last notes
        /// ring out past the bars).
        case wav(Data, seconds: Double, clipSeconds: Double)
        case skipped(reason: String)
    }

    public static let sampleRate = 22_050
    static let tailSeconds = 1.5

    /// The hits played: those before `endTick` and within `maxSeconds`, as (seconds, hit).
    public static func clip(_ performance: DrumPerformance, endTick: Int, maxSeconds: Double) -> [(seconds: Double, hit: MIDIHit)] {
        performance.hits.compactMap { h in
            guard h.tick < endTick else { return nil }
            let s = performance.tempo.seconds(atTick: h.tick)
            return s < maxSeconds ? (s, h) : nil
        }
    }

    /// The clip as a format-0 MIDI file: 480 PPQ, 120 BPM (960 ticks per second), channel 10.
    public static func midi(_ hits: [(seconds: Double, hit: MIDIHit)]) throws -> [UInt8] {
        let perSecond = 960.0
        let notes = hits.map { h in
            MIDINote(tick: Int((h.seconds * perSecond).rounded()), note: UInt8(GeneralMIDIDrums.audible(note: Int(h.hit.note))), velocity: h.hit.velocity,
                     channel: 9, duration: 120)
        }
        let last = notes.map(\.tick).max() ?? 0
        // A repeated tempo at the end of the tail makes the track (and the rendering) last that long.
        let tail = last + Int(tailSeconds * perSecond)
        return try MIDIWriter.format0(ppq: 480, tempos: [MIDITempoChange(tick: 0, microsecondsPerQuarter: 500_000),
                                                        MIDITempoChange(tick: tail, microsecondsPerQuarter: 500_000)],
                                      notes: notes)
    }

    /// Renders the start of `performance` (up to `endTick`, at most `maxSeconds`).
    public static func render(_ performance: DrumPerformance, endTick: Int, maxSeconds: Double = 30,
                              soundfont: String? = nil) throws -> Outcome {
        let hits = clip(performance, endTick: endTick, maxSeconds: maxSeconds)
        guard !hits.isEmpty else { return .skipped(reason: "no hits to play") }
        // A temporary of the tool's (registered: an interrupt removes it; named so: the sweeper
        // removes one a killed run left). Its defer does not run when an interrupt ends the process.
        let parent = FileManager.default.temporaryDirectory.path
        TemporaryFiles.sweepOnce(directory: parent)
        let dir = URL(fileURLWithPath: parent).appendingPathComponent(TemporaryFiles.temporaryName(for: "drummer-audio"))
        let registration = TemporaryFiles.registerScratch(dir.path)
        defer {
            try? FileManager.default.removeItem(at: dir)
            TemporaryFiles.unregister(registration)
        }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let mid = dir.appendingPathComponent("clip.mid").path, wav = dir.appendingPathComponent("clip.wav").path
        try Data(midi(hits)).write(to: URL(fileURLWithPath: mid))
        switch try WavRenderer.render(midi: mid, to: wav, soundfont: soundfont, sampleRate: sampleRate) {
        case .skipped(let reason):
            return .skipped(reason: reason)
        case .rendered(let path):
            let mono = try WAVAudio.monoPCM16(Data(contentsOf: URL(fileURLWithPath: path)))
            let end = min(maxSeconds, performance.tempo.seconds(atTick: endTick))
            let (format, samples) = try WAVAudio.parse(mono)
            return .wav(mono, seconds: end, clipSeconds: Double(samples.count / 2) / Double(format.sampleRate))
        }
    }
}
