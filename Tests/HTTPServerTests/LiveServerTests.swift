import Foundation
import Glibc
import HTTPClient
import TestSupport
import Synchronization
import XCTest
@testable import HTTPServer
@testable import HTTPCore

final class LiveServerTests: XCTestCase {
    var server: HTTPServer!
    override func setUpWithError() throws { server = try startTestServer() }
    override func tearDown() { stop(server) }
    func client() throws -> RawClient { try RawClient(port: server.port) }

    func testKeepAliveServesManyRequestsOnOneConnection() throws {
        let c = try client()
        for _ in 0..<50 {
            c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let r = try XCTUnwrap(c.readResponse())
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(r.text, "hello")
            XCTAssertNil(r.header("Connection"))
            XCTAssertEqual(r.header("Server"), "lede")
            XCTAssertNotNil(r.header("Date"))
        }
    }

    func testPipelinedRequestsAreAnsweredInOrder() throws {
        let c = try client()
        // The first one is answered off the loop, slowly; the others must still come after it.
        c.send("GET /slow?ms=150 HTTP/1.1\r\nHost: t\r\n\r\nGET /items/1 HTTP/1.1\r\nHost: t\r\n\r\nPOST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nabcdGET /items/2 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "slow 150")
        XCTAssertEqual(c.readResponse()?.text, "item 1")
        XCTAssertEqual(c.readResponse()?.text, "abcd")
        XCTAssertEqual(c.readResponse()?.text, "item 2")
    }

    func testHTTP10ClosesUnlessItAsksForKeepAlive() throws {
        let a = try client()
        a.send("GET /hello HTTP/1.0\r\n\r\n")
        XCTAssertEqual(a.readResponse()?.header("Connection"), "close")
        XCTAssertTrue(a.closedByPeer())

        let b = try client()
        b.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        XCTAssertEqual(b.readResponse()?.header("Connection"), "keep-alive")
        b.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        XCTAssertEqual(b.readResponse()?.status, 200)
    }

    func testConnectionCloseIsHonoured() throws {
        let c = try client()
        c.send("GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.header("Connection"), "close")
        XCTAssertTrue(c.closedByPeer())
    }

    func testRejectedFramingClosesTheConnectionSoNothingIsSmuggled() throws {
        let c = try client()
        c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /items/smuggled HTTP/1.1\r\nHost: t\r\n\r\n")
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.status, 400)
        XCTAssertEqual(r.header("Content-Type"), "application/problem+json")
        XCTAssertEqual(r.header("Connection"), "close")
        let json = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]
        XCTAssertEqual(json?["status"] as? Int, 400)
        XCTAssertNotNil(json?["type"]); XCTAssertNotNil(json?["title"]); XCTAssertNotNil(json?["detail"])
        XCTAssertTrue(c.closedByPeer(), "the smuggled request must never be answered")
    }

