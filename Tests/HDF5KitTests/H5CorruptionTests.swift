// Corrupt files: single bit flips at a few hundred seeded positions of a
// checkpoint-like file, each read back whole (every group, dataset and
// attribute) in a child process, since libhdf5 itself may crash on some. Each
// flip ends as: refused with an error, read identical (the bit was unused, or
// in the user block), read DIFFERENT without an error, or crashed/hung. With
// checksummed metadata and Fletcher-32, nothing may be read different.
import Foundation
import XCTest
@testable import HDF5Kit

/// Set in a child process to the path of a `FlipJob` to carry out.
private let flipJobVariable = "DRUMMER_H5_FLIP_JOB"

private struct FlipJob: Codable {
    var original: String
    var scratch: String
    var results: String
    /// (byte offset, bit) pairs.
    var flips: [[Int]]
    /// Indices into `flips` to try, in order.
    var indices: [Int]
}

/// SplitMix64: a small seeded generator for the flip positions.
private struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What reading one damaged file gave.
private enum FlipOutcome: Equatable {
    case identical, refused(String), different(String), crashed(Int32), hung
}

final class H5CorruptionTests: XCTestCase {
    /// 300 flips per file (DRUMMER_H5_FLIP_COUNT=N for a longer study).
    private static let flipCount = ProcessInfo.processInfo.environment["DRUMMER_H5_FLIP_COUNT"].flatMap { Int($0) } ?? 300

    private func variants() -> [(String, H5File.CreateOptions)] {
        var v18 = H5File.CreateOptions(checksummedMetadata: true, fletcher32: true, userBlockSize: 512)
        v18.formatBound = .v18
        var list: [(String, H5File.CreateOptions)] = [
            ("checksummed+ub512", H5File.CreateOptions(checksummedMetadata: true, fletcher32: true, userBlockSize: 512)),
            ("plain", H5File.CreateOptions()),
        ]
        // The lower format bound, for comparison (DRUMMER_H5_FLIP_STUDY=full).
        if ProcessInfo.processInfo.environment["DRUMMER_H5_FLIP_STUDY"] == "full" { list.append(("checksummed-v18+ub512", v18)) }
        return list
    }

    /// In a child process (`DRUMMER_H5_FLIP_JOB` set): reads every flip of the
    /// job and appends one result line per flip. Otherwise: checks the reader
    /// itself, in this process, on flips with a known outcome.
    func testFlipReader() throws {
        if let jobPath = ProcessInfo.processInfo.environment[flipJobVariable] {
            try runFlipJob(jobPath)
            return
        }
        let dir = try makeTemporaryDirectory(self)
        let wx = (0..<(40 * 100)).map { Float($0) * 0.001 - 1 }  // as writeCheckpointLikeSample writes it
        let pattern = wx[100..<104].withUnsafeBytes { Data($0) }
        for (name, options) in variants() {
            let path = dir.appendingPathComponent("\(name).h5").path
            try H5File.writeAtomically(to: path, options: options) { try writeCheckpointLikeSample($0) }
            let data = try XCTUnwrap(try Data(contentsOf: URL(fileURLWithPath: path)).range(of: pattern)).lowerBound
            var flips = [[data + 2, 5]]
            if options.userBlockSize > 0 { flips.append([100, 0]) }
            let results = dir.appendingPathComponent("\(name).results").path
            let job = FlipJob(original: path, scratch: dir.appendingPathComponent("\(name).scratch.h5").path,
                              results: results, flips: flips, indices: Array(flips.indices))
            let jobPath = dir.appendingPathComponent("\(name).job").path
            try JSONEncoder().encode(job).write(to: URL(fileURLWithPath: jobPath))
            try runFlipJob(jobPath)
            let lines = try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n")
            if options.fletcher32 {
                XCTAssertEqual(lines, ["0 refused checksumMismatch [H5Dread]", "1 identical"], name)
            } else {
                XCTAssertEqual(lines.count, 1, name)
                XCTAssertTrue(lines.first?.hasPrefix("0 different dataset /model/Wx float32 [40, 100] ") ?? false, "\(name): \(lines)")
            }
        }
    }

