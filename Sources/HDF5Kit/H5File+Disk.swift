// How HDF5Kit puts a file held in memory on disk, and the table of the files
// this process has open (see the note at the top of H5File.swift).
import CHDF5
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension H5File {
    /// Writes the current image: the user block (if `userBlock` fills it), the
    /// HDF5 data after it, and the file's exact length. The space is reserved
    /// first (posix_fallocate), so that a full disk fails before a byte of an
    /// existing file (one opened `.readWrite`) is overwritten.
    func writeImage(userBlock: ((UnsafeRawBufferPointer) throws -> [UInt8])?, sync: Bool) throws {
        let image = try fileImage()
        let base = options.userBlockSize
        // posix_fallocate returns the error number itself (and glibc emulates it
        // where the filesystem cannot).
        let reserved = posix_fallocate(imageFD, 0, off_t(base + image.count))
        guard reserved == 0 else { throw H5Call.systemFailure("posix_fallocate", errno: reserved, file: path) }
        if let userBlock {
            let header = try image.withUnsafeBytes { try userBlock($0) }
            guard header.count <= base else {
                throw HDF5Error(.invalidArgument("user block contents are \(header.count) bytes, the user block holds \(base)"),
                                call: "user block check", object: "/", file: path)
            }
            try writeAll(header, at: 0)
        }
        try writeAll(image, at: base)
        guard ftruncate(imageFD, off_t(base + image.count)) == 0 else {
            throw H5Call.systemFailure("ftruncate", errno: errno, file: path)
        }
        if sync {
            guard fsync(imageFD) == 0 else { throw H5Call.systemFailure("fsync", errno: errno, file: path) }
        }
    }

    /// The bytes of the in-memory file after its user block, as HDF5 would write them.
    func fileImage() throws -> [UInt8] {
        let h = handle
        try h.call("H5Fflush") { H5Fflush(id, H5F_SCOPE_LOCAL) }
        let size = try h.call("H5Fget_file_image") { H5Fget_file_image(id, nil, 0) }
        var image = [UInt8](repeating: 0, count: size)
        let copied = try image.withUnsafeMutableBytes { buf in
            try h.call("H5Fget_file_image") { H5Fget_file_image(id, buf.baseAddress, size) }
        }
        guard copied == size else {
            throw HDF5Error(.callFailed, call: "H5Fget_file_image", object: "/", file: path,
                            detail: "copied \(copied) of \(size) bytes")
        }
        Superblock.repairChecksum(&image)
        return image
    }

    private func writeAll(_ bytes: [UInt8], at offset: Int) throws {
        try bytes.withUnsafeBytes { buf in
            guard let start = buf.baseAddress else { return }
            var done = 0
            while done < buf.count {
                let n = pwrite(imageFD, start + done, buf.count - done, off_t(offset + done))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw H5Call.systemFailure("pwrite", errno: errno, file: path)
                }
                if n == 0 {
                    throw HDF5Error(.callFailed, call: "pwrite", object: "/", file: path,
                                    detail: "wrote 0 of \(buf.count - done) bytes")
                }
                done += n
            }
        }
    }
}

/// The files this process has open through HDF5Kit, by device and inode. A
/// file held in memory (created, or open read-write) is on disk only when it
/// is flushed or closed, and libhdf5 no longer sees two opens of one file as
/// the same file (one is in memory): this table refuses a second open of a
/// file open for writing, and a read-write open of a file open for reading.
final class OpenFiles: @unchecked Sendable {
    static let shared = OpenFiles()

    struct Registration: Sendable {
        fileprivate let key: Key
        fileprivate let writing: Bool
    }

    fileprivate struct Key: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    private let lock = NSLock()
    private var readers: [Key: Int] = [:]
    private var writers: Set<Key> = []

    /// Records an open of the file behind `fd`, or throws if it conflicts.
    func add(fd: Int32, path: String, writing: Bool) throws -> Registration {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw H5Call.systemFailure("fstat", errno: errno, file: path) }
        let key = Key(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
        lock.lock()
        defer { lock.unlock() }
        if writers.contains(key) {
            throw HDF5Error(.callFailed, call: writing ? "H5Fcreate/H5Fopen" : "H5Fopen", object: "/", file: path,
                            detail: "the file is already open for writing in this process (close it first)")
        }
        if writing {
            if readers[key, default: 0] > 0 {
                throw HDF5Error(.callFailed, call: "H5Fcreate/H5Fopen", object: "/", file: path,
                                detail: "the file is open for reading in this process (close it first)")
            }
            writers.insert(key)
        } else {
            readers[key, default: 0] += 1
        }
        return Registration(key: key, writing: writing)
    }

    func remove(_ r: Registration) {
        lock.lock()
        defer { lock.unlock() }
        if r.writing {
            writers.remove(r.key)
        } else if let n = readers[r.key] {
            readers[r.key] = n > 1 ? n - 1 : nil
        }
    }
}
