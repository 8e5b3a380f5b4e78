import Foundation
import Synchronization
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// Assembles `GET /feed`: shared sections from one coalesced, cached "shared part" per language and date (kept
/// as encoded JSON fragments), personal sections fetched concurrently, each section bounded by its deadline.
final class FeedService: Sendable {
    let api: any WikimediaAPI
    /// The feed's random card comes from the same pool as `/random`.
    let random: RandomPool
    let sectionTimeout: Double
    /// The deadline of an upstream call (`--upstream-timeout`): a streamed feed waits this long for a section.
    let upstreamTimeout: Double
    /// A section that failed: when to try again (Wikimedia's own Retry-After wins).
    let retryAfterSeconds = 10
    /// A section merely slow at the section deadline: when its data is expected (the rest of the upstream deadline).
    var pendingRetry: Int { max(1, Int((upstreamTimeout - sectionTimeout).rounded(.up))) }
    /// Shared parts, coalesced: concurrent cold requests for one language and date share one build.
    let sharedCache: KeyedCache<FeedKey>
    let now: @Sendable () -> Date
    /// Non-personal feeds kept whole, by what they depend on.
    let prepared = Mutex<[PreparedKey: (body: PreparedBody, expires: Double)]>([:])
    let maxPrepared = 512
    /// Personal sections' fragments: "Because you read" and "Continue reading" by language and normalised title,
    /// nearby by language and geosearch cell. Bounded by entries and bytes, least recently used evicted first.
    let fragments: KeyedCache<FeedKey>
    /// Each user's nearby section for an exact point, as one fragment.
    let nearbyMemo = NearbyMemo()

    /// Lifetime of today's shared sections (`--feed-max-age`); a complete shared part is also served up to this long
    /// past it while one refresh runs (stale-while-revalidate).
    let feedMaxAge: Double
    /// The last good data of each shared section, by language and date: what a refresh that times out or fails keeps
    /// showing instead of a placeholder, while it is younger than `staleBound`.
    let lastGood = Mutex<[FeedKey: [SectionKind: (fragment: Fragment, at: Double)]]>([:])
    let maxLastGood = 256
    /// How old a shared section's last good data may be and still stand in for a refresh that did not land in time:
    /// ten lifetimes (`--feed-max-age` × 10). Past it, a placeholder.
    var staleBound: Double { feedMaxAge * 10 }
    /// The lifetime an answer gets while it shows stale data: the time by which the refresh is expected.
    var staleMaxAge: Int { max(1, Int(upstreamTimeout.rounded(.up))) }

    init(api: any WikimediaAPI, sectionTimeout: Double = 0.8, upstreamTimeout: Double = 2, feedMaxAge: Double = 300, fragmentLimits: UpstreamCache.Limits = .init(maxEntries: 20_000, maxBytes: 64 << 20, staleIfError: 0, notFoundTTL: 0),
                random: RandomPool? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.api = api
        self.random = random ?? RandomPool(api: api, clock: { now().timeIntervalSinceReferenceDate })
        self.sectionTimeout = sectionTimeout
        self.upstreamTimeout = max(upstreamTimeout, sectionTimeout)
        self.feedMaxAge = feedMaxAge
        self.now = now
        self.sharedCache = KeyedCache(limits: .init(maxEntries: 2_000, maxBytes: 64 << 20, staleIfError: 0), clock: { now().timeIntervalSinceReferenceDate })
        self.fragments = KeyedCache(limits: fragmentLimits, clock: { now().timeIntervalSinceReferenceDate })
    }

    /// How a section came out. A placeholder's `reason` and `retryAfterSeconds` come from it.
    enum Status: Equatable {
        case ok, timeout, upstreamError
        /// Wikimedia asked Lede to wait (Retry-After), or the origin's breaker is open: retry after that long.
        case backingOff(Int)
        /// Random found no article that passes the content rules.
        case noSuitableArticle

        /// What a failed part's error means for the screen (the feed's sections and the article screen's parts alike).
        init(_ error: Error) {
            if let u = error as? UpstreamError {
                if u == .timeout { self = .timeout; return }
                if let seconds = u.retryAfter { self = .backingOff(seconds); return }
                self = .upstreamError; return
            }
            if let p = error as? Problem, p.slug == RandomPool.noArticle.slug { self = .noSuitableArticle; return }
            self = .upstreamError
        }

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

