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
            lang = try LanguageCode.resolve(ctx.request); title = try articleTitle(ctx.parameter("title"))
            return Responses.prepared(responses, key: summaryKey(lang, title), ttl: summaryTTL, headers: ["Content-Language": lang.tag, "Vary": Responses.varyByLanguage]) {
                Card(summary: try await api.summary(lang: lang, title: title), lang: lang)
            }
        }

        router.get("/related/{title}") { ctx in
            let lang: LanguageCode, title: String, limit: Int
            lang = try LanguageCode.resolve(ctx.request)
            title = try articleTitle(ctx.parameter("title"))
            limit = try intParameter(ctx.request, "limit", default: 3, range: 1...20)
            let key = "related:\(lang.tag):\(ArticleTitle.normalise(title)):\(limit)"
            return Responses.prepared(responses, key: key, ttl: 600, headers: ["Vary": Responses.varyByLanguage]) {
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
            radius = try intParameter(ctx.request, "radius", default: 10_000, range: 10...10_000)
            let key = "nearby:\(lang.tag):\(Coordinates.format(point.latitude)),\(Coordinates.format(point.longitude)):\(radius)"
            return Responses.prepared(responses, key: key, ttl: 300, headers: ["Vary": Responses.varyByLanguage]) {
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
            return Responses.prepared(responses, key: key, ttl: 120, headers: ["Vary": Responses.varyByLanguage]) {
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
        return try await Responses.preparedValue(responses, key: key, ttl: summaryTTL, headers: ["Content-Language": lang.tag, "Vary": Responses.varyByLanguage]) {
            Card(summary: try await api.summary(lang: lang, title: title), lang: lang)
        }
    }

    static func articleTitle(_ raw: String?) throws -> String {
        if var ascii = raw, let t = ascii.withUTF8({ asciiTitle($0) }), !t.isEmpty { return t }
        let t = ArticleTitle.trimmingSpaces(raw ?? "")
        func forbidden(_ c: Unicode.Scalar) -> Bool {
            switch c.value {
            case 0..<32, 35, 60, 62, 91, 93, 123, 124, 125: return true   // controls # < > [ ] { |  }
            default: return false
            }
        }
        // At most 255 code points as sent (what openapi.yaml's maxLength counts), something besides spaces.
        guard !t.isEmpty, (raw ?? "").unicodeScalars.count <= 255, !t.unicodeScalars.contains(where: forbidden) else {
            throw Problem(status: 400, slug: "invalid-title", .problemInvalidTitle)
        }
        return t
    }

    /// `articleTitle`, then the title in its database form (`ArticleTitle.normalise`): one pass over the bytes of an ASCII
    /// title (a warm personal feed reads two titles a request), the general rules for anything else.
    static func normalisedArticleTitle(_ raw: String) throws -> String {
        var ascii = raw
        if let t = ascii.withUTF8({ asciiNormalisedTitle($0) }) { return t }
        return ArticleTitle.normalise(try articleTitle(raw))
    }

    /// The same over a title's bytes (valid UTF-8).
    static func normalisedArticleTitle(bytes: UnsafeBufferPointer<UInt8>) throws -> String {
        if let t = asciiNormalisedTitle(bytes) { return t }
        return ArticleTitle.normalise(try articleTitle(String(decoding: bytes, as: UTF8.self)))
    }

    /// The same as `asciiTitle` then `ArticleTitle.normaliseASCII`: nil when the title is not ASCII, holds a forbidden
    /// byte, is over 255 bytes or is only spaces (the general path then decides, or gives the problem).
    private static func asciiNormalisedTitle(_ u: UnsafeBufferPointer<UInt8>) -> String? {
        guard u.count <= 255, isPlainASCIITitle(u), let t = ArticleTitle.normaliseASCII(bytes: u), !t.isEmpty else { return nil }
        return t
    }

    /// Every byte printable ASCII and allowed in a title (no controls, `# < > [ ] { | }`).
    private static func isPlainASCIITitle(_ u: UnsafeBufferPointer<UInt8>) -> Bool {
        for b in u {
            if b >= 128 || b < 32 { return false }
            switch b { case 35, 60, 62, 91, 93, 123, 124, 125: return false; default: break }
        }
        return true
    }

    /// `articleTitle` over the bytes of an ASCII title (nearly every one in a URL): the title trimmed of spaces and tabs,
    /// "" when nothing else is left, nil when it is not ASCII (the general rules then decide). Throws nothing itself: a
    /// forbidden byte or a title over 255 characters answers nil too, and the general path gives the problem.
    private static func asciiTitle(_ u: UnsafeBufferPointer<UInt8>) -> String? {
        guard u.count <= 255, isPlainASCIITitle(u) else { return nil }
        var start = 0, end = u.count
        while start < end, u[start] == 32 { start += 1 }
        while end > start, u[end - 1] == 32 { end -= 1 }
        if start == 0 && end == u.count { return String(decoding: u, as: UTF8.self) }
        return String(decoding: UnsafeBufferPointer(rebasing: u[start..<end]), as: UTF8.self)
    }

    /// The space a search query is trimmed of: Unicode White_Space and the four separator controls (U+001C–U+001F),
    /// the set openapi.yaml's pattern for `q` names.
    static func isQuerySpace(_ c: Unicode.Scalar) -> Bool { c.properties.isWhitespace || (0x1C...0x1F).contains(c.value) }

    static func trimmingQuerySpace(_ s: String) -> String {
        let scalars = s.unicodeScalars
        guard let a = scalars.firstIndex(where: { !isQuerySpace($0) }), let b = scalars.lastIndex(where: { !isQuerySpace($0) }) else { return "" }
        return String(scalars[a...b])
    }

    static func intParameter(_ request: HTTPRequest, _ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let raw = request.queryParameter(name) else { return value }
        guard raw.utf8.count <= 9, raw.utf8.allSatisfy({ (48...57).contains($0) }), let n = Int(raw), range.contains(n) else {
            throw Problem(status: 400, slug: "invalid-parameter", detail: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
        return n
    }
}

import Foundation
