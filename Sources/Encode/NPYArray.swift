// A decoded .npy array: its header fields and a view of the (possibly
// memory-mapped) file bytes. Values are converted on request; rows can be walked
// without copying the whole array.
import Foundation

public struct NPYArray: Sendable {
    /// The file this array came from (used in error messages).
    public let path: String
    public let dtype: NPYDType
    /// C-order shape; `[]` for a 0-D scalar.
    public let shape: [Int]
    /// The whole file; data starts at `dataOffset`.
    let storage: Data
    /// Byte offset of the first element in the file.
    public let dataOffset: Int

    init(path: String, dtype: NPYDType, shape: [Int], storage: Data, dataOffset: Int) {
        self.path = path
        self.dtype = dtype
        self.shape = shape
        self.storage = storage
        self.dataOffset = dataOffset
    }

    /// Number of elements (1 for a 0-D scalar).
    public var count: Int { shape.reduce(1, *) }

    /// Calls `body` with the raw little-endian data bytes.
    package func withUnsafeDataBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes { all in
            let start = all.baseAddress.map { $0 + dataOffset }
            return try body(UnsafeRawBufferPointer(start: start, count: count * dtype.itemSize))
        }
    }

    private func error(_ kind: NPYError.Kind, element: Int = 0) -> NPYError {
        NPYError(path: path, offset: dataOffset + element * dtype.itemSize, kind: kind)
    }

    /// Element `i` of the raw buffer as a Double-or-integer value, for conversions.
    private enum Scalar { case float(Double), int(Int64) }

    private static func load(_ raw: UnsafeRawBufferPointer, _ i: Int, _ dtype: NPYDType) -> Scalar {
        switch dtype {
        case .float32:
            return .float(Double(Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)))))
        case .float64:
            return .float(Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8 * i, as: UInt64.self))))
        case .int32:
            return .int(Int64(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * i, as: Int32.self))))
        case .int64:
            return .int(Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 8 * i, as: Int64.self)))
        case .bool:
            return .int(raw[i] != 0 ? 1 : 0)
        case .uint8:
            return .int(Int64(raw[i]))
        }
    }

    /// All values as `Float`: exact for `<f4`, `|b1`, `|u1` and integers up to 2^24;
    /// `<f8` is rounded to the nearest float; values outside Float's range are an error.
    public func float32Values() throws -> [Float] {
        let n = count
        return try withUnsafeDataBytes { raw in
            #if _endian(little)
            if dtype == .float32 {
                return [Float](unsafeUninitializedCapacity: n) { buf, initialized in
                    UnsafeMutableRawBufferPointer(buf).copyMemory(from: raw)
                    initialized = n
                }
            }
            #endif
            var out = [Float]()
            out.reserveCapacity(n)
            for i in 0..<n {
                switch Self.load(raw, i, dtype) {
                case let .float(d):
                    let f = Float(d)
                    if f.isInfinite && d.isFinite {
                        throw error(.valueOutOfRange(index: i, value: "\(d)", target: "float32"), element: i)
                    }
                    out.append(f)
                case let .int(v):
                    out.append(Float(v))
                }
            }
            return out
        }
    }

    /// All values as `Int32`: from `<i4`, `<i8` (range-checked), `|u1`, `|b1`,
    /// and from `<f4`/`<f8` when every value is an integer in Int32's range.
    public func int32Values() throws -> [Int32] {
        let n = count
        return try withUnsafeDataBytes { raw in
            var out = [Int32]()
            out.reserveCapacity(n)
            for i in 0..<n {
                switch Self.load(raw, i, dtype) {
                case let .int(v):
                    guard let x = Int32(exactly: v) else {
                        throw error(.valueOutOfRange(index: i, value: "\(v)", target: "int32"), element: i)
                    }
                    out.append(x)
                case let .float(d):
                    guard let x = Int32(exactly: d) else {
                        throw error(.valueOutOfRange(index: i, value: "\(d)", target: "int32"), element: i)
                    }
                    out.append(x)
                }
            }
            return out
        }
    }

    /// Number of rows (the first dimension) and elements per row (the product
    /// of the others). A 1-D array has rows of one element; a 0-D array one row.
    public var rowShape: (rows: Int, width: Int) {
        guard let first = shape.first else { return (1, 1) }
        return (first, shape.dropFirst().reduce(1, *))
    }

    /// Walks a float32 array row by row, handing `body` the row index and the
    /// row's values in place (no copy of the array; a one-row buffer is used
    /// only if the data is misaligned). Stops at the first error `body` throws.
    public func withFloat32Rows(_ body: (Int, UnsafeBufferPointer<Float>) throws -> Void) throws {
        guard dtype == .float32 else {
            throw error(.unsupportedConversion(from: dtype.descr, to: "float32 rows"))
        }
        let (rows, width) = rowShape
        try withUnsafeDataBytes { raw in
            #if _endian(little)
            if let base = raw.baseAddress, Int(bitPattern: base) % MemoryLayout<Float>.alignment == 0 {
                let floats = base.assumingMemoryBound(to: Float.self)
                for r in 0..<rows {
                    try body(r, UnsafeBufferPointer(start: floats + r * width, count: width))
                }
                return
            }
            #endif
            var row = [Float](repeating: 0, count: width)
            for r in 0..<rows {
                for j in 0..<width {
                    let bits = raw.loadUnaligned(fromByteOffset: 4 * (r * width + j), as: UInt32.self)
                    row[j] = Float(bitPattern: UInt32(littleEndian: bits))
                }
                try row.withUnsafeBufferPointer { try body(r, $0) }
            }
        }
    }
}
