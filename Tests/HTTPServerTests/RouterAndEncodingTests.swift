import Glibc
import HTTPClient
import XCTest
@testable import HTTPServer

final class RouterAndEncodingTests: XCTestCase {
    func testRouterMatchesLiteralsAndParameters() {
        let r = Router()
        r.get("/a") { _ in .response(.text("a")) }
        r.get("/summary/{title}") { _ in .response(.text("s")) }
        r.post("/notifications/read") { _ in .response(.text("p")) }
        guard case .found(let route, let params) = r.match(method: "GET", segments: ["summary", "Café/x"]) else { return XCTFail() }
        XCTAssertEqual(route.pattern, "/summary/{title}")
        XCTAssertEqual(params["title"], "Café/x")
        guard case .found = r.match(method: "HEAD", segments: ["a"]) else { return XCTFail("HEAD uses the GET route") }
        guard case .methodNotAllowed(let allow) = r.match(method: "GET", segments: ["notifications", "read"]) else { return XCTFail() }
        XCTAssertEqual(allow, ["POST"])
        guard case .methodNotAllowed(let allow2) = r.match(method: "PUT", segments: ["a"]) else { return XCTFail() }
        XCTAssertEqual(allow2, ["GET", "HEAD"])
        guard case .notFound = r.match(method: "GET", segments: ["summary", ""]) else { return XCTFail("empty parameter") }
        guard case .notFound = r.match(method: "GET", segments: ["b"]) else { return XCTFail() }
    }

    func testRouterMatchesARawPathWithoutDecodingLiteralsAndDecodesForParameters() {
        let r = Router()
        r.get("/feed") { _ in .response(.text("f")) }
        r.post("/feed") { _ in .response(.text("p")) }
        r.get("/summary/{title}") { _ in .response(.text("s")) }
        guard case .found(let get, _) = r.match(method: "GET", path: "/feed"), get.method == "GET" else { return XCTFail() }
        guard case .found(let post, _) = r.match(method: "POST", path: "/feed"), post.method == "POST" else { return XCTFail() }
        guard case .found(let head, _) = r.match(method: "HEAD", path: "/feed"), head.method == "GET" else { return XCTFail() }
        guard case .methodNotAllowed(let allow) = r.match(method: "PUT", path: "/feed") else { return XCTFail() }
        XCTAssertEqual(allow, ["GET", "HEAD", "POST"])
        guard case .found(_, let params) = r.match(method: "GET", path: "/summary/Caf%C3%A9%2Fx") else { return XCTFail() }
        XCTAssertEqual(params["title"], "Café/x")
        guard case .found = r.match(method: "GET", path: "/fe%65d") else { return XCTFail("an escaped literal path still matches") }
        guard case .notFound = r.match(method: "GET", path: "/feeds") else { return XCTFail() }
        guard case .notFound = r.match(method: "GET", path: "/") else { return XCTFail() }
        XCTAssertEqual(HTTPRequest.segments(ofPath: "/"), [""])
        XCTAssertEqual(HTTPRequest.segments(ofPath: "/a//b/"), ["a", "", "b", ""])
        XCTAssertEqual(HTTPRequest.segments(ofPath: "*"), [])
    }

    func testAcceptEncoding() {
        XCTAssertTrue(Compression.acceptsGzip(["Accept-Encoding": "gzip, deflate, br"]))
        XCTAssertTrue(Compression.acceptsGzip(["Accept-Encoding": "*"]))
        XCTAssertFalse(Compression.acceptsGzip(["Accept-Encoding": "gzip;q=0"]))
        XCTAssertFalse(Compression.acceptsGzip(["Accept-Encoding": "*;q=0"]))
        XCTAssertFalse(Compression.acceptsGzip(["Accept-Encoding": "br"]))
        XCTAssertFalse(Compression.acceptsGzip([:]))
        XCTAssertTrue(Compression.acceptsGzip(["Accept-Encoding": "GZIP"]))
        XCTAssertTrue(Compression.acceptsGzip(["Accept-Encoding": "deflate;q=0, gzip;q=0.5"]))
        XCTAssertFalse(Compression.acceptsGzip(["Accept-Encoding": "gzip;q=0.000, br"]))
        XCTAssertFalse(Compression.acceptsGzip(["Accept-Encoding": "gzip ; Q=0"]))
        XCTAssertTrue(Compression.acceptsGzip(["Accept-Encoding": "gzip;q=0.001"]))
        XCTAssertTrue(Compression.acceptsGzip(["Accept-Encoding": "x-gzip"]))
        XCTAssertFalse(Compression.acceptsGzip(["Accept-Encoding": "gzipx"]))
        XCTAssertFalse(Compression.acceptsGzip(["Accept-Encoding": "*, gzip;q=0"]))
        XCTAssertTrue(ResponseEncoder.mentionsAcceptEncoding("Accept-Encoding, Accept-Language"))
        XCTAssertFalse(ResponseEncoder.mentionsAcceptEncoding("Accept-Language"))
    }

