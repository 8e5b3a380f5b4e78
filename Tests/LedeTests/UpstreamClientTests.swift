import Foundation
import HTTPServer
import EventLoops
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import Upstream

final class UpstreamClientTests: XCTestCase {
    var fake: FakeUpstream!
    override func setUpWithError() throws { fake = try FakeUpstream() }
    override func tearDown() { fake.stop() }

    var en: LanguageCode { .english }
    func live(deadline: Double = 2, cache: UpstreamCache = UpstreamCache(), maxBytes: Int = 1 << 20) -> WikimediaClient {
        WikimediaClient(transport: try! LiveTransport(template: fake.template, contact: "qa@lede.test", maxResponseBytes: maxBytes),
                        cache: cache, deadline: deadline)
    }
    let embedded = WikimediaClient(transport: EmbeddedTransport())

    /// The URL every live call sends, written in one pass into the string, says what the base, the path and
    /// `formEncode` of the query say: unreserved bytes and `:` kept, everything else (UTF-8 included) `%HH`.
    func testAnUpstreamURLIsTheBasePathAndTheFormEncodedQuery() {
        let query = [("action", "query"), ("titles", "Zoë Saldaña|Café"), ("srsearch", "morelike:Ada Lovelace"),
                     ("notfilter", "!read"), ("empty", ""), ("sym", "a+b=c&d/e?f#g%h~i_j.k-l"), ("", "x")]
        for parts in [["https://", ".wikipedia.org"], ["http://127.0.0.1:9/"], ["http://h/", "/x/", ""]] {
            let r = UpstreamRequest(lang: "de", path: "/w/api.php", query: query, kind: .summary)
            XCTAssertEqual(r.url(baseParts: parts), parts.joined(separator: "de") + r.pathAndQuery)
            let bare = UpstreamRequest(lang: "de", path: "/api/rest_v1/page/summary/Caf%C3%A9", kind: .summary)
            XCTAssertEqual(bare.url(baseParts: parts), parts.joined(separator: "de") + bare.path)
        }
        XCTAssertEqual(UpstreamRequest.formEncode([("q", "Zoë a:b")]), "q=Zo%C3%AB%20a:b")
    }

    func testRequestsFollowTheContract() async throws {
        let client = live()
        _ = try await client.featuredFeed(lang: en, date: FeedDate("2026-11-20")!)
        _ = try await client.summary(lang: en, title: "Albert Einstein")
        _ = try await client.related(lang: en, title: "Albert Einstein")
        _ = try await client.randomCandidates(lang: en)
        _ = try await client.nearby(lang: en, latitude: 52.3547498, longitude: 4.8339215, radiusMeters: 10000)
        _ = try await client.prefixSearch(lang: en, query: "Amst")
        _ = try await client.fullTextSearch(lang: en, query: "canal")
        let reqs = fake.requests
        XCTAssertEqual(reqs.map(\.path), ["/en/api/rest_v1/feed/featured/2026/11/20", "/en/api/rest_v1/page/summary/Albert_Einstein",
                                          "/en/w/api.php", "/en/w/api.php", "/en/w/api.php", "/en/w/api.php", "/en/w/api.php"])
        let related = try XCTUnwrap(reqs[2].query)
        XCTAssertTrue(related.hasPrefix("action=query&format=json&formatversion=2&generator=search&gsrsearch=morelike:Albert%20Einstein&gsrnamespace=0&gsrlimit=20&gsrqiprofile=classic_noboostlinks&prop=pageprops%7Cpageimages%7Cdescription%7Cextracts&ppprop=disambiguation&piprop=thumbnail&pithumbsize=320&pilimit=20&exintro=1&explaintext=1&exlimit=20"), related)
        XCTAssertTrue(reqs[3].query!.contains("generator=random&grnnamespace=0&grnfilterredir=nonredirects&grnlimit=20"))
        XCTAssertTrue(reqs[4].query!.contains("generator=geosearch&ggscoord=52.3547498%7C4.8339215&ggsradius=10000&ggslimit=20"))
        XCTAssertTrue(reqs[4].query!.contains("codistancefrompoint=52.3547498%7C4.8339215&colimit=20"))
        XCTAssertTrue(reqs[5].query!.contains("generator=prefixsearch&gpssearch=Amst&gpsnamespace=0&gpslimit=24"))
        XCTAssertTrue(reqs[5].query!.hasSuffix("redirects=1"))
        XCTAssertTrue(reqs[6].query!.contains("generator=search&gsrsearch=canal&gsrnamespace=0&gsrwhat=text&gsrlimit=24"))
        for r in reqs {
            XCTAssertEqual(r.headers["User-Agent"], "Lede/\(LiveTransport.version) (qa@lede.test)")
            XCTAssertTrue(r.headers["Accept-Encoding"]?.contains("gzip") == true, "gzip accepted")
            XCTAssertNil(r.headers["Authorization"], "public calls carry no Authorization")
        }
    }

