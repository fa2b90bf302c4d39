// Magenta's nine drum classes (note_seq's drums_encoder_decoder DEFAULT_DRUM_TYPE_PITCHES,
// with the Groove MIDI Dataset's 22 and 26): every General MIDI percussion key, and the
// few notes Roland kits add below it, folded onto a standard kit. Used to see a bar as the
// set of (drum class, sixteenth) it hits (`drummer stats`' bar-structure figures).

public enum DrumClasses {
    /// Class names, in Magenta's order.
    public static let names = ["kick", "snare", "closed hi-hat", "open hi-hat", "low tom", "mid tom", "high tom", "crash", "ride"]
    /// Short names for tables.
    public static let shortNames = ["BD", "SD", "HH", "OH", "LT", "MT", "HT", "CR", "RD"]
    public static var count: Int { names.count }
    /// Classes counted as fill sounds: the toms and the crash.
    public static let fillClasses: Set<Int> = [4, 5, 6, 7]

    private static let pitches: [[Int]] = [
        [36, 35],
        [38, 27, 28, 31, 32, 33, 34, 37, 39, 40, 56, 65, 66, 75, 85],
        [42, 44, 54, 68, 69, 70, 71, 73, 78, 80, 22],
        [46, 67, 72, 74, 79, 81, 26],
        [45, 29, 41, 43, 61, 64, 84],
        [48, 47, 60, 63, 77, 86, 87],
        [50, 30, 62, 76, 83],
        [49, 52, 55, 57, 58],
        [51, 53, 59, 82],
    ]

    private static let table: [Int8] = {
        var t = [Int8](repeating: -1, count: 128)
        for (c, notes) in pitches.enumerated() { for n in notes { t[n] = Int8(c) } }
        return t
    }()

    /// The class of a MIDI note, nil for notes outside the map (0…21, 23–25, 88…127 and a
    /// few others).
    public static func of(note: Int) -> Int? {
        guard (0..<128).contains(note) else { return nil }
        let c = table[note]
        return c < 0 ? nil : Int(c)
    }
}
