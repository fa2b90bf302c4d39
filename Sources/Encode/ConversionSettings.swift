// Settings of `drummer convert-midi`: how hits are extracted from each file (MIDIParse's
// HitExtractionSettings) and how the files become one dataset.
import Foundation
import MIDIParse

public struct ConversionSettings: Equatable, Sendable {
    /// Channel, resolution, quantizing, note map and parse mode of every file.
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
    case noHits(String)
    /// One line per unreadable file ("path: byte N: what was expected").
    case badFiles([String])
    case output(path: String, message: String)

    public var description: String {
        switch self {
        case .notADirectory(let d): return "\(d): not a directory"
        case .noMIDIFiles(let d): return "\(d): no .mid, .midi or .rmi files found"
        case .noHits(let d): return "\(d): no hits (NOTE ON with velocity > 0 on the selected channels) in any file"
        case .badFiles(let lines): return "\(lines.count) file(s) could not be read; --strict writes nothing"
        case .output(let p, let m): return "\(p): \(m)"
        }
    }
}
