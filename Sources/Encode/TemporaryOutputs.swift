// Temporary output directories being filled, for an interrupt handler to remove.
//
// convert-midi registers the temporary directory AtomicOutput gives it while it writes
// there; a SIGINT/SIGTERM handler (the CLI's, or a process-wide cleanup registry that
// calls `removeAll()`) deletes what is registered, so an interrupted run leaves no
// `.NAME.tmp-*` directory of gigabytes behind.
import Foundation
import Synchronization

public enum TemporaryOutputs {
    private static let paths = Mutex<[Int: String]>([:])
    private static let nextToken = Atomic<Int>(0)

    /// Registers `path`; returns the token to unregister it with.
    public static func register(_ path: String) -> Int {
        let token = nextToken.add(1, ordering: .relaxed).newValue
        paths.withLock { $0[token] = path }
        return token
    }

    public static func unregister(_ token: Int) {
        _ = paths.withLock { $0.removeValue(forKey: token) }
    }

    /// The registered paths, oldest first.
    public static var registered: [String] {
        paths.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
    }

    /// Removes every registered path (recursively) and forgets it. A writer may still be
    /// adding files while this runs, so a directory that is not empty yet is tried again.
    public static func removeAll() {
        let all = paths.withLock { p -> [String] in
            defer { p.removeAll() }
            return p.sorted { $0.key < $1.key }.map(\.value)
        }
        for path in all {
            for _ in 0..<20 {
                do {
                    try FileManager.default.removeItem(atPath: path)
                    break
                } catch {
                    if !FileManager.default.fileExists(atPath: path) { break }
                    usleep(10_000)
                }
            }
        }
    }
}
