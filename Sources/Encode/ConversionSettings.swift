// Settings of `drummer convert-midi`: how hits are extracted from each file (MIDIParse's
// HitExtractionSettings) and how the files become one dataset.
import Foundation
import MIDIParse

public struct ConversionSettings: Equatable, Sendable {
    /// Channel, resolution, quantizing, note map and parse mode of every file
    /// (`.strict` also makes any unreadable file stop the conversion, writing nothing).
    public var extraction = HitExtractionSettings()
    /// Largest delta in target ticks; longer gaps are clamped (nil: no clamping).
    public var maxDelta: Int?
    /// Also write X.npy (one-hot rows).
    public var oneHot = false
    /// Fraction of files (by a stable hash of their relative path) held out for validation.
    public var validationFraction = 0.0

    public init() {}

    /// Target ticks per quarter note.
    public var ppq: Int {
        get { extraction.ppq }
        set { extraction.ppq = newValue }
    }
}

/// Errors that stop a conversion.
public enum ConversionError: Error, Equatable, CustomStringConvertible {
    case notADirectory(String)
    case noMIDIFiles(String)
    /// Files were read but the training ones hold no hit on the selected channels.
    /// `split` is "" or "training ".
    case noHits(directory: String, files: Int, split: String, channel: ChannelSelection, paths: [String] = [])
    /// No file could be read at all (each was reported with its reason).
    case noFileConverted(directory: String, files: Int)
    /// Every file read went to the validation split.
    case allValidation(files: Int, fraction: Double)
    /// One line per unreadable file ("path: reason"); strict mode writes nothing.
    case badFiles([String], noHits: Int = 0)
    /// The output directory (as given) and what went wrong, as a sentence.
    case output(path: String, message: String)

    public var description: String {
        switch self {
        case .notADirectory(let d): return "\(d): not a directory"
        case .noMIDIFiles(let d): return "\(d): no .mid, .midi or .rmi files found"
        case .noHits(let d, let n, let split, let channel, let paths):
            let rule: String
            switch channel {
            case .auto: rule = "--channel auto: channel index 9 when a file has notes there, else every channel"
            case .all: rule = "--channel all: every channel"
            case .index(let c): rule = "--channel \(c): channel index \(c) only"
            }
            let named = paths.isEmpty ? "" : ": " + paths.prefix(10).joined(separator: ", ")
                + (paths.count > 10 ? ", … (\(paths.count) in all)" : "")
            return "none of the \(n) \(split)file\(n == 1 ? "" : "s") read under \(d) holds a hit "
                + "(NOTE ON with velocity > 0) on the selected channels (\(rule))" + named
        case .noFileConverted(let d, let n):
            return "none of the \(n) MIDI file\(n == 1 ? "" : "s") under \(d) could be converted (\(n) skipped: see above)"
        case .allValidation(let n, let f):
            return "all \(n) file\(n == 1 ? "" : "s") fell into the validation split (fraction \(f)); lower --validation-fraction"
        case .badFiles(let lines, let empty):
            // A file read cleanly that holds no hit is refused too (drums on another channel?).
            let unread = lines.count - empty
            return [unread > 0 ? "\(unread) file(s) could not be read cleanly" : nil,
                    empty > 0 ? "\(empty) file(s) hold no hits" : nil].compactMap { $0 }.joined(separator: " and ")
                + "; --strict writes nothing"
        case .output(let p, let m): return "\(p): \(m)"
        }
    }
}
