import Foundation
import HTTPServer
import TestSupport
import XCTest
@testable import Lede

/// A budget belongs to an identity Wikimedia has accepted: a made-up token is no budget of its own (it is charged to
/// its address, and reaches Wikimedia no more often than that budget allows); a reader whose token Wikimedia accepted —
/// on a route that sends it on, or in one `meta=userinfo` check charged to the address — keeps their own budget behind
/// an address others have spent.
final class VerifiedIdentityTests: FakeUpstreamTestCase {
    override func configure(_ options: inout Options) {
        super.configure(&options)
        // A slow refill (a unit every 5 s): a loaded machine's slow requests do not earn a flood a unit back.
        options.server.clients.rate = 0.2
        options.server.clients.burst = 10
        options.addressRate = 0.2
        options.addressBurst = 40
    }

    func status(_ path: String, _ token: String?) throws -> Int {
        try get(server, path, token.map { ["Authorization": "Bearer \($0)"] } ?? [:]).status
    }

    /// Waits (bounded) until `condition` holds.
    func eventually(_ what: String, _ condition: () -> Bool) {
        for _ in 0..<200 where !condition() { usleep(10_000) }
        XCTAssertTrue(condition(), what)
    }

    func testMadeUpTokensOnAnAccountRouteAreChargedToTheAddressAndReachWikimediaOnlyAsItsBudgetAllows() throws {
        var statuses: [Int] = []
        for i in 0..<60 { statuses.append(try status("/notifications/badge", "made-up-\(i)")) }
        // Each badge costs the address 4 units of its 40: ten reach Echo (each refused: 401), the rest are 429.
        let echoCalls = fake.requests(kind: "notifications").count
        XCTAssertLessThanOrEqual(echoCalls, 11, "made-up tokens reach Wikimedia only as the address's budget allows: \(statuses)")
        XCTAssertEqual(statuses.filter { $0 == 401 }.count, echoCalls)
        XCTAssertGreaterThanOrEqual(statuses.filter { $0 == 429 }.count, 49, "\(statuses)")
        XCTAssertEqual(try get(server, "/languages").status, 429, "the address has spent its budget: an anonymous request is refused too")
    }

    func testMadeUpTokensOnOtherRoutesAreCheckedOnceEachAndChargedToTheAddress() throws {
        var statuses: [Int] = []
        for i in 0..<30 { statuses.append(try status("/languages", "invented-\(i)")) }
        // Each new token costs its admission (1) and its check (4): 40 units hold eight, not thirty.
        XCTAssertEqual(statuses.prefix(8).filter { $0 == 200 }.count, 8, "\(statuses)")
        XCTAssertGreaterThanOrEqual(statuses.filter { $0 == 429 }.count, 21, "\(statuses)")
        eventually("the checks answered") { fake.requests(kind: "userinfo").count == 8 }
        XCTAssertEqual(fake.requests(kind: "userinfo").count, 8, "one check per admitted token, none for a refused request")
        // The token each check carried is the one the request sent; no token reached Wikimedia twice.
        let checked = fake.requests(kind: "userinfo").compactMap { $0.headers["Authorization"] }
        XCTAssertEqual(Set(checked).count, 8)
    }

    func testARefusedTokenIsRememberedAndNotCheckedAgain() throws {
        XCTAssertEqual(try status("/languages", "nobody"), 200)
        eventually("the check answered") { fake.requests(kind: "userinfo").count == 1 }
        usleep(50_000)
        XCTAssertEqual(try status("/languages", "nobody"), 200)
        XCTAssertEqual(try status("/languages", "nobody"), 200)
        usleep(50_000)
        XCTAssertEqual(fake.requests(kind: "userinfo").count, 1, "refused once, remembered as refused")
    }

