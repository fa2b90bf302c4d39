// Owned scratch and parameter buffers of the trainer (raw memory, allocated once).
// Views (`buffer`, `mutable`, subscripts) check their bounds in debug builds.

/// An owned, fixed-size buffer of `T` (allocated once, freed in deinit).
final class RawBuffer<T: BitwiseCopyable>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<T>
    let count: Int

    init(count: Int, value: T) {
        precondition(count >= 0, "RawBuffer: negative count")
        self.count = count
        pointer = .allocate(capacity: max(1, count))
        pointer.initialize(repeating: value, count: max(1, count))
    }

    deinit { pointer.deallocate() }

    var array: [T] { Array(UnsafeBufferPointer(start: pointer, count: count)) }

    func fill(_ v: T) { pointer.update(repeating: v, count: count) }

    /// Elements offset..<offset+n, read-only.
    @inline(__always)
    func buffer(_ offset: Int, _ n: Int) -> UnsafeBufferPointer<T> {
        assert(offset >= 0 && n >= 0 && offset + n <= count, "buffer view \(offset)..<\(offset + n) outside 0..<\(count)")
        return UnsafeBufferPointer(start: pointer + offset, count: n)
    }

    /// Elements offset..<offset+n, writable.
    @inline(__always)
    func mutable(_ offset: Int, _ n: Int) -> UnsafeMutableBufferPointer<T> {
        assert(offset >= 0 && n >= 0 && offset + n <= count, "buffer view \(offset)..<\(offset + n) outside 0..<\(count)")
        return UnsafeMutableBufferPointer(start: pointer + offset, count: n)
    }

    @inline(__always)
    subscript(i: Int) -> T {
        get {
            assert(i >= 0 && i < count, "index \(i) outside 0..<\(count)")
            return pointer[i]
        }
        set {
            assert(i >= 0 && i < count, "index \(i) outside 0..<\(count)")
            pointer[i] = newValue
        }
    }
}

typealias FloatBuffer = RawBuffer<Float>
typealias Int32Buffer = RawBuffer<Int32>

extension RawBuffer where T == Float {
    convenience init(count: Int) { self.init(count: count, value: 0) }

    convenience init(_ values: [Float]) {
        self.init(count: values.count, value: 0)
        _ = UnsafeMutableBufferPointer(start: pointer, count: count).update(fromContentsOf: values)
    }
}

extension RawBuffer where T == Int32 {
    convenience init(count: Int) { self.init(count: count, value: 0) }
}
