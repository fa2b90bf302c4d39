// An open HDF5 file. Children (groups, datasets) keep it alive; closing it
// explicitly (before a rename, say) closes every object in it.
//
// libhdf5 never writes to disk here. Files HDF5Kit creates, and files opened
// `.readWrite`, live in memory (HDF5's "core" driver without a backing store)
// and HDF5Kit writes their bytes itself on `flush()` and `close()`. This is
// what makes a full disk a clean error: when libhdf5 writes a file itself and
// a flush inside H5Fclose fails (ENOSPC), libhdf5 1.10 frees the file's
// structures but leaves its id registered, and the next use of that id
// (another H5Fclose, or the library's own clean-up at exit, which closes every
// file still open and retries) dereferences freed memory: signal 11. Here every
// byte reaches the disk through posix_fallocate(3) and pwrite(2), whose errors
// are typed (`.noSpace`), and H5Fclose only ever releases memory. Read-only files are read by libhdf5
// directly (nothing to flush there).
import CHDF5
import FileOutput
import Foundation
#if canImport(Glibc)
import Glibc
#endif

public final class H5File: H5Container {
    public enum CreateMode: Sendable {
        /// Replace an existing file.
        case truncate
        /// Fail if the file exists.
        case exclusive
    }

    public enum OpenMode: Sendable {
        case readOnly, readWrite
    }

    /// How a new file protects its contents. The default is a plain file that
    /// any HDF5 1.8+ reader opens, with no checksums (HDF5Kit's historic format).
    public struct CreateOptions: Sendable, Equatable {
        /// The superblock and every object header carry a checksum (and so do the
        /// B-trees, heaps and chunk indexes of the newer format): the file is
        /// written with `H5Pset_libver_bounds(low: H5F_LIBVER_V110)`, so it needs
        /// HDF5 ≥ 1.10 to read (h5py with HDF5 ≥ 1.10, h5dump ≥ 1.10). A damaged
        /// header is refused on read with `.checksumMismatch`. String attributes
        /// are then stored fixed-length, inside the object header, so that their
        /// bytes are covered too (variable-length strings live in the global
        /// heap, which has no checksum): see `setAttribute(_:string:)`.
        public var checksummedMetadata: Bool
        /// Datasets are written chunked with the Fletcher-32 filter, so that a
        /// damaged chunk is refused on read (`.checksumMismatch`). Scalars and
        /// empty arrays cannot be chunked (HDF5 needs rank ≥ 1 and non-zero chunk
        /// sizes): they are stored compact, inside their object header, which
        /// `checksummedMetadata` covers. String datasets are then stored
        /// fixed-length, in the chunks: see `createDataset(_:strings:shape:)`.
        public var fletcher32: Bool
        /// Bytes reserved at the start of the file for the caller (0, or a power
        /// of two ≥ 512). HDF5 ignores them; `H5File.open` finds the HDF5 data
        /// after them. HDF5Kit leaves them zero unless `writeAtomically`'s
        /// `userBlock` fills them.
        public var userBlockSize: Int

        /// The lowest format version written when `checksummedMetadata` is on
        /// (internal: V110 is what the options promise; V18 is kept for the
        /// corruption study in the tests).
        enum FormatBound: Sendable { case v18, v110 }
        var formatBound: FormatBound = .v110

        public init(checksummedMetadata: Bool = false, fletcher32: Bool = false, userBlockSize: Int = 0) {
            self.checksummedMetadata = checksummedMetadata
            self.fletcher32 = fletcher32
            self.userBlockSize = userBlockSize
        }

        /// Checksummed metadata and Fletcher-32 data, no user block.
        public static let checksummed = CreateOptions(checksummedMetadata: true, fletcher32: true)

        func validate(_ path: String) throws {
            let ub = userBlockSize
            guard ub == 0 || (ub >= 512 && ub & (ub - 1) == 0) else {
                throw HDF5Error(.invalidArgument("user block size must be 0 or a power of two ≥ 512, not \(ub)"),
                                call: "H5Pset_userblock", object: "/", file: path)
            }
        }
    }

