import Foundation
import HTTPServer
import TestSupport
import XCTest
@testable import Lede

/// A shared cache in front of Lede (a CDN, deploy/'s nginx) keys what it stores by the URL and the fields `Vary` names:
/// an answer whose bytes follow another request field and does not say so could be served to the wrong reader. This
/// walks every public GET route with two values of each field that can change an answer and fails when the bytes differ
/// while the answer is publicly cacheable without the field in its `Vary`.
class VaryTests: FakeUpstreamTestCase {
    /// Every public GET route of openapi.yaml whose answer is JSON or HTML, with parameters the embedded data answers.
    static let routes = [
        "/", "/languages", "/feed", "/feed?because=Amsterdam", "/summary/Amsterdam", "/related/Amsterdam",
        "/nearby?lat=52.3547498&lon=4.8339215", "/search?q=Amst", "/article/Amsterdam", "/article/Amsterdam/references",
        "/share/Amsterdam", "/places/deeplink/Amsterdam", "/places/deeplink?lat=52.3547498&lon=4.8339215",
        "/places/locations", "/animals", "/animals/tags", "/images?q=zzzzzz", "/random",
        // The edition named: Accept-Language must change nothing the answer does not say it varies on.
        "/summary/Amsterdam?lang=en", "/related/Amsterdam?lang=en", "/search?q=Amst&lang=en", "/article/Amsterdam/references?lang=en",
        "/share/Amsterdam?lang=en", "/nearby?lat=52.3547498&lon=4.8339215&lang=en",
    ]

    /// The fields that can change an answer, each with two values (nil: the field is left out).
    static let fields: [(name: String, a: String?, b: String?)] = [
        ("Accept-Language", "en", "de"),
        ("Accept-Language", "en", "it"),
        ("Authorization", nil, "Bearer demo-alice"),
        // Believed only from a trusted proxy (none here; `VaryBehindATrustedProxyTests` has one).
        ("X-Forwarded-Proto", nil, "https"),
        ("X-Forwarded-Host", nil, "lede.example.org"),
        ("X-Forwarded-For", nil, "203.0.113.9"),
    ]

    /// Whether a shared cache may store the answer.
    static func sharable(_ r: TestHTTPResponse) -> Bool {
        let cc = (r.headers["cache-control"] ?? "").lowercased()
        return cc.contains("public") || (cc.contains("max-age") && !cc.contains("private") && !cc.contains("no-store"))
    }

    func testEveryAnswerAFieldChangesSaysSoInVaryOrIsNotShared() throws {
        var compared = 0
        for path in Self.routes {
            for (name, a, b) in Self.fields {
                // Warm first (a cold answer may say so: the gallery's `source`), then twice with the first value: a route
                // whose bytes move on their own (a fresh random card) is not what this checks; it must not be shared.
                _ = try get(server, path, a.map { [name: $0] } ?? [:]); _ = try get(server, path, b.map { [name: $0] } ?? [:])
                let first = try get(server, path, a.map { [name: $0] } ?? [:]), again = try get(server, path, a.map { [name: $0] } ?? [:])
                guard first.body == again.body else {
                    XCTAssertFalse(Self.sharable(first), "\(path) changes by itself yet may be shared")
                    continue
                }
                let other = try get(server, path, b.map { [name: $0] } ?? [:])
                compared += 1
                guard other.body != first.body || other.status != first.status else { continue }
                for r in [first, other] where Self.sharable(r) {
                    let vary = (r.headers["vary"] ?? "").lowercased()
                    XCTAssertTrue(vary.contains(name.lowercased()), "\(path): \(name) changes the answer, which may be shared, but Vary is '\(vary)'")
                }
            }
        }
        XCTAssertGreaterThan(compared, 40)
    }

    /// `Vary: Accept-Language` only where the header chose something (issue 69): a route whose answer depends on the
    /// edition alone leaves it out when `lang=` named the edition, so a shared cache keeps one copy for every reader.
    func testAccept_LanguageIsInVaryOnlyWhereTheHeaderChose() throws {
        for path in ["/summary/Amsterdam", "/related/Amsterdam", "/search?q=Amst", "/article/Amsterdam/references", "/share/Amsterdam",
                     "/nearby?lat=52.3547498&lon=4.8339215"] {
            let chosen = try get(server, path, ["Accept-Language": "en"])
            XCTAssertTrue((chosen.headers["vary"] ?? "").contains("Accept-Language"), "\(path): the header chose the edition")
            let separator = path.contains("?") ? "&" : "?"
            for _ in 0..<2 {   // cold, then warm: the same fields
                let named = try get(server, path + separator + "lang=en", ["Accept-Language": "de"])
                XCTAssertEqual(named.status, 200, path)
                XCTAssertFalse((named.headers["vary"] ?? "").contains("Accept-Language"), "\(path)?lang=en: \(named.headers["vary"] ?? "-")")
                XCTAssertTrue((named.headers["vary"] ?? "").contains("Accept-Encoding"), path)
            }
        }
        // The article screen orders its languages by the header whatever names the edition: it keeps the field.
        XCTAssertTrue((try get(server, "/article/Amsterdam?lang=en").headers["vary"] ?? "").contains("Accept-Language"))
    }
}

/// The same walk behind a trusted proxy (loopback in `--trusted-proxies`, no `--public-url`): the share page then names
/// the forwarded scheme and host, and must say so in `Vary`.
final class VaryBehindATrustedProxyTests: VaryTests {
    override func configure(_ options: inout Options) {
        super.configure(&options)
        options.server.clients.trustedProxies = [AddressBlock("127.0.0.0/8")!]
    }

    func testTheSharePageNamesTheForwardedOrigin() throws {
        let r = try get(server, "/share/Amsterdam", ["X-Forwarded-Proto": "https"])
        XCTAssertTrue(String(decoding: r.body, as: UTF8.self).contains("content=\"https://127.0.0.1:\(server.port)/share/"), "the og:image names https")
        let spoofed = try TestHTTPResponse(port: server.port, request: "GET /share/Amsterdam HTTP/1.1\r\nHost: t\r\nX-Forwarded-Host: <script>\r\nConnection: close\r\n\r\n")
        XCTAssertTrue(String(decoding: spoofed.body, as: UTF8.self).contains("http://localhost/share/"), "a host that is not a host is not used")
    }
}
