import Foundation
import Synchronization
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// The embedded default: answers the live client's requests from bundled data, as JSON bytes in the real
/// Wikimedia shapes, so they go through the very same decoding path. No network.
///
/// Coverage: languages en, de, it. Featured feeds for the 7 days up to `referenceDate` (2026-11-20); any other
/// date gets the snapshot of the reference date (documented in the README). Demo users for notifications:
/// `Bearer demo-alice` (more than 99 unread) and `Bearer demo-bob`; any other token is refused like upstream
/// refuses an invalid OAuth token. Marking read changes this process's copy only. Reading lists: see
/// `EmbeddedReadingLists` (the same demo users; saves and removals change this process's copy only).
public final class EmbeddedTransport: UpstreamTransport, Sendable {
    public static let referenceDate = FeedDate(year: 2026, month: 11, day: 20)!
    public static let languages = ["en", "de", "it", "zh"]

    /// Which demo notifications each user has read (this process's copy of Echo's state).
    private let readState: Mutex<[String: Set<Int>]>
    private let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return e
    }()

    /// The reading lists' interface (the Saved tab).
    public let readingLists: EmbeddedReadingLists
    /// The editor's pages and their revisions (EmbeddedEditor).
    let editor = EmbeddedEditor()

    public init(readingLists: EmbeddedReadingLists = .demo()) {
        readState = Mutex(EmbeddedNotifications.initiallyRead)
        self.readingLists = readingLists
    }

    public func send(_ request: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
        if EmbeddedReadingLists.handles(request.path) { return readingLists.answer(request) }
        guard EmbeddedTransport.languages.contains(request.lang) else {
            return notFound("The embedded data does not cover language '\(request.lang)' (it has en, de and it); run with --upstream 'https://{lang}.wikipedia.org' for live data.")
        }
        let call = Call(request: request, articles: EmbeddedArticles.byLanguage[request.lang] ?? [])
        if request.path == "/w/api.php" {
            for route in Self.actionRoutes where route.matches(call) { return route.answer(self, call) }
            return raw("{\"error\":{\"code\":\"badvalue\",\"info\":\"The embedded data does not answer this query.\"}}")
        }
        for route in Self.restRoutes where request.path.hasPrefix(route.prefix) && request.path.hasSuffix(route.suffix) {
            return route.answer(self, call, route.title(in: request.path))
        }
        return notFound("No such endpoint in the embedded data.")
    }

    /// One request as the routes read it: the request, the language's articles, and the Action API's parameters
    /// (query and form together, the first of a repeated name).
    struct Call {
        let request: UpstreamRequest
        let articles: [EmbeddedArticle]
        let q: [String: String]
        var lang: String { request.lang }

        init(request: UpstreamRequest, articles: [EmbeddedArticle]) {
            self.request = request
            var q = request.path == "/w/api.php" ? Dictionary(request.query + request.form, uniquingKeysWith: { first, _ in first }) : [:]
            // As MediaWiki's converter: an Action API answer in the `variant=` asked (REST routes read their own), and
            // with `converttitles`, titles in another script find their page.
            if let variant = q["variant"] {
                // The text converted; the title the canonical one, as the Action API names pages.
                self.articles = articles.map { stored in
                    var read = EmbeddedArticles.reading(stored, lang: request.lang, variant: variant)
                    read.title = stored.title
                    return read
                }
            } else {
                self.articles = articles
            }
            if q["converttitles"] != nil, let titles = q["titles"] {
                q["titles"] = titles.split(separator: "|").map { EmbeddedArticles.storedTitle(ArticleTitle.display(String($0)), lang: request.lang) }
                    .joined(separator: "|")
            }
            self.q = q
        }

        /// A title as the article screen's calls ask for it (`redirects=1`: a redirect answers for its target).
        func resolved(_ raw: String?) -> (title: String, exists: Bool) {
            let asked = ArticleTitle.display(raw ?? "")
            let title = EmbeddedArticles.redirects[lang]?[asked] ?? asked
            return (title, articles.contains { $0.title == title })
        }
    }

    /// A REST endpoint: the paths `prefix` + title + `suffix`, and its answer for the title (percent-decoded).
    struct RESTRoute: Sendable {
        let prefix: String
        var suffix = ""
        /// PCS's page routes: a trailing `/{revision}` pins the answer to a revision.
        var pinnable = false
        let answer: @Sendable (EmbeddedTransport, Call, String) -> UpstreamResponse

        /// The title of `path`; on a pinnable route a trailing `/{revision}` is not part of it (a `/` in a title comes
        /// percent-encoded).
        func title(in path: String) -> String {
            var raw = Substring(path.dropFirst(prefix.count).dropLast(suffix.count))
            if pinnable, let slash = raw.lastIndex(of: "/"), raw[raw.index(after: slash)...].allSatisfy(\.isASCII), Int(raw[raw.index(after: slash)...]) != nil {
                raw = raw[..<slash]
            }
            return String(raw).removingPercentEncoding ?? String(raw)
        }
    }

    /// An Action API answer, chosen by the call's parameters: the first route that matches answers.
    struct ActionRoute: Sendable {
        let name: String
        let matches: @Sendable (Call) -> Bool
        let answer: @Sendable (EmbeddedTransport, Call) -> UpstreamResponse
    }

    /// The REST endpoints the client calls (docs/UPSTREAM.md), by path.
    static let restRoutes: [RESTRoute] = [
        RESTRoute(prefix: "/api/rest_v1/feed/featured/") { t, call, path in
            let parts = path.split(separator: "/")
            guard parts.count == 3, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), let date = FeedDate(year: y, month: m, day: d) else {
                return t.notFound("Invalid feed date.")
            }
            // Read in the variant asked (REST: Accept-Language), as the summaries are.
            let articles = call.articles.map { EmbeddedArticles.reading($0, lang: call.lang, variant: call.request.variant) }
            return t.json(EmbeddedFeeds.feed(lang: call.lang, date: date, articles: articles))
        },
        RESTRoute(prefix: "/api/rest_v1/page/summary/") { t, call, asked in
            let page = t.restPage(EmbeddedArticles.storedTitle(ArticleTitle.display(asked), lang: call.lang), lang: call.lang)
            if let redirect = page.redirect { return redirect }
            guard let article = call.articles.first(where: { $0.title == page.title }) else { return t.notFound("Page or revision not found.") }
            // The variant the call asks in (REST: Accept-Language), as MediaWiki's converter gives it: the text and the
            // displayed title converted, the canonical title as stored.
            let read = EmbeddedArticles.reading(article, lang: call.lang, variant: call.request.variant)
            var summary = EmbeddedTransport.summary(read, lang: call.lang)
            if read.title != article.title {
                let key = article.title.replacingOccurrences(of: " ", with: "_")
                summary.title = key
                summary.titles?.canonical = key
            }
            return t.json(summary)
        },
        RESTRoute(prefix: "/w/rest.php/v1/page/", suffix: "/html") { t, call, asked in
            let title = call.resolved(asked).title
            guard let article = call.articles.first(where: { $0.title == title }) else { return t.notFound("The page does not exist.") }
            let html = EmbeddedArticleScreens.parsoidHTML(article, lang: call.lang)
            return UpstreamResponse(status: 200, body: Array(html.utf8), headers: ["etag": "W/\"\(article.pageid)/embedded-\(FNV1a.hash(Array(html.utf8)))\""])
        },
        RESTRoute(prefix: "/api/rest_v1/page/mobile-html-offline-resources/", pinnable: true) { t, call, asked in
            // As PCS: the same list for every page of a wiki (meta's shared CSS and JavaScript, the wiki's own CSS and
            // messages), pinned or not; no redirect followed.
            guard call.articles.contains(where: { $0.title == call.resolved(asked).title }) else { return t.notFound("Page or revision not found.") }
            return t.raw(EmbeddedArticleScreens.offlineResources(lang: call.lang))
        },
        RESTRoute(prefix: "/api/rest_v1/page/media-list/", pinnable: true) { t, call, asked in
            let page = t.restPage(asked, lang: call.lang)
            if let redirect = page.redirect { return redirect }
            guard call.articles.contains(where: { $0.title == page.title }) else { return t.notFound("Page or revision not found.") }
            return t.raw(EmbeddedArticleScreens.mediaList(title: page.title, lang: call.lang))
        },
    ]

    /// The Action API calls the client makes, in the order they are told apart.
    static let actionRoutes: [ActionRoute] = [
        ActionRoute(name: "revisions", matches: { $0.q["prop"] == "info|revisions" && $0.q["rvprop"] == "ids|timestamp" }) { t, call in
            t.raw(t.revisions(call))
        },
        ActionRoute(name: "siteinfo", matches: { $0.q["meta"] == "siteinfo" }) { t, call in
            let main = EmbeddedArticles.mainPages[call.lang] ?? "Main Page"
            return t.raw("{\"batchcomplete\":true,\"query\":{\"general\":{\"mainpage\":\"\(main)\",\"sitename\":\"Wikipedia\",\"lang\":\"\(call.lang)\",\"readinglists-config\":{\"maxListsPerUser\":100,\"maxEntriesPerList\":\(t.readingLists.settings.maxEntries),\"deletedRetentionDays\":30}}}}")
        },
        ActionRoute(name: "parse", matches: { $0.q["action"] == "parse" }) { t, call in
            let page = call.resolved(call.q["page"])
            return t.raw(EmbeddedArticleScreens.parse(title: page.title, lang: call.lang, articleExists: page.exists))
        },
        ActionRoute(name: "langlinks", matches: { $0.q["prop"] == "langlinks" }) { t, call in
            let page = call.resolved(call.q["titles"])
            return t.raw(EmbeddedArticleScreens.langlinks(title: page.title, lang: call.lang, articleExists: page.exists))
        },
        ActionRoute(name: "imageinfo", matches: { $0.q["prop"] == "imageinfo" }) { t, call in
            t.raw(EmbeddedArticleScreens.imageinfo((call.q["titles"] ?? "").split(separator: "|").map(String.init)))
        },
        ActionRoute(name: "echomarkread", matches: { $0.q["action"] == "echomarkread" }) { t, call in t.markRead(call.request, call.q) },
        // The editor's calls: an anonymous edit has no credentials; credentials the wiki does not know are refused.
        ActionRoute(name: "editor", matches: { call in
            call.q["action"] == "edit" || call.q["intestactions"] == "edit" || (call.q["meta"] == "tokens" && call.request.authorization == nil)
        }) { t, call in
            let user = EmbeddedNotifications.user(for: call.request.authorization)
            if call.request.authorization != nil, user == nil { return t.invalidAuthorization() }
            if call.q["meta"] == "tokens" { return t.raw("{\"batchcomplete\":true,\"query\":{\"tokens\":{\"csrftoken\":\"+\\\\\"}}}") }
            return t.raw(call.q["action"] == "edit" ? t.editor.edit(call.q, user: user, lang: call.lang, articles: call.articles)
                                                    : t.editor.query(call.q, user: user, lang: call.lang, articles: call.articles))
        },
        ActionRoute(name: "tokens", matches: { $0.q["meta"] == "tokens" }) { t, call in
            guard let user = EmbeddedNotifications.user(for: call.request.authorization) else { return t.invalidAuthorization() }
            return t.raw("{\"batchcomplete\":true,\"query\":{\"tokens\":{\"csrftoken\":\(JSONText.quote(EmbeddedNotifications.token(for: user)))}}}")
        },
        ActionRoute(name: "notifications", matches: { $0.q["meta"] == "notifications" }) { t, call in t.notifications(call.request, call.q) },
        // Whom the credentials name: a demo user, an anonymous session, or (any other token) refused.
        ActionRoute(name: "userinfo", matches: { $0.q["meta"] == "userinfo" }) { t, call in
            let user = EmbeddedNotifications.user(for: call.request.authorization)
            if call.request.authorization != nil, user == nil { return t.invalidAuthorization() }
            return t.raw("{\"batchcomplete\":true,\"query\":{\"userinfo\":\(EmbeddedEditor.userinfo(user))}}")
        },
        ActionRoute(name: "related", matches: { $0.q["generator"] == "search" && $0.q["gsrsearch"]?.hasPrefix("morelike:") == true }) { t, call in
            let source = String(call.q["gsrsearch"]!.dropFirst("morelike:".count))
            return t.pages(t.related(to: source, in: call.articles), lang: call.lang)
        },
        ActionRoute(name: "search", matches: { $0.q["generator"] == "search" }) { t, call in
            let needle = (call.q["gsrsearch"] ?? "").lowercased()
            let hits = call.articles.filter { $0.ns == 0 && ($0.title.lowercased().contains(needle) || $0.extract.lowercased().contains(needle)) }
            return t.pages(hits, lang: call.lang)
        },
        ActionRoute(name: "random", matches: { $0.q["generator"] == "random" }) { t, call in
            var pool = call.articles.filter { $0.ns == 0 }
            pool.shuffle()
            return t.pages(Array(pool.prefix(min(20, Int(call.q["grnlimit"] ?? "") ?? 10))), lang: call.lang)
        },
        ActionRoute(name: "geosearch", matches: { $0.q["generator"] == "geosearch" }) { t, call in
            t.geosearch(call.q, articles: call.articles, lang: call.lang)
        },
        ActionRoute(name: "prefixsearch", matches: { $0.q["generator"] == "prefixsearch" }) { t, call in
            let prefix = (call.q["gpssearch"] ?? "").replacingOccurrences(of: "_", with: " ").lowercased()   // titles: `_` is a space
            var hits: [EmbeddedArticle] = call.articles.filter { $0.ns == 0 && $0.title.lowercased().hasPrefix(prefix) }
            var redirects: [(String, String)] = []
            for (from, to) in (EmbeddedArticles.redirects[call.lang] ?? [:]).sorted(by: { $0.key < $1.key }) where from.lowercased().hasPrefix(prefix) {
                if let target = call.articles.first(where: { $0.title == to }) {
                    redirects.append((from, to))
                    if !hits.contains(where: { $0.title == to }) { hits.append(target) }
                }
            }
            return t.pages(hits, lang: call.lang, redirects: redirects)
        },
    ]

    /// The title of a REST page path, and for a redirect the answer Wikimedia's REST API gives: 302 with a relative
    /// `Location` (`Bombay` → `Mumbai`).
    private func restPage(_ asked: String, lang: String) -> (title: String, redirect: UpstreamResponse?) {
        let title = ArticleTitle.display(asked)
        guard let target = EmbeddedArticles.redirects[lang]?[title] else { return (title, nil) }
        let location = UpstreamRequest.percentEncode(ArticleTitle.normalise(target), keep: ":")
        return (title, UpstreamResponse(status: 302, body: Array("{\"type\":\"redirect\"}".utf8), headers: ["location": location]))
    }

    // MARK: - Shapes

    static func thumbnail(_ file: String?, width: Int = 320) -> ImageRef? {
        guard let file else { return nil }
        // Stable, realistic Commons thumbnail paths (the two hash directories come from the name's bytes).
        let sum = file.utf8.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFFFF }
        let hex = String(format: "%02x", sum & 0xFF)
        let dir = "\(hex.prefix(1))/\(hex)"
        let suffix = file.hasSuffix(".svg") ? ".png" : ""
        return ImageRef(source: "https://upload.wikimedia.org/wikipedia/commons/thumb/\(dir)/\(file)/\(width)px-\(file)\(suffix)",
                        width: width, height: width * 2 / 3)
    }

    static func original(_ file: String?) -> ImageRef? {
        guard let file else { return nil }
        let sum = file.utf8.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFFFF }
        let hex = String(format: "%02x", sum & 0xFF)
        return ImageRef(source: "https://upload.wikimedia.org/wikipedia/commons/\(hex.prefix(1))/\(hex)/\(file)", width: 2400, height: 1600)
    }

    static func extractHTML(_ a: EmbeddedArticle) -> String {
        let escaped = a.extract.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        let bold = escaped.range(of: a.title).map { escaped.replacingCharacters(in: $0, with: "<b>\(a.title)</b>") } ?? escaped
        return "<p>\(bold)</p>"
    }

    static func summary(_ a: EmbeddedArticle, lang: String) -> PageSummary {
        let key = a.title.replacingOccurrences(of: " ", with: "_")
        let url = "https://\(lang).wikipedia.org/wiki/" + UpstreamRequest.percentEncode(key, keep: ":()',")
        return PageSummary(
            type: a.type, title: key, displaytitle: "<span class=\"mw-page-title-main\">\(a.title)</span>",
            namespace: .init(id: a.ns, text: ""), titles: .init(canonical: key, normalized: a.title, display: a.title),
            pageid: a.pageid, thumbnail: thumbnail(a.image), originalimage: original(a.image), lang: lang, dir: "ltr",
            description: a.description, coordinates: a.lat.map { GeoPoint(lat: $0, lon: a.lon ?? 0) },
            contentURLs: .init(desktop: .init(page: url), mobile: .init(page: url.replacingOccurrences(of: ".wikipedia.org", with: ".m.wikipedia.org"))),
            extract: a.extract, extractHTML: extractHTML(a), timestamp: "2026-11-18T09:12:44Z", views: nil, rank: nil)
    }

    static func queryPage(_ a: EmbeddedArticle, index: Int, dist: Double? = nil) -> QueryPage {
        QueryPage(pageid: a.pageid, ns: a.ns, title: a.title, index: index,
                  pageprops: a.isDisambiguation ? ["disambiguation": ""] : nil, thumbnail: thumbnail(a.image),
                  description: a.description, extract: a.ns == 0 ? a.extract : nil,
                  coordinates: a.lat.map { [QueryPage.Coordinate(lat: $0, lon: a.lon ?? 0, dist: dist, primary: true)] }, missing: nil)
    }

    private struct PagesEnvelope: Encodable {
        struct Query: Encodable {
            var redirects: [QueryResult.Redirect]?
            var pages: [QueryPage]
        }
        var batchcomplete = true
        var query: Query?
    }

    private func pages(_ list: [EmbeddedArticle], lang: String, redirects: [(String, String)] = [], distances: [Double]? = nil) -> UpstreamResponse {
        if list.isEmpty { return raw("{\"batchcomplete\":true}") }  // upstream drops `query` when a generator finds nothing
        let pages = list.enumerated().map { i, a in EmbeddedTransport.queryPage(a, index: i + 1, dist: distances?[i]) }
        let env = PagesEnvelope(query: .init(redirects: redirects.isEmpty ? nil : redirects.map { .init(from: $0.0, to: $0.1) }, pages: pages))
        return json(env)
    }

    /// Articles sharing a topic with the source, mixed (as the real morelike results are) with disambiguation
    /// pages, pages outside the main namespace and the source itself.
    private func related(to source: String, in articles: [EmbeddedArticle]) -> [EmbeddedArticle] {
        let title = ArticleTitle.display(source)
        let topics = Set(articles.first { $0.title == title }?.topics ?? [])
        guard !topics.isEmpty else { return [] }
        let scored = articles.map { a in (a, Set(a.topics).intersection(topics).count) }.filter { $0.1 > 0 }
        return scored.sorted { ($0.1, $1.0.title) > ($1.1, $0.0.title) }.map(\.0).prefix(20).map { $0 }
    }

    private func geosearch(_ q: [String: String], articles: [EmbeddedArticle], lang: String) -> UpstreamResponse {
        let parts = (q["ggscoord"] ?? "").split(separator: "|")
        guard parts.count == 2, let lat = Double(parts[0]), let lon = Double(parts[1]) else {
            return raw("{\"error\":{\"code\":\"invalid-coord\",\"info\":\"Invalid coordinate provided.\"}}")
        }
        let radius = Double(q["ggsradius"] ?? "10000") ?? 10_000
        var hits: [(EmbeddedArticle, Double)] = []
        guard let centre = Coordinate(latitude: lat, longitude: lon) else {
            return raw("{\"error\":{\"code\":\"invalid-coord\",\"info\":\"Invalid coordinate provided.\"}}")
        }
        for a in articles where a.ns == 0 {
            guard let alat = a.lat, let alon = a.lon, let point = Coordinate(latitude: alat, longitude: alon) else { continue }
            let d = Geo.distance(centre, point)
            if d <= radius { hits.append((a, (d * 10).rounded() / 10)) }
        }
        hits.sort { $0.1 < $1.1 }
        hits = Array(hits.prefix(Int(q["ggslimit"] ?? "20") ?? 20))
        return pages(hits.map(\.0), lang: lang, distances: hits.map(\.1))
    }

    // MARK: - Revisions

    /// `prop=info|revisions` for the titles asked (as asked: before `Call` converted them), with `normalized`,
    /// `converted` and `redirects` steps and `curtimestamp`, as MediaWiki answers with formatversion=2.
    func revisions(_ call: Call) -> String {
        let raw = (call.request.query + call.request.form).first { $0.0 == "titles" }?.1 ?? ""
        var normalized: [String] = [], converted: [String] = [], redirects: [String] = [], pages: [String] = [], named: Set<String> = []
        func step(_ from: String, _ to: String) -> String { "{\"from\":\(JSONText.quote(from)),\"to\":\(JSONText.quote(to))}" }
        for asked in raw.split(separator: "|").map(String.init) {
            var title = ArticleTitle.display(asked)
            if title != asked { normalized.append(step(asked, title)) }
            if call.q["converttitles"] != nil {
                let stored = EmbeddedArticles.storedTitle(title, lang: call.lang)
                if stored != title { converted.append(step(title, stored)); title = stored }
            }
            if let target = EmbeddedArticles.redirects[call.lang]?[title] { redirects.append(step(title, target)); title = target }
            guard named.insert(title).inserted else { continue }
            if let article = call.articles.first(where: { $0.title == title }) {
                let (revision, timestamp) = editor.current(article, lang: call.lang)
                pages.append("{\"pageid\":\(article.pageid),\"ns\":\(article.ns),\"title\":\(JSONText.quote(title)),\"contentmodel\":\"wikitext\",\"pagelanguage\":\"\(call.lang)\",\"touched\":\"\(timestamp)\",\"lastrevid\":\(revision),\"revisions\":[{\"revid\":\(revision),\"parentid\":\(revision - 1),\"timestamp\":\"\(timestamp)\"}]}")
            } else {
                pages.append("{\"ns\":0,\"title\":\(JSONText.quote(title)),\"missing\":true}")
            }
        }
        var query: [String] = []
        if !normalized.isEmpty { query.append("\"normalized\":[\(normalized.joined(separator: ","))]") }
        if !converted.isEmpty { query.append("\"converted\":[\(converted.joined(separator: ","))]") }
        if !redirects.isEmpty { query.append("\"redirects\":[\(redirects.joined(separator: ","))]") }
        query.append("\"pages\":[\(pages.joined(separator: ","))]")
        return "{\"batchcomplete\":true,\"curtimestamp\":\"\(EmbeddedClock.shared.stamp())\",\"query\":{\(query.joined(separator: ","))}}"
    }

    // MARK: - Notifications

    private func notifications(_ request: UpstreamRequest, _ q: [String: String]) -> UpstreamResponse {
        guard let user = EmbeddedNotifications.user(for: request.authorization) else { return invalidAuthorization() }
        let read = readState.withLock { $0[user] ?? [] }
        // Each notification is encoded once per user and language (read and unread forms): the stand-in for
        // Wikimedia costs a few copies per answer, so what a benchmark measures is Lede's own work.
        let all = EmbeddedNotifications.encoded(for: user, lang: request.lang)
        let unread = all.count { !read.contains($0.id) }
        let count = "\"count\":\"\(unread > 99 ? "99+" : String(unread))\""
        // As Echo: `notprop` without `list` answers the counts alone (no list, no continue; the filter, limit and
        // continue are not read).
        if let prop = q["notprop"], !prop.split(separator: "|").contains("list") {
            return UpstreamResponse(status: 200, body: Array("{\"batchcomplete\":true,\"query\":{\"notifications\":{\"rawcount\":\(unread),\(count)}}}".utf8))
        }
        let filter = q["notfilter"] ?? "read|!read"
        let filtered = all.filter { n in
            switch filter {
            case "!read": return !read.contains(n.id)
            case "read": return read.contains(n.id)
            default: return true
            }
        }
        let limit = max(1, min(50, Int(q["notlimit"] ?? "20") ?? 20))
        var start = 0
        if let cont = q["notcontinue"] {
            // Like Echo: a continue it did not issue is refused, with HTTP 200 and the Action API's error envelope.
            guard let id = Int(cont.split(separator: "|").last ?? ""), let i = filtered.firstIndex(where: { $0.id == id && cont == "\($0.unix)|\($0.id)" }) else {
                return raw("{\"error\":{\"code\":\"badcontinue\",\"info\":\"Invalid continue param. You should pass the original value returned by the previous query.\",\"docref\":\"See https://en.wikipedia.org/w/api.php for API usage.\"},\"servedby\":\"embedded\"}")
            }
            start = i
        }
        let end = min(start + limit, filtered.count)
        let next = start + limit < filtered.count ? filtered[start + limit] : nil
        var body = Array("{\"batchcomplete\":true,\"query\":{\"notifications\":{".utf8)
        if let next { body += Array("\"continue\":\"\(next.unix)|\(next.id)\",".utf8) }
        body += Array("\(count),\"list\":[".utf8)
        for (i, n) in filtered[min(start, filtered.count)..<end].enumerated() {
            if i > 0 { body.append(44) }
            body += read.contains(n.id) ? n.read : n.unread
        }
        body += Array("],\"rawcount\":\(unread)}}}".utf8)
        return UpstreamResponse(status: 200, body: body)
    }

    private func markRead(_ request: UpstreamRequest, _ q: [String: String]) -> UpstreamResponse {
        guard request.method == .post, let user = EmbeddedNotifications.user(for: request.authorization) else { return invalidAuthorization() }
        guard q["token"] == EmbeddedNotifications.token(for: user) else {
            return raw("{\"error\":{\"code\":\"badtoken\",\"info\":\"Invalid CSRF token.\"}}")
        }
        let ids = q["all"] == "1" ? EmbeddedNotifications.ids(for: user) : (q["list"] ?? "").split(separator: "|").compactMap { Int($0) }
        readState.withLock { $0[user, default: []].formUnion(ids) }
        return raw("{\"query\":{\"echomarkread\":{\"result\":\"success\"}}}")
    }

    // MARK: - Bytes

    private func json<T: Encodable>(_ value: T) -> UpstreamResponse {
        UpstreamResponse(status: 200, body: [UInt8]((try? encoder.encode(value)) ?? Data("{}".utf8)))
    }

    private func raw(_ text: String) -> UpstreamResponse { UpstreamResponse(status: 200, body: Array(text.utf8)) }

    private func notFound(_ detail: String) -> UpstreamResponse {
        let body = "{\"type\":\"https://mediawiki.org/wiki/HyperSwitch/errors/not_found\",\"title\":\"Not found.\",\"method\":\"get\",\"detail\":\(JSONText.quote(detail))}"
        return UpstreamResponse(status: 404, body: Array(body.utf8))
    }

    private func invalidAuthorization() -> UpstreamResponse {
        raw("{\"error\":{\"code\":\"mwoauth-invalid-authorization-invalid-user\",\"info\":\"The authorization headers in your request are for a user that does not exist here\"}}")
    }
}