    func testErrorStatusesOverTheWire() throws {
        let cases: [(String, String, Int, Bool)] = [
            ("bad CL", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1x\r\n\r\n", 400, true),
            ("obs-fold", "GET /hello HTTP/1.1\r\nHost: t\r\nX: a\r\n  b\r\n\r\n", 400, true),
            ("bare LF", "GET /hello HTTP/1.1\nHost: t\n\n", 400, true),
            ("no Host", "GET /hello HTTP/1.1\r\n\r\n", 400, true),
            ("bad percent", "GET /items/%G0 HTTP/1.1\r\nHost: t\r\n\r\n", 400, true),
            ("gzip TE", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, true),
            ("HTTP/2", "GET /hello HTTP/2.0\r\nHost: t\r\n\r\n", 505, true),
            ("long line", "GET /\(String(repeating: "a", count: 9000)) HTTP/1.1\r\nHost: t\r\n\r\n", 414, true),
            ("big head", "GET /hello HTTP/1.1\r\nHost: t\r\nX: \(String(repeating: "b", count: 33000))\r\n\r\n", 431, true),
            ("big body", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n", 413, true),
            ("wrong method", "DELETE /hello HTTP/1.1\r\nHost: t\r\n\r\n", 405, false),
            ("QUERY, a known method", "QUERY /hello HTTP/1.1\r\nHost: t\r\n\r\n", 405, false),
            ("unimplemented method", "FOO /hello HTTP/1.1\r\nHost: t\r\n\r\n", 501, false),
            ("unimplemented method, unknown path", "BREW /nope HTTP/1.1\r\nHost: t\r\n\r\n", 501, false),
            ("unknown path", "GET /nope HTTP/1.1\r\nHost: t\r\n\r\n", 404, false),
        ]
        for (name, request, status, closes) in cases {
            let c = try client()
            c.send(request)
            let r = c.readResponse()
            XCTAssertEqual(r?.status, status, name)
            XCTAssertEqual(r?.header("Content-Type"), "application/problem+json", name)
            if closes {
                XCTAssertEqual(r?.header("Connection"), "close", name)
                XCTAssertTrue(c.closedByPeer(), name)
            } else {
                c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
                XCTAssertEqual(c.readResponse()?.status, 200, "\(name): the connection stays usable")
            }
        }
    }

    func testMethodNotAllowedListsAllow() throws {
        let c = try client()
        c.send("POST /hello HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.status, 405)
        XCTAssertEqual(r.header("Allow"), "GET, HEAD")
    }

    /// RFC 9110 §9.1: a method the server implements nowhere is 501; a known one a route does not allow is 405.
    func testUnknownMethodIs501AndKnownMethodOnTheWrongRouteIs405() throws {
        let c = try client()
        c.send("FOO / HTTP/1.1\r\nHost: t\r\n\r\n")
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.status, 501)
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("urn:problem:method-not-implemented"))
        c.send("PUT /hello HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
        let put = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(put.status, 405)
        XCTAssertEqual(put.header("Allow"), "GET, HEAD")
    }

    func testExpect100ContinueWithinLimits() throws {
        let c = try client()
        c.send("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.status, 100)
        c.send("hello")
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.text, "hello")
    }

    func testExpect100ContinueOverLimitGets413BeforeTheBody() throws {
        let c = try client()
        c.send("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5000000\r\n\r\n")
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.status, 413)
        XCTAssertTrue(c.closedByPeer())
    }

    func testChunkedRequestBody() throws {
        let c = try client()
        c.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n4\r\ndefg\r\n0\r\nTrailer: yes\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "abcdefg")
    }

    func testRequestArrivingOneByteAtATime() throws {
        let c = try client()
        for b in Array("GET /items/42 HTTP/1.1\r\nHost: t\r\n\r\n".utf8) { c.send([b]) }
        XCTAssertEqual(c.readResponse()?.text, "item 42")
    }

