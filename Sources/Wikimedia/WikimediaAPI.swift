import EventLoops
import LedeBasics
import HTTPCore
import Upstream
/// Every call Lede makes to Wikimedia (docs/UPSTREAM.md), typed. Features depend on this protocol only;
/// whether answers come from production, a fake on loopback, or the embedded default is not their concern.
public protocol WikimediaAPI: Sendable {
    func featuredFeed(lang: LanguageCode, date: FeedDate) async throws -> FeaturedFeed
    func summary(lang: LanguageCode, title: String) async throws -> PageSummary
    /// "Because you read": `morelike:` search (unfiltered: callers apply the content rules).
    func related(lang: LanguageCode, title: String) async throws -> QueryResult
    /// Random main-namespace candidates; never cached.
    func randomCandidates(lang: LanguageCode) async throws -> QueryResult
    func nearby(lang: LanguageCode, latitude: Double, longitude: Double, radiusMeters: Int) async throws -> QueryResult
    func prefixSearch(lang: LanguageCode, query: String) async throws -> QueryResult
    func fullTextSearch(lang: LanguageCode, query: String) async throws -> QueryResult
    /// User-bound: `authorization` is forwarded unchanged; never cached.
    /// `uselang`: the reader's interface language, in which Echo writes the notifications' texts (nil: the wiki's).
    func notifications(lang: LanguageCode, authorization: String, filter: NotificationFilter, limit: Int, continueFrom: String?,
                       uselang: String?) async throws -> NotificationPage
    /// User-bound: the unread count alone (the badge), from the same call as `notifications(filter: .unread,
    /// limit: 1)` without reading the list.
    func unreadCount(lang: LanguageCode, authorization: String) async throws -> Int
    /// The same count through a callback, which runs once, on the calling loop as a rule: the live client makes the
    /// call there without a task when it can.
    func unreadCount(lang: LanguageCode, authorization: String, completion: @escaping @Sendable (Result<Int, any Error>) -> Void)
    func csrfToken(lang: LanguageCode, authorization: String) async throws -> String
    /// Marks `ids` read (at most 50: callers batch), or everything when `ids` is nil.
    func markRead(lang: LanguageCode, authorization: String, ids: [Int]?, token: String) async throws
    /// The article screen: its table of contents (redirects followed).
    func articleContents(lang: LanguageCode, title: String) async throws -> ArticleContents
    /// Every other edition the article exists in (redirects followed).
    func languageLinks(lang: LanguageCode, title: String) async throws -> [LanguageLink]
    /// The article's images and videos in page order.
    func mediaList(lang: LanguageCode, title: String) async throws -> [MediaListItem]
    /// Sizes and credits of up to 50 files (`File:…` titles), by title as asked.
    func fileInfo(lang: LanguageCode, files: [String]) async throws -> [String: FileInfo]
    /// The edition's main page (`meta=siteinfo`, `general.mainpage`): `Main Page` on en, `Wikipedia:Hauptseite` on de.
    func mainPage(lang: LanguageCode) async throws -> String
    /// Parsoid's HTML of the page, with its ETag (revision and render id).
    func pageHTML(lang: LanguageCode, title: String) async throws -> PageHTML

    // The user's reading lists (ReadingLists.swift), on one edition's interface: user-bound, never cached.
    /// Every list of the user; throws `ReadingListsFailure.notSetUp` when sync was never set up.
    func readingLists(edition: LanguageCode, authorization: String) async throws -> [ReadingList]
    /// Sets up sync (creates the default list); a user set up already counts as done.
    func setUpReadingLists(edition: LanguageCode, authorization: String) async throws
    /// Every entry of a list, most recently updated first.
    func readingListEntries(edition: LanguageCode, authorization: String, list: Int) async throws -> [ReadingListEntry]
    /// Adds a page; a page the list holds already comes back with `duplicate`.
    func addReadingListEntry(edition: LanguageCode, authorization: String, list: Int, project: String, title: String) async throws -> (entry: ReadingListEntry?, duplicate: Bool)
    func deleteReadingListEntry(edition: LanguageCode, authorization: String, list: Int, entry: Int) async throws
    /// The most entries a list may hold, when the wiki publishes it.
    func readingListEntryLimit(edition: LanguageCode) async throws -> Int?
    /// Entries of any of the user's lists added, changed or removed (`deleted`) since an RFC 3339 date.
    func readingListChanges(edition: LanguageCode, authorization: String, since date: String) async throws -> [ReadingListEntry]

    // Saved articles offline (Offline/): public, per revision.
    /// The current revision of up to 50 pages (redirects followed, titles converted to the edition's script), by
    /// title as asked, with the wiki's clock.
    func pageRevisions(lang: LanguageCode, titles: [String]) async throws -> PageRevisions
    /// The CSS and JavaScript the mobile HTML of a page loads (protocol-relative URLs), pinned to a revision.
    func offlineResources(lang: LanguageCode, title: String, revision: Int?) async throws -> [String]
    /// The media list of one revision of a page.
    func mediaList(lang: LanguageCode, title: String, revision: Int) async throws -> [MediaListItem]

