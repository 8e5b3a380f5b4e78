import Foundation
import Synchronization
import HTTPServer
import LedeBasics
import Wikimedia

/// Random articles served from a pool per language, so `/random` and the feed's random card need no upstream
/// call per request:
/// - a refill draws one batch of random main-namespace pages in one upstream call (up to `attempts` calls when a
///   batch holds nothing readable), keeps only readable articles (never a disambiguation page, never another
///   namespace, never a card the pool already holds) and encodes each card once;
/// - cards are served fresh first; once the fresh ones are used up the served ones rotate, oldest first, so two
///   consecutive answers never repeat a card while the pool holds others;
/// - falling to `lowWater` fresh cards starts one background refill; concurrent requests on an empty pool wait
///   for that same refill (one upstream call however many wait);
/// - an empty pool whose refill fails answers with the refill's error (`no-random-article` when nothing readable
///   was drawn), as a request without a pool would.
final class RandomPool: Sendable {
    struct Entry: Sendable {
        let card: Card
        let body: PreparedBody
        let key: String
        let born: Double
    }

    struct Settings: Sendable {
        var lowWater = 6
        /// Served cards kept for rotation.
        var keepServed = 48
        /// Upstream draws per refill before giving up.
        var attempts = 3
        /// A card older than this is not served again.
        var maxAge: Double = 3_600
        /// After a failed refill, a non-empty pool waits this long before the next one.
        var retryAfterFailure: Double = 2
        init() {}
    }

    private final class Shelf {
        var fresh: [Entry] = []
        var served: [Entry] = []
        var refill: Task<Void, Never>?
        var lastError: Error?
        var failedAt = -Double.infinity
        var refills = 0
    }

    let api: any WikimediaAPI
    let settings: Settings
    private let clock: @Sendable () -> Double
    /// Each language's shelf, behind one mutex (the shelves never leave it).
    private let shelves = Mutex<[String: Shelf]>([:])

    init(api: any WikimediaAPI, settings: Settings = Settings(), clock: @escaping @Sendable () -> Double = { Date().timeIntervalSinceReferenceDate }) {
        self.api = api
        self.settings = settings
        self.clock = clock
    }

    static let noArticle = Problem(status: 503, slug: "no-random-article", .problemNoRandomArticle, headers: ["Retry-After": "1"])

    /// A card now if the pool has one (for the event loop); starts a refill when the pool runs low.
    func next(lang: LanguageCode) -> Entry? {
        shelves.withLock { take(Self.shelf(&$0, lang.tag), lang: lang) }
    }

    /// A card, waiting for the pool's refill when it is empty.
    func card(lang: LanguageCode) async throws -> Entry {
        let (ready, refill): (Entry?, Task<Void, Never>?) = shelves.withLock {
            let s = Self.shelf(&$0, lang.tag)
            if let e = take(s, lang: lang) { return (e, nil) }
            return (nil, s.refill ?? startRefill(s, lang: lang))
        }
        if let ready { return ready }
        await refill?.value
        return try shelves.withLock {
            let s = Self.shelf(&$0, lang.tag)
            if let e = take(s, lang: lang) { return e }
            throw s.lastError ?? Self.noArticle
        }
    }

    /// Refills made so far for a language (tests, metrics).
    func refillCount(lang: LanguageCode) -> Int { shelves.withLock { $0[lang.tag]?.refills ?? 0 } }

    // MARK: - Lock held

    private static func shelf(_ shelves: inout [String: Shelf], _ lang: String) -> Shelf {
        if let s = shelves[lang] { return s }
        let s = Shelf()
        shelves[lang] = s
        return s
    }

    private func take(_ s: Shelf, lang: LanguageCode) -> Entry? {
        let now = clock()
        s.fresh.removeAll { now - $0.born > settings.maxAge }
        s.served.removeAll { now - $0.born > settings.maxAge }
        var chosen: Entry?
        if !s.fresh.isEmpty {
            let e = s.fresh.removeFirst()
            s.served.append(e)
            if s.served.count > settings.keepServed { s.served.removeFirst(s.served.count - settings.keepServed) }
            chosen = e
        } else if !s.served.isEmpty {
            // Rotation: the oldest served card goes to the back; the one just served is last, so never repeated.
            let e = s.served.removeFirst()
            s.served.append(e)
            chosen = e
        }
        if chosen != nil, s.fresh.count <= settings.lowWater, s.refill == nil, now - s.failedAt >= settings.retryAfterFailure {
            startRefill(s, lang: lang)
        }
        return chosen
    }

    @discardableResult
    private func startRefill(_ s: Shelf, lang: LanguageCode) -> Task<Void, Never> {
        s.refills += 1
        // The task names the shelf by language (shelves are never removed): the shelf itself stays behind the lock.
        let task = Task { [self] in await refill(lang: lang) }
        s.refill = task
        return task
    }

    // MARK: - Refill (off the lock)

    private func refill(lang: LanguageCode) async {
        var error: Error = Self.noArticle
        var added: [Entry] = []
        for _ in 0..<settings.attempts {
            do {
                let batch = try await api.randomCandidates(lang: lang)
                let known: Set<String> = shelves.withLock { $0[lang.tag].map { Set(($0.fresh + $0.served).map(\.key)) } ?? [] }
                var seen = known
                let born = clock()
                for page in batch.pages where ContentRules.isReadableArticle(page) && seen.insert(ArticleTitle.normalise(page.title)).inserted {
                    let card = Card(page: page, lang: lang)
                    added.append(Entry(card: card, body: Responses.preparedBody(card, headers: ["Cache-Control": "no-store"]),
                                       key: ArticleTitle.normalise(page.title), born: born))
                }
                if !added.isEmpty { break }
                error = Self.noArticle
            } catch let e {
                error = e
                break   // an upstream failure is not retried here; the guard and the next refill decide
            }
        }
        let failedAt = clock()
        shelves.withLock {
            guard let s = $0[lang.tag] else { return }
            s.fresh.append(contentsOf: added)
            s.refill = nil
            if added.isEmpty { s.lastError = error; s.failedAt = failedAt } else { s.lastError = nil; s.failedAt = -.infinity }
        }
    }
}
