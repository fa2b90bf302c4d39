// Scripts/install, then drummer from a folder outside the repository: `sample` and `humanize`
// with no model find the shipped one in the install prefix, a model's name resolves in
// $XDG_DATA_HOME/drummer/models, and a name found nowhere is refused with the places looked in.
import Foundation
import XCTest

final class InstallCLITests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws { root = try CLI.temporaryDirectory("install-cli") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    /// HOME and the XDG folders inside the test's root, so that nothing the machine has
    /// installed is found; run from `elsewhere`, outside the repository.
    func environment() -> [String: String] {
        ["HOME": root.appendingPathComponent("home").path, "XDG_DATA_DIRS": root.appendingPathComponent("no-data-dirs").path]
    }

    func testInstalledDrummerFindsTheShippedModelFromAnyFolder() throws {
        let prefix = root.appendingPathComponent("prefix")
        // Run as the docs write it (the script itself, executable), with a prefix relative to
        // the caller's folder.
        let install = try CLI.run(executable: CLI.repoRoot.appendingPathComponent("Scripts/install"),
                                  ["--prefix", "prefix", "--binary", CLI.binary.path], cwd: root)
        XCTAssertEqual(install.status, 0, install.stderr)
        XCTAssertTrue(install.stdout.contains("install: \(prefix.path)/bin/drummer, the shipped model in \(prefix.path)/share/drummer/models/groove"),
                      install.stdout)
        let shipped = prefix.appendingPathComponent("share/drummer/models/groove")
        for file in ["Wx.bin", "Wx1.bin", "Wy.bin", "model.json"] {
            XCTAssertEqual(try Data(contentsOf: shipped.appendingPathComponent(file)),
                           try Data(contentsOf: CLI.repoRoot.appendingPathComponent("models/groove/" + file)), file)
        }
        let drummer = prefix.appendingPathComponent("bin/drummer")
        let elsewhere = root.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        XCTAssertFalse(FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("models").path))

