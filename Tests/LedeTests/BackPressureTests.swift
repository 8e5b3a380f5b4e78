import Synchronization
import Foundation
import HTTPServer
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import HTTPCore
@testable import Upstream

/// A clock the test moves by hand.
final class ManualClock: @unchecked Sendable {   // @unchecked: `t` is only touched under `lock`.
    private let lock = NSLock()
    private var t: Double
    init(_ start: Double = 1_795_000_000) { t = start }
    var now: Double { lock.withLock { t } }
    func advance(_ seconds: Double) { lock.withLock { t += seconds } }
    var function: @Sendable () -> Double { { [self] in now } }
}

/// The breaker, Retry-After and the concurrency bound, by themselves (a fake clock, no sockets).
final class UpstreamGuardTests: XCTestCase {
    let clock = ManualClock()
    lazy var guards = UpstreamGuard(settings: .init(failureThreshold: 3, coolDown: 10, maxConcurrent: 2), clock: clock.function)

    func testBreakerOpensAfterConsecutiveFailuresAndOneProbeClosesIt() throws {
        let o = "https://en.wikipedia.org"
        for _ in 0..<2 { XCTAssertFalse(try guards.admit(origin: o, kind: "summary")); guards.record(origin: o, outcome: .failed, probe: false) }
        XCTAssertEqual(guards.state(origin: o), .closed)
        guards.record(origin: o, outcome: .answered, probe: false)   // a success breaks the run
        for _ in 0..<3 { _ = try guards.admit(origin: o, kind: "summary"); guards.record(origin: o, outcome: .failed, probe: false) }
        XCTAssertEqual(guards.state(origin: o), .open)
        XCTAssertThrowsError(try guards.admit(origin: o, kind: "feed")) { XCTAssertEqual($0 as? UpstreamError, .circuitOpen(retryAfter: 10)) }
        clock.advance(4)
        XCTAssertThrowsError(try guards.admit(origin: o, kind: "feed")) { XCTAssertEqual($0 as? UpstreamError, .circuitOpen(retryAfter: 6)) }
        clock.advance(6)
        XCTAssertTrue(try guards.admit(origin: o, kind: "feed"), "the first call after the cool-down is the probe")
        XCTAssertEqual(guards.state(origin: o), .halfOpen)
        XCTAssertThrowsError(try guards.admit(origin: o, kind: "summary"), "one probe at a time")
        guards.record(origin: o, outcome: .failed, probe: true)
        XCTAssertEqual(guards.state(origin: o), .open, "a failed probe reopens for another cool-down")
        XCTAssertThrowsError(try guards.admit(origin: o, kind: "summary"))
        clock.advance(10)
        XCTAssertTrue(try guards.admit(origin: o, kind: "summary"))
        guards.record(origin: o, outcome: .answered, probe: true)
        XCTAssertEqual(guards.state(origin: o), .closed)
        XCTAssertFalse(try guards.admit(origin: o, kind: "summary"))
        XCTAssertEqual(guards.state(origin: "https://de.wikipedia.org"), .closed, "per origin")
        let metrics = guards.render()
        XCTAssertTrue(metrics.contains("lede_upstream_circuit_state{origin=\"https://en.wikipedia.org\"} 0"), metrics)
        XCTAssertTrue(metrics.contains("lede_upstream_circuit_opened_total{origin=\"https://en.wikipedia.org\"} 2"), metrics)
        XCTAssertTrue(metrics.contains("lede_upstream_rejected_total{origin=\"https://en.wikipedia.org\",reason=\"circuit_open\"} 4"), metrics)
    }

