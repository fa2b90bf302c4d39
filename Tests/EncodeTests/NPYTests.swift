import Foundation
import XCTest
@testable import Encode

/// Header length, and the header dict as text, of an encoded file.
private func headerParts(_ d: Data) -> (length: Int, dict: String) {
    let b = [UInt8](d)
    let len = Int(b[8]) | Int(b[9]) << 8
    return (len, String(decoding: b[10..<(10 + len)], as: UTF8.self))
}

private func decodeError(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> NPYError? {
    do {
        _ = try NPY.decode(Data(bytes), path: "x.npy")
        XCTFail("decoding succeeded but should fail", file: file, line: line)
        return nil
    } catch let e as NPYError {
        XCTAssertEqual(e.path, "x.npy", file: file, line: line)
        XCTAssertTrue(e.description.hasPrefix("x.npy: byte \(e.offset): "), e.description, file: file, line: line)
        return e
    } catch {
        XCTFail("unexpected error \(error)", file: file, line: line)
        return nil
    }
}

/// A v1.0 file with the given header dict text (padded as numpy does) and data.
private func file(dict: String, data: [UInt8] = [], major: UInt8 = 1) -> [UInt8] {
    var body = Array(dict.utf8)
    let prefix = major == 1 ? 10 : 12
    while (prefix + body.count + 1) % 64 != 0 { body.append(0x20) }
    body.append(0x0A)
    var out: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, major, 0]
    if major == 1 {
        out += [UInt8(body.count & 0xFF), UInt8(body.count >> 8)]
    } else {
        out += [UInt8(body.count & 0xFF), UInt8(body.count >> 8), 0, 0]
    }
    return out + body + data
}

private func f4Bytes(_ xs: [Float]) -> [UInt8] {
    xs.flatMap { x in withUnsafeBytes(of: x.bitPattern.littleEndian, Array.init) }
}

final class NPYHeaderTests: XCTestCase {
    func testHeaderIsByteForByteWhatNumpyWrites() throws {
        // The fixtures' headers were written by numpy.save; ours must be identical.
        let cases: [([UInt8], NPYDType, [Int])] = [
            (NPYFixtures.onehotF4, .float32, [5, 6]),
            (NPYFixtures.int32Vector, .int32, [4]),
            (NPYFixtures.scalarF4, .float32, []),
            (NPYFixtures.emptyF4, .float32, [0, 3]),
            (NPYFixtures.float64Matrix, .float64, [2, 3]),
            (NPYFixtures.boolMatrix, .bool, [2, 2]),
            (NPYFixtures.uint8Vector, .uint8, [3]),
        ]
        for (fixture, dtype, shape) in cases {
            let header = try NPY.header(dtype: dtype, shape: shape)
            XCTAssertEqual([UInt8](header), Array(fixture.prefix(header.count)), "\(dtype) \(shape)")
            let decoded = try NPY.decode(Data(fixture), path: "fixture")
            XCTAssertEqual(decoded.dataOffset, header.count)
        }
    }

    func testHeaderLayoutAlignmentAndDict() throws {
        for shape in [[], [1], [7], [1234567, 2], [3, 4, 5], [Int(Int32.max), 3], [0]] {
            let h = try NPY.header(dtype: .float32, shape: shape)
            XCTAssertEqual(h.count % 64, 0, "\(shape)")
            XCTAssertEqual(Array(h.prefix(8)), [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0])
            let (len, dict) = headerParts(h)
            XCTAssertEqual(10 + len, h.count)
            XCTAssertTrue(dict.hasSuffix("\n"))
            XCTAssertTrue(dict.hasPrefix("{'descr': '<f4', 'fortran_order': False, 'shape': ("), dict)
            let fields = try NPYHeaderParser.parseHeader(dict, path: "t", offset: 10)
            XCTAssertEqual(fields, NPYHeaderFields(descr: "<f4", fortranOrder: false, shape: shape))
        }
        XCTAssertTrue(headerParts(try NPY.header(dtype: .int32, shape: [9])).dict.contains("'shape': (9,), }"))
        XCTAssertTrue(headerParts(try NPY.header(dtype: .int32, shape: [])).dict.contains("'shape': (), }"))
        for dtype in NPYDType.allCases {
            XCTAssertTrue(headerParts(try NPY.header(dtype: dtype, shape: [2])).dict.contains("'descr': '\(dtype.descr)'"))
            XCTAssertEqual(NPYDType(descr: dtype.descr), dtype)
        }
    }

