import Foundation
import LedeBasics

/// The decoder of upstream answers: the document read once, strictly (RFC 8259, nesting at most `JSONPaths.maxDepth`,
/// the readers `JSONPaths` validates with), into a flat tree of values; the models' `Decodable` code then reads the
/// tree through `Decoder`. It gives those models what Foundation's `JSONDecoder` gives them — the same values, and an
/// error where it throws one (a missing key, null for a value, another type, a number out of range or not whole) — at
/// a fraction of its cost: `JSONDecoder` took 254k instructions for a one-notification Echo answer.
/// Request bodies are read by it too: the same strict, fuzzed reader on both sides.
public struct UpstreamJSONDecoder {
    public var userInfo: [CodingUserInfoKey: Any] = [:]

    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let tree = try JSONTree(bytes, userInfo: userInfo)
        return try T(from: TreeDecoder(tree: tree, index: 0))
    }
}

/// A JSON document as values in document order (a node each, its text and its member name beside it: no enum payload
/// copied to ask a value's kind): a container's members follow it, and it records where they end. Read once, then
/// only read from.
final class JSONTree {
    enum Kind: UInt8 { case null, `false`, `true`, number, string, array, object }

    /// A value: its kind; the index after it and its descendants; a container's members or elements; its container
    /// (-1 for the document) and its place among that container's values — a `codingPath` is made from those when
    /// asked for, in steps of the nesting, with nothing kept per decoder.
    struct Node {
        var kind: Kind
        var end: Int32
        var count: Int32
        var parent: Int32
        var position: Int32
    }

    let nodes: [Node]
    /// A string's value, or a number's text as sent ("" for the others).
    let texts: [String]
    /// The member name of each value that is an object's member ("" for the others).
    let keys: [String]
    let userInfo: [CodingUserInfoKey: Any]

