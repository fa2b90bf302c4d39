// A small CSV reader for train_log.csv.
//
// Why not SwiftCSV: the log is written by `drummer train` (numbers, never quoted), and
// this 60-line reader, tested in ReportTests, covers it and RFC 4180 quoting besides,
// without another package to mirror for one file format.

import Foundation

/// Rows of a CSV file split into fields (RFC 4180: comma-separated; a double-quoted field
/// may hold commas, newlines and doubled quotes; CRLF or LF line ends; blank lines skipped).
public struct CSVTable: Equatable, Sendable {
    public var header: [String]
    public var rows: [[String]]

    public init(header: [String], rows: [[String]]) {
        self.header = header
        self.rows = rows
    }

    /// Parses `text`; the first non-blank line is the header. Empty text gives an empty header.
    /// - Throws: `CSVError` for a quote that is never closed.
    public static func parse(_ text: String) throws -> CSVTable {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var inQuotes = false, quotedField = false
        var line = 1, quoteLine = 0
        var chars = Array(text.unicodeScalars)[...]
        if chars.first == "\u{FEFF}" { chars = chars.dropFirst() }  // byte-order mark
        func endRecord() {
            record.append(field)
            if !(record.count == 1 && record[0].isEmpty && !quotedField) { records.append(record) }
            record = []
            field = ""
            quotedField = false
        }
        var i = chars.startIndex
        while i < chars.endIndex {
            let c = chars[i]
            if inQuotes {
                if c == "\"" {
                    let next = chars.index(after: i)
                    if next < chars.endIndex, chars[next] == "\"" {
                        field.unicodeScalars.append("\"")
                        i = next
                    } else {
                        inQuotes = false
                    }
                } else {
                    if c == "\n" { line += 1 }
                    field.unicodeScalars.append(c)
                }
            } else {
                switch c {
                case "\"" where field.isEmpty:
                    inQuotes = true
                    quotedField = true
                    quoteLine = line
                case ",":
                    record.append(field)
                    field = ""
                    quotedField = false
                case "\r":
                    break
                case "\n":
                    endRecord()
                    line += 1
                default:
                    field.unicodeScalars.append(c)
                }
            }
            i = chars.index(after: i)
        }
        if inQuotes { throw CSVError.unterminatedQuote(line: quoteLine) }
        if !field.isEmpty || !record.isEmpty || quotedField { endRecord() }
        guard let header = records.first else { return CSVTable(header: [], rows: []) }
        return CSVTable(header: header.map { $0.trimmingCharacters(in: .whitespaces) }, rows: Array(records.dropFirst()))
    }
}

public enum CSVError: Error, Equatable, CustomStringConvertible {
    case unterminatedQuote(line: Int)

    public var description: String {
        switch self {
        case .unterminatedQuote(let line): return "the quoted field opened on line \(line) is never closed"
        }
    }
}