    func testRetryAfterHoldsOneKindOfOneOrigin() throws {
        let o = "https://en.wikipedia.org"
        XCTAssertEqual(guards.backOff(origin: o, kind: "notifications", seconds: 30), 30)
        XCTAssertThrowsError(try guards.admit(origin: o, kind: "notifications")) { XCTAssertEqual($0 as? UpstreamError, .rateLimited(retryAfter: 30)) }
        XCTAssertFalse(try guards.admit(origin: o, kind: "summary"), "other kinds go on")
        XCTAssertFalse(try guards.admit(origin: "https://de.wikipedia.org", kind: "notifications"), "other origins go on")
        clock.advance(29.5)
        XCTAssertThrowsError(try guards.admit(origin: o, kind: "notifications")) { XCTAssertEqual($0 as? UpstreamError, .rateLimited(retryAfter: 1)) }
        clock.advance(0.5)
        XCTAssertFalse(try guards.admit(origin: o, kind: "notifications"))
        XCTAssertEqual(guards.backOff(origin: o, kind: "feed", seconds: 86_400), 3_600, "bounded")
    }

    func testAUsersRetryAfterHoldsThatUsersCallsOnlyAndThePublicsThePublics() throws {
        let o = "https://en.wikipedia.org"
        XCTAssertEqual(guards.backOff(origin: o, kind: "notifications", user: "Bearer bob", seconds: 30), 30)
        XCTAssertThrowsError(try guards.admit(origin: o, kind: "notifications", user: "Bearer bob")) { XCTAssertEqual($0 as? UpstreamError, .rateLimited(retryAfter: 30)) }
        XCTAssertFalse(try guards.admit(origin: o, kind: "notifications", user: "Bearer alice"), "another user goes on")
        XCTAssertFalse(try guards.admit(origin: o, kind: "notifications"), "public calls go on")
        _ = guards.backOff(origin: o, kind: "summary", seconds: 10)
        XCTAssertThrowsError(try guards.admit(origin: o, kind: "summary"))
        XCTAssertFalse(try guards.admit(origin: o, kind: "summary", user: "Bearer alice"), "a public back-off holds public calls")
        XCTAssertFalse(UpstreamGuard.backOffKey("notifications", user: "Bearer bob").contains("bob"), "kept by a digest, never the credentials")
        clock.advance(30)
        XCTAssertFalse(try guards.admit(origin: o, kind: "notifications", user: "Bearer bob"))
    }

    func testUsersBackOffsAreBoundedAndForgottenOnceOver() throws {
        let o = "https://en.wikipedia.org"
        for i in 0..<(UpstreamGuard.maxBackOffs + 50) { _ = guards.backOff(origin: o, kind: "notifications", user: "Bearer u\(i)", seconds: 5) }
        XCTAssertThrowsError(try guards.admit(origin: o, kind: "notifications", user: "Bearer u0"))
        XCTAssertFalse(try guards.admit(origin: o, kind: "notifications", user: "Bearer u\(UpstreamGuard.maxBackOffs + 10)"), "past the bound, not remembered")
        clock.advance(6)
        XCTAssertFalse(try guards.admit(origin: o, kind: "notifications", user: "Bearer someone-else"))
        XCTAssertTrue(guards.render().contains("lede_upstream_backoff_kinds{origin=\"\(o)\"} 0"), "every wait over: the table is emptied")
    }

    func testRetryAfterValues() {
        XCTAssertEqual(guards.retryAfterSeconds("120"), 120)
        XCTAssertEqual(guards.retryAfterSeconds(" 7 "), 7)
        XCTAssertEqual(guards.retryAfterSeconds("99999999999"), 3_600)
        XCTAssertNil(guards.retryAfterSeconds("soon"))
        XCTAssertNil(guards.retryAfterSeconds("-5"))
        XCTAssertNil(guards.retryAfterSeconds(nil))
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777)
        XCTAssertNil(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT"))
        let inAMinute = HTTPDate.format(seconds: Int(clock.now) + 60)
        XCTAssertEqual(guards.retryAfterSeconds(inAMinute), 60)
    }

