import HTTPClient
import XCTest

/// The response side, as strict as the server's request parser.
final class ResponseParserTests: XCTestCase {
    func parse(_ text: String, head: Bool = false, maxBody: Int = 1 << 20, byteAtATime: Bool = false) throws(ResponseError) -> ResponseParser {
        var p = ResponseParser(limits: .init(maxBody: maxBody), requestWasHead: head)
        let bytes = Array(text.utf8)
        if byteAtATime {
            for b in bytes { if try p.feed([b]) { break } }
        } else {
            _ = try p.feed(bytes)
        }
        return p
    }

    func error(_ text: String, head: Bool = false, maxBody: Int = 1 << 20) -> ResponseError? {
        do { _ = try parse(text, head: head, maxBody: maxBody); return nil } catch { return error }
    }

    func testContentLengthAndKeepAlive() throws {
        for oneByte in [false, true] {
            let p = try parse("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", byteAtATime: oneByte)
            XCTAssertTrue(p.isComplete)
            XCTAssertEqual(p.head?.status, 200)
            XCTAssertEqual(p.head?.value("content-type"), "application/json")
            XCTAssertEqual(p.body, Array("{}".utf8))
            XCTAssertTrue(p.keepAlive)
        }
        XCTAssertFalse(try parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").keepAlive)
        XCTAssertFalse(try parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").keepAlive)
        XCTAssertTrue(try parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").keepAlive)
        XCTAssertTrue(try parse("HTTP/1.1 204\r\n\r\n").isComplete, "no reason phrase")
    }

    func testTheFieldsTheClientAsksAboutAreFoundInAnyCaseAndOthersAreNot() throws {
        let p = try parse("HTTP/1.1 301 Moved\r\nX-Location: not this\r\nLOCATION: /there\r\nlocation: /second\r\nRetry-after: 7\r\n"
                          + "CONTENT-length: 3\r\nContent-Encoding: identity\r\ncontent-encoding: x, y\r\nconnection: CLOSE\r\nLocations: no\r\n\r\nabc")
        let h = try XCTUnwrap(p.head)
        XCTAssertEqual(p.body, Array("abc".utf8), "Content-Length found whatever its case")
        XCTAssertFalse(p.keepAlive, "Connection: close found whatever its case")
        for name in ["location", "Location", "LOCATION"] { XCTAssertEqual(h.value(name), "/there") }
        XCTAssertEqual(h.values("Location"), ["/there", "/second"])
        XCTAssertEqual(h.value("retry-after"), "7")
        XCTAssertEqual(h.value("x-location"), "not this")
        XCTAssertEqual(h.value("locations"), "no")
        XCTAssertEqual(h.values("content-encoding"), ["identity", "x", "y"])
        XCTAssertNil(h.value("transfer-encoding"))
        XCTAssertNil(h.value("locatio"))
        // Every name `fields` lists is found by `value`, as its first field of that name (ASCII case-insensitively).
        for (name, _) in h.fields {
            XCTAssertEqual(h.value(name), h.fields.first { $0.name.lowercased() == name.lowercased() }?.value, name)
        }
    }

    func testChunkedWithExtensionsAndTrailersAtEveryByte() throws {
        let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;name=v\r\nWiki\r\n5\r\npedia\r\n0\r\nX-Trailer: 1\r\n\r\n"
        for oneByte in [false, true] {
            let p = try parse(text, byteAtATime: oneByte)
            XCTAssertTrue(p.isComplete)
            XCTAssertEqual(String(decoding: p.body, as: UTF8.self), "Wikipedia")
            XCTAssertTrue(p.keepAlive)
        }
    }

    func testBodyUntilCloseCompletesOnlyAtClose() throws {
        var p = try parse("HTTP/1.1 200 OK\r\n\r\nabc")
        XCTAssertFalse(p.isComplete)
        try p.finish()
        XCTAssertEqual(p.body, Array("abc".utf8))
        XCTAssertFalse(p.keepAlive)
        var cut = try parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        XCTAssertThrowsError(try cut.finish()) { XCTAssertEqual($0 as? ResponseError, .truncated) }
    }

    func testNoBodyForHeadAnd204And304AndInterimResponsesAreSkipped() throws {
        XCTAssertTrue(try parse("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", head: true).isComplete)
        XCTAssertTrue(try parse("HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n").isComplete)
        let p = try parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")
        XCTAssertEqual(p.head?.status, 200)
        XCTAssertEqual(p.body, [120])
    }

    func testMalformedAnswers() {
        let cases: [(String, String)] = [
            ("garbage status line", "SSH-2.0-OpenSSH\r\n\r\n"),
            ("HTTP/2 status line", "HTTP/2 200 OK\r\n\r\n"),
            ("two-digit status", "HTTP/1.1 20 OK\r\n\r\n"),
            ("bare LF", "HTTP/1.1 200 OK\nContent-Length: 0\n\n"),
            ("obs-fold", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n"),
            ("space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n"),
            ("CL and TE", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
            ("CL disagree", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
            ("CL not digits", "HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\nabc"),
            ("bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            ("chunk size overflow", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n"),
            ("chunk without CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n"),
            ("gzip transfer coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
            ("control character", "HTTP/1.1 200 OK\r\nX: a\u{1}b\r\nContent-Length: 0\r\n\r\n"),
            ("control character in the reason", "HTTP/1.1 200 O\u{1}K\r\nContent-Length: 0\r\n\r\n"),
            ("DEL in the reason", "HTTP/1.1 200 OK\u{7F}\r\nContent-Length: 0\r\n\r\n"),
            ("unasked upgrade", "HTTP/1.1 101 Switching Protocols\r\n\r\n"),
        ]
        for (name, text) in cases {
            guard case .malformed = error(text) else { XCTFail("\(name): \(String(describing: error(text)))"); continue }
        }
    }

    /// One parser serves a kept-alive connection's exchanges: after `reset` it reads the next response (any framing,
    /// a HEAD's bodiless one) exactly as a fresh parser would, whatever the last one left in its state.
    func testAResetParserReadsTheNextResponseAsAFreshOneWould() throws {
        let answers: [(String, Bool)] = [
            ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n", false),
            ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno", false),
            ("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", true),
            ("HTTP/1.1 204 No Content\r\nX: " + String(repeating: "v", count: 5000) + "\r\n\r\n", false),
            ("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nend", false),
        ]
        var reused = ResponseParser()
        for pieces in [1, 7, 1000] {
            for (text, head) in answers {
                reused.reset(requestWasHead: head)
                var fresh = ResponseParser(requestWasHead: head)
                let bytes = Array(text.utf8)
                var done = (false, false)
                for start in stride(from: 0, to: bytes.count, by: pieces) {
                    let piece = Array(bytes[start..<min(bytes.count, start + pieces)])
                    done = (try reused.feed(piece), try fresh.feed(piece))
                }
                XCTAssertTrue(done.0 && done.1, text)
                XCTAssertEqual(reused.head, fresh.head, text)
                XCTAssertEqual(reused.body, fresh.body, text)
                XCTAssertEqual(reused.keepAlive, fresh.keepAlive, text)
                XCTAssertFalse(reused.hasLeftover)
            }
        }
    }

    /// Field values are checked eight bytes at a time: a control byte or DEL anywhere in a long value (every offset,
    /// every word position) is refused, while tabs, spaces and obs-text bytes (0x80–0xFF) anywhere are accepted.
    func testEveryControlByteInAFieldValueIsFoundWhereverItSits() throws {
        for length in [1, 7, 8, 9, 16, 23, 40] {
            for at in 0..<length {
                for bad: UInt8 in [0x00, 0x01, 0x0A, 0x0D, 0x1F, 0x7F] where !(bad == 0x0A || bad == 0x0D) || (at > 0 && at < length - 1) {
                    var value = [UInt8](repeating: UInt8(ascii: "v"), count: length)
                    value[at] = bad
                    let head = Array("HTTP/1.1 200 OK\r\nX: ".utf8) + value + Array("\r\nContent-Length: 0\r\n\r\n".utf8)
                    var p = ResponseParser()
                    XCTAssertThrowsError(try p.feed(head), "byte \(bad) at \(at) of \(length)")
                }
                var fine = [UInt8](repeating: UInt8(ascii: "v"), count: length)
                fine[at] = [0x09, 0x20, 0x80, 0xFF, 0x7E][at % 5]
                var p = ResponseParser()
                let head = Array("HTTP/1.1 200 OK\r\nX: w".utf8) + fine + Array("w\r\nContent-Length: 0\r\n\r\n".utf8)
                XCTAssertTrue(try p.feed(head), "\(fine[at]) at \(at) of \(length)")
                if fine[at] < 0x80 { XCTAssertEqual(p.head?.value("x"), String(decoding: [UInt8(ascii: "w")] + fine + [UInt8(ascii: "w")], as: UTF8.self)) }
            }
        }
        for name in ["X Y", "X\u{7F}", "X\u{1}", "(X)", "X\"", "é"] {
            var p = ResponseParser()
            XCTAssertThrowsError(try p.feed(Array("HTTP/1.1 200 OK\r\n\(name): v\r\n\r\n".utf8)), name.debugDescription)
        }
        var p = ResponseParser()
        XCTAssertTrue(try p.feed(Array("HTTP/1.1 200 OK\r\n!#$%&'*+-.^_`|~09azAZ: v\r\nContent-Length: 0\r\n\r\n".utf8)), "every token byte")
    }

    /// A head that trickles in is scanned once, resuming where the last piece ended (rescanning made 64 KB sent a byte
    /// at a time cost a second of a loop: Benchmarks/readers.sh); a CR at the end of a piece waits for the byte after it.
    func testAHeadArrivingByteByByteReadsAsAWholeOne() throws {
        let long = String(repeating: "v", count: 20_000)
        let text = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nX-Long: \(long)\r\nContent-Length: 2\r\n\r\nok"
        let p = try parse(text, byteAtATime: true)
        XCTAssertTrue(p.isComplete)
        XCTAssertEqual(p.head?.value("x-long"), long)
        XCTAssertEqual(p.body, Array("ok".utf8))
        for bare in ["HTTP/1.1 200 OK\r\nX: a\rb\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 200 OK\rX\r\n\r\n"] {
            XCTAssertThrowsError(try parse(bare, byteAtATime: true), "a bare CR split from its next byte is still seen") { e in
                guard case .malformed = e as? ResponseError else { return XCTFail("\(e)") }
            }
        }
    }

    func testTheCapHoldsWhileBytesArrive() {
        XCTAssertEqual(error("HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n", maxBody: 1000), .tooLarge, "declared")
        XCTAssertEqual(error("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n", maxBody: 1000), .tooLarge, "chunked")
        XCTAssertEqual(error("HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "x", count: 1001), maxBody: 1000), .tooLarge, "until close")
        XCTAssertEqual(error("HTTP/1.1 200 OK\r\nX: " + String(repeating: "h", count: 70_000) + "\r\n\r\n").map { if case .malformed = $0 { return true }; return false }, true, "head cap")
    }
}

