import Foundation
import HTTPServer
import HTTPClient
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// Personal feeds assembled from fragments encoded once: the same bytes a full encode writes, exact numbers per
/// user, ETags and 304 without hashing the body.
final class FeedFragmentTests: XCTestCase {
    let old = "backgroundedAt=2026-01-01T00:00:00Z"
    let amsterdam = Coordinate(latitude: 52.3547498, longitude: 4.8339215)!

    func body(_ r: HTTPResponse) -> AssembledBody? { if case .assembled(let a) = r.body { return a }; return nil }

    /// What the general path writes: every section encoded whole by JSONEncoder, joined after the shared head.
    func fullEncode(_ api: StubAPI, service: FeedService, shared: HTTPResponse, because: String, user: Coordinate, cont: String) async throws -> [UInt8] {
        guard case .prepared(let p) = shared.body else { XCTFail("shared feed is prepared"); return [] }
        let lang = LanguageCode("en")!
        var out = Array(p.identity.dropLast(2))   // "]}"
        let related = try await api.base.related(lang: lang, title: because)
        out += [44] + JSONLines.encode(FeedSection(kind: .becauseYouRead, items: ContentRules.related(related, source: because, lang: lang, limit: 3),
                                                      source: ArticleTitle.display(because)))
        let centre = GeoCell(user).centre
        let places = try await api.base.nearby(lang: lang, latitude: centre.latitude, longitude: centre.longitude, radiusMeters: 10_000)
        out += [44] + JSONLines.encode(FeedSection(kind: .nearby, items: ContentRules.nearby(places, from: user, lang: lang),
                                                      latitude: user.latitude, longitude: user.longitude))
        let summary = try await api.base.summary(lang: lang, title: cont)
        out += [44] + JSONLines.encode(FeedSection(kind: .continueReading, items: [Card(summary: summary, lang: lang)]))
        return out + Array("]}".utf8)
    }

    func testPersonalFeedBytesEqualAFullEncodeInBothRepresentations() async throws {
        let api = StubAPI()
        let service = FeedService(api: api)
        let shared = try await service.feed(try feedRequest(""))
        let query = "because=albert_einstein&lat=52.3547498&lon=4.8339215&continue=Rijksmuseum&\(old)"
        let cold = try await service.feed(try feedRequest(query))
        let warm = try XCTUnwrap(service.cachedResponse(for: try feedRequest(query)), "all parts cached: answered on the loop")
        let expected = try await fullEncode(api, service: service, shared: shared, because: "albert_einstein", user: amsterdam, cont: "Rijksmuseum")
        for response in [cold, warm] {
            let a = try XCTUnwrap(body(response))
            XCTAssertEqual(String(decoding: a.identityBytes(), as: UTF8.self), String(decoding: expected, as: UTF8.self))
            XCTAssertEqual(Inflater.decompress(a.gzipBytes()), expected)
            XCTAssertEqual(a.gzipCount, a.gzipBytes().count)
        }
        XCTAssertEqual(body(cold)?.etag, body(warm)?.etag)
        let kinds = try sections(warm).map { $0["kind"] as? String }
        XCTAssertEqual(kinds.suffix(3), ["becauseYouRead", "nearby", "continueReading"])
        let nearby = try XCTUnwrap(try sections(warm).first { $0["kind"] as? String == "nearby" })
        XCTAssertGreaterThan((nearby["items"] as? [Any])?.count ?? 0, 0, "the embedded data has places near the Rijksmuseum")
        XCTAssertEqual(api.count("related"), 1); XCTAssertEqual(api.count("nearby"), 1); XCTAssertEqual(api.count("summary"), 1)
    }

    func testChosenSectionsAreJoinedFragmentByFragment() async throws {
        let api = StubAPI()
        let service = FeedService(api: api)
        let shared = try await service.feed(try feedRequest("sections=mostRead,news"))
        let personal = try await service.feed(try feedRequest("sections=mostRead,news,becauseYouRead&because=Amsterdam"))
        guard case .prepared(let p) = shared.body, let a = body(personal) else { return XCTFail() }
        let related = try await api.base.related(lang: LanguageCode("en")!, title: "Amsterdam")
        let because = JSONLines.encode(FeedSection(kind: .becauseYouRead, items: ContentRules.related(related, source: "Amsterdam", lang: LanguageCode("en")!, limit: 3),
                                                     source: "Amsterdam"))
        let expected = Array(p.identity.dropLast(2)) + [44] + because + Array("]}".utf8)
        XCTAssertEqual(a.identityBytes(), expected)
        XCTAssertEqual(Inflater.decompress(a.gzipBytes()), expected)
    }