    // Editing (Editing.swift): user-bound when `authorization` is given, an anonymous edit otherwise; never cached here.
    /// A section's wikitext (the whole page when `section` is nil) with whether the user may edit it.
    /// `uselang`: the language of the wiki's reasons and notices (nil: the wiki's).
    func editorPage(lang: LanguageCode, title: String, section: Int?, authorization: String?, uselang: String?) async throws -> EditorPage
    /// Whether the user may edit the page, without its wikitext.
    func editPermission(lang: LanguageCode, title: String, authorization: String?) async throws -> EditPermission
    /// A CSRF token for an edit; an anonymous session's (`+\\`) when `authorization` is nil.
    func editToken(lang: LanguageCode, authorization: String?, forwardedFor: String?) async throws -> String
    /// The edition's site (`https://en.wikipedia.org`): what URLs the wiki gives as paths are resolved against.
    func siteURL(lang: LanguageCode) -> String
    /// The save, sent once within `deadline` seconds.
    func edit(lang: LanguageCode, _ submission: EditSubmission, token: String, authorization: String?, forwardedFor: String?, deadline: Double) async throws -> EditOutcome
}

extension WikimediaAPI {
    /// An API that cannot tell (a stand-in) knows no main page: every article keeps its contents.
    public func mainPage(lang: LanguageCode) async throws -> String { throw UpstreamError.notFound("no siteinfo") }
    public func pageHTML(lang: LanguageCode, title: String) async throws -> PageHTML { throw UpstreamError.notFound("no page HTML") }

    // A stand-in with no reading lists: as a wiki without the extension answers.
    public func readingLists(edition: LanguageCode, authorization: String) async throws -> [ReadingList] { throw UpstreamError.unavailable(status: 404) }
    public func setUpReadingLists(edition: LanguageCode, authorization: String) async throws { throw UpstreamError.unavailable(status: 404) }
    public func readingListEntries(edition: LanguageCode, authorization: String, list: Int) async throws -> [ReadingListEntry] {
        throw UpstreamError.unavailable(status: 404)
    }
    public func addReadingListEntry(edition: LanguageCode, authorization: String, list: Int, project: String, title: String) async throws -> (entry: ReadingListEntry?, duplicate: Bool) {
        throw UpstreamError.unavailable(status: 404)
    }
    public func deleteReadingListEntry(edition: LanguageCode, authorization: String, list: Int, entry: Int) async throws { throw UpstreamError.unavailable(status: 404) }
    public func readingListEntryLimit(edition: LanguageCode) async throws -> Int? { nil }
    public func readingListChanges(edition: LanguageCode, authorization: String, since date: String) async throws -> [ReadingListEntry] {
        throw UpstreamError.unavailable(status: 404)
    }

    // A stand-in with no offline calls: as a wiki without PCS.
    public func pageRevisions(lang: LanguageCode, titles: [String]) async throws -> PageRevisions { throw UpstreamError.unavailable(status: 404) }
    public func offlineResources(lang: LanguageCode, title: String, revision: Int?) async throws -> [String] { throw UpstreamError.unavailable(status: 404) }
    public func mediaList(lang: LanguageCode, title: String, revision: Int) async throws -> [MediaListItem] { throw UpstreamError.unavailable(status: 404) }

    // A stand-in with no editor: as a wiki that answers nothing about editing.
    public func editorPage(lang: LanguageCode, title: String, section: Int?, authorization: String?, uselang: String?) async throws -> EditorPage {
        throw UpstreamError.unavailable(status: 404)
    }
    public func editPermission(lang: LanguageCode, title: String, authorization: String?) async throws -> EditPermission {
        throw UpstreamError.unavailable(status: 404)
    }
    public func editToken(lang: LanguageCode, authorization: String?, forwardedFor: String?) async throws -> String { throw UpstreamError.unavailable(status: 404) }
    public func siteURL(lang: LanguageCode) -> String { "https://\(lang.code).wikipedia.org" }
    public func edit(lang: LanguageCode, _ submission: EditSubmission, token: String, authorization: String?, forwardedFor: String?, deadline: Double) async throws -> EditOutcome {
        throw UpstreamError.unavailable(status: 404)
    }

    public func unreadCount(lang: LanguageCode, authorization: String) async throws -> Int {
        try await notifications(lang: lang, authorization: authorization, filter: .unread, limit: 1, continueFrom: nil).rawcount
    }

    /// The async count in a task that prefers the calling loop.
    public func unreadCount(lang: LanguageCode, authorization: String, completion: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        let trace = TraceContext.current
        Task(executorPreference: EventLoop.current) {
            await TraceContext.$task.withValue(trace) {
                do { completion(.success(try await unreadCount(lang: lang, authorization: authorization))) } catch { completion(.failure(error)) }
            }
        }
    }
}

// Calls made with no reader's interface language: the wiki's own.
extension WikimediaAPI {
    public func notifications(lang: LanguageCode, authorization: String, filter: NotificationFilter, limit: Int, continueFrom: String?) async throws -> NotificationPage {
        try await notifications(lang: lang, authorization: authorization, filter: filter, limit: limit, continueFrom: continueFrom, uselang: nil)
    }
    public func editorPage(lang: LanguageCode, title: String, section: Int?, authorization: String?) async throws -> EditorPage {
        try await editorPage(lang: lang, title: title, section: section, authorization: authorization, uselang: nil)
    }
}