    func testHeaderRejectsNegativeAndOverflowingShapes() {
        XCTAssertThrowsError(try NPY.header(dtype: .float32, shape: [-1, 2]))
        XCTAssertThrowsError(try NPY.header(dtype: .float32, shape: [Int.max / 2, 3])) { e in
            guard case .shapeOverflow = (e as? NPYError)?.kind else { return XCTFail("\(e)") }
        }
    }

    func testDescrParsing() {
        XCTAssertEqual(NPYDType(descr: "<u1"), .uint8)
        XCTAssertEqual(NPYDType(descr: "|b1"), .bool)
        XCTAssertNil(NPYDType(descr: ">f4"))
        XCTAssertNil(NPYDType(descr: "=f4"))
        XCTAssertNil(NPYDType(descr: "<c8"))
        XCTAssertNil(NPYDType(descr: "<f2"))
        XCTAssertNil(NPYDType(descr: ""))
    }
}

final class NPYRoundTripTests: XCTestCase {
    func testFloat32RoundTripAllRanks() throws {
        let shapes: [[Int]] = [[], [5], [2, 3], [2, 3, 4], [0, 7]]
        for shape in shapes {
            let n = shape.reduce(1, *)
            let values = (0..<n).map { Float($0) * 0.37 - 1.5 }
            let data = try NPY.encode(float32: values, shape: shape)
            let a = try NPY.decode(data, path: "mem")
            XCTAssertEqual(a.shape, shape)
            XCTAssertEqual(a.dtype, .float32)
            XCTAssertEqual(a.count, n)
            // Bitwise identity is the point here.
            XCTAssertEqual(try a.float32Values().map(\.bitPattern), values.map(\.bitPattern))
        }
        let special: [Float] = [.nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude]
        let back = try NPY.decode(NPY.encode(float32: special, shape: [6]), path: "mem").float32Values()
        XCTAssertEqual(back.map(\.bitPattern), special.map(\.bitPattern))
    }

    func testInt32RoundTrip() throws {
        let values: [Int32] = [0, 1, -1, .max, .min, 42]
        let a = try NPY.decode(NPY.encode(int32: values, shape: [3, 2]), path: "mem")
        XCTAssertEqual(a.dtype, .int32)
        XCTAssertEqual(a.shape, [3, 2])
        XCTAssertEqual(try a.int32Values(), values)
        XCTAssertEqual(try a.float32Values(), values.map(Float.init))
    }

    func testEncodeChecksShape() {
        XCTAssertThrowsError(try NPY.encode(float32: [1, 2, 3], shape: [2, 2])) { e in
            XCTAssertEqual((e as? NPYError)?.kind, .shapeMismatch(shape: [2, 2], count: 3))
        }
        XCTAssertNoThrow(try NPY.encode(int32: [1], shape: []))  // a 0-D array holds one value
        XCTAssertThrowsError(try NPY.encode(int32: [], shape: []))
        XCTAssertThrowsError(try NPY.encode(int32: [1, 2], shape: [-1, -2]))
    }

    func testWriteAndReadFile() throws {
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("sub/y.npy").path
        try NPY.write(int32: [5, 6, 7], shape: [3], to: path)
        let a = try NPY.read(path: path)
        XCTAssertEqual(a.path, path)
        XCTAssertEqual(try a.int32Values(), [5, 6, 7])
        let fpath = dir.appendingPathComponent("x.npy").path
        try NPY.write(float32: [1, 0, 0, 1], shape: [2, 2], to: fpath)
        XCTAssertEqual(try NPY.read(path: fpath).float32Values(), [1, 0, 0, 1])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
        XCTAssertEqual(leftovers, [])
    }

    func testReadMissingFile() {
        XCTAssertThrowsError(try NPY.read(path: "/nonexistent/dir/x.npy")) { e in
            guard let e = e as? NPYError, case .io = e.kind else { return XCTFail("\(e)") }
            XCTAssertTrue(e.description.contains("/nonexistent/dir/x.npy"))
        }
    }
}