    func testHeadReturnsGetHeadersWithoutBody() throws {
        let c = try client()
        c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        let get = try XCTUnwrap(c.readResponse())
        c.send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try XCTUnwrap(c.readResponse(head: true))
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Length"), get.header("Content-Length"))
        XCTAssertEqual(head.header("Content-Type"), get.header("Content-Type"))
        c.send("GET /items/next HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "item next", "no stray body bytes after HEAD")
    }

    func testAbsoluteFormTargetIsAccepted() throws {
        let c = try client()
        c.send("GET http://example.org/items/abs HTTP/1.1\r\nHost: example.org\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "item abs")
    }

    func testGzipForLargeBodiesWithStrongETagsPerRepresentation() throws {
        let c = try client()
        c.send("GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
        let plain = try XCTUnwrap(c.readResponse())
        XCTAssertNil(plain.header("Content-Encoding"))
        XCTAssertEqual(plain.header("Vary"), "Accept-Encoding")
        c.send("GET /big HTTP/1.1\r\nHost: t\r\nAccept-Encoding: br, gzip\r\n\r\n")
        let zipped = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(zipped.header("Content-Encoding"), "gzip")
        XCTAssertEqual(Inflater.decompress(zipped.body), plain.body)
        c.send("GET /big HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip;q=0\r\n\r\n")
        XCTAssertNil(c.readResponse()?.header("Content-Encoding"))

        c.send("GET /cached HTTP/1.1\r\nHost: t\r\n\r\n")
        let id = try XCTUnwrap(c.readResponse())
        c.send("GET /cached HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n")
        let gz = try XCTUnwrap(c.readResponse())
        let idTag = try XCTUnwrap(id.header("ETag")), gzTag = try XCTUnwrap(gz.header("ETag"))
        XCTAssertNotEqual(idTag, gzTag)
        XCTAssertEqual(Inflater.decompress(gz.body), id.body)
        c.send("GET /cached HTTP/1.1\r\nHost: t\r\nIf-None-Match: \(idTag)\r\n\r\n")
        let notModified = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(notModified.status, 304)
        XCTAssertTrue(notModified.body.isEmpty)
        c.send("GET /hello HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n")
        let small = try XCTUnwrap(c.readResponse())
        XCTAssertNil(small.header("Content-Encoding"), "small bodies are sent as they are")
    }

    func testAssembledBodyIsTheConcatenationInBothRepresentationsWithETagsAnd304() throws {
        let c = try client()
        c.send("GET /assembled?who=ann HTTP/1.1\r\nHost: t\r\n\r\n")
        let plain = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(plain.status, 200)
        XCTAssertEqual(plain.header("Content-Type"), "application/json")
        XCTAssertEqual(plain.header("Vary"), "Accept-Encoding")
        XCTAssertEqual(plain.header("Cache-Control"), "private, max-age=60")
        let decoded = try JSONSerialization.jsonObject(with: Data(plain.body)) as? [String: Any]
        XCTAssertEqual(decoded?["who"] as? String, "ann")
        XCTAssertEqual((decoded?["parts"] as? [[String]])?.count, 4)
        c.send("GET /assembled?who=ann HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n")
        let zipped = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(zipped.header("Content-Encoding"), "gzip")
        XCTAssertEqual(Inflater.decompress(zipped.body), plain.body, "concatenated deflate streams inflate to the identity bytes")
        XCTAssertLessThan(zipped.body.count, plain.body.count / 3)
        let tag = try XCTUnwrap(plain.header("ETag")), gzTag = try XCTUnwrap(zipped.header("ETag"))
        XCTAssertNotEqual(tag, gzTag)
        // HEAD: the same fields and length, no body.
        c.send("HEAD /assembled?who=ann HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n")
        let head = try XCTUnwrap(c.readResponse(head: true))
        XCTAssertEqual(head.header("Content-Length"), "\(zipped.body.count)")
        XCTAssertEqual(head.header("ETag"), gzTag)
        // 304 on either tag; another user's literal changes the tag.
        c.send("GET /assembled?who=ann HTTP/1.1\r\nHost: t\r\nIf-None-Match: \(tag)\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.status, 304)
        c.send("GET /assembled?who=ann HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\nIf-None-Match: \(gzTag)\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.status, 304)
        c.send("GET /assembled?who=bob HTTP/1.1\r\nHost: t\r\nIf-None-Match: \(tag)\r\n\r\n")
        let other = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(other.status, 200)
        XCTAssertNotEqual(other.header("ETag"), tag)
    }

    func testRequestIDIsEchoedOrGenerated() throws {
        let c = try client()
        c.send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Request-ID: abc-123\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.header("X-Request-ID"), "abc-123")
        c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        let generated = try XCTUnwrap(c.readResponse()?.header("X-Request-ID"))
        XCTAssertFalse(generated.isEmpty)
    }

    /// Generated ids: the loop's seven-character prefix and a hex counter, different for every request, and the same
    /// text a handler reads as the one sent back.
    func testGeneratedRequestIDsAreDistinctAndShaped() throws {
        let c = try client()
        var seen = Set<String>()
        var prefix: String?
        for _ in 0..<40 {
            c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let id = try XCTUnwrap(c.readResponse()?.header("X-Request-ID"))
            XCTAssertTrue((8...15).contains(id.utf8.count), id)
            XCTAssertTrue(id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }, id)
            if let prefix { XCTAssertEqual(String(id.prefix(7)), prefix) } else { prefix = String(id.prefix(7)) }
            XCTAssertTrue(seen.insert(id).inserted, "repeated id \(id)")
        }
        var id = RequestID(prefix: RequestID.packPrefix(Array("abcdef0".utf8)), counter: 0x1f)
        XCTAssertEqual(id.string, "abcdef01f")
        var out = [UInt8](repeating: 0, count: id.maxByteCount)
        let written = out.withUnsafeMutableBufferPointer { id.write(to: $0.baseAddress!) }
        out.removeLast(out.count - written)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "abcdef01f")
        id = RequestID(prefix: RequestID.packPrefix(Array("abcdef0".utf8)), counter: .max)
        XCTAssertEqual(id.string, "abcdef0ffffffff")
        XCTAssertEqual(RequestID(client: "mine").string, "mine")
    }

    /// An assembled identity body goes out gathered (its large fragments from their own storage, up to 16 iovecs a
    /// send): with 40 fragments between literals, pipelined twice, to a reader whose kernel takes little at a time,
    /// every byte arrives in order, and the gzip answer of the same body inflates to the same bytes.
    func testAGatheredAssembledBodyArrivesWholeThroughPartialWrites() throws {
        let fragments = (0..<40).map { i in BodyFragment(Array(String(repeating: "fragment \(i) ", count: 120 + i).utf8)) }
        let router = Router()
        router.get("/many") { _ in
            var body = AssembledBody()
            for (i, f) in fragments.enumerated() { body.append(literal: "<\(i)>"); body.append(f) }
            body.append(literal: "<end>")
            return .response(.assembled(body))
        }
        let local = try startServer(router)
        defer { stop(local) }
        var expected: [UInt8] = []
        for (i, f) in fragments.enumerated() { expected += Array("<\(i)>".utf8) + f.bytes }
        expected += Array("<end>".utf8)
        let c = try RawClient(port: local.port, timeout: 10, receiveBuffer: 4096)
        c.send("GET /many HTTP/1.1\r\nHost: t\r\n\r\nGET /many HTTP/1.1\r\nHost: t\r\n\r\n")
        usleep(200_000)   // the server fills the small buffer and waits for writability
        for _ in 0..<2 {
            let r = try XCTUnwrap(c.readResponse())
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(r.body.count, expected.count)
            XCTAssertTrue(r.body == expected, "bytes out of order or lost")
        }
        let z = try RawClient(port: local.port)
        z.send("GET /many HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n")
        let gz = try XCTUnwrap(z.readResponse())
        XCTAssertEqual(gz.header("Content-Encoding"), "gzip")
        XCTAssertEqual(Inflater.decompress(gz.body), expected)
    }

    /// The parser builds the next request in the box of the one answered before, but only when nothing else holds it:
    /// a request a handler kept keeps its own method, path, query, fields and body.
    func testARequestAHandlerKeepsIsNotReusedForTheNextOne() throws {
        let kept = Mutex<[HTTPRequest]>([])
        let router = Router()
        router.add("GET", "/keep/{n}") { ctx in kept.withLock { $0.append(ctx.request) }; return .response(.text("ok")) }
        router.add("POST", "/keep/{n}") { ctx in kept.withLock { $0.append(ctx.request) }; return .response(.text("ok")) }
        router.get("/drop") { _ in .response(.text("ok")) }
        let local = try startServer(router)
        defer { stop(local) }
        let c = try RawClient(port: local.port)
        for i in 0..<6 {
            c.send("GET /drop HTTP/1.1\r\nHost: t\r\nX-Other: \(i)\r\n\r\n")
            XCTAssertEqual(c.readResponse()?.status, 200)
            if i % 2 == 0 {
                c.send("GET /keep/\(i)?q=\(i) HTTP/1.1\r\nHost: t\r\nX-Mine: value-\(i)\r\n\r\n")
            } else {
                c.send("POST /keep/\(i) HTTP/1.1\r\nHost: t\r\nX-Mine: value-\(i)\r\nContent-Length: 3\r\n\r\nb=\(i)")
            }
            XCTAssertEqual(c.readResponse()?.status, 200)
        }
        let requests = kept.withLock { $0 }
        XCTAssertEqual(requests.count, 6)
        for (i, r) in requests.enumerated() {
            XCTAssertEqual(r.path, "/keep/\(i)")
            XCTAssertEqual(r.method, i % 2 == 0 ? "GET" : "POST")
            XCTAssertEqual(r.query, i % 2 == 0 ? "q=\(i)" : nil)
            XCTAssertEqual(r.headers["X-Mine"], "value-\(i)")
            XCTAssertNil(r.headers["X-Other"])
            XCTAssertEqual(r.body, i % 2 == 0 ? [] : Array("b=\(i)".utf8))
        }
    }

    func testHealthReadinessAndMetrics() throws {
        let c = try client()
        c.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "{\"status\":\"ok\"}")
        c.send("GET /readyz HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.status, 200)
        c.send("GET /nope HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = c.readResponse()
        c.send("GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
        let m = try XCTUnwrap(c.readResponse()).text
        XCTAssertTrue(m.contains("http_requests_total{route=\"/healthz\",status=\"200\"} 1"), m)
        XCTAssertTrue(m.contains("http_requests_total{route=\"unmatched\",status=\"404\"} 1"), m)
        XCTAssertTrue(m.contains("http_request_duration_seconds_bucket{le=\"+Inf\"}"))
        XCTAssertTrue(m.contains("http_open_connections 1"), m)
        XCTAssertTrue(m.contains("http_response_bytes_total"))
    }

    func testKeepsServingAfterGarbageAndAbortedConnections() throws {
        var rng = SystemRandomNumberGenerator()
        for i in 0..<40 {
            let c = try client()
            c.setTimeout(2)
            switch i % 4 {
            case 0: c.send((0..<200).map { _ in UInt8.random(in: 0...255, using: &rng) })
            case 1: c.send("GET /hello HTTP/1.1\r\nHost: t\r\nContent-Le"); c.abortiveClose()
            case 2: c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nabc"); c.abortiveClose()
            default: c.send("GET /slow?ms=50 HTTP/1.1\r\nHost: t\r\n\r\n"); c.abortiveClose()
            }
        }
        Thread.sleep(forTimeInterval: 0.2)
        let c = try client()
        c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.status, 200)
    }

    static let largeBytes: [UInt8] = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }

    func testLargeBodiesPipelinedWithSmallOnesArriveIntactAndInOrderToASlowReader() throws {
        let c = try client()
        c.send("GET /large HTTP/1.1\r\nHost: t\r\n\r\nGET /items/a HTTP/1.1\r\nHost: t\r\n\r\nGET /large?shared=1 HTTP/1.1\r\nHost: t\r\n\r\nHEAD /large HTTP/1.1\r\nHost: t\r\n\r\nGET /items/b HTTP/1.1\r\nHost: t\r\n\r\n")
        // Let the socket buffers fill so the server sees partial writes and EAGAIN mid-body.
        Thread.sleep(forTimeInterval: 0.3)
        let first = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(first.body.count, 300_000)
        XCTAssertTrue(first.body == Self.largeBytes, "byte-exact")
        XCTAssertEqual(c.readResponse()?.text, "item a")
        let shared = try XCTUnwrap(c.readResponse())
        XCTAssertTrue(shared.body == Self.largeBytes)
        XCTAssertNotNil(shared.header("ETag"))
        let head = try XCTUnwrap(c.readResponse(head: true))
        XCTAssertEqual(head.header("Content-Length"), "300000")
        XCTAssertEqual(c.readResponse()?.text, "item b")
        c.send("GET /large?shared=1 HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n")
        let gz = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(gz.header("Content-Encoding"), nil, "application/octet-stream is not a compressible type")
        XCTAssertEqual(gz.body.count, 300_000)
    }

    func testConcurrentAsyncRequestsDoNotBlockTheLoop() throws {
        let slow = try client()
        slow.send("GET /slow?ms=500 HTTP/1.1\r\nHost: t\r\n\r\n")
        let start = Date()
        let fast = try client()
        for _ in 0..<10 {
            fast.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            XCTAssertEqual(fast.readResponse()?.status, 200)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.45, "fast requests answered while the slow one works")
        XCTAssertEqual(slow.readResponse()?.text, "slow 500")
    }
}

final class TimeoutTests: XCTestCase {
    func testSlowlorisHeaderIsCutWith408() throws {
        let server = try startTestServer { $0.timeouts.header = 0.3 }
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send("GET /hello HTTP/1.1\r\nHost: t\r\n")
        let start = Date()
        for _ in 0..<3 { Thread.sleep(forTimeInterval: 0.1); c.send("X-Slow: 1\r\n") }
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.status, 408)
        XCTAssertEqual(r.header("Content-Type"), "application/problem+json")
        XCTAssertTrue(c.closedByPeer())
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
    }

    func testSilentFreshConnectionIsClosedAfterHeaderTimeout() throws {
        let server = try startTestServer { $0.timeouts.header = 0.3 }
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        XCTAssertTrue(c.closedByPeer())
    }

    func testIdleKeepAliveConnectionIsClosed() throws {
        let server = try startTestServer { $0.timeouts.idle = 0.3 }
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.status, 200)
        let start = Date()
        XCTAssertTrue(c.closedByPeer())
        XCTAssertGreaterThan(Date().timeIntervalSince(start), 0.2)
    }

