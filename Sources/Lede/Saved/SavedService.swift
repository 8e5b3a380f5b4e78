import Foundation
import HTTPServer
import Synchronization
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// The Saved tab over the user's default reading list (docs/UPSTREAM.md, "Reading lists"): Lede keeps nothing of the
/// user's; every answer is read from the extension when it is asked for, and cards come from the summary cache.
final class SavedService: Sendable {
    struct Settings: Sendable {
        /// The edition whose interface holds the lists (`--reading-lists-edition`).
        var edition = LanguageCode.english
        /// Cards fetched at once for one answer (each also under the per-origin bound of the upstream guard).
        var cardConcurrency = 100
        /// Deletes sent at once by a delete-all.
        var deleteConcurrency = 4
        /// Seconds a user's tab (the list read from Wikimedia, and each page written from it) is reused by the next read
        /// on this server (`--saved-cache-ttl`; 0: every read asks Wikimedia). A write through this server drops it at
        /// once; a change made elsewhere (another replica, another app) shows within this time.
        var tabTTL: Double = 5
        init() {}
    }

    let api: any WikimediaAPI
    let responses: UpstreamCache
    let settings: Settings
    let logger: Logger

    /// Tabs by the exact `Authorization` they were read with (never a hash: no two users can meet in it), and pages
    /// written from them: soft state, bounded, short-lived; losing it changes only speed.
    let tabs = UpstreamCache(limits: .init(maxEntries: 20_000, maxBytes: 64 << 20, staleIfError: 0, notFoundTTL: 0))
    private let nextTab = Mutex<UInt64>(0)

    init(api: any WikimediaAPI, responses: UpstreamCache, settings: Settings = Settings(), logger: Logger = Logger(level: .off)) {
        self.api = api; self.responses = responses; self.settings = settings; self.logger = logger
    }

    private static func tabKey(_ authorization: String) -> String { "tab\u{0}" + authorization }
    private static func pageKey(_ tab: Tab, offset: Int, limit: Int) -> String { "page\u{0}\(tab.id)\u{0}\(offset)\u{0}\(limit)" }

    /// The user's tab as this server read it less than `tabTTL` ago, if it did.
    func cachedTab(authorization: String) -> Tab? {
        settings.tabTTL > 0 ? tabs.cachedValue(Self.tabKey(authorization), as: Tab.self) : nil
    }

    /// A page already written from `tab` (every card in it), if there is one.
    func cachedPage(_ tab: Tab, offset: Int, limit: Int) -> PreparedBody? {
        tabs.cachedValue(Self.pageKey(tab, offset: offset, limit: limit), as: PreparedBody.self)
    }

    /// Keeps a page written from `tab` for what is left of the tab's time.
    func keepPage(_ body: PreparedBody, of tab: Tab, offset: Int, limit: Int) {
        guard settings.tabTTL > 0 else { return }
        tabs.insert(Self.pageKey(tab, offset: offset, limit: limit), body, cost: Responses.cost(of: body), ttl: settings.tabTTL)
    }

    /// The tab for a read: this server's recent copy, or read from Wikimedia (and kept for `tabTTL`).
    func readTab(authorization: String) async throws -> Tab {
        if let kept = cachedTab(authorization: authorization) { return kept }
        let tab = try await tab(authorization: authorization)
        if settings.tabTTL > 0 { tabs.insert(Self.tabKey(authorization), tab, cost: 128 + 96 * tab.items.count, ttl: settings.tabTTL) }
        return tab
    }

    /// Drops this server's copy of a user's tab (after a write).
    func forget(authorization: String) { tabs.remove(Self.tabKey(authorization)) }

    var edition: LanguageCode { settings.edition }

    /// The user's default list as the tab shows it. A user who never set up sync has none: nothing is created by a read.
    struct Tab: Sendable {
        /// This read's number on this server (names the pages written from it).
        var id: UInt64 = 0
        var syncEnabled: Bool
        var list: Int?
        var items: [SavedRules.Item]
        /// Every entry id of the list, those of other projects too (what a delete-all removes).
        var allEntryIDs: [Int]
    }