    /// The path the file was created or opened with.
    public let path: String
    let id: hid_t
    /// False once `close()` ran; handles then refuse to work.
    public private(set) var isOpen = true
    /// The options the file was created with. For a file opened with `open`:
    /// the defaults, with its user block size (datasets added to a file opened
    /// `.readWrite` use the default storage).
    public let options: CreateOptions
    /// For a file held in memory (created, or opened read-write): the descriptor
    /// its bytes are written to; -1 for a file libhdf5 reads directly.
    let imageFD: Int32
    /// This file in the process-wide table of open files.
    private let registration: OpenFiles.Registration

    public var handle: H5Handle { H5Handle(id: id, file: self, path: "/") }

    private init(id: hid_t, path: String, options: CreateOptions, imageFD: Int32, registration: OpenFiles.Registration) {
        self.id = id
        self.path = path
        self.options = options
        self.imageFD = imageFD
        self.registration = registration
    }

    deinit {
        guard isOpen else { return }
        if imageFD >= 0 {
            // As H5Fclose would: write the file; a deinit cannot report a failure.
            _ = try? finish(userBlock: nil, sync: false)
        } else {
            isOpen = false
            closeQuietly(id, H5Fclose)
            OpenFiles.shared.remove(registration)
        }
    }

    /// File access: closing the file closes every object still open in it.
    private static func accessList(_ path: String, inMemory: Bool, _ options: CreateOptions) throws -> H5Temporary {
        func run(_ name: String, _ body: () -> herr_t) throws { try H5Call.run(name, object: "/", file: path, body) }
        let fapl = H5Temporary.plist(try H5Call.run("H5Pcreate", object: "/", file: path) {
            H5Pcreate(drummer_H5P_FILE_ACCESS())
        })
        try run("H5Pset_fclose_degree") { H5Pset_fclose_degree(fapl.id, H5F_CLOSE_STRONG) }
        if inMemory {
            // Grown 1 MiB at a time; never written back by libhdf5 (no backing store).
            try run("H5Pset_fapl_core") { H5Pset_fapl_core(fapl.id, 1 << 20, false) }
        }
        if options.checksummedMetadata {
            let low = options.formatBound == .v18 ? H5F_LIBVER_V18 : H5F_LIBVER_V110
            try run("H5Pset_libver_bounds") { H5Pset_libver_bounds(fapl.id, low, drummer_H5F_LIBVER_LATEST()) }
        }
        return fapl
    }

    /// File creation: the user block.
    private static func creationList(_ path: String, _ options: CreateOptions) throws -> H5Temporary {
        let fcpl = H5Temporary.plist(try H5Call.run("H5Pcreate", object: "/", file: path) {
            H5Pcreate(drummer_H5P_FILE_CREATE())
        })
        if options.userBlockSize > 0 {
            try H5Call.run("H5Pset_userblock", object: "/", file: path) {
                H5Pset_userblock(fcpl.id, hsize_t(options.userBlockSize))
            }
        }
        return fcpl
    }

    /// Creates a file (callers that want atomic output create it under a
    /// temporary name, `close()` it, then rename it; see `writeAtomically`).
    ///
    /// The file is created (or truncated) on disk at once, filled in memory, and
    /// written by `flush()` and `close()` (or when its last handle goes away; a
    /// file still open when the process exits is not written). Until then this
    /// process cannot open it a second time.
    public static func create(_ path: String, mode: CreateMode = .truncate,
                              options: CreateOptions = CreateOptions()) throws -> H5File {
        try options.validate(path)
        // An existing file is truncated only once it is known not to be open in
        // this process (a reader would see it vanish).
        var fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        var isNew = true
        if fd < 0 && errno == EEXIST && mode == .truncate {
            fd = Glibc.open(path, O_WRONLY | O_CLOEXEC)
            isNew = false
        }
        guard fd >= 0 else { throw H5Call.systemFailure("open", errno: errno, file: path) }
        let registration: OpenFiles.Registration
        do {
            registration = try OpenFiles.shared.add(fd: fd, path: path, writing: true)
        } catch {
            _ = Glibc.close(fd)
            if isNew { unlink(path) }
            throw error
        }
        do {
            if !isNew {
                guard ftruncate(fd, 0) == 0 else { throw H5Call.systemFailure("ftruncate", errno: errno, file: path) }
            }
            let fapl = try accessList(path, inMemory: true, options)
            let fcpl = try creationList(path, options)
            let id = try H5Call.run("H5Fcreate", object: "/", file: path) {
                H5Fcreate(path, drummer_H5F_ACC_TRUNC(), fcpl.id, fapl.id)
            }
            return H5File(id: id, path: path, options: options, imageFD: fd, registration: registration)
        } catch {
            OpenFiles.shared.remove(registration)
            _ = Glibc.close(fd)
            unlink(path)  // new, or already truncated: nothing of value is lost
            throw error
        }
    }

