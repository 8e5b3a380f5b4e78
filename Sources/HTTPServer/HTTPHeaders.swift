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

    /// Replaces every field called `name` by one with `value`.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    public mutating func remove(_ name: String) { fields.removeAll { $0.name.asciiCaseInsensitiveEquals(name) } }

    /// Comma-separated list members of every field called `name`, trimmed, lower-cased, empty members dropped.
    public func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }
            .map { $0.trimmingOWS().lowercasedASCII() }
            .filter { !$0.isEmpty }
    }
}

extension StringProtocol {
    func asciiCaseInsensitiveEquals(_ other: String) -> Bool {
        let a = self.utf8, b = other.utf8
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) where x != y {
            let lx = (x >= 65 && x <= 90) ? x | 0x20 : x
            let ly = (y >= 65 && y <= 90) ? y | 0x20 : y
            if lx != ly { return false }
        }
        return true
    }

    func lowercasedASCII() -> String {
        String(decoding: self.utf8.map { ($0 >= 65 && $0 <= 90) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Drops leading and trailing spaces and horizontal tabs (HTTP's optional whitespace).
    func trimmingOWS() -> Substring {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}
