import Foundation
import HTTPServer

/// Assembles `GET /feed`: shared sections from one coalesced, cached "shared part" per language and date (kept
/// as encoded JSON fragments), personal sections fetched concurrently, each section bounded by its deadline.
public final class FeedService: @unchecked Sendable {
    public let api: WikimediaAPI
    public let sectionTimeout: Double
    public let retryAfterSeconds = 10
    /// Shared parts, coalesced: concurrent cold requests for one language and date share one build.
    let sharedCache: UpstreamCache
    private let now: @Sendable () -> Date
    private let lock = ReadWriteLock()
    private var prepared: [PreparedKey: (body: PreparedBody, expires: Double)] = [:]
    private let maxPrepared = 512

    public init(api: WikimediaAPI, sectionTimeout: Double = 0.8, now: @escaping @Sendable () -> Date = { Date() }) {
        self.api = api
        self.sectionTimeout = sectionTimeout
        self.now = now
        self.sharedCache = UpstreamCache(limits: .init(maxEntries: 2_000, maxBytes: 64 << 20, staleIfError: 0), clock: { now().timeIntervalSinceReferenceDate })
    }

    /// How a section came out. A placeholder's `reason` and `retryAfterSeconds` come from it.
    enum Status: Equatable {
        case ok, timeout, upstreamError
        /// Wikimedia asked Lede to wait (Retry-After), or the origin's breaker is open: retry after that long.
        case backingOff(Int)
        /// Random found no article that passes the content rules.
        case noSuitableArticle

        var reason: String {
            switch self {
            case .ok: return "ok"
            case .timeout: return "timeout"
            case .upstreamError: return "upstream-error"
            case .backingOff: return "upstream-backoff"
            case .noSuitableArticle: return "no-suitable-article"
            }
        }
    }

    struct Fragment: Sendable {
        var kind: SectionKind
        var bytes: [UInt8]
        var status: Status
    }