    func testUserBoundCallsForwardAuthorizationAndAreNeverCached() async throws {
        let client = live()
        let auth = "Bearer demo-alice"
        _ = try await client.notifications(lang: en, authorization: auth, filter: .unread, limit: 5, continueFrom: nil)
        _ = try await client.notifications(lang: en, authorization: auth, filter: .unread, limit: 5, continueFrom: nil)
        let token = try await client.csrfToken(lang: en, authorization: auth)
        try await client.markRead(lang: en, authorization: auth, ids: [700010, 700020], token: token)
        let notif = fake.requests(kind: "notifications")
        XCTAssertEqual(notif.count, 2, "never cached")
        XCTAssertTrue(notif[0].query!.contains("meta=notifications&notformat=model&notprop=list%7Ccount&notfilter=%21read&notlimit=5"))
        let mark = try XCTUnwrap(fake.requests(kind: "markread").first)
        XCTAssertEqual(mark.method, "POST")
        XCTAssertEqual(mark.headers["Content-Type"], "application/x-www-form-urlencoded")
        XCTAssertTrue(mark.body.contains("action=echomarkread") && mark.body.contains("list=700010%7C700020") && mark.body.contains("token="))
        for r in notif + fake.requests(kind: "token") + [mark] { XCTAssertEqual(r.headers["Authorization"], auth) }
        XCTAssertEqual(client.cache.snapshot.entries, 0)
    }

