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

/// What a page of the interface lists, under its key (`lists`, `entries`), and the skipped items' kind.
protocol ReadingListsItem: Decodable {
    static var listKey: String { get }
    static var skippedKind: String { get }
}
extension ReadingList: ReadingListsItem {
    static var listKey: String { "lists" }
    static var skippedKind: String { "reading_list" }
}
extension ReadingListEntry: ReadingListsItem {
    static var listKey: String { "entries" }
    static var skippedKind: String { "reading_list_entry" }
}

/// One page of lists or entries: `{<key>: [...], next?}`; one unreadable item is skipped, never the page.
struct ReadingListsPage<Item: ReadingListsItem>: Decodable {
    var items: [Item]
    var next: String?
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: AnyCodingKey.self)
        guard let items = c.lossyList(Item.self, AnyCodingKey(stringValue: Item.listKey)!, kind: Item.skippedKind, counter: decoder.skippedItems) else {
            throw UpstreamError.malformed("reading lists: no \(Item.listKey)")
        }
        self.items = items
        next = c.lenientString(AnyCodingKey(stringValue: "next")!, nonEmpty: true)
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

    /// The most entries a list may hold on this wiki (`meta=siteinfo`, `general.readinglists-config`), when it says.
    public func readingListEntryLimit(edition: LanguageCode) async throws -> Int? {
        try await siteGeneral(lang: edition).maxEntriesPerList
    }
}