    struct SharedPart: Sendable {
        var fragments: [SectionKind: Fragment]
        var generatedAt: String
        var expires: Date
        var hasPlaceholder: Bool { fragments.values.contains { $0.status != .ok } }
    }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return e
    }()

    static func encode<T: Encodable>(_ section: FeedSection<T>) -> [UInt8] {
        [UInt8]((try? encoder.encode(section)) ?? Data("{}".utf8))
    }

    func placeholder(_ kind: SectionKind, _ status: Status) -> Fragment {
        var retry = retryAfterSeconds
        if case .backingOff(let seconds) = status { retry = seconds }
        let section = FeedSection<NoItem>(kind: kind, status: "placeholder", items: [], reason: status.reason, retryAfterSeconds: retry)
        return Fragment(kind: kind, bytes: Self.encode(section), status: status)
    }

    func status(of error: Error) -> Status {
        if let u = error as? UpstreamError {
            if u == .timeout { return .timeout }
            if let seconds = u.retryAfter { return .backingOff(seconds) }
            return .upstreamError
        }
        if let p = error as? Problem, p.slug == ContentRoutes.noRandomArticleSlug { return .noSuitableArticle }
        return .upstreamError
    }

    // MARK: - Shared part

    func sharedTTL(isToday: Bool, placeholders: Bool) -> Double { placeholders ? 5 : (isToday ? 300 : 3_600) }

    func shared(lang: LanguageCode, date: FeedDate, isToday: Bool) async -> SharedPart {
        let key = "shared:\(lang.code):\(date):\(isToday)"
        // The build itself never throws: failures become placeholders, cached briefly.
        let ttlFor: @Sendable (SharedPart) -> Double = { [now] part in part.expires.timeIntervalSince(now()) }
        let part: SharedPart? = try? await sharedCache.value(key, ttl: 5, ttlFor: ttlFor) { [self] () async throws -> (SharedPart, Int) in
            let built = await buildShared(lang: lang, date: date, isToday: isToday)
            return (built, built.fragments.values.reduce(0) { $0 + $1.bytes.count })
        }
        return part ?? SharedPart(fragments: [:], generatedAt: Timestamp.iso8601(), expires: now())
    }

    private func buildShared(lang: LanguageCode, date: FeedDate, isToday: Bool) async -> SharedPart {
        let api = self.api
        async let featured = withDeadline(sectionTimeout) { try await api.featuredFeed(lang: lang, date: date) }
        async let random = withDeadline(sectionTimeout) { try await ContentRoutes.randomCard(api: api, lang: lang) }
        var fragments: [SectionKind: Fragment] = [:]
        let feedKinds: [SectionKind] = [.featured, .mostRead, .pictureOfTheDay, .news, .onThisDay]
        switch await featured {
        case .ok(let feed):
            if let tfa = feed.tfa {
                fragments[.featured] = Fragment(kind: .featured, bytes: Self.encode(FeedSection(kind: .featured, items: [Card(summary: tfa, lang: lang)])), status: .ok)
            }
            if let most = feed.mostread, !most.articles.isEmpty {
                fragments[.mostRead] = Fragment(kind: .mostRead, bytes: Self.encode(FeedSection(kind: .mostRead, items: FeedRules.mostRead(most, lang: lang))), status: .ok)
            }
            if let image = feed.image {
                fragments[.pictureOfTheDay] = Fragment(kind: .pictureOfTheDay, bytes: Self.encode(FeedSection(kind: .pictureOfTheDay, items: [FeedRules.picture(image, lang: lang.code)])), status: .ok)
            }
            if isToday, let news = feed.news, !news.isEmpty {
                let items = news.map { NewsItem(story: $0.story, links: ($0.links ?? []).map { Card(summary: $0, lang: lang) }) }
                fragments[.news] = Fragment(kind: .news, bytes: Self.encode(FeedSection(kind: .news, items: items)), status: .ok)
            }
            if let events = feed.onthisday, !events.isEmpty {
                let items = events.map { OnThisDayItem(text: $0.text, year: $0.year, pages: ($0.pages ?? []).map { Card(summary: $0, lang: lang) }) }
                fragments[.onThisDay] = Fragment(kind: .onThisDay, bytes: Self.encode(FeedSection(kind: .onThisDay, items: items)), status: .ok)
            }
        case .timeout:
            for k in feedKinds where k != .news || isToday { fragments[k] = placeholder(k, .timeout) }
        case .failed(let e):
            for k in feedKinds where k != .news || isToday { fragments[k] = placeholder(k, status(of: e)) }
        }
        switch await random {
        case .ok(let card): fragments[.random] = Fragment(kind: .random, bytes: Self.encode(FeedSection(kind: .random, items: [card])), status: .ok)
        case .timeout: fragments[.random] = placeholder(.random, .timeout)
        case .failed(let e): fragments[.random] = placeholder(.random, status(of: e))
        }
        let hasPlaceholder = fragments.values.contains { $0.status != .ok }
        return SharedPart(fragments: fragments, generatedAt: Timestamp.iso8601(),
                          expires: now().addingTimeInterval(sharedTTL(isToday: isToday, placeholders: hasPlaceholder)))
    }

    // MARK: - The feed

    /// The response for a request without personal parameters, if a prepared one is fresh: answered on the
    /// event loop with no upstream work and no encoding.
    public func cachedResponse(for request: FeedRequest) -> HTTPResponse? {
        guard !request.isPersonal else { return nil }
        let key = PreparedKey(request)
        let t = now().timeIntervalSinceReferenceDate
        return lock.withReadLock {
            guard let entry = prepared[key], entry.expires > t else { return nil }
            return .prepared(entry.body)
        }
    }

    public func feed(_ request: FeedRequest) async throws -> HTTPResponse {
        let wantsShared = request.sections.contains { $0.isShared }
        async let sharedPart: SharedPart? = wantsShared ? shared(lang: request.lang, date: request.date, isToday: request.isToday) : nil
        async let personal = personalFragments(request)
        let part = await sharedPart
        let personalParts = await personal

        var chosen: [Fragment] = []
        for kind in request.sections {
            if kind.isShared { if let f = part?.fragments[kind] { chosen.append(f) } }
            else if let f = personalParts[kind] { chosen.append(f) }
        }
        if !chosen.isEmpty && chosen.allSatisfy({ $0.status != .ok }) {
            let timeouts = chosen.allSatisfy { $0.status == .timeout }
            let waits = chosen.compactMap { f -> Int? in if case .backingOff(let s) = f.status { return s }; return nil }
            if waits.count == chosen.count, let wait = waits.max() {
                throw Problem(status: 503, slug: "upstream-rate-limited", detail: "Wikipedia asked Lede to slow down; retry after \(wait) s.",
                              headers: ["Retry-After": "\(wait)"])
            }
            throw Problem(status: timeouts ? 504 : 502, slug: timeouts ? "upstream-timeout" : "upstream-unavailable",
                          detail: "No section of the feed could be loaded from Wikipedia. Retry shortly.", headers: ["Retry-After": "\(retryAfterSeconds)"])
        }
        var body = Array("{\"date\":\"\(request.date)\",\"generatedAt\":\"\(part?.generatedAt ?? Timestamp.iso8601())\",\"lang\":\"\(request.lang.code)\",\"sections\":[".utf8)
        for (i, f) in chosen.enumerated() {
            if i > 0 { body.append(44) }
            body.append(contentsOf: f.bytes)
        }
        body.append(contentsOf: Array("]}".utf8))

        if !request.isPersonal {
            let prepared = PreparedBody(contentType: "application/json", bytes: body, headers: headers(request))
            let expires = (part?.expires ?? now().addingTimeInterval(5)).timeIntervalSinceReferenceDate
            let t = now().timeIntervalSinceReferenceDate
            lock.withWriteLock {
                if self.prepared.count >= maxPrepared { self.prepared = self.prepared.filter { $0.value.expires > t } }
                if self.prepared.count < maxPrepared { self.prepared[PreparedKey(request)] = (prepared, expires) }
            }
            return .prepared(prepared)
        }
        var h = headers(request)
        h.set("ETag", "\"\(FNV1a.hash(body))\"")
        return .json(body, headers: h)
    }

    func personalFragments(_ request: FeedRequest) async -> [SectionKind: Fragment] {
        let api = self.api, lang = request.lang, t = sectionTimeout
        async let because: Fragment? = {
            guard request.sections.contains(.becauseYouRead), let source = request.because else { return nil }
            switch await withDeadline(t, { try await api.related(lang: lang, title: source) }) {
            case .ok(let r):
                return Fragment(kind: .becauseYouRead, bytes: Self.encode(FeedSection(kind: .becauseYouRead, items: ContentRules.related(r, source: source, lang: lang, limit: 3),
                                                                                  source: ArticleTitle.display(source))), status: .ok)
            case .timeout: return placeholder(.becauseYouRead, .timeout)
            case .failed(let e): return placeholder(.becauseYouRead, status(of: e))
            }
        }()
        async let nearby: Fragment? = {
            guard request.sections.contains(.nearby), let point = request.nearby else { return nil }
            switch await withDeadline(t, { try await api.nearby(lang: lang, latitude: point.latitude, longitude: point.longitude, radiusMeters: 10_000) }) {
            case .ok(let r):
                return Fragment(kind: .nearby, bytes: Self.encode(FeedSection(kind: .nearby, items: ContentRules.nearby(r, from: point, lang: lang),
                                                                          latitude: point.latitude, longitude: point.longitude)), status: .ok)
            case .timeout: return placeholder(.nearby, .timeout)
            case .failed(let e): return placeholder(.nearby, status(of: e))
            }
        }()
        let showContinue = FeedRequest.showsContinueReading(backgroundedAt: request.backgroundedAt, now: now())
        async let cont: Fragment? = {
            guard request.sections.contains(.continueReading), showContinue, let title = request.continueTitle else { return nil }
            switch await withDeadline(t, { try await api.summary(lang: lang, title: title) }) {
            case .ok(let s): return Fragment(kind: .continueReading, bytes: Self.encode(FeedSection(kind: .continueReading, items: [Card(summary: s, lang: lang)])), status: .ok)
            case .timeout: return placeholder(.continueReading, .timeout)
            case .failed(let e):
                if case UpstreamError.notFound = e { return nil }   // the article is gone: no card, not a retry
                return placeholder(.continueReading, status(of: e))
            }
        }()
        var out: [SectionKind: Fragment] = [:]
        for f in [await because, await nearby, await cont].compactMap({ $0 }) { out[f.kind] = f }
        return out
    }

    /// What a non-personal feed depends on.
    struct PreparedKey: Hashable {
        var lang: String
        var day: Int
        var isToday: Bool
        var sections: Int
        init(_ r: FeedRequest) {
            lang = r.lang.code; day = r.date.dayNumber; isToday = r.isToday
            sections = r.sections.reduce(0) { $0 | $1.bit }
        }
    }

    func headers(_ r: FeedRequest) -> HTTPHeaders {
        var h = HTTPHeaders()
        h.set("Cache-Control", r.isPersonal ? "private, max-age=60" : "public, max-age=60")
        h.set("Vary", "Accept-Encoding, Accept-Language")
        h.set("Content-Language", r.lang.code)
        return h
    }
}