    func testConcurrencyIsBoundedAndWaitersAreServedInOrderWithinTheirDeadline() async throws {
        let o = "o"
        try await guards.acquire(origin: o, timeout: 1)
        try await guards.acquire(origin: o, timeout: 1)
        XCTAssertEqual(guards.inFlight(origin: o), 2)
        do { try await guards.acquire(origin: o, timeout: 0.05); XCTFail("a third call waits, then times out") } catch {
            XCTAssertEqual(error as? UpstreamError, .timeout)
        }
        let guards = self.guards
        async let third: Void = guards.acquire(origin: o, timeout: 2)
        try await Task.sleep(nanoseconds: 20_000_000)
        guards.release(origin: o)   // the slot passes to the waiter
        try await third
        XCTAssertEqual(guards.inFlight(origin: o), 2)
        guards.release(origin: o); guards.release(origin: o)
        XCTAssertEqual(guards.inFlight(origin: o), 0)
        XCTAssertTrue(guards.render().contains("lede_upstream_queue_timeouts_total{origin=\"o\"} 1"))
    }

    /// Slots are taken without the lock when nobody waits: tasks on several threads taking and giving back slots at
    /// once (the queue and the lock-free path both in use) never hold more than the bound, and every caller gets its
    /// slot (the deadline is ten seconds, the whole run a few hundredths of one). The window in which a release and a
    /// queueing caller cross is a few instructions wide; this run does not force it (the comment on `acquire` says
    /// why it is closed), it checks that the two paths together keep the bound and lose nobody.
    func testSlotsTakenAndReleasedFromManyThreadsStayBoundedAndNoneIsLost() async throws {
        let guards = UpstreamGuard(settings: .init(maxConcurrent: 2))
        let gate = guards.gate(origin: "busy")
        final class Count: Sendable { let held = Atomic(0), most = Atomic(0) }
        let count = Count()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<2_000 {
                        try await guards.acquire(gate, timeout: 10)
                        let now = count.held.add(1, ordering: .sequentiallyConsistent).newValue
                        _ = count.most.max(now, ordering: .relaxed)
                        await Task.yield()   // held across a suspension: the other tasks queue meanwhile
                        count.held.subtract(1, ordering: .sequentiallyConsistent)
                        guards.release(gate)
                    }
                }
            }
            try await group.waitForAll()
        }
        XCTAssertLessThanOrEqual(count.most.load(ordering: .relaxed), 2)
        XCTAssertEqual(guards.inFlight(origin: "busy"), 0)
        let metrics = guards.render()
        XCTAssertTrue(metrics.contains("lede_upstream_queue_timeouts_total{origin=\"busy\"} 0"))
        // The queue was used (the slow path ran), not only the lock-free one.
        let queued = metrics.split(separator: "\n").first { $0.hasPrefix("lede_upstream_queued_total{origin=\"busy\"}") }?.split(separator: " ").last
        XCTAssertGreaterThan(queued.flatMap { Int($0) } ?? 0, 0)
    }
}

/// The client against a fake Wikimedia that answers 429/503 with Retry-After, fails, or redirects.
final class BackPressureClientTests: XCTestCase {
    var fake: FakeUpstream!
    let clock = ManualClock()
    override func setUpWithError() throws { fake = try FakeUpstream() }
    override func tearDown() { fake.stop() }
    var en: LanguageCode { .english }

    func client(maxConcurrent: Int = 16, staleIfError: Double = 600) -> WikimediaClient {
        WikimediaClient(transport: try! LiveTransport(template: fake.template, contact: "qa@lede.test"),
                        cache: UpstreamCache(limits: .init(staleIfError: staleIfError), clock: clock.function),
                        guards: UpstreamGuard(settings: .init(failureThreshold: 3, coolDown: 10, maxConcurrent: maxConcurrent), clock: clock.function),
                        deadline: 2)
    }

