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

    /// "1.5 GiB", "300 MiB".
    package static func describe(bytes: Int) -> String {
        let g = Double(bytes) / Double(1 << 30)
        if g >= 1 { return g >= 100 ? "\(Int(g.rounded())) GiB" : String(format: "%.1f GiB", g) }
        return "\(max(1, bytes >> 20)) MiB"
    }
}
