// A reader for one kind of Python pickle: a list of ints, as the original
// project stored its lookup tables (ix_to_note.p, ix_to_tick.p). It runs the
// few pickle-machine opcodes such a file uses, for protocols 0 to 5, and
// rejects anything else by name and byte offset. It never executes code or
// imports modules: no GLOBAL, REDUCE, BUILD or similar.
import FileOutput
import Foundation

public struct PickleError: Error, CustomStringConvertible, Equatable, Sendable {
    public let path: String
    /// Byte offset of the opcode (or operand) at fault.
    public let offset: Int
    public let message: String

    public init(path: String, offset: Int, message: String) {
        self.path = path
        self.offset = offset
        self.message = message
    }

    public var description: String { "\(path): byte \(offset): \(message)" }
}

public enum PickleIntList {
    /// Reads a pickled list of ints from `path`.
    public static func read(path: String) throws -> [Int] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PickleError(path: path, offset: 0, message: "cannot read: \(ErrorText.reading(error, path: path))")
        }
        return try decode(data, path: path)
    }

    /// Decodes a pickled list of ints held in `data`; `path` names it in errors.
    public static func decode(_ data: Data, path: String) throws -> [Int] {
        var machine = PickleMachine(bytes: [UInt8](data), path: path)
        return try machine.run()
    }
}

/// The subset of the pickle virtual machine a list of ints needs.
private struct PickleMachine {
    enum Item { case mark, int(Int), list([Int]) }

    let bytes: [UInt8]
    let path: String
    var pos = 0
    var stack: [Item] = []

    init(bytes: [UInt8], path: String) {
        self.bytes = bytes
        self.path = path
    }

    func fail(_ message: String, at offset: Int) -> PickleError {
        PickleError(path: path, offset: offset, message: message)
    }

    mutating func take(_ n: Int, for what: String, opcodeAt op: Int) throws -> ArraySlice<UInt8> {
        guard n >= 0, n <= bytes.count - pos else {
            throw fail("truncated: \(what) needs \(n) bytes, \(bytes.count - pos) left", at: op)
        }
        defer { pos += n }
        return bytes[pos..<(pos + n)]
    }

