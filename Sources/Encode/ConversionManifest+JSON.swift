// manifest.json bytes, fast for a large corpus. JSONEncoder takes about half a second
// per 100,000 files; the file list (all but a few hundred bytes of the manifest) is
// rendered here, in parallel chunks, in exactly the format JSONEncoder gives the rest
// (pretty-printed, sorted keys, unescaped slashes), and spliced into its output. A test
// checks the result equals JSONEncoder's byte for byte.
import Dispatch
import DrummerCore
import Foundation
import FileOutput

extension ConversionManifest {
    /// The manifest as `JSONOutput.encode(self)` writes it, byte for byte.
    public func encodedJSON(threads: Int = 1) throws -> Data {
        var rest = self
        rest.files = []
        let base = try JSONOutput.encode(rest)
        let placeholder = Data("{\n  \"files\" : [\n\n  ],\n".utf8)
        guard !files.isEmpty else { return base }
        // "files" sorts first among the keys; should a key ever sort before it, take the slow path.
        guard base.starts(with: placeholder) else { return try JSONOutput.encode(self) }
        let chunks = max(1, min(threads, files.count / 1000))
        var parts = [[UInt8]](repeating: [], count: chunks)
        let per = (files.count + chunks - 1) / chunks
        parts.withUnsafeMutableBufferPointer { out in
            let slots = UncheckedPointer(out.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: chunks) { c in
                var bytes: [UInt8] = []
                for i in (c * per)..<min(files.count, (c + 1) * per) {
                    if i > 0 { bytes += Array(",\n".utf8) }
                    Self.render(files[i], into: &bytes)
                }
                slots.pointer[c] = bytes
            }
        }
        var out = Data("{\n  \"files\" : [\n".utf8)
        for p in parts { out.append(contentsOf: p) }
        out.append(contentsOf: Array("\n  ],\n".utf8))
        out.append(base[placeholder.count...])
        return out
    }

    static func render(_ f: SourceFile, into out: inout [UInt8]) {
        func line(_ s: String) { out += Array(s.utf8) }
        line("    {\n      \"channel\" : ")
        JSONText.string(f.channel, into: &out)
        line(",\n      \"hits\" : \(f.hits),\n      \"meter\" : ")
        JSONText.string(f.meter, into: &out)
        line(",\n      \"offset\" : \(f.offset),\n      \"path\" : ")
        JSONText.string(f.path, into: &out)
        line(",\n      \"split\" : ")
        JSONText.string(f.split, into: &out)
        if f.warnings.isEmpty {
            line(",\n      \"warnings\" : [\n\n      ]\n    }")
        } else {
            line(",\n      \"warnings\" : [\n")
            for (k, w) in f.warnings.enumerated() {
                line(k == 0 ? "        " : ",\n        ")
                JSONText.string(w, into: &out)
            }
            line("\n      ]\n    }")
        }
    }
}

/// Each chunk writes only its own slot (hence unchecked).
private struct UncheckedPointer<T>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<T>
    init(_ p: UnsafeMutablePointer<T>) { pointer = p }
}

/// JSON string literals as Foundation's JSONEncoder writes them with `.withoutEscapingSlashes`.
enum JSONText {
    static func string(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        for b in s.utf8 {
            switch b {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x08: out += [0x5C, 0x62]
            case 0x0C: out += [0x5C, 0x66]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [0x5C, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            default: out.append(b)
            }
        }
        out.append(0x22)
    }
}
