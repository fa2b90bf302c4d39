import Foundation
import XCTest
@testable import HDF5Kit

final class H5InteropTests: XCTestCase {
    /// The file options whose output other readers must accept.
    private let variants: [(String, H5File.CreateOptions)] = [
        ("default", H5File.CreateOptions()),
        ("checksummed+ub512", H5File.CreateOptions(checksummedMetadata: true, fletcher32: true, userBlockSize: 512)),
    ]

    /// A file exercising every type HDF5Kit writes.
    private func writeSample(_ path: String, _ options: H5File.CreateOptions = H5File.CreateOptions()) throws {
        let f = try H5File.create(path, options: options)
        try f.createDataset("weights/Wx", values: (0..<24).map { Float($0) / 8 - 1 }, shape: [2, 3, 4])
        try f.createDataset("weights/scalar", scalar: 2.5 as Float)
        try f.createDataset("f64", values: [1.0 / 3, -1e-300], shape: [2])
        try f.createDataset("i32", values: [Int32.min, 0, .max], shape: [3, 1])
        try f.createDataset("i64", values: [Int64.min, -1, .max], shape: [3])
        try f.createDataset("u64", values: [UInt64.max, 0, 0x0123_4567_89AB_CDEF], shape: [3])
        try f.createDataset("path", string: "/data/ü/X.npy")
        try f.createDataset("words", strings: ["kick", "ドラム"], shape: [2])
        try f.createDataset("empty", values: [Float](), shape: [0, 4])
        try f.setAttribute("format", string: "drummer 🥁")
        try f.setAttribute("step", int64: -42)
        try f.setAttribute("lr", double: 0.125)
        try f.group("weights").setAttribute("hidden", int64: 200)
        try f.close()
    }

    func testH5pyReadsWhatHDF5KitWrites() throws {
        try requirePython("h5py")
        let dir = try makeTemporaryDirectory(self)
        for (name, options) in variants {
            let path = dir.appendingPathComponent("kit-\(name).h5").path
            try writeSample(path, options)
            try checkH5pyReads(path, options)
        }
    }

