// Public entry points of the reader.
import FileOutput
import Foundation
#if canImport(Glibc)
import Glibc
private let posixRead = Glibc.read
#elseif canImport(Darwin)
import Darwin
private let posixRead = Darwin.read
#endif

extension MIDIFile {
    /// Largest file `read(path:mode:)` accepts (MIDI files are kilobytes; this bounds memory).
    static let maximumFileSize = 256 << 20

    /// Parses a Standard MIDI File (or a RIFF RMID file wrapping one).
    ///
    /// - Parameters:
    ///   - bytes: the whole file.
    ///   - path: the name used in errors and warnings.
    ///   - mode: `.strict` throws at the first defect; `.safe` recovers only the defects that
    ///     need no guessing, `.lenient` all it can, each with a warning.
    /// - Returns: the file and one warning per recovered defect (always empty in strict mode).
    /// - Throws: `MIDIFileError` naming the byte offset and what was expected there.
    public static func parse(_ bytes: [UInt8], path: String, mode: MIDIParseMode = .strict) throws
        -> (file: MIDIFile, warnings: [MIDIWarning])
    {
        try bytes.withUnsafeBufferPointer { buf in
            var reader = SMFReader(buffer: buf, path: path, mode: mode, sink: EventCollector(buffer: buf))
            let (format, division) = try reader.readFile()
            return (MIDIFile(format: format, division: division, tracks: reader.sink.tracks), reader.warnings)
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
        // O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer; it is refused below.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw MIDIReadError(path: path, message: "cannot read: \(ErrorText.errno(errno))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw MIDIReadError(path: path, message: "cannot stat: \(ErrorText.errno(errno))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw MIDIReadError(path: path, message: "not a regular file (\(AtomicOutput.fileTypeName(info.st_mode)))")
        }
        let size = Int(info.st_size)
        guard size <= maximumFileSize else {
            throw MIDIReadError(path: path, message: "file of \(size) bytes is larger than the \(maximumFileSize)-byte limit")
        }
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            while count < size {
                let n = posixRead(fd, buffer.baseAddress! + count, size - count)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    break
                }
                if n == 0 { break }  // the file shrank while being read: keep what is there
                count += n
            }
        }
        guard failure == 0 else { throw MIDIReadError(path: path, message: "cannot read: \(ErrorText.errno(failure))") }
        return bytes
    }
}
