import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPServer
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import Upstream

/// A WikimediaAPI over the embedded data with per-call delays and failures, for feed tests without sockets.
final class StubAPI: WikimediaAPI, @unchecked Sendable {
    let base = WikimediaClient(transport: EmbeddedTransport())
    var delays: [String: Double] = [:]
    var failures: [String: UpstreamError] = [:]
    /// Replaces the embedded random batches when set.
    var randomBatch: (@Sendable (Int) async throws -> QueryResult)?
    private let lock = NSLock()
    private var calls: [String: Int] = [:]
    func count(_ k: String) -> Int { lock.withLock { calls[k] ?? 0 } }

    func gate(_ kind: String) async throws {
        lock.withLock { calls[kind, default: 0] += 1 }
        if let d = delays[kind] { try? await Task.sleep(nanoseconds: UInt64(d * 1e9)) }
        if let f = failures[kind] { throw f }
    }
    func featuredFeed(lang: LanguageCode, date: FeedDate) async throws -> FeaturedFeed { try await gate("feed"); return try await base.featuredFeed(lang: lang, date: date) }
    func summary(lang: LanguageCode, title: String) async throws -> PageSummary { try await gate("summary"); return try await base.summary(lang: lang, title: title) }
    func related(lang: LanguageCode, title: String) async throws -> QueryResult { try await gate("related"); return try await base.related(lang: lang, title: title) }
    func randomCandidates(lang: LanguageCode) async throws -> QueryResult {
        try await gate("random")
        if let randomBatch { return try await randomBatch(count("random")) }
        return try await base.randomCandidates(lang: lang)
    }
    func nearby(lang: LanguageCode, latitude: Double, longitude: Double, radiusMeters: Int) async throws -> QueryResult {
        try await gate("nearby"); return try await base.nearby(lang: lang, latitude: latitude, longitude: longitude, radiusMeters: radiusMeters)
    }
    func prefixSearch(lang: LanguageCode, query: String) async throws -> QueryResult { try await base.prefixSearch(lang: lang, query: query) }
    func fullTextSearch(lang: LanguageCode, query: String) async throws -> QueryResult { try await base.fullTextSearch(lang: lang, query: query) }
    func notifications(lang: LanguageCode, authorization: String, filter: NotificationFilter, limit: Int, continueFrom: String?, uselang: String?) async throws -> NotificationPage {
        try await base.notifications(lang: lang, authorization: authorization, filter: filter, limit: limit, continueFrom: continueFrom, uselang: uselang)
    }
    func csrfToken(lang: LanguageCode, authorization: String) async throws -> String { try await base.csrfToken(lang: lang, authorization: authorization) }
    func markRead(lang: LanguageCode, authorization: String, ids: [Int]?, token: String) async throws { try await base.markRead(lang: lang, authorization: authorization, ids: ids, token: token) }
    func articleContents(lang: LanguageCode, title: String) async throws -> ArticleContents { try await gate("contents"); return try await base.articleContents(lang: lang, title: title) }
    func languageLinks(lang: LanguageCode, title: String) async throws -> [LanguageLink] { try await gate("languages"); return try await base.languageLinks(lang: lang, title: title) }
    func mediaList(lang: LanguageCode, title: String) async throws -> [MediaListItem] { try await gate("media"); return try await base.mediaList(lang: lang, title: title) }
    func fileInfo(lang: LanguageCode, files: [String]) async throws -> [String: FileInfo] { try await gate("files"); return try await base.fileInfo(lang: lang, files: files) }
    func pageHTML(lang: LanguageCode, title: String) async throws -> PageHTML { try await gate("html"); return try await base.pageHTML(lang: lang, title: title) }
}

func feedRequest(_ query: String, now: Date = Date()) throws -> FeedRequest {
    var p = RequestParser()
    p.append(Array("GET /feed\(query.isEmpty ? "" : "?" + query) HTTP/1.1\r\nHost: t\r\n\r\n".utf8))
    guard case .request(let r) = p.next() else { fatalError("bad test request") }
    return try FeedRequest.parse(r, now: now)
}

func sections(_ response: HTTPResponse) throws -> [[String: Any]] {
    let bytes: [UInt8]
    switch response.body { case .bytes(let b): bytes = b; case .prepared(let p): bytes = p.identity; case .assembled(let a): bytes = a.identityBytes(); case .stream: bytes = []; case .problem(let r): bytes = r.problem.jsonBytes(typeBase: LedeApp.naming.problemTypeBase) }
    let obj = try JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any]
    return obj["sections"] as! [[String: Any]]
}

