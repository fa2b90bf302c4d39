// A path in a command line the tool prints for the user to paste ("drummer train --resume
// ckpt/ckpt-300.h5 -o 'my model'"): quoted for a POSIX shell when it needs it.
import Foundation

public enum ShellWords {
    /// `word` as one shell word: as it is when it holds only characters no shell reads
    /// specially, else in single quotes (a single quote inside as '\'').
    public static func quoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { c in
            (c.value >= 0x30 && c.value <= 0x39) || (c.value >= 0x41 && c.value <= 0x5A) || (c.value >= 0x61 && c.value <= 0x7A)
                || "_./=:,+-@%".unicodeScalars.contains(c)
        }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