    /// Little-endian unsigned integer of up to 8 bytes.
    static func unsigned(_ s: ArraySlice<UInt8>) -> UInt64 {
        s.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A protocol-0 text line up to "\n" (exclusive), bounded by the file.
    mutating func line(opcodeAt op: Int) throws -> String {
        guard let nl = bytes[pos...].firstIndex(of: 0x0A) else {
            throw fail("truncated: no newline after text operand", at: op)
        }
        defer { pos = nl + 1 }
        return String(decoding: bytes[pos..<nl], as: UTF8.self)
    }

    mutating func pushInt(_ v: Int) { stack.append(.int(v)) }

    /// Pops items down to the topmost mark; they must all be ints.
    mutating func popToMark(opcodeAt op: Int, name: String) throws -> [Int] {
        guard let m = stack.lastIndex(where: { if case .mark = $0 { return true } else { return false } }) else {
            throw fail("\(name) without a MARK", at: op)
        }
        var ints: [Int] = []
        ints.reserveCapacity(stack.count - m - 1)
        for item in stack[(m + 1)...] {
            guard case let .int(v) = item else { throw fail("\(name): list items must be ints", at: op) }
            ints.append(v)
        }
        stack.removeSubrange(m...)
        return ints
    }

    mutating func appendToList(_ items: [Int], opcodeAt op: Int, name: String) throws {
        guard case var .list(l) = stack.last else { throw fail("\(name) target is not a list", at: op) }
        stack.removeLast()
        l.append(contentsOf: items)
        stack.append(.list(l))
    }

    mutating func run() throws -> [Int] {
        while pos < bytes.count {
            let op = pos
            let code = bytes[pos]
            pos += 1
            switch code {
            case 0x80:  // PROTO
                let v = try take(1, for: "PROTO", opcodeAt: op)[op + 1]
                guard v <= 5 else { throw fail("unsupported pickle protocol \(v) (supported: 0-5)", at: op) }
            case 0x95:  // FRAME: an 8-byte length; the frame's opcodes follow inline.
                let n = Self.unsigned(try take(8, for: "FRAME", opcodeAt: op))
                guard n <= UInt64(bytes.count - pos) else {
                    throw fail("truncated: FRAME of \(n) bytes, \(bytes.count - pos) left", at: op)
                }
            case 0x5D:  // EMPTY_LIST
                stack.append(.list([]))
            case 0x28:  // MARK
                stack.append(.mark)
            case 0x4A:  // BININT: 4-byte signed
                pushInt(Int(Int32(bitPattern: UInt32(Self.unsigned(try take(4, for: "BININT", opcodeAt: op))))))
            case 0x4B:  // BININT1: 1-byte unsigned
                pushInt(Int(Self.unsigned(try take(1, for: "BININT1", opcodeAt: op))))
            case 0x4D:  // BININT2: 2-byte unsigned
                pushInt(Int(Self.unsigned(try take(2, for: "BININT2", opcodeAt: op))))
            case 0x8A, 0x8B:  // LONG1 / LONG4: length, then two's-complement little-endian
                let name = code == 0x8A ? "LONG1" : "LONG4"
                let n = Int(Self.unsigned(try take(code == 0x8A ? 1 : 4, for: name, opcodeAt: op)))
                let digits = try take(n, for: name, opcodeAt: op)
                guard n <= 8 else { throw fail("\(name) integer of \(n) bytes does not fit in 64 bits", at: op) }
                if n == 0 { pushInt(0); break }
                // Sign-extend to 64 bits.
                var raw = Self.unsigned(digits)
                if n < 8, let last = digits.last, last & 0x80 != 0 { raw |= ~0 << UInt64(8 * n) }
                pushInt(Int(Int64(bitPattern: raw)))
            case 0x49, 0x4C:  // INT / LONG (protocol 0): decimal text line
                let name = code == 0x49 ? "INT" : "LONG"
                var text = try line(opcodeAt: op)
                if code == 0x4C, text.hasSuffix("L") { text.removeLast() }
                if code == 0x49, text == "00" || text == "01" {
                    throw fail("INT \(text) is a bool, not an int", at: op)
                }
                guard let v = Int(text) else { throw fail("\(name) operand '\(text.prefix(40))' is not a 64-bit integer", at: op) }
                pushInt(v)
            case 0x6C:  // LIST (protocol 0): list from the items above the mark
                stack.append(.list(try popToMark(opcodeAt: op, name: "LIST")))
            case 0x65:  // APPENDS
                try appendToList(try popToMark(opcodeAt: op, name: "APPENDS"), opcodeAt: op, name: "APPENDS")
            case 0x61:  // APPEND
                guard case let .int(v) = stack.last else { throw fail("APPEND: item is not an int", at: op) }
                stack.removeLast()
                try appendToList([v], opcodeAt: op, name: "APPEND")
            case 0x71:  // BINPUT: memo index, 1 byte; the memo is never read back here.
                _ = try take(1, for: "BINPUT", opcodeAt: op)
            case 0x72:  // LONG_BINPUT
                _ = try take(4, for: "LONG_BINPUT", opcodeAt: op)
            case 0x70:  // PUT (protocol 0)
                _ = try line(opcodeAt: op)
            case 0x94:  // MEMOIZE: nothing to do, the memo is never read back.
                break
            case 0x2E:  // STOP
                guard stack.count == 1, case let .list(result) = stack[0] else {
                    throw fail("STOP: the pickle does not hold a single list of ints", at: op)
                }
                guard pos == bytes.count else {
                    throw fail("\(bytes.count - pos) bytes of trailing data after STOP", at: pos)
                }
                return result
            default:
                throw fail("unsupported pickle opcode \(Self.opcodeName(code)) (this reader handles lists of ints only)", at: op)
            }
        }
        throw fail("truncated: no STOP opcode", at: bytes.count)
    }

    static func opcodeName(_ code: UInt8) -> String {
        let names: [UInt8: String] = [
            0x63: "GLOBAL", 0x93: "STACK_GLOBAL", 0x52: "REDUCE", 0x62: "BUILD", 0x7D: "EMPTY_DICT",
            0x64: "DICT", 0x73: "SETITEM", 0x75: "SETITEMS", 0x29: "EMPTY_TUPLE", 0x74: "TUPLE",
            0x85: "TUPLE1", 0x86: "TUPLE2", 0x87: "TUPLE3", 0x47: "BINFLOAT", 0x46: "FLOAT",
            0x58: "BINUNICODE", 0x8C: "SHORT_BINUNICODE", 0x55: "SHORT_BINSTRING", 0x54: "BINSTRING",
            0x53: "STRING", 0x56: "UNICODE", 0x4E: "NONE", 0x88: "NEWTRUE", 0x89: "NEWFALSE",
            0x68: "BINGET", 0x6A: "LONG_BINGET", 0x67: "GET", 0x81: "NEWOBJ", 0x92: "NEWOBJ_EX",
            0x69: "INST", 0x6F: "OBJ", 0x8F: "EMPTY_SET", 0x90: "ADDITEMS", 0x91: "FROZENSET",
            0x42: "BINBYTES", 0x43: "SHORT_BINBYTES", 0x8E: "BINBYTES8", 0x96: "BYTEARRAY8",
            0x97: "NEXT_BUFFER", 0x98: "READONLY_BUFFER", 0x30: "POP", 0x31: "POP_MARK", 0x32: "DUP",
        ]
        let hex = "0x" + String(code, radix: 16, uppercase: true)
        return names[code].map { "\($0) (\(hex))" } ?? hex
    }
}