    /// The badge asks Echo for the unread count alone (`notprop=count`: Echo then loads and renders no notification),
    /// through the async call and the callback alike, and reads the count from Echo's count-only answer — including
    /// one capped for display ("99+") and one whose `rawcount` Echo sent as a string.
    func testTheBadgeAsksEchoForTheCountAlone() async throws {
        let client = live()
        let before = try await client.notifications(lang: en, authorization: "Bearer demo-alice", filter: .unread, limit: 50, continueFrom: nil)
        XCTAssertGreaterThan(before.rawcount, 0)
        let count = try await client.unreadCount(lang: en, authorization: "Bearer demo-alice")
        XCTAssertEqual(count, before.rawcount, "the count-only answer carries the same count as the list's")
        let viaCallback = await withCheckedContinuation { (c: CheckedContinuation<Result<Int, any Error>, Never>) in
            client.unreadCount(lang: en, authorization: "Bearer demo-alice") { c.resume(returning: $0) }
        }
        XCTAssertEqual(try viaCallback.get(), before.rawcount)
        let badgeCalls = fake.requests(kind: "notifications").dropFirst()
        XCTAssertEqual(badgeCalls.count, 2)
        for r in badgeCalls {
            XCTAssertEqual(r.query, "action=query&format=json&formatversion=2&meta=notifications&notprop=count")
            XCTAssertEqual(r.headers["Authorization"], "Bearer demo-alice")
        }

        // Echo's count-only shape (ApiEchoNotifications::getPropCount): no list, no continue.
        fake.set("notifications", .body(#"{"batchcomplete":true,"query":{"notifications":{"rawcount":150,"count":"99+"}}}"#))
        let capped = try await client.unreadCount(lang: en, authorization: "Bearer demo-alice")
        XCTAssertEqual(capped, 150, "the raw count, not the display string")
        fake.set("notifications", .body(#"{"batchcomplete":true,"query":{"notifications":{"rawcount":"7","count":"7"}}}"#))
        let lenient = try await client.unreadCount(lang: en, authorization: "Bearer demo-alice")
        XCTAssertEqual(lenient, 7)
        fake.set("notifications", .body(#"{"batchcomplete":true,"query":{}}"#))
        do { _ = try await client.unreadCount(lang: en, authorization: "Bearer demo-alice"); XCTFail("no query.notifications") }
        catch UpstreamError.malformed {}
    }

    /// The embedded Echo answers a count-only call as Echo does: the counts, no list and no continue, whatever the
    /// filter, limit or continue asked.
    func testTheEmbeddedEchoAnswersACountOnlyCallWithTheCountsAlone() async throws {
        let embedded = EmbeddedTransport()
        var req = WikimediaClient.unreadCountRequest(en, "Bearer demo-alice")
        req.query += [("notlimit", "5"), ("notcontinue", "not-one-it-issued")]
        let answer = try await embedded.send(req, deadline: 2)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        let n = try XCTUnwrap((json["query"] as? [String: Any])?["notifications"] as? [String: Any])
        XCTAssertEqual(Set(n.keys), ["rawcount", "count"])
        let list = try await EmbeddedTransport().send(WikimediaClient.notificationsRequest(en, "Bearer demo-alice", .unread, 50, nil), deadline: 2)
        let full = try XCTUnwrap(((try JSONSerialization.jsonObject(with: Data(list.body)) as? [String: Any])?["query"] as? [String: Any])?["notifications"] as? [String: Any])
        XCTAssertEqual(n["rawcount"] as? Int, full["rawcount"] as? Int)
        XCTAssertEqual(n["count"] as? String, full["count"] as? String)
    }

    /// The badge's call is made ready once per language (URL encoded and parsed, head written): sent prepared, it is
    /// the same exchange as sent as it is — path, query, fields, credentials per call — and any change to what it
    /// asks for drops the prepared form; a form made by another transport is never used.
    func testAPreparedRequestIsTheSameExchangeAndAChangeDropsIt() async throws {
        let transport = try LiveTransport(template: fake.template, contact: "qa@lede.test")
        var plain = WikimediaClient.unreadCountRequest(en, "")
        var ready = transport.prepare(plain)
        XCTAssertNotNil(ready.prepared)
        XCTAssertNil(EmbeddedTransport().prepare(plain).prepared, "the embedded transport has nothing to prepare")
        plain.authorization = "Bearer demo-alice"; ready.authorization = "Bearer demo-alice"
        XCTAssertNotNil(ready.prepared, "credentials are sent per call")
        XCTAssertEqual(ready, plain)
        _ = try await transport.send(plain, deadline: 2)
        _ = try await transport.send(ready, deadline: 2)
        ready.authorization = "Bearer demo-bob"
        _ = try await transport.send(ready, deadline: 2)
        let sent = fake.requests
        XCTAssertEqual(sent.count, 3)
        for r in sent {
            XCTAssertEqual(r.method, "GET"); XCTAssertEqual(r.path, "/en/w/api.php"); XCTAssertEqual(r.query, sent[0].query)
            for name in ["User-Agent", "Accept", "Accept-Encoding", "Host"] { XCTAssertEqual(r.headers[name], sent[0].headers[name], name) }
        }
        XCTAssertEqual(sent.map { $0.headers["Authorization"] }, ["Bearer demo-alice", "Bearer demo-alice", "Bearer demo-bob"])

        var changed = ready
        changed.query.append(("notcontinue", "5|1")); XCTAssertNil(changed.prepared)
        changed = ready; changed.path = "/w/index.php"; XCTAssertNil(changed.prepared)
        changed = ready; changed.lang = "de"; XCTAssertNil(changed.prepared)
        changed = ready; changed.method = .post; XCTAssertNil(changed.prepared)
        changed = ready; changed.form = [("a", "b")]; XCTAssertNil(changed.prepared)
        // Requests are values (their fields shared in a box, copied on write): changing a copy leaves the original.
        XCTAssertNotNil(ready.prepared)
        XCTAssertEqual(ready, plain.with(authorization: "Bearer demo-bob"))
        XCTAssertEqual(ready.lang, "en"); XCTAssertEqual(ready.method, .get); XCTAssertEqual(ready.path, "/w/api.php")
        XCTAssertTrue(ready.form.isEmpty); XCTAssertFalse(ready.query.contains { $0.0 == "notcontinue" })
        changed = ready; changed.kind = .random; XCTAssertEqual(ready.kind, .notifications); XCTAssertNotEqual(changed, ready)

        // Another transport (another base URL) sends the request as the request says, not as the first one wrote it.
        let other = try FakeUpstream()
        defer { other.stop() }
        let elsewhere = try LiveTransport(template: other.template, contact: "qa@lede.test")
        _ = try await elsewhere.send(ready, deadline: 2)
        XCTAssertEqual(other.requests.map(\.path), ["/en/w/api.php"])
        XCTAssertEqual(fake.requests.count, 3)

        // The badge through the client: prepared once, sent with each user's own credentials.
        let client = WikimediaClient(transport: transport)
        _ = try await client.unreadCount(lang: en, authorization: "Bearer demo-alice")
        _ = try await client.unreadCount(lang: en, authorization: "Bearer demo-bob")
        XCTAssertNotNil(client.preparedUnread(en).0.prepared)
        XCTAssertEqual(fake.requests.suffix(2).map { $0.headers["Authorization"] }, ["Bearer demo-alice", "Bearer demo-bob"])
        XCTAssertEqual(fake.requests.suffix(2).map(\.query), [sent[0].query, sent[0].query])
    }

    func testLiveAndEmbeddedReturnTheSameModelsForTheSameBytes() async throws {
        let client = live()
        for lang in ["en", "de", "it"].compactMap(LanguageCode.init) {
            let a = try await client.featuredFeed(lang: lang, date: FeedDate("2026-11-18")!)
            let b = try await embedded.featuredFeed(lang: lang, date: FeedDate("2026-11-18")!)
            XCTAssertEqual(a, b)
            let s1 = try await client.summary(lang: lang, title: "Amsterdam"), s2 = try await embedded.summary(lang: lang, title: "Amsterdam")
            XCTAssertEqual(s1, s2)
            let n1 = try await client.nearby(lang: lang, latitude: 52.37, longitude: 4.89, radiusMeters: 10_000)
            let n2 = try await embedded.nearby(lang: lang, latitude: 52.37, longitude: 4.89, radiusMeters: 10_000)
            XCTAssertEqual(n1, n2)
        }
        let r1 = try await client.related(lang: en, title: "Mercury (planet)"), r2 = try await embedded.related(lang: en, title: "Mercury (planet)")
        XCTAssertEqual(r1, r2)
        let p1 = try await client.prefixSearch(lang: en, query: "Bomb"), p2 = try await embedded.prefixSearch(lang: en, query: "Bomb")
        XCTAssertEqual(p1, p2)
        let u1 = try await client.notifications(lang: en, authorization: "Bearer demo-bob", filter: .all, limit: 50, continueFrom: nil)
        let u2 = try await embedded.notifications(lang: en, authorization: "Bearer demo-bob", filter: .all, limit: 50, continueFrom: nil)
        XCTAssertEqual(u1, u2)
    }

    func assertThrows(_ expected: UpstreamError, _ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line) async {
        do { try await body(); XCTFail("expected \(expected)", file: file, line: line) } catch let e as UpstreamError {
            switch (e, expected) {
            case (.notFound, .notFound), (.malformed, .malformed): break
            default: XCTAssertEqual(e, expected, file: file, line: line)
            }
        } catch { XCTFail("unexpected \(error)", file: file, line: line) }
    }

    func testEachUpstreamFailureHasItsTypedError() async throws {
        let client = live(deadline: 0.3, maxBytes: 64 * 1024)
        fake.set("summary", .delay(1))
        await assertThrows(.timeout) { _ = try await client.summary(lang: en, title: "Amsterdam") }
        fake.set("summary", .hang)
        await assertThrows(.timeout) { _ = try await client.summary(lang: en, title: "Madrid") }
        fake.set("summary", .status(500, "{\"error\":\"boom\"}"))
        await assertThrows(.unavailable(status: 500)) { _ = try await client.summary(lang: en, title: "Mumbai") }
        fake.set("summary", .status(404, "{\"detail\":\"Page or revision not found.\"}"))
        await assertThrows(.notFound("")) { _ = try await client.summary(lang: en, title: "Nope") }
        fake.set("summary", .body("{not json"))
        await assertThrows(.malformed("")) { _ = try await client.summary(lang: en, title: "Copenhagen") }
        fake.set("summary", .body("{\"type\":\"standard\"}"))
        await assertThrows(.malformed("")) { _ = try await client.summary(lang: en, title: "Nyhavn") }
        fake.set("summary", .oversized(200 * 1024))
        await assertThrows(.tooLarge) { _ = try await client.summary(lang: en, title: "Vondelpark") }
        fake.set("search", .body("{\"error\":{\"code\":\"internal_api_error_DBQueryError\",\"info\":\"Database query error.\"}}"))
        await assertThrows(.unavailable(status: 503)) { _ = try await client.prefixSearch(lang: en, query: "x") }
        fake.set("search", .body("{\"error\":{\"code\":\"badvalue\",\"info\":\"Unrecognized value for parameter \\\"srsearch\\\": y.\"}}"))
        await assertThrows(.rejected(parameter: "q", code: "badvalue")) { _ = try await client.fullTextSearch(lang: en, query: "y") }
        fake.set("notifications", .body("{\"error\":{\"code\":\"mwoauth-invalid-authorization-invalid-user\",\"info\":\"no\"}}"))
        await assertThrows(.notAuthorised) { _ = try await client.notifications(lang: en, authorization: "Bearer x", filter: .all, limit: 1, continueFrom: nil) }
        fake.set("notifications", .status(401, "{}"))
        await assertThrows(.notAuthorised) { _ = try await client.notifications(lang: en, authorization: "Bearer x", filter: .all, limit: 1, continueFrom: nil) }
        XCTAssertEqual(client.metrics.count(kind: "summary", outcome: "timeout"), 2)
        XCTAssertEqual(client.metrics.count(kind: "summary", outcome: "too_large"), 1)
        XCTAssertEqual(client.metrics.count(kind: "summary", outcome: "unavailable"), 1)
    }

    /// One mapping of Action API error codes: what the client sent is a 400 naming its parameter; Wikimedia's own
    /// trouble stays 502/503 (with Retry-After where given).
    func testActionAPIErrorsAreToldAsTheClientsOrWikimediasFault() async throws {
        let client = live()
        func echoError(_ code: String, _ info: String) { fake.set("notifications", .body("{\"error\":{\"code\":\"\(code)\",\"info\":\"\(info)\"}}")) }
        func list() async throws { _ = try await client.notifications(lang: en, authorization: "Bearer x", filter: .all, limit: 5, continueFrom: "1|2") }
        let cases: [(String, String, UpstreamError)] = [
            ("badcontinue", "Invalid continue param. You should pass the original value returned by the previous query.", .rejected(parameter: "continue", code: "badcontinue")),
            ("badvalue", "Unrecognized value for parameter \\\"notfilter\\\": x.", .rejected(parameter: "filter", code: "badvalue")),
            ("baddatatype", "Invalid value \\\"x\\\" for integer parameter \\\"notlimit\\\".", .rejected(parameter: "limit", code: "baddatatype")),
            ("toomanyvalues", "Too many values supplied for parameter \\\"titles\\\". The limit is 50.", .rejected(parameter: "title", code: "toomanyvalues")),
            ("missingparam", "The \\\"list\\\" parameter must be set.", .rejected(parameter: nil, code: "missingparam")),
            ("internal_api_error_DBQueryError", "Database query error.", .unavailable(status: 503)),
            ("readonly", "The wiki is currently in read-only mode.", .unavailable(status: 503)),
        ]
        for (code, info, expected) in cases {
            echoError(code, info)
            await assertThrows(expected) { try await list() }
        }
        echoError("maxlag", "Waiting for a database server: 6 seconds lagged.")
        do { try await list(); XCTFail("maxlag") } catch let e as UpstreamError { XCTAssertNotNil(e.retryAfter, "maxlag: Lede backs off") }
        // As answers: 400 with the parameter named; Wikimedia's own trouble 502/503.
        let rejected = Problem(upstream: .rejected(parameter: "continue", code: "badcontinue"))
        XCTAssertEqual(rejected.status, 400)
        XCTAssertEqual(rejected.slug, "invalid-parameter")
        XCTAssertTrue(rejected.detail.contains("the value of continue (badcontinue)"), rejected.detail)
        XCTAssertEqual(rejected.extensions.first?.0, "parameter")
        XCTAssertEqual(Problem(upstream: .unavailable(status: 503)).status, 502)
        XCTAssertEqual(Problem(upstream: .rateLimited(retryAfter: 6)).headers["Retry-After"], "6")
        XCTAssertEqual(WikimediaClient.clientParameter(code: "badvalue", info: "Unrecognized value for parameter \"ggscoord\"."), "lat")
        XCTAssertEqual(WikimediaClient.clientParameter(code: "invalidtitle", info: nil), "title")
    }

    func testConcurrentIdenticalMissesMakeOneUpstreamCall() async throws {
        let client = live()
        fake.set("summary", .delay(0.3))
        try await withThrowingTaskGroup(of: PageSummary.self) { group in
            for _ in 0..<100 { group.addTask { try await client.summary(lang: .english, title: "Rijksmuseum") } }
            var n = 0
            for try await s in group { XCTAssertEqual(s.title, "Rijksmuseum"); n += 1 }
            XCTAssertEqual(n, 100)
        }
        XCTAssertEqual(fake.requests(kind: "summary").count, 1)
        let c = client.cache.snapshot
        XCTAssertEqual(c.misses, 1)
        XCTAssertEqual(c.coalesced + c.hits, 99)
    }

    func testStaleIfErrorServesTheLastGoodValueThenGivesUp() async throws {
        final class Clock: @unchecked Sendable { var now = 1000.0 }
        let clock = Clock()
        let cache = UpstreamCache(limits: .init(staleIfError: 60), clock: { clock.now })
        let client = live(cache: cache)
        let fresh = try await client.summary(lang: en, title: "Madrid")
        fake.set("summary", .status(503, "{}"))
        clock.now += 30   // still fresh: a hit, no upstream call
        _ = try await client.summary(lang: en, title: "Madrid")
        XCTAssertEqual(fake.requests(kind: "summary").count, 1)
        clock.now += client.ttls.summary   // expired, within the stale bound
        let stale = try await client.summary(lang: en, title: "Madrid")
        XCTAssertEqual(stale, fresh)
        XCTAssertEqual(cache.snapshot.staleServed, 1)
        clock.now += 61    // past the bound
        await assertThrows(.unavailable(status: 503)) { _ = try await client.summary(lang: en, title: "Madrid") }
        fake.set("summary", .status(404, "{}"))
        clock.now -= 61    // a 404 is an answer, never covered by a stale value
        await assertThrows(.notFound("")) { _ = try await client.summary(lang: en, title: "Madrid") }
    }

    /// A missing page is remembered briefly: a popular dead link does not send every request upstream.
    func testNotFoundIsRememberedForItsTTLThenAskedAgain() async throws {
        final class Clock: @unchecked Sendable { var now = 1000.0 }
        let clock = Clock()
        let cache = UpstreamCache(limits: .init(notFoundTTL: 60), clock: { clock.now })
        let client = live(cache: cache)
        fake.set("summary", .status(404, "{}"))
        for _ in 0..<5 { await assertThrows(.notFound("")) { _ = try await client.summary(lang: en, title: "Madrid") } }
        XCTAssertEqual(fake.requests(kind: "summary").count, 1)
        fake.set("summary", .embedded)   // the page is created
        clock.now += 59
        await assertThrows(.notFound("")) { _ = try await client.summary(lang: en, title: "Madrid") }
        clock.now += 2
        let page = try await client.summary(lang: en, title: "Madrid")
        XCTAssertEqual(page.title, "Madrid")
        XCTAssertEqual(fake.requests(kind: "summary").count, 2)
    }

    /// Each event loop records upstream calls into a table of its own (no lock shared between loops); whatever thread
    /// or loop recorded them, counts and the rendered text add every one up.
    func testUpstreamMetricsFromManyLoopsAndThreadsAddUp() throws {
        let metrics = UpstreamMetrics(loops: 2)
        let loops = try (0..<3).map { try EventLoop(id: $0) }
        for (i, l) in loops.enumerated() { l.start(name: "metrics-test-\(i)") }
        defer { for l in loops { l.stop() } }
        let done = DispatchGroup()
        for l in loops {
            for _ in 0..<100 {
                done.enter()
                l.execute { metrics.record(kind: "summary", outcome: "ok", seconds: 0.02); metrics.skipped(kind: "summary", count: 1); done.leave() }
            }
        }
        DispatchQueue.concurrentPerform(iterations: 100) { _ in metrics.record(kind: "summary", outcome: "timeout", seconds: nil) }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(metrics.count(kind: "summary", outcome: "ok"), 300)
        XCTAssertEqual(metrics.count(kind: "summary", outcome: "timeout"), 100)
        XCTAssertEqual(metrics.totalCalls(kind: "summary"), 400)
        XCTAssertEqual(metrics.skippedCount(kind: "summary"), 300)
        let text = metrics.render(cache: UpstreamCache().snapshot)
        XCTAssertTrue(text.contains("lede_upstream_calls_total{kind=\"summary\",outcome=\"ok\"} 300"), text)
        XCTAssertTrue(text.contains("lede_upstream_duration_seconds_count 300"), text)
    }

    func testMetricsTextCarriesUpstreamAndCacheCounters() async throws {
        let client = live()
        _ = try await client.summary(lang: en, title: "Nyhavn")
        _ = try await client.summary(lang: en, title: "Nyhavn")
        let text = client.metrics.render(cache: client.cache.snapshot)
        XCTAssertTrue(text.contains("lede_upstream_calls_total{kind=\"summary\",outcome=\"ok\"} 1"), text)
        XCTAssertTrue(text.contains("lede_cache_hits_total 1"))
        XCTAssertTrue(text.contains("lede_cache_misses_total 1"))
        XCTAssertTrue(text.contains("lede_upstream_duration_seconds_count 1"))
    }
}

final class UpstreamCacheTests: XCTestCase {
    func testLeastRecentlyUsedIsEvictedWithinEntryAndByteBounds() async throws {
        let cache = UpstreamCache(limits: .init(maxEntries: 3, maxBytes: 1000))
        for k in ["a", "b", "c"] { _ = try await cache.value(k, ttl: 60) { (k, 100) } }
        _ = try await cache.value("a", ttl: 60) { ("a2", 100) }     // hit: a is now most recent
        _ = try await cache.value("d", ttl: 60) { ("d", 100) }      // evicts b
        let b: String = try await cache.value("b", ttl: 60) { ("b-refetched", 100) }
        XCTAssertEqual(b, "b-refetched")
        let a: String = try await cache.value("a", ttl: 60) { ("a3", 100) }
        XCTAssertEqual(a, "a", "a survived: it was used recently")
        _ = try await cache.value("big", ttl: 60) { ("big", 900) }  // byte bound: evicts until 1000 fits
        XCTAssertLessThanOrEqual(cache.snapshot.bytes, 1000)
        XCTAssertGreaterThanOrEqual(cache.snapshot.evictions, 2)
        _ = try await cache.value("huge", ttl: 60) { ("huge", 5000) }  // larger than the cache: served, not kept
        XCTAssertLessThanOrEqual(cache.snapshot.bytes, 1000)
    }

    /// A dropped cache frees what it held (its LRU list links both ways; the decoders' fuzz target found the nodes
    /// of every dropped cache leaked).
    func testADroppedCacheFreesItsValues() {
        final class Held: Sendable {}
        weak var first: Held?, last: Held?
        do {
            let cache = UpstreamCache()
            for k in 0..<3 {
                let held = Held()
                if k == 0 { first = held } else if k == 2 { last = held }
                cache.insert("k\(k)", held, cost: 1, ttl: 60)
            }
            XCTAssertNotNil(first); XCTAssertNotNil(last)
        }
        XCTAssertNil(first, "the least recently used value is freed with its cache")
        XCTAssertNil(last, "the most recently used value is freed with its cache")
    }

    func testExpiredEntriesAreRefetched() async throws {
        final class Clock: @unchecked Sendable { var now = 0.0 }
        let clock = Clock()
        let cache = UpstreamCache(clock: { clock.now })
        _ = try await cache.value("k", ttl: 10) { (1, 1) }
        clock.now = 11
        let v: Int = try await cache.value("k", ttl: 10) { (2, 1) }
        XCTAssertEqual(v, 2)
    }
}

extension UpstreamRequest {
    func with(authorization: String?) -> UpstreamRequest { var r = self; r.authorization = authorization; return r }
}
