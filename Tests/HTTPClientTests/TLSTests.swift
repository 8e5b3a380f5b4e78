import Foundation
import Glibc
import HTTPClient
import TestSupport
import XCTest

final class TLSTests: XCTestCase {
    func fixtures() throws -> TLSFixtures { try XCTUnwrap(TLSFixtures.shared, "openssl could not make the test certificates") }

    func testVerifiedTLSWithAPrivateCAKeepsTheConnectionAlive() async throws {
        let f = try fixtures()
        let (port, stop) = try f.startServer(cert: "good.pem")
        defer { stop() }
        let client = try HTTPClient(configuration: .init(caFile: f.path("ca.pem")))
        defer { client.shutdown() }
        for host in ["127.0.0.1", "localhost", "127.0.0.1", "127.0.0.1"] {
            let r = try await client.execute(ClientRequest(url: "https://\(host):\(port)/w/api.php"), timeout: 3)
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(String(decoding: r.body, as: UTF8.self), #"{"ok":true}"#)
        }
        let row = client.metrics.row("https://127.0.0.1:\(port)")
        XCTAssertEqual(row.handshakes, 1, "three requests, one handshake")
        XCTAssertEqual(row.requests, 3)
        XCTAssertEqual(client.metrics.row("https://localhost:\(port)").handshakes, 1, "SNI and the name verified for localhost too")
    }

    /// The client reads TLS ahead (one read takes every record the socket holds), so bytes past an answer can sit in
    /// the TLS library where epoll never reports them. Data the upstream sent unasked after an answer is a leftover:
    /// the connection is not reused, and the next call gets its own answer on a new one.
    func testDataReadAheadPastAnAnswerRetiresTheConnection() async throws {
        let f = try fixtures()
        let (port, stop) = try f.startServer(cert: "good.pem", strayRecords: true)
        defer { stop() }
        let client = try HTTPClient(configuration: .init(caFile: f.path("ca.pem")))
        defer { client.shutdown() }
        for _ in 0..<3 {
            let r = try await client.execute(ClientRequest(url: "https://127.0.0.1:\(port)/w/api.php"), timeout: 3)
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(String(decoding: r.body, as: UTF8.self), #"{"ok":true}"#)
        }
        let row = client.metrics.row("https://127.0.0.1:\(port)")
        XCTAssertEqual(row.requests, 3)
        XCTAssertEqual(row.created, 3, "a connection with stray bytes after its answer is not used again")
        XCTAssertEqual(row.reused, 0)
    }

    func testCertificatesThatDoNotVerifyAreRefused() async throws {
        let f = try fixtures()
        let client = try HTTPClient(configuration: .init(caFile: f.path("ca.pem")))
        defer { client.shutdown() }
        let plain = try HTTPClient()   // the system trust store only: the private CA is unknown to it
        defer { plain.shutdown() }
        for (cert, who) in [("wrong.pem", client), ("unknown.pem", client), ("expired.pem", client), ("good.pem", plain)] {
            let (port, stop) = try f.startServer(cert: cert)
            defer { stop() }
            do { _ = try await who.execute(ClientRequest(url: "https://127.0.0.1:\(port)/"), timeout: 3); XCTFail(cert) } catch {
                guard case .certificate(let detail) = error else { XCTFail("\(cert): \(error)"); continue }
                XCTAssertTrue(detail.hasPrefix("the certificate could not be verified"), detail)
            }
        }
    }

    func testAMissingCAFileIsAClearError() {
        XCTAssertThrowsError(try HTTPClient(configuration: .init(caFile: "/nonexistent/ca.pem"))) { e in
            guard case .tls(let detail) = e as? HTTPClientError else { XCTFail("\(e)"); return }
            XCTAssertTrue(detail.contains("/nonexistent/ca.pem"), detail)
        }
    }
}