    private func checkH5pyReads(_ path: String, _ options: H5File.CreateOptions) throws {
        // Fixed-length strings (the checksummed options) come back from h5py as
        // bytes: decoded here, and their types reported.
        let r = try runTool("python3", ["-c", """
            import sys, json, h5py, numpy as np
            f = h5py.File(sys.argv[1], 'r')
            out = {}
            def visit(name, obj):
                if isinstance(obj, h5py.Dataset):
                    if obj.dtype.kind in 'OS':
                        v = obj.asstr()[()]
                        v = v.tolist() if hasattr(v, 'tolist') else v
                    else:
                        v = obj[()].tolist()
                    out[name] = [obj.dtype.str, list(obj.shape), v]
                    out[name + '#filters'] = sorted(obj._filters.keys())
            f.visititems(visit)
            def text(v):
                if isinstance(v, bytes): return v.decode('utf-8')
                return v if isinstance(v, str) else v.item()
            out['@'] = {k: text(v) for k, v in f.attrs.items()}
            out['@types'] = {k: type(v).__name__ for k, v in f.attrs.items()}
            out['weights@hidden'] = int(f['weights'].attrs['hidden'])
            out['userblock'] = f.userblock_size
            out['libver'] = list(f.libver)
            print(json.dumps(out))
            """, path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let j = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        func entry(_ k: String) -> [Any] { (j[k] as? [Any]) ?? [] }
        XCTAssertEqual(entry("weights/Wx")[0] as? String, "<f4")
        XCTAssertEqual(entry("weights/Wx")[1] as? [Int], [2, 3, 4])
        let wx = ((entry("weights/Wx")[2] as? [[[Double]]]) ?? []).flatMap { $0.flatMap { $0 } }
        XCTAssertEqual(wx.map(Float.init), (0..<24).map { Float($0) / 8 - 1 })
        XCTAssertEqual(entry("weights/scalar")[1] as? [Int], [])
        XCTAssertEqual(entry("weights/scalar")[2] as? Double, 2.5)
        XCTAssertEqual(entry("f64")[0] as? String, "<f8")
        XCTAssertEqual(entry("f64")[2] as? [Double], [1.0 / 3, -1e-300])
        XCTAssertEqual(entry("i32")[0] as? String, "<i4")
        XCTAssertEqual(entry("i32")[2] as? [[Int]], [[Int(Int32.min)], [0], [Int(Int32.max)]])
        XCTAssertEqual(entry("i64")[0] as? String, "<i8")
        XCTAssertEqual(entry("i64")[2] as? [Int], [Int.min, -1, Int.max])
        XCTAssertEqual(entry("u64")[0] as? String, "<u8")
        // JSON numbers beyond Int64 come back as NSNumber; compare through their text.
        XCTAssertEqual((entry("u64")[2] as? [NSNumber])?.map { $0.stringValue },
                       ["\(UInt64.max)", "0", "\(UInt64(0x0123_4567_89AB_CDEF))"])
        XCTAssertEqual(entry("path")[1] as? [Int], [])
        XCTAssertEqual(entry("path")[2] as? String, "/data/ü/X.npy")
        XCTAssertEqual(entry("words")[2] as? [String], ["kick", "ドラム"])
        let attrs = try XCTUnwrap(j["@"] as? [String: Any])
        XCTAssertEqual(attrs["format"] as? String, "drummer 🥁")
        XCTAssertEqual(attrs["step"] as? Int, -42)
        XCTAssertEqual(attrs["lr"] as? Double, 0.125)
        XCTAssertEqual((j["@types"] as? [String: String])?["format"], options.checksummedMetadata ? "bytes_" : "str")
        XCTAssertEqual(j["weights@hidden"] as? Int, 200)
        XCTAssertEqual(entry("empty")[1] as? [Int], [0, 4])
        XCTAssertEqual(j["userblock"] as? Int, options.userBlockSize)
        let filters = (j["weights/Wx#filters"] as? [String]) ?? []
        XCTAssertEqual(filters, options.fletcher32 ? ["fletcher32"] : [], path)
    }

    func testHDF5KitReadsWhatH5pyWrites() throws {
        try requirePython("h5py")
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("py.h5").path
        let r = try runTool("python3", ["-c", """
            import sys, h5py, numpy as np
            with h5py.File(sys.argv[1], 'w') as f:
                f['a/b/Wy'] = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
                f['f64'] = np.array([[0.1, 0.2]], dtype=np.float64)
                f['i32'] = np.array([5, -6], dtype=np.int32)
                f['i64'] = np.int64(-7)
                f['u64'] = np.array([2**64 - 1], dtype=np.uint64)
                f['gz'] = np.linspace(0, 1, 1000, dtype=np.float32)
                f.create_dataset('chunked', data=np.ones((50, 20), np.float32), chunks=(10, 10), compression='gzip')
                f['vstr'] = 'hello ü'
                f['fixed'] = np.array([b'ab', b'cde'], dtype='S3')
                f['vstrs'] = np.array(['x', 'yz'], dtype=h5py.string_dtype())
                f.attrs['name'] = 'py 🥁'
                f.attrs['n'] = 3
                f.attrs['x'] = 0.5
                f.attrs['fixed_attr'] = np.bytes_(b'fixed')
                f.attrs['i16'] = np.int16(-3)
                f['a'].attrs['f32'] = np.float32(1.5)
            """, path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let f = try H5File.open(path)
        XCTAssertEqual(try f.members(), ["a", "chunked", "f64", "fixed", "gz", "i32", "i64", "u64", "vstr", "vstrs"])
        XCTAssertEqual(try f.read("a/b/Wy", as: Float.self, shape: [3, 4]), (0..<12).map { Float($0) / 4 })
        XCTAssertEqual(try f.read("f64", as: Double.self, shape: [1, 2]), [0.1, 0.2])
        XCTAssertEqual(try f.read("i32", as: Int32.self), [5, -6])
        XCTAssertEqual(try f.dataset("i64").readScalar(Int64.self), -7)
        XCTAssertEqual(try f.read("u64", as: UInt64.self), [.max])
        XCTAssertEqual(try f.read("gz", as: Float.self).count, 1000)
        XCTAssertEqual(try f.read("chunked", as: Float.self, shape: [50, 20]), [Float](repeating: 1, count: 1000))
        XCTAssertEqual(try f.dataset("vstr").readString(), "hello ü")
        XCTAssertEqual(try f.dataset("fixed").readStrings(), ["ab", "cde"])
        XCTAssertEqual(try f.dataset("vstrs").readStrings(), ["x", "yz"])
        XCTAssertEqual(try f.stringAttribute("name"), "py 🥁")
        XCTAssertEqual(try f.int64Attribute("n"), 3)
        XCTAssertEqual(try f.doubleAttribute("x"), 0.5)
        XCTAssertEqual(try f.stringAttribute("fixed_attr"), "fixed")
        XCTAssertEqual(try f.int64Attribute("i16"), -3)
        XCTAssertEqual(try f.group("a").doubleAttribute("f32"), 1.5)
        XCTAssertEqual(try f.attributeNames().sorted(), ["fixed_attr", "i16", "n", "name", "x"])
    }

    func testH5dumpAcceptsTheFile() throws {
        try requireTool("h5dump")
        let dir = try makeTemporaryDirectory(self)
        for (name, options) in variants {
            let path = dir.appendingPathComponent("dump-\(name).h5").path
            try writeSample(path, options)
            try checkH5dump(path, options)
        }
    }

    private func checkH5dump(_ path: String, _ options: H5File.CreateOptions) throws {
        let super_ = try runTool("h5dump", ["-B", "-H", "-p", path])
        XCTAssertEqual(super_.status, 0, super_.stderr)
        XCTAssertTrue(super_.stdout.contains("SUPERBLOCK_VERSION \(options.checksummedMetadata ? 3 : 0)"), super_.stdout)
        XCTAssertTrue(super_.stdout.contains("USERBLOCK_SIZE \(options.userBlockSize)"), super_.stdout)
        XCTAssertEqual(super_.stdout.contains("CHECKSUM FLETCHER32"), options.fletcher32, super_.stdout)
        // The whole file, data included, dumps without an error.
        let all = try runTool("h5dump", [path])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertTrue(all.stdout.contains("\"kick\""), all.stdout)
        XCTAssertTrue(all.stdout.contains("(0): 2.5"), all.stdout)
        let r = try runTool("h5dump", ["-H", path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("DATASET \"Wx\""), r.stdout)
        XCTAssertTrue(r.stdout.contains("H5T_IEEE_F32LE"), r.stdout)
        XCTAssertTrue(r.stdout.contains("H5T_STD_U64LE"), r.stdout)
        XCTAssertTrue(r.stdout.contains("DATASPACE  SIMPLE { ( 2, 3, 4 ) / ( 2, 3, 4 ) }"), r.stdout)
        XCTAssertTrue(r.stdout.contains("CSET H5T_CSET_UTF8"), r.stdout)
        let full = try runTool("h5dump", ["-d", "/i64", path])
        XCTAssertEqual(full.status, 0, full.stderr)
        XCTAssertTrue(full.stdout.contains("-9223372036854775808, -1, 9223372036854775807"), full.stdout)
    }

    func testHDF5KitReadsAChecksummedFileH5pyWrites() throws {
        // h5py's own way to the same protections: a user block, the 1.10 format,
        // Fletcher-32 chunks.
        try requirePython("h5py")
        let dir = try makeTemporaryDirectory(self)
        let path = dir.appendingPathComponent("py-checked.h5").path
        let r = try runTool("python3", ["-c", """
            import sys, h5py, numpy as np
            with h5py.File(sys.argv[1], 'w', userblock_size=1024, libver=('v110', 'latest')) as f:
                f.create_dataset('w', data=np.arange(600, dtype=np.float32).reshape(20, 30), chunks=(5, 30), fletcher32=True)
                f.attrs['format'] = 'py'
            with open(sys.argv[1], 'r+b') as raw:
                raw.write(b'PYHEADER')
            """, path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let f = try H5File.open(path)
        XCTAssertEqual(try f.userBlockSize(), 1024)
        XCTAssertEqual(try f.dataset("w").storage(), H5Storage(layout: .chunked([5, 30]), filters: [3]))
        XCTAssertEqual(try f.read("w", as: Float.self, shape: [20, 30]), (0..<600).map(Float.init))
        XCTAssertEqual(try f.stringAttribute("format"), "py")
    }
}