    /// The tab as Wikimedia has it now.
    func tab(authorization: String) async throws -> Tab {
        let id = nextTab.withLock { n -> UInt64 in n += 1; return n }
        let lists: [ReadingList]
        do { lists = try await api.readingLists(edition: edition, authorization: authorization) }
        catch ReadingListsFailure.notSetUp { return Tab(id: id, syncEnabled: false, list: nil, items: [], allEntryIDs: []) }
        guard let list = lists.first(where: \.isDefault) else { return Tab(id: id, syncEnabled: true, list: nil, items: [], allEntryIDs: []) }
        let entries = try await api.readingListEntries(edition: edition, authorization: authorization, list: list.id)
        let (items, skipped) = SavedRules.merge(entries)
        if skipped > 0 { logger.info("saved entries of other projects left out of the tab", [("count", "\(skipped)")]) }
        return Tab(id: id, syncEnabled: true, list: list.id, items: items, allEntryIDs: entries.map(\.id))
    }

    /// The default list's id for a write: sync set up first when the user never did (once), then the lists read again.
    func defaultList(authorization: String) async throws -> Int {
        var lists: [ReadingList]
        do { lists = try await api.readingLists(edition: edition, authorization: authorization) }
        catch ReadingListsFailure.notSetUp {
            try await api.setUpReadingLists(edition: edition, authorization: authorization)
            lists = try await api.readingLists(edition: edition, authorization: authorization)
        }
        guard let list = lists.first(where: \.isDefault) else { throw UpstreamError.malformed("reading lists: no default list") }
        return list.id
    }

    /// The card of an item: the summary cache's, or fetched (and kept there); nil when upstream fails for it.
    func card(_ item: SavedRules.Item) async -> [UInt8]? {
        if let warm = responses.cachedValue(ContentRoutes.summaryKey(item.lang, item.title), as: PreparedBody.self) { return warm.identity }
        return try? await ContentRoutes.summaryCard(api: api, responses: responses, lang: item.lang, title: item.title).identity
    }

    /// The warm cards of `items` by index, without waiting.
    func warmCards(_ items: ArraySlice<SavedRules.Item>) -> [Int: [UInt8]] {
        var out: [Int: [UInt8]] = [:]
        for i in items.indices {
            if let warm = responses.cachedValue(ContentRoutes.summaryKey(items[i].lang, items[i].title), as: PreparedBody.self) { out[i] = warm.identity }
        }
        return out
    }

    /// The cards of `items` not in `known`, fetched at most `cardConcurrency` at once; each handed to `landed` (index,
    /// card or nil) as it arrives, in the order they land.
    func fetchCards(_ items: ArraySlice<SavedRules.Item>, known: Set<Int>,
                    landed: (Int, [UInt8]?) async throws -> Void) async throws {
        let wanted = items.indices.filter { !known.contains($0) }
        try await BoundedWork.run(count: wanted.count, concurrency: settings.cardConcurrency, { [self] n in await card(items[wanted[n]]) }) { n, card in
            try await landed(wanted[n], card)
        }
    }

    /// Saves an article (sync set up first when needed). False when the list held it already, under any spelling.
    func save(authorization: String, lang: LanguageCode, title: String) async throws -> (created: Bool, item: SavedRules.Item?) {
        defer { forget(authorization: authorization) }
        let list = try await defaultList(authorization: authorization)
        let entries = try await api.readingListEntries(edition: edition, authorization: authorization, list: list)
        if let held = SavedRules.find(SavedRules.merge(entries).items, lang: lang, title: title) { return (false, held) }
        do {
            let (entry, duplicate) = try await api.addReadingListEntry(edition: edition, authorization: authorization, list: list,
                                                                       project: SavedRules.project(lang), title: SavedRules.canonicalTitle(title))
            let item = entry.map { SavedRules.Item(lang: lang, title: SavedRules.canonicalTitle(title), savedAt: $0.created, updated: $0.updated, entryIDs: [$0.id]) }
            return (!duplicate, item)
        } catch ReadingListsFailure.entryLimit {
            let limit = try? await api.readingListEntryLimit(edition: edition)
            throw SavedService.limitProblem(limit ?? nil)
        }
    }

