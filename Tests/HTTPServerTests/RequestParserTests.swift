import XCTest
import HTTPCore
@testable import HTTPServer

/// Parses `text` fed in one piece and fed one byte at a time; both must agree.
func parseAll(_ text: String, limits: ParserLimits = ParserLimits(), byteAtATime: Bool = false) -> [ParseEvent] {
    var parser = RequestParser(limits: limits)
    var events: [ParseEvent] = []
    func drain() -> Bool {
        while true {
            let e = parser.next()
            switch e {
            case .needMore: return true
            case .error: events.append(e); return false
            default: events.append(e)
            }
        }
    }
    let bytes = Array(text.utf8)
    if byteAtATime {
        for b in bytes { parser.append([b]); if !drain() { break } }
    } else {
        parser.append(bytes); _ = drain()
    }
    return events
}

func outcome(_ text: String, limits: ParserLimits = ParserLimits()) -> String {
    let whole = parseAll(text, limits: limits)
    let single = parseAll(text, limits: limits, byteAtATime: true)
    let a = describe(whole), b = describe(single)
    return a == b ? a : "MISMATCH whole=\(a) byte=\(b)"
}

func describe(_ events: [ParseEvent]) -> String {
    events.map { e -> String in
        switch e {
        case .needMore: return "more"
        case .continueRequested: return "100"
        case .request(let r): return "\(r.method) \(r.path)"
        case .error(let err): return "\(err.status)"
        }
    }.joined(separator: ",")
}

final class RequestParserTests: XCTestCase {
    func testValidRequestsTable() {
        let cases: [(String, String, String)] = [
            ("simple GET", "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", "GET /healthz"),
            ("query kept apart", "GET /feed?lang=en&x=%20 HTTP/1.1\r\nHost: a\r\n\r\n", "GET /feed"),
            ("HTTP/1.0 without Host", "GET / HTTP/1.0\r\n\r\n", "GET /"),
            ("leading empty line ignored", "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", "GET /"),
            ("content-length body", "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", "POST /x"),
            ("duplicate equal content-length", "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi", "POST /x"),
            ("chunked with extension and trailer", "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", "POST /x"),
            ("chunked upper-case hex", "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n", "POST /x"),
            ("absolute-form", "GET http://example.org/summary/Foo?x=1 HTTP/1.1\r\nHost: example.org\r\n\r\n", "GET /summary/Foo"),
            ("absolute-form without path", "GET http://example.org HTTP/1.1\r\nHost: example.org\r\n\r\n", "GET /"),
            ("OPTIONS asterisk", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "OPTIONS *"),
            ("minor version 1.9 is 1.x", "GET / HTTP/1.9\r\nHost: a\r\n\r\n", "GET /"),
            ("obs-text in value", "GET / HTTP/1.1\r\nHost: a\r\nX: caf\u{e9}\r\n\r\n", "GET /"),
            ("extension method", "PURGE / HTTP/1.1\r\nHost: a\r\n\r\n", "PURGE /"),
            ("tab in value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\tb\r\n\r\n", "GET /"),
        ]
        for (name, text, expected) in cases {
            XCTAssertEqual(outcome(text), expected, name)
        }
    }

