import Foundation
import Synchronization
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// Saved articles offline (docs/UPSTREAM.md, "Offline"): for each article on the reader's Saved list, what the app
/// downloads to show it with no network, and since a sync token only what changed. The revisions of the whole list
/// come in batches of 50 titles an edition; PCS is asked only for revisions no reader asked for before (a manifest is
/// immutable per revision and kept for every reader). Nothing of the reader's is kept: the token says all.
final class OfflineService: Sendable {
    struct Settings: Sendable {
        /// Articles whose manifests are being made at once for one answer (each two PCS calls, under the origin's guard).
        var manifestConcurrency = 8
        /// Revision batches in flight at once for one answer.
        var revisionConcurrency = 4
        /// Seconds a manifest is kept (immutable per revision; the bound is the cache's room).
        var manifestTTL: Double = 86_400
        init() {}
    }

    let api: any WikimediaAPI
    let responses: UpstreamCache
    let saved: SavedService
    let settings: Settings
    /// The time now on this server, for a wiki that does not say its own (`curtimestamp`).
    let now: @Sendable () -> Int

    init(api: any WikimediaAPI, responses: UpstreamCache, saved: SavedService, settings: Settings = Settings(),
         now: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }) {
        self.api = api; self.responses = responses; self.saved = saved; self.settings = settings; self.now = now
    }

    // MARK: - One article

    /// The manifest of `page` at `revision` for images `width` wide: kept, or made from PCS's two answers.
    func manifest(lang: LanguageCode, page: String, revision: Int, timestamp: String?, width: Int) async throws -> OfflineRules.Manifest {
        let key = "offline\u{0}\(lang.tag)\u{0}\(ArticleTitle.normalise(page))\u{0}\(revision)\u{0}\(width)"
        let api = self.api
        return try await responses.value(key, ttl: settings.manifestTTL) {
            async let resources = api.offlineResources(lang: lang, title: page, revision: revision)
            async let media = api.mediaList(lang: lang, title: page, revision: revision)
            let m = OfflineRules.manifest(site: api.siteURL(lang: lang), page: page, revision: revision, timestamp: timestamp,
                                          resources: try await resources, media: try await media, width: width)
            return (m, 256 + m.images.count * 200 + m.resources.count * 120)
        }
    }

    /// The current revision of one page (redirects followed): nil when the wiki has no such page.
    func revision(lang: LanguageCode, title: String) async throws -> PageRevision? {
        let answer = try await api.pageRevisions(lang: lang, titles: [title])
        guard let r = answer.byTitle[title] else { throw UpstreamError.malformed("revisions: the title asked is not in the answer") }
        return r.missing || r.revision == nil ? nil : r
    }

    // MARK: - The Saved list

    /// What a sync answers, before any manifest is made.
    struct Plan: Sendable {
        /// The whole list (no token, or one too old for the removals to be known): the app replaces what it holds.
        var complete: Bool
        /// Articles on the list.
        var count: Int
        var removed: [OfflineRules.Removed]
        /// The articles to list: each with its revision, or why it has none.
        var work: [Work]
        /// The list's id (0: the user never set up sync) and the wiki's time the revisions were read at.
        var list: Int
        var readAt: Int
        /// The time the token this answer was asked with said (0: none).
        var since: Int

        struct Work: Sendable {
            var item: SavedRules.Item
            var revision: Result<PageRevision, UpstreamError>
        }
    }

    /// Reads the list, what was removed from it since the token, and every article's revision; chooses what to list.
    func plan(authorization: String, since token: OfflineRules.SyncToken?) async throws -> Plan {
        let tab = try await saved.tab(authorization: authorization)
        let list = tab.list ?? 0
        var since = token?.since ?? 0
        if let token, token.list != list {
            // A token written before the user had a list names no list: the whole list, as for no token.
            guard token.list == 0 else { throw Self.tokenRefused() }
            since = 0
        }
        var complete = since == 0 || now() - since > OfflineRules.retention
        var removed: [OfflineRules.Removed] = []
        if !complete, tab.list != nil {
            do {
                removed = try await unsaved(authorization: authorization, list: list, since: since, current: tab.items)
            } catch ReadingListsFailure.rejected {
                complete = true   // a date the extension no longer keeps removals for: the whole list
            }
        }
        let (revisions, wikiNow) = await revisions(tab.items)
        var work: [Plan.Work] = []
        for (i, item) in tab.items.enumerated() {
            switch revisions[i] ?? .failure(.unavailable(status: 0)) {
            case .success(let r) where r.missing:
                removed.append(.init(lang: item.lang.code, title: item.title, reason: "deleted"))
            case .success(let r) where r.revision == nil:
                work.append(.init(item: item, revision: .failure(.malformed("revisions: a page without its revision"))))
            case .success(let r):
                if complete || OfflineRules.isSince(item.savedAt, since) || OfflineRules.isSince(r.timestamp, since) {
                    work.append(.init(item: item, revision: .success(r)))
                }
            case .failure(let e):
                work.append(.init(item: item, revision: .failure(e)))
            }
        }
        return Plan(complete: complete, count: tab.items.count, removed: removed, work: work, list: list, readAt: wikiNow ?? now(), since: complete ? 0 : since)
    }

    /// The articles taken off the list since `since` and not on it again (by edition and title, every spelling one).
    func unsaved(authorization: String, list: Int, since: Int, current: [SavedRules.Item]) async throws -> [OfflineRules.Removed] {
        let changes = try await api.readingListChanges(edition: saved.edition, authorization: authorization,
                                                       since: Timestamp.rfc3339(seconds: since - OfflineRules.margin))
        let held = Set(current.map { $0.lang.code + "\u{0}" + $0.title })
        var out: [OfflineRules.Removed] = [], seen = Set<String>()
        for e in changes where e.deleted && (e.listID == nil || e.listID == list) {
            guard let lang = SavedRules.edition(ofProject: e.project) else { continue }
            let title = SavedRules.canonicalTitle(e.title)
            let key = lang.code + "\u{0}" + title
            guard !title.isEmpty, !held.contains(key), seen.insert(key).inserted else { continue }
            out.append(.init(lang: lang.code, title: title, reason: "unsaved"))
        }
        return out
    }

    /// Every item's current revision, by index: one call per 50 titles of an edition, `revisionConcurrency` at once;
    /// a failed call fails its titles only. With the earliest time any wiki said it answered at.
    func revisions(_ items: [SavedRules.Item]) async -> ([Int: Result<PageRevision, UpstreamError>], Int?) {
        var byLang: [LanguageCode: [Int]] = [:]
        for (i, item) in items.enumerated() { byLang[item.lang, default: []].append(i) }
        let batches: [(LanguageCode, [Int])] = byLang.sorted(by: { $0.key.code < $1.key.code }).flatMap { lang, indices in
            stride(from: 0, to: indices.count, by: PageRevisions.maxPerCall).map { start in
                (lang, Array(indices[start..<min(indices.count, start + PageRevisions.maxPerCall)]))
            }
        }
        let api = self.api
        var out: [Int: Result<PageRevision, UpstreamError>] = [:], earliest: Int?
        await BoundedWork.run(count: batches.count, concurrency: settings.revisionConcurrency, { b in
            let lang = batches[b].0, titles = batches[b].1.map { items[$0].title }
            do { return Result<PageRevisions, UpstreamError>.success(try await api.pageRevisions(lang: lang, titles: titles)) }
            catch { return .failure(error as? UpstreamError ?? .unavailable(status: 0)) }
        }) { (b: Int, answer: Result<PageRevisions, UpstreamError>) in
            switch answer {
            case .success(let answer):
                if let t = answer.now.flatMap(Timestamp.parseRFC3339) { earliest = min(earliest ?? Int(t), Int(t)) }
                for i in batches[b].1 {
                    out[i] = answer.byTitle[items[i].title].map { .success($0) } ?? .failure(.malformed("revisions: a title is not in the answer"))
                }
            case .failure(let e):
                for i in batches[b].1 { out[i] = .failure(e) }
            }
        }
        return (out, earliest)
    }

    /// The articles of a plan, `manifestConcurrency` at once, each handed to `landed` (its index in `plan.work`) as it
    /// is ready: its manifest, or a placeholder with why and when to ask again. Whether every one was whole.
    func articles(_ plan: Plan, width: Int, landed: (Int, OfflineRules.Article) async throws -> Void) async throws -> Bool {
        var whole = true
        try await BoundedWork.run(count: plan.work.count, concurrency: settings.manifestConcurrency, { [self] i in
            let w = plan.work[i], item = w.item
            switch w.revision {
            case .failure(let e):
                return (Self.placeholder(item, page: nil, error: e), false)
            case .success(let r):
                do {
                    let m = try await manifest(lang: item.lang, page: r.title, revision: r.revision ?? 0, timestamp: r.timestamp, width: width)
                    return (OfflineRules.Article(lang: item.lang, title: item.title, page: r.title, manifest: m), true)
                } catch {
                    return (Self.placeholder(item, page: r.title, error: error), false)
                }
            }
        }) { i, made in
            if !made.1 { whole = false }
            try await landed(i, made.0)
        }
        return whole
    }

    /// A `since` this server did not write for the reader's list: the 400 naming it.
    static func tokenRefused() -> Problem {
        Problem(status: 400, slug: "invalid-sync-token", .problemOfflineToken, extensions: [("parameter", JSONText.quote("since"))])
    }

    static func placeholder(_ item: SavedRules.Item, page: String?, error: any Error) -> OfflineRules.Article {
        let status = FeedService.Status(error)
        var retry = 30
        if case .backingOff(let seconds) = status { retry = seconds }
        return OfflineRules.Article(lang: item.lang, title: item.title, page: page, placeholder: status.reason, retryAfter: retry)
    }

    /// The token an answer ends with: the time the revisions were read when every article came whole; else the time
    /// the request's token said (what failed is listed again next time).
    static func token(_ plan: Plan, whole: Bool) -> String {
        OfflineRules.write(.init(list: plan.list, since: whole ? plan.readAt : plan.since))
    }
}
