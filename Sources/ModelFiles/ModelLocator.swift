// Where a model named on the command line is. A path that exists is itself; a bare name
// ("groove", no slash) that is not a path of the current folder is looked up, in order, in
//   $XDG_DATA_HOME/drummer/models      (default ~/.local/share/drummer/models)
//   PREFIX/share/drummer/models        (PREFIX: the folder above the binary's bin/, as
//                                       Scripts/install lays it out)
//   the source tree's models/          (a binary in a build folder of the repository)
//   DIR/drummer/models for each DIR of $XDG_DATA_DIRS (default /usr/local/share:/usr/share)
// so that `drummer sample` and `drummer humanize` find the shipped model from any folder once
// it is installed, and a model of one's own can be installed beside it by name.
import Foundation

public enum ModelLocator {
    /// The model `sample`, `humanize` and `play` use when none is named.
    public static let defaultModel = "groove"

    /// A model name that `resolve` could not find anywhere.
    public struct NotFound: Error, CustomStringConvertible, Equatable {
        public let name: String
        public let searched: [String]
        public var description: String {
            "no model named \(name): not a folder here, nor in " + searched.joined(separator: ", ")
                + " (Scripts/install puts the shipped model where drummer finds it; or give a model directory's path)"
        }
    }

    /// The folders searched for a named model, in order, for this environment and executable.
    public static func searchFolders(environment: [String: String] = ProcessInfo.processInfo.environment,
                                     executable: String? = executablePath()) -> [String] {
        var out: [String] = []
        // The XDG rule: an empty or relative value is ignored (a relative one would search the
        // current folder); an empty or relative HOME gives no home folder at all.
        let absolute = { (v: String?) in v.flatMap { $0.hasPrefix("/") ? $0 : nil } }
        let dataHome = absolute(environment["XDG_DATA_HOME"])
            ?? absolute(environment["HOME"]).map { ($0 as NSString).appendingPathComponent(".local/share") }
        if let dataHome { out.append((dataHome as NSString).appendingPathComponent("drummer/models")) }
        if let exe = executable {
            let bin = (exe as NSString).deletingLastPathComponent
            out.append((((bin as NSString).deletingLastPathComponent) as NSString).appendingPathComponent("share/drummer/models"))
            if let tree = sourceTree(containing: bin) { out.append((tree as NSString).appendingPathComponent("models")) }
        }
        let dataDirs = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        for dir in dataDirs.split(separator: ":") where dir.hasPrefix("/") {
            out.append((String(dir) as NSString).appendingPathComponent("drummer/models"))
        }
        var seen = Set<String>()
        return out.map { ($0 as NSString).standardizingPath }.filter { seen.insert($0).inserted }
    }

    /// A model path that does not exist where a model of its last name is installed: the
    /// repository's `models/groove` named outside the repository, where `groove` finds it.
    public struct PathNotFound: Error, CustomStringConvertible, Equatable {
        public let path: String
        public let name: String
        public let installed: String
        public var description: String {
            "\(path): no such model directory here; the model named \(name) is installed at \(installed): give its name, \(name)"
        }
    }

    /// `nameOrPath` as a path: itself when it exists or names a path (holds a slash, or ends in
    /// .h5); else the first search folder holding a folder of that name. A path that does not
    /// exist, whose last name is an installed model's, is an error that says so.
    public static func resolve(_ nameOrPath: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                               executable: String? = executablePath()) throws -> String {
        let fm = FileManager.default
        if fm.fileExists(atPath: nameOrPath) || nameOrPath.hasSuffix(".h5") || nameOrPath.isEmpty {
            return nameOrPath
        }
        let folders = searchFolders(environment: environment, executable: executable)
        func installed(_ name: String) -> String? {
            for folder in folders {
                let candidate = (folder as NSString).appendingPathComponent(name)
                var isDir: ObjCBool = false
                if fm.fileExists(atPath: candidate, isDirectory: &isDir), isDir.boolValue { return candidate }
            }
            return nil
        }
        if nameOrPath.contains("/") {
            let name = (nameOrPath as NSString).lastPathComponent
            if !name.isEmpty, name != ".", name != "..", let found = installed(name) {
                throw PathNotFound(path: nameOrPath, name: name, installed: found)
            }
            return nameOrPath
        }
        if let found = installed(nameOrPath) { return found }
        throw NotFound(name: nameOrPath, searched: folders)
    }

    /// The running executable, symbolic links resolved (/proc/self/exe).
    public static func executablePath() -> String? {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments.first.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
        return path.map { ($0 as NSString).standardizingPath }
    }

    /// The repository a build folder belongs to: the nearest of the folder's ancestors (up to
    /// four levels: .build/<triple>/<configuration>/) holding Package.swift and models/.
    static func sourceTree(containing folder: String) -> String? {
        var dir = folder
        for _ in 0..<5 {
            let fm = FileManager.default
            if fm.fileExists(atPath: (dir as NSString).appendingPathComponent("Package.swift")),
               fm.fileExists(atPath: (dir as NSString).appendingPathComponent("models")) {
                return dir
            }
            let up = (dir as NSString).deletingLastPathComponent
            if up == dir || up.isEmpty { return nil }
            dir = up
        }
        return nil
    }
}
