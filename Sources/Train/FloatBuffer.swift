// Owned scratch and parameter buffers of the trainer (raw pointers, allocated once).

/// An owned, fixed-size float buffer (allocated once, freed in deinit).
final class FloatBuffer: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Float>
    let count: Int

    init(count: Int, value: Float = 0) {
        self.count = count
        pointer = .allocate(capacity: max(1, count))
        pointer.initialize(repeating: value, count: max(1, count))
    }

    convenience init(_ values: [Float]) {
        self.init(count: values.count)
        values.withUnsafeBufferPointer { b in
            if let base = b.baseAddress { pointer.update(from: base, count: values.count) }
        }
    }

    deinit { pointer.deallocate() }

    var array: [Float] { Array(UnsafeBufferPointer(start: pointer, count: count)) }

    func fill(_ v: Float) { pointer.update(repeating: v, count: count) }

    func buffer(_ offset: Int = 0, _ n: Int) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: pointer + offset, count: n)
    }

    func mutable(_ offset: Int = 0, _ n: Int) -> UnsafeMutableBufferPointer<Float> {
        UnsafeMutableBufferPointer(start: pointer + offset, count: n)
    }
}
