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

/// The content endpoints over HTTP, against the fake Wikimedia on loopback.
final class ContentRoutesTests: FakeUpstreamTestCase {
    func testSummaryIsAPreviewCardWithIPAStripped() async throws {
        let (status, card, http) = try get(server, "/summary/Copenhagen").statusJSONAndResponse
        XCTAssertEqual(status, 200)
        XCTAssertEqual(card["title"] as? String, "Copenhagen")
        XCTAssertEqual(card["extract"] as? String, "Copenhagen is the capital and most populous city of Denmark, with a population of 1.4 million in the urban area.")
        for key in ["title", "displayTitle", "description", "extract", "extractHtml", "thumbnail", "originalImage", "coordinates", "type", "url", "lang", "dir"] {
            XCTAssertTrue(card.keys.contains(key), key)
        }
        XCTAssertEqual(http.header("Cache-Control"), "public, max-age=300")
        XCTAssertNotNil(http.header("ETag"))
        let (_, de, _) = try get(server, "/summary/Kopenhagen", ["Accept-Language": "de-DE,de;q=0.9"]).statusJSONAndResponse
        XCTAssertEqual(de["lang"] as? String, "de")
        XCTAssertFalse((de["extract"] as? String ?? "").contains("ⓘ"))
    }

    /// A warm answer is served from the prepared cache on the event loop: the same bytes and fields, no upstream call.
    func testWarmSummaryIsServedFromThePreparedAnswerWithTheSameBytes() throws {
        let request = "GET /summary/Nyhavn HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n"
        let cold = try TestHTTPResponse(port: server.port, request: request)
        let upstreamCalls = fake.requests.count
        let warm = try TestHTTPResponse(port: server.port, request: request)
        XCTAssertEqual(fake.requests.count, upstreamCalls, "a warm summary makes no upstream call")
        XCTAssertEqual(warm.status, 200)
        XCTAssertEqual(warm.body, cold.body)
        for field in ["etag", "cache-control", "content-language", "content-encoding", "vary", "content-type"] {
            XCTAssertEqual(warm.headers[field], cold.headers[field], field)
        }
        XCTAssertEqual(warm.headers["cache-control"], "public, max-age=300")
    }

    func testSummaryETagRevalidatesWith304PerRepresentation() async throws {
        let nyhavn = "/summary/Nyhavn"
        let idTag = try XCTUnwrap(try get(server, nyhavn).headers["etag"])
        let gzTag = try XCTUnwrap(try get(server, nyhavn, ["Accept-Encoding": "gzip"]).headers["etag"])
        XCTAssertNotEqual(idTag, gzTag)
        XCTAssertEqual(try get(server, nyhavn, ["If-None-Match": idTag]).status, 304)
        XCTAssertEqual(try get(server, nyhavn, ["Accept-Encoding": "gzip", "If-None-Match": gzTag]).status, 304)
        XCTAssertEqual(try get(server, nyhavn, ["If-None-Match": gzTag]).status, 200, "the gzip tag does not validate the identity representation")
    }

    func testMissingArticleAndBadInputsAreProblems() async throws {
        let (s404, p404, h404) = try get(server, "/summary/No_such_article_anywhere").statusJSONAndResponse
        XCTAssertEqual(s404, 404); XCTAssertEqual(h404.header("Content-Type"), "application/problem+json")
        XCTAssertNotNil(p404["detail"])
        let (s400, p400, _) = try get(server, "/summary/Foo?lang=xx").statusJSONAndResponse
        XCTAssertEqual(s400, 400); XCTAssertEqual(p400["type"] as? String, "urn:lede:problem:unsupported-language")
        for path in ["/related/Amsterdam?limit=0", "/related/Amsterdam?limit=21", "/related/Amsterdam?limit=abc", "/nearby?lat=91&lon=0",
                     "/nearby?lat=52.3&lon=4,8", "/nearby?lat=1e3&lon=0", "/nearby?lat=NaN&lon=0", "/nearby?lat=52", "/nearby?lat=52&lon=4&radius=5",
                     "/nearby?lat=52&lon=4&radius=10001", "/search?q=", "/search?q=\(String(repeating: "a", count: 301))", "/summary/a%7Cb"] {
            let (status, problem, _) = try get(server, path).statusJSONAndResponse
            XCTAssertEqual(status, 400, path)
            XCTAssertEqual(problem["status"] as? Int, 400, path)
        }
    }

    func testRelatedFiltersDisambiguationNonArticlesAndTheSource() async throws {
        let (status, body, _) = try get(server, "/related/Amsterdam?limit=20").statusJSONAndResponse
        XCTAssertEqual(status, 200)
        let items = try XCTUnwrap(body["items"] as? [[String: Any]])
        XCTAssertFalse(items.isEmpty)
        for item in items {
            XCTAssertEqual(item["type"] as? String, "standard")
            XCTAssertNotEqual(item["title"] as? String, "Amsterdam")
            XCTAssertFalse((item["title"] as? String ?? "").contains(":"))
        }
        let (_, three, _) = try get(server, "/related/Amsterdam").statusJSONAndResponse
        XCTAssertEqual((three["items"] as? [Any])?.count, 3, "default limit 3")
    }

