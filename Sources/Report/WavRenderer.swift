// Optional audio rendering of generated MIDI through FluidSynth and a General MIDI
// soundfont (Debian: fluidsynth, fluid-soundfont-gm). When either is missing the
// rendering is skipped with a message; it never fails the sampling itself.
// Used by `sample --wav` and by the report's audio section.
import DrummerCore
import Foundation
import FileOutput

public enum WavRenderer {
    /// Where Debian's packages put a General MIDI soundfont.
    static let soundfontCandidates = [
        "/usr/share/sounds/sf2/FluidR3_GM.sf2",
        "/usr/share/sounds/sf2/default-GM.sf2",
        "/usr/share/sounds/sf3/default-GM.sf3",
    ]

    public enum Outcome: Equatable, Sendable {
        case rendered(path: String)
        case skipped(reason: String)
    }

    public struct RenderError: Error, CustomStringConvertible {
        public let description: String
    }

    /// What to install when FluidSynth or the soundfont is missing.
    static let installHint = "apt-get install fluidsynth fluid-soundfont-gm"

    /// The first executable called `name` on PATH.
    static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Renders `midi` to the WAV file `wav` (16-bit stereo at `sampleRate`, written by the
    /// output rules of AtomicOutput), or says why it was skipped.
    public static func render(midi: String, to wav: String, soundfont: String?, sampleRate: Int = 44100) throws -> Outcome {
        let (synth, font): (String, String)
        switch try tools(soundfont: soundfont) {
        case .failure(let skipped): return skipped.outcome
        case .success(let found): (synth, font) = found
        }
        // Written by the output rules (AtomicOutput, .userFile): FluidSynth renders into
        // a temporary file, renamed over a regular file or copied into a device or FIFO.
        try AtomicOutput.file(at: wav, options: .userFile) { tmp in
            try run(synth, font: font, midi: midi, into: tmp, naming: wav, sampleRate: sampleRate)
        }
        return .rendered(path: wav)
    }

    /// Renders `midi` into the temporary file of `wav` (prepared with a temporary file), which
    /// the caller puts in place with the other files of its run; or says why it was skipped.
    public static func render(midi: String, into wav: PendingFile, soundfont: String?, sampleRate: Int = 44100) throws -> Outcome {
        guard let tmp = wav.temporaryPath else { preconditionFailure("prepare(..., temporaryFile: true) gives a temporary file") }
        switch try tools(soundfont: soundfont) {
        case .failure(let skipped): return skipped.outcome
        case .success(let (synth, font)):
            try run(synth, font: font, midi: midi, into: tmp, naming: wav.path, sampleRate: sampleRate)
            return .rendered(path: wav.path)
        }
    }

    struct Skipped: Error {
        let reason: String
        var outcome: Outcome { .skipped(reason: reason) }
    }

    /// FluidSynth and the soundfont, or why rendering is skipped.
    static func tools(soundfont: String?) throws -> Result<(String, String), Skipped> {
        guard let synth = executable(named: "fluidsynth") else {
            return .failure(Skipped(reason: "fluidsynth is not installed (\(installHint))"))
        }
        if let soundfont {
            guard FileManager.default.fileExists(atPath: soundfont) else {
                throw RenderError(description: "--soundfont \(soundfont): no such file")
            }
            // FluidSynth skips a file it cannot read with a message on its own output and renders
            // silence or its default: a RIFF "sfbk" (SoundFont 2 or 3) or "DLS " file, or nothing.
            let head = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: soundfont)).read(upToCount: 12)) ?? nil
            guard let head, head.count == 12, head.prefix(4) == Data("RIFF".utf8),
                  [Data("sfbk".utf8), Data("DLS ".utf8)].contains(head.suffix(4)) else {
                throw RenderError(description: "--soundfont \(soundfont): not a SoundFont (a RIFF sfbk file, .sf2 or .sf3)")
            }
            return .success((synth, soundfont))
        }
        guard let found = soundfontCandidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            return .failure(Skipped(reason: "no General MIDI soundfont found (apt-get install fluid-soundfont-gm, or give --soundfont)"))
        }
        return .success((synth, found))
    }

    /// Runs FluidSynth on `midi`, writing the WAV file `tmp` (the temporary file of `wav`, the
    /// output its errors name).
    static func run(_ synth: String, font: String, midi: String, into tmp: String, naming wav: String, sampleRate: Int) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: synth)
        // Gain 0.5: a dense bar of toms and crashes at velocity 127 stays under full scale (0.8
        // clipped there, and left ordinary beats 0.5 dB of headroom).
        p.arguments = ["-ni", "-q", "-g", "0.5", "-r", String(sampleRate), "-T", "wav", "-F", tmp, font, midi]
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        p.standardError = err
        try p.run()
        InterruptCleanup.track(child: p.processIdentifier)
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        InterruptCleanup.untrack(child: p.processIdentifier)
        // FluidSynth exits 0 when it cannot write the file (a full disk: the audio cut short,
        // its header made to match): its error line on standard error is the sign.
        let errors = message.split(separator: "\n").filter { $0.contains("error:") }
            .map { $0.replacingOccurrences(of: "fluidsynth: error: ", with: "").replacingOccurrences(of: tmp, with: wav) }
        var st = stat()
        guard p.terminationStatus == 0, errors.isEmpty, stat(tmp, &st) == 0, st.st_size > 0 else {
            let why = errors.isEmpty ? message.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: tmp, with: wav)
                : errors.joined(separator: "; ")
            throw RenderError(description: "\(wav): FluidSynth could not render the audio"
                + (p.terminationStatus == 0 ? "" : " (exit \(p.terminationStatus))") + (why.isEmpty ? "" : ": " + why))
        }
    }
}
