import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import XCTest
import HTTPServer
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import Upstream

/// Refresh ahead never leaves a hole: while a shared section's refresh is in flight, or after it timed out or failed,
/// every answer shows the last good data (with a short lifetime), never a placeholder, once the feed was warm.
final class StaleFeedTests: FakeUpstreamTestCase {
    override var loops: Int { 2 }
    override func configure(_ options: inout Options) {
        options.upstreamTimeout = 3
        options.sectionTimeout = 0.8
        options.feedMaxAge = 2
        options.cacheLimits.staleIfError = 0
    }

    private func sections(_ json: [String: Any]) -> [[String: Any]] { json["sections"] as? [[String: Any]] ?? [] }
    private func placeholders(_ json: [String: Any]) -> [String] {
        sections(json).filter { ($0["status"] as? String) == "placeholder" }.compactMap { $0["kind"] as? String }
    }

    /// Every upstream call takes 1 s (longer than the 0.8 s section deadline), the shared sections live 2 s: asked every
    /// 50 ms for 20 s, no answer after the first complete one holds a placeholder.
    func testASlowRefreshNeverShowsPlaceholdersOnceWarm() async throws {
        fake.set("feed", .delay(1))
        fake.set("random", .delay(1))
        // Warm: the first build misses the section deadline; its late data lands and the next build has it.
        var warm = false
        for _ in 0..<60 where !warm {
            let (status, json, _) = try get(server, "/feed?lang=en").statusJSONAndResponse
            warm = status == 200 && placeholders(json).isEmpty && sections(json).count >= 5
            if !warm { try await Task.sleep(nanoseconds: 200_000_000) }
        }
        XCTAssertTrue(warm, "the feed never came out complete")

        var asked = 0, holes: [String] = [], shortLived = 0
        let end = Date().addingTimeInterval(20)
        while Date() < end {
            let (status, json, response) = try get(server, "/feed?lang=en").statusJSONAndResponse
            asked += 1
            XCTAssertEqual(status, 200)
            let missing = placeholders(json)
            if !missing.isEmpty { holes.append("answer \(asked): \(missing)") }
            if let cc = response.header("Cache-Control"), cc != "public, max-age=60" { shortLived += 1 }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        XCTAssertEqual(holes, [], "placeholders over data Lede had")
        XCTAssertGreaterThan(asked, 100)
        // The shared part expired about every 2 s: the answers served while it was refreshed said so with a short lifetime.
        XCTAssertGreaterThan(shortLived, 0)
        XCTAssertGreaterThan(fake.requests(kind: "feed").count, 3, "the feed was refreshed as it expired")
    }

    /// A refresh that fails keeps the last good data instead of replacing it with placeholders; a language that never had
    /// data still gets its placeholder.
    func testAFailedRefreshKeepsTheLastGoodData() async throws {
        let (status, json, _) = try get(server, "/feed?lang=en").statusJSONAndResponse
        XCTAssertEqual(status, 200)
        XCTAssertEqual(placeholders(json), [])
        fake.set("feed", .status(503, "{}"))
        try await Task.sleep(nanoseconds: 2_300_000_000)   // past the 2 s lifetime
        for _ in 0..<10 {
            let (status, json, response) = try get(server, "/feed?lang=en").statusJSONAndResponse
            XCTAssertEqual(status, 200)
            XCTAssertEqual(placeholders(json), [], "a failed refresh replaced the last good data")
            let cc = response.header("Cache-Control") ?? ""
            XCTAssertNotEqual(cc, "public, max-age=60", "stale data is kept only briefly by caches")
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        let (_, german, _) = try get(server, "/feed?lang=de").statusJSONAndResponse
        XCTAssertTrue(placeholders(german).contains("featured"), "a language that never had data shows placeholders")
    }

    /// The same rule for the pure part: the last good data stands in for a placeholder only while younger than ten
    /// lifetimes, and only for the language and date it was for.
    func testLastGoodDataStandsInWithinItsBound() {
        let clock = ManualClock()
        let service = FeedService(api: StubAPI(), feedMaxAge: 2, now: { Date(timeIntervalSinceReferenceDate: clock.now) })
        let good = FeedService.Fragment(kind: .featured, body: BodyFragment(Array("{\"kind\":\"featured\"}".utf8)), status: .ok)
        let k = FeedKey.shared(lang: .english, day: 20419, isToday: true), other = FeedKey.shared(lang: LanguageCode("de")!, day: 20419, isToday: true)
        _ = service.withLastGood([.featured: good], key: k)
        let hole = service.placeholder(.featured, .timeout)
        let stood = service.withLastGood([.featured: hole], key: k)[.featured]
        XCTAssertEqual(stood?.status, .ok)
        XCTAssertEqual(stood?.stale, true)
        XCTAssertEqual(stood?.body.bytes, good.body.bytes)
        XCTAssertLessThanOrEqual(stood?.retryAfter ?? 99, service.staleMaxAge)
        XCTAssertEqual(service.withLastGood([.featured: hole], key: other)[.featured]?.status, .timeout)
        clock.advance(service.staleBound + 1)
        XCTAssertEqual(service.withLastGood([.featured: hole], key: k)[.featured]?.status, .timeout, "too old to stand in")
    }

    /// The article screen's stale window follows the same rule: a refresh that comes back with a placeholder keeps the
    /// last complete answer (short-lived), and a complete refresh replaces it.
    func testAnArticleRefreshWithAPlaceholderKeepsTheLastCompleteAnswer() async throws {
        let api = StubAPI(), cache = UpstreamCache()
        let en = LanguageCode("en")!, key = "article:en:Albert_Einstein:"
        _ = try await ArticleScreen.prepare(api: api, lang: en, title: "Albert_Einstein", preferred: [], timeout: 2, responses: cache, key: key, anonymousEdits: false)
        let complete = try XCTUnwrap(cache.cachedValue(key, as: ArticleScreen.Kept.self))
        XCTAssertTrue(complete.complete)
        XCTAssertEqual(complete.stale.headers["Cache-Control"], "public, max-age=\(ArticleScreen.shortTTL)")
        XCTAssertEqual(complete.stale.identity, complete.fresh.identity)

        api.failures["contents"] = .unavailable(status: 503)
        let served = try await ArticleScreen.prepare(api: api, lang: en, title: "Albert_Einstein", preferred: [], timeout: 2, responses: cache, key: key, previous: complete, anonymousEdits: false)
        XCTAssertEqual(served.identity, complete.fresh.identity, "the refresh's placeholder did not replace the last complete answer")
        let kept = try XCTUnwrap(cache.cachedValue(key, as: ArticleScreen.Kept.self))
        XCTAssertEqual(kept.fresh.headers["Cache-Control"], "public, max-age=\(ArticleScreen.shortTTL)")
        XCTAssertFalse(String(decoding: kept.fresh.identity, as: UTF8.self).contains("placeholder"))

        // Too old to stand in: the placeholder goes through.
        var old = complete
        old.builtAt -= ArticleScreen.staleBound + 1
        let through = try await ArticleScreen.prepare(api: api, lang: en, title: "Albert_Einstein", preferred: [], timeout: 2, responses: cache, key: key, previous: old, anonymousEdits: false)
        XCTAssertTrue(String(decoding: through.identity, as: UTF8.self).contains("placeholder"))
    }
}