    func testGzipRoundTrip() {
        let text = Array(String(repeating: "Wikipedia is a free online encyclopedia. ", count: 100).utf8)
        let z = Gzip.compress(text)!
        XCTAssertLessThan(z.count, text.count / 5)
        XCTAssertEqual(Array(z.prefix(2)), [0x1f, 0x8b])
        XCTAssertEqual(Inflater.decompress(z), text)
    }

    func testPreparedBodyIsCompressedOnceWithDistinctETags() {
        let big = PreparedBody(contentType: "application/json", bytes: Array(String(repeating: "{\"a\":1}", count: 400).utf8))
        XCTAssertNotNil(big.gzip)
        XCTAssertNotEqual(big.etag, big.gzipETag)
        XCTAssertTrue(big.etag.hasPrefix("\"") && !big.etag.hasPrefix("W/"))
        let small = PreparedBody(contentType: "application/json", bytes: Array("{}".utf8))
        XCTAssertNil(small.gzip)
    }

    /// Entity tags: the FNV-1a hash as 16 lowercase hex digits (zero-padded), in quotes.
    func testHashTagsAreSixteenPaddedHexDigitsInQuotes() {
        for bytes in [[], Array("a".utf8), Array("Hello, World!".utf8), [UInt8](repeating: 0xff, count: 300)] {
            let v = FNV1a.value(bytes)
            let expected = String(repeating: "0", count: 16 - String(v, radix: 16).count) + String(v, radix: 16)
            XCTAssertEqual(FNV1a.hash(bytes), expected)
            XCTAssertEqual(FNV1a.quotedTag(bytes), "\"" + expected + "\"")
        }
        XCTAssertEqual(FNV1a.hex(0x1f), "000000000000001f")
        XCTAssertEqual(FNV1a.hex(.max), "ffffffffffffffff")
    }

    /// An assembled body's fields rendered once (`AssembledFields`) encode exactly as the general path writes the same
    /// body with the same fields: both representations, GET and HEAD, with and without If-None-Match.
    func testAssembledFieldsRenderedOnceEncodeLikeTheGeneralPath() {
        for vary in ["Accept, Accept-Encoding, Accept-Language", "Accept-Language"] {
            let fields: HTTPHeaders = ["Cache-Control": "private, max-age=60", "Vary": vary, "Content-Language": "en"]
            var plain = AssembledBody()
            plain.append(BodyFragment(Array(String(repeating: "{\"a\":1}", count: 400).utf8)))
            plain.append(literal: ",42]")
            var rendered = plain
            rendered.fields = AssembledFields(contentType: "application/json", headers: fields)
            for gzip in [false, true] {
                for method in ["GET", "HEAD"] {
                    for inm in [nil, "\"nope\"", gzip ? plain.gzipETag : plain.etag] {
                        var headers: HTTPHeaders = gzip ? ["Host": "h", "Accept-Encoding": "gzip"] : ["Host": "h"]
                        if let inm { headers.set("If-None-Match", inm) }
                        var pending = Connection.Pending()
                        pending.request = HTTPRequest(method: method, target: "/", path: "/", query: nil, headers: headers)
                        pending.requestID = RequestID(client: "r1")
                        var fast: [UInt8] = [], general: [UInt8] = []
                        let a = ResponseEncoder.encode(.assembled(rendered), into: &fast, request: &pending, keepAlive: true, date: Array("D".utf8))
                        let b = ResponseEncoder.encode(.assembled(plain, headers: fields), into: &general, request: &pending, keepAlive: true, date: Array("D".utf8))
                        XCTAssertEqual(String(decoding: fast, as: UTF8.self), String(decoding: general, as: UTF8.self), "gzip \(gzip) \(method) \(inm ?? "-")")
                        XCTAssertEqual(a.0, b.0); XCTAssertEqual(a.1, b.1)
                    }
                }
            }
        }
    }