    private func runFlipJob(_ jobPath: String) throws {
        let job = try JSONDecoder().decode(FlipJob.self, from: Data(contentsOf: URL(fileURLWithPath: jobPath)))
        let original = try Data(contentsOf: URL(fileURLWithPath: job.original))
        let expected = try canonicalDump(try H5File.open(job.original))
        if !FileManager.default.fileExists(atPath: job.results) {
            guard FileManager.default.createFile(atPath: job.results, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: job.results])
            }
        }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: job.results))
        defer { try? out.close() }
        try out.seekToEnd()
        for i in job.indices {
            var bytes = original
            let (offset, bit) = (job.flips[i][0], job.flips[i][1])
            bytes[offset] ^= UInt8(1 << bit)
            try bytes.write(to: URL(fileURLWithPath: job.scratch))
            let outcome: String
            do {
                let dump = try canonicalDump(try H5File.open(job.scratch))
                if dump == expected {
                    outcome = "identical"
                } else {
                    let first = zip(dump, expected).first { $0 != $1 }?.0 ?? "(\(dump.count) lines, not \(expected.count))"
                    outcome = "different " + String(first.prefix(100))
                }
            } catch let e as HDF5Error {
                outcome = "refused \(e.kind) [\(e.call)]"
            }
            // One write(2) per line: a crash later on loses nothing written here.
            try out.write(contentsOf: Data("\(i) \(outcome)\n".utf8))
        }
    }

    func testBitFlipsAreRefusedOrHarmless() throws {
        let started = Date()
        let dir = try makeTemporaryDirectory(self)
        for (name, options) in variants() {
            let path = dir.appendingPathComponent("\(name).h5").path
            try H5File.writeAtomically(to: path, options: options) { try writeCheckpointLikeSample($0) }
            let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
            var rng = SplitMix64(state: 20_261_122)
            let flips = (0..<Self.flipCount).map { _ in [Int(rng.next() % UInt64(size)), Int(rng.next() % 8)] }
            let outcomes = try runFlips(name: name, original: path, flips: flips, dir: dir)
            report(name, size: size, options: options, flips: flips, outcomes: outcomes)
            if options.checksummedMetadata && options.fletcher32 && options.formatBound == .v110 {
                let different = outcomes.enumerated().filter { if case .different = $0.element { return true } else { return false } }
                XCTAssertEqual(different.count, 0, "\(name): damaged data read without an error at "
                               + different.map { "\(flips[$0.offset][0]) (\($0.element))" }.joined(separator: ", "))
            }
        }
        if Self.flipCount == 300 {
            XCTAssertLessThan(Date().timeIntervalSince(started), 60, "the bit-flip study should take well under 20 s")
        }
    }

    /// Runs the flips in child processes: one child for all of them, restarted
    /// after the flip that crashed or hung it, which is then retried alone (a
    /// crash must not be blamed on a flip because of an earlier one).
    private func runFlips(name: String, original: String, flips: [[Int]], dir: URL) throws -> [FlipOutcome] {
        var outcomes = [FlipOutcome?](repeating: nil, count: flips.count)
        var run = 0
        func child(_ indices: [Int]) throws -> (results: [Int: String], died: ChildResult?) {
            run += 1
            let results = dir.appendingPathComponent("\(name)-\(run).results").path
            let job = FlipJob(original: original, scratch: dir.appendingPathComponent("\(name)-\(run).scratch.h5").path,
                              results: results, flips: flips, indices: indices)
            let jobPath = dir.appendingPathComponent("\(name)-\(run).job").path
            try JSONEncoder().encode(job).write(to: URL(fileURLWithPath: jobPath))
            func lines() -> [Substring] {
                ((try? String(contentsOfFile: results, encoding: .utf8)) ?? "").split(separator: "\n")
            }
            let r = try runChildTest("HDF5KitTests.H5CorruptionTests/testFlipReader", environment: [flipJobVariable: jobPath],
                                     timeout: 5, progress: { lines().count })
            var parsed: [Int: String] = [:]
            for line in lines() {
                let parts = line.split(separator: " ", maxSplits: 1)
                if parts.count == 2, let i = Int(parts[0]) { parsed[i] = String(parts[1]) }
            }
            let clean = !r.signaled && !r.timedOut && r.status == 0 && r.output.contains("with 0 failures")
            return (parsed, clean ? nil : r)
        }
        func outcome(_ text: String) -> FlipOutcome {
            if text == "identical" { return .identical }
            if text.hasPrefix("refused ") { return .refused(String(text.dropFirst(8))) }
            return .different(String(text.dropFirst(10)))
        }
        var pending = Array(flips.indices)
        while !pending.isEmpty {
            let (results, died) = try child(pending)
            for (i, text) in results { outcomes[i] = outcome(text) }
            guard let died else {
                XCTAssertEqual(results.count, pending.count, "\(name): the reader skipped flips")
                break
            }
            guard let culprit = pending.first(where: { results[$0] == nil }) else {
                XCTFail("\(name): reader child failed after all its flips: \(died.output.suffix(2000))")
                break
            }
            // Retried alone: its own outcome.
            let (alone, aloneDied) = try child([culprit])
            if let aloneDied {
                outcomes[culprit] = aloneDied.timedOut ? .hung : .crashed(aloneDied.status)
            } else if let text = alone[culprit] {
                outcomes[culprit] = outcome(text)
            }
            pending = pending.filter { outcomes[$0] == nil }
        }
        return outcomes.map { $0 ?? .hung }
    }

    private func report(_ name: String, size: Int, options: H5File.CreateOptions, flips: [[Int]], outcomes: [FlipOutcome]) {
        var refused: [String: Int] = [:]
        var identical = 0, inUserBlock = 0, different: [String] = [], crashed: [String] = [], hung: [Int] = []
        for (i, o) in outcomes.enumerated() {
            let offset = flips[i][0]
            switch o {
            case .identical:
                identical += 1
                if offset < options.userBlockSize { inUserBlock += 1 }
            case let .refused(how): refused[how, default: 0] += 1
            case let .different(what): different.append("\(offset): \(what)")
            case let .crashed(signal): crashed.append("\(offset) (signal \(signal))")
            case .hung: hung.append(offset)
            }
        }
        let refusedText = refused.sorted { $0.value > $1.value }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        print("""
            bit flips [\(name), \(size) bytes, \(outcomes.count) flips]: \
            refused \(refused.values.reduce(0, +)) (\(refusedText)); \
            identical \(identical) (\(inUserBlock) in the user block); \
            DIFFERENT \(different.count); crashed \(crashed.count); hung \(hung.count)
            """)
        if !crashed.isEmpty { print("  crashed at offsets: \(crashed.joined(separator: ", "))") }
        if !hung.isEmpty { print("  hung at offsets: \(hung.map(String.init).joined(separator: ", "))") }
        for d in different.prefix(8) { print("  different at \(d)") }
    }
}
