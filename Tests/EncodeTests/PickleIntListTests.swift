import Foundation
import XCTest
@testable import Encode

private func pickleError(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> PickleError? {
    do {
        let v = try PickleIntList.decode(Data(bytes), path: "t.p")
        XCTFail("decoded \(v) but should fail", file: file, line: line)
        return nil
    } catch let e as PickleError {
        XCTAssertEqual(e.path, "t.p", file: file, line: line)
        XCTAssertEqual(e.description, "t.p: byte \(e.offset): \(e.message)", file: file, line: line)
        XCTAssertFalse(e.description.contains("\n"), file: file, line: line)
        return e
    } catch {
        XCTFail("unexpected error \(error)", file: file, line: line)
        return nil
    }
}

final class PickleIntListTests: XCTestCase {
    func testEveryProtocolDecodesEveryList() throws {
        XCTAssertEqual(PickleFixtures.lists.count, 5 * 6)
        for f in PickleFixtures.lists {
            XCTAssertEqual(try PickleIntList.decode(Data(f.bytes), path: f.name), f.values, "\(f.name) protocol \(f.proto)")
        }
        // The frozen bytes really use the opcodes under test.
        XCTAssertTrue(PickleFixtures.wideP2.contains(0x8A))  // LONG1
        XCTAssertTrue(PickleFixtures.wideP5.prefix(3).elementsEqual([0x80, 5, 0x95]))  // PROTO 5, FRAME
        XCTAssertEqual(PickleFixtures.singleP2.dropLast().last, 0x61)  // APPEND
        XCTAssertEqual(PickleFixtures.longP3.filter { $0 == 0x65 }.count >= 2, true)  // two APPENDS batches
    }

    func testRejectsOtherPicklesNamingTheOpcode() {
        let expected: [String: String] = [
            "dictPickle": "EMPTY_DICT (0x7D)", "floatList": "BINFLOAT (0x47)", "stringList": "SHORT_BINUNICODE (0x8C)",
            "tupleInts": "TUPLE2 (0x86)", "boolList": "bool", "hugeInt": "does not fit in 64 bits",
        ]
        for f in PickleFixtures.rejected {
            guard let e = pickleError(f.bytes) else { continue }
            let want = expected[f.name] ?? "?"
            XCTAssertTrue(e.message.contains(want), "\(f.name): \(e.description)")
        }
        // Offsets point at the opcode: byte 5 for BINFLOAT after PROTO, EMPTY_LIST, BINPUT.
        XCTAssertEqual(pickleError(PickleFixtures.floatList)?.offset, 5)
    }

    func testRefusesCodeExecution() {
        // pickle.dumps(os.system) style: GLOBAL 'posix system' then REDUCE; never run.
        let evil = Array("cposix\nsystem\n(S'echo hi'\ntR.".utf8)
        let e = pickleError(evil)
        XCTAssertEqual(e?.offset, 0)
        XCTAssertTrue(e?.message.contains("GLOBAL") ?? false)
    }

    func testMalformedPickles() {
        let notes = PickleFixtures.notesP4
        // Truncated anywhere: a clear error, never a crash.
        for n in 0..<notes.count {
            _ = pickleError(Array(notes.prefix(n)))
        }
        XCTAssertTrue(pickleError([0x80, 2, 0x5D])?.message.contains("no STOP") ?? false)
        XCTAssertTrue(pickleError([0x80, 6, 0x5D, 0x2E])?.message.contains("protocol 6") ?? false)
        XCTAssertTrue(pickleError([0x80, 2, 0x5D, 0x2E, 0x00])?.message.contains("trailing") ?? false)
        XCTAssertTrue(pickleError([0x80, 2, 0x4B, 1, 0x2E])?.message.contains("single list") ?? false)
        XCTAssertTrue(pickleError([0x80, 2, 0x4B, 1, 0x61, 0x2E])?.message.contains("not a list") ?? false)
        XCTAssertTrue(pickleError([0x80, 2, 0x5D, 0x4B, 1, 0x65, 0x2E])?.message.contains("without a MARK") ?? false)
        XCTAssertTrue(pickleError([0x80, 4, 0x95, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0x5D, 0x2E])?.message.contains("FRAME") ?? false)
        XCTAssertTrue(pickleError(Array("(lp0\nIabc\na.".utf8))?.message.contains("not a 64-bit integer") ?? false)
        XCTAssertTrue(pickleError(Array("(lp0\nI12".utf8))?.message.contains("newline") ?? false)
        XCTAssertEqual(pickleError([0x80, 2, 0x5D, 0x68, 0, 0x2E])?.message.contains("BINGET"), true)
    }

    func testSignExtensionOfLong1() throws {
        // LONG1 with 3 bytes 0xFF 0xFF 0x7F = 8388607; 0x00 0x00 0x80 = -8388608.
        let bytes: [UInt8] = [0x80, 2, 0x5D, 0x28, 0x8A, 3, 0xFF, 0xFF, 0x7F, 0x8A, 3, 0, 0, 0x80, 0x8A, 0, 0x65, 0x2E]
        XCTAssertEqual(try PickleIntList.decode(Data(bytes), path: "t"), [8_388_607, -8_388_608, 0])
    }

    func testReadFileAndMissingFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("ix_to_note.p").path
        try Data(PickleFixtures.notesP2).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try PickleIntList.read(path: path), PickleFixtures.notesValues)
        XCTAssertThrowsError(try PickleIntList.read(path: dir.appendingPathComponent("nope.p").path)) { e in
            XCTAssertTrue("\(e)".contains("nope.p: byte 0: cannot read"), "\(e)")
        }
    }

    func testPythonInterop() throws {
        try PythonInterop.require("pickle")
        let dir = try makeTemporaryDirectory(self)
        _ = try PythonInterop.check("""
            import sys, os, pickle, random
            r = random.Random(3)
            ticks = sorted(set(r.randrange(-10**12, 10**12) for _ in range(2500)))
            for p in range(pickle.HIGHEST_PROTOCOL + 1):
                with open(os.path.join(sys.argv[1], 'ix_to_tick.%d.p' % p), 'wb') as f:
                    pickle.dump(ticks, f, protocol=p)
            with open(os.path.join(sys.argv[1], 'ticks.txt'), 'w') as f:
                f.write(' '.join(map(str, ticks)))
            """, [dir.path])
        let expected = try String(contentsOf: dir.appendingPathComponent("ticks.txt"), encoding: .utf8)
            .split(separator: " ").compactMap { Int($0) }
        XCTAssertGreaterThan(expected.count, 2000)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".p") }
        XCTAssertGreaterThanOrEqual(files.count, 6)
        for f in files {
            XCTAssertEqual(try PickleIntList.read(path: dir.appendingPathComponent(f).path), expected, f)
        }
    }
}