final class NPYFixtureTests: XCTestCase {
    func testOneHotMatrixRowsWithoutCopy() throws {
        let a = try NPY.decode(Data(NPYFixtures.onehotF4), path: "X.npy")
        XCTAssertEqual(a.shape, [5, 6])
        XCTAssertEqual(a.rowShape.rows, 5)
        XCTAssertEqual(a.rowShape.width, 6)
        var pairs: [[Int]] = []
        try a.withFloat32Rows { r, row in
            XCTAssertEqual(row.count, 6)
            pairs.append(row.indices.filter { row[$0] == 1 })
            XCTAssertEqual(row.reduce(0, +), 2, "row \(r)")
        }
        XCTAssertEqual(pairs, [[0, 3], [1, 4], [2, 5], [0, 4], [1, 3]])
        // Errors thrown by the body stop the walk and propagate.
        struct Stop: Error {}
        var seen = 0
        XCTAssertThrowsError(try a.withFloat32Rows { r, _ in seen += 1; if r == 1 { throw Stop() } }) { XCTAssertTrue($0 is Stop) }
        XCTAssertEqual(seen, 2)
    }

    func testRowsFromMisalignedStorageAreCopiedCorrectly() throws {
        // Slicing off one leading byte puts the data at an odd address.
        let shifted = Data([0] + NPYFixtures.onehotF4).dropFirst()
        let a = try NPY.decode(shifted, path: "X.npy")
        var direct: [[Float]] = []
        try NPY.decode(Data(NPYFixtures.onehotF4), path: "X.npy").withFloat32Rows { _, row in direct.append(Array(row)) }
        var copied: [[Float]] = []
        try a.withFloat32Rows { _, row in copied.append(Array(row)) }
        XCTAssertEqual(copied, direct)
        XCTAssertEqual(try a.float32Values(), direct.flatMap { $0 })
    }

    func testRowsOfOtherShapes() throws {
        var rows: [[Float]] = []
        try NPY.decode(Data(NPYFixtures.scalarF4), path: "s").withFloat32Rows { _, r in rows.append(Array(r)) }
        XCTAssertEqual(rows, [[2.5]])
        rows = []
        try NPY.decode(Data(NPYFixtures.emptyF4), path: "e").withFloat32Rows { _, r in rows.append(Array(r)) }
        XCTAssertEqual(rows, [])
        XCTAssertThrowsError(try NPY.decode(Data(NPYFixtures.int32Vector), path: "i").withFloat32Rows { _, _ in }) { e in
            XCTAssertEqual((e as? NPYError)?.kind, .unsupportedConversion(from: "<i4", to: "float32 rows"))
        }
    }

    func testNumpyWrittenDtypes() throws {
        let i4 = try NPY.decode(Data(NPYFixtures.int32Vector), path: "i4")
        XCTAssertEqual(try i4.int32Values(), [3, -1, .max, .min])

        let f8 = try NPY.decode(Data(NPYFixtures.float64Matrix), path: "f8")
        XCTAssertEqual(f8.dtype, .float64)
        XCTAssertEqual(f8.shape, [2, 3])
        let expected: [Float] = [0.5, -1.25, 3, 1e-3, 2.5, -7]
        for (x, y) in zip(try f8.float32Values(), expected) { XCTAssertEqual(x, y, accuracy: 1e-7) }
        XCTAssertThrowsError(try f8.int32Values()) { e in   // 0.5 is not an integer
            XCTAssertEqual((e as? NPYError)?.kind, .valueOutOfRange(index: 0, value: "0.5", target: "int32"))
        }

        let i8 = try NPY.decode(Data(NPYFixtures.int64Small), path: "i8")
        XCTAssertEqual(i8.dtype, .int64)
        XCTAssertEqual(try i8.int32Values(), [0, 1, -5, 2_000_000_000])
        XCTAssertEqual(try i8.float32Values(), [0, 1, -5, 2e9])
        let big = try NPY.decode(Data(NPYFixtures.int64Large), path: "big.npy")
        XCTAssertThrowsError(try big.int32Values()) { e in
            guard let e = e as? NPYError else { return XCTFail("\(e)") }
            XCTAssertEqual(e.kind, .valueOutOfRange(index: 1, value: "4294967296", target: "int32"))
            XCTAssertEqual(e.offset, big.dataOffset + 8)
        }

        let b1 = try NPY.decode(Data(NPYFixtures.boolMatrix), path: "b1")
        XCTAssertEqual(b1.dtype, .bool)
        XCTAssertEqual(try b1.int32Values(), [1, 0, 0, 1])
        XCTAssertEqual(try b1.float32Values(), [1, 0, 0, 1])

        let u1 = try NPY.decode(Data(NPYFixtures.uint8Vector), path: "u1")
        XCTAssertEqual(u1.dtype, .uint8)
        XCTAssertEqual(try u1.int32Values(), [0, 7, 255])

        let scalar = try NPY.decode(Data(NPYFixtures.scalarF4), path: "s")
        XCTAssertEqual(scalar.shape, [])
        XCTAssertEqual(scalar.count, 1)
        XCTAssertEqual(try scalar.float32Values(), [2.5])

        let empty = try NPY.decode(Data(NPYFixtures.emptyF4), path: "e")
        XCTAssertEqual(empty.shape, [0, 3])
        XCTAssertEqual(try empty.float32Values(), [])
    }