    /// Past the limit with no connection idle (each is sending a request), a new one gets 503; with one idle, the
    /// idle one makes room (SharedLimitsTests).
    func testConnectionsPastTheLimitGet503() throws {
        let server = try startTestServer { $0.limits.maxConnections = 2; $0.loops = 1 }
        defer { stop(server) }
        let a = try RawClient(port: server.port), b = try RawClient(port: server.port)
        a.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"); XCTAssertEqual(a.readResponse()?.status, 200)
        b.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"); XCTAssertEqual(b.readResponse()?.status, 200)
        a.send("GET /hello HTTP/1.1\r\n"); b.send("GET /hello HTTP/1.1\r\n")   // both busy with a request's head
        Thread.sleep(forTimeInterval: 0.05)
        let c = try RawClient(port: server.port)
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.status, 503)
        XCTAssertEqual(r.header("Content-Type"), "application/problem+json")
        XCTAssertTrue(c.closedByPeer())
        XCTAssertTrue(server.metrics.render().contains("http_connections_rejected_total 1"))
    }
}

final class GracefulShutdownTests: XCTestCase {
    func testDrainFinishesEveryAcceptedRequest() throws {
        let server = try startTestServer()
        let port = server.port
        let count = 30
        final class Results: @unchecked Sendable { var statuses: [Int]; init(_ n: Int) { statuses = Array(repeating: 0, count: n) } }
        let results = Results(count)
        let group = DispatchGroup()
        let lock = NSLock()
        var readyAfterDrain: Int?
        // A keep-alive connection with a slow request in flight: the pipelined /readyz behind it is
        // answered during the drain.
        let observer = try RawClient(port: port)
        observer.send("GET /slow?ms=400 HTTP/1.1\r\nHost: t\r\n\r\nGET /readyz HTTP/1.1\r\nHost: t\r\n\r\n")
        for i in 0..<count {
            group.enter()
            // Plain threads: blocking sockets on GCD workers would starve the executor the handlers use.
            Thread.detachNewThread {
                defer { group.leave() }
                guard let c = try? RawClient(port: port) else { return }
                c.send("GET /slow?ms=300 HTTP/1.1\r\nHost: t\r\n\r\n")
                let r = c.readResponse()
                lock.lock(); results.statuses[i] = r?.status ?? -1; lock.unlock()
            }
        }
        Thread.sleep(forTimeInterval: 0.15)
        let t0 = Date()
        server.shutdown()
        XCTAssertFalse(server.isReady)
        XCTAssertEqual(observer.readResponse()?.text, "slow 400")
        let ready = observer.readResponse()
        readyAfterDrain = ready?.status
        XCTAssertEqual(ready?.header("Connection"), "close")
        group.wait()
        server.waitUntilStopped()
        XCTAssertLessThan(Date().timeIntervalSince(t0), 3)
        XCTAssertEqual(readyAfterDrain, 503)
        XCTAssertEqual(results.statuses.filter { $0 == 200 }.count, count, "no accepted request is lost")
        XCTAssertThrowsError(try RawClient(port: port), "the listener is closed")
    }