    /// A prepared body's fields are rendered once at creation; the bytes must be exactly those the general
    /// path writes for the same body and fields, for both representations, GET and HEAD.
    func testPreparedBodyRenderedOnceEncodesLikeTheGeneralPath() {
        let bytes = Array(String(repeating: "{\"a\":1}", count: 400).utf8)
        let fields: HTTPHeaders = ["Cache-Control": "public, max-age=60", "Vary": "Accept-Language"]
        let rendered = PreparedBody(contentType: "application/json", bytes: bytes, headers: fields)
        let plain = PreparedBody(contentType: "application/json", bytes: bytes)
        for gzip in [false, true] {
            for method in ["GET", "HEAD"] {
                var pending = Connection.Pending()
                pending.request = HTTPRequest(method: method, target: "/", path: "/", query: nil,
                                              headers: gzip ? ["Host": "h", "Accept-Encoding": "gzip"] : ["Host": "h"])
                pending.requestID = RequestID(client: "r1")
                var fast: [UInt8] = [], general: [UInt8] = []
                let a = ResponseEncoder.encode(.prepared(rendered), into: &fast, request: &pending, keepAlive: true, date: Array("D".utf8))
                let b = ResponseEncoder.encode(.prepared(plain, headers: fields), into: &general, request: &pending, keepAlive: true, date: Array("D".utf8))
                XCTAssertEqual(String(decoding: fast, as: UTF8.self), String(decoding: general, as: UTF8.self), "gzip \(gzip) \(method)")
                XCTAssertEqual(a.0, b.0); XCTAssertEqual(a.1, b.1)
                XCTAssertEqual(String(decoding: fast, as: UTF8.self).contains("Content-Encoding: gzip"), gzip)
            }
        }
        // A matching If-None-Match leaves the fast path for a 304 without a body.
        var pending = Connection.Pending()
        pending.request = HTTPRequest(method: "GET", target: "/", path: "/", query: nil, headers: ["If-None-Match": rendered.etag])
        var out: [UInt8] = []
        let r = ResponseEncoder.encode(.prepared(rendered), into: &out, request: &pending, keepAlive: true, date: Array("D".utf8))
        let text = String(decoding: out, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 304 Not Modified\r\n"), text)
        XCTAssertTrue(text.contains("Cache-Control: public, max-age=60\r\n"), text)
        XCTAssertFalse(text.contains("Content-Length"), text)
        XCTAssertEqual(r.0, 0); XCTAssertNil(r.1)
    }

    func testAssembledGzipInflatesToTheIdentityBytesForAnyMixOfPieces() {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<40 {
            var body = AssembledBody()
            var expected: [UInt8] = []
            for _ in 0..<Int.random(in: 0...8, using: &rng) {
                // Literals short enough to be held in their piece (≤ 15 bytes, merged while they fit) and longer ones.
                let n = [0, 1, 7, 14, 15, 16, 300, 5_000, 70_000][Int.random(in: 0..<9, using: &rng)]
                let bytes = (0..<n).map { _ in UInt8.random(in: 32...(round.isMultiple(of: 2) ? 40 : 126), using: &rng) }
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: body.append(BodyFragment(bytes))
                case 1: body.append(literal: bytes)
                default: for b in bytes { body.append(byte: b) }
                }
                expected += bytes
            }
            XCTAssertEqual(body.identityBytes(), expected)
            XCTAssertEqual(body.count, expected.count)
            let gz = body.gzipBytes()
            XCTAssertEqual(gz.count, body.gzipCount)
            XCTAssertEqual(Inflater.decompress(gz), expected, "round \(round)")
            // Kept as one fragment and assembled again between literals: the same bytes, a valid stream, the right CRC.
            let kept = BodyFragment(assembled: body)
            XCTAssertEqual(kept.bytes, expected)
            var again = AssembledBody()
            again.append(literal: "[")
            again.append(kept)
            again.append(literal: "]")
            XCTAssertEqual(Inflater.decompress(again.gzipBytes()), Array("[".utf8) + expected + Array("]".utf8), "round \(round), kept")
        }
    }

