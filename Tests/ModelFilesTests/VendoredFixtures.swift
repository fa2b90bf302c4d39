// The 2017 project's files the tests read are vendored in Tests/Fixtures/rnn-drummer (see
// ORIGIN.md there): a missing one is a broken checkout, so the test fails instead of skipping.
struct VendoredFixtureMissing: Error, CustomStringConvertible {
    var description: String { "Tests/Fixtures/rnn-drummer is missing or incomplete: it is part of the repository" }
}