    func test429WithRetryAfterIsHonouredForThatKindOfThatUserOnly() async throws {
        let c = client()
        fake.set("notifications", .answer(429, ["Retry-After": "30"], #"{"error":"too many"}"#))
        do { _ = try await c.notifications(lang: en, authorization: "Bearer demo-bob", filter: .unread, limit: 1, continueFrom: nil); XCTFail() } catch {
            XCTAssertEqual(error as? UpstreamError, .rateLimited(retryAfter: 30))
        }
        clock.advance(10)
        do { _ = try await c.notifications(lang: en, authorization: "Bearer demo-bob", filter: .unread, limit: 1, continueFrom: nil); XCTFail() } catch {
            XCTAssertEqual(error as? UpstreamError, .rateLimited(retryAfter: 20))
        }
        XCTAssertEqual(fake.requests(kind: "notifications").count, 1, "no call of that kind by that user before the time has passed")
        // Wikimedia's quota was bob's: alice's notifications go on, and so do bob's other kinds of call.
        fake.set("notifications", .embedded)
        let alices = try await c.notifications(lang: en, authorization: "Bearer demo-alice", filter: .unread, limit: 1, continueFrom: nil)
        XCTAssertGreaterThan(alices.rawcount, 0)
        XCTAssertEqual(fake.requests(kind: "notifications").count, 2)
        _ = try await c.csrfToken(lang: en, authorization: "Bearer demo-bob")
        clock.advance(20)
        let page = try await c.notifications(lang: en, authorization: "Bearer demo-bob", filter: .unread, limit: 1, continueFrom: nil)
        XCTAssertGreaterThanOrEqual(page.rawcount, 0)
        XCTAssertEqual(fake.requests(kind: "notifications").count, 3)
        XCTAssertEqual(c.metrics.count(kind: "notifications", outcome: "rate_limited"), 2)
        XCTAssertEqual(c.guards.state(origin: c.origin(lang: "en")), .closed, "a 429 is an answer, not a failure")
    }

    func test503WithRetryAfterServesStaleWithinStaleIfError() async throws {
        let c = client()
        let fresh = try await c.summary(lang: en, title: "Amsterdam")
        clock.advance(700)   // past the summary TTL (600 s)
        let inTwoMinutes = HTTPDate.format(seconds: Int(clock.now) + 120)
        fake.set("summary", .answer(503, ["Retry-After": inTwoMinutes], #"{"detail":"overloaded"}"#))
        let stale = try await c.summary(lang: en, title: "Amsterdam")
        XCTAssertEqual(stale, fresh)
        XCTAssertEqual(fake.requests(kind: "summary").count, 2)
        let again = try await c.summary(lang: en, title: "Amsterdam")
        XCTAssertEqual(again, fresh)
        XCTAssertEqual(fake.requests(kind: "summary").count, 2, "backing off: the stale answer is served without a call")
        XCTAssertEqual(c.cache.snapshot.staleServed, 2)
        do { _ = try await c.summary(lang: en, title: "Copenhagen"); XCTFail() } catch {
            XCTAssertEqual(error as? UpstreamError, .rateLimited(retryAfter: 120), "nothing stale to serve: the caller learns how long to wait")
        }
        clock.advance(600)   // past stale-if-error as well: the error goes through
        do { _ = try await c.summary(lang: en, title: "Amsterdam"); XCTFail() } catch { XCTAssertNotNil((error as? UpstreamError)?.retryAfter) }
    }

    func testBreakerFailsFastAfterConsecutiveFailuresAndAProbeClosesIt() async throws {
        let c = client()
        fake.set("feed", .status(500, "{}"))
        for day in 1...3 {
            do { _ = try await c.featuredFeed(lang: en, date: FeedDate(year: 2026, month: 11, day: day)!); XCTFail() } catch {
                XCTAssertEqual(error as? UpstreamError, .unavailable(status: 500))
            }
        }
        XCTAssertEqual(c.guards.state(origin: c.origin(lang: "en")), .open)
        do { _ = try await c.summary(lang: en, title: "Amsterdam"); XCTFail() } catch {
            XCTAssertEqual(error as? UpstreamError, .circuitOpen(retryAfter: 10), "every kind to that origin fails fast")
        }
        XCTAssertEqual(fake.requests.count, 3)
        fake.set("feed", .embedded)
        clock.advance(10)
        _ = try await c.featuredFeed(lang: en, date: FeedDate("2026-11-20")!)   // the probe
        XCTAssertEqual(c.guards.state(origin: c.origin(lang: "en")), .closed)
        _ = try await c.summary(lang: en, title: "Amsterdam")
        XCTAssertEqual(fake.requests.count, 5)
    }

    func testConcurrencyPerOriginIsBoundedAndCoalescingStillWorks() async throws {
        let c = client(maxConcurrent: 2)
        fake.set("search", .delay(0.1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for q in ["Am", "Co", "Mu", "Ri", "Ny", "Pr"] { group.addTask { _ = try await c.prefixSearch(lang: .english, query: q) } }
            try await group.waitForAll()
        }
        XCTAssertLessThanOrEqual(fake.maxInFlight, 2)
        XCTAssertEqual(fake.requests(kind: "search").count, 6)
        fake.set("summary", .delay(0.1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 { group.addTask { _ = try await c.summary(lang: .english, title: "Rijksmuseum") } }
            try await group.waitForAll()
        }
        XCTAssertEqual(fake.requests(kind: "summary").count, 1, "40 concurrent misses, one call")
    }

    func testRelativeRedirectIsResolvedAndTheCardSaysWhereItCameFrom() async throws {
        let c = client()
        let s = try await c.summary(lang: en, title: "Bombay")
        XCTAssertEqual(s.title, "Mumbai")
        XCTAssertEqual(s.redirectedFrom, "Bombay")
        XCTAssertEqual(fake.requests(kind: "summary").map(\.path), ["/en/api/rest_v1/page/summary/Bombay", "/en/api/rest_v1/page/summary/Mumbai"])
        XCTAssertEqual(Card(summary: s, lang: en).redirectedFrom, "Bombay")
        let direct = try await c.summary(lang: en, title: "Mumbai")
        XCTAssertNil(direct.redirectedFrom)
    }

    func testRedirectLoopsAndRedirectsElsewhereAreRefused() async throws {
        let c = client()
        fake.set("summary", .answer(302, ["Location": "Loop"], "{}"))
        do { _ = try await c.summary(lang: en, title: "Loop"); XCTFail() } catch { XCTAssertEqual(error as? UpstreamError, .unavailable(status: 302)) }
        XCTAssertEqual(fake.requests(kind: "summary").count, 1 + UpstreamClient.maxRedirects)
        fake.set("summary", .answer(301, ["Location": "https://elsewhere.example/api/rest_v1/page/summary/X"], "{}"))
        do { _ = try await c.summary(lang: en, title: "Away"); XCTFail() } catch { XCTAssertEqual(error as? UpstreamError, .unavailable(status: 301)) }
        fake.set("summary", .answer(302, ["Location": "../../../../../etc/passwd"], "{}"))
        do { _ = try await c.summary(lang: en, title: "Up"); XCTFail() } catch { XCTAssertEqual(error as? UpstreamError, .unavailable(status: 302)) }
        XCTAssertEqual(fake.requests(kind: "summary").count, 6, "neither is followed")
    }
}

/// What the app sees of Wikimedia's back-pressure, over HTTP.
final class BackPressureRouteTests: XCTestCase {
    var fake: FakeUpstream!
    var server: HTTPServer!

    override func setUpWithError() throws {
        fake = try FakeUpstream()
        server = try startLede { [fake] in
            $0.upstream = fake!.template
            $0.upstreamTimeout = 1
            $0.sectionTimeout = 1
        }
    }

    override func tearDown() { server.shutdown(); server.waitUntilStopped(); fake.stop() }

    func testUserBoundRoutesAnswer503WithWikimediasRetryAfter() throws {
        fake.set("notifications", .answer(429, ["Retry-After": "120"], "{}"))
        for _ in 0..<2 {
            let r = try get(server, "/notifications/badge", ["Authorization": "Bearer demo-bob"]); let problem = r.json
            XCTAssertEqual(r.status, 503)
            XCTAssertEqual(r.headers["retry-after"].flatMap(Int.init).map { (115...120).contains($0) }, true, "\(r.headers)")
            XCTAssertEqual(problem["type"] as? String, "urn:lede:problem:upstream-rate-limited")
            XCTAssertEqual(r.headers["content-type"], "application/problem+json")
        }
        XCTAssertEqual(fake.requests(kind: "notifications").count, 1)
    }

    func testFeedSectionsBecomePlaceholdersWithWikimediasRetryAfter() throws {
        fake.set("related", .answer(429, ["Retry-After": "90"], "{}"))
        let r = try get(server, "/feed?because=Albert_Einstein&sections=featured,becauseYouRead"); let feed = r.json
        XCTAssertEqual(r.status, 200)
        let sections = feed["sections"] as? [[String: Any]] ?? []
        let because = try XCTUnwrap(sections.first { $0["kind"] as? String == "becauseYouRead" })
        XCTAssertEqual(because["status"] as? String, "placeholder")
        XCTAssertEqual(because["reason"] as? String, "upstream-backoff")
        XCTAssertEqual(because["retryAfterSeconds"] as? Int, 90)
        XCTAssertEqual(sections.first { $0["kind"] as? String == "featured" }?["status"] as? String, "ok", "the rest still arrives")
        fake.set("feed", .answer(503, ["Retry-After": "45"], "{}"))
        let all = try get(server, "/feed?date=2026-11-01&because=Albert_Einstein&sections=featured,becauseYouRead"); let problem = all.json
        XCTAssertEqual(all.status, 503, "every section backing off: the feed says how long")
        XCTAssertEqual(problem["type"] as? String, "urn:lede:problem:upstream-rate-limited")
        XCTAssertEqual(all.headers["retry-after"], "90")
    }

    func testRandomWithNoSuitableArticleIsItsOwnPlaceholder() throws {
        fake.set("random", .body(#"{"batchcomplete":true,"query":{"pages":[{"ns":0,"title":"Mercury","pageprops":{"disambiguation":""}},{"ns":1,"title":"Talk:Mercury"}]}}"#))
        let r = try get(server, "/feed?sections=featured,random"); let feed = r.json
        XCTAssertEqual(r.status, 200)
        let random = try XCTUnwrap((feed["sections"] as? [[String: Any]])?.first { $0["kind"] as? String == "random" })
        XCTAssertEqual(random["reason"] as? String, "no-suitable-article")
    }

    func testDisambiguationResultWithAnEmptyDescriptionGetsTheLabel() throws {
        fake.set("search", .body(#"{"query":{"pages":[{"ns":0,"title":"Mercury","index":1,"description":"","pageprops":{"disambiguation":""}},{"ns":0,"title":"Mercury (planet)","index":2,"description":"Planet"}]}}"#))
        let r = try get(server, "/search?q=Mercury"); let body = r.json
        XCTAssertEqual(r.status, 200)
        let items = body["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(items.first?["description"] as? String, "Wikipedia disambiguation page")
        XCTAssertEqual(items.first?["isDisambiguation"] as? Bool, true)
    }

    func testRedirectedSummaryCarriesRedirectedFromAndMetricsShowTheBreaker() throws {
        let r = try get(server, "/summary/Bombay"); let card = r.json
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(card["title"] as? String, "Mumbai")
        XCTAssertEqual(card["redirectedFrom"] as? String, "Bombay")
        let m = try get(server, "/metrics")
        let text = String(decoding: m.body, as: UTF8.self)
        XCTAssertTrue(text.contains("lede_upstream_circuit_state{origin=\"http://127.0.0.1:\(fake.server.port)\"} 0"), text)
        XCTAssertTrue(text.contains("lede_upstream_rejected_total"), text)
    }
}
