/// An ordered list of header fields with case-insensitive lookup. Names keep the case they were sent with.
public struct HTTPHeaders: Sequence, Sendable, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}
    public init(_ fields: [(String, String)]) { self.fields = fields.map { (name: $0.0, value: $0.1) } }
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    public var count: Int { fields.count }
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// The first value of `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        for f in fields where f.name.asciiCaseInsensitiveEquals(name) { return f.value }
        return nil
    }

    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.asciiCaseInsensitiveEquals(name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }

    mutating func reserveCapacity(_ n: Int) { fields.reserveCapacity(n) }
    mutating func removeAllKeepingCapacity() { fields.removeAll(keepingCapacity: true) }

    /// Replaces every field called `name` by one with `value`.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    public mutating func remove(_ name: String) { fields.removeAll { $0.name.asciiCaseInsensitiveEquals(name) } }

    /// Comma-separated list members of every field called `name`, trimmed, lower-cased, empty members dropped.
    public func tokens(_ name: String) -> [String] {
        var out: [String] = []
        for f in fields where f.name.asciiCaseInsensitiveEquals(name) {
            var member: [UInt8] = []
            func flush() {
                while let l = member.last, l == 32 || l == 9 { member.removeLast() }
                if !member.isEmpty { out.append(String(decoding: member, as: UTF8.self)) }
                member.removeAll(keepingCapacity: true)
            }
            for b in f.value.utf8 {
                if b == 44 { flush(); continue }
                if member.isEmpty && (b == 32 || b == 9) { continue }
                member.append(ASCII.lower(b))
            }
            flush()
        }
        return out
    }
}

extension String {
    /// ASCII case-insensitive equality over contiguous UTF-8 (header names are ASCII).
    func asciiCaseInsensitiveEquals(_ other: String) -> Bool {
        if self == other { return true }
        guard self.utf8.count == other.utf8.count else { return false }
        var a = self, b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                for i in 0..<x.count where x[i] != y[i] {
                    if ASCII.lower(x[i]) != ASCII.lower(y[i]) { return false }
                }
                return true
            }
        }
    }
}

extension Substring {
    func asciiCaseInsensitiveEquals(_ other: String) -> Bool { String(self).asciiCaseInsensitiveEquals(other) }
}

extension StringProtocol {
    func lowercasedASCII() -> String {
        String(decoding: self.utf8.map(ASCII.lower), as: UTF8.self)
    }

    /// Drops leading and trailing spaces and horizontal tabs (HTTP's optional whitespace).
    func trimmingOWS() -> Substring {
        let s = Substring(self)
        let u = s.utf8
        var a = u.startIndex, b = u.endIndex
        while a < b, u[a] == 32 || u[a] == 9 { a = u.index(after: a) }
        while b > a, u[u.index(before: b)] == 32 || u[u.index(before: b)] == 9 { b = u.index(before: b) }
        return Substring(u[a..<b])
    }
}

/// ASCII case folding over bytes: HTTP field names, tokens and codings are case-insensitive ASCII.
public enum ASCII {
    @inline(__always)
    public static func lower(_ b: UInt8) -> UInt8 { b >= 65 && b <= 90 ? b | 0x20 : b }

    /// Whether `bytes`, case-folded, spell `lower` (written in lower case).
    @inline(__always)
    public static func equalsLowercase(_ bytes: UnsafeBufferPointer<UInt8>, _ lower: StaticString) -> Bool {
        guard bytes.count == lower.utf8CodeUnitCount else { return false }
        let l = lower.utf8Start
        for i in 0..<bytes.count where ASCII.lower(bytes[i]) != l[i] { return false }
        return true
    }
}

/// A comma-separated list with weights (`Accept-Encoding`, `Accept-Language`), read over bytes with no allocation:
/// each member's first token and its q-value in thousandths — 1000 when absent, nil when malformed.
public enum WeightedList {
    /// Calls `body` for each non-empty member, in order, until it returns false.
    public static func forEach(_ value: String, _ body: (UnsafeBufferPointer<UInt8>, Int?) -> Bool) {
        var value = value
        value.withUTF8 { u in
            var i = 0
            while i < u.count {
                // One member: OWS token *( OWS ";" OWS param ) OWS
                while i < u.count, u[i] == 32 || u[i] == 9 || u[i] == 44 { i += 1 }
                let start = i
                while i < u.count, u[i] != 44, u[i] != 59, u[i] != 32, u[i] != 9 { i += 1 }
                let token = UnsafeBufferPointer(rebasing: u[start..<i])
                var q: Int? = 1000
                while i < u.count, u[i] != 44 {
                    guard u[i] == 59 else { i += 1; continue }
                    i += 1
                    while i < u.count, u[i] == 32 || u[i] == 9 { i += 1 }
                    if i + 1 < u.count, ASCII.lower(u[i]) == 113, u[i + 1] == 61 {   // q=
                        i += 2
                        let valueStart = i
                        while i < u.count, u[i] != 44, u[i] != 59, u[i] != 32, u[i] != 9 { i += 1 }
                        q = qValue(UnsafeBufferPointer(rebasing: u[valueStart..<i]))
                    }
                }
                if !token.isEmpty, !body(token, q) { return }
            }
        }
    }

    /// RFC 9110 qvalue (`0`, `0.5`, `1.000`) in thousandths, at most 1000. A zero written with extra zeros is
    /// still zero; anything else that is not a qvalue is nil.
    static func qValue(_ v: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let first = v.first else { return nil }
        if first == 48 && v.allSatisfy({ $0 == 48 || $0 == 46 }) { return 0 }
        guard first == 48 || first == 49 else { return nil }
        var value = Int(first - 48) * 1000
        if v.count == 1 { return value }
        guard v[1] == 46, v.count <= 5 else { return nil }
        var scale = 100
        for d in v.dropFirst(2) {
            guard d >= 48 && d <= 57 else { return nil }
            value += Int(d - 48) * scale
            scale /= 10
        }
        return min(value, 1000)
    }
}

/// Proactive negotiation between two media types on `Accept` (RFC 9110 §12.5.1): the more specific range wins for
/// each type (`type/subtype` over `type/*` over `*/*`); no `Accept` accepts everything.
public enum MediaNegotiation {
    /// The weight (thousandths) `Accept` gives `mediaType` (lower-case `type/subtype`).
    public static func weight(of mediaType: String, in headers: HTTPHeaders) -> Int {
        let fields = headers.fields.filter { $0.name.asciiCaseInsensitiveEquals("Accept") }
        if fields.isEmpty { return 1000 }
        let type = mediaType.split(separator: "/").first.map(String.init) ?? mediaType
        var exact: Int?, typeWide: Int?, any: Int?
        for f in fields {
            WeightedList.forEach(f.value) { range, q in
                let r = String(decoding: range.map(ASCII.lower), as: UTF8.self)
                let w = q ?? 0
                if r == mediaType { exact = max(exact ?? 0, w) }
                else if r == type + "/*" { typeWide = max(typeWide ?? 0, w) }
                else if r == "*/*" { any = max(any ?? 0, w) }
                return true
            }
        }
        return exact ?? typeWide ?? any ?? 0
    }

    /// Whether `Accept` asks for `preferred` rather than `fallback`: `preferred` weighs more (a tie keeps the fallback).
    public static func prefers(_ preferred: String, over fallback: String, in headers: HTTPHeaders) -> Bool {
        let p = weight(of: preferred, in: headers)
        return p > 0 && p > weight(of: fallback, in: headers)
    }
}
