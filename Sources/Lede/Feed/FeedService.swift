import Foundation
import Synchronization
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

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
    private let prepared = Mutex<[PreparedKey: (body: PreparedBody, expires: Double)]>([:])
    private let maxPrepared = 512
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
    private let lastGood = Mutex<[FeedKey: [SectionKind: (fragment: Fragment, at: Double)]]>([:])
    private let maxLastGood = 256
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

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return e
    }()

    static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        [UInt8]((try? encoder.encode(value)) ?? Data("{}".utf8))
    }

    /// A section in place of one that is not there, with when to ask again: for a section that timed out, `retry` (by
    /// default the rest of the upstream deadline: when its data is expected); Wikimedia's Retry-After; else the default.
    func placeholder(_ kind: SectionKind, _ status: Status, retry: Int? = nil) -> Fragment {
        var after = status == .timeout ? (retry ?? pendingRetry) : retryAfterSeconds
        if case .backingOff(let seconds) = status { after = seconds }
        let section = FeedSection<NoItem>(kind: kind, status: "placeholder", items: [], reason: status.reason, retryAfterSeconds: after)
        return Fragment(kind: kind, body: BodyFragment(Self.encode(section)), status: status, retryAfter: after)
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

    private func buildShared(lang: LanguageCode, date: FeedDate, isToday: Bool) async -> SharedPart {
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
                fragments[.featured] = Fragment(kind: .featured, body: BodyFragment(Self.encode(FeedSection(kind: .featured, items: [Card(summary: tfa, lang: lang)]))), status: .ok)
            }
            if let most = feed.mostread, !most.articles.isEmpty {
                fragments[.mostRead] = Fragment(kind: .mostRead, body: BodyFragment(Self.encode(FeedSection(kind: .mostRead, items: FeedRules.mostRead(most, lang: lang)))), status: .ok)
            }
            if let image = feed.image {
                fragments[.pictureOfTheDay] = Fragment(kind: .pictureOfTheDay, body: BodyFragment(Self.encode(FeedSection(kind: .pictureOfTheDay, items: [FeedRules.picture(image, lang: lang.code)]))), status: .ok)
            }
            if isToday, let news = feed.news, !news.isEmpty {
                let items = news.map { NewsItem(story: $0.story, links: ($0.links ?? []).map { Card(summary: $0, lang: lang) }) }
                fragments[.news] = Fragment(kind: .news, body: BodyFragment(Self.encode(FeedSection(kind: .news, items: items))), status: .ok)
            }
            if let events = feed.onthisday, !events.isEmpty {
                let items = events.map { OnThisDayItem(text: $0.text, year: $0.year, pages: ($0.pages ?? []).map { Card(summary: $0, lang: lang) }) }
                fragments[.onThisDay] = Fragment(kind: .onThisDay, body: BodyFragment(Self.encode(FeedSection(kind: .onThisDay, items: items))), status: .ok)
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
        case .ok(let card): return Fragment(kind: .random, body: BodyFragment(Self.encode(FeedSection(kind: .random, items: [card]))), status: .ok)
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

    // MARK: - The feed

    /// The response when every part the request needs is at hand: answered on the event loop with no upstream
    /// work and no encoding. A feed without personal parameters is a prepared body; a personal one is assembled
    /// from the cached shared part, the cached personal fragments and the per-request numbers.
    func cachedResponse(for request: FeedRequest) -> HTTPResponse? {
        if !request.isPersonal {
            let key = PreparedKey(request)
            let t = now().timeIntervalSinceReferenceDate
            return prepared.withLock { prepared in
                guard let entry = prepared[key], entry.expires > t else { return nil }
                return .prepared(entry.body)
            }
        }
        // The clock read once for the four lookups (both caches run on `now`).
        let clock = now(), t = clock.timeIntervalSinceReferenceDate
        var part: SharedPart?
        if request.wantsShared {
            guard let cached = sharedCache.cachedValue(sharedKey(request), as: SharedPart.self, at: t) else { return nil }
            part = cached
        }
        var personal = PersonalParts()
        for kind in Self.personalKinds where request.sections.contains(kind) {
            switch personalKey(kind, request, now: clock) {
            case nil: continue
            case let key?:
                guard let value = fragments.cachedValue(key, as: PersonalPart.self, at: t) else { return nil }
                personal[kind] = value
            }
        }
        do { return try assemble(request, shared: part, personal: personal) } catch { return Responses.problem(error) }
    }

    func feed(_ request: FeedRequest) async throws -> HTTPResponse {
        async let sharedPart: SharedPart? = request.wantsShared ? shared(lang: request.lang, date: request.date, isToday: request.isToday) : nil
        async let personal = personalParts(request)
        let part = await sharedPart
        // A part past its lifetime, served while its refresh runs: answers showing it are kept only until the refresh
        // is expected.
        let stale = part.map { $0.expires < now() } == true
        let response = try assemble(request, shared: part, personal: await personal, maxAge: stale ? staleMaxAge : nil)
        if !request.isPersonal, case .assembled(let body) = response.body {
            // Kept whole: compressed once as one stream, answered on the loop until the shared part expires.
            let prepared = PreparedBody(contentType: "application/json", bytes: body.identityBytes(), headers: body.fields?.headers ?? response.headers)
            let expires = (part?.expires ?? now().addingTimeInterval(5)).timeIntervalSinceReferenceDate
            let t = now().timeIntervalSinceReferenceDate
            let key = PreparedKey(request), maxPrepared = self.maxPrepared
            self.prepared.withLock { kept in
                if kept.count >= maxPrepared { kept = kept.filter { $0.value.expires > t } }
                if kept.count < maxPrepared { kept[key] = (prepared, expires) }
            }
            return .prepared(prepared)
        }
        return response
    }

    /// The feed body: the shared part's head, then each chosen section's fragment (the nearby section with this
    /// user's numbers), joined by commas. A problem when every chosen section is a placeholder.
    func assemble(_ request: FeedRequest, shared part: SharedPart?, personal: PersonalParts, maxAge: Int? = nil) throws -> HTTPResponse {
        var body = AssembledBody(capacity: 24)
        var chosen = 0
        var statuses = Statuses()
        var earliestRetry: Int? = maxAge
        let wholeRun = request.showsEverySharedSection
        if let part, part.date == request.date, part.lang == request.lang.tag {
            if wholeRun {
                body.append(part.run)
                statuses.add(part.runStatuses)
                earliestRetry = Statuses.earlier(earliestRetry, part.runEarliestRetry)
                chosen += part.runStatuses.count
            } else {
                body.append(part.head)
            }
        } else {
            body.append(literal: Self.head(date: request.date, generatedAt: Timestamp.rfc3339Seconds(), lang: request.lang.tag))
        }
        for kind in request.sections {
            if kind.isShared {
                if wholeRun { continue }
                guard let f = part?.fragments[kind] else { continue }
                if chosen > 0 { body.append(byte: UInt8(ascii: ",")) }
                body.append(f.body); chosen += 1
                statuses.append(f.status, retry: f.retryAfter, earliest: &earliestRetry)
            } else {
                // The part passed where it is held (a borrowed argument): no copy retained and released per section.
                switch kind {
                case .becauseYouRead: appendPersonal(personal.because, kind, request, to: &body, statuses: &statuses, retry: &earliestRetry, chosen: &chosen)
                case .nearby: appendPersonal(personal.nearby, kind, request, to: &body, statuses: &statuses, retry: &earliestRetry, chosen: &chosen)
                case .continueReading:
                    appendPersonal(personal.continueReading, kind, request, to: &body, statuses: &statuses, retry: &earliestRetry, chosen: &chosen)
                default: continue
                }
            }
        }
        if let problem = allPlaceholders(statuses) { throw problem }
        body.append(literal: Self.tail)
        if earliestRetry.map({ $0 >= 60 }) ?? true, request.lang.code == "en" {
            // The usual answer's fields, rendered once.
            body.fields = request.isPersonal ? Self.englishPersonalFields : Self.englishSharedFields
            return .assembled(body)
        }
        return .assembled(body, headers: headers(request, earliestRetry: earliestRetry))
    }

    /// A personal section into an answer being assembled (with the comma before it when it is not the first).
    private func appendPersonal(_ part: PersonalPart?, _ kind: SectionKind, _ request: FeedRequest, to body: inout AssembledBody,
                                statuses: inout Statuses, retry earliestRetry: inout Int?, chosen: inout Int) {
        switch part {
        case .section(let f)?:
            if chosen > 0 { body.append(byte: UInt8(ascii: ",")) }
            body.append(f.body); chosen += 1
            statuses.append(f.status, retry: f.retryAfter, earliest: &earliestRetry)
        case .nearby(let cell)?:
            guard let point = request.nearby else { return }
            if chosen > 0 { body.append(byte: UInt8(ascii: ",")) }
            body.append(nearbyMemo.section(cell, user: point, radius: Double(Self.nearbyRadius))); chosen += 1
            statuses.append(.ok)
        case .absent?, nil:
            if kind == .nearby, request.incompleteLocation {
                // Not counted as a failed section: nothing upstream failed, the request lacked half a point.
                if chosen > 0 { body.append(byte: UInt8(ascii: ",")) }
                body.append(Self.incompleteLocation); chosen += 1
            }
        }
    }

    /// What the sections of one answer came out as, counted (no list per request).
    struct Statuses: Sendable {
        var count = 0, failed = 0, backingOff = 0
        var longestWait: Int?
        /// Another run's counts added to these.
        mutating func add(_ other: Statuses) {
            count += other.count; failed += other.failed; backingOff += other.backingOff
            if let w = other.longestWait { longestWait = max(longestWait ?? w, w) }
        }
        /// `s` counted, and `retry` (a section's retryAfterSeconds) kept in `earliest` when it is sooner.
        mutating func append(_ s: Status, retry: Int?, earliest: inout Int?) {
            append(s)
            earliest = Self.earlier(earliest, retry)
        }
        /// The sooner of two retries, either of which may be absent.
        static func earlier(_ a: Int?, _ b: Int?) -> Int? {
            guard let b else { return a }
            return min(a ?? b, b)
        }
        mutating func append(_ s: Status) {
            count += 1
            if s != .ok && s != .timeout { failed += 1 }
            if case .backingOff(let w) = s { backingOff += 1; longestWait = max(longestWait ?? w, w) }
        }
    }

    /// Every chosen section failed: one problem instead of a feed of placeholders. Sections merely slow (still on their
    /// way at the section deadline) are not failures: that feed is answered, placeholders and all.
    func allPlaceholders(_ statuses: Statuses) -> Problem? {
        guard statuses.count > 0, statuses.failed == statuses.count else { return nil }
        if statuses.backingOff == statuses.count, let wait = statuses.longestWait {
            return Problem(status: 503, slug: "upstream-rate-limited", .problemUpstreamRateLimited, String(wait),
                           headers: ["Retry-After": "\(wait)"])
        }
        return Problem(status: 502, slug: "upstream-unavailable", .problemFeedUnavailable, headers: ["Retry-After": "\(retryAfterSeconds)"])
    }

    static func head(date: FeedDate, generatedAt: String, lang: String) -> String {
        "{\"date\":\"\(date)\",\"generatedAt\":\"\(generatedAt)\",\"lang\":\"\(lang)\",\"sections\":["
    }
    static let tail = Array("]}".utf8)
    static let incompleteLocation = BodyFragment(encode(FeedSection<NoItem>(kind: .nearby, status: "placeholder", items: [], reason: "incomplete-location")))

    // MARK: - Personal sections

    /// A personal section as kept: an encoded section, a nearby cell (numbers written per request), or nothing
    /// (the continue-reading article no longer exists).
    enum PersonalPart: Sendable {
        case section(Fragment)
        case nearby(NearbyCell)
        case absent

        var cost: Int {
            switch self {
            case .section(let f): return f.body.bytes.count + f.body.deflated.count
            case .nearby(let cell): return cell.cost
            case .absent: return 64
            }
        }
    }

    /// The three personal parts of one request (a slot each: no dictionary per request).
    struct PersonalParts: Sendable {
        var because, nearby, continueReading: PersonalPart?
        subscript(_ kind: SectionKind) -> PersonalPart? {
            get {
                switch kind {
                case .becauseYouRead: return because
                case .nearby: return nearby
                case .continueReading: return continueReading
                default: return nil
                }
            }
            set {
                switch kind {
                case .becauseYouRead: because = newValue
                case .nearby: nearby = newValue
                case .continueReading: continueReading = newValue
                default: break
                }
            }
        }
    }

    static let personalKinds: [SectionKind] = [.becauseYouRead, .nearby, .continueReading]
    static let nearbyRadius = 10_000
    /// How long a personal fragment is kept: as long as the content route answers of the same data.
    static func ttl(_ kind: SectionKind) -> Double { kind == .becauseYouRead ? 600 : 300 }

    /// The fragment cache key of a personal section this request shows, or nil when it does not show it.
    func personalKey(_ kind: SectionKind, _ r: FeedRequest, now clock: Date? = nil) -> FeedKey? {
        switch kind {
        case .becauseYouRead:
            guard let title = r.because else { return nil }
            return FeedKey(.because, lang: r.lang, title: title)   // already normalised
        case .continueReading:
            guard let title = r.continueTitle, FeedRequest.showsContinueReading(backgroundedAt: r.backgroundedAt, now: clock ?? now()) else { return nil }
            return FeedKey(.continueReading, lang: r.lang, title: title)
        case .nearby:
            guard let point = r.nearby else { return nil }
            let cell = GeoCell(point)
            return FeedKey(.nearby, lang: r.lang, cell.latIndex, cell.lonIndex)
        default:
            return nil
        }
    }

    /// Builds (or finds) each personal part within the section deadline; failures become placeholders, which
    /// are never kept (the upstream cache and guard decide when to try again).
    func personalParts(_ request: FeedRequest) async -> PersonalParts {
        await withTaskGroup(of: (SectionKind, PersonalPart?).self) { group in
            for kind in Self.personalKinds where request.sections.contains(kind) {
                group.addTask { [self] in (kind, await personalPart(kind, request, deadline: sectionTimeout)) }
            }
            var out = PersonalParts()
            for await (kind, part) in group { if let part { out[kind] = part } }
            return out
        }
    }

    /// One personal part within `deadline` (nil when the request does not show it). A failure is a placeholder, never
    /// kept; work that misses the deadline goes on and fills the fragment cache for the next request.
    func personalPart(_ kind: SectionKind, _ request: FeedRequest, deadline: Double, retry: Int? = nil) async -> PersonalPart? {
        guard let key = personalKey(kind, request) else { return nil }
        let outcome = await withDeadline(deadline) { [self] in
            try await fragments.value(key, ttl: Self.ttl(kind)) { [self] () async throws -> (PersonalPart, Int) in
                let part = try await buildPersonal(kind, request)
                return (part, part.cost)
            }
        }
        switch outcome {
        case .ok(let part): return part
        case .timeout: return .section(placeholder(kind, .timeout, retry: retry))
        // No such wiki upstream (or not in the embedded default): the section is left out, not failed.
        case .failed(let e) where Self.isNotFound(e): return .absent
        case .failed(let e): return .section(placeholder(kind, status(of: e), retry: retry))
        }
    }

    func buildPersonal(_ kind: SectionKind, _ r: FeedRequest) async throws -> PersonalPart {
        let lang = r.lang
        switch kind {
        case .becauseYouRead:
            let source = r.because!
            let result = try await api.related(lang: lang, title: source)
            let section = FeedSection(kind: .becauseYouRead, items: ContentRules.related(result, source: source, lang: lang, limit: 3),
                                      source: ArticleTitle.display(source))
            return .section(Fragment(kind: kind, body: BodyFragment(Self.encode(section)), status: .ok))
        case .continueReading:
            do {
                let s = try await api.summary(lang: lang, title: r.continueTitle!)
                return .section(Fragment(kind: kind, body: BodyFragment(Self.encode(FeedSection(kind: .continueReading, items: [Card(summary: s, lang: lang)]))), status: .ok))
            } catch UpstreamError.notFound {
                return .absent   // the article is gone: no card, not a retry
            }
        default:
            let centre = GeoCell(r.nearby!).centre
            let result = try await api.nearby(lang: lang, latitude: centre.latitude, longitude: centre.longitude, radiusMeters: Self.nearbyRadius)
            return .nearby(NearbyCell(result, lang: lang))
        }
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
        if let earliestRetry, earliestRetry < 60 { return Self.headers(personal: r.isPersonal, lang: r.lang.tag, maxAge: earliestRetry) }
        return Self.headers(personal: r.isPersonal, lang: r.lang.tag)
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
