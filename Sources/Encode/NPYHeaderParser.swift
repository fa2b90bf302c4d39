// A parser for the Python literal in a .npy header: a dict of string keys to
// strings, booleans, None, integers, and tuples/lists of those. Recursion is
// bounded, so no header can exhaust the stack.

struct NPYHeaderFields: Equatable {
    var descr: String
    var fortranOrder: Bool
    var shape: [Int]
}

indirect enum PyLiteral: Equatable {
    case string(String)
    case bool(Bool)
    case none
    case int(Int)
    case tuple([PyLiteral])
    case list([PyLiteral])
    case dict([(String, PyLiteral)])

    static func == (a: PyLiteral, b: PyLiteral) -> Bool {
        switch (a, b) {
        case let (.string(x), .string(y)): return x == y
        case let (.bool(x), .bool(y)): return x == y
        case (.none, .none): return true
        case let (.int(x), .int(y)): return x == y
        case let (.tuple(x), .tuple(y)), let (.list(x), .list(y)): return x == y
        case let (.dict(x), .dict(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    var repr: String {
        switch self {
        case let .string(s): return "'\(s)'"
        case let .bool(b): return b ? "True" : "False"
        case .none: return "None"
        case let .int(i): return String(i)
        case let .tuple(items): return "(" + items.map(\.repr).joined(separator: ", ") + (items.count == 1 ? ",)" : ")")
        case let .list(items): return "[" + items.map(\.repr).joined(separator: ", ") + "]"
        case let .dict(items): return "{" + items.map { "'\($0.0)': \($0.1.repr)" }.joined(separator: ", ") + "}"
        }
    }
}

struct NPYHeaderParser {
    private let chars: [Character]
    private var pos = 0
    private let path: String
    private let baseOffset: Int
    private static let maxDepth = 16

    /// Parses the header dict and extracts the three fields numpy requires.
    static func parseHeader(_ text: String, path: String, offset: Int) throws -> NPYHeaderFields {
        var parser = NPYHeaderParser(chars: Array(text), path: path, baseOffset: offset)
        let value = try parser.parseValue(depth: 0)
        parser.skipSpace()
        guard parser.pos == parser.chars.count else {
            throw parser.error("unexpected text after the header dict")
        }
        guard case let .dict(items) = value else {
            throw NPYError(path: path, offset: offset, kind: .malformedHeader("header is not a dict: \(value.repr)"))
        }
        func field(_ key: String) throws -> PyLiteral {
            guard let v = items.first(where: { $0.0 == key })?.1 else {
                throw NPYError(path: path, offset: offset, kind: .malformedHeader("missing key '\(key)'"))
            }
            return v
        }
        let keys = Set(items.map(\.0))
        guard keys == ["descr", "fortran_order", "shape"], keys.count == items.count else {
            for k in ["descr", "fortran_order", "shape"] { _ = try field(k) }
            throw NPYError(path: path, offset: offset, kind: .malformedHeader(
                "unexpected or repeated keys \(items.map(\.0)) (want descr, fortran_order, shape)"))
        }
        let descr: String
        switch try field("descr") {
        case let .string(s): descr = s
        case let other:
            // Structured dtypes are lists of fields: valid numpy, unsupported here.
            throw NPYError(path: path, offset: offset, kind: .unsupportedDType(other.repr))
        }
        guard case let .bool(fortran) = try field("fortran_order") else {
            throw NPYError(path: path, offset: offset, kind: .malformedHeader("'fortran_order' is not True or False"))
        }
        let shapeValue = try field("shape")
        guard case let .tuple(dims) = shapeValue else {
            throw NPYError(path: path, offset: offset, kind: .malformedHeader("'shape' is not a tuple: \(shapeValue.repr)"))
        }
        var shape: [Int] = []
        for d in dims {
            guard case let .int(n) = d, n >= 0 else {
                throw NPYError(path: path, offset: offset, kind: .malformedHeader(
                    "'shape' must be a tuple of non-negative integers: \(shapeValue.repr)"))
            }
            shape.append(n)
        }
        return NPYHeaderFields(descr: descr, fortranOrder: fortran, shape: shape)
    }

    private init(chars: [Character], path: String, baseOffset: Int) {
        self.chars = chars
        self.path = path
        self.baseOffset = baseOffset
    }

    private func error(_ message: String) -> NPYError {
        // Offsets are exact for ASCII headers (all numpy writes); approximate otherwise.
        NPYError(path: path, offset: baseOffset + pos, kind: .malformedHeader(message))
    }

    private mutating func skipSpace() {
        while pos < chars.count, chars[pos].isWhitespace { pos += 1 }
    }

    private mutating func parseValue(depth: Int) throws -> PyLiteral {
        guard depth < Self.maxDepth else { throw error("nested too deeply") }
        skipSpace()
        guard pos < chars.count else { throw error("unexpected end of header") }
        let c = chars[pos]
        switch c {
        case "{":
            pos += 1
            var items: [(String, PyLiteral)] = []
            try parseSequence(close: "}") { p in
                guard case let .string(key) = try p.parseValue(depth: depth + 1) else {
                    throw p.error("dict keys must be strings")
                }
                p.skipSpace()
                guard p.pos < p.chars.count, p.chars[p.pos] == ":" else { throw p.error("expected ':'") }
                p.pos += 1
                items.append((key, try p.parseValue(depth: depth + 1)))
            }
            return .dict(items)
        case "(", "[":
            pos += 1
            var items: [PyLiteral] = []
            var sawComma = false
            try parseSequence(close: c == "(" ? ")" : "]", sawComma: &sawComma) { p in
                items.append(try p.parseValue(depth: depth + 1))
            }
            if c == "[" { return .list(items) }
            // "(x)" is just x in Python; "(x,)" is a 1-tuple.
            if items.count == 1 && !sawComma { return items[0] }
            return .tuple(items)
        case "'", "\"":
            pos += 1
            var s = ""
            while pos < chars.count, chars[pos] != c {
                if chars[pos] == "\\" { throw error("escapes in strings are not supported") }
                s.append(chars[pos])
                pos += 1
            }
            guard pos < chars.count else { throw error("unterminated string") }
            pos += 1
            return .string(s)
        default:
            var word = ""
            while pos < chars.count, chars[pos].isLetter || chars[pos].isNumber || chars[pos] == "_" || chars[pos] == "-" {
                word.append(chars[pos])
                pos += 1
            }
            switch word {
            case "True": return .bool(true)
            case "False": return .bool(false)
            case "None": return .none
            case "": throw error("unexpected character '\(c)'")
            default:
                // Python 2 wrote longs as 3L.
                let digits = word.hasSuffix("L") ? String(word.dropLast()) : word
                guard let n = Int(digits) else {
                    if digits.allSatisfy({ $0.isNumber || $0 == "-" }) {
                        throw NPYError(path: path, offset: baseOffset + pos, kind: .shapeOverflow(shape: word))
                    }
                    throw error("unexpected token '\(word)'")
                }
                return .int(n)
            }
        }
    }

    /// Parses `item (, item)* ,? close` after the opening bracket.
    private mutating func parseSequence(close: Character, item: (inout NPYHeaderParser) throws -> Void) throws {
        var sawComma = false
        try parseSequence(close: close, sawComma: &sawComma, item: item)
    }

    private mutating func parseSequence(close: Character, sawComma: inout Bool,
                                        item: (inout NPYHeaderParser) throws -> Void) throws {
        while true {
            skipSpace()
            guard pos < chars.count else { throw error("unexpected end of header, expected '\(close)'") }
            if chars[pos] == close { pos += 1; return }
            try item(&self)
            skipSpace()
            guard pos < chars.count else { throw error("unexpected end of header, expected '\(close)'") }
            if chars[pos] == "," {
                sawComma = true
                pos += 1
            } else if chars[pos] != close {
                throw error("expected ',' or '\(close)' but found '\(chars[pos])'")
            }
        }
    }
}
