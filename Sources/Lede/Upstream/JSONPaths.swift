/// A strict, allocation-light JSON reader for answers where Lede needs a few values out of a whole document
/// (the badge needs one number out of an Echo answer): it validates the entire document as RFC 8259 JSON,
/// and hands back only the values at the paths asked for. Nothing else is materialised.
enum JSONPaths {
    enum Kind: Equatable { case object, array, string, number, bool, null }

    /// A value found at a path: its kind, and its text for scalars (strings unescaped).
    struct Value: Equatable {
        var kind: Kind
        var text: String = ""

        /// An integer from a JSON number (integral) or a string holding one, as the lenient decoders read it.
        var lenientInt: Int? {
            switch kind {
            case .number: return Int(text) ?? Double(text).flatMap(LenientNumber.int)
            case .string: return LenientNumber.int(string: text)
            default: return nil
            }
        }
    }

    struct Malformed: Error {}

    static let maxDepth = 512

    /// Validates `bytes` and returns the values at `paths` (object keys from the top), by path.
    static func values(_ bytes: [UInt8], at paths: [[String]]) throws -> [[String]: Value] {
        try bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(bytes: buffer, wanted: paths.map { $0.map { Array($0.utf8) } })
            reader.skipSpace()
            try reader.value(path: [], depth: 0)
            reader.skipSpace()
            guard reader.i == buffer.count else { throw Malformed() }
            var out: [[String]: Value] = [:]
            for (k, v) in reader.found { out[k.map { String(decoding: $0, as: UTF8.self) }] = v }
            return out
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let wanted: [[[UInt8]]]
        var i = 0
        var found: [[[UInt8]]: Value] = [:]

        init(bytes: UnsafeBufferPointer<UInt8>, wanted: [[[UInt8]]]) { self.bytes = bytes; self.wanted = wanted }

        mutating func skipSpace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        }

