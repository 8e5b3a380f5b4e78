import HTTPCore
import Foundation
import HTTPServer
import TestSupport
import XCTest
@testable import Lede

/// Who a client is (its credentials, or its address; forwarded addresses only from trusted proxies) and the budget
/// each client has (`--client-rate`, `--client-burst`).
final class ClientLimitTests: XCTestCase {
    // MARK: - Addresses and proxies (pure)

    func testAddressesAndBlocksReadBothFamilies() throws {
        XCTAssertEqual(ClientAddress("192.0.2.7")?.description, "192.0.2.7")
        XCTAssertEqual(ClientAddress("2001:db8::1")?.description, "2001:db8::1")
        XCTAssertNil(ClientAddress("192.0.2.300")); XCTAssertNil(ClientAddress("example.org")); XCTAssertNil(ClientAddress(""))
        let ten = try XCTUnwrap(AddressBlock("10.0.0.0/8"))
        XCTAssertTrue(ten.contains(ClientAddress("10.200.3.4")!)); XCTAssertFalse(ten.contains(ClientAddress("11.0.0.1")!))
        let six = try XCTUnwrap(AddressBlock("2001:db8::/32"))
        XCTAssertTrue(six.contains(ClientAddress("2001:db8:ffff::9")!)); XCTAssertFalse(six.contains(ClientAddress("2001:db9::1")!))
        XCTAssertFalse(six.contains(ClientAddress("10.0.0.1")!))
        XCTAssertEqual(AddressBlock("127.0.0.1")?.description, "127.0.0.1/32")
        XCTAssertNil(AddressBlock("10.0.0.0/33")); XCTAssertNil(AddressBlock("10.0.0.0/-1")); XCTAssertNil(AddressBlock("10.0.0.0/+8"))
        guard case .failure(let e) = AddressBlock.list("10.0.0.0/8, nonsense") else { return XCTFail("a bad entry is refused") }
        XCTAssertEqual(e.entry, "nonsense")
    }

    func testForwardedAddressesAreBelievedOnlyFromATrustedProxyAndReadFromTheRight() {
        let policy = ForwardingPolicy(trusted: [AddressBlock("10.0.0.0/8")!])
        let proxy = ClientAddress("10.1.1.1")!, stranger = ClientAddress("198.51.100.9")!
        // A client that is not a proxy is itself, whatever it says it forwards for.
        XCTAssertEqual(policy.client(peer: stranger, forwardedFor: ["203.0.113.5"]).address, stranger)
        XCTAssertFalse(policy.client(peer: stranger, forwardedFor: ["203.0.113.5"]).viaProxy)
        // Through the proxy: the rightmost address that is not a trusted proxy; what the client wrote to the left of
        // it (a spoofed first hop) is not believed.
        XCTAssertEqual(policy.client(peer: proxy, forwardedFor: ["6.6.6.6, 203.0.113.5"]).address, ClientAddress("203.0.113.5"))
        XCTAssertEqual(policy.client(peer: proxy, forwardedFor: ["6.6.6.6", "203.0.113.5, 10.2.2.2"]).address, ClientAddress("203.0.113.5"))
        XCTAssertTrue(policy.client(peer: proxy, forwardedFor: ["203.0.113.5"]).viaProxy)
        // A port or brackets are read; garbage stops the walk at the hop that wrote it.
        XCTAssertEqual(policy.client(peer: proxy, forwardedFor: ["203.0.113.5:443"]).address, ClientAddress("203.0.113.5"))
        XCTAssertEqual(policy.client(peer: proxy, forwardedFor: ["[2001:db8::7]"]).address, ClientAddress("2001:db8::7"))
        XCTAssertEqual(policy.client(peer: proxy, forwardedFor: ["203.0.113.5, unknown"]).address, proxy)
        // No header: the proxy itself.
        XCTAssertEqual(policy.client(peer: proxy, forwardedFor: []).address, proxy)
        // No trusted proxies at all (the default): every peer is the client.
        XCTAssertEqual(ForwardingPolicy().client(peer: proxy, forwardedFor: ["203.0.113.5"]).address, proxy)
    }

    // MARK: - The buckets (pure, on a given clock)

