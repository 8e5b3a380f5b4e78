import LedeBasics
import Foundation
import Upstream

// Saved articles offline: the pages' current revisions (`prop=info|revisions`, up to 50 titles a call) and the mobile
// HTML's offline resources (PCS `page/mobile-html-offline-resources`).

/// A page's current revision as the Action API names it, for one title asked.
public struct PageRevision: Sendable, Equatable {
    /// The page's title as the wiki names it now: normalised, converted to the edition's own script, redirects followed.
    public var title: String
    public var pageID: Int?
    /// The current revision (`lastrevid`); nil for a page that does not exist.
    public var revision: Int?
    /// When that revision was saved (RFC 3339, the wiki's clock).
    public var timestamp: String?
    /// No such page (deleted, never created) or an invalid title.
    public var missing: Bool

    public init(title: String, pageID: Int? = nil, revision: Int? = nil, timestamp: String? = nil, missing: Bool = false) {
        self.title = title; self.pageID = pageID; self.revision = revision; self.timestamp = timestamp; self.missing = missing
    }
}

/// One revisions call's answer: each title as asked, and the wiki's clock when it answered.
public struct PageRevisions: Sendable, Equatable {
    public static let maxPerCall = 50
    /// By the title exactly as it was asked; a title the answer does not account for is absent.
    public var byTitle: [String: PageRevision]
    /// `curtimestamp`: the wiki's time when it answered (RFC 3339), when it said.
    public var now: String?
    public init(byTitle: [String: PageRevision], now: String?) { self.byTitle = byTitle; self.now = now }
}

/// `{"curtimestamp":…, "query":{normalized, converted, redirects, pages}}` or the Action API's `error`.
struct RevisionsEnvelope: Decodable {
    var query: RevisionsQuery?
    var error: ActionError?
    var curtimestamp: String?
    enum CodingKeys: String, CodingKey { case query, error, curtimestamp }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        query = c.lenient(RevisionsQuery.self, .query)
        error = c.lenient(ActionError.self, .error)
        curtimestamp = c.lenientString(.curtimestamp, nonEmpty: true)
    }
}

struct RevisionsQuery: Decodable {
    /// `from` → `to` steps: normalisation (`Albert_Einstein` → `Albert Einstein`), variant conversion, redirects.
    var normalized: [QueryResult.Redirect]
    var converted: [QueryResult.Redirect]
    var redirects: [QueryResult.Redirect]
    var pages: [RevisionPage]
    enum CodingKeys: String, CodingKey { case normalized, converted, redirects, pages }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        normalized = c.lossyList(QueryResult.Redirect.self, .normalized, kind: "normalized", counter: nil) ?? []
        converted = c.lossyList(QueryResult.Redirect.self, .converted, kind: "converted", counter: nil) ?? []
        redirects = c.lossyList(QueryResult.Redirect.self, .redirects, kind: "redirects", counter: nil) ?? []
        pages = c.lossyList(RevisionPage.self, .pages, kind: decoder.skippedItems?.pagesKind ?? "pages", counter: decoder.skippedItems) ?? []
    }

    /// Each asked title followed through the answer's steps to its page. A step list that loops ends where it
    /// started repeating; a title with no page in the answer is left out (one bad item never fails the list).
    func resolve(_ asked: [String]) -> [String: PageRevision] {
        var step: [String: String] = [:]
        for s in normalized + converted + redirects where step[s.from] == nil { step[s.from] = s.to }
        var pageByTitle: [String: RevisionPage] = [:]
        for p in pages where pageByTitle[p.title] == nil { pageByTitle[p.title] = p }
        var out: [String: PageRevision] = [:]
        for title in asked {
            var t = title, seen: Set<String> = [title]
            while let next = step[t], seen.insert(next).inserted { t = next }
            // A wiki that names the page without a `normalized` step for it (underscores, a lower-case first letter)
            // is matched by the title's display form.
            guard let p = pageByTitle[t] ?? pageByTitle[title] ?? pageByTitle[ArticleTitle.display(title)] else { continue }
            out[title] = p.missing ? PageRevision(title: p.title, missing: true)
                                   : PageRevision(title: p.title, pageID: p.pageid, revision: p.revision, timestamp: p.timestamp)
        }
        return out
    }
}

/// A page of the answer: `missing`/`invalid` flags, `lastrevid`, and `revisions[0]{revid,timestamp}`.
struct RevisionPage: Decodable {
    var title: String
    var pageid: Int?
    var missing: Bool
    var revision: Int?
    var timestamp: String?
    enum CodingKeys: String, CodingKey { case title, pageid, missing, invalid, lastrevid, revisions }
    struct Revision: Decodable {
        var revid: Int?, timestamp: String?
        enum CodingKeys: String, CodingKey { case revid, timestamp }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            revid = c.lenientInt(.revid); timestamp = c.lenientString(.timestamp, nonEmpty: true)
        }
    }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let title = c.lenientString(.title, nonEmpty: true) else { throw UpstreamError.malformed("page without a title") }
        self.title = title
        pageid = c.lenientInt(.pageid)
        missing = c.flag(.missing) || c.flag(.invalid)
        let latest = (c.lossyList(Revision.self, .revisions, kind: "revision", counter: nil) ?? []).first
        revision = latest?.revid ?? c.lenientInt(.lastrevid)
        timestamp = latest?.timestamp
    }
}

/// PCS `mobile-html-offline-resources`: a JSON array of URLs (protocol-relative: the CSS and JavaScript the mobile HTML
/// loads). Entries that are not strings are skipped.
struct OfflineResourcesAnswer: Decodable {
    var urls: [String]
    init(from decoder: Decoder) throws {
        var c = try decoder.unkeyedContainer()
        var urls: [String] = []
        while !c.isAtEnd {
            if let s = try c.decode(Lossy<String>.self).value, !s.isEmpty { urls.append(s) }
        }
        self.urls = urls
    }
}
