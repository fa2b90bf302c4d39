// Groups, and what files and groups share: members, existence, sub-groups and datasets.
import CHDF5

/// Any open HDF5 object (file, group, dataset): it can carry attributes.
public protocol H5Object: AnyObject {
    var handle: H5Handle { get }
}

extension H5Object {
    /// Absolute path of the object inside its file.
    public var objectPath: String { handle.path }
    /// The file's path on disk.
    public var filePath: String { handle.file.path }
}

/// A file or a group: something holding named members.
public protocol H5Container: H5Object {}

public final class H5Group: H5Container {
    public let handle: H5Handle

    init(handle: H5Handle) { self.handle = handle }

    deinit {
        if handle.file.isOpen { closeQuietly(handle.id, H5Gclose) }
    }
}

/// What a member of a group is.
public enum H5ObjectKind: Equatable, Sendable {
    case group, dataset, other
}

extension H5Container {
    /// Whether `path` (relative, or absolute from `/`) names an existing object.
    /// Intermediate groups are checked one by one, so a missing one is `false`, not an error.
    public func exists(_ path: String) throws -> Bool {
        let h = handle
        try h.ensureOpen()
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        if parts.isEmpty { return path.hasPrefix("/") || path == "." }
        var prefix = path.hasPrefix("/") ? "/" : ""
        var parent: String?
        for (i, part) in parts.enumerated() {
            prefix += (i == 0 ? "" : "/") + part
            drummer_H5_silence_errors_on_this_thread()
            let r = H5Lexists(h.id, prefix, drummer_H5P_DEFAULT())
            if r == 0 { return false }
            if r < 0 {
                // Negative when an intermediate member is not a group, or a dangling
                // soft link (then the path does not exist); anything else (a damaged
                // file) is an error.
                let failure = H5Call.failure("H5Lexists", object: h.child(prefix), file: h.fileName)
                if let parent {
                    let parentExists = H5Oexists_by_name(h.id, parent, drummer_H5P_DEFAULT())
                    if parentExists == 0 { return false }
                    if parentExists > 0, try kind(ofExisting: parent) != .group { return false }
                }
                throw failure
            }
            parent = prefix
        }
        // A dangling soft link exists as a link but not as an object.
        return try h.call("H5Oexists_by_name", object: h.child(path)) {
            H5Oexists_by_name(h.id, path, drummer_H5P_DEFAULT())
        } > 0
    }

    /// Whether `path` is a group, a dataset or something else; throws `.notFound` if missing.
    public func kind(of path: String) throws -> H5ObjectKind {
        let h = handle
        guard try exists(path) else { throw h.error(.notFound, "H5Lexists", object: h.child(path)) }
        return try kind(ofExisting: path)
    }

    /// The kind of an object known to exist.
    func kind(ofExisting path: String) throws -> H5ObjectKind {
        let h = handle
        let object = h.child(path)
        let o = H5Temporary.object(try h.call("H5Oopen", object: object) { H5Oopen(h.id, path, drummer_H5P_DEFAULT()) })
        let type = try h.call("H5Iget_type", object: object, failure: H5I_BADID) { H5Iget_type(o.id) }
        try o.close(h, object: object)
        switch type {
        case H5I_GROUP: return .group
        case H5I_DATASET: return .dataset
        default: return .other
        }
    }

    /// Names of the direct members (groups, datasets, links), in name order.
    public func members() throws -> [String] {
        let h = handle
        var info = H5G_info_t()
        try h.call("H5Gget_info") { H5Gget_info(h.id, &info) }
        var names: [String] = []
        for i in 0..<info.nlinks {
            let n = try h.call("H5Lget_name_by_idx") {
                H5Lget_name_by_idx(h.id, ".", H5_INDEX_NAME, H5_ITER_INC, i, nil, 0, drummer_H5P_DEFAULT())
            }
            var buf = [CChar](repeating: 0, count: Int(n) + 1)
            try h.call("H5Lget_name_by_idx") {
                H5Lget_name_by_idx(h.id, ".", H5_INDEX_NAME, H5_ITER_INC, i, &buf, buf.count, drummer_H5P_DEFAULT())
            }
            names.append(String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return names
    }

    /// Creates a group, creating missing intermediate groups of a nested path.
    @discardableResult
    public func createGroup(_ path: String) throws -> H5Group {
        let h = handle
        try validateName(path, "group", h)
        let lcpl = try intermediateGroupsList()
        let gid = try h.call("H5Gcreate2", object: h.child(path)) {
            H5Gcreate2(h.id, path, lcpl.id, drummer_H5P_DEFAULT(), drummer_H5P_DEFAULT())
        }
        return H5Group(handle: H5Handle(id: gid, file: h.file, path: h.child(path)))
    }

    /// Opens an existing group.
    public func group(_ path: String) throws -> H5Group {
        let h = handle
        try requireKind(.group, path)
        let gid = try h.call("H5Gopen2", object: h.child(path)) { H5Gopen2(h.id, path, drummer_H5P_DEFAULT()) }
        return H5Group(handle: H5Handle(id: gid, file: h.file, path: h.child(path)))
    }

    /// Opens an existing dataset.
    public func dataset(_ path: String) throws -> H5Dataset {
        let h = handle
        try requireKind(.dataset, path)
        let did = try h.call("H5Dopen2", object: h.child(path)) { H5Dopen2(h.id, path, drummer_H5P_DEFAULT()) }
        return H5Dataset(handle: H5Handle(id: did, file: h.file, path: h.child(path)))
    }

    func requireKind(_ want: H5ObjectKind, _ path: String) throws {
        let h = handle
        try validateName(path, want == .group ? "group" : "dataset", h)
        let found = try kind(of: path)
        guard found == want else {
            throw h.error(.wrongKind(expected: "\(want)", found: "\(found)"), "H5Iget_type", object: h.child(path))
        }
    }

    /// Link creation that makes missing intermediate groups.
    func intermediateGroupsList() throws -> H5Temporary {
        let h = handle
        let lcpl = H5Temporary.plist(try h.call("H5Pcreate") { H5Pcreate(drummer_H5P_LINK_CREATE()) })
        try h.call("H5Pset_create_intermediate_group") { H5Pset_create_intermediate_group(lcpl.id, 1) }
        return lcpl
    }
}
