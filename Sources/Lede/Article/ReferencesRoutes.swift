import HTTPCore
import HTTPServer
import LedeBasics
import Wikimedia
import Upstream

/// `GET /article/{title}/references`: the citation drawer's data, built from Parsoid's HTML by `ReferenceScanner` on
/// the worker pool (never on an event loop), kept per title for `ttl` seconds and per Parsoid revision for a day (a
/// page whose revision did not change is not scanned again).
enum ReferencesRoutes {
    static let ttl = 600

    /// A page's references as the route answers them, and how many notes they hold (the article screen's count).
    struct Built: Sendable {
        let body: PreparedBody
        let count: Int
    }

    static func key(_ lang: LanguageCode, _ title: String) -> String { "references:\(lang.tag):\(ArticleTitle.normalise(title))" }

    static func built(api: any WikimediaAPI, responses: UpstreamCache, lang: LanguageCode, title: String) async throws -> Built {
        try await responses.value(key(lang, title), ttl: Double(ttl)) {
            let page = try await api.pageHTML(lang: lang, title: title)
            let revision = page.etag.map { "references-revision:\(lang.tag):\($0)" }
            if let revision, let kept = responses.cachedValue(revision, as: Built.self) { return (kept, 64) }
            let made = try await Workers.shared.run {
                let references = ReferenceScanner.scan(page.bytes, lang: lang)
                let headers = HTTPHeaders([("Cache-Control", "public, max-age=\(ttl)"), ("Content-Language", lang.bcp47), ("Vary", Responses.varyByLanguage)])
                return Built(body: PreparedBody(contentType: "application/json", bytes: references.jsonBytes, headers: headers), count: references.count)
            }
            let cost = Responses.cost(of: made.body)
            if let revision { responses.insert(revision, made, cost: cost, ttl: 86_400) }
            return (made, cost)
        }
    }

    static func register(on router: Router, api: any WikimediaAPI, responses: UpstreamCache) {
        router.get("/article/{title}/references") { ctx in
            let lang: LanguageCode, title: String
            lang = try LanguageCode.resolve(ctx.request); title = try Parameters.articleTitle(ctx.parameter("title"))
            let named = LanguageCode.named(by: ctx.request)
            if let warm = responses.cachedValue(key(lang, title), as: Built.self) { return .response(.prepared(named ? Responses.fixing(warm.body) : warm.body)) }
            return Responses.async {
                let body = try await built(api: api, responses: responses, lang: lang, title: title).body
                return .prepared(named ? Responses.fixing(body) : body)
            }
        }
    }
}