    func testTwoUsersInOneCellShareOneFetchAndGetTheirOwnExactNumbers() async throws {
        let api = StubAPI()
        let service = FeedService(api: api)
        let users = [amsterdam, Coordinate(latitude: 52.3591, longitude: 4.8307)!]
        XCTAssertEqual(GeoCell(users[0]), GeoCell(users[1]))
        var seen: [[Double]] = []
        for user in users {
            let r = try await service.feed(try feedRequest("sections=nearby&lat=\(user.latitude)&lon=\(user.longitude)"))
            let section = try XCTUnwrap(try sections(r).first)
            XCTAssertEqual(section["latitude"] as? Double, user.latitude)
            XCTAssertEqual(section["longitude"] as? Double, user.longitude)
            let items = try XCTUnwrap(section["items"] as? [[String: Any]])
            XCTAssertFalse(items.isEmpty)
            var distances: [Double] = []
            for item in items {
                let c = try XCTUnwrap(item["coordinates"] as? [String: Double])
                let (d, b) = ContentRules.distanceAndBearing(from: user, to: Coordinate(latitude: c["lat"]!, longitude: c["lon"]!)!)
                XCTAssertEqual(item["distanceMeters"] as? Double, d, "exact from this user's point")
                XCTAssertEqual(item["bearingDegrees"] as? Double, b)
                XCTAssertLessThanOrEqual(d, 10_000)
                distances.append(d)
            }
            XCTAssertEqual(distances, distances.sorted(), "nearest first")
            seen.append(distances)
        }
        XCTAssertNotEqual(seen[0], seen[1])
        XCTAssertEqual(api.count("nearby"), 1, "one geosearch for the cell")
    }

    func testInvalidPersonalParametersAreRejectedBeforeAnyWorkAndNothingIsCached() async throws {
        for bad in ["because=%7Cx", "because=%20", "lat=52.1&lon=200", "lat=1e3&lon=2", "continue=a%5Bb", "backgroundedAt=soon"] {
            XCTAssertThrowsError(try feedRequest(bad), bad)
        }
    }

    func testAFloodOfDistinctKeysStaysWithinTheFragmentBounds() async throws {
        let api = StubAPI()
        let service = FeedService(api: api, fragmentLimits: .init(maxEntries: 50, maxBytes: 256 << 10, staleIfError: 0, notFoundTTL: 0))
        for i in 0..<300 {
            _ = try await service.feed(try feedRequest("sections=becauseYouRead,nearby&because=Topic_\(i)&lat=\(Double(i) / 50 - 3)&lon=\(Double(i) / 40)"))
        }
        let counters = service.fragments.snapshot
        XCTAssertLessThanOrEqual(counters.entries, 50)
        XCTAssertLessThanOrEqual(counters.bytes, 256 << 10)
        XCTAssertGreaterThan(counters.evictions, 0)
    }

    func testNumbersAreWrittenAsJSONEncoderWritesThem() throws {
        struct N: Encodable { var v: Double }
        for v in [0, -0.0, 1, 1234, 0.1, 1e-05, 52.3547498, -4.8339215, 359.9, 12_345_678.9, 9007199254740992, 1e21, -89.99999999] {
            let encoded = String(decoding: try JSONEncoder().encode(N(v: v)), as: UTF8.self)
            XCTAssertEqual(encoded, "{\"v\":\(JSONNumber.text(v))}")
        }
        // Distances and bearings (rounded to 0.1) take the integer path: still JSONEncoder's text.
        var values = (0..<3_600).map { Double($0) / 10 }
        for _ in 0..<5_000 { values.append((Double.random(in: 0...25_000_000) * 10).rounded() / 10) }
        for v in values {
            let encoded = String(decoding: try JSONEncoder().encode(N(v: v)), as: UTF8.self)
            XCTAssertEqual(encoded, "{\"v\":\(JSONNumber.text(v))}", "\(v)")
        }
        // Written into a body digit by digit: the same text.
        for v in values + [0, -0.0, 52.3547498, 1e21, -4.8339215, 0.05] {
            var body = AssembledBody()
            JSONNumber.append(v, to: &body)
            XCTAssertEqual(String(decoding: body.identityBytes(), as: UTF8.self), JSONNumber.text(v), "\(v)")
        }
    }