    func testRandomIsAlwaysAReadableArticleFromThePool() async throws {
        var previous: String?
        for _ in 0..<25 {
            let (status, card, http) = try get(server, "/random").statusJSONAndResponse
            XCTAssertEqual(status, 200)
            XCTAssertEqual(card["type"] as? String, "standard")
            XCTAssertEqual(http.header("Cache-Control"), "no-store")
            XCTAssertNotEqual(card["title"] as? String, previous, "two consecutive answers never repeat")
            previous = card["title"] as? String
        }
        XCTAssertLessThan(fake.requests(kind: "random").count, 10, "cards come from the pool, not one upstream call each")
    }

    func testAnEmptyPoolWhoseRefillFindsNothingReadableIsTheSame503() async throws {
        fake.set("random", .body("{\"batchcomplete\":true,\"query\":{\"pages\":[{\"ns\":0,\"title\":\"Mercury\",\"pageprops\":{\"disambiguation\":\"\"}},{\"ns\":4,\"title\":\"Wikipedia:About\"}]}}"))
        let (status, problem, http) = try get(server, "/random").statusJSONAndResponse
        XCTAssertEqual(status, 503)
        XCTAssertEqual(problem["type"] as? String, "urn:lede:problem:no-random-article")
        XCTAssertEqual(http.header("Retry-After"), "1")
        XCTAssertEqual(fake.requests(kind: "random").count, RandomPool.Settings().attempts, "bounded draws")
        fake.set("random", .status(500, "{}"))
        let (failed, _, _) = try get(server, "/random").statusJSONAndResponse
        XCTAssertEqual(failed, 502, "an upstream failure on an empty pool is the upstream problem")
    }

    func testNearbyHasDistanceAndBearingSortedByDistance() async throws {
        let (status, body, _) = try get(server, "/nearby?lat=55.6713442&lon=12.5237848&radius=10000").statusJSONAndResponse
        XCTAssertEqual(status, 200)
        let items = try XCTUnwrap(body["items"] as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(items.count, 3)
        let d = items.compactMap { $0["distanceMeters"] as? Double }
        XCTAssertEqual(d, d.sorted())
        XCTAssertTrue(items.allSatisfy { ($0["bearingDegrees"] as? Double).map { (0..<360).contains($0) } ?? false })
    }

    func testSearchShowsRedirectedFrom() async throws {
        let (status, body, _) = try get(server, "/search?q=Bomb").statusJSONAndResponse
        XCTAssertEqual(status, 200)
        let items = try XCTUnwrap(body["items"] as? [[String: Any]])
        XCTAssertEqual(items.first?["title"] as? String, "Mumbai")
        XCTAssertEqual(items.first?["redirectedFrom"] as? String, "Bombay")
        XCTAssertEqual(fake.requests(kind: "search").count, 2, "prefix, then full text because prefix gave fewer than 12")
    }

    /// Seed 000, Search: "When I tap 'Search' on the keyboard, Then the app should select the first result with a
    /// matching title" — `match`, by title or by the title it was redirected from, under MediaWiki's title rules.
    func testSearchNamesTheResultWhoseTitleMatches() async throws {
        let (_, exact, _) = try get(server, "/search?q=%20amsterdam%20").statusJSONAndResponse
        XCTAssertEqual(exact["match"] as? String, "Amsterdam", "the first letter's case and surrounding spaces do not matter")
        let (_, redirect, _) = try get(server, "/search?q=einstein").statusJSONAndResponse
        XCTAssertEqual(redirect["match"] as? String, "Albert Einstein", "matched through the redirect Einstein")
        let (_, none, _) = try get(server, "/search?q=Amst").statusJSONAndResponse
        XCTAssertNil(none["match"], "no title equals a prefix")
        let (_, inner, _) = try get(server, "/search?q=albert_Einstein").statusJSONAndResponse
        XCTAssertEqual(inner["match"] as? String, "Albert Einstein", "`_` and space alike")
        let (_, wrongCase, _) = try get(server, "/search?q=Albert%20EINSTEIN").statusJSONAndResponse
        XCTAssertNil(wrongCase["match"], "only the first letter's case is ignored")
    }

    func testTitleMatchRules() {
        XCTAssertEqual(ContentRules.titleKey("  einstein__family "), "Einstein family")
        XCTAssertEqual(ContentRules.titleKey("éclair"), "Éclair")
        XCTAssertEqual(ContentRules.titleKey(" _ "), "")
    }

    func testUpstreamFailuresAreClear502And504Problems() async throws {
        fake.set("summary", .status(500, "{}"))
        let (s1, p1, _) = try get(server, "/summary/Madrid").statusJSONAndResponse
        XCTAssertEqual(s1, 502); XCTAssertEqual(p1["type"] as? String, "urn:lede:problem:upstream-unavailable")
        fake.set("nearby", .delay(2))
        let t0 = Date()
        let (s2, p2, _) = try get(server, "/nearby?lat=40.4380638&lon=-3.7495758").statusJSONAndResponse
        XCTAssertEqual(s2, 504); XCTAssertEqual(p2["type"] as? String, "urn:lede:problem:upstream-timeout")
        XCTAssertLessThan(Date().timeIntervalSince(t0), 1.5, "the deadline holds")
        fake.set("related", .body("<html>not json</html>"))
        let (s3, _, _) = try get(server, "/related/Madrid").statusJSONAndResponse
        XCTAssertEqual(s3, 502)
        let (ok, _, _) = try get(server, "/healthz").statusJSONAndResponse
        XCTAssertEqual(ok, 200, "still serving")
    }
}
