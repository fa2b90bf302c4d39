import Foundation

/// `x` with `decimals` decimals, right-aligned in `width` characters.
func fixed(_ x: Double, _ decimals: Int, width: Int = 0) -> String {
    let s = String(format: "%.\(decimals)f", x)
    return s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
}

/// `s` padded with spaces to `width` characters.
func padded(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}
