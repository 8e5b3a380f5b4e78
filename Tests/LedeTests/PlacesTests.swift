import Foundation
import HTTPServer
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// Seed 004: a Locations app lists places and opens the Wikipedia app's Places tab at one of them.
final class DeepLinkTests: XCTestCase {
    func c(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon)! }

    func testCoordinateLinkForAmsterdam() {
        XCTAssertEqual(DeepLinks.places(c(52.3547498, 4.8339215)), "wikipedia://places?WMFLocationLat=52.3547498&WMFLocationLon=4.8339215")
    }

    func testLinksKeepSevenDecimalsNeverAnExponentAndNoNegativeZero() {
        XCTAssertEqual(DeepLinks.places(c(1e-7, -1e-7)), "wikipedia://places?WMFLocationLat=0.0000001&WMFLocationLon=-0.0000001")
        XCTAssertEqual(DeepLinks.places(c(-0.0, -0.00000001)), "wikipedia://places?WMFLocationLat=0&WMFLocationLon=0")
        XCTAssertEqual(DeepLinks.places(c(12.123456789, 90 - 1e-9)), "wikipedia://places?WMFLocationLat=12.1234568&WMFLocationLon=90")
        XCTAssertEqual(DeepLinks.places(c(-90, 180)), "wikipedia://places?WMFLocationLat=-90&WMFLocationLon=180")
        let link = DeepLinks.places(c(1e-7, 1e-8))
        XCTAssertFalse(link.contains("e-") || link.contains("e+") || link.contains("E"), link)
    }

    func testArticleLinkIsPercentEncoded() {
        XCTAssertEqual(DeepLinks.places(article: ArticleURL("https://en.wikipedia.org/wiki/Leiderdorp")!),
                       "wikipedia://places?WMFArticleURL=https%3A%2F%2Fen.wikipedia.org%2Fwiki%2FLeiderdorp")
        let fromTitle = ArticleURL(lang: LanguageCode("nl")!, title: "Dam (Amsterdam)")
        XCTAssertEqual(fromTitle.url, "https://nl.wikipedia.org/wiki/Dam_(Amsterdam)")
        XCTAssertEqual(DeepLinks.places(article: fromTitle), "wikipedia://places?WMFArticleURL=https%3A%2F%2Fnl.wikipedia.org%2Fwiki%2FDam_%28Amsterdam%29")
    }

    func testArticleURLValidation() {
        for ok in ["https://en.wikipedia.org/wiki/Leiderdorp", "https://de.wikipedia.org/wiki/K%C3%B6ln", "https://zh-yue.wikipedia.org/wiki/X"] {
            XCTAssertNotNil(ArticleURL(ok), ok)
        }
        for bad in ["http://en.wikipedia.org/wiki/X", "https://evil.org/wiki/X", "https://en.wikipedia.org.evil.org/wiki/X", "https://xx.wikipedia.org/wiki/X",
                    "https://user@en.wikipedia.org/wiki/X", "https://en.wikipedia.org:8443/wiki/X", "https://en.wikipedia.org/w/index.php?title=X",
                    "https://en.wikipedia.org/wiki/", "https://en.wikipedia.org/wiki/X\nSet-Cookie: a", "https://en.wikipedia.org/wiki/X#frag",
                    "javascript:alert(1)", "file:///etc/passwd", "https://EN.wikipedia.org/wiki/X", "https://en.wikipedia.org/wiki/a%zz",
                    "https://en.wikipedia.org/wiki/a%00b", "https://en.wikipedia.org/wiki/" + String(repeating: "a", count: 3000), ""] {
            XCTAssertNil(ArticleURL(bad), bad)
        }
    }

    func testCoordinateValidatorBoundaries() {
        func parse(_ lat: String, _ lon: String) -> Bool { if case .success = Coordinate.parse(lat: lat, lon: lon) { return true }; return false }
        XCTAssertTrue(parse("90", "180")); XCTAssertTrue(parse("-90", "-180")); XCTAssertTrue(parse("0", "0"))
        XCTAssertFalse(parse("90.0000001", "0")); XCTAssertFalse(parse("-90.0000001", "0"))
        XCTAssertFalse(parse("0", "180.0000001")); XCTAssertFalse(parse("0", "-180.0000001"))
        for bad in ["NaN", "nan", "inf", "-inf", "Infinity", "1e3", "52,35", "0x1A", "+52", " 52", "52.", "", String(repeating: "1", count: 500)] {
            XCTAssertFalse(parse(bad, "0"), bad); XCTAssertFalse(parse("0", bad), bad)
        }
    }

    func testLabelsForPeople() {
        XCTAssertEqual(DeepLinks.label(name: "København", c(55.6713442, 12.5237848)), "København")
        XCTAssertEqual(DeepLinks.label(name: nil, c(40.4380638, -3.7495758)), "40.4381° N, 3.7496° W")
        XCTAssertEqual(DeepLinks.label(name: nil, c(-33.8688, 151.2093)), "33.8688° S, 151.2093° E")
        XCTAssertEqual(DeepLinks.label(name: "", c(0, -0.00001)), "0.0000° N, 0.0000° E")
    }

    func testLocationsLoaderAcceptsTheAssignmentsFormats() throws {
        let a = try LocationsLoader.parse(Data(#"{"locations":[{"name":"Amsterdam","lat":52.3547498,"long":4.8339215},{"lat":40.4380638,"long":-3.7495758}]}"#.utf8))
        XCTAssertEqual(a.count, 2); XCTAssertNil(a[1].name)
        let b = try LocationsLoader.parse(Data(#"[{"name":"東京","lat":35,"lon":139.7}]"#.utf8))
        XCTAssertEqual(b[0].name, "東京"); XCTAssertEqual(b[0].coordinate.longitude, 139.7)
        XCTAssertEqual(LocationsLoader.embedded.map(\.name), ["Amsterdam", "Mumbai", "Copenhagen", nil])
    }

    func testLocationsLoaderNamesTheBadEntry() {
        let cases: [(String, String)] = [
            ("not json", "not valid JSON"), ("{\"places\":[]}", "expected a JSON array"), ("[1]", "entry 0 is not an object"),
            ("[{\"lat\":1,\"long\":2},{\"lat\":\"x\",\"long\":2}]", "entry 1 has no numeric \"lat\""),
            ("[{\"lat\":1}]", "entry 0 has no numeric \"long\" or \"lon\""), ("[{\"lat\":91,\"long\":0}]", "entry 0 has coordinates out of range"),
            ("[{\"name\":5,\"lat\":1,\"long\":2}]", "entry 0 has a \"name\" that is not a string"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try LocationsLoader.parse(Data(text.utf8)), text) { XCTAssertTrue("\($0)".contains(message), "\($0)") }
        }
        XCTAssertThrowsError(try LocationsLoader.load(path: "/nonexistent/locations.json")) { XCTAssertTrue("\($0)".contains("/nonexistent/locations.json")) }
    }
}

final class PlacesLiveTests: XCTestCase {
    var server: HTTPServer!
    override func setUpWithError() throws {
        server = try startLede()
    }
    override func tearDown() { server.shutdown(); server.waitUntilStopped() }


    func testLocationsListWithLabelsAndLinks() throws {
        let (status, body) = try get(server, "/places/locations").statusAndJSON
        XCTAssertEqual(status, 200)
        let list = body["locations"] as! [[String: Any]]
        XCTAssertEqual(list.count, 4)
        XCTAssertEqual(list[0]["deeplink"] as? String, "wikipedia://places?WMFLocationLat=52.3547498&WMFLocationLon=4.8339215")
        XCTAssertTrue(list[3]["name"] is NSNull)
        XCTAssertEqual(list[3]["label"] as? String, "40.4381° N, 3.7496° W")
    }

    func testDeepLinkForCoordinatesAndForArticles() throws {
        let (s1, b1) = try get(server, "/places/deeplink?lat=55.6713442&lon=12.5237848&name=K%C3%B8benhavn").statusAndJSON
        XCTAssertEqual(s1, 200)
        XCTAssertEqual(b1["url"] as? String, "wikipedia://places?WMFLocationLat=55.6713442&WMFLocationLon=12.5237848")
        XCTAssertEqual(b1["name"] as? String, "København")
        let (s2, b2) = try get(server, "/places/deeplink/Leiderdorp").statusAndJSON
        XCTAssertEqual(s2, 200)
        XCTAssertEqual(b2["url"] as? String, "wikipedia://places?WMFArticleURL=https%3A%2F%2Fen.wikipedia.org%2Fwiki%2FLeiderdorp")
        let (s3, b3) = try get(server, "/places/deeplink/Rijksmuseum?lang=nl").statusAndJSON
        XCTAssertEqual(s3, 200)
        XCTAssertEqual(b3["article"] as? String, "https://nl.wikipedia.org/wiki/Rijksmuseum")
        let raw = try TestHTTPResponse(port: server.port, request: "GET /places/deeplink?lat=0.0000001&lon=-0.00000001 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertFalse(String(decoding: raw.body, as: UTF8.self).contains("e-"), "no exponent anywhere in the body")
    }

    func testEveryInvalidDeepLinkRequestIsA400Problem() throws {
        let bad = ["", "?lat=52", "?lon=4", "?lat=91&lon=0", "?lat=0&lon=181", "?lat=NaN&lon=0", "?lat=inf&lon=0", "?lat=1e3&lon=0",
                   "?lat=52,35&lon=4", "?lat=0x10&lon=0", "?lat=\(String(repeating: "1", count: 100))&lon=0", "?lat=1&lon=2&article=https://en.wikipedia.org/wiki/X",
                   "?article=https://en.wikipedia.org/wiki/X", "?title=X", "?lat=1&lon=2&title=X",
                   "/%20", "/A%7CB", "/X%0ASet-Cookie:%20a", "/X?lang=xx", "/X?lang=en&lang=de",
                   "?lat=1&lat=2&lon=3", "?lat=1&lon=2&name=\(String(repeating: "n", count: 201))", "?lat=1&lon=2&name=a%0Ab"]
        for q in bad {
            let (status, problem) = try get(server, "/places/deeplink" + q).statusAndJSON
            XCTAssertEqual(status, 400, q)
            XCTAssertEqual(problem["status"] as? Int, 400, q)
        }
    }
}