    /// Opens an existing file (also one with a user block); a missing file, a
    /// non-HDF5 file and a damaged one each give their own error.
    ///
    /// `.readWrite` reads the whole file into memory; changes reach the disk on
    /// `flush()` and `close()`, written in place (a failure there, such as a full
    /// disk, can leave the file damaged: use `writeAtomically` to replace a file
    /// safely). A file open read-write cannot be opened again by this process
    /// until it is closed, and a file open read-only cannot be opened read-write.
    public static func open(_ path: String, mode: OpenMode = .readOnly) throws -> H5File {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw HDF5Error(.fileNotFound, call: "H5Fopen", object: "/", file: path)
        }
        guard !isDirectory.boolValue else {
            throw HDF5Error(.notHDF5, call: "H5Fopen", object: "/", file: path, detail: "is a directory")
        }
        let writing = mode == .readWrite
        let fd = Glibc.open(path, (writing ? O_RDWR : O_RDONLY) | O_CLOEXEC)
        guard fd >= 0 else { throw H5Call.systemFailure("open", errno: errno, file: path) }
        var registration: OpenFiles.Registration?
        do {
            registration = try OpenFiles.shared.add(fd: fd, path: path, writing: writing)
            if !writing { _ = Glibc.close(fd) }  // only needed it to identify the file
            let fapl = try accessList(path, inMemory: writing, CreateOptions())
            let flags = writing ? drummer_H5F_ACC_RDWR() : drummer_H5F_ACC_RDONLY()
            drummer_H5_silence_errors_on_this_thread()
            let id = H5Fopen(path, flags, fapl.id)
            guard id >= 0 else {
                let failure = H5Call.failure("H5Fopen", object: "/", file: path)
                if failure.kind == .callFailed && H5Fis_hdf5(path) == 0 {
                    throw HDF5Error(.notHDF5, call: "H5Fopen", object: "/", file: path, detail: failure.detail)
                }
                throw failure
            }
            let userBlock: Int
            do {
                userBlock = try userBlockSize(fileID: id, path: path)
            } catch {
                closeQuietly(id, H5Fclose)
                throw error
            }
            return H5File(id: id, path: path, options: CreateOptions(userBlockSize: userBlock),
                          imageFD: writing ? fd : -1, registration: registration!)
        } catch {
            if let registration { OpenFiles.shared.remove(registration) }
            if writing { _ = Glibc.close(fd) }
            throw error
        }
    }

    /// Creates the file under a temporary name beside `path`, lets `body`
    /// fill it, writes it (and fsyncs it) and renames it into place. On any
    /// error (from `body`, or a full disk) the temporary file is removed,
    /// `path` is untouched, and the error names `path`.
    ///
    /// `userBlock`, when given, receives the HDF5 part of the finished file (the
    /// bytes after the user block, as they will be on disk) and returns the
    /// bytes to store at the start of the file (at most `options.userBlockSize`;
    /// the rest stays zero), e.g. a magic and a SHA-256 of those bytes, written
    /// before the rename so that a file at `path` always carries its header.
    @discardableResult
    public static func writeAtomically<T>(
        to path: String, options: CreateOptions = CreateOptions(),
        userBlock: ((UnsafeRawBufferPointer) throws -> [UInt8])? = nil,
        _ body: (H5File) throws -> T
    ) throws -> T {
        let url = URL(fileURLWithPath: path)
        // The tool's own temporary name (the sweeper removes it once its process is gone),
        // registered so that an interrupt that ends the process removes it.
        let tmp = url.deletingLastPathComponent()
            .appendingPathComponent(TemporaryFiles.temporaryName(for: url.lastPathComponent)).path
        let registration = TemporaryFiles.register(tmp, destination: path)
        defer { TemporaryFiles.unregister(registration) }
        let file: H5File
        do {
            file = try create(tmp, mode: .exclusive, options: options)
        } catch let e as HDF5Error {
            throw e.renamingFile(tmp, to: path)
        }
        do {
            let result = try body(file)
            if file.isOpen {
                try file.finish(userBlock: userBlock, sync: true)
            } else if userBlock != nil {
                throw HDF5Error(.fileClosed, call: "writeAtomically", object: "/", file: path,
                                detail: "the body closed the file, so its user block could not be written")
            }
            guard rename(tmp, path) == 0 else { throw H5Call.systemFailure("rename", errno: errno, file: path) }
            return result
        } catch {
            file.discard()
            unlink(tmp)
            if let e = error as? HDF5Error { throw e.renamingFile(tmp, to: path) }
            throw error
        }
    }

    /// Writes buffered data to disk (for a file held in memory: the whole file).
    /// On failure the file stays open and intact in memory: `flush` or `close`
    /// can be tried again.
    public func flush() throws {
        let h = handle
        try h.ensureOpen()
        if imageFD >= 0 { try writeImage(userBlock: nil, sync: false) }
    }

    /// Writes the file (if it was created or opened read-write) and closes it
    /// and every object open in it. Further use of any of its handles throws
    /// `.fileClosed`. The file is closed even when writing it failed (that
    /// error is thrown). Closing twice is harmless.
    public func close() throws {
        guard isOpen else { return }
        try finish(userBlock: nil, sync: false)
    }

    /// The size of the file's user block (0 if it has none).
    public func userBlockSize() throws -> Int {
        try handle.ensureOpen()
        return try H5File.userBlockSize(fileID: id, path: path)
    }

    private static func userBlockSize(fileID: hid_t, path: String) throws -> Int {
        @discardableResult
        func run<T: BinaryInteger>(_ name: String, _ body: () -> T) throws -> T {
            try H5Call.run(name, object: "/", file: path, body)
        }
        let fcpl = H5Temporary.plist(try run("H5Fget_create_plist") { H5Fget_create_plist(fileID) })
        var size: hsize_t = 0
        try run("H5Pget_userblock") { H5Pget_userblock(fcpl.id, &size) }
        try fcpl.close(object: "/", file: path)
        guard let n = Int(exactly: size) else {
            throw HDF5Error(.tooLarge(bytes: String(size)), call: "H5Pget_userblock", object: "/", file: path)
        }
        return n
    }

    // MARK: - Closing

    /// Closes the file: writes the image of a file held in memory (filling its
    /// user block through `userBlock`, fsyncing it if `sync`), then releases it.
    func finish(userBlock: ((UnsafeRawBufferPointer) throws -> [UInt8])?, sync: Bool) throws {
        var failure: Error?
        if imageFD >= 0 {
            do { try writeImage(userBlock: userBlock, sync: sync) } catch { failure = error }
        }
        release(&failure)
        if let failure { throw failure }
    }

    /// Closes the file without writing anything more (a failed `writeAtomically`).
    func discard() {
        guard isOpen else { return }
        var ignored: Error?
        release(&ignored)
    }

    /// Closes the HDF5 file (for a file in memory nothing is written: this cannot
    /// fail for lack of space) and the descriptor; records the first failure.
    private func release(_ failure: inout Error?) {
        isOpen = false
        drummer_H5_silence_errors_on_this_thread()
        if H5Fclose(id) < 0, failure == nil { failure = H5Call.failure("H5Fclose", object: "/", file: path) }
        if imageFD >= 0, Glibc.close(imageFD) != 0, failure == nil {
            failure = H5Call.systemFailure("close", errno: errno, file: path)
        }
        OpenFiles.shared.remove(registration)
    }
}

extension HDF5Error {
    /// The same error naming `newFile` where it named `oldFile`.
    func renamingFile(_ oldFile: String, to newFile: String) -> HDF5Error {
        guard file == oldFile else { return self }
        return HDF5Error(kind, call: call, object: object, file: newFile, detail: detail)
    }
}
