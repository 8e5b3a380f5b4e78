import HTTPServer
import LedeBasics

/// The article screen's languages in one reader's order, made from the one answer shared by every reader of the
/// article: the shared answer lists the editions in the picker's own order (by autonym), and a reader whose
/// `Accept-Language` names some of them gets those first, in their order — the items' bytes moved, nothing encoded
/// again. So the shared cache holds one answer per edition, variant and title however many orders readers send
/// (issue 68: random orders used to be a new entry, and a new upstream fan-out, each).
struct EditionOrder: Sendable {
    /// Where the `languages` part's items sit in the answer: the bytes between its `[` and `]`, and each item.
    let list: Range<Int>
    let items: [Range<Int>]
    /// Each item's edition, in the same order.
    let codes: [String]

    /// The items of `bytes`' `languages.items` (an object's member `languages`, an object whose `items` is an array),
    /// when there are as many as `codes`; nil for a placeholder or any other shape.
    init?(_ bytes: [UInt8], codes: [String]) {
        guard !codes.isEmpty, let whole = JSONSpans.value(bytes, at: 0), bytes[whole.lowerBound] == UInt8(ascii: "{"),
              let part = JSONSpans.member(bytes, "languages", of: whole), bytes[part.lowerBound] == UInt8(ascii: "{"),
              let array = JSONSpans.member(bytes, "items", of: part), bytes[array.lowerBound] == UInt8(ascii: "["),
              let items = JSONSpans.elements(bytes, of: array), items.count == codes.count else { return nil }
        list = (array.lowerBound + 1)..<(array.upperBound - 1)
        self.items = items
        self.codes = codes
    }

    /// The editions of `preferred` (most preferred first) this answer lists, its own edition left out: what a
    /// reader's order changes. Empty: the shared order is theirs.
    func relevant(_ preferred: [String], own: String) -> [String] {
        var out: [String] = []
        for p in preferred where p != own && !out.contains(p) && codes.contains(p) { out.append(p) }
        return out
    }

    /// `bytes` with the `relevant` editions first, in that order, then the rest in the shared order.
    func reordered(_ bytes: [UInt8], relevant: [String]) -> [UInt8] {
        var order: [Int] = relevant.compactMap { codes.firstIndex(of: $0) }
        for i in codes.indices where !order.contains(i) { order.append(i) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        out.append(contentsOf: bytes[..<list.lowerBound])
        for (n, i) in order.enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: bytes[items[i]])
        }
        out.append(contentsOf: bytes[list.upperBound...])
        return out
    }
}

/// Spans of values in JSON text Lede wrote itself (well-formed, so the walk needs no validation): a value's extent,
/// an object's member, an array's elements.
enum JSONSpans {
    @inline(__always) static func isSpace(_ b: UInt8) -> Bool { b == 32 || b == 10 || b == 13 || b == 9 }

    static func skipSpace(_ b: [UInt8], _ i: Int) -> Int {
        var i = i
        while i < b.count, isSpace(b[i]) { i += 1 }
        return i
    }

    /// The value starting at (or after spaces from) `i`: its range; nil past the end or for text cut short.
    static func value(_ b: [UInt8], at start: Int) -> Range<Int>? {
        let i = skipSpace(b, start)
        guard i < b.count else { return nil }
        switch b[i] {
        case UInt8(ascii: "\""):
            guard let end = stringEnd(b, i) else { return nil }
            return i..<end
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0, j = i
            while j < b.count {
                switch b[j] {
                case UInt8(ascii: "\""):
                    guard let end = stringEnd(b, j) else { return nil }
                    j = end; continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i..<(j + 1) }
                default: break
                }
                j += 1
            }
            return nil
        default:
            var j = i
            while j < b.count, b[j] != UInt8(ascii: ","), b[j] != UInt8(ascii: "}"), b[j] != UInt8(ascii: "]"), !isSpace(b[j]) { j += 1 }
            return i..<j
        }
    }

    /// The index past the string starting with the quote at `i`.
    static func stringEnd(_ b: [UInt8], _ i: Int) -> Int? {
        var j = i + 1
        while j < b.count {
            if b[j] == UInt8(ascii: "\\") { j += 2; continue }
            if b[j] == UInt8(ascii: "\"") { return j + 1 }
            j += 1
        }
        return nil
    }

    /// The value of `object`'s (a `{…}` range) member `name`.
    static func member(_ b: [UInt8], _ name: String, of object: Range<Int>) -> Range<Int>? {
        let key = Array("\"\(name)\"".utf8)
        var i = object.lowerBound + 1
        while true {
            i = skipSpace(b, i)
            guard i < object.upperBound - 1, let k = value(b, at: i) else { return nil }
            i = skipSpace(b, k.upperBound)
            guard i < b.count, b[i] == UInt8(ascii: ":"), let v = value(b, at: i + 1) else { return nil }
            if b[k].elementsEqual(key) { return v }
            i = skipSpace(b, v.upperBound)
            guard i < b.count, b[i] == UInt8(ascii: ",") else { return nil }
            i += 1
        }
    }

    /// The elements of `array` (a `[…]` range).
    static func elements(_ b: [UInt8], of array: Range<Int>) -> [Range<Int>]? {
        var out: [Range<Int>] = []
        var i = skipSpace(b, array.lowerBound + 1)
        if i == array.upperBound - 1 { return out }
        while true {
            guard let v = value(b, at: i) else { return nil }
            out.append(v)
            i = skipSpace(b, v.upperBound)
            guard i < array.upperBound - 1 else { return out }
            guard b[i] == UInt8(ascii: ",") else { return nil }
            i += 1
        }
    }
}