    /// Removes an article, every spelling of it; nothing to do (also no sync) is success.
    func remove(authorization: String, lang: LanguageCode, title: String) async throws {
        defer { forget(authorization: authorization) }
        let tab = try await tab(authorization: authorization)
        guard let list = tab.list, let item = SavedRules.find(tab.items, lang: lang, title: title) else { return }
        let failed = await delete(item.entryIDs, list: list, authorization: authorization)
        if let e = failed.first?.error { throw e }
    }

    /// Empties the default list, entry by entry (never the extension's teardown, which drops every list of the user):
    /// the number of entries removed.
    func removeAll(authorization: String) async throws -> Int {
        defer { forget(authorization: authorization) }
        let tab = try await tab(authorization: authorization)
        guard let list = tab.list else { return 0 }
        let failed = await delete(tab.allEntryIDs, list: list, authorization: authorization)
        let removed = tab.allEntryIDs.count - failed.count
        if let first = failed.first {
            if case ReadingListsFailure.anonymous = first.error { throw first.error }
            if let u = first.error as? UpstreamError, u == .notAuthorised { throw u }
            throw Problem(status: 502, slug: "saved-partly-removed", .problemSavedPartlyRemoved, String(removed), String(tab.allEntryIDs.count),
                          headers: ["Retry-After": "5"], extensions: [("removed", "\(removed)"), ("remaining", "\(failed.count)")])
        }
        return removed
    }

    /// Deletes entries, `deleteConcurrency` at once, each retried once on a transient failure (a delete is idempotent:
    /// one that is gone already counts as done). The entries that could not be deleted, with why.
    func delete(_ ids: [Int], list: Int, authorization: String) async -> [(id: Int, error: any Error)] {
        var failed: [(id: Int, error: any Error)] = []
        await BoundedWork.run(count: ids.count, concurrency: settings.deleteConcurrency, { [self] n in
            await deleteOne(ids[n], list: list, authorization: authorization)
        }) { n, error in
            if let error { failed.append((ids[n], error)) }
        }
        return failed
    }

    private func deleteOne(_ id: Int, list: Int, authorization: String) async -> (any Error)? {
        for attempt in 0..<2 {
            do {
                try await api.deleteReadingListEntry(edition: edition, authorization: authorization, list: list, entry: id)
                return nil
            } catch ReadingListsFailure.noSuchEntry {
                return nil
            } catch let e as UpstreamError where attempt == 0 && SavedService.isTransient(e) {
                continue
            } catch {
                return error
            }
        }
        return UpstreamError.unavailable(status: 0)
    }

    static func isTransient(_ e: UpstreamError) -> Bool {
        switch e {
        case .timeout, .unavailable: return true
        default: return false
        }
    }

    static func limitProblem(_ limit: Int?) -> Problem {
        if let limit { return Problem(status: 409, slug: "saved-limit", .problemSavedLimit, String(limit), extensions: [("limit", "\(limit)")]) }
        return Problem(status: 409, slug: "saved-limit", .problemSavedLimitUnknown)
    }
}

/// The reading lists' own refusals answer as their problems.
extension ReadingListsFailure: ProblemConvertible {
    public var problem: Problem { Problem(readingLists: self) }
}

extension Problem {
    /// What the reading lists' own refusals mean to the client (the other failures are upstream errors as for every call).
    init(readingLists e: ReadingListsFailure) {
        switch e {
        case .notSetUp:
            self.init(status: 409, slug: "saved-not-set-up", .problemSavedNotSetUp)
        case .entryLimit:
            self = SavedService.limitProblem(nil)
        case .anonymous:
            self.init(status: 401, slug: "saved-needs-account", .problemSavedNeedsAccount, headers: ["WWW-Authenticate": BearerAuthorization.challenge])
        case .noSuchEntry:
            self.init(status: 404, slug: "not-found", .problemSavedGone)
        case .rejected(let key):
            self.init(status: 400, slug: "saved-rejected", .problemSavedRejected, key,
                      extensions: [("errorKey", JSONText.quote(key))])
        }
    }
}