    /// One section encoded (and compressed) once.
    struct Fragment: Sendable {
        var kind: SectionKind
        var body: BodyFragment
        var status: Status
        /// A placeholder's `retryAfterSeconds`; for last good data standing in for a refresh, how long an answer
        /// showing it may be kept.
        var retryAfter: Int? = nil
        /// Last good data standing in for a refresh that timed out or failed.
        var stale = false
    }

    /// The sections every user of a language and date shares, with the feed's head (date, generatedAt, lang).
    /// A class, immutable: every warm personal feed reads one, and a reference costs one retain where the struct's
    /// copy cost one per field.
    final class SharedPart: Sendable {
        let fragments: [SectionKind: Fragment]
        let date: FeedDate
        let lang: String
        let generatedAt: String
        let expires: Date
        let head: BodyFragment
        /// Claimed when a section that missed its deadline lands (then this part is not worth keeping).
        let landed: Once?
        /// The head and every shared section in screen order, joined, as one fragment: compressed as one stream
        /// (sections repeat each other's keys and URLs), for the usual request that shows every shared section.
        let run: BodyFragment
        /// What the sections of `run` came out as (an answer showing the run counts them), and their earliest retry.
        let runStatuses: Statuses
        let runEarliestRetry: Int?

        init(fragments: [SectionKind: Fragment], date: FeedDate, lang: String, generatedAt: String, expires: Date, head: BodyFragment,
             landed: Once?, run: BodyFragment) {
            self.fragments = fragments; self.date = date; self.lang = lang; self.generatedAt = generatedAt; self.expires = expires
            self.head = head; self.landed = landed; self.run = run
            var statuses = Statuses()
            var earliest: Int?
            for f in SectionKind.ordered.compactMap({ fragments[$0] }) { statuses.append(f.status, retry: f.retryAfter, earliest: &earliest) }
            runStatuses = statuses
            runEarliestRetry = earliest
        }
        /// A section in it is a placeholder (not last good data standing in for one).
        var hasPlaceholder: Bool { fragments.values.contains { $0.status != .ok } }
        var cost: Int { fragments.values.reduce(head.bytes.count + run.bytes.count + run.deflated.count) { $0 + $1.body.bytes.count + $1.body.deflated.count } }
    }

    /// A section in place of one that is not there, with when to ask again: for a section that timed out, `retry` (by
    /// default the rest of the upstream deadline: when its data is expected); Wikimedia's Retry-After; else the default.
    func placeholder(_ kind: SectionKind, _ status: Status, retry: Int? = nil) -> Fragment {
        var after = status == .timeout ? (retry ?? pendingRetry) : retryAfterSeconds
        if case .backingOff(let seconds) = status { after = seconds }
        let section = FeedSection<NoItem>(kind: kind, status: "placeholder", items: [], reason: status.reason, retryAfterSeconds: after)
        return Fragment(kind: kind, body: BodyFragment(JSONLines.encode(section)), status: status, retryAfter: after)
    }

    static func isNotFound(_ error: Error) -> Bool {
        if case .notFound = error as? UpstreamError { return true }
        return false
    }

    func status(of error: Error) -> Status { Status(error) }

    // MARK: - Shared part

    /// How long a shared part is kept: a part with placeholders only until its earliest retry (so that the sections
    /// that were on their way are asked for again as soon as they are expected).
    func sharedTTL(isToday: Bool, earliestRetry: Int?) -> Double { earliestRetry.map(Double.init) ?? (isToday ? feedMaxAge : max(feedMaxAge, 3_600)) }

    /// Forgets a shared part that holds placeholders once the data they stood for has landed: the next request
    /// builds it anew from the (now warm) upstream cache.
    func dropShared(lang: LanguageCode, date: FeedDate, isToday: Bool) {
        sharedCache.remove(FeedKey.shared(lang: lang, day: date.dayNumber, isToday: isToday))
        prepared.withLock { kept in
            kept = kept.filter { !($0.key.lang == lang.tag && $0.key.day == date.dayNumber && $0.key.isToday == isToday) }
        }
    }

    func shared(lang: LanguageCode, date: FeedDate, isToday: Bool) async -> SharedPart {
        let key = FeedKey.shared(lang: lang, day: date.dayNumber, isToday: isToday)
        // The build itself never throws: failures become placeholders, cached briefly.
        // A part whose late sections already landed while it was being built is not kept at all.
        let ttlFor: @Sendable (SharedPart) -> Double = { [now] part in part.landed?.claimed == true ? 0 : part.expires.timeIntervalSince(now()) }
        // A part without placeholders (last good data standing in included) is served stale while one refresh runs;
        // one with placeholders never is.
        let staleFor: @Sendable (SharedPart) -> Double = { [feedMaxAge] part in part.hasPlaceholder ? 0 : feedMaxAge }
        let part: SharedPart? = try? await sharedCache.value(key, ttl: 5, ttlFor: ttlFor, staleWhileRevalidate: staleFor) { [self] () async throws -> (SharedPart, Int) in
            let built = await buildShared(lang: lang, date: date, isToday: isToday)
            return (built, built.cost)
        }
        return part ?? Self.sharedPart([:], date: date, lang: lang.tag, expires: now())
    }