    func testAssembledETagFollowsFragmentsAndLiterals() {
        let a = BodyFragment("{\"a\":1}"), b = BodyFragment("{\"b\":2}")
        func tag(_ pieces: [Any]) -> String {
            var body = AssembledBody()
            for p in pieces { if let f = p as? BodyFragment { body.append(f) } else { body.append(literal: p as! String) } }
            return body.etag
        }
        XCTAssertEqual(tag([a, ",", b]), tag([a, ",", b]))
        XCTAssertNotEqual(tag([a, ",", b]), tag([b, ",", a]))
        XCTAssertNotEqual(tag([a, ",", b]), tag([a, ";", b]))
        XCTAssertNotEqual(tag([a, b]), tag([a, ",", b]))
        XCTAssertEqual(tag(["x", "y"]), tag(["xy"]), "literals are bytes, however they are split")
        let ten = String(repeating: "x", count: 10)
        XCTAssertEqual(tag([a, ten, ten, ten, b]), tag([a, ten + ten + ten, b]), "held in their pieces or in the buffer")
    }

    func testCounterTableCountsEveryKeyAcrossGrowth() {
        var table = CounterTable()
        var expected: [Int: Int] = [:]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let key = (Int.random(in: 0..<300, using: &rng) + 2) << 10 | Int.random(in: 100..<600, using: &rng) % 7
            table.increment(key)
            expected[key, default: 0] += 1
        }
        let got = Dictionary(uniqueKeysWithValues: table.entries.map { ($0.key, $0.count) })
        XCTAssertEqual(got, expected)
    }

    func testIfNoneMatch() {
        XCTAssertTrue(ResponseEncoder.matches(ifNoneMatch: "\"x\", \"y\"", etag: "\"y\""))
        XCTAssertTrue(ResponseEncoder.matches(ifNoneMatch: "W/\"y\"", etag: "\"y\""))
        XCTAssertTrue(ResponseEncoder.matches(ifNoneMatch: "*", etag: "\"y\""))
        XCTAssertFalse(ResponseEncoder.matches(ifNoneMatch: "\"x\"", etag: "\"y\""))
    }

    func testProblemJSONIsEscapedAndComplete() throws {
        let p = Problem(status: 400, detail: "bad \"quote\"\n and \u{1}")
        let obj = try JSONSerialization.jsonObject(with: Data(p.jsonBytes(typeBase: "urn:problem:"))) as! [String: Any]
        XCTAssertEqual(obj["status"] as? Int, 400)
        XCTAssertEqual(obj["title"] as? String, "Bad Request")
        XCTAssertEqual(obj["detail"] as? String, "bad \"quote\"\n and \u{1}")
        XCTAssertEqual(obj["type"] as? String, "urn:problem:bad-request")
    }

    func testResponseHeaderValuesCannotSplitTheHead() {
        var out: [UInt8] = []
        var h = HTTPHeaders()
        h.set("X-Evil", "a\r\nSet-Cookie: x")
        var pending = Connection.Pending()
        _ = ResponseEncoder.encode(HTTPResponse(status: 200, headers: h, body: .bytes([])), into: &out,
                                   request: &pending, keepAlive: true, date: Array("d".utf8))
        let text = String(decoding: out, as: UTF8.self)
        XCTAssertFalse(text.contains("\r\nSet-Cookie"))
    }

    func testServerOwnedFieldsFromAHandlerAreNeverCopied() {
        var out: [UInt8] = []
        let h = HTTPHeaders([("content-length", "999"), ("SERVER", "evil"), ("date", "x"), ("Connection", "upgrade"), ("X-Request-Id", "spoof"),
                             ("transfer-encoding", "chunked"), ("Cache-Control", "no-store"), ("vary", "Accept-Encoding"), ("Content-Type", "application/json")])
        let body = Array(String(repeating: "{\"k\":1}", count: 300).utf8)
        var p = Connection.Pending(); p.requestID = RequestID(client: "rid")
        _ = ResponseEncoder.encode(HTTPResponse(status: 200, headers: h, body: .bytes(body)), into: &out, request: &p, keepAlive: true, date: Array("d".utf8))
        let head = String(decoding: out, as: UTF8.self).components(separatedBy: "\r\n\r\n")[0]
        XCTAssertFalse(head.contains("999")); XCTAssertFalse(head.contains("evil")); XCTAssertFalse(head.contains("upgrade"))
        XCTAssertFalse(head.contains("spoof")); XCTAssertFalse(head.lowercased().contains("transfer-encoding"))
        XCTAssertTrue(head.contains("Content-Length: \(body.count)")); XCTAssertTrue(head.contains("X-Request-ID: rid"))
        XCTAssertTrue(head.contains("Cache-Control: no-store"))
        XCTAssertEqual(head.lowercased().components(separatedBy: "vary:").count - 1, 1, "one Vary, not two")
        XCTAssertEqual(head.components(separatedBy: "Content-Type:").count - 1, 1)
    }

    func testHTTPDate() {
        XCTAssertEqual(HTTPDate.format(seconds: 784111777), "Sun, 06 Nov 1994 08:49:37 GMT")
        XCTAssertEqual(Timestamp.iso8601(seconds: 0, millis: 5), "1970-01-01T00:00:00.005Z")
        // RFC 3339 written byte by byte for four-digit years, interpolated for the others: the same text either way.
        for seconds in [0, 1, 59, 86_399, 951_782_400, 1_795_168_800, 253_402_300_799, -1, -62_135_596_800, 253_402_300_800] {
            var t = time_t(seconds), tm = Glibc.tm()
            gmtime_r(&t, &tm)
            XCTAssertEqual(Timestamp.rfc3339(seconds: seconds), Timestamp.dateTime(tm) + "Z", "\(seconds)")
        }
        XCTAssertEqual(Timestamp.rfc3339(seconds: 1_795_168_800), "2026-11-20T10:00:00Z")
    }

    func testRFC3339ParsingMatchesFoundationAndRejectsEverythingElse() {
        let f = ISO8601DateFormatter()
        for text in ["2026-11-20T08:30:00Z", "1970-01-01T00:00:00Z", "2000-02-29T23:59:59Z", "2100-12-31T12:00:00Z", "1969-07-20T20:17:40Z"] {
            XCTAssertEqual(Timestamp.parseRFC3339(text), f.date(from: text)!.timeIntervalSince1970, text)
        }
        XCTAssertEqual(Timestamp.parseRFC3339("2026-11-20T08:30:00+01:30"), Timestamp.parseRFC3339("2026-11-20T07:00:00Z"))
        XCTAssertEqual(Timestamp.parseRFC3339("2026-11-20t08:30:00-02:00"), Timestamp.parseRFC3339("2026-11-20T10:30:00z"))
        XCTAssertEqual(Timestamp.parseRFC3339("2026-11-20T08:30:00.25Z")!, Timestamp.parseRFC3339("2026-11-20T08:30:00Z")! + 0.25, accuracy: 1e-6)
        XCTAssertEqual(Timestamp.parseRFC3339("2016-12-31T23:59:60Z"), Timestamp.parseRFC3339("2016-12-31T23:59:59Z"), "a leap second reads as :59")
        for bad in ["", "yesterday", "2026-11-20", "2026-11-20T08:30Z", "2026-11-20T08:30:00", "2026-13-01T00:00:00Z",
                    "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-20T24:00:00Z", "2026-11-20T08:60:00Z",
                    "2026-11-20T08:30:00.Z", "2026-11-20T08:30:00.1234567890Z", "2026-11-20T08:30:00+0100", "2026-11-20T08:30:00+24:00",
                    "2026-11-20 08:30:00Z", " 2026-11-20T08:30:00Z", "2026-11-20T08:30:00Zx", "२०२६-11-20T08:30:00Z", "+2026-11-20T08:30:00Z"] {
            XCTAssertNil(Timestamp.parseRFC3339(bad), bad)
        }
    }

    func testAFieldListsATokenWhateverItsCaseAndSpacing() {
        XCTAssertTrue(FieldList.lists("Accept-Encoding, Accept-Language", "accept-language"))
        XCTAssertTrue(FieldList.lists("accept-language", "accept-language"))
        XCTAssertTrue(FieldList.lists("Origin,\tACCEPT-LANGUAGE ", "accept-language"))
        XCTAssertFalse(FieldList.lists("Accept-Languages, Accept", "accept-language"))
        XCTAssertFalse(FieldList.lists("", "accept-language"))
    }

}

import Foundation
@testable import HTTPCore
