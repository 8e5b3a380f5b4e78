import Foundation

/// The one implementation of `WikimediaAPI`: builds each request exactly as ../shared/UPSTREAM.md says,
/// sends it through a transport (live network or embedded data), maps statuses and Action API errors to
/// `UpstreamError`, decodes the JSON, and caches public calls.
public final class WikimediaClient: WikimediaAPI, @unchecked Sendable {
    /// Seconds each kind of public call is cached. `random` and user-bound calls are never cached.
    public struct TTLs: Sendable {
        public var feedToday: Double = 300
        public var feedPast: Double = 3_600
        public var summary: Double = 600
        public var related: Double = 600
        public var nearby: Double = 300
        public var search: Double = 120
        public init() {}
    }

    public let transport: UpstreamTransport
    public let cache: UpstreamCache
    public let metrics: UpstreamMetrics
    /// Per-call deadline in seconds (`--upstream-timeout`).
    public let deadline: Double
    public let ttls: TTLs
    private let today: @Sendable () -> FeedDate

    public init(transport: UpstreamTransport, cache: UpstreamCache = UpstreamCache(), metrics: UpstreamMetrics = UpstreamMetrics(),
                deadline: Double = 2, ttls: TTLs = TTLs(), today: @escaping @Sendable () -> FeedDate = { FeedDate.today() }) {
        self.transport = transport; self.cache = cache; self.metrics = metrics
        self.deadline = deadline; self.ttls = ttls; self.today = today
    }

    // MARK: - Requests, exactly as the contract lists them

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

    static func randomRequest(_ lang: LanguageCode) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("generator", "random"),
            ("grnnamespace", "0"), ("grnfilterredir", "nonredirects"), ("grnlimit", "12"),
            ("prop", "pageprops|pageimages|description|extracts"),
        ] + pageProps + [("pilimit", "12"), ("exintro", "1"), ("explaintext", "1"), ("exlimit", "12")], kind: "random")
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

    static func tokenRequest(_ lang: LanguageCode, _ auth: String) -> UpstreamRequest {
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
            try await rest(req, as: PageSummary.self)
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

    public func csrfToken(lang: LanguageCode, authorization: String) async throws -> String {
        let (q, _) = try await action(Self.tokenRequest(lang, authorization), as: TokensQuery.self)
        guard let token = q.tokens?.csrftoken, !token.isEmpty else { throw UpstreamError.malformed("no csrf token in the answer") }
        // An anonymous session gets the token "+\\": the credentials were not accepted.
        if token == "+\\" { throw UpstreamError.notAuthorised }
        return token
    }

    public func markRead(lang: LanguageCode, authorization: String, ids: [Int]?, token: String) async throws {
        if let ids { precondition(ids.count <= 50, "callers batch mark-read by 50") }
        let (q, _) = try await action(Self.markReadRequest(lang, authorization, ids, token), as: MarkReadQuery.self)
        guard q.echomarkread?.result == "success" else { throw UpstreamError.malformed("echomarkread did not report success") }
    }

    // MARK: - Exchange, status mapping, decoding

    private func exchange(_ req: UpstreamRequest) async throws -> UpstreamResponse {
        let start = Date()
        do {
            let response = try await transport.send(req, deadline: deadline)
            let outcome: String
            switch response.status {
            case 200..<300: outcome = "ok"
            case 404: outcome = "not_found"
            case 401, 403: outcome = "not_authorised"
            default: outcome = "unavailable"
            }
            metrics.record(kind: req.kind, outcome: outcome, seconds: Date().timeIntervalSince(start))
            return response
        } catch let e as UpstreamError {
            metrics.record(kind: req.kind, outcome: e.outcome, seconds: Date().timeIntervalSince(start))
            throw e
        } catch {
            metrics.record(kind: req.kind, outcome: "unavailable", seconds: Date().timeIntervalSince(start))
            throw UpstreamError.unavailable(status: 0)
        }
    }

    private struct RESTError: Decodable { var detail: String?; var title: String? }

    /// REST v1: the status says what happened; errors carry a JSON body with `detail`.
    func rest<T: Decodable>(_ req: UpstreamRequest, as type: T.Type) async throws -> (T, Int) {
        let response = try await exchange(req)
        switch response.status {
        case 200..<300: break
        case 404:
            let detail = (try? JSONDecoder().decode(RESTError.self, from: Data(response.body)))?.detail
            throw UpstreamError.notFound(detail ?? "not found upstream")
        case 401, 403: throw UpstreamError.notAuthorised
        default: throw UpstreamError.unavailable(status: response.status)
        }
        do {
            return (try JSONDecoder().decode(T.self, from: Data(response.body)), response.body.count)
        } catch {
            throw UpstreamError.malformed("\(req.kind): the answer is not the expected JSON shape")
        }
    }

    static let authErrorCodes: Set<String> = ["notloggedin", "login-required", "mwoauth-invalid-authorization", "badtoken", "permissiondenied"]

    /// Action API: errors come as `{"error":{"code","info"}}`, usually with HTTP 200.
    func action<Q: Decodable>(_ req: UpstreamRequest, as type: Q.Type) async throws -> (Q, Int) {
        let response = try await exchange(req)
        switch response.status {
        case 200..<300: break
        case 401, 403: throw UpstreamError.notAuthorised
        case 404: throw UpstreamError.notFound("not found upstream")
        default: throw UpstreamError.unavailable(status: response.status)
        }
        let envelope: ActionEnvelope<Q>
        do {
            envelope = try JSONDecoder().decode(ActionEnvelope<Q>.self, from: Data(response.body))
        } catch {
            throw UpstreamError.malformed("\(req.kind): the answer is not the expected JSON shape")
        }
        if let e = envelope.error {
            if Self.authErrorCodes.contains(e.code) || e.code.hasPrefix("mwoauth-invalid-authorization") { throw UpstreamError.notAuthorised }
            if e.code == "ratelimited" || e.code == "maxlag" || e.code == "readonly" || e.code.hasPrefix("internal_api_error") {
                throw UpstreamError.unavailable(status: 503)
            }
            throw UpstreamError.malformed("upstream API error '\(e.code)'")
        }
        guard let q = envelope.query else {
            // A generator with no results answers without `query` at all.
            if let empty = Self.emptyQuery(Q.self) { return (empty, response.body.count) }
            throw UpstreamError.malformed("\(req.kind): no query in the answer")
        }
        return (q, response.body.count)
    }

    private static func emptyQuery<Q: Decodable>(_ type: Q.Type) -> Q? {
        try? JSONDecoder().decode(Q.self, from: Data("{}".utf8))
    }

    func pages(_ req: UpstreamRequest) async throws -> (QueryResult, Int) {
        let (q, size) = try await action(req, as: PagesQuery.self)
        let pages = (q.pages ?? []).filter { $0.missing != true }
            .enumerated().sorted { ($0.element.index ?? $0.offset, $0.offset) < ($1.element.index ?? $1.offset, $1.offset) }.map(\.element)
        return (QueryResult(pages: pages, redirects: q.redirects ?? []), size)
    }
}