    func buildShared(lang: LanguageCode, date: FeedDate, isToday: Bool) async -> SharedPart {
        let api = self.api
        // Work that misses the section deadline goes on; when it lands, the placeholders it left are dropped.
        let flag = Once()
        let landed: @Sendable (Bool) -> Void = { [self] ok in
            guard ok else { return }
            _ = flag.claim()
            dropShared(lang: lang, date: date, isToday: isToday)
        }
        async let featured = withDeadline(sectionTimeout, late: { landed(Self.succeeded($0)) }) { try await api.featuredFeed(lang: lang, date: date) }
        let pool = self.random
        async let random = withDeadline(sectionTimeout, late: { landed(Self.succeeded($0)) }) { try await pool.card(lang: lang).card }
        var fragments = featuredFragments(await featured, lang: lang, isToday: isToday)
        if let f = randomFragment(await random) { fragments[.random] = f }
        fragments = withLastGood(fragments, key: FeedKey.shared(lang: lang, day: date.dayNumber, isToday: isToday))
        let earliest = fragments.values.compactMap(\.retryAfter).min()
        return Self.sharedPart(fragments, date: date, lang: lang.tag, expires: now().addingTimeInterval(sharedTTL(isToday: isToday, earliestRetry: earliest)),
                               landed: earliest != nil ? flag : nil)
    }

    /// Keeps each real section as its language and date's last good data, and puts the last good data (younger than
    /// `staleBound`) in place of each placeholder, with the placeholder's retry as its lifetime: a refresh that timed
    /// out or failed shows what was there a moment ago, never a hole.
    func withLastGood(_ fragments: [SectionKind: Fragment], key: FeedKey) -> [SectionKind: Fragment] {
        let t = now().timeIntervalSinceReferenceDate, bound = staleBound, maxKeys = maxLastGood, shortest = staleMaxAge
        return lastGood.withLock { kept in
            var out = fragments
            var good = kept[key] ?? [:]
            for (kind, f) in fragments {
                if f.status == .ok, !f.stale { good[kind] = (f, t); continue }
                guard let last = good[kind], t - last.at <= bound else { continue }
                var standIn = last.fragment
                standIn.stale = true
                standIn.retryAfter = min(f.retryAfter ?? shortest, shortest)
                out[kind] = standIn
            }
            if kept[key] == nil, kept.count >= maxKeys,
               let oldest = kept.min(by: { ($0.value.values.map(\.at).max() ?? 0) < ($1.value.values.map(\.at).max() ?? 0) })?.key {
                kept[oldest] = nil
            }
            if !good.isEmpty { kept[key] = good }
            return out
        }
    }

    static func succeeded<T>(_ outcome: DeadlineOutcome<T>) -> Bool { if case .ok = outcome { return true } else { return false } }

    static let featuredKinds: [SectionKind] = [.featured, .mostRead, .pictureOfTheDay, .news, .onThisDay]

