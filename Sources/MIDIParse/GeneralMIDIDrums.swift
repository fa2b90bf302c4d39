// General MIDI percussion key map (GM Level 1, channel 10): one table of names, short tab
// names and the order a drummer reads a kit in, shared by `drummer tab`, `drummer report`
// and convert-midi's summary.
//
// Short names are unique per note, two or three letters, in the usual drum-tab style
// (CR crash, HH hi-hat, RD ride, SD snare, BD bass drum, T1..T4 and FT toms, HF hi-hat
// foot). Where GM has two of a kind, the second gets a "2" (BD2 for 35 Acoustic Bass Drum,
// since 36 Bass Drum 1 is the kick most kits and the Groove corpus use; SD2 for 40 Electric
// Snare; CR2, RD2 for the second crash and ride; FT2 for the low floor tom).
//
// Display order, top to bottom as in a drum tab: cymbals (crashes, splash, china, rides,
// bell), hi-hats (closed, open, foot), toms high to low, snares (acoustic, electric, side
// stick, clap), bass drums, then the other GM percussion (tambourine ... open triangle) in
// note order. Notes outside 35...81 are named "Note N" (short "N<n>") and sort after all
// of these, by note number.

/// One General MIDI percussion sound.
public struct GeneralMIDIDrum: Equatable, Hashable, Sendable {
    /// MIDI note number 0...127.
    public let note: Int
    /// GM name, e.g. "Acoustic Snare"; "Note 22" outside the GM percussion range.
    public let name: String
    /// Short tab name, e.g. "SD"; "N22" outside the GM percussion range.
    public let shortName: String
    /// Rank in the drummer's reading order (smaller is higher up in a tab).
    public let displayOrder: Int
    /// The sound family, for drawing (cymbals are written `x`, drums `o` in drum tabs).
    public let family: Family

    public enum Family: String, Sendable, Codable {
        case cymbal, hiHat, tom, snare, kick, percussion, other

        /// Metal: written with x-shaped glyphs in drum tabs and notation.
        package var isMetal: Bool { self == .cymbal || self == .hiHat }
    }

    public init(note: Int, name: String, shortName: String, displayOrder: Int, family: Family) {
        self.note = note
        self.name = name
        self.shortName = shortName
        self.displayOrder = displayOrder
        self.family = family
    }
}

public enum GeneralMIDIDrums {
    /// The GM Level 1 percussion key range.
    public static let range = 35...81

    // (note, name, short name, family), in display order.
    private static let table: [(Int, String, String, GeneralMIDIDrum.Family)] = [
        (49, "Crash Cymbal 1", "CR", .cymbal),
        (57, "Crash Cymbal 2", "CR2", .cymbal),
        (55, "Splash Cymbal", "SP", .cymbal),
        (52, "Chinese Cymbal", "CH", .cymbal),
        (51, "Ride Cymbal 1", "RD", .cymbal),
        (59, "Ride Cymbal 2", "RD2", .cymbal),
        (53, "Ride Bell", "RB", .cymbal),
        (42, "Closed Hi-Hat", "HH", .hiHat),
        (46, "Open Hi-Hat", "OH", .hiHat),
        (44, "Pedal Hi-Hat", "HF", .hiHat),
        (50, "High Tom", "T1", .tom),
        (48, "Hi-Mid Tom", "T2", .tom),
        (47, "Low-Mid Tom", "T3", .tom),
        (45, "Low Tom", "T4", .tom),
        (43, "High Floor Tom", "FT", .tom),
        (41, "Low Floor Tom", "FT2", .tom),
        (38, "Acoustic Snare", "SD", .snare),
        (40, "Electric Snare", "SD2", .snare),
        (37, "Side Stick", "SS", .snare),
        (39, "Hand Clap", "CP", .snare),
        (36, "Bass Drum 1", "BD", .kick),
        (35, "Acoustic Bass Drum", "BD2", .kick),
        (54, "Tambourine", "TB", .percussion),
        (56, "Cowbell", "CB", .percussion),
        (58, "Vibraslap", "VS", .percussion),
        (60, "Hi Bongo", "BGH", .percussion),
        (61, "Low Bongo", "BGL", .percussion),
        (62, "Mute Hi Conga", "CGM", .percussion),
        (63, "Open Hi Conga", "CGH", .percussion),
        (64, "Low Conga", "CGL", .percussion),
        (65, "High Timbale", "TIH", .percussion),
        (66, "Low Timbale", "TIL", .percussion),
        (67, "High Agogo", "AGH", .percussion),
        (68, "Low Agogo", "AGL", .percussion),
        (69, "Cabasa", "CA", .percussion),
        (70, "Maracas", "MA", .percussion),
        (71, "Short Whistle", "WHS", .percussion),
        (72, "Long Whistle", "WHL", .percussion),
        (73, "Short Guiro", "GUS", .percussion),
        (74, "Long Guiro", "GUL", .percussion),
        (75, "Claves", "CL", .percussion),
        (76, "Hi Wood Block", "WBH", .percussion),
        (77, "Low Wood Block", "WBL", .percussion),
        (78, "Mute Cuica", "CUM", .percussion),
        (79, "Open Cuica", "CUO", .percussion),
        (80, "Mute Triangle", "TRM", .percussion),
        (81, "Open Triangle", "TRO", .percussion),
    ]

    /// Every GM percussion sound, in display order.
    public static let all: [GeneralMIDIDrum] = table.enumerated().map { i, row in
        GeneralMIDIDrum(note: row.0, name: row.1, shortName: row.2, displayOrder: i, family: row.3)
    }

    private static let byNote: [Int: GeneralMIDIDrum] = Dictionary(uniqueKeysWithValues: all.map { ($0.note, $0) })

    /// The drum for `note`; outside 35...81 a fallback named "Note N" that sorts after the kit.
    public static func drum(note: Int) -> GeneralMIDIDrum {
        if let d = byNote[note] { return d }
        return GeneralMIDIDrum(note: note, name: "Note \(note)", shortName: "N\(note)",
                               displayOrder: all.count + max(0, note), family: .other)
    }

    /// "Acoustic Snare" for 38, "Note 22" for 22.
    public static func name(note: Int) -> String { drum(note: note).name }

    /// "SD" for 38, "N22" for 22.
    public static func shortName(note: Int) -> String { drum(note: note).shortName }

    /// The distinct notes of `notes`, in display order (top of a tab first).
    public static func sorted<S: Sequence>(notes: S) -> [Int] where S.Element == Int {
        Set(notes).sorted { drum(note: $0).displayOrder < drum(note: $1).displayOrder }
    }

    /// "Closed Hi-Hat (42) ×120, Acoustic Snare (38) ×40, Note 22 ×3": counts per note in
    /// display order, for summaries.
    public static func listing(counts: [Int: Int]) -> String {
        sorted(notes: counts.keys).map { n in
            let d = drum(note: n)
            let label = d.family == .other ? d.name : "\(d.name) (\(n))"
            return "\(label) ×\(counts[n] ?? 0)"
        }.joined(separator: ", ")
    }
}
