import Foundation
import HTTPServer
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import Upstream

/// Answers Wikimedia really sent (recorded by the Wikipedia apps, in Tests/Fixtures/wikimedia) and the
/// shapes Echo is known to send, through the decoders and through the real routes.
final class RealAnswersTests: XCTestCase {
    /// Tests/Fixtures/wikimedia, beside this target's folder (where they came from: the README there).
    static let fixtures: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/wikimedia")

    static func fixtureFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: fixtures, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func fixture(_ prefix: String) throws -> [UInt8] {
        let file = try XCTUnwrap(try fixtureFiles().first { $0.lastPathComponent.hasPrefix(prefix) }, "no fixture \(prefix)")
        return [UInt8](try Data(contentsOf: file))
    }

    let client = WikimediaClient(transport: EmbeddedTransport())

    // MARK: - Every file through the decoders

    func testEveryRecordedAnswerDecodes() throws {
        let files = try Self.fixtureFiles()
        XCTAssertGreaterThanOrEqual(files.count, 10, "the recorded answers are in \(Self.fixtures.path)")
        for file in files {
            let name = file.lastPathComponent
            let body = [UInt8](try Data(contentsOf: file))
            switch name.split(separator: "_").first.map(String.init) ?? "" {
            case "feed":
                let feed = try client.decode(FeaturedFeed.self, body, kind: .feed)
                XCTAssertNotNil(feed.tfa, name)
                if name.contains("missing_view_history") {
                    XCTAssertEqual(feed.mostread?.articles.count, 2, name)
                    XCTAssertEqual(feed.mostread?.articles.first?.views, 1_200_352, name)
                    XCTAssertNotNil(feed.image?.structured?.captions?["zh-hant"], name)
                    XCTAssertEqual(FeedRules.caption(feed.image!, lang: "en")?.1, "en", "an English reader gets the English description")
                    XCTAssertEqual(feed.image?.license?.type, "CC BY 2.0", name)
                }
            case "summary":
                let s = try client.decode(PageSummary.self, body, kind: .summary)
                XCTAssertFalse(s.title.isEmpty, name)
                XCTAssertNotNil(s.extract, name)
                if name.contains("moscow") { XCTAssertNotNil(s.coordinates, name) }
            case "query":
                let envelope = try client.decode(ActionEnvelope<PagesQuery>.self, body, kind: .search)
                let pages = try XCTUnwrap(envelope.query?.pages, name)
                XCTAssertGreaterThan(pages.count, 0, name)
                XCTAssertTrue(pages.allSatisfy { $0.ns == 0 && $0.isMainNamespace }, name)
            case "notifications":
                let envelope = try client.decode(ActionEnvelope<NotificationsQuery>.self, body, kind: .notifications)
                let n = try XCTUnwrap(envelope.query?.notifications, name)
                XCTAssertEqual(n.list?.count, 9, name)
                XCTAssertEqual(n.continue, "1569862285|172771996", name)
                XCTAssertTrue(n.list!.allSatisfy { $0.isRead && $0.timestamp?.utcunix != nil && $0.agent?.name != nil }, name)
            case "media":
                let media = try client.decode(MediaListAnswer.self, body, kind: .media)
                XCTAssertEqual(media.items?.map(\.type), ["image", "video"], name)
                XCTAssertEqual(media.items?.first?.title, "File:BarackObamaportrait.jpg", name)
                XCTAssertEqual(media.items?.first?.srcset, [], "an answer of 2018 names no sizes: \(name)")
            case "tokens":
                let envelope = try client.decode(ActionEnvelope<TokensQuery>.self, body, kind: .token)
                XCTAssertEqual(envelope.query?.tokens?.csrftoken?.hasSuffix("+\\"), true, name)
            default:
                XCTFail("\(name): a recorded answer no test knows; add it here and to the route test")
            }
        }
        XCTAssertEqual(client.metrics.skippedCount(kind: "mostread") + client.metrics.skippedCount(kind: "notifications"), 0,
                       "nothing in the real answers is skipped")
    }