final class FeedScenarioTests: XCTestCase {
    let reference = ISO8601DateFormatter().date(from: "2026-11-20T12:00:00Z")!

    /// Seed 000, Returning user — More than 24 hours: "Then I should see the Explore view" (with Continue Reading).
    func testContinueReadingAppearsAfterMoreThan24HoursInTheBackground() async throws {
        let service = FeedService(api: StubAPI(), now: { [reference] in reference })
        let r = try feedRequest("date=2026-11-20&continue=Rijksmuseum&backgroundedAt=2026-11-19T11:59:00Z&sections=continueReading", now: reference)
        let s = try sections(try await service.feed(r))
        XCTAssertEqual(s.map { $0["kind"] as? String }, ["continueReading"])
        let card = (s[0]["items"] as! [[String: Any]])[0]
        XCTAssertEqual(card["title"] as? String, "Rijksmuseum")
        XCTAssertEqual(card["description"] as? String, "National museum of the Netherlands in Amsterdam")
    }

    /// Seed 000, Returning user — Less than 24 hours: the app reopens the article itself, so no Continue Reading card.
    func testContinueReadingIsAbsentWithin24Hours() async throws {
        let service = FeedService(api: StubAPI(), now: { [reference] in reference })
        let r = try feedRequest("date=2026-11-20&continue=Rijksmuseum&backgroundedAt=2026-11-19T12:00:00Z&sections=continueReading,featured", now: reference)
        let s = try sections(try await service.feed(r))
        XCTAssertEqual(s.map { $0["kind"] as? String }, ["featured"])
        XCTAssertFalse(FeedRequest.showsContinueReading(backgroundedAt: reference.addingTimeInterval(-24 * 3600), now: reference), "exactly 24 hours is not more")
        XCTAssertTrue(FeedRequest.showsContinueReading(backgroundedAt: reference.addingTimeInterval(-24 * 3600 - 1), now: reference))
    }

    /// Seed 000, Explore — Because you read: three recommendations, filtered.
    func testBecauseYouReadHasThreeFilteredItems() async throws {
        let service = FeedService(api: StubAPI())
        let s = try sections(try await service.feed(try feedRequest("because=Amsterdam&sections=becauseYouRead")))
        XCTAssertEqual(s[0]["source"] as? String, "Amsterdam")
        let items = s[0]["items"] as! [[String: Any]]
        XCTAssertEqual(items.count, 3)
        for i in items {
            XCTAssertEqual(i["type"] as? String, "standard")
            XCTAssertNotEqual(i["title"] as? String, "Amsterdam")
            XCTAssertFalse((i["title"] as! String).contains(":"))
        }
    }

    /// Seed 000, Explore — Nearby: distance and bearing per item.
    func testNearbyCardsHaveDistanceAndBearing() async throws {
        let service = FeedService(api: StubAPI())
        let s = try sections(try await service.feed(try feedRequest("lat=40.4380638&lon=-3.7495758&sections=nearby")))
        XCTAssertEqual(s[0]["latitude"] as? Double, 40.4380638)
        let items = s[0]["items"] as! [[String: Any]]
        XCTAssertGreaterThanOrEqual(items.count, 3)
        XCTAssertTrue(items.allSatisfy { $0["distanceMeters"] is Double && $0["bearingDegrees"] is Double })
    }

    /// Seed 000, Explore — Picture of the day: caption in the user's language, else English, else any.
    func testPictureOfTheDayCaptionLocalisationAndFallback() {
        var pic = FeaturedFeed.PictureOfTheDay(title: "File:X.jpg", thumbnail: nil, image: nil, filePage: nil, artist: nil, credit: nil, license: nil,
                                               description: .init(text: "A description", html: nil, lang: "en"),
                                               structured: .init(captions: ["en": "English", "de": "Deutsch", "es": "Español"]))
        XCTAssertEqual(FeedRules.caption(pic, lang: "de")?.0, "Deutsch")
        XCTAssertEqual(FeedRules.caption(pic, lang: "it")?.1, "en")
        pic.structured = .init(captions: ["es": "Español", "de": "Deutsch"])
        XCTAssertEqual(FeedRules.caption(pic, lang: "it")?.0, "A description", "no Italian: English, the description being English")
        XCTAssertEqual(FeedRules.caption(pic, lang: "es")?.0, "Español")
        pic.description?.lang = "fr"
        XCTAssertEqual(FeedRules.caption(pic, lang: "it")?.1, "de", "no Italian, no English: any caption, stably the first")
        XCTAssertEqual(FeedRules.caption(pic, lang: "fr")?.0, "A description", "the description is in the reader's language")
        pic.description?.lang = "en"
        // As recorded from Wikimedia: one zh-hant caption beside an English description.
        pic.structured = .init(captions: ["zh-hant": "西洋棋皇后"])
        XCTAssertEqual(FeedRules.caption(pic, lang: "en")?.0, "A description")
        XCTAssertEqual(FeedRules.caption(pic, lang: "zh-hant")?.0, "西洋棋皇后")
        pic.structured = nil
        XCTAssertEqual(FeedRules.caption(pic, lang: "it")?.0, "A description")
    }