    /// The sections of the featured feed's answer (or their placeholders). A wiki with no featured feed that day
    /// (many small wikis have none) gets none of them.
    func featuredFragments(_ outcome: DeadlineOutcome<FeaturedFeed>, lang: LanguageCode, isToday: Bool, retry: Int? = nil) -> [SectionKind: Fragment] {
        var fragments: [SectionKind: Fragment] = [:]
        let feedKinds = Self.featuredKinds
        switch outcome {
        case .ok(let feed):
            if let tfa = feed.tfa {
                fragments[.featured] = Fragment(kind: .featured, body: BodyFragment(JSONLines.encode(FeedSection(kind: .featured, items: [Card(summary: tfa, lang: lang)]))), status: .ok)
            }
            if let most = feed.mostread, !most.articles.isEmpty {
                fragments[.mostRead] = Fragment(kind: .mostRead, body: BodyFragment(JSONLines.encode(FeedSection(kind: .mostRead, items: FeedRules.mostRead(most, lang: lang)))), status: .ok)
            }
            if let image = feed.image {
                fragments[.pictureOfTheDay] = Fragment(kind: .pictureOfTheDay, body: BodyFragment(JSONLines.encode(FeedSection(kind: .pictureOfTheDay, items: [FeedRules.picture(image, lang: lang.code)]))), status: .ok)
            }
            if isToday, let news = feed.news, !news.isEmpty {
                let items = news.map { NewsItem(story: $0.story, links: ($0.links ?? []).map { Card(summary: $0, lang: lang) }) }
                fragments[.news] = Fragment(kind: .news, body: BodyFragment(JSONLines.encode(FeedSection(kind: .news, items: items))), status: .ok)
            }
            if let events = feed.onthisday, !events.isEmpty {
                let items = events.map { OnThisDayItem(text: $0.text, year: $0.year, pages: ($0.pages ?? []).map { Card(summary: $0, lang: lang) }) }
                fragments[.onThisDay] = Fragment(kind: .onThisDay, body: BodyFragment(JSONLines.encode(FeedSection(kind: .onThisDay, items: items))), status: .ok)
            }
        case .timeout:
            for k in feedKinds where k != .news || isToday { fragments[k] = placeholder(k, .timeout, retry: retry) }
        case .failed(let e) where Self.isNotFound(e):
            break   // the wiki has no featured feed for that day (many small wikis have none): its sections are left out
        case .failed(let e):
            for k in feedKinds where k != .news || isToday { fragments[k] = placeholder(k, status(of: e), retry: retry) }
        }
        return fragments
    }

    /// The random card's section (or its placeholder); nil when the wiki has none.
    func randomFragment(_ outcome: DeadlineOutcome<Card>, retry: Int? = nil) -> Fragment? {
        switch outcome {
        case .ok(let card): return Fragment(kind: .random, body: BodyFragment(JSONLines.encode(FeedSection(kind: .random, items: [card]))), status: .ok)
        case .timeout: return placeholder(.random, .timeout, retry: retry)
        case .failed(let e) where Self.isNotFound(e): return nil   // no such wiki upstream (or not in the embedded default): no card
        case .failed(let e): return placeholder(.random, status(of: e), retry: retry)
        }
    }

    static func sharedPart(_ fragments: [SectionKind: Fragment], date: FeedDate, lang: String, expires: Date, landed: Once? = nil) -> SharedPart {
        let generatedAt = Timestamp.rfc3339Seconds()
        let head = Array(head(date: date, generatedAt: generatedAt, lang: lang).utf8)
        var run = head
        for (i, f) in SectionKind.ordered.compactMap({ fragments[$0] }).enumerated() {
            if i > 0 { run.append(44) }
            run.append(contentsOf: f.body.bytes)
        }
        return SharedPart(fragments: fragments, date: date, lang: lang, generatedAt: generatedAt, expires: expires,
                          head: BodyFragment(head), landed: landed, run: BodyFragment(run))
    }

    /// What a non-personal feed depends on.
    struct PreparedKey: Hashable {
        var lang: String
        var day: Int
        var isToday: Bool
        var sections: Int
        init(_ r: FeedRequest) {
            lang = r.lang.tag; day = r.date.dayNumber; isToday = r.isToday
            sections = r.sections.bits
        }
    }

    func sharedKey(_ r: FeedRequest) -> FeedKey { .shared(lang: r.lang, day: r.date.dayNumber, isToday: r.isToday) }

    /// An answer with placeholders may be kept only until the earliest of their retries. (The usual English answers
    /// carry `englishPersonalFields` / `englishSharedFields` instead: `assemble`.)
    func headers(_ r: FeedRequest, earliestRetry: Int? = nil) -> HTTPHeaders {
        if let earliestRetry, earliestRetry < 60 { return Self.headers(personal: r.isPersonal, lang: r.lang.bcp47, maxAge: earliestRetry) }
        return Self.headers(personal: r.isPersonal, lang: r.lang.bcp47)
    }

    static func headers(personal: Bool, lang: String, maxAge: Int = 60) -> HTTPHeaders {
        var h = HTTPHeaders()
        h.set("Cache-Control", personal ? "private, max-age=\(maxAge)" : "public, max-age=\(maxAge)")
        h.set("Vary", "Accept, Accept-Encoding, Accept-Language")   // Accept: the JSON Lines variant
        h.set("Content-Language", lang)
        return h
    }
    static let englishPersonal = headers(personal: true, lang: "en")
    static let englishShared = headers(personal: false, lang: "en")
    static let englishPersonalFields = AssembledFields(contentType: "application/json", headers: englishPersonal)
    static let englishSharedFields = AssembledFields(contentType: "application/json", headers: englishShared)
}