    func testDrainTimeoutClosesStragglers() throws {
        let server = try startTestServer { $0.timeouts.drain = 0.3 }
        let c = try RawClient(port: server.port)
        c.send("GET /slow?ms=3000 HTTP/1.1\r\nHost: t\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.1)
        let t0 = Date()
        stop(server)
        XCTAssertLessThan(Date().timeIntervalSince(t0), 2.5)
    }
}

/// Request bodies bounded in time and, all together, in memory.
final class BodyBudgetTests: XCTestCase {
    func testABodyThatTricklesBelowTheMinimumRateIsCutWith408() throws {
        let server = try startTestServer { $0.bodies.grace = 0.3; $0.bodies.minRate = 1000; $0.timeouts.idle = 60 }
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10000\r\n\r\n")
        let start = Date()
        // A byte every 0.1 s: each arrives well within the idle timeout, the whole far below 1000 bytes a second.
        for _ in 0..<6 { c.send("x"); Thread.sleep(forTimeInterval: 0.1) }
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.status, 408)
        XCTAssertTrue(r.text.contains("body-too-slow"), r.text)
        XCTAssertTrue(c.closedByPeer())
        XCTAssertLessThan(Date().timeIntervalSince(start), 3)
        // A body at a fair pace is served.
        let d = try RawClient(port: server.port)
        d.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 6000\r\n\r\n")
        for _ in 0..<6 { d.send(String(repeating: "y", count: 1000)); Thread.sleep(forTimeInterval: 0.1) }
        XCTAssertEqual(d.readResponse()?.status, 200)
    }

