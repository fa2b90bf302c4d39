// Public entry points of the reader.
import Foundation

extension MIDIFile {
    /// Largest file `read(path:mode:)` accepts (MIDI files are kilobytes; this bounds memory).
    public static let maximumFileSize = 256 << 20

    /// Parses a Standard MIDI File (or a RIFF RMID file wrapping one).
    ///
    /// - Parameters:
    ///   - bytes: the whole file.
    ///   - path: the name used in errors and warnings.
    ///   - mode: `.strict` throws at the first defect; `.lenient` recovers and warns.
    /// - Returns: the file and, in lenient mode, one warning per recovered defect
    ///   (always empty in strict mode).
    /// - Throws: `MIDIFileError` naming the byte offset and what was expected there.
    public static func parse(_ bytes: [UInt8], path: String, mode: MIDIParseMode = .strict) throws
        -> (file: MIDIFile, warnings: [MIDIWarning])
    {
        try bytes.withUnsafeBufferPointer { buf in
            var reader = SMFReader(buffer: buf, path: path, mode: mode)
            let file = try reader.readFile()
            return (file, reader.warnings)
        }
    }

    /// Parses `data`; see `parse(_:path:mode:)`.
    public static func parse(_ data: Data, path: String, mode: MIDIParseMode = .strict) throws
        -> (file: MIDIFile, warnings: [MIDIWarning])
    {
        try parse([UInt8](data), path: path, mode: mode)
    }

    /// Reads and parses the file at `path` with one read.
    /// - Throws: `MIDIReadError` when the file cannot be read or is larger than
    ///   `maximumFileSize`; `MIDIFileError` when its content is not a valid MIDI file.
    public static func read(path: String, mode: MIDIParseMode = .strict) throws
        -> (file: MIDIFile, warnings: [MIDIWarning])
    {
        try parse(readBytes(path: path), path: path, mode: mode)
    }

    /// The bytes of the file at `path`, read at once (bounded by `maximumFileSize`).
    public static func readBytes(path: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: path)
        let size: Int
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        } catch {
            throw MIDIReadError(path: path, message: "cannot read: \(error.localizedDescription)")
        }
        guard size <= maximumFileSize else {
            throw MIDIReadError(path: path, message: "file of \(size) bytes is larger than the \(maximumFileSize)-byte limit")
        }
        do {
            return [UInt8](try Data(contentsOf: url))
        } catch {
            throw MIDIReadError(path: path, message: "cannot read: \(error.localizedDescription)")
        }
    }
}
