import EventLoops
import Foundation
import Synchronization
import HTTPServer

/// The one implementation of `WikimediaAPI`: builds each request exactly as docs/UPSTREAM.md says,
/// sends it through a transport (live network or embedded data), maps statuses and Action API errors to
/// `UpstreamError`, decodes the JSON, and caches public calls.
public final class WikimediaClient: WikimediaAPI, Sendable {
    /// Seconds each kind of public call is cached. `random` and user-bound calls are never cached.
    public struct TTLs: Sendable {
        public var feedToday: Double = 300
        public var feedPast: Double = 3_600
        public var summary: Double = 600
        public var related: Double = 600
        public var nearby: Double = 300
        public var search: Double = 120
        /// The article screen's parts: contents, media and file credits change with edits; language links rarely.
        public var contents: Double = 600
        public var languages: Double = 3_600
        public var media: Double = 600
        public var files: Double = 3_600
        public init() {}
    }

    public let transport: UpstreamTransport
    public let cache: UpstreamCache
    public let metrics: UpstreamMetrics
    /// Retry-After back-off, circuit breaker and concurrency bound, per origin.
    public let guards: UpstreamGuard
    /// Per-call deadline in seconds (`--upstream-timeout`).
    public let deadline: Double
    public let ttls: TTLs
    /// Warnings about upstream answers (items skipped). Never carries user data.
    public let logger: Logger
    private let today: @Sendable () -> FeedDate
    /// Redirects followed per call, at most (a loop or a longer chain is `unavailable`).
    public static let maxRedirects = 3

    public init(transport: UpstreamTransport, cache: UpstreamCache = UpstreamCache(), metrics: UpstreamMetrics = UpstreamMetrics(),
                guards: UpstreamGuard = UpstreamGuard(), deadline: Double = 2, ttls: TTLs = TTLs(), logger: Logger = Logger(level: .off),
                today: @escaping @Sendable () -> FeedDate = { FeedDate.today() }) {
        self.transport = transport; self.cache = cache; self.metrics = metrics; self.guards = guards
        self.deadline = deadline; self.ttls = ttls; self.logger = logger; self.today = today
    }

    // MARK: - Requests, exactly as the contract lists them

