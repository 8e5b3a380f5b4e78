import Foundation
import Glibc
import TestSupport
import XCTest
@testable import HTTPServer
@testable import HTTPCore

/// What every client shares — the connections, the budget of bodies in flight — is never held by one address, and
/// what a head decides is decided before any of its body is waited for (issue 68). 127.0.0.0/8 is all loopback:
/// connections bound to 127.0.0.2 and 127.0.0.3 are two clients to the server.
final class SharedLimitsTests: XCTestCase {
    func router() -> Router {
        let router = Router()
        router.get("/ok") { _ in .response(HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("ok".utf8))) }
        router.add("POST", "/upload", maxBody: 8 << 20) { ctx in
            .response(HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("\(ctx.request.body.count)".utf8)))
        }
        router.add("POST", "/mine", maxBody: 8 << 20, account: .required { credentials in
            credentials.bearer == nil ? Problem(status: 401, slug: "needs-account", detail: "An account is needed.", headers: ["WWW-Authenticate": "Bearer"]) : nil
        }) { ctx in
            .response(HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("\(ctx.request.body.count)".utf8)))
        }
        return router
    }

    /// A keep-alive connection from `address` that has been answered once.
    func answeredConnection(_ server: HTTPServer, from address: String) throws -> RawClient {
        let c = try RawClient(port: server.port, timeout: 5, from: address)
        c.send("GET /ok HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.status, 200)
        return c
    }

    func testOneAddressHoldsNoMoreThanItsShareOfTheConnections() throws {
        let server = try startServer(router()) { $0.limits.maxConnections = 100; $0.limits.maxConnectionsPerAddress = 5 }
        defer { server.shutdown(); server.waitUntilStopped() }
        var held = try (0..<5).map { _ in try answeredConnection(server, from: "127.0.0.2") }
        // The sixth from the same address is refused; another address is served.
        let sixth = try RawClient(port: server.port, timeout: 5, from: "127.0.0.2")
        sixth.send("GET /ok HTTP/1.1\r\nHost: t\r\n\r\n")
        let refused = sixth.readResponse()
        XCTAssertEqual(refused?.status, 503)
        XCTAssertEqual(refused?.header("connection"), "close")
        XCTAssertNotNil(try answeredConnection(server, from: "127.0.0.3"))
        // A connection given back is a place for the address again.
        held[0].abortiveClose()
        held.removeFirst()   // closed as it goes
        var again: Int?
        for _ in 0..<100 {
            let c = try RawClient(port: server.port, timeout: 5, from: "127.0.0.2")
            c.send("GET /ok HTTP/1.1\r\nHost: t\r\n\r\n")
            again = c.readResponse()?.status
            if again == 200 { break }
            usleep(10_000)
        }
        XCTAssertEqual(again, 200)
        XCTAssertEqual(held.count, 4)
    }

    func testAtTheLimitTheConnectionIdleLongestMakesRoomForANewOne() throws {
        let server = try startServer(router()) { $0.limits.maxConnections = 4; $0.limits.maxConnectionsPerAddress = 4 }
        defer { server.shutdown(); server.waitUntilStopped() }
        var held: [RawClient] = []
        for i in 0..<4 {
            held.append(try answeredConnection(server, from: "127.0.0.\(i + 2)"))
            usleep(20_000)
        }
        // The others keep talking; the first has been idle longest.
        for c in held.dropFirst() {
            c.send("GET /ok HTTP/1.1\r\nHost: t\r\n\r\n")
            XCTAssertEqual(c.readResponse()?.status, 200)
        }
        // A new client at the limit is served: the idle one is closed for it, the busy ones are not.
        let newcomer = try answeredConnection(server, from: "127.0.0.9")
        XCTAssertNotNil(newcomer)
        XCTAssertTrue(held[0].closedByPeer(), "the longest-idle keep-alive connection made room")
        for c in held.dropFirst() {
            c.send("GET /ok HTTP/1.1\r\nHost: t\r\n\r\n")
            XCTAssertEqual(c.readResponse()?.status, 200)
        }
    }

    func testARouteThatNeedsAnAccountRefusesFromTheHeadWithoutWaitingForTheBody() throws {
        let server = try startServer(router()) { $0.limits.maxBody = 1024 }
        defer { server.shutdown(); server.waitUntilStopped() }
        // A head announcing 6 MB and no credentials: 401 at once, the connection closed, none of the body awaited.
        let c = try RawClient(port: server.port, timeout: 2)
        c.send("POST /mine HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 6100805\r\n\r\n")
        let r = c.readResponse()
        XCTAssertEqual(r?.status, 401)
        XCTAssertEqual(r?.header("connection"), "close")
        XCTAssertEqual(r?.header("www-authenticate"), "Bearer")
        XCTAssertTrue(c.closedByPeer())
        // Asking to continue, it is refused instead of being told to send.
        let e = try RawClient(port: server.port, timeout: 2)
        e.send("POST /mine HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n")
        XCTAssertEqual(e.readResponse()?.status, 401)
        // With credentials, the body is read and answered.
        let ok = try RawClient(port: server.port, timeout: 2)
        ok.send("POST /mine HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer abc\r\nContent-Length: 3000\r\n\r\n")
        usleep(20_000)
        ok.send(String(repeating: "x", count: 3000))
        XCTAssertEqual(ok.readResponse().map { String(decoding: $0.body, as: UTF8.self) }, "3000")
    }

    func testHeadsFromOneAddressLeaveAnotherAddressesBodiesWorking() throws {
        let server = try startServer(router()) {
            $0.limits.maxBody = 1024
            $0.bodies.maxInFlight = 1 << 20
            $0.bodies.maxPerAddress = 192 << 10
            $0.bodies.grace = 30   // the heads stay for the test's length
        }
        defer { server.shutdown(); server.waitUntilStopped() }
        // Twelve heads from one address announcing 6 MB each, and nothing more: each holds the window (64 KiB), not
        // 6 MB, and the address no more than its share: the fourth is refused.
        var statuses: [Int?] = []
        var heads: [RawClient] = []
        for _ in 0..<12 {
            let c = try RawClient(port: server.port, timeout: 0.3, from: "127.0.0.2")
            c.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 6100805\r\n\r\n")
            heads.append(c)
        }
        for c in heads { statuses.append(c.readResponse()?.status) }
        XCTAssertEqual(statuses.filter { $0 == 503 }.count, 9, "three windows fit the address's share: \(statuses)")
        XCTAssertEqual(statuses.filter { $0 == nil }.count, 3, "three heads wait for their bodies: \(statuses)")
        // Another address's uploads (head, then 3 KB a moment later) all go through.
        for _ in 0..<4 {
            let c = try RawClient(port: server.port, timeout: 2, from: "127.0.0.3")
            c.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 3000\r\n\r\n")
            usleep(50_000)
            c.send(String(repeating: "y", count: 3000))
            let r = c.readResponse()
            XCTAssertEqual(r?.status, 200)
            XCTAssertEqual(r.map { String(decoding: $0.body, as: UTF8.self) }, "3000")
        }
        XCTAssertEqual(heads.count, 12)
    }

    func testABodyThatDoesNotArriveIsCutOnceItsGraceHasPassed() throws {
        let server = try startServer(router()) { $0.limits.maxBody = 1024; $0.bodies.grace = 0.3 }
        defer { server.shutdown(); server.waitUntilStopped() }
        let c = try RawClient(port: server.port, timeout: 3)
        let start = Date()
        c.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n")
        let r = c.readResponse()
        XCTAssertEqual(r?.status, 408)
        XCTAssertLessThan(Date().timeIntervalSince(start), 2.5, "cut after its grace, not after minutes")
    }
}

/// `/metrics` on the operators' listener only, when the server has one (`ServerConfiguration.adminPort`).
final class AdminListenerTests: XCTestCase {
    func testMetricsAreServedOnTheAdminPortOnlyAndTheProbesOnBoth() throws {
        let server = try startServer(Router()) { $0.adminPort = 0 }
        defer { server.shutdown(); server.waitUntilStopped() }
        let admin = try XCTUnwrap(server.adminPort)
        XCTAssertNotEqual(admin, server.port)
        XCTAssertEqual(try get(server.port, "/metrics").status, 404, "not on the public port")
        let scraped = try get(admin, "/metrics")
        XCTAssertEqual(scraped.status, 200)
        XCTAssertTrue(scraped.text.contains("http_requests_total"), scraped.text)
        for port in [server.port, admin] {
            XCTAssertEqual(try get(port, "/healthz").status, 200)
            XCTAssertEqual(try get(port, "/readyz").status, 200)
        }
    }

    func testWithoutAnAdminPortMetricsStayOnThePublicPort() throws {
        let server = try startServer(Router())
        defer { server.shutdown(); server.waitUntilStopped() }
        XCTAssertNil(server.adminPort)
        XCTAssertEqual(try get(server.port, "/metrics").status, 200)
    }
}