    // MARK: - Echo as its source says it answers

    func notifications(_ items: String, count: String = "\"rawcount\":1,\"count\":\"1\"") throws -> NotificationsQuery.Notifications {
        let body = Array("{\"batchcomplete\":true,\"query\":{\"notifications\":{\"list\":[\(items)],\(count)}}}".utf8)
        return try XCTUnwrap(try client.decode(ActionEnvelope<NotificationsQuery>.self, body, kind: .notifications).query?.notifications)
    }

    static let welcome = """
    {"wiki":"enwiki","id":301,"type":"welcome","category":"system","section":"message","timestamp":{"utciso8601":"2026-11-20T10:00:00Z","utcunix":1795168800},"agent":{"id":0,"name":"MediaWiki default"},"*":{"header":"Welcome to Wikipedia, Qa!","compactHeader":"Welcome!","body":"","icon":"site","links":{"primary":[],"secondary":[]}}}
    """

    func testWelcomeNotificationWhosePrimaryLinkIsAnEmptyArray() throws {
        let n = try notifications(Self.welcome)
        let item = try XCTUnwrap(n.list?.first)
        XCTAssertEqual(item.id, 301)
        XCTAssertNil(item.content?.links?.primary)
        let shown = NotificationItem(item)
        XCTAssertNil(shown.primaryLink)
        XCTAssertEqual(shown.header, "Welcome to Wikipedia, Qa!")
        XCTAssertEqual(shown.timestamp, "2026-11-20T10:00:00Z")
    }

