// Minimal RIFF WAVE handling for the report's audio: FluidSynth writes 16-bit stereo;
// the page embeds 16-bit mono (half the bytes; drums lose nothing that matters).
import Foundation

public enum WAVAudio {
    public struct Format: Equatable, Sendable {
        public var channels: Int
        public var sampleRate: Int
        public var bitsPerSample: Int
    }

    public struct WAVError: Error, Equatable, CustomStringConvertible {
        public let description: String
        init(_ d: String) { description = d }
    }

    /// The format and the sample bytes of a PCM WAV file (the `fmt ` and `data` chunks;
    /// other chunks skipped; a data length past the end of the file is cut to what is there).
    public static func parse(_ data: Data) throws -> (format: Format, samples: Data) {
        let b = [UInt8](data)
        func u32(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24 }
        func u16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        guard b.count >= 12, Array(b[0..<4]) == Array("RIFF".utf8), Array(b[8..<12]) == Array("WAVE".utf8) else {
            throw WAVError("not a RIFF WAVE file")
        }
        var i = 12
        var format: Format?
        while i + 8 <= b.count {
            let id = String(decoding: b[i..<i + 4], as: UTF8.self)
            let size = u32(i + 4)
            let body = i + 8
            if id == "fmt " {
                guard size >= 16, body + 16 <= b.count else { throw WAVError("fmt chunk too short") }
                guard u16(body) == 1 || u16(body) == 0xFFFE else { throw WAVError("not PCM (format tag \(u16(body)))") }
                format = Format(channels: u16(body + 2), sampleRate: u32(body + 4), bitsPerSample: u16(body + 14))
            } else if id == "data" {
                guard let format else { throw WAVError("data chunk before the fmt chunk") }
                let end = min(b.count, body + size)
                return (format, Data(b[body..<end]))
            }
            i = body + size + (size & 1)
        }
        throw WAVError("no data chunk")
    }

    /// A 16-bit mono PCM WAV file holding `samples`.
    public static func encode(mono samples: [Int16], sampleRate: Int) -> Data {
        var d = Data()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: v).littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(truncatingIfNeeded: v).littleEndian) { d.append(contentsOf: $0) } }
        let bytes = samples.count * 2
        d.append(contentsOf: Array("RIFF".utf8)); u32(36 + bytes)
        d.append(contentsOf: Array("WAVE".utf8))
        d.append(contentsOf: Array("fmt ".utf8)); u32(16)
        u16(1); u16(1); u32(sampleRate); u32(sampleRate * 2); u16(2); u16(16)
        d.append(contentsOf: Array("data".utf8)); u32(bytes)
        d.reserveCapacity(d.count + bytes)
        for s in samples { withUnsafeBytes(of: s.littleEndian) { d.append(contentsOf: $0) } }
        return d
    }

    /// A 16-bit PCM WAV file of any channel count as 16-bit mono (channels averaged).
    public static func monoPCM16(_ data: Data) throws -> Data {
        let (format, samples) = try parse(data)
        guard format.bitsPerSample == 16 else { throw WAVError("\(format.bitsPerSample)-bit samples; 16-bit expected") }
        guard format.channels >= 1 else { throw WAVError("no channels") }
        let frames = samples.count / (2 * format.channels)
        var mono = [Int16](repeating: 0, count: frames)
        samples.withUnsafeBytes { raw in
            for f in 0..<frames {
                var sum = 0
                for c in 0..<format.channels {
                    sum += Int(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * (f * format.channels + c), as: Int16.self)))
                }
                mono[f] = Int16(sum / format.channels)
            }
        }
        return encode(mono: mono, sampleRate: format.sampleRate)
    }
}