    func testAReaderWikimediaAcceptedKeepsTheirOwnBudgetBehindAnAddressOthersSpent() throws {
        // Alice opens her badge: Echo answers with her count, so her token is accepted (no check needed).
        XCTAssertEqual(try status("/notifications/badge", "demo-alice"), 200)
        // Bob reads a summary: his token is checked once (meta=userinfo) and accepted.
        XCTAssertEqual(try status("/summary/Copenhagen", "demo-bob"), 200)
        eventually("Bob's token checked") { fake.requests(kind: "userinfo").count == 1 }
        usleep(50_000)
        // Someone at the same address spends its budget with made-up tokens.
        var flood: [Int] = []
        for i in 0..<30 { flood.append(try status("/languages", "spoof-\(i)")) }
        XCTAssertEqual(flood.last, 429, "\(flood)")
        XCTAssertEqual(try status("/languages", nil), 429, "the address is spent")
        // Alice and Bob are still served, from their own budgets.
        XCTAssertEqual(try status("/languages", "demo-alice"), 200)
        XCTAssertEqual(try status("/summary/Madrid", "demo-bob"), 200)
        let bobChecks = fake.requests(kind: "userinfo").filter { $0.headers["Authorization"] == "Bearer demo-bob" }.count
        XCTAssertEqual(bobChecks, 1, "an accepted token is not checked again")
        // Past their own burst, each is refused with the client's policy, not the address's.
        var alice: [Int] = []
        for _ in 0..<12 { alice.append(try status("/languages", "demo-alice")) }
        XCTAssertEqual(alice.last, 429, "\(alice)")
        let refusal = try get(server, "/languages", ["Authorization": "Bearer demo-alice"])
        XCTAssertEqual(refusal.headers["ratelimit-policy"], "\"client\";q=10;w=50")
        let spent = try get(server, "/languages")
        XCTAssertEqual(spent.headers["ratelimit-policy"], "\"address\";q=40;w=200")
    }
}

/// The memory of tokens (pure): bounded, and what Wikimedia accepted is not pushed out by what nobody vouched for.
final class CredentialMemoryTests: XCTestCase {
    func testStatesExpireAndAcceptedTokensOutliveAFloodOfUnprovenOnes() {
        let t0: UInt64 = 1_000_000_000
        let memory = CredentialMemory(capacity: 4096, remember: 60, forgetRefused: 10, checkTimeout: 5, now: t0)
        XCTAssertEqual(memory.capacity, 4096)
        let accepted = (1...64).map { UInt64($0) &* 0x1234_5678_9ABC_DEF1 }
        for k in accepted { memory.record(k, accepted: true, now: t0) }
        // Twenty thousand made-up tokens each begin a check: none pushes out an accepted token.
        for i in 0..<20_000 { _ = memory.beginCheck(UInt64(i + 1) &* 0x9E37_79B9_7F4A_7C15 | 1, now: t0 + 1_000_000) }
        let kept = accepted.filter { memory.state($0, now: t0 + 2_000_000) == .accepted }.count
        XCTAssertEqual(kept, 64, "accepted tokens are evicted only by accepted tokens")
        // A check is begun once, a refusal remembered for its time, an acceptance for its.
        let k: UInt64 = 0xDEAD_BEEF
        XCTAssertTrue(memory.beginCheck(k, now: t0))
        XCTAssertFalse(memory.beginCheck(k, now: t0 + 1_000_000), "one check at a time")
        XCTAssertTrue(memory.beginCheck(k, now: t0 + 6_000_000_000), "a check unanswered past its timeout may begin again")
        memory.record(k, accepted: false, now: t0 + 6_000_000_000)
        XCTAssertEqual(memory.state(k, now: t0 + 7_000_000_000), .refused)
        XCTAssertEqual(memory.state(k, now: t0 + 17_000_000_000), .unknown, "forgotten after forgetRefused")
        memory.record(k, accepted: nil, now: t0)
        XCTAssertEqual(memory.state(k, now: t0), .unknown, "no answer: nothing remembered")
        XCTAssertEqual(memory.state(accepted[0], now: t0 + 61_000_000_000), .unknown, "remembered for `remember` seconds")
    }
}
