@testable import HTTPClient
import XCTest

/// The split of an absolute URL into the pool's origin and the request target, done for every call.
final class OriginTests: XCTestCase {
    func split(_ url: String) throws -> String {
        let (o, target) = try Origin.parse(url)
        return "\(o.tls ? "tls" : "tcp") \(o.host) \(o.port) \(target) \(o.hostField)"
    }

    func testOriginsAndTargets() throws {
        XCTAssertEqual(try split("https://en.wikipedia.org/w/api.php?action=query&x=%7C"), "tls en.wikipedia.org 443 /w/api.php?action=query&x=%7C en.wikipedia.org")
        XCTAssertEqual(try split("HTTP://LocalHost:8080"), "tcp localhost 8080 / localhost:8080")
        XCTAssertEqual(try split("http://127.0.0.1:9000?q=1"), "tcp 127.0.0.1 9000 /?q=1 127.0.0.1:9000")
        XCTAssertEqual(try split("http://[::1]:81/a#frag"), "tcp ::1 81 /a [::1]:81")
        XCTAssertEqual(try split("https://[2001:db8::1]/"), "tls 2001:db8::1 443 / [2001:db8::1]")
        XCTAssertEqual(try split("http://h:80/x"), "tcp h 80 /x h")
    }

    func testURLsTheClientRefuses() {
        for url in ["ftp://x/", "http://user@host/", "/relative", "http://[::1/", "http:///path", "http://h:0/", "http://h:65536/",
                    "http://h:8a/", "http://h:/", "https://h/a b", "http://h/\u{7f}", "http://[::1]x/", "mailto:a@b", ""] {
            XCTAssertThrowsError(try Origin.parse(url), url) { e in
                guard case .invalidURL = e as? HTTPClientError else { XCTFail("\(url): \(e)"); return }
            }
        }
    }
}
