import Foundation
import Synchronization
import TestSupport
import XCTest
@testable import HTTPServer
@testable import HTTPCore

/// A parsed request keeps its target and fields as bytes (strings made when asked for) in a box the connection
/// reuses for its next request: what a handler keeps must not change when the box is reused, and code that sets
/// or adds fields sees them as it would in a list of strings.
final class RequestBytesTests: XCTestCase {
    func request(_ text: String) throws -> HTTPRequest {
        guard case .request(let r) = parseAll(text).first else { throw XCTSkip("no request parsed") }
        return r
    }

    func testTheTargetItsPathAndItsQueryAreReadFromTheBytesAsSent() throws {
        let r = try request("GET /fe%65d/a?lang=de&x=a+b%21 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(r.target, "/fe%65d/a?lang=de&x=a+b%21")
        XCTAssertEqual(r.path, "/fe%65d/a")
        XCTAssertEqual(r.query, "lang=de&x=a+b%21")
        XCTAssertEqual(r.pathSegments, ["feed", "a"])
        XCTAssertEqual(r.queryParameter("x"), "a b!")
        XCTAssertEqual(r.queryParameter("lang"), "de")

        let absolute = try request("GET http://example.org?q=1 HTTP/1.1\r\nHost: example.org\r\n\r\n")
        XCTAssertEqual(absolute.target, "http://example.org?q=1")
        XCTAssertEqual(absolute.path, "/")
        XCTAssertEqual(absolute.query, "q=1")

        let star = try request("OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(star.target, "*")
        XCTAssertEqual(star.path, "*")
        XCTAssertNil(star.query)

        let empty = try request("GET /a? HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(empty.query, "")
        XCTAssertEqual(empty.queryItems.count, 0)
    }

    /// `queryParameter` reads one item in place; it finds what the first of `queryItems` so named holds.
    func testAQueryParameterIsTheFirstQueryItemSoNamed() throws {
        let queries = ["a=1&a=2", "a&a=2", "a=&b=1", "b=%ZZ&b=ok", "b=ok&b=%ZZ", "%62=x&b=y", "b+c=1&b%20c=2", "=v&b=1",
                       "&&b=1&&", "b=1=2", "c=%C3%A9&%C3%A9=e&e%CC%81=d", "b=%E2%82", "a=x+y%2B", "b"]
        for q in queries {
            var r = try request("GET /p HTTP/1.1\r\nHost: t\r\n\r\n")
            r.query = q
            for name in ["a", "b", "c", "b c", "é", "e\u{301}", "", "x"] {
                XCTAssertEqual(r.queryParameter(name), r.queryItems.first { $0.name == name }?.value, "\(q) \(name)")
            }
        }
    }

    /// `firstQueryValues` (a route's parameters in one pass, names matched by length, first byte and memcmp) finds for
    /// each name what `queryParameter` finds, names that share a length and first byte and escaped names included.
    func testFirstQueryValuesFindWhatQueryParameterFinds() throws {
        let names = ["lat", "lon", "lang", "b", "b c", "é", "backgroundedAt"]
        let table = QueryNames(names)
        let queries = ["lat=1&lon=2&lang=de", "lon=2&lat=1&lat=9", "l%61t=3&lo%6E=4", "b=%ZZ&b=ok", "b+c=1&b%20c=2", "%C3%A9=e&lang",
                       "latx=1&la=2&lat", "backgroundedAt=2026-01-01T00:00:00Z&b=x+y%2B", "", "&&=v&lang=fr"]
        for q in queries {
            var r = try request("GET /p HTTP/1.1\r\nHost: t\r\n\r\n")
            r.query = q
            let values = r.firstQueryValues(table)
            for (i, name) in names.enumerated() {
                XCTAssertEqual(values[i], r.queryParameter(name), "\(q) \(name)")
            }
            // The same query read off the wire, where the parser notes whether it holds any escape.
            guard let wire = try? request("GET /p?\(q) HTTP/1.1\r\nHost: t\r\n\r\n") else { continue }
            XCTAssertEqual(wire.firstQueryValues(table), values, q)
        }
        // A query with no escape anywhere, and one whose only escape is a `+` or comes last.
        for q in ["lat=1&lon=2", "b=x+y&lat=1", "lat=1&b=%41"] {
            let wire = try request("GET /p?\(q) HTTP/1.1\r\nHost: t\r\n\r\n")
            XCTAssertEqual(wire.firstQueryValues(table), names.map { wire.queryParameter($0) }, q)
        }
    }

    /// The request line's target is scanned with memchr and one branch-free pass: what must be percent-encoded is
    /// still refused wherever it is, and the first '?' still splits path and query.
    func testTheTargetScanRefusesUnencodedBytesAnywhereAndSplitsAtTheFirstQuestionMark() throws {
        for bad in ["/a?x=\u{7F}", "/a?x=#", "/\u{01}", "/a?b=é", "/a?" + String(repeating: "x", count: 100) + "#"] {
            XCTAssertEqual(outcome("GET \(bad) HTTP/1.1\r\nHost: a\r\n\r\n"), "400", bad.debugDescription)
        }
        let r = try request("GET /a%2Fb?x=%3F?y&z=%25 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(r.path, "/a%2Fb")
        XCTAssertEqual(r.query, "x=%3F?y&z=%25")
        XCTAssertEqual(r.queryParameter("x"), "??y")
        XCTAssertEqual(r.queryParameter("z"), "%")
        XCTAssertEqual(outcome("GET /a?x=%2 HTTP/1.1\r\nHost: a\r\n\r\n"), "400")
        XCTAssertEqual(outcome("GET /a?x=~!$'()*,;:@/?-._ HTTP/1.1\r\nHost: a\r\n\r\n"), "GET /a")
    }

    func testCompressibleTypesAreRecognisedInAnyCase() {
        for t in ["application/json", "Application/JSON; charset=utf-8", "text/html", "TEXT/plain", "application/problem+json",
                  "application/vnd.api+json", "application/x-ndjson+JSON", "application/yaml", "application/javascript"] {
            XCTAssertTrue(Compression.isCompressible(t), t)
        }
        for t in ["image/png", "application/octet-stream", "json", "", "application/jso", "+jso"] {
            XCTAssertFalse(Compression.isCompressible(t), t)
        }
        XCTAssertFalse(Compression.isCompressible(nil))
    }

    func testCodeThatSetsTheTargetPathOrQueryChangesOnlyThatPartAndOnlyItsCopy() throws {
        let parsed = try request("GET /a/b?x=1 HTTP/1.1\r\nHost: t\r\n\r\n")
        var r = parsed
        r.query = "y=2"
        XCTAssertEqual(r.target, "/a/b?x=1")
        XCTAssertEqual(r.path, "/a/b")
        XCTAssertEqual(r.queryParameter("y"), "2")
        XCTAssertNil(r.queryParameter("x"))
        r.path = "/c"
        XCTAssertEqual(r.path, "/c")
        XCTAssertEqual(r.query, "y=2")
        r.query = nil
        XCTAssertNil(r.query)
        XCTAssertEqual(r.target, "/a/b?x=1")
        // The parsed request it was copied from is untouched.
        XCTAssertEqual(parsed.path, "/a/b")
        XCTAssertEqual(parsed.query, "x=1")
    }

    func testReceivedFieldsAreFoundInAnyCaseInOrderAndBeforeAddedOnes() throws {
        let r = try request("GET / HTTP/1.1\r\nHost: t\r\nX-Tag:  one \r\nAccept: a/b\r\nx-tag: two\r\n\r\n")
        var h = r.headers
        XCTAssertEqual(h.count, 4)
        XCTAssertEqual(h["X-TAG"], "one")
        XCTAssertEqual(h.values("x-Tag"), ["one", "two"])
        XCTAssertEqual(h.fields.map(\.name), ["Host", "X-Tag", "Accept", "x-tag"])
        XCTAssertEqual(h.fields.map(\.value), ["t", "one", "a/b", "two"])
        h.add("X-Tag", "three")
        XCTAssertEqual(h.values("X-Tag"), ["one", "two", "three"])
        h.set("x-tag", "only")
        XCTAssertEqual(h.fields.map(\.name), ["Host", "Accept", "x-tag"])
        XCTAssertEqual(h["X-Tag"], "only")
        h.remove("HOST")
        XCTAssertFalse(h.contains("host"))
        XCTAssertEqual(h.count, 2)
        // The request's own list is a different value: unchanged.
        XCTAssertEqual(r.headers.count, 4)
        XCTAssertEqual(r.headers["x-tag"], "one")
        XCTAssertEqual(r.headers.tokens("accept"), ["a/b"])
    }

    /// The connection reuses an answered request's box (target and field buffers) for its next request when no
    /// handler kept the request; a handler that kept only its fields, or its path, keeps what it was given.
    func testWhatAHandlerKeepsOutlivesTheConnectionsNextRequest() throws {
        let kept = Mutex<[(headers: HTTPHeaders, path: String)]>([])
        let router = Router()
        router.get("/keep/{n}") { ctx in
            kept.withLock { $0.append((headers: ctx.request.headers, path: ctx.request.path)) }
            return .response(.text("kept"))
        }
        let server = try startServer(router)
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        for i in 0..<20 {
            c.send("GET /keep/\(i)-\(String(repeating: "p", count: i * 7)) HTTP/1.1\r\nHost: t\r\nX-Round: round-\(i)-\(String(repeating: "v", count: i * 13))\r\n\r\n")
            XCTAssertEqual(c.readResponse()?.text, "kept")
        }
        let all = kept.withLock { $0 }
        XCTAssertEqual(all.count, 20)
        for (i, k) in all.enumerated() {
            XCTAssertEqual(k.headers["x-round"], "round-\(i)-\(String(repeating: "v", count: i * 13))")
            XCTAssertEqual(k.headers["Host"], "t")
            XCTAssertEqual(k.path, "/keep/\(i)-\(String(repeating: "p", count: i * 7))")
        }
    }
}
