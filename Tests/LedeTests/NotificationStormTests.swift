import Foundation
import Glibc
import HTTPServer
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// A reconnect storm: a replica restarted and every device opens its bell at once. New users' first polls wait their
/// turn (beyond the upstream deadline); those that cannot start in time get a 503 with a Retry-After spread over
/// several seconds, never a 504; Echo never sees more than `--upstream-concurrency` calls at once.
final class NotificationStormTests: FakeUpstreamTestCase {
    override var loops: Int { 2 }
    override func configure(_ options: inout Options) {
        options.upstreamTimeout = 2
        options.notificationsPoll = 600   // one round per user in the test's time
        options.upstreamGuard.maxConcurrent = 16
        options.server.limits.maxConnectionsPerAddress = 10_000   // 2,000 phones, and the test's loopback is one address
        // Short enough that some of the storm is refused and retried; STORM_FIRST_POLL_WAIT runs the same storm at
        // another wait (the default, 10, for BENCHMARKS.md: then nobody is refused).
        options.firstPollWait = ProcessInfo.processInfo.environment["STORM_FIRST_POLL_WAIT"].flatMap(Double.init) ?? 1.5
        options.server.streams.heartbeat = 30
    }

    /// How one stream's opening went.
    enum Opening: Equatable {
        case badge
        case busy(retryAfter: Int)
        case other(String)
    }

    /// Opens one bell per token at once and reads each until its first badge, its refusal, or `limit` seconds.
    func openAll(_ tokens: [String], limit: Double = 30) throws -> (outcomes: [Opening], clients: [RawClient]) {
        var clients: [RawClient] = []
        for token in tokens {
            let c = try RawClient(port: server.port, timeout: 5)
            c.send("GET /notifications/stream HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n\r\n")
            clients.append(c)
        }
        var texts = [String](repeating: "", count: clients.count)
        var outcomes = [Opening?](repeating: nil, count: clients.count)
        let end = Date().addingTimeInterval(limit)
        var chunk = [UInt8](repeating: 0, count: 16384)
        while outcomes.contains(nil), Date() < end {
            let open = outcomes.indices.filter { outcomes[$0] == nil }
            var fds = open.map { pollfd(fd: clients[$0].fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), 200) >= 0 else { continue }
            for (k, i) in open.enumerated() where fds[k].revents != 0 {
                let n = chunk.withUnsafeMutableBytes { recv(clients[i].fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n <= 0 { outcomes[i] = .other("closed: " + texts[i]); continue }
                texts[i] += String(decoding: chunk[0..<n], as: UTF8.self)
                let text = texts[i]
                guard let headEnd = text.range(of: "\r\n\r\n") else { continue }
                let head = text[..<headEnd.lowerBound]
                if head.hasPrefix("HTTP/1.1 200") {
                    if text.contains("event: badge") { outcomes[i] = .badge }
                } else if head.hasPrefix("HTTP/1.1 503"),
                          let line = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("retry-after:") }),
                          let seconds = Int(line.dropFirst("retry-after:".count).trimmingCharacters(in: .whitespaces)) {
                    outcomes[i] = .busy(retryAfter: seconds)
                } else {
                    outcomes[i] = .other(String(head.prefix(40)))
                }
            }
        }
        return (outcomes.map { $0 ?? .other("no answer in \(limit) s") }, clients)
    }