        // No model named: the shipped one, from the prefix.
        var r = try CLI.run(executable: drummer, ["sample", "-n", "60", "--seed", "3", "-o", "beat.mid"],
                            environment: environment(), cwd: elsewhere)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("model: \(shipped.path)"), r.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("beat.mid").path))
        r = try CLI.run(executable: drummer, ["humanize", "beat.mid", "-o", "out.mid", "--seed", "1"],
                        environment: environment(), cwd: elsewhere)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("model: \(shipped.path)"), r.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("out.mid").path))
        // The same file as the repository's binary writes from the repository's models/groove.
        let reference = root.appendingPathComponent("reference.mid").path
        r = try CLI.run(["sample", CLI.repoRoot.appendingPathComponent("models/groove").path, "-n", "60", "--seed", "3", "-o", reference])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Data(contentsOf: elsewhere.appendingPathComponent("beat.mid")), try Data(contentsOf: URL(fileURLWithPath: reference)))

        // A model of one's own, by name, from $XDG_DATA_HOME/drummer/models (searched first).
        let data = root.appendingPathComponent("xdg")
        let mine = data.appendingPathComponent("drummer/models/mine")
        try FileManager.default.createDirectory(at: mine.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: shipped, to: mine)
        r = try CLI.run(executable: drummer, ["humanize", "beat.mid", "--model", "mine", "-o", "mine.mid", "--seed", "1"],
                        environment: environment().merging(["XDG_DATA_HOME": data.path]) { $1 }, cwd: elsewhere)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("model: \(mine.path)"), r.stdout)

        // Every command that takes a model takes the installed one by name (export, eval, encode and
        // report --model took only paths), and the repository's models/groove named from another
        // folder is refused with the name that finds it.
        r = try CLI.run(executable: drummer, ["export", "groove", "--format", "safetensors", "-o", "g.safetensors"],
                        environment: environment(), cwd: elsewhere)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("exported \(shipped.path) to g.safetensors"), r.stdout)
        r = try CLI.run(executable: drummer, ["eval", "groove", "--data", "beat.mid", "--quantize", "30"],
                        environment: environment(), cwd: elsewhere)
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(executable: drummer, ["encode", "groove", "--data", "beat.mid", "-o", "rows.npy"],
                        environment: environment(), cwd: elsewhere)
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try CLI.run(executable: drummer, ["report", "--model", "groove", "--no-audio", "beat.mid", "-o", "page.html"],
                        environment: environment(), cwd: elsewhere)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains(": piano-rolls, histograms, model; not drawn: audio"), r.stderr)
        for args in [["sample", "models/groove", "-o", "x.mid"], ["export", "models/groove", "--format", "onnx", "-o", "x.onnx"]] {
            r = try CLI.run(executable: drummer, args, environment: environment(), cwd: elsewhere)
            assertRefused(r, "models/groove: no such model directory here; the model named groove is installed at \(shipped.path): "
                          + "give its name, groove", nothingAt: elsewhere.appendingPathComponent(args[args.count - 1]).path)
        }

        // A name found nowhere: refused, naming where it looked; nothing written.
        r = try CLI.run(executable: drummer, ["sample", "nosuch", "-o", "x.mid"], environment: environment(), cwd: elsewhere)
        assertRefused(r, "no model named nosuch: not a folder here, nor in \(root.path)/home/.local/share/drummer/models, "
                      + "\(prefix.path)/share/drummer/models", nothingAt: elsewhere.appendingPathComponent("x.mid").path)
        XCTAssertTrue(r.stderr.contains("Scripts/install"), r.stderr)
        // The XDG rule: an empty or relative XDG_DATA_HOME or HOME is ignored (HOME="" searched
        // .local/share/drummer/models under the current folder).
        r = try CLI.run(executable: drummer, ["sample", "nosuch", "-o", "x.mid"],
                        environment: environment().merging(["HOME": "", "XDG_DATA_HOME": "rel"]) { $1 }, cwd: elsewhere)
        assertRefused(r, "no model named nosuch: not a folder here, nor in \(prefix.path)/share/drummer/models",
                      nothingAt: elsewhere.appendingPathComponent("x.mid").path)

        // Usage errors exit 64 before anything is written; a binary that is a folder is refused.
        let script = CLI.repoRoot.appendingPathComponent("Scripts/install")
        for (args, message) in [(["--prefix"], "install: --prefix needs a folder (see --help)"),
                                (["--binary", ""], "install: --binary needs a path (see --help)"),
                                (["--bogus"], "install: unknown argument --bogus (see --help)")] {
            let u = try CLI.run(executable: script, args, cwd: root)
            XCTAssertEqual(u.status, 64, "\(args): \(u.stderr)")
            XCTAssertEqual(u.stderr, message + "\n")
        }
        let folder = try CLI.run(executable: script, ["--binary", "elsewhere", "--prefix", "p2"], cwd: root)
        XCTAssertEqual(folder.status, 1, folder.stderr)
        XCTAssertEqual(folder.stderr, "install: \(elsewhere.path) is not an executable file\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("p2").path))
    }

    /// The scripts refuse what they do not take before they install or build anything, and the
    /// demo will not replace its outputs in a folder that holds files of someone else's.
    func testScriptsRefuseWhatTheyDoNotTake() throws {
        let scripts = CLI.repoRoot.appendingPathComponent("Scripts")
        for (script, args, message) in [("setup", ["relase"], "setup: unknown configuration relase: debug or release"),
                                        ("test", ["--filter", "X"], "test: takes no arguments, got --filter X"),
                                        ("demo", ["now"], "demo: takes no arguments, got now")] {
            let r = try CLI.run(executable: scripts.appendingPathComponent(script), args, cwd: root)
            XCTAssertEqual(r.status, 64, "\(script): \(r.stderr)")
            XCTAssertTrue(r.stderr.hasPrefix(message), "\(script): \(r.stderr)")
        }
        let mine = root.appendingPathComponent("mine")
        try FileManager.default.createDirectory(at: mine.appendingPathComponent("checkpoints"), withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: mine.appendingPathComponent("photo.jpg"))
        let demo = try CLI.run(executable: scripts.appendingPathComponent("demo"), [], environment: ["DRUMMER_DEMO_DIR": mine.path])
        XCTAssertEqual(demo.status, 1, demo.stderr)
        XCTAssertEqual(demo.stderr, "demo: \(mine.path) holds photo.jpg, which the demo does not write: choose another DRUMMER_DEMO_DIR (or an empty folder)\n")
        XCTAssertTrue(FileManager.default.fileExists(atPath: mine.appendingPathComponent("checkpoints").path))
    }

    /// The binary in the repository's build folder finds the repository's models/groove from any
    /// folder, with nothing installed.
    func testBuiltDrummerFindsTheRepositorysModel() throws {
        let r = try CLI.run(["sample", "-n", "30", "--seed", "2", "-o", "b.mid"], environment: environment(), cwd: root)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("model: \(CLI.repoRoot.appendingPathComponent("models/groove").standardizedFileURL.path)"),
                      r.stdout)
    }
}