    func testUtcunixAsAStringBefore2019() throws {
        let n = try notifications(#"{"wiki":"enwiki","id":"88","type":"edit-user-talk","category":"edit-user-talk","timestamp":{"utcunix":"1473272185","unix":"1473272185"},"title":{"full":"User talk:Qa","namespace":"User_talk","namespace-key":3,"text":"Qa"},"agent":{"id":"12","name":"Someone"},"*":{"header":"h","links":{"primary":{"url":"https://en.wikipedia.org/wiki/User_talk:Qa","label":"View"}}}}"#)
        let item = try XCTUnwrap(n.list?.first)
        XCTAssertEqual(item.id, 88)
        XCTAssertEqual(item.timestamp?.utcunix, 1_473_272_185)
        XCTAssertEqual(item.agent?.id, 12)
        XCTAssertEqual(NotificationItem(item).timestamp, "2016-09-07T18:16:25Z")
    }

    func testNotificationWithoutATitleAndWithAHiddenAgent() throws {
        let n = try notifications(#"{"wiki":"enwiki","id":7,"type":"thank-you-edit","category":"system","timestamp":{"utciso8601":"2026-11-20T10:00:00Z","utcunix":1795168800},"agent":{"userhidden":""},"*":{"header":"You made your tenth edit","links":{"primary":[]}}}"#)
        let item = try XCTUnwrap(n.list?.first)
        XCTAssertNil(item.title)
        XCTAssertNil(item.agent?.name)
        let shown = NotificationItem(item)
        XCTAssertNil(shown.title)
        XCTAssertNil(shown.agent)
    }

    func testFormatVersion1FlagsAndStringIds() throws {
        // formatversion=1: ids and counts as strings, flags as "" (an unread item has no `read`).
        let n = try notifications(#"{"wiki":"enwiki","id":"5","type":"mention","category":"mention","timestamp":{"utcunix":"1795168800"},"read":"20261120100000","*":{"header":"h","links":{"primary":{"url":"https://en.wikipedia.org/wiki/Talk:X","label":"View"}}}},{"id":"6","type":"mention","category":"mention","*":{"header":"h2"}}"#,
                                  count: "\"rawcount\":\"1\",\"count\":\"1\",\"continue\":\"\"")
        XCTAssertEqual(n.list?.map(\.id), [5, 6])
        XCTAssertEqual(n.list?.map(\.isRead), [true, false])
        XCTAssertEqual(n.rawcount, 1)
        XCTAssertNil(n.continue)
        // A page with `missing: ""` is missing; `pageprops.disambiguation: ""` marks a disambiguation page.
        let pages = try client.decode(ActionEnvelope<PagesQuery>.self, Array(#"{"query":{"pages":[{"ns":"0","title":"Gone","missing":""},{"ns":0,"title":"Mercury","pageprops":{"disambiguation":""}}]}}"#.utf8), kind: .search)
        XCTAssertEqual(pages.query?.pages?.map(\.missing), [true, nil])
        XCTAssertEqual(pages.query?.pages?.map(\.isDisambiguation), [false, true])
        XCTAssertEqual(pages.query?.pages?.first?.ns, 0)
    }

    func testOptionalFieldsOfAnotherTypeCountAsAbsent() throws {
        let body = Array(#"{"title":"Dog","type":[],"description":{},"thumbnail":[],"coordinates":{"lat":"x"},"pageid":"4269567","views":"12","namespace":[],"content_urls":[]}"#.utf8)
        let s = try client.decode(PageSummary.self, body, kind: .summary)
        XCTAssertEqual(s.title, "Dog")
        XCTAssertNil(s.type); XCTAssertNil(s.description); XCTAssertNil(s.thumbnail); XCTAssertNil(s.coordinates); XCTAssertNil(s.namespace)
        XCTAssertEqual(s.pageid, 4_269_567)
        XCTAssertEqual(s.views, 12)
        XCTAssertEqual(Card(summary: s, lang: LanguageCode("en")!).url, "https://en.wikipedia.org/wiki/Dog")
    }

    func testGeosearchPagesWithoutNsOrWithPrimaryAsAnEmptyString() throws {
        let body = Array(#"{"query":{"pages":[{"pageid":1,"title":"Vondelpark","coordinates":[{"lat":52.358,"lon":4.868,"primary":"","dist":812.4}]},{"pageid":2,"ns":0,"title":"Rijksmuseum","coordinates":[{"lat":52.36,"lon":4.885,"primary":""}]},{"pageid":3,"title":"Talk:Vondelpark","coordinates":[{"lat":52.358,"lon":4.868}]},{"pageid":4,"ns":0,"title":"Nowhere","coordinates":[{"lat":"n/a","lon":4}]}]}}"#.utf8)
        let q = try XCTUnwrap(try client.decode(ActionEnvelope<PagesQuery>.self, body, kind: .nearby).query?.pages)
        XCTAssertEqual(q.count, 4)
        let cards = ContentRules.nearby(QueryResult(pages: q, redirects: []), from: Coordinate(latitude: 52.3547498, longitude: 4.8339215)!, lang: LanguageCode("en")!)
        XCTAssertEqual(cards.map(\.title), ["Vondelpark", "Rijksmuseum"], "no ns: read from the title; unusable coordinates: not placed")
    }

    // MARK: - One bad item never fails the list

    func testOneUnreadableItemIsSkippedAndCounted() throws {
        let n = try notifications(Self.welcome + #",{"type":"mention"},42,{"id":9,"type":"mention","*":{"header":"ok"}}"#)
        XCTAssertEqual(n.list?.map(\.id), [301, 9])
        XCTAssertEqual(client.metrics.skippedCount(kind: "notifications"), 2)
        XCTAssertTrue(client.metrics.render(cache: client.cache.snapshot).contains("lede_upstream_items_skipped_total{kind=\"notifications\"} 2"))

        let feed = try client.decode(FeaturedFeed.self, Array(#"{"tfa":{"no":"title"},"mostread":{"articles":[{"title":"A","views":1},7,{"views":2}]},"news":[{"story":"s","links":[{"title":"B"},[]]},{"links":[]}],"onthisday":[{"text":"t","year":"1969","pages":[{"title":"C"}]},{"year":1}]}"#.utf8), kind: .feed)
        XCTAssertNil(feed.tfa)
        XCTAssertEqual(feed.mostread?.articles.map(\.title), ["A"])
        XCTAssertEqual(feed.news?.count, 1); XCTAssertEqual(feed.news?.first?.links?.map(\.title), ["B"])
        XCTAssertEqual(feed.onthisday?.first?.year, 1969)
        XCTAssertEqual(client.metrics.skippedCount(kind: "mostread"), 2)
        XCTAssertEqual(client.metrics.skippedCount(kind: "news"), 2)
        XCTAssertEqual(client.metrics.skippedCount(kind: "onthisday"), 1)
        XCTAssertEqual(client.metrics.skippedCount(kind: "featured"), 1)

        _ = try client.decode(ActionEnvelope<PagesQuery>.self, Array(#"{"query":{"pages":[{"ns":0},{"ns":0,"title":"Ok"}]}}"#.utf8), kind: .related)
        XCTAssertEqual(client.metrics.skippedCount(kind: "related"), 1)
    }

    func testAnAnswerThatIsNotTheExpectedJSONIsMalformed() {
        for body in ["<html>Wikimedia Error</html>", "[]", "{\"title\":7}", ""] {
            XCTAssertThrowsError(try client.decode(PageSummary.self, Array(body.utf8), kind: .summary)) {
                XCTAssertEqual($0 as? UpstreamError, .malformed("summary: the answer is not the expected JSON shape"), body)
            }
        }
        XCTAssertThrowsError(try client.decode(ActionEnvelope<PagesQuery>.self, Array(#"{"query":"nope"}"#.utf8), kind: .search))
    }
}

/// The recorded answers through the real routes: Lede against a fake Wikimedia that sends them.
final class RealAnswersRouteTests: XCTestCase {
    var fake: FakeUpstream!
    var app: LedeApp!
    var server: HTTPServer!

    override func setUpWithError() throws {
        fake = try FakeUpstream()
        (app, server) = try startLedeApp { [fake] in
            $0.upstream = fake!.template
            $0.upstreamTimeout = 1
            $0.sectionTimeout = 1
        }
    }

    override func tearDown() { server.shutdown(); server.waitUntilStopped(); fake.stop() }

    func fixture(_ prefix: String) throws -> String { String(decoding: try RealAnswersTests.fixture(prefix), as: UTF8.self) }

    func call(_ path: String, method: String = "GET", headers: [String: String] = [:], body: String = "") throws -> (Int, [String: String], [String: Any]) {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"
        for (k, v) in headers { text += "\(k): \(v)\r\n" }
        if method == "POST" { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + body
        let r = try TestHTTPResponse(port: server.port, request: text)
        let json = (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:]
        return (r.status, r.headers, json)
    }

    let bob = ["Authorization": "Bearer demo-bob"]

    func testFeedFromRecordedFeaturedAnswers() throws {
        fake.set("feed", .body(try fixture("feed_featured__ios_2026-07-20")))
        let (status, _, feed) = try call("/feed?date=2026-07-20")
        XCTAssertEqual(status, 200)
        let sections = feed["sections"] as? [[String: Any]] ?? []
        let byKind = Dictionary(sections.map { ($0["kind"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(byKind["featured"]?["status"] as? String, "ok")
        XCTAssertEqual((byKind["mostRead"]?["items"] as? [Any])?.count, 2)
        XCTAssertEqual(byKind["pictureOfTheDay"]?["status"] as? String, "ok")

        fake.set("feed", .body(try fixture("feed_featured__ios_vi")))
        let (viStatus, _, vi) = try call("/feed?lang=vi&sections=featured")
        XCTAssertEqual(viStatus, 200)
        XCTAssertEqual(((vi["sections"] as? [[String: Any]])?.first?["items"] as? [Any])?.count, 1)
    }

    func testSummaryFromRecordedAnswers() throws {
        fake.set("summary", .body(try fixture("summary__ios_dog")))
        let (s1, _, dog) = try call("/summary/Dog")
        XCTAssertEqual(s1, 200)
        XCTAssertEqual(dog["title"] as? String, "Dog")
        fake.set("summary", .body(try fixture("summary__android_moscow")))
        let (s2, _, moscow) = try call("/summary/Moscow")
        XCTAssertEqual(s2, 200)
        XCTAssertNotNil(moscow["coordinates"] as? [String: Any])
    }

    func testSearchAndRelatedFromRecordedAnswers() throws {
        fake.set("search", .body(try fixture("query_prefixsearch")))
        let (s1, _, prefix) = try call("/search?q=Barack")
        XCTAssertEqual(s1, 200)
        XCTAssertGreaterThan((prefix["items"] as? [Any])?.count ?? 0, 0)
        fake.set("search", .body(try fixture("query_search_fulltext")))
        let (s2, _, full) = try call("/search?q=dogs")
        XCTAssertEqual(s2, 200)
        XCTAssertGreaterThan((full["items"] as? [Any])?.count ?? 0, 0)
        fake.set("related", .body(try fixture("query_search_fulltext")))
        let (s3, _, related) = try call("/related/Dog?limit=5")
        XCTAssertEqual(s3, 200)
        XCTAssertGreaterThan((related["items"] as? [Any])?.count ?? 0, 0)
        fake.set("nearby", .body(#"{"batchcomplete":true,"query":{"pages":[{"pageid":1,"title":"Vondelpark","coordinates":[{"lat":52.358,"lon":4.868,"primary":"","dist":812.4}]}]}}"#))
        let (s4, _, nearby) = try call("/nearby?lat=52.3547498&lon=4.8339215")
        XCTAssertEqual(s4, 200)
        XCTAssertEqual((nearby["items"] as? [[String: Any]])?.first?["title"] as? String, "Vondelpark")
    }

    func testNotificationRoutesFromRecordedAndEchoShapes() throws {
        for list in [try fixture("notifications__ios_mentions"),
                     #"{"batchcomplete":true,"query":{"notifications":{"list":[\#(RealAnswersTests.welcome)],"count":"1","rawcount":1}}}"#] {
            fake.set("notifications", .body(list))
            let (s1, _, page) = try call("/notifications", headers: bob)
            XCTAssertEqual(s1, 200, "\(page)")
            XCTAssertGreaterThan((page["notifications"] as? [Any])?.count ?? 0, 0)
            let (s2, _, badge) = try call("/notifications/badge", headers: bob)
            XCTAssertEqual(s2, 200, "\(badge)")
            fake.set("token", .body(try fixture("tokens_csrf")))
            fake.set("markread", .body(#"{"batchcomplete":true,"query":{"echomarkread":{"result":"success","rawcount":0,"count":"0"}}}"#))
            let (s3, _, read) = try call("/notifications/read", method: "POST", headers: bob.merging(["Content-Type": "application/json"]) { a, _ in a }, body: #"{"ids":[1,2]}"#)
            XCTAssertEqual(s3, 200, "\(read)")
        }
        let mark = try XCTUnwrap(fake.requests(kind: "markread").last)
        XCTAssertTrue(mark.body.contains("token=b6f7bd58c013ab30735cb19ecc0aa08258122cba%2B%5C"), mark.body)
    }

    func testANonJSONAnswerIsStillA502() throws {
        fake.set("notifications", .body("<!DOCTYPE html><title>Wikimedia Error</title>"))
        let (status, headers, problem) = try call("/notifications/badge", headers: bob)
        XCTAssertEqual(status, 502)
        XCTAssertEqual(problem["type"] as? String, "urn:lede:problem:upstream-malformed")
        XCTAssertEqual(headers["content-type"], "application/problem+json")
    }

    func testSkippedItemsAreInMetrics() throws {
        fake.set("notifications", .body(#"{"query":{"notifications":{"list":[{"type":"x"},\#(RealAnswersTests.welcome)],"rawcount":1,"count":"1"}}}"#))
        let (status, _, page) = try call("/notifications", headers: bob)
        XCTAssertEqual(status, 200)
        XCTAssertEqual((page["notifications"] as? [Any])?.count, 1)
        let metrics = try TestHTTPResponse(port: server.port, request: "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        XCTAssertTrue(String(decoding: metrics.body, as: UTF8.self).contains("lede_upstream_items_skipped_total{kind=\"notifications\"} 1"))
    }
}