    func testBodiesPastTheSharedBudgetAre503BeforeTheyAreRead() throws {
        let server = try startTestServer { $0.bodies.maxInFlight = 100_000; $0.bodies.maxPerAddress = 100_000; $0.limits.maxBody = 1 << 20 }
        defer { stop(server) }
        let a = try RawClient(port: server.port)
        a.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 80000\r\n\r\n" + String(repeating: "a", count: 1000))
        Thread.sleep(forTimeInterval: 0.2)
        let b = try RawClient(port: server.port)
        b.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 80000\r\n\r\n" + String(repeating: "b", count: 1000))
        let refused = try XCTUnwrap(b.readResponse())
        XCTAssertEqual(refused.status, 503)
        XCTAssertNotNil(Int(refused.header("Retry-After") ?? ""))
        XCTAssertTrue(refused.text.contains("urn:problem:busy"), refused.text)
        XCTAssertTrue(server.metrics.render().contains("http_bodies_refused_total 1"))
        // The first body finishes; its bytes go back to the budget, and the next body fits.
        a.send(String(repeating: "a", count: 79_000))
        XCTAssertEqual(a.readResponse()?.status, 200)
        let c = try RawClient(port: server.port)
        c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 80000\r\n\r\n" + String(repeating: "c", count: 1000))
        Thread.sleep(forTimeInterval: 0.1)
        c.send(String(repeating: "c", count: 79_000))
        XCTAssertEqual(c.readResponse()?.status, 200)
        // Small bodies that come with their head never touch the budget.
        let d = try RawClient(port: server.port)
        d.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
        XCTAssertEqual(d.readResponse()?.status, 200)
    }
}
