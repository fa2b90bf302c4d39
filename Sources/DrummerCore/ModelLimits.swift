// Size limits checked before anything is allocated: every size a user or a file can
// give (--hidden, model.json's hidden_size, vocabulary sizes, benchmark sizes) is
// bounded here, and the memory a training run needs is compared with the machine's.
import Foundation

public enum ModelLimits {
    /// Largest hidden size: Wx is (I+H+1)·4H floats, 268 MB at H = 4096 (the trainer keeps
    /// three such buffers: weights, gradient, optimizer slot).
    package static let maximumHidden = 4096
    /// Most stacked LSTM layers a model may have.
    package static let maximumLayers = 16
    /// Largest tick vocabulary (a model.json or dataset naming more is refused).
    public static let maximumTicks = 1 << 20

    /// Physical memory of this machine in bytes (nil when unknown).
    package static var physicalMemory: Int? {
        let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, size > 0 else { return nil }
        let (bytes, overflow) = pages.multipliedReportingOverflow(by: size)
        return overflow ? nil : bytes
    }

    /// The soft address-space limit (`ulimit -v`, RLIMIT_AS) in bytes; nil when there is none.
    package static var addressSpaceLimit: Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }  // RLIM_INFINITY
        return limit.rlim_cur > rlim_t(Int.max) ? nil : Int(limit.rlim_cur)
    }

    /// Address space this process has mapped now, in bytes (/proc/self/statm's size); nil when
    /// unknown.
    package static var mappedBytes: Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = text.split(separator: " ").first.flatMap({ Int($0) }) else { return nil }
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? pages * size : nil
    }

    /// Under an address-space limit (`ulimit -v`), what goes wrong when the process maps
    /// `bytes` more, keeping `reserve` for what maps after (threads' stacks and arenas): "need
    /// …, more than … leaves: raise it to ulimit -v N or more"; nil when it fits or there is no
    /// limit. Swift traps on a failed allocation: a size known beforehand is refused first.
    package static func addressSpaceShortfall(for bytes: Int, reserve: Int, held: Int = 0) -> String? {
        guard let space = addressSpaceLimit else { return nil }
        let left = max(0, space - (mappedBytes ?? addressSpaceFloor) + held - reserve)
        guard bytes > left else { return nil }
        let mib = 1 << 20
        // What is mapped varies by a malloc arena (64 MiB) from run to run: the advice adds one.
        let (raised, overflow) = space.addingReportingOverflow(bytes - left + (64 << 20))
        let advice = overflow || bytes == Int.max ? "raise it with ulimit -v" : "raise it to ulimit -v \(((raised + mib - 1) / mib) * 1024) or more"
        let need = bytes == Int.max ? "more memory than can be counted" : "\((bytes + mib - 1) / mib) MiB"
        return "need \(need) of address space, more than the \(left / mib) MiB the address-space limit (ulimit -v \(space / 1024)) "
            + "leaves beside the libraries, the data and the threads: \(advice)"
    }

    /// Under an address-space limit, what goes wrong reading the model at `path` (a model
    /// directory's weights, a checkpoint, a safetensors file: its bytes on disk): reading and
    /// running one takes about 3 times a model directory's weights and 1.15 times a checkpoint
    /// (which also holds the optimizer's slots), beside `modelBase` for drummer's libraries and
    /// threads (measured on a 2-core Zen 4: a 9 MB model peaked at 496 MiB, one of hidden size
    /// 2048 at 2.3–2.8 and 1.13 times more, in sample, humanize, eval, export and import). The
    /// answer depends on the files alone, not on what happens to be mapped. nil when it fits
    /// or there is no limit. OpenBLAS retries a failed buffer for ever and Swift traps on a
    /// failed allocation: a model too large for the limit is refused before it is read.
    package static func addressSpaceShortfall(reading path: String) -> String? {
        guard let space = addressSpaceLimit else { return nil }
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else { return nil }
        func size(_ p: String) -> Int { ((try? fm.attributesOfItem(atPath: p))?[.size] as? NSNumber)?.intValue ?? 0 }
        let model: Double
        if isDirectory.boolValue {
            let names = (try? fm.contentsOfDirectory(atPath: path)) ?? []
            model = 3 * Double(names.filter { $0.hasSuffix(".bin") }.reduce(0) { $0 + size((path as NSString).appendingPathComponent($1)) })
        } else {
            model = (path.hasSuffix(".safetensors") || path.hasSuffix(".onnx") ? 3 : 1.15) * Double(size(path))
        }
        let mib = 1 << 20
        let modelMiB = Int((model / Double(mib)).rounded(.up)), need = modelMiB + modelBase / mib
        guard need * mib > space else { return nil }
        return "need \(need) MiB of address space (\(modelMiB) MiB for the model, \(modelBase / mib) MiB for drummer's libraries "
            + "and threads), more than the address-space limit (ulimit -v \(space / 1024)): raise it to ulimit -v \(need * 1024) or more"
    }

    /// The address space drummer takes beside a model it reads (`addressSpaceShortfall(reading:)`):
    /// a 9 MB model's commands peaked at 496 MiB, with up to a malloc arena (64 MiB) more.
    package static let modelBase = 576 << 20

    /// The address space below which drummer refuses to start. Under `ulimit -v` the threads'
    /// reservations count whole (OpenBLAS's 128 MB buffer per thread, 64 MB of malloc arena
    /// per thread, each thread's stack): below about 800 MB a command crashed on a failed
    /// allocation, or hung in OpenBLAS retrying one, often after its work was done.
    package static let addressSpaceFloor = 1 << 30

    /// The error for an address-space limit under `addressSpaceFloor`; nil when there is none.
    package static var addressSpaceError: String? {
        guard let limit = addressSpaceLimit, limit < addressSpaceFloor else { return nil }
        return "the address-space limit (ulimit -v) is \(describe(bytes: limit)); drummer needs at least "
            + "\(describe(bytes: addressSpaceFloor)) of address space (OpenBLAS and every thread reserve theirs whole): "
            + "raise it with ulimit -v"
    }

    /// "1.5 GiB", "300 MiB".
    package static func describe(bytes: Int) -> String {
        let g = Double(bytes) / Double(1 << 30)
        if g >= 1 { return g >= 100 ? "\(Int(g.rounded())) GiB" : String(format: "%.1f GiB", g) }
        return "\(max(1, bytes >> 20)) MiB"
    }
}
