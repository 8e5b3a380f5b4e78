import Foundation
import Synchronization
import LedeBasics

// Reading what Wikimedia really sends: lenient where it costs nothing, strict where Lede cannot answer without
// the field.
// - An optional field of an unexpected type (`[]` where an object belongs, a string where a number does, `""`
//   for a boolean) counts as absent.
// - Numbers Lede needs (ids, timestamps, counts) are read from JSON numbers or from strings holding one
//   (`formatversion=1`, Echo before 2019-12).
// - One unreadable item in a list is skipped and counted (`SkippedItems`), never failing the list.

/// Counts list items skipped while decoding one answer, by kind. Handed to the decoder through `userInfo`
/// (one instance per decode; the counts behind a mutex, so it is `Sendable` as `userInfo` requires).
final class SkippedItems: Sendable {
    static let key = CodingUserInfoKey(rawValue: "lede.skippedItems")!
    /// The kind that lists of upstream pages count under (the call's kind: `related`, `nearby`, `search`, …).
    let pagesKind: String
    private let table = Mutex<[String: Int]>([:])
    var counts: [String: Int] { table.withLock { $0 } }
    init(pagesKind: String) { self.pagesKind = pagesKind }
    func add(_ kind: String, _ n: Int) { if n > 0 { table.withLock { $0[kind, default: 0] += n } } }
}

extension Decoder {
    var skippedItems: SkippedItems? { userInfo[SkippedItems.key] as? SkippedItems }
}

/// A key read from the data (captions by language, `pageprops` names).
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Decodes to nil instead of throwing: one element of a lossy list.
struct Lossy<T: Decodable>: Decodable {
    var value: T?
    init(from decoder: Decoder) throws { value = try? T(from: decoder) }
}

extension KeyedDecodingContainer {
    /// The value, or nil when the key is missing, null, or of another type.
    func lenient<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        (try? decodeIfPresent(T.self, forKey: key)) ?? nil
    }

    /// A string; a non-empty one only when `nonEmpty` (an empty description is no description).
    func lenientString(_ key: Key, nonEmpty: Bool = false) -> String? {
        guard let s = lenient(String.self, key) else { return nil }
        return nonEmpty && s.isEmpty ? nil : s
    }

    /// A whole number from a JSON number (integral) or from a string holding one (`"1473272185"`).
    func lenientInt(_ key: Key) -> Int? {
        if let n = try? decode(Int.self, forKey: key) { return n }
        if let d = try? decode(Double.self, forKey: key), let n = LenientNumber.int(d) { return n }
        if let s = try? decode(String.self, forKey: key) { return LenientNumber.int(string: s) }
        return nil
    }

    /// A finite number from a JSON number or a string holding one.
    func lenientDouble(_ key: Key) -> Double? {
        if let d = try? decode(Double.self, forKey: key), d.isFinite { return d }
        if let s = try? decode(String.self, forKey: key), let d = Double(s.trimmingCharacters(in: .whitespaces)), d.isFinite { return d }
        return nil
    }

    /// A boolean; anything else (`""`, `0`, a string) counts as absent.
    func lenientBool(_ key: Key) -> Bool? { lenient(Bool.self, key) }

    /// For the Action API's flags (`missing`, `read`, `redirect`): with formatversion=2 a flag is `true` or
    /// missing, with formatversion=1 it is `""` or missing. Present and not `false`/`null` means set.
    func flag(_ key: Key) -> Bool {
        guard contains(key), (try? decodeNil(forKey: key)) == false else { return false }
        if let b = try? decode(Bool.self, forKey: key) { return b }
        return true
    }

    /// The readable elements of a list; the others are skipped and counted under `kind`. A missing list, or a
    /// value that is not a list, is nil.
    func lossyList<T: Decodable>(_ type: T.Type, _ key: Key, kind: String, counter: SkippedItems?) -> [T]? {
        guard let items = try? decodeIfPresent([Lossy<T>].self, forKey: key) else { return nil }
        var out: [T] = []
        out.reserveCapacity(items.count)
        for item in items { if let v = item.value { out.append(v) } }
        counter?.add(kind, items.count - out.count)
        return out
    }
}

/// The rules for whole numbers Lede reads leniently, for the `Codable` decoders and the path reader alike.
enum LenientNumber {
    /// An integral, finite JSON number within exact range.
    static func int(_ d: Double) -> Int? { d.isFinite && d == d.rounded() && abs(d) < 9e15 ? Int(d) : nil }
    /// A string holding a whole number (`"1473272185"`), spaces around allowed.
    static func int(string s: String) -> Int? { Int(s.trimmingCharacters(in: .whitespaces)) }
}
