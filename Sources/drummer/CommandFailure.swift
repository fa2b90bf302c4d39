// A command's failure at run time (a primer with no hits, a reference with no file to measure,
// no checkpoint meeting choose-step's rule): exit 1 with "error: …". A ValidationError is a
// usage error instead (exit 64, with the usage line), about the arguments themselves.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}
