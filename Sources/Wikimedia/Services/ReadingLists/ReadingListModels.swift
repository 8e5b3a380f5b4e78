import LedeBasics
import Foundation
import Upstream

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
    /// The list it is on (`listId`: in the answers of `changes/since`).
    public var listID: Int?
    /// Removed (`changes/since` names entries removed since the date, for the extension's retention of 30 days).
    public var deleted: Bool

    public init(id: Int, project: String, title: String, created: String? = nil, updated: String? = nil, listID: Int? = nil, deleted: Bool = false) {
        self.id = id; self.project = project; self.title = title; self.created = created; self.updated = updated
        self.listID = listID; self.deleted = deleted
    }

    enum CodingKeys: String, CodingKey { case id, project, title, created, updated, listId, deleted }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let id = c.lenientInt(.id), let project = c.lenientString(.project, nonEmpty: true), let title = c.lenientString(.title, nonEmpty: true)
        else { throw UpstreamError.malformed("reading list entry without id, project or title") }
        self.id = id; self.project = project; self.title = title
        created = c.lenientString(.created)
        updated = c.lenientString(.updated) ?? created
        listID = c.lenientInt(.listId)
        deleted = c.lenientBool(.deleted) ?? false
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