    /// 2,000 streams of 500 users (4 devices each) opened together, Echo answering in 100 ms, 16 calls at most in
    /// flight: no 5xx but spread 503s, every admitted stream has its badge, every user polled once, and every refused
    /// client that comes back after its Retry-After gets in (at once as a rule; on a loaded machine a few after being
    /// told once more).
    func testAReconnectStormIsAdmittedOrToldWhenToComeBackNever504() throws {
        fake.set("notifications", .slowBody(0.1, NotificationStreamTests.echo([7001, 7002])))
        let tokens = (0..<2_000).map { "storm-user-\($0 % 500)" }
        let started = Date()
        let (first, firstClients) = try openAll(tokens)
        var refused: [(token: String, after: Int)] = []
        for (i, outcome) in first.enumerated() {
            switch outcome {
            case .badge: break
            case .busy(let after): refused.append((tokens[i], after))
            case .other(let what): XCTFail("stream \(i): \(what)")
            }
        }
        let admitted = first.filter { $0 == .badge }.count
        XCTAssertGreaterThan(admitted, 0)
        let waits = Set(refused.map(\.after))
        if app.notifications.settings.firstPollWait < 2 {
            XCTAssertGreaterThan(refused.count, 0, "the test's first-poll wait is short enough to refuse some")
            XCTAssertGreaterThan(waits.count, 3, "Retry-After is spread, not one second for all")
        }
        XCTAssertTrue(waits.allSatisfy { (2...12).contains($0) })

        // The refused come back when told, each at its own second. On a loaded machine a few may be told once more to come
        // back later (a 503 with its Retry-After, never anything else); coming back then, every one gets in.
        var retried: [RawClient] = []
        var again: [(token: String, after: Int)] = []
        for after in waits.sorted() {
            let due = started.addingTimeInterval(Double(after) + 1.5)
            if due > Date() { Thread.sleep(until: due) }
            let batch = refused.filter { $0.after == after }.map(\.token)
            let (outcomes, clients) = try openAll(batch, limit: 15)
            retried += clients
            for (i, outcome) in outcomes.enumerated() {
                switch outcome {
                case .badge: break
                case .busy(let later): again.append((batch[i], later))
                case .other(let what): XCTFail("a client that came back after its Retry-After got \(what)")
                }
            }
        }
        let secondRound = again.count
        if !again.isEmpty {
            let now = Date()
            Thread.sleep(until: now.addingTimeInterval(Double(again.map(\.after).max() ?? 0) + 1.5))
            let (outcomes, clients) = try openAll(again.map(\.token), limit: 15)
            retried += clients
            XCTAssertEqual(outcomes.filter { $0 != .badge }, [], "a client that came back twice when told was refused a third time")
        }
        XCTAssertLessThan(secondRound, max(1, refused.count / 10), "most clients that come back when told get in at once")
        let elapsed = Date().timeIntervalSince(started)
        let polls = fake.requests(kind: "notifications").count
        XCTAssertEqual(polls, 500, "every user polled once")
        XCTAssertLessThanOrEqual(fake.maxInFlight, 16, "Echo never saw more than the upstream concurrency")
        print("storm: \(admitted) admitted at once, \(refused.count) refused (Retry-After \(waits.sorted())), \(secondRound) told to come back once more, all in; " +
              "\(polls) Echo calls, at most \(fake.maxInFlight) in flight; last badge after \(String(format: "%.1f", elapsed)) s")
        withExtendedLifetime((firstClients, retried)) {}
    }

    /// The queue of first polls by itself: in order, at most `capacity` at once, a waiter whose time runs out leaves
    /// unadmitted, and a turn given back goes to the longest waiter.
    func testFirstPollsWaitTheirTurnInOrderAndGiveUpAfterTheirWait() async throws {
        let gate = FirstPollAdmission(capacity: 2, maxWait: 0.3)
        let a = await gate.enter(), b = await gate.enter()
        XCTAssertTrue(a && b)
        async let c = gate.enter()
        try await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertEqual(gate.counts.waiting, 1)
        gate.leave()
        let admittedC = await c
        XCTAssertTrue(admittedC, "a freed turn goes to the waiter")
        let late = await gate.enter()   // both turns held: waits 0.3 s, then gives up
        XCTAssertFalse(late)
        XCTAssertEqual(gate.counts.running, 2)
        XCTAssertEqual(gate.counts.waiting, 0)
    }
}
