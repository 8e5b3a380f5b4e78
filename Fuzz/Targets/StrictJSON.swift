@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
#if LEDE_FUZZ_TESTABLE
/// The fuzz targets' oracle for JSON: RFC 8259 read strictly into a tree, written independently of the readers it
/// judges (Foundation's JSONSerialization on Linux accepts `[1,2,]`, so it cannot be the reference). The document
/// must be valid UTF-8 as a whole (checked by the standard library, not by hand); outside strings the grammar is
/// ASCII. Nesting is limited like JSONPaths' (a value at depth 512 or deeper is refused).
indirect enum StrictJSON: Equatable {
    case object([(String, StrictJSON)])
    case array([StrictJSON])
    case string(String)
    /// A number's literal text.
    case number(String)
    case bool(Bool)
    case null

    static func == (a: StrictJSON, b: StrictJSON) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)): return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.array(let x), .array(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.null, .null): return true
        default: return false
        }
    }

    static let maxDepth = 512

    /// The document, or nil when it is not RFC 8259 JSON.
    static func parse(_ bytes: [UInt8]) -> StrictJSON? {
        guard String(validating: bytes, as: UTF8.self) != nil else { return nil }
        var p = Parser(b: bytes)
        p.space()
        guard let v = p.value(depth: 0) else { return nil }
        p.space()
        return p.i == bytes.count ? v : nil
    }

    /// The last value in document order at an object-key path (the streaming reader's rule for repeated keys).
    func at(_ path: ArraySlice<String>) -> StrictJSON? {
        guard let first = path.first else { return self }
        guard case .object(let members) = self else { return nil }
        for (k, v) in members.reversed() where k == first {
            if let found = v.at(path.dropFirst()) { return found }
        }
        return nil
    }

    struct Parser {
        let b: [UInt8]
        var i = 0

        mutating func space() { while i < b.count, [0x20, 0x09, 0x0A, 0x0D].contains(b[i]) { i += 1 } }

        mutating func eat(_ c: UInt8) -> Bool {
            if i < b.count, b[i] == c { i += 1; return true }
            return false
        }

        mutating func value(depth: Int) -> StrictJSON? {
            guard depth < StrictJSON.maxDepth, i < b.count else { return nil }
            switch b[i] {
            case 0x7B:   // {
                i += 1; space()
                var members: [(String, StrictJSON)] = []
                if eat(0x7D) { return .object(members) }
                repeat {
                    space()
                    guard i < b.count, b[i] == 0x22, let k = string() else { return nil }
                    space()
                    guard eat(0x3A) else { return nil }
                    space()
                    guard let v = value(depth: depth + 1) else { return nil }
                    members.append((k, v))
                    space()
                } while eat(0x2C)
                return eat(0x7D) ? .object(members) : nil
            case 0x5B:   // [
                i += 1; space()
                var items: [StrictJSON] = []
                if eat(0x5D) { return .array(items) }
                repeat {
                    space()
                    guard let v = value(depth: depth + 1) else { return nil }
                    items.append(v)
                    space()
                } while eat(0x2C)
                return eat(0x5D) ? .array(items) : nil
            case 0x22: return string().map(StrictJSON.string)
            case 0x74: return word("true") ? .bool(true) : nil
            case 0x66: return word("false") ? .bool(false) : nil
            case 0x6E: return word("null") ? .null : nil
            default: return number()
            }
        }

        mutating func word(_ w: String) -> Bool {
            let u = Array(w.utf8)
            guard i + u.count <= b.count, Array(b[i..<(i + u.count)]) == u else { return false }
            i += u.count
            return true
        }

        /// number = [ minus ] int [ frac ] [ exp ]
        mutating func number() -> StrictJSON? {
            let start = i
            func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
            _ = eat(0x2D)
            guard i < b.count, isDigit(b[i]) else { return nil }
            if b[i] == 0x30 { i += 1 } else { while i < b.count, isDigit(b[i]) { i += 1 } }
            if eat(0x2E) {
                guard i < b.count, isDigit(b[i]) else { return nil }
                while i < b.count, isDigit(b[i]) { i += 1 }
            }
            if i < b.count, b[i] == 0x65 || b[i] == 0x45 {
                i += 1
                if !eat(0x2B) { _ = eat(0x2D) }
                guard i < b.count, isDigit(b[i]) else { return nil }
                while i < b.count, isDigit(b[i]) { i += 1 }
            }
            return .number(String(decoding: b[start..<i], as: UTF8.self))
        }

        /// A string's value; escapes decoded, an unpaired surrogate escape read as U+FFFD.
        mutating func string() -> String? {
            guard eat(0x22) else { return nil }
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() {
                if !raw.isEmpty { scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars); raw.removeAll() }
            }
            while i < b.count {
                let c = b[i]
                if c == 0x22 { i += 1; flush(); return String(scalars) }
                if c < 0x20 { return nil }
                if c != 0x5C { raw.append(c); i += 1; continue }
                i += 1
                guard i < b.count else { return nil }
                let e = b[i]; i += 1
                flush()
                switch e {
                case 0x22, 0x5C, 0x2F: scalars.append(Unicode.Scalar(e))
                case 0x62: scalars.append("\u{08}")
                case 0x66: scalars.append("\u{0C}")
                case 0x6E: scalars.append("\n")
                case 0x72: scalars.append("\r")
                case 0x74: scalars.append("\t")
                case 0x75:
                    guard let u = hex() else { return nil }
                    if u >= 0xD800 && u < 0xDC00 {
                        // A high surrogate pairs only with an escaped low one right after it.
                        let save = i
                        if eat(0x5C), eat(0x75), let low = hex(), low >= 0xDC00 && low < 0xE000 {
                            scalars.append(Unicode.Scalar(0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00))!)
                        } else {
                            i = save
                            scalars.append("\u{FFFD}")
                        }
                    } else {
                        scalars.append(Unicode.Scalar(u) ?? "\u{FFFD}")
                    }
                default: return nil
                }
            }
            return nil
        }

        mutating func hex() -> UInt32? {
            guard i + 4 <= b.count else { return nil }
            var v: UInt32 = 0
            for _ in 0..<4 {
                guard let d = "0123456789abcdef".utf8.firstIndex(of: b[i] >= 0x41 && b[i] <= 0x46 ? b[i] + 0x20 : b[i]) else { return nil }
                v = v * 16 + UInt32("0123456789abcdef".utf8.distance(from: "0123456789abcdef".utf8.startIndex, to: d))
                i += 1
            }
            return v
        }
    }
}
#endif