    init(_ bytes: [UInt8], userInfo: [CodingUserInfoKey: Any]) throws {
        var nodes: [Node] = [], texts: [String] = [], keys: [String] = []
        // Room for as many values as the separators allow (each value but the first follows a `,`, `:` or `[`),
        // up to 4,096: one allocation an array for an answer of usual size.
        var room = 1
        for c in bytes where c == UInt8(ascii: ",") || c == UInt8(ascii: ":") || c == UInt8(ascii: "[") { room += 1 }
        room = min(room, 4096)
        nodes.reserveCapacity(room); texts.reserveCapacity(room); keys.reserveCapacity(room)
        try bytes.withUnsafeBufferPointer { b in
            // The open containers, innermost last: their index and whether they are objects (members so far: their count).
            var open: [(index: Int, object: Bool)] = []
            var i = 0
            var key = ""
            var named = false
            while true {
                JSONPaths.Reader.space(b, &i)
                if named {
                    guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw JSONPaths.Malformed() }
                    key = try JSONTree.string(b, &i)
                    JSONPaths.Reader.space(b, &i)
                    guard i < b.count, b[i] == UInt8(ascii: ":") else { throw JSONPaths.Malformed() }
                    i += 1
                    JSONPaths.Reader.space(b, &i)
                    named = false
                }
                guard i < b.count else { throw JSONPaths.Malformed() }
                let start = i, index = nodes.count
                let parent = open.last?.index ?? -1
                keys.append(key); key = ""
                nodes.append(Node(kind: .null, end: Int32(index + 1), count: 0, parent: Int32(parent),
                                  position: parent < 0 ? 0 : nodes[parent].count))
                switch b[i] {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let object = b[i] == UInt8(ascii: "{")
                    guard open.count < JSONPaths.maxDepth else { throw JSONPaths.Malformed() }
                    nodes[index].kind = object ? .object : .array
                    texts.append("")
                    i += 1
                    JSONPaths.Reader.space(b, &i)
                    if i < b.count, b[i] == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        i += 1
                    } else {
                        open.append((index, object))
                        named = object
                        continue
                    }
                case UInt8(ascii: "\""):
                    nodes[index].kind = .string; texts.append(try JSONTree.string(b, &i))
                case UInt8(ascii: "t"): try JSONPaths.Reader.literal(b, &i, "true"); nodes[index].kind = .true; texts.append("")
                case UInt8(ascii: "f"): try JSONPaths.Reader.literal(b, &i, "false"); nodes[index].kind = .false; texts.append("")
                case UInt8(ascii: "n"): try JSONPaths.Reader.literal(b, &i, "null"); texts.append("")
                default:
                    try JSONPaths.Reader.number(b, &i)
                    nodes[index].kind = .number
                    texts.append(String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self))
                }
                // After a value: it counts in its container; then the next member or element, or the container's end.
                while let top = open.last {
                    nodes[top.index].count += 1
                    JSONPaths.Reader.space(b, &i)
                    guard i < b.count else { throw JSONPaths.Malformed() }
                    if b[i] == UInt8(ascii: ",") {
                        i += 1
                        named = top.object
                        break
                    }
                    guard b[i] == (top.object ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { throw JSONPaths.Malformed() }
                    i += 1
                    open.removeLast()
                    nodes[top.index].end = Int32(nodes.count)
                }
                if open.isEmpty { break }
            }
            JSONPaths.Reader.space(b, &i)
            guard i == b.count else { throw JSONPaths.Malformed() }
        }
        self.nodes = nodes; self.texts = texts; self.keys = keys; self.userInfo = userInfo
    }

    /// The string at `i` (its opening quote), validated: made from its bytes in place when it holds no escape.
    static func string(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) throws -> String {
        let start = i
        try JSONPaths.Reader.skipString(b, &i)
        let raw = UnsafeBufferPointer(rebasing: b[(start + 1)..<(i - 1)])
        if raw.isEmpty { return "" }
        if memchr(raw.baseAddress!, Int32(UInt8(ascii: "\\")), raw.count) == nil { return String(decoding: raw, as: UTF8.self) }
        var j = start
        return String(decoding: try JSONPaths.Reader.string(b, &j), as: UTF8.self)
    }

    /// The keys from the document to value `i`.
    func codingPath(_ i: Int) -> [any CodingKey] {
        var out: [any CodingKey] = []
        var v = i
        while nodes[v].parent >= 0 {
            let p = Int(nodes[v].parent)
            out.append(nodes[p].kind == .object ? AnyCodingKey(stringValue: keys[v])! as any CodingKey : TreeIndexKey(Int(nodes[v].position)))
            v = p
        }
        return out.reversed()
    }

    func describe(_ i: Int) -> String {
        switch nodes[i].kind {
        case .null: return "null"
        case .true, .false: return "a boolean"
        case .number: return "the number \(texts[i])"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// An index key, as in an unkeyed container's `codingPath`.
struct TreeIndexKey: CodingKey {
    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { index = intValue }
}

/// The decoder of one value of a tree: two words, so handing it on as `any Decoder` allocates nothing.
struct TreeDecoder: Decoder {
    let tree: JSONTree
    let index: Int

    var codingPath: [any CodingKey] { tree.codingPath(index) }
    var userInfo: [CodingUserInfoKey: Any] { tree.userInfo }
    var kind: JSONTree.Kind { tree.nodes[index].kind }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard kind == .object else { throw mismatch([String: Any].self) }
        return KeyedDecodingContainer(TreeKeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard kind == .array else { throw mismatch([Any].self) }
        return TreeUnkeyedContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { TreeSingleValue(decoder: self) }

    /// The errors say what was found, not the type's name: lenient reads throw and catch them by the dozen an answer,
    /// and a type's name is a demangling each time (2–3k instructions).
    func mismatch(_ type: Any.Type) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "Another type was expected; found \(tree.describe(index))."))
    }

    // MARK: Scalars, as JSONDecoder reads them

    var isNull: Bool { kind == .null }

    func bool() throws -> Bool {
        switch kind {
        case .true: return true
        case .false: return false
        case .null: throw valueNotFound(Bool.self)
        default: throw mismatch(Bool.self)
        }
    }

    func string() throws -> String {
        switch kind {
        case .string: return tree.texts[index]
        case .null: throw valueNotFound(String.self)
        default: throw mismatch(String.self)
        }
    }

    func numberText<T>(_ type: T.Type) throws -> String {
        switch kind {
        case .number: return tree.texts[index]
        case .null: throw valueNotFound(type)
        default: throw mismatch(type)
        }
    }

    func double() throws -> Double {
        let text = try numberText(Double.self)
        guard let d = Double(text), d.isFinite else { throw notRepresentable(text, Double.self) }
        return d
    }

    func float() throws -> Float {
        let text = try numberText(Float.self)
        guard let f = Float(text), f.isFinite else { throw notRepresentable(text, Float.self) }
        return f
    }

    /// A whole number: its digits read exactly, or (with a fraction or an exponent) its value when whole and in range.
    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let text = try numberText(type)
        if let v = T(text) { return v }
        if let d = Double(text), d.isFinite, d == d.rounded(.towardZero), let v = T(exactly: d) { return v }
        throw notRepresentable(text, type)
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // The scalar types by the rules above; any other type reads itself from this decoder.
        if T.self == String.self { return try string() as! T }
        if T.self == Int.self { return try integer(Int.self) as! T }
        if T.self == Double.self { return try double() as! T }
        if T.self == Bool.self { return try bool() as! T }
        // JSONDecoder reads a URL from a string (its own Codable form is an object); a model may hold one.
        if T.self == URL.self {
            let text = try string()
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Invalid URL string."))
            }
            return url as! T
        }
        return try T(from: self)
    }

    func valueNotFound(_ type: Any.Type) -> DecodingError {
        .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "A value was expected; found null."))
    }

    func notRepresentable(_ text: String, _ type: Any.Type) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath, debugDescription: "The number \(text) does not fit the type asked for."))
    }
}

