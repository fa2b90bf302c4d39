// An open HDF5 file. Children (groups, datasets) keep it alive; closing it
// explicitly (before a rename, say) closes every object in it.
import CHDF5
import Foundation

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

    /// The path the file was created or opened with.
    public let path: String
    let id: hid_t
    /// False once `close()` ran; handles then refuse to work.
    public private(set) var isOpen = true

    public var handle: H5Handle { H5Handle(id: id, file: self, path: "/") }

    private init(id: hid_t, path: String) {
        self.id = id
        self.path = path
    }

    deinit {
        if isOpen { _ = H5Fclose(id) }
    }

    /// File access: closing the file closes every object still open in it.
    private static func accessList(_ path: String) throws -> H5Temporary {
        let fapl = H5Temporary.plist(try H5Call.run("H5Pcreate", object: "/", file: path) {
            H5Pcreate(drummer_H5P_FILE_ACCESS())
        })
        try H5Call.run("H5Pset_fclose_degree", object: "/", file: path) { H5Pset_fclose_degree(fapl.id, H5F_CLOSE_STRONG) }
        return fapl
    }

    /// Creates a file (callers that want atomic output create it under a
    /// temporary name, `close()` it, then rename it; see `writeAtomically`).
    public static func create(_ path: String, mode: CreateMode = .truncate) throws -> H5File {
        let fapl = try accessList(path)
        let flags = mode == .truncate ? drummer_H5F_ACC_TRUNC() : drummer_H5F_ACC_EXCL()
        let id = try H5Call.run("H5Fcreate", object: "/", file: path) {
            H5Fcreate(path, flags, drummer_H5P_DEFAULT(), fapl.id)
        }
        return H5File(id: id, path: path)
    }

    /// Opens an existing file; a missing file, a non-HDF5 file and a damaged
    /// one each give their own error.
    public static func open(_ path: String, mode: OpenMode = .readOnly) throws -> H5File {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw HDF5Error(.fileNotFound, call: "H5Fopen", object: "/", file: path)
        }
        guard !isDirectory.boolValue else {
            throw HDF5Error(.notHDF5, call: "H5Fopen", object: "/", file: path, detail: "is a directory")
        }
        let fapl = try accessList(path)
        let flags = mode == .readOnly ? drummer_H5F_ACC_RDONLY() : drummer_H5F_ACC_RDWR()
        drummer_H5_silence_errors_on_this_thread()
        let id = H5Fopen(path, flags, fapl.id)
        guard id >= 0 else {
            let detail = H5Call.lastMessage()
            if H5Fis_hdf5(path) == 0 {
                throw HDF5Error(.notHDF5, call: "H5Fopen", object: "/", file: path, detail: detail)
            }
            throw HDF5Error(.callFailed, call: "H5Fopen", object: "/", file: path, detail: detail)
        }
        return H5File(id: id, path: path)
    }

    /// Creates the file under a temporary name beside `path`, lets `body`
    /// fill it, closes it and renames it into place. On error the temporary
    /// file is removed and `path` is untouched.
    public static func writeAtomically<T>(to path: String, _ body: (H5File) throws -> T) throws -> T {
        let url = URL(fileURLWithPath: path)
        let tmp = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        let file = try create(tmp, mode: .exclusive)
        do {
            let result = try body(file)
            try file.close()
            guard rename(tmp, path) == 0 else {
                let message = String(cString: strerror(errno))
                throw HDF5Error(.callFailed, call: "rename", object: "/", file: path, detail: message)
            }
            return result
        } catch {
            unlink(tmp)
            throw error
        }
    }

    /// Writes buffered data to disk.
    public func flush() throws {
        try handle.call("H5Fflush") { H5Fflush(id, H5F_SCOPE_GLOBAL) }
    }

    /// Closes the file and every object open in it. Further use of any of its
    /// handles throws `.fileClosed`. Closing twice is harmless.
    public func close() throws {
        guard isOpen else { return }
        isOpen = false
        try H5Call.run("H5Fclose", object: "/", file: path) { H5Fclose(id) }
    }
}