    func testABucketAdmitsItsBurstThenRefillsAtItsRate() {
        let t0: UInt64 = 1_000_000_000_000
        let limiter = ClientRateLimiter(rate: 10, burst: 5, capacity: 1024, now: t0)
        let key = limiter.key(address: ClientAddress("192.0.2.1")!)
        for i in 0..<5 { XCTAssertTrue(limiter.admit(key, now: t0).admitted, "request \(i) of the burst") }
        let refused = limiter.admit(key, now: t0)
        XCTAssertFalse(refused.admitted)
        XCTAssertEqual(refused.retryAfter, 1, "a unit back within 0.1 s: Retry-After is at least 1")
        XCTAssertEqual(limiter.refusals, 1)
        XCTAssertTrue(limiter.admit(key, now: t0 + 100_000_000).admitted, "0.1 s later, one unit has come back")
        XCTAssertFalse(limiter.admit(key, now: t0 + 100_000_000).admitted)
        // Another client has its own bucket.
        XCTAssertTrue(limiter.admit(limiter.key(address: ClientAddress("192.0.2.2")!), now: t0).admitted)
        // One IPv6 host is its /64.
        let a = limiter.key(address: ClientAddress("2001:db8:1:2::1")!), b = limiter.key(address: ClientAddress("2001:db8:1:2:ffff::9")!)
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(limiter.key(credentials: "Bearer a"), limiter.key(credentials: "Bearer b"))
    }

    func testWorkThatCostsMoreRunsIntoDebtThatMustBeRepaid() {
        let t0: UInt64 = 5_000_000_000
        let limiter = ClientRateLimiter(rate: 10, burst: 20, capacity: 1024, now: t0)
        let key = limiter.key(credentials: "Bearer alice")
        XCTAssertTrue(limiter.admit(key, cost: 1, now: t0).admitted)
        limiter.charge(key, 29, now: t0)    // 20 - 30 = -10
        XCTAssertFalse(limiter.admit(key, now: t0).admitted)
        let d = limiter.admit(key, now: t0 + 1_000_000_000)   // +10 → 0: still less than a unit
        XCTAssertFalse(d.admitted)
        XCTAssertEqual(d.retryAfter, 1)
        XCTAssertTrue(limiter.admit(key, now: t0 + 1_100_000_000).admitted, "the debt repaid, one unit back")
        // Debt is bounded by the burst: a client cannot lock itself out for ever.
        limiter.charge(key, 1_000_000, now: t0 + 1_100_000_000)
        XCTAssertTrue(limiter.admit(key, now: t0 + 1_100_000_000 + 2_100_000_000).admitted, "-20 refilled to 1 in 2.1 s")
    }

    func testTheTableIsBoundedAndForgetsIdleClientsFirst() {
        let t0: UInt64 = 9_000_000_000
        let limiter = ClientRateLimiter(rate: 1, burst: 3, capacity: 1024, now: t0)
        XCTAssertEqual(limiter.capacity, 1024)
        let flooder = limiter.key(address: ClientAddress("192.0.2.99")!)
        for _ in 0..<3 { _ = limiter.admit(flooder, now: t0) }
        // A million other clients pass by once each: the table never grows; the flooder, whose bucket is empty (the
        // most spent of its set), keeps its entry most of the time — a new client takes the least spent.
        for i in 0..<1_000_000 {
            let addr = ClientAddress(high: 0, low: 0xffff_0000_0000 | UInt64(i))
            _ = limiter.admit(limiter.key(address: addr), now: t0 + 1_000_000)
        }
        XCTAssertEqual(limiter.capacity, 1024)
        XCTAssertFalse(limiter.admit(flooder, now: t0 + 2_000_000).admitted, "the spent client is still held to its budget")
        XCTAssertEqual(limiter.policyField, "\"client\";q=3;w=3")
        XCTAssertEqual(ClientRateLimiter(rate: 200, burst: 4000, name: "address").policyField, "\"address\";q=4000;w=20")
    }

    // MARK: - Over HTTP

    func start(_ configure: @escaping (inout Options) -> Void) throws -> HTTPServer {
        try startLede {
            // A slow refill (a unit every 5 s): a loaded machine's slow requests do not earn the flood a unit back.
            $0.server.clients.rate = 0.2
            $0.server.clients.burst = 10
            $0.addressRate = 0.2
            $0.addressBurst = 10
            configure(&$0)
        }
    }

