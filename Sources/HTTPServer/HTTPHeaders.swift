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
                member.append((b >= 65 && b <= 90) ? b | 0x20 : b)
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
                    let lx = (x[i] >= 65 && x[i] <= 90) ? x[i] | 0x20 : x[i]
                    let ly = (y[i] >= 65 && y[i] <= 90) ? y[i] | 0x20 : y[i]
                    if lx != ly { return false }
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
        String(decoding: self.utf8.map { ($0 >= 65 && $0 <= 90) ? $0 | 0x20 : $0 }, as: UTF8.self)
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
