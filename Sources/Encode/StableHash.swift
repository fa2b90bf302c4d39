// A hash that is the same on every run and machine (Swift's Hasher is randomly seeded).

public enum StableHash {
    /// 64-bit FNV-1a of the UTF-8 bytes of `string`.
    public static func fnv1a64(_ string: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in string.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h
    }

    /// A number in [0, 1) from the top 53 bits of the FNV-1a hash of `string`.
    public static func unitInterval(_ string: String) -> Double {
        Double(fnv1a64(string) >> 11) / 9_007_199_254_740_992.0
    }
}
