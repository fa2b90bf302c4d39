// The commands' print() goes through Console: standard output written at once with write(2),
// a failed write remembered and reported as the process ends (exit 1). Swift's print buffers
// in the C stream, and a write that failed when that buffer filled (a full disk, `| head` that
// had read enough) was lost without a trace: tab and stats exited 0 with their output cut.
import FileOutput
import Foundation

func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    Console.write(Data((items.map { "\($0)" }.joined(separator: separator) + terminator).utf8))
}
