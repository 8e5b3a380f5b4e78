import Foundation
import HTTPServer

// The ReadingLists extension's MediaWiki REST interface (`{base}/w/rest.php/readinglists/v0/…`, docs/UPSTREAM.md):
// a user's reading lists, stored per central user, so any wiki's interface serves the same lists. Every call is
// user-bound (the client's `Authorization` goes through unchanged) and never cached.

/// One of the user's reading lists.
public struct ReadingList: Sendable, Equatable, Decodable {
    public var id: Int
    public var isDefault: Bool
    public var name: String?
    public var updated: String?

    public init(id: Int, isDefault: Bool, name: String? = nil, updated: String? = nil) {
        self.id = id; self.isDefault = isDefault; self.name = name; self.updated = updated
    }

    enum CodingKeys: String, CodingKey { case id, `default`, name, updated }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let id = c.lenientInt(.id) else { throw UpstreamError.malformed("reading list without an id") }
        self.id = id
        isDefault = c.lenientBool(.default) ?? false
        name = c.lenientString(.name)
        updated = c.lenientString(.updated)
    }
}

/// One saved page: `project` is a wiki's origin (`https://de.wikipedia.org`), so one list spans editions; `title` is
/// as the saving app spelt it (spaces or underscores).
public struct ReadingListEntry: Sendable, Equatable, Decodable {
    public var id: Int
    public var project: String
    public var title: String
    public var created: String?
    public var updated: String?

    public init(id: Int, project: String, title: String, created: String? = nil, updated: String? = nil) {
        self.id = id; self.project = project; self.title = title; self.created = created; self.updated = updated
    }

    enum CodingKeys: String, CodingKey { case id, project, title, created, updated }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let id = c.lenientInt(.id), let project = c.lenientString(.project, nonEmpty: true), let title = c.lenientString(.title, nonEmpty: true)
        else { throw UpstreamError.malformed("reading list entry without id, project or title") }
        self.id = id; self.project = project; self.title = title
        created = c.lenientString(.created)
        updated = c.lenientString(.updated) ?? created
    }
}

/// What the extension refused, by its `errorKey` (read in one place: `ReadingListsFailure.read`). Failures that are
/// not the extension's own (a refused token, Wikimedia down, back-pressure) are `UpstreamError`s as for every call.
public enum ReadingListsFailure: Error, Equatable, Sendable {
    /// The user never set up sync (`readinglists-db-error-not-set-up`).
    case notSetUp
    /// The list holds as many entries as the wiki allows (`readinglists-db-error-entry-limit`).
    case entryLimit
    /// An anonymous or temporary account (`rest-permission-denied-anon`): reading lists need a registered account.
    case anonymous
    /// The entry is gone already (`readinglists-db-error-no-such-list-entry`, `…-list-entry-deleted`).
    case noSuchEntry
    /// Another refusal of what was sent (4xx with an `errorKey`): the client's fault.
    case rejected(key: String)

    struct Body: Decodable {
        var errorKey: String?
        var httpCode: Int?
        var httpReason: String?
    }

    /// The error a non-2xx answer of the interface means; always throws. `{errorKey, messageTranslations, httpCode,
    /// httpReason}` as the extension writes it; anything else by its status alone.
    static func read(_ response: UpstreamResponse) throws -> Never {
        let key = (try? UpstreamJSONDecoder().decode(Body.self, from: response.body))?.errorKey ?? ""
        switch key {
        case "readinglists-db-error-not-set-up": throw ReadingListsFailure.notSetUp
        case "readinglists-db-error-entry-limit": throw ReadingListsFailure.entryLimit
        case "rest-permission-denied-anon", "rest-permission-denied-temp": throw ReadingListsFailure.anonymous
        case "readinglists-db-error-no-such-list-entry", "readinglists-db-error-list-entry-deleted": throw ReadingListsFailure.noSuchEntry
        default: break
        }
        switch response.status {
        case 401, 403: throw UpstreamError.notAuthorised
        case 404 where key.isEmpty: throw UpstreamError.unavailable(status: 404)   // no such interface: the extension is not there
        case 400..<500: throw ReadingListsFailure.rejected(key: key.isEmpty ? "http-\(response.status)" : key)
        default: throw UpstreamError.unavailable(status: response.status)
        }
    }
}

struct ReadingListsPage: Decodable {
    var lists: [ReadingList]
    var next: String?
    enum CodingKeys: String, CodingKey { case lists, next }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let lists = c.lossyList(ReadingList.self, .lists, kind: "reading_list", counter: decoder.skippedItems) else {
            throw UpstreamError.malformed("reading lists: no lists")
        }
        self.lists = lists
        next = c.lenientString(.next, nonEmpty: true)
    }
}