    func testInvalidRequestsTable() {
        let cases: [(String, String, String)] = [
            ("CL with TE", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", "400"),
            ("different duplicate CL", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", "400"),
            ("CL list that disagrees", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 4\r\n\r\n", "400"),
            ("CL with sign", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\n", "400"),
            ("CL hex", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x3\r\n\r\n", "400"),
            ("CL overflow", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n", "400"),
            ("CL empty", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", "400"),
            ("chunk size not hex", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "400"),
            ("chunk size overflow", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", "400"),
            ("chunk data without CRLF", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhiX\r\n", "400"),
            ("chunk line bare LF", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\nhi\r\n0\r\n\r\n", "400"),
            ("obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", "400"),
            ("space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", "400"),
            ("tab before colon", "GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", "400"),
            ("NUL in value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{0}b\r\n\r\n", "400"),
            ("CR in value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", "400"),
            ("bare LF in fields", "GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", "400"),
            ("bare LF after request line", "GET / HTTP/1.1\nHost: a\r\n\r\n", "400"),
            ("bare CR in request line", "GET /\r HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
            ("missing Host on 1.1", "GET / HTTP/1.1\r\n\r\n", "400"),
            ("duplicate Host", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "400"),
            ("bad Host characters", "GET / HTTP/1.1\r\nHost: a b/c\r\n\r\n", "400"),
            ("invalid method token", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
            ("lower-case version", "GET / http/1.1\r\nHost: a\r\n\r\n", "400"),
            ("version with extra", "GET / HTTP/1.10\r\nHost: a\r\n\r\n", "400"),
            ("two spaces", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
            ("missing version", "GET /\r\nHost: a\r\n\r\n", "400"),
            ("bad percent in path", "GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
            ("truncated percent in path", "GET /a% HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
            ("percent NUL in path", "GET /a%00 HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
            ("invalid UTF-8 in path", "GET /a%ff HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
            ("bad percent in query", "GET /a?x=%g1 HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
            ("fragment in target", "GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
            ("relative target", "GET a HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
            ("absolute-form with userinfo", "GET http://u@h/ HTTP/1.1\r\nHost: h\r\n\r\n", "400"),
            ("asterisk with GET", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
            ("TE on HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "400"),
            ("gzip transfer coding", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", "501"),
            ("chunked not last", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", "501"),
            ("chunked twice", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", "400"),
            ("HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", "505"),
            ("HTTP/0.9", "GET / HTTP/0.9\r\nHost: a\r\n\r\n", "505"),
            ("unknown expectation", "POST / HTTP/1.1\r\nHost: a\r\nExpect: magic\r\nContent-Length: 1\r\n\r\nx", "417"),
        ]
        for (name, text, expected) in cases {
            XCTAssertEqual(outcome(text), expected, name)
        }
    }

    /// One chunk-size grammar for both directions (HTTPCore's `ChunkedFraming`): the server strict, the client lenient
    /// only about whitespace with no extension after it.
    func testChunkSizeLinesReadAlikeInBothDirections() {
        func read(_ text: String, lenient: Bool = false) -> ChunkedFraming.SizeLine {
            Array(text.utf8).withUnsafeBufferPointer { ChunkedFraming.size($0, lenient: lenient) }
        }
        XCTAssertEqual(read("1a"), .size(26))
        XCTAssertEqual(read("A;name=value"), .size(10))
        XCTAssertEqual(read("5 ;ext\t=\"x\""), .size(5))
        XCTAssertEqual(read("0"), .size(0))
        XCTAssertEqual(read(""), .notHexadecimal)
        XCTAssertEqual(read("zz"), .notHexadecimal)
        XCTAssertEqual(read("fffffffffffffff"), .size(0xfffffffffffffff))
        XCTAssertEqual(read("ffffffffffffffff"), .tooLarge)
        XCTAssertEqual(read("5x"), .invalidAfterSize)
        XCTAssertEqual(read("5 "), .whitespaceWithoutExtension)
        XCTAssertEqual(read("5 ", lenient: true), .size(5))
        XCTAssertEqual(read("5;a\u{1}b"), .controlInExtension)
        XCTAssertEqual(read("5;a\u{7f}"), .controlInExtension)
        var p = RequestParser(limits: ParserLimits())
        p.append(Array("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x\u{1}\r\nhello\r\n0\r\n\r\n".utf8))
        guard case .error(let e) = p.next() else { return XCTFail("a control character in a chunk extension is refused") }
        XCTAssertEqual(e.status, 400)
    }

    func testLimits() {
        let limits = ParserLimits(maxRequestLine: 100, maxHeaderBytes: 300, maxBody: 10)
        XCTAssertEqual(outcome("GET /\(String(repeating: "a", count: 200)) HTTP/1.1\r\nHost: a\r\n\r\n", limits: limits), "414")
        XCTAssertEqual(outcome("GET / HTTP/1.1\r\nHost: a\r\nX: \(String(repeating: "b", count: 400))\r\n\r\n", limits: limits), "431")
        let many = (0..<40).map { "X-\($0): v\r\n" }.joined()
        XCTAssertEqual(outcome("GET / HTTP/1.1\r\nHost: a\r\n\(many)\r\n", limits: limits), "431")
        XCTAssertEqual(outcome("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", limits: limits), "413")
        XCTAssertEqual(outcome("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n", limits: limits), "413")
        // The limit applies before the line ends: an endless request line is refused without waiting for CRLF.
        XCTAssertEqual(outcome("GET /\(String(repeating: "a", count: 200))", limits: limits), "414")
        let count = ParserLimits(maxHeaderCount: 3)
        XCTAssertEqual(outcome("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: count), "431")
    }

    func testExpectContinueIsSignalledOnlyWithinLimits() {
        XCTAssertEqual(outcome("POST /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"), "100")
        XCTAssertEqual(outcome("POST /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2000000\r\n\r\n"), "413")
        // Body already sent along: no interim response needed.
        XCTAssertEqual(describe(parseAll("POST /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi")), "POST /x")
    }

    func testPipelinedRequestsComeOutInOrder() {
        let text = "GET /a HTTP/1.1\r\nHost: a\r\n\r\nPOST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nxyzGET /c HTTP/1.1\r\nHost: a\r\n\r\n"
        XCTAssertEqual(outcome(text), "GET /a,POST /b,GET /c")
    }

    func testBodiesAndFieldsAreDecoded() throws {
        let events = parseAll("POST /s/caf%C3%A9/a%2Fb?q=1+2&r=%C3%A9 HTTP/1.1\r\nHost: a\r\nX-Thing:   spaced value  \r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", byteAtATime: true)
        guard case .request(let r) = events.first else { return XCTFail("no request") }
        XCTAssertEqual(r.pathSegments, ["s", "café", "a/b"])
        XCTAssertEqual(r.queryParameter("q"), "1 2")
        XCTAssertEqual(r.queryParameter("r"), "é")
        XCTAssertEqual(r.headers["x-thing"], "spaced value")
        XCTAssertEqual(String(decoding: r.body, as: UTF8.self), "abcde")
        XCTAssertTrue(r.keepAlive)
    }

    func testKeepAliveRules() {
        func keep(_ text: String) -> Bool? {
            if case .request(let r) = parseAll(text).first { return r.keepAlive }
            return nil
        }
        XCTAssertEqual(keep("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), true)
        XCTAssertEqual(keep("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"), false)
        XCTAssertEqual(keep("GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, Close\r\n\r\n"), false)
        XCTAssertEqual(keep("GET / HTTP/1.0\r\n\r\n"), false)
        XCTAssertEqual(keep("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"), true)
        XCTAssertEqual(keep("GET / HTTP/1.0\r\nConnection: Upgrade ,\t KEEP-ALIVE \r\n\r\n"), true)
        XCTAssertEqual(keep("GET / HTTP/1.0\r\nConnection: keep-alive-ish\r\n\r\n"), false)
        XCTAssertEqual(keep("GET / HTTP/1.1\r\nHost: a\r\nConnection: closed\r\n\r\n"), true)
        XCTAssertEqual(keep("GET / HTTP/1.1\r\nHost: a\r\nConnection: te\r\nConnection: close\r\n\r\n"), false)
        XCTAssertEqual(keep("GET / HTTP/1.1\r\nHost: a\r\nConnection:\r\n\r\n"), true)
        XCTAssertEqual(keep("GET / HTTP/1.1\r\nHost: a\r\nconnection: CLOSE\r\n\r\n"), false)
    }

    func testCommonFieldNamesKeepTheCaseTheyWereSentWith() {
        guard case .request(let r) = parseAll("GET / HTTP/1.1\r\nhost: a\r\nUser-Agent: x\r\nUSER-AGENT: y\r\nAccept: */*\r\n\r\n").first else {
            return XCTFail()
        }
        XCTAssertEqual(r.headers.fields.map(\.name), ["host", "User-Agent", "USER-AGENT", "Accept"])
        XCTAssertEqual(r.headers.values("user-agent"), ["x", "y"])
    }

    func testAfterAnErrorTheParserNeverYieldsAnotherRequest() {
        var parser = RequestParser()
        parser.append(Array("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        guard case .error(let e) = parser.next() else { return XCTFail("expected error") }
        XCTAssertEqual(e.status, 400)
        guard case .error = parser.next() else { return XCTFail("the parser must stay failed") }
    }

    func testByteAtATimeWorkStaysLinear() {
        // 30 KB of headers one byte at a time: with a rescanning parser this would be quadratic.
        let headers = (0..<300).map { "X-Field-\($0): \(String(repeating: "v", count: 80))\r\n" }.joined()
        let limits = ParserLimits(maxHeaderBytes: 64 * 1024, maxHeaderCount: 1000)
        let start = Date()
        XCTAssertEqual(describe(parseAll("GET / HTTP/1.1\r\nHost: a\r\n\(headers)\r\n", limits: limits, byteAtATime: true)), "GET /")
        XCTAssertLessThan(Date().timeIntervalSince(start), 5, "generous bound; a quadratic scan takes far longer")
    }
}