    func testAFloodingUserIsRefusedWithTheDraftsFieldsWhileAnotherUserIsServed() throws {
        let server = try start { $0.addressBurst = 40 }
        defer { server.shutdown(); server.waitUntilStopped() }
        // Alice and Bob open their badges: Wikimedia accepts their tokens, and each becomes a client of their own.
        for user in ["demo-alice", "demo-bob"] {
            XCTAssertEqual(try get(server, "/notifications/badge", ["Authorization": "Bearer \(user)"]).status, 200)
        }
        var statuses: [Int] = []
        var refusal: TestHTTPResponse?
        for _ in 0..<25 {
            let r = try get(server, "/languages", ["Authorization": "Bearer demo-alice"])
            statuses.append(r.status)
            if r.status == 429 { refusal = r }
        }
        XCTAssertEqual(statuses.prefix(10).filter { $0 == 200 }.count, 10, "the burst is served")
        XCTAssertGreaterThanOrEqual(statuses.filter { $0 == 429 }.count, 10, "then the flood is refused: \(statuses)")
        let r = try XCTUnwrap(refusal)
        let problem = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any])
        XCTAssertEqual(problem["type"] as? String, "urn:lede:problem:rate-limited")
        XCTAssertEqual(r.headers["content-type"], "application/problem+json")
        XCTAssertNotNil(Int(r.headers["retry-after"] ?? ""))
        XCTAssertEqual(r.headers["ratelimit-policy"], "\"client\";q=10;w=50")
        XCTAssertTrue(r.headers["ratelimit"]?.hasPrefix("\"client\";r=0;t=") ?? false, r.headers["ratelimit"] ?? "none")
        XCTAssertEqual(r.headers["cache-control"], "no-store")
        // Bob, at a person's pace, is not touched by Alice's flood.
        for _ in 0..<5 { XCTAssertEqual(try get(server, "/languages", ["Authorization": "Bearer demo-bob"]).status, 200) }
        // The probes are never limited, and the refusals are counted.
        for _ in 0..<3 {
            XCTAssertEqual(try get(server, "/healthz", ["Authorization": "Bearer demo-alice"]).status, 200)
            XCTAssertEqual(try get(server, "/readyz", ["Authorization": "Bearer demo-alice"]).status, 200)
        }
        let metrics = String(decoding: try get(server, "/metrics", ["Authorization": "Bearer demo-alice"]).body, as: UTF8.self)
        XCTAssertTrue(metrics.contains("lede_http_rate_limited_total "), "the refusals metric")
        XCTAssertFalse(metrics.contains("lede_http_rate_limited_total 0\n"))
    }

    func testAnAnonymousFloodIsLimitedByItsAddressWhateverItSaysItForwardsFor() throws {
        let server = try start { _ in }
        defer { server.shutdown(); server.waitUntilStopped() }
        var statuses: [Int] = []
        for i in 0..<25 { statuses.append(try get(server, "/languages", ["X-Forwarded-For": "203.0.113.\(i)"]).status) }
        XCTAssertGreaterThanOrEqual(statuses.filter { $0 == 429 }.count, 10, "no --trusted-proxies: X-Forwarded-For is not believed: \(statuses)")
    }

    /// An `Authorization` that is no bearer token of valid form (another scheme, a malformed token, the field twice)
    /// is read once, as the request's credentials, and is no budget of its own: it is charged to the address.
    func testMalformedCredentialsAreChargedToTheAddress() throws {
        let server = try start { _ in }
        defer { server.shutdown(); server.waitUntilStopped() }
        var statuses: [Int] = []
        for i in 0..<25 { statuses.append(try get(server, "/languages", ["Authorization": i % 2 == 0 ? "3fa9c1\(i)" : "Basic \(i)"]).status) }
        XCTAssertGreaterThanOrEqual(statuses.filter { $0 == 429 }.count, 10, "each made-up malformed value is the address's budget: \(statuses)")
        XCTAssertEqual(Credentials.read(["Authorization": "3fa9c1"]), .invalid(.scheme))
        XCTAssertEqual(Credentials.read(["Authorization": "Bearer a b"]), .invalid(.token))
        XCTAssertEqual(Credentials.read(HTTPHeaders([("Authorization", "Bearer a"), ("Authorization", "Bearer a")])), .invalid(.repeated))
        XCTAssertEqual(Credentials.read(["Authorization": "bearer abc"]), .bearer("Bearer abc"))
        XCTAssertEqual(Credentials.read([:]), Credentials.none)
    }

    /// Every request is charged, those no route takes included (404, 405, 501); only the probes are free.
    func testRequestsNoRouteTakesAreChargedToo() throws {
        let server = try start { _ in }
        defer { server.shutdown(); server.waitUntilStopped() }
        var statuses: [Int] = []
        for i in 0..<12 { statuses.append(try get(server, "/no/such/route/\(i)").status) }
        XCTAssertEqual(statuses.prefix(10).filter { $0 == 404 }.count, 10, "the burst: \(statuses)")
        XCTAssertEqual(Array(statuses.suffix(2)), [429, 429], "past the burst, a 404 flood is refused: \(statuses)")
        XCTAssertEqual(try get(server, "/languages", method: "PUT").status, 429, "a 405 is charged")
        XCTAssertEqual(try get(server, "/languages", method: "PROPFIND").status, 429, "a 501 is charged")
        XCTAssertEqual(try get(server, "/healthz").status, 200, "the probes are free")
    }

    func testBehindATrustedProxyEachForwardedClientHasItsOwnBudget() throws {
        let server = try start { $0.server.clients.trustedProxies = [AddressBlock("127.0.0.0/8")!] }
        defer { server.shutdown(); server.waitUntilStopped() }
        // 25 clients through the proxy, one request each: all served.
        for i in 0..<25 { XCTAssertEqual(try get(server, "/languages", ["X-Forwarded-For": "203.0.113.\(i)"]).status, 200) }
        // One of them flooding through it is refused; a client spoofing the first hop is still its rightmost address.
        var statuses: [Int] = []
        for i in 0..<25 { statuses.append(try get(server, "/languages", ["X-Forwarded-For": "198.51.100.\(i), 203.0.113.200"]).status) }
        XCTAssertGreaterThanOrEqual(statuses.filter { $0 == 429 }.count, 10, "\(statuses)")
    }

    func testWorkThatReachesWikimediaCostsMoreThanAnAnswerFromMemory() throws {
        let server = try start { _ in }
        defer { server.shutdown(); server.waitUntilStopped() }
        // /summary goes off the loop (4 units): the burst of 10 holds three of them, not ten.
        var statuses: [Int] = []
        for title in ["Dog", "Cat", "Amsterdam", "Mumbai", "Copenhagen"] {
            statuses.append(try get(server, "/summary/\(title)").status)
        }
        XCTAssertEqual(statuses.filter { $0 != 429 }.count, 3, "\(statuses)")
    }

    func testZeroTurnsLimitingOff() throws {
        let server = try start { $0.server.clients.rate = 0 }
        defer { server.shutdown(); server.waitUntilStopped() }
        for _ in 0..<40 { XCTAssertEqual(try get(server, "/languages").status, 200) }
    }

    func testTheOptionsReadTheFlagsAndRefuseBadProxies() throws {
        let o = try Options.parse(["--client-rate", "0.5", "--client-burst", "30", "--trusted-proxies", "10.0.0.0/8,::1",
                                   "--address-rate", "50", "--address-burst", "900", "--max-connections-per-address", "12",
                                   "--max-bodies-per-address", "1048576"], environment: [:])
        XCTAssertEqual(o.server.clients.rate, 0.5); XCTAssertEqual(o.server.clients.burst, 30)
        XCTAssertEqual(o.server.clients.addressRate, 50); XCTAssertEqual(o.server.clients.addressBurst, 900)
        XCTAssertEqual(o.server.limits.connectionsPerAddress, 12); XCTAssertEqual(o.server.bodies.perAddress, 1 << 20)
        let defaults = try Options.parse([], environment: [:])
        XCTAssertEqual(defaults.server.clients.addressBurst, 4000, "an address is sized for many readers")
        XCTAssertEqual(defaults.server.limits.connectionsPerAddress, 1000, "a tenth of the connections")
        XCTAssertEqual(defaults.server.bodies.perAddress, 8 << 20, "an eighth of the bodies' budget")
        XCTAssertEqual(o.server.clients.trustedProxies.map(\.description), ["10.0.0.0/8", "::1/128"])
        XCTAssertEqual(try Options.parse([], environment: [:]).server.clients.rate, 20, "on by default")
        XCTAssertThrowsError(try Options.parse(["--trusted-proxies", "10.0.0.0/8,proxy.local"], environment: [:])) { e in
            XCTAssertTrue("\(e)".contains("proxy.local"), "\(e)")
        }
        XCTAssertThrowsError(try Options.parse(["--client-rate", "-1"], environment: [:]))
    }
}