    /// Seed 000, Explore — placeholder card: a slow section becomes a placeholder; the rest arrives.
    func testSlowSectionBecomesAPlaceholderAndTheRestArrives() async throws {
        let api = StubAPI()
        api.delays["nearby"] = 2
        let service = FeedService(api: api, sectionTimeout: 0.2)
        let t0 = Date()
        let s = try sections(try await service.feed(try feedRequest("lat=52.37&lon=4.89")))
        XCTAssertLessThan(Date().timeIntervalSince(t0), 0.6)
        let nearby = try XCTUnwrap(s.first { $0["kind"] as? String == "nearby" })
        XCTAssertEqual(nearby["status"] as? String, "placeholder")
        XCTAssertEqual(nearby["reason"] as? String, "timeout")
        XCTAssertNotNil(nearby["retryAfterSeconds"] as? Int)
        XCTAssertTrue(s.filter { $0["kind"] as? String != "nearby" }.allSatisfy { $0["status"] as? String == "ok" })
    }

    /// Seed 000, Settings — Explore feed: only the sections the user turned on, in the screen's order.
    /// lat without lon: the feed still arrives; nearby is a placeholder saying why, and nothing failed upstream.
    func testHalfALocationMakesANearbyPlaceholderNotAFailedFeed() async throws {
        let service = FeedService(api: StubAPI())
        for q in ["lat=52.1", "sections=nearby&lon=4.8"] {
            let response = try await service.feed(try feedRequest(q))
            XCTAssertEqual(response.status, 200, q)
            let nearby = try sections(response).first { $0["kind"] as? String == "nearby" }
            XCTAssertEqual(nearby?["status"] as? String, "placeholder", q)
            XCTAssertEqual(nearby?["reason"] as? String, "incomplete-location", q)
            XCTAssertNil(nearby?["retryAfterSeconds"], q)
        }
    }

    func testSettingsSelectedSectionsOnly() async throws {
        let service = FeedService(api: StubAPI())
        let s = try sections(try await service.feed(try feedRequest("sections=random,pictureOfTheDay,mostRead")))
        XCTAssertEqual(s.map { $0["kind"] as? String }, ["mostRead", "pictureOfTheDay", "random"])
    }

    func testAllSectionsFailingIsAProblem() async throws {
        let api = StubAPI()
        api.failures = ["feed": .unavailable(status: 500), "random": .unavailable(status: 500)]
        do { _ = try await FeedService(api: api).feed(try feedRequest("")); XCTFail() } catch let p as Problem { XCTAssertEqual(p.status, 502) }
    }

    /// Slow is not failed: sections still on their way at the section deadline are placeholders that say when their
    /// data is expected (the rest of the upstream deadline), in a 200 that may be kept only until then.
    func testEverySectionSlowIsAFeedOfPlaceholdersNotA504() async throws {
        let api = StubAPI()
        api.delays = ["feed": 1, "random": 1]
        let response = try await FeedService(api: api, sectionTimeout: 0.1, upstreamTimeout: 2).feed(try feedRequest("sections=featured,random"))
        let s = try sections(response)
        XCTAssertEqual(s.map { $0["status"] as? String }, ["placeholder", "placeholder"])
        XCTAssertEqual(s.map { $0["retryAfterSeconds"] as? Int }, [2, 2])
        guard case .prepared(let body) = response.body else { return XCTFail("a shared feed is kept prepared") }
        XCTAssertEqual(body.headers["Cache-Control"], "public, max-age=2")
    }

    func testSharedPartIsBuiltOnceAndRandomIsSharedWithinItsLifetime() async throws {
        let api = StubAPI()
        let service = FeedService(api: api)
        let a = try await service.feed(try feedRequest(""))
        let b = try await service.feed(try feedRequest("because=Madrid"))
        XCTAssertEqual(api.count("feed"), 1)
        XCTAssertEqual(api.count("random"), 1)
        let ra = try sections(a).first { $0["kind"] as? String == "random" }!["items"] as! [[String: Any]]
        let rb = try sections(b).first { $0["kind"] as? String == "random" }!["items"] as! [[String: Any]]
        XCTAssertEqual(ra[0]["title"] as? String, rb[0]["title"] as? String)
        XCTAssertNotNil(service.cachedResponse(for: try feedRequest("")), "a warm non-personal feed is answered without going off the loop")
        XCTAssertNotNil(service.cachedResponse(for: try feedRequest("because=Madrid")), "a warm personal feed is assembled on the loop")
        XCTAssertNil(service.cachedResponse(for: try feedRequest("because=Paris")), "a title not seen yet goes off the loop")
    }

