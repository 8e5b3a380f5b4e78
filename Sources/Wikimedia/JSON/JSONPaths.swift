import Glibc
import LedeBasics

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

    /// Paths asked of many documents, prepared once: at most 64, each a list of object keys from the top.
    struct Query: Sendable {
        let paths: [[String]]
        /// The distinct member names the paths hold, one entry per name and depth, with the paths (bits) that name
        /// leads on: a member's name is compared once per entry at its depth, in place, with no key copied out and
        /// nothing counted (`Name` holds no reference; the names' bytes are one array).
        let names: [Name]
        let nameBytes: [UInt8]
        /// Per depth (0 up to the longest path's length): the paths that end there and where its names lie in `names`.
        let levels: [Level]

        struct Name {
            var depth: Int, start: Int32, count: Int32
            var paths: UInt64
        }

        struct Level {
            /// The paths (bits) that end at this depth: a value there is recorded for them.
            var ends: UInt64
            /// This depth's names in `names` (sorted by depth).
            var names: Range<Int>
        }

        init(_ paths: [[String]]) {
            precondition(paths.count <= 64, "a query holds at most 64 paths")
            self.paths = paths
            var names: [Name] = [], bytes: [UInt8] = []
            for (c, path) in paths.enumerated() {
                for (depth, key) in path.enumerated() {
                    let k = Array(key.utf8)
                    if let at = names.firstIndex(where: { $0.depth == depth && Array(bytes[Int($0.start)..<Int($0.start + $0.count)]) == k }) {
                        names[at].paths |= 1 << UInt64(c)
                    } else {
                        names.append(Name(depth: depth, start: Int32(bytes.count), count: Int32(k.count), paths: 1 << UInt64(c)))
                        bytes += k
                    }
                }
            }
            names.sort { $0.depth < $1.depth }
            levels = (0...(paths.map(\.count).max() ?? 0)).map { depth in
                Level(ends: paths.indices.reduce(0) { paths[$1].count == depth ? $0 | 1 << UInt64($1) : $0 },
                      names: (names.firstIndex { $0.depth >= depth } ?? names.count)..<(names.firstIndex { $0.depth > depth } ?? names.count))
            }
            self.names = names; nameBytes = bytes
        }

        /// Validates `bytes` and returns the value at each path (nil where there is none), by the query's index.
        func read(_ bytes: [UInt8]) throws -> Found {
            try bytes.withUnsafeBufferPointer { buffer in
                try names.withUnsafeBufferPointer { names in
                    try nameBytes.withUnsafeBufferPointer { nameBytes in
                        try levels.withUnsafeBufferPointer { levels in
                            var reader = Reader(bytes: buffer, names: names, nameBytes: nameBytes, levels: levels,
                                                found: Found(document: bytes, count: paths.count))
                            let all: UInt64 = paths.count == 64 ? ~0 : (1 << UInt64(paths.count)) - 1
                            reader.skipSpace()
                            try reader.value(candidates: all, depth: 0)
                            reader.skipSpace()
                            guard reader.i == buffer.count else { throw Malformed() }
                            return reader.found
                        }
                    }
                }
            }
        }
    }

    /// Validates `bytes` and returns the values at `paths` (object keys from the top), by path.
    static func values(_ bytes: [UInt8], at paths: [[String]]) throws -> [[String]: Value] {
        var out: [[String]: Value] = [:]
        for start in stride(from: 0, to: max(paths.count, 1), by: 64) {
            let query = Query(Array(paths[start..<min(paths.count, start + 64)]))
            let found = try query.read(bytes)
            for (i, k) in query.paths.enumerated() { if let v = found[i] { out[k] = v } }
        }
        return out
    }

    /// Where a value found lies in the document: its kind and its bytes (a string's between its quotes, escapes still in
    /// it; a number's as written). Holds no reference: recording one is a store, and dropping one costs nothing.
    struct Slot {
        var kind: Kind
        var start = 0, end = 0
        /// A string that holds an escape (unescaped when its text is asked for).
        var escaped = false
    }

    /// The values a query found, by path index: the first eight held in place (a query of the badge's size allocates
    /// nothing for them), any more in an array. Each is where it lies in the document; its text is made when asked for.
    struct Found {
        private let document: [UInt8]
        private var v0: Slot?, v1: Slot?, v2: Slot?, v3: Slot?, v4: Slot?, v5: Slot?, v6: Slot?, v7: Slot?
        private var more: [Slot?]

        init(document: [UInt8], count: Int) {
            self.document = document
            more = count > 8 ? Array(repeating: nil, count: count - 8) : []
        }

        /// The value at path `i`, its text made now (nil where there is none).
        subscript(i: Int) -> Value? {
            guard let s = slot(i) else { return nil }
            return value(s)
        }

        func slot(_ i: Int) -> Slot? {
            switch i {
            case 0: return v0
            case 1: return v1
            case 2: return v2
            case 3: return v3
            case 4: return v4
            case 5: return v5
            case 6: return v6
            case 7: return v7
            default: return more[i - 8]
            }
        }

        mutating func set(_ i: Int, _ slot: Slot) {
            switch i {
            case 0: v0 = slot
            case 1: v1 = slot
            case 2: v2 = slot
            case 3: v3 = slot
            case 4: v4 = slot
            case 5: v5 = slot
            case 6: v6 = slot
            case 7: v7 = slot
            default: more[i - 8] = slot
            }
        }

        /// A slot's value: a scalar's text from its bytes (a string unescaped; it was validated as it was read).
        private func value(_ s: Slot) -> Value {
            switch s.kind {
            case .object, .array, .null: return Value(kind: s.kind)
            case .bool: return Value(kind: .bool, text: s.end - s.start == 4 ? "true" : "false")
            case .string, .number:
                return document.withUnsafeBufferPointer { b in
                    if s.escaped {
                        var i = s.start - 1   // the opening quote
                        return Value(kind: s.kind, text: String(decoding: (try? Reader.string(b, &i)) ?? [], as: UTF8.self))
                    }
                    return Value(kind: s.kind, text: String(decoding: UnsafeBufferPointer(rebasing: b[s.start..<s.end]), as: UTF8.self))
                }
            }
        }
    }

    /// The readers, each also a static function over a buffer and an index (the tree decoder reads with them too).
    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        /// The query's names and levels (`Query`), borrowed for the read.
        let names: UnsafeBufferPointer<Query.Name>
        let nameBytes: UnsafeBufferPointer<UInt8>
        let levels: UnsafeBufferPointer<Query.Level>
        var i = 0
        var found: Found

        init(bytes: UnsafeBufferPointer<UInt8>, names: UnsafeBufferPointer<Query.Name>, nameBytes: UnsafeBufferPointer<UInt8>,
             levels: UnsafeBufferPointer<Query.Level>, found: Found) {
            self.bytes = bytes; self.names = names; self.nameBytes = nameBytes; self.levels = levels
            self.found = found
        }

        @inline(__always)
        mutating func skipSpace() { Reader.space(bytes, &i) }

        /// Past any whitespace at `i`. Compact JSON has none: the usual cost is one load and one comparison, the loop
        /// kept out of line.
        @inline(__always)
        static func space(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
            if i < b.count, b[i] <= 0x20 { spaceRun(b, &i) }
        }

        @inline(never)
        static func spaceRun(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
            while i < b.count {
                let c = b[i]
                guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
                i += 1
            }
        }

        /// The paths (bits) a value at this depth may be on or above; 0 when none (then it is only validated).
        @inline(__always)
        func ending(_ candidates: UInt64, at depth: Int) -> UInt64 {
            depth < levels.count ? candidates & levels[depth].ends : 0
        }

        /// The candidates whose key at `depth` is `name` (a member name, unescaped).
        func below(_ candidates: UInt64, depth: Int, name: UnsafeBufferPointer<UInt8>) -> UInt64 {
            guard depth < levels.count else { return 0 }
            for at in levels[depth].names {
                let n = names[at]
                guard Int(n.count) == name.count, n.paths & candidates != 0 else { continue }
                if name.isEmpty || memcmp(nameBytes.baseAddress! + Int(n.start), name.baseAddress!, name.count) == 0 { return candidates & n.paths }
            }
            return 0
        }

        mutating func record(_ ends: UInt64, _ slot: Slot) {
            var rest = ends
            while rest != 0 {
                let c = rest.trailingZeroBitCount
                rest &= rest - 1
                found.set(c, slot)
            }
        }

        /// `candidates`: the paths this value may lie on (bits of the query); none below an array.
        mutating func value(candidates: UInt64, depth: Int) throws {
            if candidates == 0 { return try skip(depth: depth) }
            guard depth < JSONPaths.maxDepth, i < bytes.count else { throw Malformed() }
            let ends = ending(candidates, at: depth)
            let deeper = candidates & ~ends
            let start = i
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1; skipSpace()
                if ends != 0 { record(ends, Slot(kind: .object)) }
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return }
                while true {
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw Malformed() }
                    var next: UInt64 = 0
                    if deeper != 0 {
                        // The name compared where it lies; unescaped into a copy only when it holds an escape.
                        let nameStart = i + 1
                        let escaped = try Reader.skipString(bytes, &i)
                        let raw = UnsafeBufferPointer(rebasing: bytes[nameStart..<(i - 1)])
                        if escaped {
                            i = nameStart - 1
                            let name = try string()
                            next = name.withUnsafeBufferPointer { below(deeper, depth: depth, name: $0) }
                        } else {
                            next = below(deeper, depth: depth, name: raw)
                        }
                    } else {
                        try skipString()
                    }
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw Malformed() }
                    i += 1; skipSpace()
                    try value(candidates: next, depth: depth + 1)
                    skipSpace()
                    guard i < bytes.count else { throw Malformed() }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    guard bytes[i] == UInt8(ascii: "}") else { throw Malformed() }
                    i += 1; return
                }
            case UInt8(ascii: "["):
                i += 1; skipSpace()
                if ends != 0 { record(ends, Slot(kind: .array)) }
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return }
                while true {
                    skipSpace()
                    try value(candidates: 0, depth: depth + 1)
                    skipSpace()
                    guard i < bytes.count else { throw Malformed() }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    guard bytes[i] == UInt8(ascii: "]") else { throw Malformed() }
                    i += 1; return
                }
            case UInt8(ascii: "\""):
                let escaped = try Reader.skipString(bytes, &i)
                if ends != 0 { record(ends, Slot(kind: .string, start: start + 1, end: i - 1, escaped: escaped)) }
            case UInt8(ascii: "t"): try literal("true"); if ends != 0 { record(ends, Slot(kind: .bool, start: start, end: i)) }
            case UInt8(ascii: "f"): try literal("false"); if ends != 0 { record(ends, Slot(kind: .bool, start: start, end: i)) }
            case UInt8(ascii: "n"): try literal("null"); if ends != 0 { record(ends, Slot(kind: .null)) }
            default:
                try number()
                if ends != 0 { record(ends, Slot(kind: .number, start: start, end: i)) }
            }
        }

        /// Validates the value at `i` (nesting `depth`) that no path asks about, as `value` would, without recursion
        /// or captures: the open containers are kept as bytes on the stack (1 object, 0 array), at most `maxDepth`.
        /// Most of a document is read here (the badge's answer is one number beside a whole notification), so the
        /// index is a local and the readers are static functions over the buffer (no write-back of `self.i` per byte).
        mutating func skip(depth: Int) throws {
            let room = JSONPaths.maxDepth - depth
            guard room > 0 else { throw Malformed() }
            let b = bytes, n = b.count
            var i = self.i
            defer { self.i = i }
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room) { open throws in
                var top = 0
                // Whether a member name comes first (after `{` or `,` in an object): read here, in the one loop, with
                // the value after it (no call per member).
                var named = false
                while true {
                    if named {
                        named = false
                        Reader.space(b, &i)
                        guard i < n, b[i] == UInt8(ascii: "\"") else { throw Malformed() }
                        try Reader.skipString(b, &i)
                        Reader.space(b, &i)
                        guard i < n, b[i] == UInt8(ascii: ":") else { throw Malformed() }
                        i += 1
                        Reader.space(b, &i)
                    }
                    // A value at nesting depth + top.
                    guard top < room, i < n else { throw Malformed() }
                    switch b[i] {
                    case UInt8(ascii: "\""): try Reader.skipString(b, &i)
                    case UInt8(ascii: "{"):
                        i += 1; Reader.space(b, &i)
                        if i < n, b[i] == UInt8(ascii: "}") { i += 1; break }
                        open[top] = 1; top += 1
                        named = true
                        continue
                    case UInt8(ascii: "["):
                        i += 1; Reader.space(b, &i)
                        if i < n, b[i] == UInt8(ascii: "]") { i += 1; break }
                        open[top] = 0; top += 1
                        continue
                    case UInt8(ascii: "t"): try Reader.literal(b, &i, "true")
                    case UInt8(ascii: "f"): try Reader.literal(b, &i, "false")
                    case UInt8(ascii: "n"): try Reader.literal(b, &i, "null")
                    default: try Reader.number(b, &i)
                    }
                    // After a value: close what ends here; then the next member or element, or done.
                    while true {
                        if top == 0 { return }
                        Reader.space(b, &i)
                        guard i < n else { throw Malformed() }
                        let c = b[i], inObject = open[top - 1] == 1
                        if c == UInt8(ascii: ",") {
                            i += 1
                            if inObject { named = true } else { Reader.space(b, &i) }
                            break
                        }
                        guard c == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { throw Malformed() }
                        i += 1; top -= 1
                    }
                }
            }
        }

        /// Validates the string at `i` (its opening quote) as `string` does, keeping nothing.
        mutating func skipString() throws { try Reader.skipString(bytes, &i) }

        /// Returns whether the string held an escape.
        @inline(__always) @discardableResult
        static func skipString(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) throws -> Bool {
            i += 1
            var escaped = false
            while true {
                var j = plainRunEnd(b, from: i)
                if j > b.count &- 8 {   // the document's last few bytes, one at a time
                    while j < b.count, b[j] >= 0x20, b[j] < 0x80, b[j] != UInt8(ascii: "\""), b[j] != UInt8(ascii: "\\") { j += 1 }
                }
                i = j
                guard i < b.count else { throw Malformed() }
                let c = b[i]
                if c == UInt8(ascii: "\"") { i += 1; return escaped }
                if c < 0x20 { throw Malformed() }
                if c >= 0x80 { try utf8Sequence(b, &i); continue }
                // An escape: each \uXXXX is valid on its own (a pair or not), the rest are one letter.
                escaped = true
                i += 1
                guard i < b.count else { throw Malformed() }
                switch b[i] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                     UInt8(ascii: "r"), UInt8(ascii: "t"):
                    i += 1
                case UInt8(ascii: "u"):
                    i += 1
                    _ = try hex4(b, &i)
                default: throw Malformed()
                }
            }
        }

        mutating func literal(_ word: StaticString) throws { try Reader.literal(bytes, &i, word) }

        @inline(__always)
        static func literal(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ word: StaticString) throws {
            let n = word.utf8CodeUnitCount
            guard i + n <= b.count, memcmp(b.baseAddress! + i, word.utf8Start, n) == 0 else { throw Malformed() }
            i += n
        }

        mutating func number() throws { try Reader.number(bytes, &i) }

        static func number(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) throws {
            let n = b.count
            @inline(__always) func digits(_ i: inout Int) -> Int { let s = i; while i < n, b[i] &- 48 < 10 { i += 1 }; return i - s }
            if i < n, b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < n else { throw Malformed() }
            if b[i] == UInt8(ascii: "0") { i += 1 } else { guard digits(&i) > 0 else { throw Malformed() } }
            guard i < n else { return }
            if b[i] == UInt8(ascii: ".") { i += 1; guard digits(&i) > 0 else { throw Malformed() } }
            if i < n, b[i] | 0x20 == UInt8(ascii: "e") {
                i += 1
                if i < n, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
                guard digits(&i) > 0 else { throw Malformed() }
            }
        }

        /// A string at `i` (the opening quote): valid UTF-8, no control characters, valid escapes; unescaped into the
        /// result (`skipString` checks one the same way and keeps nothing).
        mutating func string() throws -> [UInt8] { try Reader.string(bytes, &i) }

        static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int) throws -> [UInt8] {
            i += 1
            var out: [UInt8] = []
            while true {
                // A run of plain ASCII in a local index (no bounds check or store per byte), taken whole.
                var j = Reader.plainRunEnd(bytes, from: i)
                while j < bytes.count, bytes[j] >= 0x20, bytes[j] < 0x80, bytes[j] != UInt8(ascii: "\""), bytes[j] != UInt8(ascii: "\\") { j += 1 }
                if j > i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[i..<j])) }
                i = j
                guard i < bytes.count else { throw Malformed() }
                let c = bytes[i]
                if c == UInt8(ascii: "\"") { i += 1; return out }
                if c < 0x20 { throw Malformed() }
                if c >= 0x80 {
                    let start = i
                    try utf8Sequence(bytes, &i)
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
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
                    scalar = try hex4(bytes, &i)
                    if (0xD800..<0xDC00).contains(scalar), i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") {
                        // Paired only with a low surrogate; any other escape after it is valid JSON too (RFC 8259
                        // allows unpaired surrogates), read on its own, and this one is unpaired.
                        let next = i
                        i += 2
                        let low = try hex4(bytes, &i)
                        if (0xDC00..<0xE000).contains(low) { scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00) } else { i = next }
                    }
                default: throw Malformed()
                }
                // A lone surrogate becomes U+FFFD.
                out.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
            }
        }

        /// Where a run of plain string bytes (ASCII, not a control, quote or backslash) from `from` ends: eight bytes at
        /// a time (each test flags the lowest special byte of a word exactly), the last few of the document left to
        /// the byte loop after it.
        @inline(__always)
        static func plainRunEnd(_ bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
            guard let base = bytes.baseAddress else { return from }
            var j = from
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            let last = bytes.count &- 8   // a word from here on ends at or before the end
            while j <= last {
                let w = UnsafeRawPointer(base + j).loadUnaligned(as: UInt64.self)
                let quote = w ^ (ones &* 0x22), backslash = w ^ (ones &* 0x5C)
                let special = ((w &- ones &* 0x20) & ~w)                       // a byte below 0x20
                    | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
                    | w                                                       // a byte at or above 0x80
                let flagged = special & highs
                if flagged != 0 { return j &+ flagged.trailingZeroBitCount >> 3 }
                j &+= 8
            }
            return j
        }

        /// One multi-byte UTF-8 sequence at `i` (no overlongs, no surrogates, at most U+10FFFF).
        static func utf8Sequence(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int) throws {
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

        static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int) throws -> UInt32 {
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