    func testVersion2And3Headers() throws {
        let v2 = try NPY.decode(Data(NPYFixtures.v2Float32), path: "v2")
        XCTAssertEqual(NPYFixtures.v2Float32[6], 2)
        XCTAssertEqual(v2.shape, [2])
        XCTAssertEqual(try v2.float32Values(), [1.5, -2])
        let v3 = try NPY.decode(Data(NPYFixtures.v3Float32), path: "v3")
        XCTAssertEqual(NPYFixtures.v3Float32[6], 3)
        XCTAssertEqual(v3.shape, [1, 2])
        XCTAssertEqual(try v3.float32Values(), [0.25, 4])
        // A hand-made v2.0 header with an unusual but valid layout.
        let custom = file(dict: "{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<f4\"}", data: f4Bytes([7, 8]), major: 2)
        XCTAssertEqual(try NPY.decode(Data(custom), path: "c").float32Values(), [7, 8])
    }
}

final class NPYErrorTests: XCTestCase {
    private let okDict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"

    func testBadMagic() {
        XCTAssertEqual(decodeError([])?.kind, .badMagic)
        XCTAssertEqual(decodeError(Array("PK\u{3}\u{4} zip file....".utf8))?.kind, .badMagic)
        var b = NPYFixtures.int32Vector
        b[1] = UInt8(ascii: "M")
        XCTAssertEqual(decodeError(b)?.kind, .badMagic)
        XCTAssertEqual(decodeError([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1])?.offset, 7)
    }

    func testUnsupportedVersion() {
        for (major, minor) in [(UInt8(0), UInt8(0)), (4, 0), (1, 1)] {
            var b = NPYFixtures.int32Vector
            b[6] = major
            b[7] = minor
            let e = decodeError(b)
            XCTAssertEqual(e?.kind, .unsupportedVersion(major: major, minor: minor))
            XCTAssertEqual(e?.offset, 6)
        }
    }

    func testMalformedHeaders() {
        func expectMalformed(_ bytes: [UInt8], _ fragment: String, line: UInt = #line) {
            guard let e = decodeError(bytes, line: line) else { return }
            guard case let .malformedHeader(msg) = e.kind else { return XCTFail("\(e)", line: line) }
            XCTAssertTrue(msg.contains(fragment), "\(msg) lacks \(fragment)", line: line)
        }
        // Header length larger than the file.
        var long = NPYFixtures.int32Vector
        long[8] = 0xFF
        long[9] = 0xFF
        expectMalformed(long, "exceeds")
        expectMalformed(Array(NPYFixtures.int32Vector.prefix(9)), "header length")
        expectMalformed(file(dict: "['descr', '<f4']"), "not a dict")
        expectMalformed(file(dict: "{'descr': '<f4', 'shape': (2,), }", data: f4Bytes([1, 2])), "missing key 'fortran_order'")
        expectMalformed(file(dict: "{'descr': '<f4', 'fortran_order': False}"), "missing key 'shape'")
        expectMalformed(file(dict: "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}"), "unexpected or repeated keys")
        expectMalformed(file(dict: "{'descr': '<f4', 'fortran_order': False, 'shape': [2], }"), "'shape' is not a tuple")
        expectMalformed(file(dict: "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 'a'), }"), "non-negative integers")
        expectMalformed(file(dict: "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }"), "non-negative integers")
        expectMalformed(file(dict: "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }"), "'fortran_order'")
        expectMalformed(file(dict: "{'descr': '<f4', 'fortran_order': False, 'shape': (2,"), "unexpected end")
        expectMalformed(file(dict: "{'descr': '<f4 'fortran_order': False}"), "expected ','")
        expectMalformed(file(dict: "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x"), "after the header dict")
        expectMalformed(file(dict: "{'descr: '<f4'}"), "expected ':'")
        expectMalformed(file(dict: String(repeating: "(", count: 100)), "nested too deeply")
        expectMalformed(file(dict: "{'descr': os.system('x')}"), "unexpected")
    }