    func testANearbySectionForTheSamePointIsKeptAsOneFragmentOfTheSameBytes() throws {
        let page = QueryPage(pageid: 1, ns: 0, title: "Rijksmuseum", coordinates: [.init(lat: 52.36, lon: 4.885)])
        let cell = NearbyCell(QueryResult(pages: [page], redirects: []), lang: LanguageCode("en")!)
        let memo = NearbyMemo(limit: 2)
        let user = Coordinate(latitude: 52.3547498, longitude: 4.8339215)!
        var direct = AssembledBody()
        cell.append(to: &direct, user: user, radius: 10_000)
        let first = memo.section(cell, user: user, radius: 10_000)
        XCTAssertEqual(first.bytes, direct.identityBytes())
        XCTAssertTrue(memo.section(cell, user: user, radius: 10_000) === first, "asked again: the kept fragment")
        let elsewhere = memo.section(cell, user: Coordinate(latitude: 52.37, longitude: 4.89)!, radius: 10_000)
        XCTAssertFalse(elsewhere === first)
        XCTAssertNotEqual(elsewhere.bytes, first.bytes)
        // A refreshed cell is another cell: never the old section.
        let refreshed = NearbyCell(QueryResult(pages: [page], redirects: []), lang: LanguageCode("en")!)
        XCTAssertFalse(memo.section(refreshed, user: user, radius: 10_000) === first)
        XCTAssertLessThanOrEqual(memo.count, 4, "two generations of two")
    }

    func testGeoCellsAreValidAtTheEdgesOfTheMap() {
        for (lat, lon) in [(90.0, 180.0), (-90.0, -180.0), (0.0, 0.0), (-0.001, -0.001), (89.999, 179.999)] {
            let cell = GeoCell(Coordinate(latitude: lat, longitude: lon)!)
            let c = cell.centre
            XCTAssertLessThan(abs(c.latitude - lat), 0.011)
            XCTAssertLessThan(abs(c.longitude - lon), 0.011)
        }
    }
}

final class FeedFragmentLiveTests: XCTestCase {
    func testPersonalFeedOverHTTPGzipHeadAnd304() throws {
        let server = try startLede(loops: 1)
        defer { server.shutdown(); server.waitUntilStopped() }
        let q = "/feed?because=Albert_Einstein&lat=52.3547498&lon=4.8339215&continue=Rijksmuseum&backgroundedAt=2026-01-01T00:00:00Z"
        let plain = try get(server, q), again = try get(server, q)
        XCTAssertEqual(plain.status, 200)
        XCTAssertEqual(plain.body, again.body)
        XCTAssertEqual(plain.headers["cache-control"], "private, max-age=60")
        let generatedAt = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(plain.body)) as? [String: Any])?["generatedAt"] as? String)
        XCTAssertNotNil(generatedAt.range(of: #"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"#, options: .regularExpression),
                        "whole seconds, as default date decoders read it: \(generatedAt)")
        let zipped = try get(server, q, ["Accept-Encoding": "gzip"])
        XCTAssertEqual(zipped.headers["content-encoding"], "gzip")
        XCTAssertEqual(Inflater.decompress(zipped.body), plain.body)
        let head = try get(server, q, ["Accept-Encoding": "gzip"], method: "HEAD")
        XCTAssertEqual(head.headers["content-length"], "\(zipped.body.count)")
        XCTAssertEqual(head.headers["etag"], zipped.headers["etag"])
        let tag = try XCTUnwrap(plain.headers["etag"])
        XCTAssertEqual(tag, again.headers["etag"])
        XCTAssertEqual(try get(server, q, ["If-None-Match": tag]).status, 304)
        XCTAssertEqual(try get(server, q, ["Accept-Encoding": "gzip", "If-None-Match": zipped.headers["etag"]!]).status, 304)
        let elsewhere = try TestHTTPResponse(port: server.port, request: "GET \(q.replacingOccurrences(of: "4.8339215", with: "4.8349215")) HTTP/1.1\r\nHost: t\r\nIf-None-Match: \(tag)\r\n\r\n")
        XCTAssertEqual(elsewhere.status, 200, "another point in the same cell: other numbers, another tag")
        XCTAssertNotEqual(elsewhere.headers["etag"], tag)
    }
}
