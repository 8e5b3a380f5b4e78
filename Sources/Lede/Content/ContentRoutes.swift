import HTTPServer
import LedeBasics
import Wikimedia

/// `/summary/{title}`, `/related/{title}`, `/random`, `/nearby`, `/search`.
enum ContentRoutes {
    static let maxQueryLength = 300

    struct RelatedBody: Encodable { var source: String; var lang: String; var items: [Card] }
    struct NearbyBody: Encodable { var latitude: Double; var longitude: Double; var radius: Int; var lang: String; var items: [Card] }
    struct SearchBody: Encodable {
        var query: String; var lang: String; var items: [Card]
        /// The result the app opens on the keyboard's Search: absent when no title matches the query.
        var match: String?
    }

    /// `responses` keeps encoded answers of the public, cacheable routes (summary, related, nearby, search).
    static func register(on router: Router, api: any WikimediaAPI, random: RandomPool, responses: UpstreamCache) {
        router.get("/summary/{title}") { ctx in
            let lang: LanguageCode, title: String
            lang = try LanguageCode.resolve(ctx.request); title = try Parameters.articleTitle(ctx.parameter("title"))
            return Responses.prepared(responses, key: summaryKey(lang, title), ttl: summaryTTL, headers: ["Content-Language": lang.bcp47, "Vary": Responses.varyByLanguage],
                                      languageFixed: LanguageCode.named(by: ctx.request)) {
                Card(summary: try await api.summary(lang: lang, title: title), lang: lang)
            }
        }

        router.get("/related/{title}") { ctx in
            let lang: LanguageCode, title: String, limit: Int
            lang = try LanguageCode.resolve(ctx.request)
            title = try Parameters.articleTitle(ctx.parameter("title"))
            limit = try Parameters.int(ctx.request, "limit", default: 3, range: 1...20)
            let key = "related:\(lang.tag):\(ArticleTitle.normalise(title)):\(limit)"
            return Responses.prepared(responses, key: key, ttl: 600, headers: ["Vary": Responses.varyByLanguage], languageFixed: LanguageCode.named(by: ctx.request)) {
                let result = try await api.related(lang: lang, title: title)
                return RelatedBody(source: ArticleTitle.display(title), lang: lang.code,
                                   items: ContentRules.related(result, source: title, lang: lang, limit: limit))
            }
        }

        router.get("/random") { ctx in
            let lang: LanguageCode
            lang = try LanguageCode.resolve(ctx.request)
            if let ready = random.next(lang: lang) { return .response(.prepared(ready.body)) }
            return Responses.async { .prepared(try await random.card(lang: lang).body) }
        }

        router.get("/nearby") { ctx in
            let lang: LanguageCode, point: Coordinate, radius: Int
            lang = try LanguageCode.resolve(ctx.request)
            point = try Coordinate.parse(lat: ctx.request.queryParameter("lat"), lon: ctx.request.queryParameter("lon")).get()
            radius = try Parameters.int(ctx.request, "radius", default: 10_000, range: 10...10_000)
            let key = "nearby:\(lang.tag):\(Coordinates.format(point.latitude)),\(Coordinates.format(point.longitude)):\(radius)"
            return Responses.prepared(responses, key: key, ttl: 300, headers: ["Vary": Responses.varyByLanguage], languageFixed: LanguageCode.named(by: ctx.request)) {
                let result = try await api.nearby(lang: lang, latitude: point.latitude, longitude: point.longitude, radiusMeters: radius)
                return NearbyBody(latitude: point.latitude, longitude: point.longitude, radius: radius, lang: lang.code,
                                  items: ContentRules.nearby(result, from: point, lang: lang))
            }
        }

        router.get("/search") { ctx in
            let lang: LanguageCode, q: String
            lang = try LanguageCode.resolve(ctx.request)
            let raw = ctx.request.queryParameter("q") ?? ""
            guard raw.unicodeScalars.count <= maxQueryLength else { throw Problem(status: 400, slug: "invalid-query", .problemQueryTooLong, String(maxQueryLength)) }
            q = trimmingQuerySpace(raw)
            guard !q.isEmpty else { throw Problem(status: 400, slug: "invalid-query", .problemQueryRequired) }
            let key = "search:\(lang.tag):\(q)"
            return Responses.prepared(responses, key: key, ttl: 120, headers: ["Vary": Responses.varyByLanguage], languageFixed: LanguageCode.named(by: ctx.request)) {
                let prefix = try await api.prefixSearch(lang: lang, query: q)
                let fullText = prefix.pages.filter { $0.isMainNamespace }.count < ContentRules.searchFill ? try await api.fullTextSearch(lang: lang, query: q) : nil
                let items = ContentRules.search(prefix: prefix, fullText: fullText, lang: lang)
                return SearchBody(query: q, lang: lang.code, items: items, match: ContentRules.match(q, in: items))
            }
        }
    }

    /// Seconds a `/summary` answer (a card) is kept and may be kept by caches.
    static let summaryTTL = 300

    /// Where a `/summary` answer is kept in the responses cache.
    static func summaryKey(_ lang: LanguageCode, _ title: String) -> String { "summary:\(lang.tag):\(ArticleTitle.normalise(title))" }

    /// The card `/summary` answers, as its prepared body (the very entry that route keeps: a card made here serves
    /// `/summary` too, and the other way round).
    static func summaryCard(api: any WikimediaAPI, responses: UpstreamCache, lang: LanguageCode, title: String) async throws -> PreparedBody {
        let key = summaryKey(lang, title)
        if let warm = responses.cachedValue(key, as: PreparedBody.self) { return warm }
        return try await Responses.preparedValue(responses, key: key, ttl: summaryTTL, headers: ["Content-Language": lang.bcp47, "Vary": Responses.varyByLanguage]) {
            Card(summary: try await api.summary(lang: lang, title: title), lang: lang)
        }
    }

    /// The space a search query is trimmed of: Unicode White_Space and the four separator controls (U+001C–U+001F),
    /// the set openapi.yaml's pattern for `q` names.
    static func isQuerySpace(_ c: Unicode.Scalar) -> Bool { c.properties.isWhitespace || (0x1C...0x1F).contains(c.value) }

    static func trimmingQuerySpace(_ s: String) -> String {
        let scalars = s.unicodeScalars
        guard let a = scalars.firstIndex(where: { !isQuerySpace($0) }), let b = scalars.lastIndex(where: { !isQuerySpace($0) }) else { return "" }
        return String(scalars[a...b])
    }

}

import Foundation
import Upstream
