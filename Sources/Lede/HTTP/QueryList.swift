import HTTPServer
import LedeBasics
import Wikimedia

/// Comma-list query parameters (`sections=`, `types=`, `tags=`, `favorites=`, `exclude=`), read one way everywhere:
/// items trimmed, no empty items, a bounded count; a violation is a 400 problem with the caller's slug.
enum QueryList {
    static func items(_ raw: String, name: String, slug: String, max: Int = 100, maxItemLength: Int = 64) throws -> [String] {
        // Items trimmed of spaces and tabs; lengths in code points (as openapi.yaml's patterns count them).
        let items = raw.split(separator: ",", omittingEmptySubsequences: false).map { item -> String in
            let s = item.unicodeScalars
            guard let a = s.firstIndex(where: { $0 != " " && $0 != "\t" }), let b = s.lastIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
            return String(s[a...b])
        }
        guard items.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.count <= maxItemLength }) else {
            throw Problem(status: 400, slug: slug, .problemListEmptyItem, name)
        }
        guard items.count <= max else { throw Problem(status: 400, slug: slug, .problemListTooLong, name, String(max)) }
        return items
    }

    /// Items that must each name a case of `T`.
    static func cases<T: RawRepresentable & CaseIterable>(_ raw: String, of: T.Type, name: String, slug: String) throws -> [T] where T.RawValue == String {
        try items(raw, name: name, slug: slug, max: 20).map { item in
            guard let v = T(rawValue: item) else {
                throw Problem(status: 400, slug: slug, .problemListUnknown, name, String(item.prefix(40)), T.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return v
        }
    }
}
