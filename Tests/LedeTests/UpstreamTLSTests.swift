import Foundation
import HTTPServer
@testable import Lede
import TestSupport
import XCTest
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// Lede's routes over a TLS upstream: a certificate that does not verify is a 502 problem that says so (no
/// fallback), `--upstream-ca` trusts a private CA, and the client's pool counters are in /metrics.
final class UpstreamTLSTests: XCTestCase {
    func fixtures() throws -> TLSFixtures { try XCTUnwrap(TLSFixtures.shared, "openssl could not make the test certificates") }

    static let dog = RealAnswersTests.fixtures.appendingPathComponent("summary__ios_dog.json").path

    func testARealAnswerArrivesOverTLSWithAPrivateCAAndTheConnectionIsReused() throws {
        let f = try fixtures()
        let (port, stop) = try f.startServer(cert: "good.pem", bodyFile: Self.dog)
        defer { stop() }
        let server = try startLede { $0.upstream = "https://localhost:\(port)/{lang}"; $0.upstreamCA = f.path("ca.pem"); $0.cacheLimits.maxEntries = 1 }
        defer { server.shutdown(); server.waitUntilStopped() }
        for title in ["Dog", "Cat", "Dog"] {
            let r = try get(server, "/summary/\(title)"); let card = r.json
            XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
            XCTAssertEqual(card["title"] as? String, "Dog")
        }
        let m = try get(server, "/metrics")
        let metrics = String(decoding: m.body, as: UTF8.self)
        XCTAssertTrue(metrics.contains("lede_upstream_tls_handshakes_total{origin=\"https://localhost:\(port)\"} 1"), metrics)
        XCTAssertTrue(metrics.contains("lede_upstream_connections_created_total{origin=\"https://localhost:\(port)\"} 1"), metrics)
        let requests = metrics.split(separator: "\n").first { $0.hasPrefix("lede_upstream_requests_total{origin=\"https://localhost:\(port)\"}") }
            .flatMap { $0.split(separator: " ").last }.flatMap { Int($0) } ?? 0
        XCTAssertGreaterThanOrEqual(requests, 2, "two titles, one connection")
        XCTAssertTrue(metrics.contains("lede_upstream_requests_per_connection{origin=\"https://localhost:\(port)\"} \(requests).0"), metrics)
    }

    func testACertificateThatDoesNotVerifyIsA502ThatSaysSo() throws {
        let f = try fixtures()
        for (cert, ca) in [("wrong.pem", "ca.pem"), ("expired.pem", "ca.pem"), ("good.pem", nil)] as [(String, String?)] {
            let (port, stop) = try f.startServer(cert: cert, bodyFile: Self.dog)
            defer { stop() }
            let server = try startLede { $0.upstream = "https://127.0.0.1:\(port)/{lang}"; $0.upstreamCA = ca.map(f.path) }
            defer { server.shutdown(); server.waitUntilStopped() }
            let r = try get(server, "/summary/Dog"); let problem = r.json
            XCTAssertEqual(r.status, 502, cert)
            XCTAssertEqual(problem["type"] as? String, "urn:lede:problem:upstream-certificate", cert)
            let detail = problem["detail"] as? String ?? ""
            XCTAssertTrue(detail.contains("certificate could not be verified"), detail)
            XCTAssertEqual(try get(server, "/healthz").status, 200, "and the server keeps serving")
        }
    }

    func testAnUnreadableCAFileStopsStartUpWithAClearMessage() {
        var options = Options()
        options.upstream = "https://{lang}.wikipedia.org"
        options.upstreamCA = "/nonexistent/private-ca.pem"
        XCTAssertThrowsError(try LedeApp(options: options)) { e in
            XCTAssertTrue("\(e)".contains("/nonexistent/private-ca.pem"), "\(e)")
        }
    }
}
