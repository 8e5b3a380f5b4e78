import Foundation
import HTTPServer
import LedeBasics
import Wikimedia

/// The Saved tab's rules, without sockets: which edition an entry belongs to, which entries are one article (spellings
/// merged under MediaWiki's title rules), the tab's order and its pages.
enum SavedRules {
    /// One saved article as the tab shows it: every entry that names it (one per spelling the apps saved).
    struct Item: Sendable, Equatable {
        var lang: LanguageCode
        /// The display form (`Albert Einstein`).
        var title: String
        /// When it was saved (the newest spelling's `created`).
        var savedAt: String?
        var updated: String?
        var entryIDs: [Int]
    }

    /// The wiki origin an article of `lang` is saved under (`https://de.wikipedia.org`).
    static func project(_ lang: LanguageCode) -> String { "https://\(lang.code).wikipedia.org" }

    /// The edition of a wiki origin (`https://de.wikipedia.org`, also `http:`, protocol-relative, the mobile host or a
    /// trailing `/`); nil for anything but a Wikipedia edition Lede knows (a Wiktionary entry has no card here).
    static func edition(ofProject project: String) -> LanguageCode? {
        // The form the extension writes (`https://de.wikipedia.org`), read without making a string per step.
        let https = "https://", wiki = ".wikipedia.org"
        if project.hasPrefix(https), project.hasSuffix(wiki), project.utf8.count > https.utf8.count + wiki.utf8.count {
            let code = project.utf8.dropFirst(https.utf8.count).dropLast(wiki.utf8.count)
            if code.allSatisfy({ ($0 >= 97 && $0 <= 122) || $0 == 45 }), let s = String(code) { return LanguageCode(s) }
        }
        var host = Substring(project)
        for scheme in ["https://", "http://", "//"] where host.lowercased().hasPrefix(scheme) { host = host.dropFirst(scheme.count); break }
        while host.hasSuffix("/") { host = host.dropLast() }
        let lower = host.lowercased()
        guard lower.hasSuffix(".wikipedia.org") else { return nil }
        var code = lower.dropLast(".wikipedia.org".count)
        if code.hasSuffix(".m") { code = code.dropLast(2) }
        guard !code.isEmpty, !code.contains(".") else { return nil }
        return LanguageCode(String(code))
    }

    /// A title under MediaWiki's rules, in the display form every write and comparison uses: underscores as spaces,
    /// runs of spaces as one, no space around it, the first letter upper-case (`albert_Einstein` → `Albert Einstein`).
    static func canonicalTitle(_ title: String) -> String { canonicalASCII(title) ?? ArticleTitle.display(title) }

    /// `canonicalTitle` over the bytes of an ASCII title (nearly every saved one): nil for anything else.
    static func canonicalASCII(_ title: String) -> String? {
        var title = title
        return title.withUTF8 { u -> String? in
            if u.contains(where: { $0 >= 128 || $0 < 32 }) { return nil }
            return String(unsafeUninitializedCapacity: u.count) { out in
                var n = 0
                for b in u {
                    let c = b == 95 ? 32 : b                      // `_` is a space
                    if c == 32 && (n == 0 || out[n - 1] == 32) { continue }   // no leading space, no runs
                    out[n] = c; n += 1
                }
                if n > 0, out[n - 1] == 32 { n -= 1 }
                if n > 0, out[0] >= 97, out[0] <= 122 { out[0] -= 32 }
                return n
            }
        }
    }

    /// The tab: entries of known editions merged by (edition, canonical title), most recently updated first (the
    /// order upstream sends, kept stable; a merged article sits where its newest spelling does).
    static func merge(_ entries: [ReadingListEntry]) -> (items: [Item], skipped: Int) {
        var items: [Item] = []
        var index: [String: Int] = [:]
        var skipped = 0
        // Stable by `updated`, newest first: ISO 8601 timestamps of one form compare by their bytes. Upstream sends
        // them in that order already; then nothing is sorted.
        func newer(_ a: ReadingListEntry, _ b: ReadingListEntry) -> Bool {
            (b.updated ?? "").utf8.lexicographicallyPrecedes((a.updated ?? "").utf8)
        }
        let inOrder = zip(entries, entries.dropFirst()).allSatisfy { !newer($1, $0) }
        let ordered = inOrder ? entries : entries.enumerated().sorted { a, b in
            newer(a.element, b.element) || (!newer(b.element, a.element) && a.offset < b.offset)
        }.map(\.element)
        for e in ordered {
            guard let lang = edition(ofProject: e.project) else { skipped += 1; continue }
            let title = canonicalTitle(e.title)
            guard !title.isEmpty else { skipped += 1; continue }
            let key = lang.code + "\u{0}" + title
            if let i = index[key] { items[i].entryIDs.append(e.id); continue }
            index[key] = items.count
            items.append(Item(lang: lang, title: title, savedAt: e.created, updated: e.updated, entryIDs: [e.id]))
        }
        return (items, skipped)
    }

    /// The items naming this article (at most one after `merge`).
    static func find(_ items: [Item], lang: LanguageCode, title: String) -> Item? {
        let wanted = canonicalTitle(title)
        return items.first { $0.lang == lang && $0.title == wanted }
    }

    /// The opaque `continue` of a page that starts at `offset` (`o50`).
    static func continueToken(_ offset: Int) -> String { "o\(offset)" }

    /// The offset a `continue` names; nil when it is not one this route wrote.
    static func offset(ofContinue raw: String) -> Int? {
        let u = Array(raw.utf8)
        guard u.count >= 2, u.count <= 7, u[0] == UInt8(ascii: "o"), u.dropFirst().allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(raw.dropFirst())
    }
}