    static func contentsRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "parse"), ("page", ArticleTitle.normalise(title)), ("prop", "sections|displaytitle"), ("redirects", "1"),
            ("format", "json"), ("formatversion", "2"),
        ], kind: "contents")
    }

    static func languagesRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("prop", "langlinks"), ("titles", ArticleTitle.normalise(title)), ("lllimit", "max"),
            ("llprop", "url|langname|autonym"), ("redirects", "1"), ("format", "json"), ("formatversion", "2"),
        ], kind: "languages")
    }

    static func siteInfoRequest(_ lang: LanguageCode) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("meta", "siteinfo"), ("siprop", "general"), ("format", "json"), ("formatversion", "2"),
        ], kind: "siteinfo")
    }

    static func mediaRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/api/rest_v1/page/media-list/" + UpstreamRequest.percentEncode(ArticleTitle.normalise(title), keep: ":"), kind: "media")
    }

    /// At most 50 files a call (the Action API's limit for `titles`).
    static let maxFilesPerCall = 50

    static func filesRequest(_ lang: LanguageCode, _ files: [String]) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("titles", files.joined(separator: "|")), ("prop", "imageinfo"), ("iiprop", "url|size|extmetadata"),
            ("iiurlwidth", "640"), ("iiextmetadatafilter", "Artist|Credit|LicenseShortName|LicenseUrl|ImageDescription|AttributionRequired"),
            ("format", "json"), ("formatversion", "2"),
        ], kind: "files")
    }

    static func pageHTMLRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        var req = UpstreamRequest(lang: lang.code, path: "/w/rest.php/v1/page/" + UpstreamRequest.percentEncode(ArticleTitle.normalise(title), keep: ":") + "/html",
                                  kind: "html")
        req.keepsETag = true
        return req
    }

    static func featuredRequest(_ lang: LanguageCode, _ date: FeedDate) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/api/rest_v1/feed/featured/\(date.pathComponent)", kind: "feed")
    }

    static func summaryRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/api/rest_v1/page/summary/" + UpstreamRequest.percentEncode(ArticleTitle.normalise(title), keep: ":"), kind: "summary")
    }

    private static let pageProps: [(String, String)] = [("ppprop", "disambiguation"), ("piprop", "thumbnail"), ("pithumbsize", "320")]

    static func relatedRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("generator", "search"),
            ("gsrsearch", "morelike:" + ArticleTitle.display(title)), ("gsrnamespace", "0"), ("gsrlimit", "20"),
            ("gsrqiprofile", "classic_noboostlinks"), ("prop", "pageprops|pageimages|description|extracts"),
        ] + pageProps + [("pilimit", "20"), ("exintro", "1"), ("explaintext", "1"), ("exlimit", "20")], kind: "related")
    }

    /// Random pages per call: the most the extracts module answers for at once.
    static let randomBatch = 20

    static func randomRequest(_ lang: LanguageCode) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("generator", "random"),
            ("grnnamespace", "0"), ("grnfilterredir", "nonredirects"), ("grnlimit", "\(randomBatch)"),
            ("prop", "pageprops|pageimages|description|extracts"),
        ] + pageProps + [("pilimit", "\(randomBatch)"), ("exintro", "1"), ("explaintext", "1"), ("exlimit", "\(randomBatch)")], kind: "random")
    }

    static func nearbyRequest(_ lang: LanguageCode, _ lat: Double, _ lon: Double, _ radius: Int) -> UpstreamRequest {
        let point = "\(Coordinates.format(lat))|\(Coordinates.format(lon))"
        return UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("generator", "geosearch"),
            ("ggscoord", point), ("ggsradius", "\(radius)"), ("ggslimit", "20"),
            ("prop", "coordinates|pageprops|pageimages|description"), ("ppprop", "disambiguation"),
            ("codistancefrompoint", point), ("colimit", "20"), ("piprop", "thumbnail"), ("pithumbsize", "320"), ("pilimit", "20"),
        ], kind: "nearby")
    }

    static func prefixSearchRequest(_ lang: LanguageCode, _ q: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("generator", "prefixsearch"),
            ("gpssearch", q), ("gpsnamespace", "0"), ("gpslimit", "24"), ("prop", "pageprops|pageimages|description"),
        ] + pageProps + [("pilimit", "24"), ("redirects", "1")], kind: "search")
    }

    static func fullTextSearchRequest(_ lang: LanguageCode, _ q: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("generator", "search"),
            ("gsrsearch", q), ("gsrnamespace", "0"), ("gsrwhat", "text"), ("gsrlimit", "24"),
            ("prop", "pageprops|pageimages|description"),
        ] + pageProps + [("pilimit", "24"), ("redirects", "1")], kind: "search")
    }

    static func notificationsRequest(_ lang: LanguageCode, _ auth: String, _ filter: NotificationFilter, _ limit: Int, _ cont: String?) -> UpstreamRequest {
        var q: [(String, String)] = [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("meta", "notifications"),
            ("notformat", "model"), ("notprop", "list|count"), ("notfilter", filter.upstreamValue), ("notlimit", "\(limit)"),
        ]
        if let cont { q.append(("notcontinue", cont)) }
        return UpstreamRequest(lang: lang.code, path: "/w/api.php", query: q, authorization: auth, kind: "notifications")
    }

    /// The badge's call: Echo's unread count alone (`notprop=count`). Echo then fetches and renders no notification
    /// (a `list|count` call with `notlimit=1` made it load and format the newest unread one, which the badge threw
    /// away): it answers `query.notifications{rawcount, count}` from its cached per-user count.
    static func unreadCountRequest(_ lang: LanguageCode, _ auth: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("meta", "notifications"), ("notprop", "count"),
        ], authorization: auth, kind: "notifications")
    }

    static func tokenRequest(_ lang: LanguageCode, _ auth: String?) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("meta", "tokens"), ("type", "csrf"),
        ], authorization: auth, kind: "token")
    }

    static func markReadRequest(_ lang: LanguageCode, _ auth: String, _ ids: [Int]?, _ token: String) -> UpstreamRequest {
        var form: [(String, String)] = [("action", "echomarkread"), ("format", "json"), ("formatversion", "2")]
        if let ids { form.append(("list", ids.map(String.init).joined(separator: "|"))) } else { form.append(("all", "1")) }
        form.append(("token", token))
        return UpstreamRequest(method: .post, lang: lang.code, path: "/w/api.php", form: form, authorization: auth, kind: "markread")
    }

    // MARK: - WikimediaAPI

    public func featuredFeed(lang: LanguageCode, date: FeedDate) async throws -> FeaturedFeed {
        let req = Self.featuredRequest(lang, date)
        let ttl = date >= today() ? ttls.feedToday : ttls.feedPast
        return try await cache.value("feed:\(lang.code):\(date)", ttl: ttl) { [self] in try await rest(req, as: FeaturedFeed.self) }
    }

    public func summary(lang: LanguageCode, title: String) async throws -> PageSummary {
        let req = Self.summaryRequest(lang, title)
        return try await cache.value("summary:\(lang.code):\(ArticleTitle.normalise(title))", ttl: ttls.summary) { [self] in
            let (summary, size, redirected) = try await restFollowing(req, as: PageSummary.self)
            var s = summary
            // Reached through a redirect (`Bombay` → `Mumbai`): the card says where the reader came from.
            if redirected, ArticleTitle.normalise(title) != ArticleTitle.normalise(s.title) { s.redirectedFrom = ArticleTitle.display(title) }
            return (s, size)
        }
    }

    public func related(lang: LanguageCode, title: String) async throws -> QueryResult {
        let req = Self.relatedRequest(lang, title)
        return try await cache.value("related:\(lang.code):\(ArticleTitle.normalise(title))", ttl: ttls.related) { [self] in try await pages(req) }
    }

    public func randomCandidates(lang: LanguageCode) async throws -> QueryResult {
        try await pages(Self.randomRequest(lang)).0
    }

    public func nearby(lang: LanguageCode, latitude: Double, longitude: Double, radiusMeters: Int) async throws -> QueryResult {
        let req = Self.nearbyRequest(lang, latitude, longitude, radiusMeters)
        return try await cache.value("nearby:\(lang.code):\(req.pathAndQuery)", ttl: ttls.nearby) { [self] in try await pages(req) }
    }

    public func prefixSearch(lang: LanguageCode, query: String) async throws -> QueryResult {
        let req = Self.prefixSearchRequest(lang, query)
        return try await cache.value("prefix:\(lang.code):\(query)", ttl: ttls.search) { [self] in try await pages(req) }
    }

    public func fullTextSearch(lang: LanguageCode, query: String) async throws -> QueryResult {
        let req = Self.fullTextSearchRequest(lang, query)
        return try await cache.value("fulltext:\(lang.code):\(query)", ttl: ttls.search) { [self] in try await pages(req) }
    }

    public func notifications(lang: LanguageCode, authorization: String, filter: NotificationFilter, limit: Int, continueFrom: String?) async throws -> NotificationPage {
        let (q, _) = try await action(Self.notificationsRequest(lang, authorization, filter, limit, continueFrom), as: NotificationsQuery.self)
        guard let n = q.notifications else { throw UpstreamError.malformed("no query.notifications in the answer") }
        return NotificationPage(list: n.list ?? [], count: n.count, rawcount: n.rawcount ?? 0, continue: n.continue)
    }

    /// The badge's call: the whole answer is validated, but only `rawcount` (and an `error`) is read out of it,
    /// with no `Codable` machinery — this runs on every app open.
    public func unreadCount(lang: LanguageCode, authorization: String) async throws -> Int {
        let (req, _) = unreadRequest(lang, authorization)
        return try unread(in: try await actionAnswer(req), of: req)
    }

    /// The badge's count through a callback: without a task when the call can start on this loop
    /// (`exchange(_:gate:reading:completion:)`), the steps of `actionAnswer` and `unreadCount` in the one callback.
    public func unreadCount(lang: LanguageCode, authorization: String, completion: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        let (req, gate) = unreadRequest(lang, authorization)
        // A closure that captures nothing: no context is made for it.
        exchange(req, gate: gate, reading: { client, response, req in try client.unread(in: try WikimediaClient.actionStatus(response), of: req) },
                 completion: completion)
    }

    /// The badge's call is the same for every user of a language but for the credentials: made ready once.
    private func unreadRequest(_ lang: LanguageCode, _ authorization: String) -> (UpstreamRequest, UpstreamGuard.Gate) {
        var (req, gate) = preparedUnread(lang)
        req.authorization = authorization
        return (req, gate)
    }

    /// The unread count in an answer to the badge's call (an Action API error thrown as what it means).
    private func unread(in response: UpstreamResponse, of req: UpstreamRequest) throws -> Int {
        let found: [JSONPaths.Value?]
        do { found = try Self.unreadQuery.read(response.body) } catch {
            throw UpstreamError.malformed("\(req.kind): the answer is not the expected JSON shape")
        }
        if let error = found[0] {
            guard error.kind == .object, let code = found[1], code.kind == .string else {
                throw UpstreamError.malformed("\(req.kind): the answer is not the expected JSON shape")
            }
            try actionError(code.text, info: found[2]?.text, req, response)
        }
        guard found[3]?.kind == .object else { throw UpstreamError.malformed("no query.notifications in the answer") }
        return found[4]?.lenientInt ?? 0
    }

    /// The badge's request for `lang` (no credentials), as the transport prepared it, with its origin's guard
    /// handle: one lookup in the language's table per call.
    func preparedUnread(_ lang: LanguageCode) -> (UpstreamRequest, UpstreamGuard.Gate) {
        if let known = languages.withLock({ $0[lang.code] }), let unread = known.unread { return (unread, known.gate) }
        let gate = originGate(lang: lang.code)
        let ready = transport.prepare(Self.unreadCountRequest(lang, ""))
        languages.withLock { $0[lang.code]?.unread = ready }
        return (ready, gate)
    }

    /// error, error.code, error.info, query.notifications, query.notifications.rawcount — read by index above.
    static let unreadPaths = [["error"], ["error", "code"], ["error", "info"], ["query", "notifications"], ["query", "notifications", "rawcount"]]
    static let unreadQuery = JSONPaths.Query(unreadPaths)

    public func csrfToken(lang: LanguageCode, authorization: String) async throws -> String {
        let (q, _) = try await action(Self.tokenRequest(lang, authorization), as: TokensQuery.self)
        guard let token = q.tokens?.csrftoken, !token.isEmpty else { throw UpstreamError.malformed("no csrf token in the answer") }
        // An anonymous session gets the token "+\\": the credentials were not accepted.
        if token == "+\\" { throw UpstreamError.notAuthorised }
        return token
    }

    /// The edit's token: the user's, or an anonymous session's (`+\\`) without credentials. A user's that comes back
    /// anonymous means the credentials were not accepted.
    public func editToken(lang: LanguageCode, authorization: String?) async throws -> String {
        guard let authorization else {
            let (q, _) = try await action(Self.tokenRequest(lang, nil), as: TokensQuery.self)
            guard let token = q.tokens?.csrftoken, !token.isEmpty else { throw UpstreamError.malformed("no csrf token in the answer") }
            return token
        }
        return try await csrfToken(lang: lang, authorization: authorization)
    }

    public func markRead(lang: LanguageCode, authorization: String, ids: [Int]?, token: String) async throws {
        if let ids { precondition(ids.count <= 50, "callers batch mark-read by 50") }
        let (q, _) = try await action(Self.markReadRequest(lang, authorization, ids, token), as: MarkReadQuery.self)
        guard q.echomarkread?.result == "success" else { throw UpstreamError.malformed("echomarkread did not report success") }
    }

    // MARK: - Exchange, status mapping, decoding

    /// The origin (`scheme://host[:port]`) a request for `lang` goes to: what back-off and the breaker are kept by.
    public func articleContents(lang: LanguageCode, title: String) async throws -> ArticleContents {
        let req = Self.contentsRequest(lang, title)
        return try await cache.value("contents:\(lang.code):\(ArticleTitle.normalise(title))", ttl: ttls.contents) { [self] in
            let response = try await actionAnswer(req)
            let answer = try decode(ParseAnswer.self, response.body, kind: req.kind)
            if let e = answer.error {
                if e.code == "missingtitle" || e.code == "invalidtitle" || e.code == "nosuchpageid" { throw UpstreamError.notFound("The page does not exist.") }
                try actionError(e.code, info: e.info, req, response)
            }
            guard let parse = answer.parse, let title = parse.title else { throw UpstreamError.malformed("contents: no parse in the answer") }
            return (ArticleContents(title: title, displayTitle: parse.displaytitle, sections: parse.sections ?? []), response.body.count)
        }
    }

    public func languageLinks(lang: LanguageCode, title: String) async throws -> [LanguageLink] {
        let req = Self.languagesRequest(lang, title)
        return try await cache.value("languages:\(lang.code):\(ArticleTitle.normalise(title))", ttl: ttls.languages) { [self] in
            let (q, size) = try await action(req, as: LangLinksQuery.self)
            guard let page = q.pages?.first else { throw UpstreamError.malformed("languages: no page in the answer") }
            if page.missing || page.invalid { throw UpstreamError.notFound("The page does not exist.") }
            return (page.langlinks ?? [], size)
        }
    }

    /// Asked once per edition a day (an edition's main page changes about never).
    public func mainPage(lang: LanguageCode) async throws -> String {
        guard let main = try await siteGeneral(lang: lang).mainpage, !main.isEmpty else { throw UpstreamError.malformed("siteinfo: no general.mainpage") }
        return main
    }

    /// The edition's `meta=siteinfo` general facts, kept a day.
    func siteGeneral(lang: LanguageCode) async throws -> SiteInfoQuery.General {
        let req = Self.siteInfoRequest(lang)
        return try await cache.value("siteinfo:\(lang.code)", ttl: 86_400) { [self] in
            let (q, size) = try await action(req, as: SiteInfoQuery.self)
            guard let general = q.general else { throw UpstreamError.malformed("siteinfo: no general") }
            return (general, size)
        }
    }

    /// Parsoid's HTML of the page (redirects followed) and its `ETag` (revision and render): bytes, never decoded as JSON
    /// and never kept here (the references built from them are). Larger than the body cap is `tooLarge`.
    public func pageHTML(lang: LanguageCode, title: String) async throws -> PageHTML {
        let (response, _) = try await exchange(Self.pageHTMLRequest(lang, title))
        switch response.status {
        case 200..<300: return PageHTML(bytes: response.body, etag: response.headers["etag"])
        case 404: throw UpstreamError.notFound("The page does not exist.")
        case 401, 403: throw UpstreamError.notAuthorised
        default: throw UpstreamError.unavailable(status: response.status)
        }
    }

    public func mediaList(lang: LanguageCode, title: String) async throws -> [MediaListItem] {
        let req = Self.mediaRequest(lang, title)
        return try await cache.value("media:\(lang.code):\(ArticleTitle.normalise(title))", ttl: ttls.media) { [self] in
            let (answer, size, _) = try await restFollowing(req, as: MediaListAnswer.self)
            return (answer.items ?? [], size)
        }
    }

    public func fileInfo(lang: LanguageCode, files: [String]) async throws -> [String: FileInfo] {
        let wanted = Array(files.prefix(Self.maxFilesPerCall))
        guard !wanted.isEmpty else { return [:] }
        let req = Self.filesRequest(lang, wanted)
        return try await cache.value("files:\(lang.code):\(wanted.joined(separator: "|"))", ttl: ttls.files) { [self] in
            let (q, size) = try await action(req, as: ImageInfoQuery.self)
            var out: [String: FileInfo] = [:]
            // Answers use spaces where the request had underscores (`normalized`): matched on the normalised title.
            let byKey = Dictionary((q.pages ?? []).map { (ArticleTitle.normalise($0.title), $0) }, uniquingKeysWith: { a, _ in a })
            for file in wanted { if let info = byKey[ArticleTitle.normalise(file)] { out[file] = info } }
            return (out, size)
        }
    }

    public func origin(lang: String) -> String { originGate(lang: lang).name }

    /// The origin of a language's calls, as its guard handle (its name is the origin).
    func originGate(lang: String) -> UpstreamGuard.Gate {
        if let known = languages.withLock({ $0[lang] }) { return known.gate }
        let base = transport.baseURL(lang: lang)
        let gate = guards.gate(origin: URIReference(base).origin ?? base)
        return languages.withLock { table in
            if let known = table[lang] { return known.gate }
            table[lang] = Language(gate: gate)
            return gate
        }
    }

    /// What is kept per language (bounded by the languages Lede accepts, a few hundred codes): its origin's guard
    /// handle and the badge's prepared request.
    private struct Language {
        let gate: UpstreamGuard.Gate
        var unread: UpstreamRequest?
    }
    private let languages = Mutex<[String: Language]>([:])

    /// One REST exchange whatever its status (redirects followed): for interfaces whose error bodies say more than
    /// their status (the reading lists').
    func restAnswer(_ req: UpstreamRequest) async throws -> UpstreamResponse { try await exchange(req).0 }

    /// One call with its redirects followed (GET only, same origin and base path, at most `maxRedirects`).
    /// Returns the final answer and whether a redirect was followed.
    @inline(__always)
    private func exchange(_ req: UpstreamRequest) async throws -> (UpstreamResponse, Bool) {
        try await follow(try await guardedExchange(req), of: req)
    }

    /// The redirects of an answer to `req` followed, if it is one.
    private func follow(_ first: UpstreamResponse, of req: UpstreamRequest) async throws -> (UpstreamResponse, Bool) {
        var response = first
        var current = req
        var redirected = false
        var hops = 0
        while true {
            guard let next = try redirectTarget(response, of: current, hops: hops) else { return (response, redirected) }
            hops += 1; redirected = true; current = next
            response = try await guardedExchange(current)
        }
    }

    /// A redirect Lede may follow: its status, and a `Location`.
    private static func isRedirect(_ response: UpstreamResponse) -> Bool {
        [301, 302, 303, 307, 308].contains(response.status) && response.headers["location"] != nil
    }

    /// The request a redirect answer leads to, nil when `response` is not a redirect; throws for one Lede does not
    /// follow (another origin, not a GET, too many hops).
    private func redirectTarget(_ response: UpstreamResponse, of req: UpstreamRequest, hops: Int) throws -> UpstreamRequest? {
        guard Self.isRedirect(response), let location = response.headers["location"] else { return nil }
        guard hops < Self.maxRedirects, req.method == .get, let next = redirect(req, to: location) else {
            throw UpstreamError.unavailable(status: response.status)
        }
        return next
    }

    /// `location` resolved against the request's URL (RFC 3986 §5.2); nil when it leaves the base URL (another
    /// origin, or outside the template's path): Lede does not follow a redirect to somewhere else.
    func redirect(_ req: UpstreamRequest, to location: String) -> UpstreamRequest? {
        let base = transport.baseURL(lang: req.lang)
        let baseRef = URIReference(base)
        guard let origin = baseRef.origin, !location.isEmpty, !location.utf8.contains(where: { $0 < 33 || $0 == 127 }) else { return nil }
        let target = URIReference(base + req.pathAndQuery).resolving(URIReference(location))
        let basePath = baseRef.path.hasSuffix("/") ? String(baseRef.path.dropLast()) : baseRef.path
        guard target.origin?.lowercased() == origin.lowercased(), target.path.hasPrefix(basePath + "/") else { return nil }
        var next = req
        next.path = String(target.path.dropFirst(basePath.count)) + (target.query.map { "?" + $0 } ?? "")
        next.query = []
        return next
    }

    /// One HTTP exchange under the origin's guard: Retry-After back-off and the breaker are checked first,
    /// a slot of the origin's concurrency is taken within the deadline, and the outcome is recorded.
    @inline(__always)
    private func guardedExchange(_ req: UpstreamRequest) async throws -> UpstreamResponse {
        let admitted = try admit(req)
        return try await guardedExchange(req, admitted, holdsSlot: guards.tryAcquire(admitted.gate))
    }

    /// A call let through by the origin's guard: who it is for, whether it is the breaker's probe, and when it began.
    struct Admitted {
        let gate: UpstreamGuard.Gate
        let probe: Bool
        let start: UInt64
    }

    /// Back-off and breaker, checked before anything is sent (a refusal is counted here).
    private func admit(_ req: UpstreamRequest, gate known: UpstreamGuard.Gate? = nil) throws -> Admitted {
        let gate = known ?? originGate(lang: req.lang)
        do {
            return Admitted(gate: gate, probe: try guards.admit(gate, kind: req.kind), start: Syscall.monotonicNanos())
        } catch let e as UpstreamError {
            metrics.record(kind: req.kind, outcome: e.outcome, seconds: nil)
            throw e
        }
    }

    private static func seconds(since start: UInt64) -> Double { Double(Syscall.monotonicNanos() &- start) / 1e9 }

    /// The rest of a guarded exchange: a slot (unless one is held already) within the deadline, the send, the
    /// outcome settled.
    private func guardedExchange(_ req: UpstreamRequest, _ a: Admitted, holdsSlot: Bool) async throws -> UpstreamResponse {
        try await takeSlot(req, a, holdsSlot: holdsSlot, deadline: deadline)
        return try settle(req, a, await send(req, a, deadline: deadline) ?? .failure(.timeout))
    }

    /// A slot of the origin's concurrency within `deadline` (unless one is held already); a timeout otherwise, counted.
    private func takeSlot(_ req: UpstreamRequest, _ a: Admitted, holdsSlot: Bool, deadline: Double) async throws {
        do {
            if !holdsSlot { try await guards.acquire(a.gate, timeout: deadline) }
        } catch {
            if a.probe { guards.record(a.gate, outcome: .abandoned, probe: true) }
            metrics.record(kind: req.kind, outcome: "timeout", seconds: Self.seconds(since: a.start))
            throw UpstreamError.timeout
        }
    }

    /// The exchange itself in what is left of `deadline` since the call began; nil when nothing is left (nothing sent).
    private func send(_ req: UpstreamRequest, _ a: Admitted, deadline: Double) async -> Result<UpstreamResponse, UpstreamError>? {
        let remaining = deadline - Self.seconds(since: a.start)
        guard remaining > 0 else { return nil }
        do { return .success(try await transport.send(req, deadline: remaining)) }
        catch let e as UpstreamError { return .failure(e) }
        catch { return .failure(.unavailable(status: 0)) }
    }

    /// The held slot given back and the outcome of an exchange recorded (breaker, metrics, Wikimedia's
    /// back-pressure): the answer, or the error the call ends with.
    private func settle(_ req: UpstreamRequest, _ a: Admitted, _ result: Result<UpstreamResponse, UpstreamError>) throws -> UpstreamResponse {
        guards.release(a.gate)
        let seconds = Self.seconds(since: a.start)
        switch result {
        case .success(let response):
            let retryAfter = guards.retryAfterSeconds(response.headers["retry-after"])
            // Wikimedia's back-pressure: 429, or 503 with Retry-After. The origin answered: not a breaker failure.
            if response.status == 429 || (response.status == 503 && retryAfter != nil) {
                guards.record(a.gate, outcome: .answered, probe: a.probe)
                let wait = guards.backOff(origin: a.gate.name, kind: req.kind, seconds: retryAfter ?? guards.settings.defaultRetryAfter)
                metrics.record(kind: req.kind, outcome: "rate_limited", seconds: seconds)
                logger.warning("upstream asked to back off", [("origin", a.gate.name), ("kind", req.kind), ("status", "\(response.status)"), ("retry_after", "\(wait)")])
                throw UpstreamError.rateLimited(retryAfter: wait)
            }
            let outcome: String
            switch response.status {
            case 200..<400: outcome = "ok"
            case 404: outcome = "not_found"
            case 401, 403: outcome = "not_authorised"
            default: outcome = "unavailable"
            }
            guards.record(a.gate, outcome: response.status >= 500 ? .failed : .answered, probe: a.probe)
            metrics.record(kind: req.kind, outcome: outcome, seconds: seconds)
            return response
        case .failure(let e):
            if case .rateLimited = e { throw e }   // a transport's own refusal: no exchange to record
            let failed: Bool
            switch e {
            case .timeout, .unavailable, .untrusted: failed = true
            default: failed = false
            }
            guards.record(a.gate, outcome: failed ? .failed : .answered, probe: a.probe)
            metrics.record(kind: req.kind, outcome: e.outcome, seconds: seconds)
            throw e
        }
    }

    /// A write (an edit): one exchange under the origin's guard within its own `deadline`, never sent twice and never
    /// redirected. Refused before sending (back-off, breaker, no slot within the deadline, a certificate): the usual
    /// `UpstreamError`. Failed once sent (no complete answer in time, the connection lost): `EditOutcomeUnknown`.
    func sendOnce(_ req: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
        let a = try admit(req)
        try await takeSlot(req, a, holdsSlot: guards.tryAcquire(a.gate), deadline: deadline)
        guard let result = await send(req, a, deadline: deadline) else {
            guards.release(a.gate)
            throw UpstreamError.timeout
        }
        do { return try settle(req, a, result) } catch let e as UpstreamError {
            switch e {
            case .timeout, .unavailable, .tooLarge: throw EditOutcomeUnknown(cause: e)
            default: throw e
            }
        }
    }

    /// `exchange` answered through a callback: when the guard lets the call through with a free slot and the
    /// transport can start it here (the live transport, on a server loop), no task is made and `completion` runs
    /// where the transport answers (that loop); otherwise — queueing for a slot, another transport, a redirect to
    /// follow — the rest goes on in a task that prefers the current loop. Either way the same steps, in the same
    /// order, as the async `exchange`. `read` takes the count out of the answer; it captures nothing, so the exchange's
    /// own closure is the only one made between the transport and `completion`.
    private func exchange(_ req: UpstreamRequest, gate: UpstreamGuard.Gate?,
                          reading read: @escaping @Sendable (WikimediaClient, UpstreamResponse, UpstreamRequest) throws -> Int,
                          completion: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        let a: Admitted
        do { a = try admit(req, gate: gate) } catch { completion(.failure(error)); return }
        let trace = TraceContext.current   // the request's, for the steps that go on in a task
        let holdsSlot = guards.tryAcquire(a.gate)
        let remaining = deadline - Self.seconds(since: a.start)
        if holdsSlot, remaining > 0, transport.start(req, deadline: remaining, completion: { [self] result in
            let response: UpstreamResponse
            do { response = try settle(req, a, result) } catch { completion(.failure(error)); return }
            guard Self.isRedirect(response) else { completion(Result { try read(self, response, req) }); return }
            Task(executorPreference: EventLoop.current) { [self] in   // `follow` checks the redirect and makes the hops
                await TraceContext.$task.withValue(trace) {
                    do { completion(.success(try read(self, try await follow(response, of: req).0, req))) } catch { completion(.failure(error)) }
                }
            }
        }) { return }
        Task(executorPreference: EventLoop.current) { [self] in
            await TraceContext.$task.withValue(trace) {
                do { completion(.success(try read(self, try await follow(try await guardedExchange(req, a, holdsSlot: holdsSlot), of: req).0, req))) }
                catch { completion(.failure(error)) }
            }
        }
    }

    /// Decodes an answer leniently (see Lenient.swift), counting and logging the list items it had to skip.
    func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8], kind: String) throws -> T {
        let skipped = SkippedItems(pagesKind: kind)
        var decoder = UpstreamJSONDecoder()
        decoder.userInfo[SkippedItems.key] = skipped
        let value: T
        do { value = try decoder.decode(T.self, from: body) } catch {
            throw UpstreamError.malformed("\(kind): the answer is not the expected JSON shape")
        }
        for (itemKind, n) in skipped.counts.sorted(by: { $0.key < $1.key }) {
            metrics.skipped(kind: itemKind, count: n)
            logger.warning("upstream items skipped", [("call", kind), ("kind", itemKind), ("count", "\(n)")])
        }
        return value
    }

    private struct RESTError: Decodable { var detail: String?; var title: String? }

    /// REST v1: the status says what happened; errors carry a JSON body with `detail`.
    func rest<T: Decodable>(_ req: UpstreamRequest, as type: T.Type) async throws -> (T, Int) {
        let (value, size, _) = try await restFollowing(req, as: type)
        return (value, size)
    }

    /// Like `rest`, and says whether a redirect was followed.
    func restFollowing<T: Decodable>(_ req: UpstreamRequest, as type: T.Type) async throws -> (T, Int, Bool) {
        let (response, redirected) = try await exchange(req)
        switch response.status {
        case 200..<300: break
        case 404:
            let detail = (try? UpstreamJSONDecoder().decode(RESTError.self, from: response.body))?.detail
            throw UpstreamError.notFound(detail ?? "not found upstream")
        case 401, 403: throw UpstreamError.notAuthorised
        default: throw UpstreamError.unavailable(status: response.status)
        }
        return (try decode(T.self, response.body, kind: req.kind), response.body.count, redirected)
    }

    static let authErrorCodes: Set<String> = ["notloggedin", "login-required", "mwoauth-invalid-authorization", "badtoken", "permissiondenied"]

    /// Action API: errors come as `{"error":{"code","info"}}`, usually with HTTP 200.
    func action<Q: Decodable>(_ req: UpstreamRequest, as type: Q.Type) async throws -> (Q, Int) {
        let response = try await actionAnswer(req)
        let envelope = try decode(ActionEnvelope<Q>.self, response.body, kind: req.kind)
        if let e = envelope.error { try actionError(e.code, info: e.info, req, response) }
        guard let q = envelope.query else {
            // A generator with no results answers without `query` at all.
            if let empty = Self.emptyQuery(Q.self) { return (empty, response.body.count) }
            throw UpstreamError.malformed("\(req.kind): no query in the answer")
        }
        return (q, response.body.count)
    }

    /// An Action API exchange whose status is a success (anything else thrown as what it means).
    func actionAnswer(_ req: UpstreamRequest) async throws -> UpstreamResponse {
        try Self.actionStatus(try await exchange(req).0)
    }

    /// An Action API answer by its HTTP status: the answer when 2xx, else the error it means.
    private static func actionStatus(_ response: UpstreamResponse) throws -> UpstreamResponse {
        switch response.status {
        case 200..<300: return response
        case 401, 403: throw UpstreamError.notAuthorised
        case 404: throw UpstreamError.notFound("not found upstream")
        default: throw UpstreamError.unavailable(status: response.status)
        }
    }

    /// Action API errors caused by what the client sent: a 400 naming the parameter, never Wikimedia's fault.
    static let clientErrorCodes: Set<String> = ["badcontinue", "badvalue", "baddatatype", "toomanyvalues", "missingparam", "paramempty",
                                                "invalidparammix", "invalidtitle", "notitle", "badinteger", "integeroutofrange"]

    /// Wikimedia's parameter names → the client's (Lede's) names.
    static let clientParameters: [String: String] = [
        "continue": "continue", "notcontinue": "continue", "notfilter": "filter", "notlimit": "limit", "notwikis": "lang",
        "titles": "title", "title": "title", "page": "title", "gsrsearch": "q", "srsearch": "q", "gpssearch": "q", "pssearch": "q",
        "gsrlimit": "limit", "gpslimit": "limit", "srlimit": "limit", "ggscoord": "lat", "ggsradius": "radius", "list": "ids",
    ]

    /// The client's parameter an Action API error is about: from the code (`badcontinue`) or from the `parameter "x"`
    /// its info names.
    static func clientParameter(code: String, info: String?) -> String? {
        if code == "badcontinue" { return "continue" }
        guard let info, let r = info.range(of: "parameter \"") else {
            return code == "invalidtitle" || code == "notitle" ? "title" : nil
        }
        let name = info[r.upperBound...].prefix { $0 != "\"" }
        return clientParameters[String(name)] ?? (name.isEmpty ? nil : String(name))
    }

    /// What an Action API `{"error":{"code","info"}}` means; always throws.
    func actionError(_ code: String, info: String?, _ req: UpstreamRequest, _ response: UpstreamResponse) throws -> Never {
        if Self.authErrorCodes.contains(code) || code.hasPrefix("mwoauth-invalid-authorization") { throw UpstreamError.notAuthorised }
        if Self.clientErrorCodes.contains(code) { throw UpstreamError.rejected(parameter: Self.clientParameter(code: code, info: info), code: code) }
        if code == "ratelimited" || code == "maxlag" {
            // The Action API's own back-pressure, with HTTP 200 (maxlag also sends Retry-After).
            let origin = self.origin(lang: req.lang)
            let wait = guards.backOff(origin: origin, kind: req.kind,
                                      seconds: guards.retryAfterSeconds(response.headers["retry-after"]) ?? guards.settings.defaultRetryAfter)
            logger.warning("upstream asked to back off", [("origin", origin), ("kind", req.kind), ("error", code), ("retry_after", "\(wait)")])
            throw UpstreamError.rateLimited(retryAfter: wait)
        }
        if code == "readonly" || code.hasPrefix("internal_api_error") {
            throw UpstreamError.unavailable(status: 503)
        }
        throw UpstreamError.malformed("upstream API error '\(code)'")
    }

    private static func emptyQuery<Q: Decodable>(_ type: Q.Type) -> Q? {
        try? UpstreamJSONDecoder().decode(Q.self, from: Array("{}".utf8))
    }

    func pages(_ req: UpstreamRequest) async throws -> (QueryResult, Int) {
        let (q, size) = try await action(req, as: PagesQuery.self)
        let pages = (q.pages ?? []).filter { $0.missing != true }
            .enumerated().sorted { ($0.element.index ?? $0.offset, $0.offset) < ($1.element.index ?? $1.offset, $1.offset) }.map(\.element)
        return (QueryResult(pages: pages, redirects: q.redirects ?? []), size)
    }
}