struct TreeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: TreeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    private var tree: JSONTree { decoder.tree }

    /// The value of member `name`: the first one so named (members are looked up in place, no table made).
    private func find(_ name: String) -> Int? {
        let end = Int(tree.nodes[decoder.index].end)
        var i = decoder.index + 1
        while i < end {
            if tree.keys[i] == name { return i }
            i = Int(tree.nodes[i].end)
        }
        return nil
    }

    var allKeys: [Key] {
        let end = Int(tree.nodes[decoder.index].end)
        var out: [Key] = []
        out.reserveCapacity(Int(tree.nodes[decoder.index].count))
        var i = decoder.index + 1
        while i < end {
            if let k = Key(stringValue: tree.keys[i]) { out.append(k) }
            i = Int(tree.nodes[i].end)
        }
        return out
    }

    func contains(_ key: Key) -> Bool { find(key.stringValue) != nil }

    private func value(_ key: Key) throws -> TreeDecoder {
        guard let i = find(key.stringValue) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value for the key \(key.stringValue)."))
        }
        return TreeDecoder(tree: tree, index: i)
    }

    /// A present, non-null member (nil for a missing key or null: `decodeIfPresent`'s rule, one lookup).
    private func present(_ key: Key) -> TreeDecoder? {
        guard let i = find(key.stringValue), tree.nodes[i].kind != .null else { return nil }
        return TreeDecoder(tree: tree, index: i)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key).isNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(key).bool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(key).string() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(key).double() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(key).float() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(key).integer(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(key).integer(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(key).integer(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(key).integer(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(key).integer(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(key).integer(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(key).integer(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(key).integer(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(key).integer(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(key).integer(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try value(key).decode(type) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try present(key)?.bool() }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try present(key)?.string() }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try present(key)?.double() }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try present(key)?.integer(type) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try present(key)?.decode(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try value(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try value(key).unkeyedContainer() }

    /// The member named `super`, as JSONDecoder reads it.
    func superDecoder() throws -> any Decoder {
        guard let i = find("super") else {
            throw DecodingError.keyNotFound(AnyCodingKey(stringValue: "super")!, .init(codingPath: codingPath, debugDescription: "No value for the key super."))
        }
        return TreeDecoder(tree: tree, index: i)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try value(key) }
}

struct TreeUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: TreeDecoder
    /// The tree index of the element at `currentIndex`.
    private var position: Int
    private(set) var currentIndex = 0

    init(decoder: TreeDecoder) {
        self.decoder = decoder
        position = decoder.index + 1
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { Int(decoder.tree.nodes[decoder.index].count) }
    var isAtEnd: Bool { position >= Int(decoder.tree.nodes[decoder.index].end) }

    /// The element at `currentIndex`; the position moves on only once it was read.
    private func current(_ type: Any.Type) throws -> TreeDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [TreeIndexKey(currentIndex)], debugDescription: "Unkeyed container is at end."))
        }
        return TreeDecoder(tree: decoder.tree, index: position)
    }

    private mutating func advance() {
        position = Int(decoder.tree.nodes[position].end)
        currentIndex += 1
    }

    private mutating func read<T>(_ type: T.Type, _ body: (TreeDecoder) throws -> T) throws -> T {
        let v = try body(try current(type))
        advance()
        return v
    }

    mutating func decodeNil() throws -> Bool {
        guard try current(Never.self).isNull else { return false }
        advance()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try read(type) { try $0.bool() } }
    mutating func decode(_ type: String.Type) throws -> String { try read(type) { try $0.string() } }
    mutating func decode(_ type: Double.Type) throws -> Double { try read(type) { try $0.double() } }
    mutating func decode(_ type: Float.Type) throws -> Float { try read(type) { try $0.float() } }
    mutating func decode(_ type: Int.Type) throws -> Int { try read(type) { try $0.integer(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try read(type) { try $0.integer(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try read(type) { try $0.integer(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try read(type) { try $0.integer(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try read(type) { try $0.integer(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try read(type) { try $0.integer(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try read(type) { try $0.integer(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try read(type) { try $0.integer(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try read(type) { try $0.integer(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try read(type) { try $0.integer(type) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try read(type) { try $0.decode(type) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try read(KeyedDecodingContainer<NestedKey>.self) { try $0.container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try read((any UnkeyedDecodingContainer).self) { try $0.unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder { try read(TreeDecoder.self) { $0 } }
}

struct TreeSingleValue: SingleValueDecodingContainer {
    let decoder: TreeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool() }
    func decode(_ type: String.Type) throws -> String { try decoder.string() }
    func decode(_ type: Double.Type) throws -> Double { try decoder.double() }
    func decode(_ type: Float.Type) throws -> Float { try decoder.float() }
    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(type) }
}
