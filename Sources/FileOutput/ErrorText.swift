// Operating-system and Foundation errors as the short phrases a message needs:
// "no such file or directory", "permission denied", "is a directory", ... instead
// of "The operation could not be completed. (NSCocoaErrorDomain error 256.)".
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum ErrorText {
    /// A lower-case phrase for an errno value.
    public static func errno(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "no such file or directory"
        case EACCES: return "permission denied"
        case EPERM: return "operation not permitted"
        case EISDIR: return "is a directory"
        case ENOTDIR: return "a component of the path is not a directory"
        case ENOSPC: return "no space left on device"
        case EDQUOT: return "disk quota exceeded"
        case EROFS: return "read-only file system"
        case EEXIST: return "already exists"
        case ENAMETOOLONG: return "file name too long"
        case ELOOP: return "too many levels of symbolic links"
        case EXDEV: return "on a different file system"
        case ENOTEMPTY: return "directory not empty"
        case EBUSY: return "busy (in use)"
        case EIO: return "input/output error"
        case EMFILE, ENFILE: return "too many open files"
        case EFBIG: return "file too large"
        case ENXIO: return "no such device or address"
        case EPIPE: return "broken pipe (the reader went away)"
        case EBADF: return "bad file descriptor (not open)"
        case EINVAL: return "invalid argument"
        default:
            guard let c = strerror(code) else { return "error \(code)" }
            let text = String(cString: c)
            return text.prefix(1).lowercased() + text.dropFirst()
        }
    }

    /// The cause of `error` as a phrase: the errno behind a Foundation error where
    /// there is one, a phrase for the common Cocoa file errors, the description of
    /// this project's own errors.
    package static func describe(_ error: Error) -> String {
        if let e = error as? POSIXError { return errno(e.code.rawValue) }
        if let e = error as? DecodingError { return decoding(e) }
        if type(of: error) is NSError.Type || error is CocoaError {
            let ns = error as NSError
            if ns.domain == NSPOSIXErrorDomain { return errno(Int32(truncatingIfNeeded: ns.code)) }
            if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError,
               underlying.domain == NSPOSIXErrorDomain {
                return errno(Int32(truncatingIfNeeded: underlying.code))
            }
            if ns.domain == NSCocoaErrorDomain, let phrase = cocoa(ns.code) { return phrase }
            return ns.localizedDescription
        }
        return String(describing: error)
    }

    /// Why reading the file at `path` failed: "is a directory" where it is one (Foundation's
    /// read of a directory says only "the operation could not be completed"), "not a regular
    /// file (a character device)" for a device or FIFO (Foundation says "permission denied",
    /// even to root), else `describe`.
    package static func reading(_ error: Error, path: String) -> String {
        var st = stat()
        if stat(path, &st) == 0 {
            if st.st_mode & S_IFMT == S_IFDIR { return errno(EISDIR) }
            if st.st_mode & S_IFMT != S_IFREG { return "not a regular file (\(AtomicOutput.fileTypeName(st.st_mode)))" }
        }
        return describe(error)
    }

    /// Why `data` is not JSON, in the parser's words with its place: "invalid value around
    /// character 17 (line 2, column 7)"; nil when it is JSON (of any top-level value).
    package static func jsonSyntax(_ data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            return jsonSyntax(error, in: data)
        }
    }

    /// Why `data` did not decode as `what` ("a vocabulary"): not JSON, with its place
    /// (`jsonSyntax`), or JSON that is not one, in `error`'s words.
    package static func notDecoded(_ data: Data, as what: String, error: Error) -> String {
        jsonSyntax(data).map { "not valid JSON: \($0)" } ?? "not \(what): \(describe(error))"
    }

    /// JSONSerialization's `error` parsing `data` in words with its place, as `jsonSyntax(_:)`.
    package static func jsonSyntax(_ error: Error, in data: Data) -> String {
        let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? describe(error)
        var text = detail.hasSuffix(".") ? String(detail.dropLast()) : detail
        if let first = text.first { text = first.lowercased() + text.dropFirst() }
        // The character index counts Unicode scalars of the text from 0.
        if let r = text.range(of: #"character [0-9]+"#, options: .regularExpression),
           let index = Int(text[r].dropFirst("character ".count)) {
            let before = String(decoding: data, as: UTF8.self).unicodeScalars.prefix(index)
            let line = 1 + before.filter { $0 == "\n" }.count
            let column = 1 + before.count - (before.lastIndex(of: "\n").map { before.distance(from: before.startIndex, to: $0) + 1 } ?? 0)
            text += " (line \(line), column \(column))"
        } else if text.contains("end of file"), !data.isEmpty {
            let lines = 1 + data.filter { $0 == 0x0A }.count
            text += " (its end: byte \(data.count), line \(lines))"
        }
        return text
    }

    /// A short message for a JSON decoding failure (the decoder's own names the Swift types).
    package static func decoding(_ e: DecodingError) -> String {
        let path = { (c: DecodingError.Context) in c.codingPath.map(\.stringValue).joined(separator: ".") }
        switch e {
        case let .dataCorrupted(c): return c.debugDescription
        case let .keyNotFound(k, _): return "missing key \"\(k.stringValue)\""
        case let .typeMismatch(_, c): return "wrong type at \(path(c)): \(c.debugDescription)"
        case let .valueNotFound(_, c): return "missing value at \(path(c))"
        @unknown default: return "\(e)"
        }
    }

    static func cocoa(_ code: Int) -> String? {
        switch CocoaError.Code(rawValue: code) {
        case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or directory"
        case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
        case .fileWriteOutOfSpace: return "no space left on device"
        case .fileWriteVolumeReadOnly: return "read-only file system"
        case .fileWriteFileExists: return "already exists"
        case .fileWriteInvalidFileName, .fileReadInvalidFileName: return "invalid file name"
        case .fileReadTooLarge: return "too large to read"
        case .fileReadCorruptFile: return "not in the expected format"
        case .fileReadInapplicableStringEncoding, .fileWriteInapplicableStringEncoding:
            return "not text in the expected encoding"
        case .fileLocking: return "locked"
        case .fileReadUnknown: return "could not be read (unknown cause)"
        case .fileWriteUnknown: return "could not be written (unknown cause)"
        default: return nil
        }
    }

    /// The phrase for the current `errno`.
    package static var lastErrno: String {
        #if canImport(Glibc)
        errno(Glibc.errno)
        #else
        errno(Darwin.errno)
        #endif
    }
}