    func testFeedRequestValidation() {
        let now = ISO8601DateFormatter().date(from: "2026-11-22T10:00:00Z")!
        for bad in ["date=2026-11-23", "date=2014-12-31", "date=2026-13-01", "date=20261122", "sections=featured,,news", "sections=ads",
                    "lat=91", "lon=1e3", "lat=91&lon=0", "backgroundedAt=yesterday", "lang=zz", "because=%20", "continue=a%7Cb"] {
            XCTAssertThrowsError(try feedRequest(bad, now: now), bad)
        }
        for outside in ["date=2026-11-23", "date=2014-12-31"] {
            XCTAssertThrowsError(try feedRequest(outside, now: now), outside) { XCTAssertEqual(($0 as? Problem)?.status, 404, "a date with no feed is not found") }
        }
        XCTAssertThrowsError(try feedRequest("date=2026-13-01", now: now)) { XCTAssertEqual(($0 as? Problem)?.status, 400) }
        XCTAssertNoThrow(try feedRequest("date=2015-01-01&sections=news", now: now))
        XCTAssertNil(try feedRequest("because=&continue=", now: now).because, "an empty value is no value")
        let half = try? feedRequest("lat=52.1", now: now)
        XCTAssertEqual(half?.incompleteLocation, true); XCTAssertNil(half?.nearby); XCTAssertEqual(half?.isPersonal, true)
        XCTAssertEqual(try feedRequest("", now: now).date.description, "2026-11-22")
        XCTAssertTrue(try feedRequest("", now: now).isToday)
    }

    /// A request's chosen sections are one word, read back in screen order whatever order (or repetition) they came in.
    func testChosenSectionsKeepScreenOrder() throws {
        let chosen = try feedRequest("sections=continueReading,random,featured,random,nearby").sections
        XCTAssertEqual(Array(chosen), [.featured, .random, .nearby, .continueReading])
        XCTAssertTrue(chosen.contains(.random)); XCTAssertFalse(chosen.contains(.news))
        XCTAssertEqual(Array(try feedRequest("").sections), SectionKind.ordered, "every section by default")
        XCTAssertEqual(Array(SectionSet([])), [])
        for kind in SectionKind.ordered { XCTAssertEqual(Array(SectionSet([kind])), [kind], "\(kind) has a bit of its own") }
        let shared = try feedRequest("sections=featured,mostRead,pictureOfTheDay,news,onThisDay,random,nearby")
        XCTAssertTrue(shared.showsEverySharedSection); XCTAssertTrue(shared.wantsShared)
        let personal = try feedRequest("sections=nearby,becauseYouRead")
        XCTAssertFalse(personal.showsEverySharedSection); XCTAssertFalse(personal.wantsShared)
    }

    /// The feed reads plain values from their bytes and escaped ones through decoding: both spell the same request.
    func testPlainAndEscapedParametersReadAlike() throws {
        let now = Date(timeIntervalSince1970: 1_795_392_000)   // 2026-11-22
        let plain = try feedRequest("lat=52.3547498&lon=-4.5&because=albert_Einstein&continue=Rijksmuseum&backgroundedAt=2026-01-01T00:00:00Z", now: now)
        let escaped = try feedRequest("l%61t=%35%32.3547498&lon=%2D4.5&because=albert+Einstein&continue=%52ijksmuseum"
                                      + "&backgroundedAt=2026-01-01T00%3A00%3A00Z", now: now)
        XCTAssertEqual(plain, escaped)
        XCTAssertEqual(plain.because, "Albert_Einstein", "titles are kept in their database form")
        XCTAssertEqual(plain.nearby, Coordinate(latitude: 52.3547498, longitude: -4.5))
        XCTAssertEqual(plain.backgroundedAt, Date(timeIntervalSince1970: 1_767_225_600))
        XCTAssertEqual(try feedRequest("because=S%C3%A3o+Paulo", now: now).because, "São_Paulo")
        XCTAssertEqual(try feedRequest("because=São Paulo".replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: "ã", with: "%C3%A3"), now: now).because, "São_Paulo")
        // A value that does not decode is left out, and a later one of that name stands.
        XCTAssertEqual(try feedRequest("because=%FF&because=Amsterdam", now: now).because, "Amsterdam")
        for bad in ["lat=52.1.1&lon=4", "lat=&lon=4", "lat=52&lon=+4", "backgroundedAt=", "backgroundedAt=2026-01-01T00:00:00", "because=a%23b"] {
            XCTAssertThrowsError(try feedRequest(bad, now: now), bad) { XCTAssertEqual(($0 as? Problem)?.status, 400, bad) }
        }
    }
}