    func testUnsupportedDTypes() {
        XCTAssertEqual(decodeError(NPYFixtures.bigEndianF4)?.kind, .unsupportedDType(">f4"))
        guard case .unsupportedDType = decodeError(NPYFixtures.structured)?.kind else { return XCTFail() }
        XCTAssertEqual(decodeError(file(dict: "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }"))?.kind,
                       .unsupportedDType("<c8"))
        XCTAssertEqual(decodeError(file(dict: "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }"))?.kind,
                       .unsupportedDType("<U3"))
    }

    func testFortranOrder() {
        XCTAssertEqual(decodeError(NPYFixtures.fortranF4)?.kind, .fortranOrder)
        // A 1-D Fortran-order file is still rejected: the flag is what the reader trusts.
        XCTAssertEqual(decodeError(file(dict: "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", data: f4Bytes([1, 2])))?.kind,
                       .fortranOrder)
    }

    func testTruncatedAndTrailingData() {
        let full = NPYFixtures.onehotF4
        let e = decodeError(Array(full.dropLast(3)))
        XCTAssertEqual(e?.kind, .truncatedData(expectedBytes: 120, actualBytes: 117))
        XCTAssertEqual(e?.offset, full.count - 3)
        let t = decodeError(full + [0, 0])
        XCTAssertEqual(t?.kind, .trailingData(expectedBytes: 120, actualBytes: 122))
        XCTAssertEqual(t?.offset, full.count)
        // Header only: no data at all.
        XCTAssertEqual(decodeError(file(dict: okDict))?.kind, .truncatedData(expectedBytes: 8, actualBytes: 0))
    }

    func testShapeOverflow() {
        // Product overflows Int.
        let huge = file(dict: "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }")
        guard case .shapeOverflow = decodeError(huge)?.kind else { return XCTFail() }
        // A dimension that does not even fit in Int.
        let wide = file(dict: "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }")
        guard case .shapeOverflow = decodeError(wide)?.kind else { return XCTFail() }
        // Fits in Int but far exceeds the file: reported as truncated, with both sizes.
        let big = file(dict: "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000, 10), }")
        XCTAssertEqual(decodeError(big)?.kind, .truncatedData(expectedBytes: 4_000_000_000_000, actualBytes: 0))
    }

    func testErrorDescriptionsAreOneLine() {
        let kinds: [NPYError.Kind] = [
            .badMagic, .unsupportedVersion(major: 9, minor: 0), .malformedHeader("x"), .unsupportedDType(">f4"),
            .fortranOrder, .truncatedData(expectedBytes: 8, actualBytes: 4), .trailingData(expectedBytes: 4, actualBytes: 8),
            .shapeOverflow(shape: "(1,)"), .shapeMismatch(shape: [2], count: 3),
            .valueOutOfRange(index: 1, value: "1e10", target: "int32"), .unsupportedConversion(from: "a", to: "b"), .io("gone"),
        ]
        for k in kinds {
            let d = NPYError(path: "/data/X.npy", offset: 12, kind: k).description
            XCTAssertTrue(d.hasPrefix("/data/X.npy: byte 12: "), d)
            XCTAssertFalse(d.contains("\n"), d)
        }
    }
}

