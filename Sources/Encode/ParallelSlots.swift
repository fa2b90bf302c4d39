// Collecting results of DispatchQueue.concurrentPerform in input order.

/// Result slots filled from `concurrentPerform`: each iteration writes only its own index,
/// and the values are read after all iterations have returned, so no two threads ever touch
/// the same slot (hence the unchecked Sendable).
final class ParallelSlots<T>: @unchecked Sendable {
    private let base: UnsafeMutablePointer<T?>
    private let count: Int

    init(count: Int) {
        self.count = count
        base = UnsafeMutablePointer<T?>.allocate(capacity: max(1, count))
        base.initialize(repeating: nil, count: count)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    func set(_ i: Int, _ value: T) {
        precondition(i >= 0 && i < count, "slot index out of range")
        base[i] = value
    }

    func values() -> [T] { UnsafeBufferPointer(start: base, count: count).compactMap { $0 } }
}