final class FeedLiveTests: FakeUpstreamTestCase {
    override var loops: Int { 2 }
    override func configure(_ options: inout Options) {
        options.upstreamTimeout = 2
        options.sectionTimeout = 0.3
    }

    func raw(_ text: String) throws -> TestHTTPResponse { try TestHTTPResponse(port: server.port, request: text) }

    func testHangingSectionIsAPlaceholderWithinTheDeadline() throws {
        fake.set("related", .hang)
        let t0 = Date()
        let r = try raw("GET /feed?date=2026-11-20&because=Amsterdam HTTP/1.1\r\nHost: t\r\n\r\n")
        let elapsed = Date().timeIntervalSince(t0)
        XCTAssertEqual(r.status, 200)
        XCTAssertLessThan(elapsed, 0.3 + 0.2, "deadline + 200 ms")
        let s = try JSONSerialization.jsonObject(with: Data(r.body)) as! [String: Any]
        let because = (s["sections"] as! [[String: Any]]).first { $0["kind"] as? String == "becauseYouRead" }!
        XCTAssertEqual(because["status"] as? String, "placeholder")
        XCTAssertEqual(because["retryAfterSeconds"] as? Int, 2, "expected by the end of the 2 s upstream deadline")
        XCTAssertEqual(r.headers["cache-control"], "private, max-age=2", "kept no longer than its earliest retry")
    }

    func testEverySectionFailingIsAProblem() throws {
        fake.set("feed", .status(500, "{}")); fake.set("random", .status(503, "{}"))
        let r = try raw("GET /feed HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(r.status, 502)
        XCTAssertEqual(r.headers["content-type"], "application/problem+json")
    }

    func testConcurrentColdRequestsMakeOneUpstreamCallPerSection() throws {
        fake.set("feed", .delay(0.1))
        let group = DispatchGroup()
        let statuses = Locked<[Int]>([])
        for _ in 0..<20 {
            group.enter()
            Thread.detachNewThread { [port = server.port] in
                let s = (try? TestHTTPResponse(port: port, request: "GET /feed?date=2026-11-19 HTTP/1.1\r\nHost: t\r\n\r\n"))?.status ?? -1
                statuses.mutate { $0.append(s) }
                group.leave()
            }
        }
        group.wait()
        XCTAssertEqual(statuses.value.filter { $0 == 200 }.count, 20)
        XCTAssertEqual(fake.requests(kind: "feed").count, 1)
        XCTAssertEqual(fake.requests(kind: "random").count, 1)
    }

    func testMatchingIfNoneMatchGets304AndTheSameRequestGetsTheSameBytes() throws {
        let a = try raw("GET /feed?date=2026-11-18 HTTP/1.1\r\nHost: t\r\n\r\n")
        let b = try raw("GET /feed?date=2026-11-18 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(a.body, b.body)
        let tag = try XCTUnwrap(a.headers["etag"])
        XCTAssertEqual(tag, b.headers["etag"])
        XCTAssertEqual(a.headers["cache-control"], "public, max-age=60")
        XCTAssertEqual(a.headers["vary"], "Accept, Accept-Encoding, Accept-Language")
        let c = try raw("GET /feed?date=2026-11-18 HTTP/1.1\r\nHost: t\r\nIf-None-Match: \(tag)\r\n\r\n")
        XCTAssertEqual(c.status, 304)
        XCTAssertTrue(c.body.isEmpty)
        let personal = try raw("GET /feed?date=2026-11-18&lat=52.37&lon=4.89 HTTP/1.1\r\nHost: t\r\n\r\n")
        let ptag = try XCTUnwrap(personal.headers["etag"])
        XCTAssertEqual(try raw("GET /feed?date=2026-11-18&lat=52.37&lon=4.89 HTTP/1.1\r\nHost: t\r\nIf-None-Match: \(ptag)\r\n\r\n").status, 304)
    }
}

final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var v: T
    init(_ v: T) { self.v = v }
    var value: T { lock.withLock { v } }
    func mutate(_ f: (inout T) -> Void) { lock.withLock { f(&v) } }
}

/// The one raw client's response (TestSupport), by the name these tests knew it.
typealias TestHTTPResponse = TestResponse