        /// `path` is nil when no wanted path lies below this value (then it is only validated).
        mutating func value(path: [[UInt8]]?, depth: Int) throws {
            guard depth < JSONPaths.maxDepth, i < bytes.count else { throw Malformed() }
            let isWanted = path.map { p in wanted.contains(p) } ?? false
            let start = i
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1; skipSpace()
                if isWanted { found[path!] = Value(kind: .object) }
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return }
                while true {
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw Malformed() }
                    let key = try string(capture: path != nil)
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw Malformed() }
                    i += 1; skipSpace()
                    var below: [[UInt8]]? = nil
                    if let p = path {
                        let next = p + [key]
                        if wanted.contains(where: { $0.count >= next.count && Array($0.prefix(next.count)) == next }) { below = next }
                    }
                    try value(path: below, depth: depth + 1)
                    skipSpace()
                    guard i < bytes.count else { throw Malformed() }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    guard bytes[i] == UInt8(ascii: "}") else { throw Malformed() }
                    i += 1; return
                }
            case UInt8(ascii: "["):
                i += 1; skipSpace()
                if isWanted { found[path!] = Value(kind: .array) }
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return }
                while true {
                    skipSpace()
                    try value(path: nil, depth: depth + 1)
                    skipSpace()
                    guard i < bytes.count else { throw Malformed() }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    guard bytes[i] == UInt8(ascii: "]") else { throw Malformed() }
                    i += 1; return
                }
            case UInt8(ascii: "\""):
                let s = try string(capture: isWanted)
                if isWanted { found[path!] = Value(kind: .string, text: String(decoding: s, as: UTF8.self)) }
            case UInt8(ascii: "t"): try literal("true"); if isWanted { found[path!] = Value(kind: .bool, text: "true") }
            case UInt8(ascii: "f"): try literal("false"); if isWanted { found[path!] = Value(kind: .bool, text: "false") }
            case UInt8(ascii: "n"): try literal("null"); if isWanted { found[path!] = Value(kind: .null) }
            default:
                try number()
                if isWanted { found[path!] = Value(kind: .number, text: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)) }
            }
        }

        mutating func literal(_ word: StaticString) throws {
            let n = word.utf8CodeUnitCount
            guard i + n <= bytes.count else { throw Malformed() }
            for k in 0..<n where bytes[i + k] != word.utf8Start[k] { throw Malformed() }
            i += n
        }

        mutating func number() throws {
            func digits() -> Int { let s = i; while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }; return i - s }
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count else { throw Malformed() }
            if bytes[i] == UInt8(ascii: "0") { i += 1 } else { guard digits() > 0 else { throw Malformed() } }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") { i += 1; guard digits() > 0 else { throw Malformed() } }
            if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard digits() > 0 else { throw Malformed() }
            }
        }

        /// A string at `i` (the opening quote): valid UTF-8, no control characters, valid escapes. Unescaped
        /// into the result when `capture`; otherwise only checked (nothing allocated).
        mutating func string(capture: Bool = true) throws -> [UInt8] {
            i += 1
            var out: [UInt8] = []
            while true {
                guard i < bytes.count else { throw Malformed() }
                let c = bytes[i]
                if c == UInt8(ascii: "\"") { i += 1; return out }
                if c < 0x20 { throw Malformed() }
                if c < 0x80 && c != UInt8(ascii: "\\") { if capture { out.append(c) }; i += 1; continue }
                if c >= 0x80 {
                    let start = i
                    try utf8Sequence()
                    if capture { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i])) }
                    continue
                }
                // An escape.
                i += 1
                guard i < bytes.count else { throw Malformed() }
                let e = bytes[i]
                i += 1
                var scalar: UInt32
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalar = UInt32(e)
                case UInt8(ascii: "b"): scalar = 8
                case UInt8(ascii: "f"): scalar = 12
                case UInt8(ascii: "n"): scalar = 10
                case UInt8(ascii: "r"): scalar = 13
                case UInt8(ascii: "t"): scalar = 9
                case UInt8(ascii: "u"):
                    scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar), i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") {
                        // Paired only with a low surrogate; any other escape after it is valid JSON too (RFC 8259
                        // allows unpaired surrogates), read on its own, and this one is unpaired.
                        let next = i
                        i += 2
                        let low = try hex4()
                        if (0xDC00..<0xE000).contains(low) { scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00) } else { i = next }
                    }
                default: throw Malformed()
                }
                if capture {
                    // A lone surrogate becomes U+FFFD.
                    out.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
                }
            }
        }

        /// One multi-byte UTF-8 sequence at `i` (no overlongs, no surrogates, at most U+10FFFF).
        mutating func utf8Sequence() throws {
            let lead = bytes[i]
            let n: Int, low: UInt8, high: UInt8
            switch lead {
            case 0xC2...0xDF: n = 1; low = 0x80; high = 0xBF
            case 0xE0: n = 2; low = 0xA0; high = 0xBF
            case 0xE1...0xEC, 0xEE...0xEF: n = 2; low = 0x80; high = 0xBF
            case 0xED: n = 2; low = 0x80; high = 0x9F
            case 0xF0: n = 3; low = 0x90; high = 0xBF
            case 0xF1...0xF3: n = 3; low = 0x80; high = 0xBF
            case 0xF4: n = 3; low = 0x80; high = 0x8F
            default: throw Malformed()
            }
            guard i + n < bytes.count else { throw Malformed() }
            guard (low...high).contains(bytes[i + 1]) else { throw Malformed() }
            for k in 2..<(n + 1) where !(0x80...0xBF).contains(bytes[i + k]) { throw Malformed() }
            i += n + 1
        }

        mutating func hex4() throws -> UInt32 {
            guard i + 4 <= bytes.count else { throw Malformed() }
            var v: UInt32 = 0
            for _ in 0..<4 {
                // Each digit by its own byte range (folding case first would read control bytes 0x10–0x19 as digits).
                let c = bytes[i]
                let d: UInt32
                switch c {
                case 48...57: d = UInt32(c - 48)
                case 65...70: d = UInt32(c - 55)
                case 97...102: d = UInt32(c - 87)
                default: throw Malformed()
                }
                v = v * 16 + d; i += 1
            }
            return v
        }
    }
}
