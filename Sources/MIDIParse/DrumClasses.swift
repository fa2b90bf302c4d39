// Magenta's nine drum classes (note_seq's drums_encoder_decoder DEFAULT_DRUM_TYPE_PITCHES,
// with the Groove MIDI Dataset's 22 and 26): every General MIDI percussion key, and the
// few notes Roland kits add below it, folded onto a standard kit. Used to see a bar as the
// set of (drum class, sixteenth) it hits (`drummer stats`' bar-structure figures).

public enum DrumClasses {
    /// Class names, in Magenta's order.
    public static let names = ["kick", "snare", "closed hi-hat", "open hi-hat", "low tom", "mid tom", "high tom", "crash", "ride"]
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

extension DrumClasses {
    /// The General MIDI note each class is played with: bass drum 1, acoustic snare, closed
    /// and open hi-hat, low, low-mid and high tom, crash 1, ride 1.
    public static let representatives = [36, 38, 42, 46, 45, 48, 50, 49, 51]
}

extension GeneralMIDIDrums {
    /// A note every General MIDI drum kit sounds: a note of the GM percussion range 35…81 is
    /// itself; another note with one of Magenta's drum classes is its class's GM note (22, the
    /// Groove corpus's hi-hat edge, → 42 closed hi-hat; 26, hi-hat edge open, → 46; 27…34 and
    /// 82…87, GM2 and Roland sounds, → their class's); any other note → the nearest note of
    /// 35…81.
    public static func audible(note: Int) -> Int {
        if range.contains(note) { return note }
        if let c = DrumClasses.of(note: note) { return DrumClasses.representatives[c] }
        return min(max(note, range.lowerBound), range.upperBound)
    }

    /// A note as the figures of `stats` and `report` compare two sets of files: as `audible`,
    /// but a note outside 35…81 with no drum class stays as written (the nearest GM note would
    /// give it a class, a kick or an open hi-hat, in the class figures; it counts in none).
    public static func compared(note: Int) -> Int {
        range.contains(note) || DrumClasses.of(note: note) != nil ? audible(note: note) : note
    }
}