final class NPYNumpyInteropTests: XCTestCase {
    func testNumpyLoadsWhatSwiftWrites() throws {
        try PythonInterop.require("numpy")
        let dir = try makeTemporaryDirectory(self)
        let f = dir.appendingPathComponent("f.npy").path, i = dir.appendingPathComponent("i.npy").path
        let s = dir.appendingPathComponent("s.npy").path, e = dir.appendingPathComponent("e.npy").path
        let fv = (0..<24).map { Float($0) / 8 - 1 }
        try NPY.write(float32: fv, shape: [2, 3, 4], to: f)
        try NPY.write(int32: [7, -8, .max], shape: [3], to: i)
        try NPY.write(float32: [3.25], shape: [], to: s)
        try NPY.write(float32: [], shape: [0, 5], to: e)
        let out = try PythonInterop.check("""
            import sys, json, numpy as np
            f, i, s, e = (np.load(p, allow_pickle=False) for p in sys.argv[1:])
            print(json.dumps([f.dtype.str, list(f.shape), f.ravel().tolist(),
                              i.dtype.str, list(i.shape), i.tolist(),
                              s.dtype.str, list(s.shape), float(s),
                              e.dtype.str, list(e.shape), bool(f.flags.c_contiguous)]))
            """, [f, i, s, e])
        let j = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.utf8)) as? [Any])
        XCTAssertEqual(j[0] as? String, "<f4")
        XCTAssertEqual(j[1] as? [Int], [2, 3, 4])
        XCTAssertEqual((j[2] as? [Double])?.map(Float.init), fv)
        XCTAssertEqual(j[3] as? String, "<i4")
        XCTAssertEqual(j[4] as? [Int], [3])
        XCTAssertEqual(j[5] as? [Int], [7, -8, Int(Int32.max)])
        XCTAssertEqual(j[6] as? String, "<f4")
        XCTAssertEqual(j[7] as? [Int], [])
        XCTAssertEqual(j[8] as? Double, 3.25)
        XCTAssertEqual(j[10] as? [Int], [0, 5])
        XCTAssertEqual(j[11] as? Bool, true)
        // numpy's own header for the same array is byte-identical to ours.
        let same = try PythonInterop.check("""
            import sys, io, numpy as np
            a = np.load(sys.argv[1]); b = io.BytesIO(); np.save(b, a)
            print(open(sys.argv[1], 'rb').read() == b.getvalue())
            """, [f])
        XCTAssertEqual(same.trimmingCharacters(in: .whitespacesAndNewlines), "True")
    }

    func testSwiftReadsWhatNumpyWrites() throws {
        try PythonInterop.require("numpy")
        let dir = try makeTemporaryDirectory(self)
        _ = try PythonInterop.check("""
            import sys, os, numpy as np
            from numpy.lib import format as fmt
            d = sys.argv[1]
            rng = np.random.default_rng(7)
            X = np.zeros((300, 226), dtype=np.float32)
            X[np.arange(300), rng.integers(0, 17, 300)] = 1
            X[np.arange(300), 17 + rng.integers(0, 209, 300)] = 1
            np.save(os.path.join(d, 'X.npy'), X)
            np.savetxt(os.path.join(d, 'X.idx'), np.argwhere(X)[:, 1].reshape(300, 2), fmt='%d')
            with open(os.path.join(d, 'v2.npy'), 'wb') as f:
                fmt.write_array(f, np.arange(12, dtype=np.float32).reshape(3, 4) / 4, version=(2, 0))
            np.save(os.path.join(d, 'f8.npy'), np.array([[1.5, -2.25], [1e-8, 6e7]]))
            np.save(os.path.join(d, 'i8.npy'), np.array([-3, 0, 2**31 - 1], dtype=np.int64))
            np.save(os.path.join(d, 'b1.npy'), np.array([True, False, True]))
            np.save(os.path.join(d, 'u1.npy'), np.array([[1, 2], [254, 255]], dtype=np.uint8))
            """, [dir.path])
        let x = try NPY.read(path: dir.appendingPathComponent("X.npy").path)
        XCTAssertEqual(x.shape, [300, 226])
        let idx = try String(contentsOf: dir.appendingPathComponent("X.idx"), encoding: .utf8)
            .split(separator: "\n").map { $0.split(separator: " ").compactMap { Int($0) } }
        var pairs: [[Int]] = []
        try x.withFloat32Rows { _, row in pairs.append(row.indices.filter { row[$0] != 0 }) }
        XCTAssertEqual(pairs, idx)

        let v2 = try NPY.read(path: dir.appendingPathComponent("v2.npy").path)
        XCTAssertEqual(v2.shape, [3, 4])
        XCTAssertEqual(try v2.float32Values(), (0..<12).map { Float($0) / 4 })
        let f8 = try NPY.read(path: dir.appendingPathComponent("f8.npy").path)
        XCTAssertEqual(f8.dtype, .float64)
        for (a, b) in zip(try f8.float32Values(), [1.5, -2.25, 1e-8, 6e7] as [Float]) {
            XCTAssertEqual(a, b, accuracy: abs(b) * 1e-7)
        }
        XCTAssertEqual(try NPY.read(path: dir.appendingPathComponent("i8.npy").path).int32Values(), [-3, 0, .max])
        XCTAssertEqual(try NPY.read(path: dir.appendingPathComponent("b1.npy").path).int32Values(), [1, 0, 1])
        let u1 = try NPY.read(path: dir.appendingPathComponent("u1.npy").path)
        XCTAssertEqual(u1.shape, [2, 2])
        XCTAssertEqual(try u1.int32Values(), [1, 2, 254, 255])
    }
}