struct ReadingListEntriesPage: Decodable {
    var entries: [ReadingListEntry]
    var next: String?
    enum CodingKeys: String, CodingKey { case entries, next }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let entries = c.lossyList(ReadingListEntry.self, .entries, kind: "reading_list_entry", counter: decoder.skippedItems) else {
            throw UpstreamError.malformed("reading list entries: no entries")
        }
        self.entries = entries
        next = c.lenientString(.next, nonEmpty: true)
    }
}

struct ReadingListEntryCreated: Decodable {
    var entry: ReadingListEntry?
    var duplicate: Bool
    enum CodingKeys: String, CodingKey { case id, entry, duplicate }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        entry = c.lenient(ReadingListEntry.self, .entry)
        duplicate = c.lenientBool(.duplicate) ?? false
    }
}

extension WikimediaClient {
    static let readingListsPath = "/w/rest.php/readinglists/v0/lists"
    /// Pages of entries followed at most (100 each): past the extension's own limit of 5,000 entries a list.
    static let maxEntryPages = 60

    static func readingListsRequest(_ edition: LanguageCode, _ auth: String, next: String?) -> UpstreamRequest {
        var q = [("limit", "10")]
        if let next { q.append(("next", next)) }
        return UpstreamRequest(lang: edition.code, path: readingListsPath, query: q, authorization: auth, kind: "readinglists")
    }

    static func readingListsSetupRequest(_ edition: LanguageCode, _ auth: String) -> UpstreamRequest {
        UpstreamRequest(method: .post, lang: edition.code, path: readingListsPath + "/setup", json: Array("{}".utf8), authorization: auth,
                        kind: "readinglists-setup")
    }

    static func readingListEntriesRequest(_ edition: LanguageCode, _ auth: String, list: Int, next: String?) -> UpstreamRequest {
        var q = [("limit", "100"), ("sort", "updated"), ("dir", "descending")]
        if let next { q.append(("next", next)) }
        return UpstreamRequest(lang: edition.code, path: readingListsPath + "/\(list)/entries", query: q, authorization: auth,
                               kind: "readinglists-entries")
    }

    static func readingListAddRequest(_ edition: LanguageCode, _ auth: String, list: Int, project: String, title: String) -> UpstreamRequest {
        var body = Array("{\"project\":".utf8)
        JSONText.appendQuoted(project, to: &body)
        body.append(contentsOf: ",\"title\":".utf8)
        JSONText.appendQuoted(title, to: &body)
        body.append(UInt8(ascii: "}"))
        return UpstreamRequest(method: .post, lang: edition.code, path: readingListsPath + "/\(list)/entries", json: body, authorization: auth,
                               kind: "readinglists-add")
    }

    static func readingListDeleteRequest(_ edition: LanguageCode, _ auth: String, list: Int, entry: Int) -> UpstreamRequest {
        UpstreamRequest(method: .delete, lang: edition.code, path: readingListsPath + "/\(list)/entries/\(entry)", authorization: auth,
                        kind: "readinglists-delete")
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

    public func readingLists(edition: LanguageCode, authorization: String) async throws -> [ReadingList] {
        var lists: [ReadingList] = [], next: String? = nil
        for _ in 0..<20 {   // 10 a page; the extension allows 100 lists a user
            let page = try await readingListsCall(Self.readingListsRequest(edition, authorization, next: next), as: ReadingListsPage.self)
            lists += page.lists
            guard let n = page.next, n != next else { break }
            next = n
        }
        return lists
    }

    public func setUpReadingLists(edition: LanguageCode, authorization: String) async throws {
        do { _ = try await readingListsExchange(Self.readingListsSetupRequest(edition, authorization)) }
        catch ReadingListsFailure.rejected(let key) where key == "readinglists-db-error-already-set-up" { return }
    }

    public func readingListEntries(edition: LanguageCode, authorization: String, list: Int) async throws -> [ReadingListEntry] {
        var entries: [ReadingListEntry] = [], next: String? = nil
        for _ in 0..<Self.maxEntryPages {
            let page = try await readingListsCall(Self.readingListEntriesRequest(edition, authorization, list: list, next: next), as: ReadingListEntriesPage.self)
            entries += page.entries
            guard let n = page.next, n != next else { return entries }
            next = n
        }
        logger.warning("reading list longer than Lede reads", [("pages", "\(Self.maxEntryPages)")])
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

    /// The most entries a list may hold on this wiki (`meta=siteinfo`, `general.readinglists-config`), when it says.
    public func readingListEntryLimit(edition: LanguageCode) async throws -> Int? {
        try await siteGeneral(lang: edition).maxEntriesPerList
    }
}
