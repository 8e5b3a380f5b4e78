import LedeBasics
import Foundation
import HTTPCore
import Upstream

// The ReadingLists extension's MediaWiki REST interface (`{base}/w/rest.php/readinglists/v0/…`, docs/UPSTREAM.md):
// a user's reading lists, stored per central user, so any wiki's interface serves the same lists. Every call is
// user-bound (the client's `Authorization` goes through unchanged) and never cached.

extension WikimediaClient {
    static let readingListsPath = "/w/rest.php/readinglists/v0/lists"
    /// Pages of entries followed at most (100 each): past the extension's own limit of 5,000 entries a list.
    static let maxEntryPages = 60

    static func readingListsRequest(_ edition: LanguageCode, _ auth: String, next: String?) -> UpstreamRequest {
        var q = [("limit", "10")]
        if let next { q.append(("next", next)) }
        return UpstreamRequest(lang: edition.code, path: readingListsPath, query: q, authorization: auth, kind: .readinglists)
    }

    static func readingListsSetupRequest(_ edition: LanguageCode, _ auth: String) -> UpstreamRequest {
        UpstreamRequest(method: .post, lang: edition.code, path: readingListsPath + "/setup", json: Array("{}".utf8), authorization: auth,
                        kind: .readinglistsSetup)
    }

    static func readingListEntriesRequest(_ edition: LanguageCode, _ auth: String, list: Int, next: String?) -> UpstreamRequest {
        var q = [("limit", "100"), ("sort", "updated"), ("dir", "descending")]
        if let next { q.append(("next", next)) }
        return UpstreamRequest(lang: edition.code, path: readingListsPath + "/\(list)/entries", query: q, authorization: auth,
                               kind: .readinglistsEntries)
    }

    static func readingListAddRequest(_ edition: LanguageCode, _ auth: String, list: Int, project: String, title: String) -> UpstreamRequest {
        var body = Array("{\"project\":".utf8)
        JSONText.appendQuoted(project, to: &body)
        body.append(contentsOf: ",\"title\":".utf8)
        JSONText.appendQuoted(title, to: &body)
        body.append(UInt8(ascii: "}"))
        return UpstreamRequest(method: .post, lang: edition.code, path: readingListsPath + "/\(list)/entries", json: body, authorization: auth,
                               kind: .readinglistsAdd)
    }

    static func readingListDeleteRequest(_ edition: LanguageCode, _ auth: String, list: Int, entry: Int) -> UpstreamRequest {
        UpstreamRequest(method: .delete, lang: edition.code, path: readingListsPath + "/\(list)/entries/\(entry)", authorization: auth,
                        kind: .readinglistsDelete)
    }

    /// One exchange with the interface: a 2xx answer decoded as `T`, anything else thrown as what it means.
    private func readingListsCall<T: Decodable>(_ req: UpstreamRequest, as type: T.Type) async throws -> T {
        let response = try await readingListsExchange(req)
        return try decode(T.self, response.body, kind: req.kind)
    }

    private func readingListsExchange(_ req: UpstreamRequest) async throws -> UpstreamResponse {
        let response = try await restAnswer(req)
        guard (200..<300).contains(response.status) else { try ReadingListsFailure.read(response) }
        return response
    }

    /// Every item of a paged call, following `next` for at most `pages` pages (`complete` false when more were left).
    private func following<Item: ReadingListsItem>(pages: Int, _ request: (String?) -> UpstreamRequest) async throws -> (items: [Item], complete: Bool) {
        var items: [Item] = [], next: String? = nil
        for _ in 0..<pages {
            let page = try await readingListsCall(request(next), as: ReadingListsPage<Item>.self)
            items += page.items
            guard let n = page.next, n != next else { return (items, true) }
            next = n
        }
        return (items, false)
    }

    public func readingLists(edition: LanguageCode, authorization: String) async throws -> [ReadingList] {
        // 10 a page; the extension allows 100 lists a user.
        try await following(pages: 20) { Self.readingListsRequest(edition, authorization, next: $0) }.items
    }

    public func setUpReadingLists(edition: LanguageCode, authorization: String) async throws {
        do { _ = try await readingListsExchange(Self.readingListsSetupRequest(edition, authorization)) }
        catch ReadingListsFailure.rejected(let key) where key == "readinglists-db-error-already-set-up" { return }
    }

    public func readingListEntries(edition: LanguageCode, authorization: String, list: Int) async throws -> [ReadingListEntry] {
        let (entries, complete): ([ReadingListEntry], Bool) = try await following(pages: Self.maxEntryPages) {
            Self.readingListEntriesRequest(edition, authorization, list: list, next: $0)
        }
        if !complete { logger.warning("reading list longer than Lede reads", [("pages", "\(Self.maxEntryPages)")]) }
        return entries
    }

    public func addReadingListEntry(edition: LanguageCode, authorization: String, list: Int, project: String, title: String) async throws -> (entry: ReadingListEntry?, duplicate: Bool) {
        let created = try await readingListsCall(Self.readingListAddRequest(edition, authorization, list: list, project: project, title: title),
                                                 as: ReadingListEntryCreated.self)
        return (created.entry, created.duplicate)
    }

    public func deleteReadingListEntry(edition: LanguageCode, authorization: String, list: Int, entry: Int) async throws {
        _ = try await readingListsExchange(Self.readingListDeleteRequest(edition, authorization, list: list, entry: entry))
    }

    /// Entries added, changed or removed (`deleted`) since `date` (RFC 3339), on any of the user's lists: the
    /// extension keeps removals for its retention time (30 days on Wikimedia's wikis); an older date is refused.
    public func readingListChanges(edition: LanguageCode, authorization: String, since date: String) async throws -> [ReadingListEntry] {
        let (entries, complete): ([ReadingListEntry], Bool) = try await following(pages: Self.maxEntryPages) {
            Self.readingListChangesRequest(edition, authorization, since: date, next: $0)
        }
        if !complete { throw UpstreamError.malformed("reading lists: more changes than Lede reads") }
        return entries
    }

    static func readingListChangesRequest(_ edition: LanguageCode, _ auth: String, since date: String, next: String?) -> UpstreamRequest {
        var q = [("limit", "100")]
        if let next { q.append(("next", next)) }
        return UpstreamRequest(lang: edition.code, path: readingListsPath + "/changes/since/" + UpstreamRequest.percentEncode(date, keep: ":"), query: q,
                               authorization: auth, kind: .readinglistsChanges)
    }

    /// The most entries a list may hold on this wiki (`meta=siteinfo`, `general.readinglists-config`), when it says.
    public func readingListEntryLimit(edition: LanguageCode) async throws -> Int? {
        try await siteGeneral(lang: edition).maxEntriesPerList
    }
}
