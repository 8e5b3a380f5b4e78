/// Article titles as Wikipedia normalises them: spaces and underscores are the same, the first letter
/// is upper-case (for the namespaces Lede reads).
public enum ArticleTitle {
    /// The database form: `Albert_Einstein`.
    public static func normalise(_ title: String) -> String {
        normaliseASCII(title) ?? normaliseUnicode(title)
    }

    static func normaliseUnicode(_ title: String) -> String {
        var t = title.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "_")
        while t.contains("__") { t = t.replacingOccurrences(of: "__", with: "_") }
        if let first = t.first, first.isLowercase {
            t = first.uppercased() + t.dropFirst()
        }
        return t
    }

    /// The same rules over bytes for an ASCII title (nearly every title in a URL, and every request for a cached
    /// answer computes this key): nil when the title holds anything else.
    package static func normaliseASCII(_ title: String) -> String? {
        var title = title
        return title.withUTF8 { normaliseASCII(bytes: $0) }
    }

    /// The same over a title's bytes: trimmed of spaces and tabs, spaces as underscores, runs of underscores as one, the
    /// first letter upper-case. nil when a byte is not ASCII.
    package static func normaliseASCII(bytes u: UnsafeBufferPointer<UInt8>) -> String? {
        if u.contains(where: { $0 >= 128 }) { return nil }
        var start = 0, end = u.count
        while start < end, u[start] == 32 || u[start] == 9 { start += 1 }
        while end > start, u[end - 1] == 32 || u[end - 1] == 9 { end -= 1 }
        return String(unsafeUninitializedCapacity: end - start) { out in
            var n = 0
            for i in start..<end {
                let b = u[i] == 32 ? 95 : u[i]
                if b == 95, n > 0, out[n - 1] == 95 { continue }
                out[n] = b; n += 1
            }
            if n > 0, out[0] >= 97, out[0] <= 122 { out[0] -= 32 }
            return n
        }
    }

    /// Drops leading and trailing spaces and tabs, Unicode space separators included (Foundation's
    /// `.whitespaces`), without Foundation; the string itself when there is nothing to drop.
    package static func trimmingSpaces(_ s: String) -> String {
        func isSpace(_ c: Unicode.Scalar) -> Bool { c == "\t" || c == " " || (c.value >= 128 && c.properties.generalCategory == .spaceSeparator) }
        let scalars = s.unicodeScalars
        guard let first = scalars.first, let last = scalars.last, isSpace(first) || isSpace(last) else { return s }
        var a = scalars.startIndex, b = scalars.endIndex
        while a < b, isSpace(scalars[a]) { a = scalars.index(after: a) }
        while b > a, isSpace(scalars[scalars.index(before: b)]) { b = scalars.index(before: b) }
        return String(scalars[a..<b])
    }

    /// The display form: `Albert Einstein`.
    public static func display(_ title: String) -> String {
        normalise(title).replacingOccurrences(of: "_", with: " ")
    }
}


import Foundation

extension ArticleTitle {
    /// Canonical namespace names (every wiki accepts them), lower-cased, talk namespaces included.
    static let canonicalNamespaces: Set<String> = {
        let subject = ["user", "wikipedia", "project", "file", "image", "mediawiki", "template", "help", "category", "portal", "draft",
                       "module", "timedtext", "gadget", "gadget definition", "topic", "book", "education program"]
        return Set(subject + subject.map { $0 + " talk" } + ["talk", "special", "media"])
    }()

    /// Whether `title` starts with a canonical namespace prefix (`Talk:`, `User:`, `Category:` …). Used only when
    /// an upstream answer leaves a page's `ns` out.
    public static func hasNamespacePrefix(_ title: String) -> Bool {
        guard let colon = title.firstIndex(of: ":") else { return false }
        let prefix = title[..<colon].replacingOccurrences(of: "_", with: " ").trimmingCharacters(in: .whitespaces).lowercased()
        return canonicalNamespaces.contains(prefix)
    }
}
