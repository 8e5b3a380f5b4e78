import AllocationCounter
import Foundation
import Glibc
import HTTPServer
import TestSupport
import Synchronization
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// Seed 002, the bell and "toast behavior for when user is in article": `GET /notifications/stream` against a fake
/// Echo to which the test adds notifications, polled every 0.2 s.
final class NotificationStreamTests: FakeUpstreamTestCase {
    override var loops: Int { 2 }
    override func configure(_ options: inout Options) {
        options.upstreamTimeout = 1
        options.notificationsPoll = 0.2
        options.server.streams.heartbeat = 30
    }

    /// Echo's answer (`meta=notifications`, unread) holding these unread notification ids.
    static func echo(_ ids: [Int]) -> String {
        let list = ids.sorted(by: >).map { id in
            "{\"wiki\":\"enwiki\",\"id\":\(id),\"type\":\"edit-user-talk\",\"category\":\"edit-user-talk\",\"timestamp\":{\"utciso8601\":\"2026-11-20T10:00:00Z\",\"utcunix\":1763632800},"
                + "\"title\":{\"full\":\"User talk:Alice\"},\"agent\":{\"id\":2,\"name\":\"Bob\"},\"*\":{\"header\":\"Bob left you a message (\(id)).\"}}"
        }
        return "{\"batchcomplete\":true,\"query\":{\"notifications\":{\"count\":\"\(ids.count)\",\"list\":[\(list.joined(separator: ","))],\"rawcount\":\(ids.count)}}}"
    }

    func setUnread(_ ids: [Int]) { fake.set("notifications", .body(Self.echo(ids))) }

    /// Reads whole events (until a blank line) from a chunked event stream; nil when it ends.
    final class Events {
        let client: RawClient
        var buffer = ""
        init(_ client: RawClient) { self.client = client }
        func next() -> (event: String?, id: String?, data: String)? {
            while true {
                if let r = buffer.range(of: "\n\n") {
                    let block = String(buffer[..<r.lowerBound])
                    buffer.removeSubrange(..<r.upperBound)
                    var event: String?, id: String?, data: [String] = []
                    for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                        if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
                        else if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
                        else if line.hasPrefix("data: ") { data.append(String(line.dropFirst(6))) }
                    }
                    if event == nil && data.isEmpty { continue }   // retry hints, heartbeats
                    return (event, id, data.joined(separator: "\n"))
                }
                guard let chunk = client.readChunk(), !chunk.isEmpty else { return nil }
                buffer += String(decoding: chunk, as: UTF8.self)
            }
        }
    }

    func open(_ token: String = "demo-alice", lastEventID: String? = nil) throws -> (TestResponse, Events) {
        let c = try RawClient(port: server.port, timeout: 5)
        c.send("GET /notifications/stream HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n\(lastEventID.map { "Last-Event-ID: \($0)\r\n" } ?? "")\r\n")
        return (try XCTUnwrap(c.readHead()), Events(c))
    }

    func json(_ text: String) -> [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }

    func testTheBadgeComesAtOnceThenEachNewNotificationAndTheNewBadge() throws {
        setUnread([101, 102])
        let t0 = Date()
        let (head, events) = try open()
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Type"), "text/event-stream; charset=utf-8")
        XCTAssertEqual(head.header("Cache-Control"), "no-store")
        let first = try XCTUnwrap(events.next())
        XCTAssertLessThan(Date().timeIntervalSince(t0), 0.5)
        XCTAssertEqual(first.event, "badge")
        XCTAssertEqual(first.id, "102", "the id is the newest notification seen")
        XCTAssertEqual(json(first.data)["unreadCount"] as? Int, 2)
        setUnread([101, 102, 103])
        let t1 = Date()
        let note = try XCTUnwrap(events.next())
        XCTAssertEqual(note.event, "notification")
        XCTAssertEqual(note.id, "103")
        XCTAssertEqual(json(note.data)["id"] as? Int, 103)
        XCTAssertEqual(json(note.data)["filter"] as? String, "userTalkPageMessage")
        XCTAssertLessThan(Date().timeIntervalSince(t1), 0.6, "within one poll")
        let badge = try XCTUnwrap(events.next())
        XCTAssertEqual(badge.event, "badge")
        XCTAssertEqual(json(badge.data)["unreadCount"] as? Int, 3)
    }

    func testAMarkReadOnThisReplicaPushesTheNewBadgeAtOnce() throws {
        setUnread([5, 6])
        let (_, events) = try open()
        XCTAssertEqual(events.next()?.event, "badge")
        setUnread([6])   // what Echo says once 5 is read
        let body = "{\"ids\":[5]}"
        let posted = try TestHTTPResponse(port: server.port, request: "POST /notifications/read HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer demo-alice\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        XCTAssertEqual(posted.status, 200)
        let t0 = Date()
        let badge = try XCTUnwrap(events.next())
        XCTAssertEqual(badge.event, "badge")
        XCTAssertEqual(json(badge.data)["unreadCount"] as? Int, 1)
        XCTAssertLessThan(Date().timeIntervalSince(t0), 0.1, "pushed, not polled")
    }

    func testStreamsOfOneUserShareOnePollPerRound() throws {
        setUnread([7])
        let a = try open(), b = try open(), c = try open(), d = try open()
        for s in [a, b, c, d] { XCTAssertEqual(s.1.next()?.event, "badge") }
        let before = fake.requests(kind: "notifications").count
        XCTAssertLessThanOrEqual(before, 2, "four streams opened together cost about one Echo call, not four")
        usleep(1_050_000)
        let rounds = fake.requests(kind: "notifications").count - before
        XCTAssertGreaterThanOrEqual(rounds, 3)
        XCTAssertLessThanOrEqual(rounds, 7, "one call per 0.2 s poll for the user, whatever the number of streams: \(rounds)")
        XCTAssertEqual(app.notifications.polledUsers, 1)
    }

    func testReconnectingWithLastEventIDDeliversExactlyWhatWasMissed() throws {
        setUnread([201, 202, 203, 204])
        let (_, events) = try open(lastEventID: "202")
        XCTAssertEqual(events.next().map { [$0.event ?? "", $0.id ?? ""] }, ["notification", "203"])
        XCTAssertEqual(events.next().map { [$0.event ?? "", $0.id ?? ""] }, ["notification", "204"])
        XCTAssertEqual(events.next().map { [$0.event ?? "", $0.id ?? ""] }, ["badge", "204"])
    }

    func testAMalformedLastEventIDIsA400ProblemNotAStream() throws {
        for bad in ["]z", "-1", "1.5", "12345678901234567890", "abc"] {
            let (head, _) = try open(lastEventID: bad)
            XCTAssertEqual(head.status, 400, bad)
            XCTAssertEqual(head.header("Content-Type"), "application/problem+json", bad)
        }
        let (ok, events) = try open(lastEventID: " 0 ")
        XCTAssertEqual(ok.status, 200)
        XCTAssertNotNil(events.next())
    }

    func testAMissingOrRefusedTokenIsA401ProblemNotAStream() throws {
        let c = try RawClient(port: server.port)
        c.send("GET /notifications/stream HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.status, 401)
        fake.set("notifications", .body("{\"error\":{\"code\":\"mwoauth-invalid-authorization\",\"info\":\"The authorization headers in your request are not valid.\"}}"))
        let (head, _) = try open("revoked")
        XCTAssertEqual(head.status, 401)
        XCTAssertEqual(head.header("Content-Type"), "application/problem+json")
    }

    func testATokenRefusedLaterEndsTheStreamWithAnErrorEvent() throws {
        setUnread([1])
        let (_, events) = try open()
        XCTAssertEqual(events.next()?.event, "badge")
        fake.set("notifications", .body("{\"error\":{\"code\":\"mwoauth-invalid-authorization\",\"info\":\"revoked\"}}"))
        let error = try XCTUnwrap(events.next())
        XCTAssertEqual(error.event, "error")
        XCTAssertEqual(json(error.data)["status"] as? Int, 401)
        XCTAssertNil(events.next(), "the stream ended")
        let deadline = Date().addingTimeInterval(1)
        while app.notifications.polledUsers > 0 && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(app.notifications.polledUsers, 0, "the token is forgotten with the last stream")
    }

    func testRetryAfterPausesPollingWhileTheStreamStaysOpen() throws {
        setUnread([1])
        let (_, events) = try open()
        XCTAssertEqual(events.next()?.event, "badge")
        fake.set("notifications", .answer(429, ["Retry-After": "2"], "{}"))
        usleep(500_000)
        let during = fake.requests(kind: "notifications").count
        usleep(1_000_000)
        XCTAssertEqual(fake.requests(kind: "notifications").count, during, "no call while Wikimedia asked Lede to wait")
        setUnread([1, 2])
        let note = try XCTUnwrap(events.next())
        XCTAssertEqual(note.event, "notification", "polling resumed after the wait; the stream stayed open")
    }

    func testClosingTheLastStreamStopsThePolling() throws {
        setUnread([1])
        do {
            let (_, events) = try open()
            XCTAssertEqual(events.next()?.event, "badge")
        }
        let deadline = Date().addingTimeInterval(1)
        while app.notifications.polledUsers > 0 && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(app.notifications.polledUsers, 0)
        let after = fake.requests(kind: "notifications").count
        usleep(600_000)
        XCTAssertEqual(fake.requests(kind: "notifications").count, after)
    }

    /// Bytes the allocator has handed out and not had back, over every arena.
    static func heapInUse() -> Int { Int(lede_heap_in_use()) }

    /// What an open bell stream holds on the heap, the allocator's bytes in use before and after 400 streams of 100
    /// users open (each with its first badge): a ceiling, as the allocation ceilings are. The test's own clients (a
    /// `RawClient` and its reader a stream) are counted too, and this is a debug build. With a task and an AsyncStream
    /// a stream (636b603): 10,956 to 11,104 bytes; pushed into its channel, no task: 4,737 to 4,787; the parser's and
    /// the output's idle buffers let go while the stream lasts: 4,458 to 4,462. The ceiling is that plus a quarter: a
    /// task per stream again fails here.
    func testAnOpenBellStreamHoldsItsCeilingOfHeapAtMost() throws {
        setUnread([1])
        do { let (_, warm) = try open("user-warm"); XCTAssertEqual(warm.next()?.event, "badge") }
        usleep(300_000)
        let before = Self.heapInUse()
        var streams: [(TestResponse, Events)] = []
        for i in 0..<400 { streams.append(try open("user-\(i % 100)")) }
        for s in streams {
            XCTAssertEqual(s.0.status, 200)
            XCTAssertEqual(s.1.next()?.event, "badge")
        }
        let per = Double(Self.heapInUse() - before) / 400
        print("heap per open bell stream: \(Int(per)) bytes")
        XCTAssertGreaterThan(per, 200, "the streams were measured")
        XCTAssertLessThanOrEqual(per, Self.bytesPerStreamCeiling)
        withExtendedLifetime(streams) {}
    }

    static let bytesPerStreamCeiling = 5_000.0   // 3,975 measured with one poll clock (4,460 with a polling task per user)

    func open(_ token: String = "demo-alice", uselang: String) throws -> (TestResponse, Events) {
        let c = try RawClient(port: server.port, timeout: 5)
        c.send("GET /notifications/stream?uselang=\(uselang) HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\n\r\n")
        return (try XCTUnwrap(c.readHead()), Events(c))
    }

    /// Echo writes each notification's header in the poll's `uselang`: a German reader's bell polls in German, a French
    /// reader's in French, and one account's streams share one quota and one mark-read whatever their languages.
    func testEachStreamIsPolledInItsReadersLanguageUnderOneQuota() throws {
        setUnread([11])
        let german = try open(uselang: "de"), french = try open(uselang: "fr")
        XCTAssertEqual(german.1.next()?.event, "badge")
        XCTAssertEqual(french.1.next()?.event, "badge")
        let queries = fake.requests(kind: "notifications").map { $0.query ?? "" }
        XCTAssertTrue(queries.contains { $0.contains("uselang=de") }, "\(queries)")
        XCTAssertTrue(queries.contains { $0.contains("uselang=fr") }, "\(queries)")
        XCTAssertEqual(app.notifications.polledUsers, 2, "one poll per language the user reads in")
        // Eight streams in all for the account, whatever their languages.
        var more: [(TestResponse, Events)] = []
        for i in 0..<6 { more.append(try open(uselang: i % 2 == 0 ? "ja" : "de")) }
        for s in more { XCTAssertEqual(s.0.status, 200) }
        let ninth = try open(uselang: "it")
        XCTAssertEqual(ninth.0.status, 429, "the account's ninth stream, in a language of its own, is over the quota")
        // A mark-read reaches every language's streams at once.
        for s in more { XCTAssertEqual(s.1.next()?.event, "badge") }
        setUnread([])
        let body = "{\"ids\":[11]}"
        let posted = try TestHTTPResponse(port: server.port, request: "POST /notifications/read HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer demo-alice\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        XCTAssertEqual(posted.status, 200)
        for s in [german, french] {
            let badge = try XCTUnwrap(s.1.next())
            XCTAssertEqual(badge.event, "badge")
            XCTAssertEqual(json(badge.data)["unreadCount"] as? Int, 0)
        }
    }
}

extension NotificationStreamTests {
    /// A client that loses its replica reconnects to another with the id of the last event it had: it gets exactly
    /// the notifications it missed, none twice — the ids are Wikimedia's, not a process's.
    func testResumingOnAnotherServerProcessDeliversExactlyTheMissedOnes() throws {
        setUnread([301, 302])
        let (_, events) = try open()
        let badge = try XCTUnwrap(events.next())
        XCTAssertEqual(badge.id, "302")
        events.client.abortiveClose()
        setUnread([301, 302, 303, 304])   // created while the client was away
        let (other, otherServer) = try startLedeApp(loops: 1) { [fake] in
            $0.upstream = fake!.template
            $0.notificationsPoll = 0.2
        }
        defer { otherServer.shutdown(); otherServer.waitUntilStopped() }
        _ = other
        let c = try RawClient(port: otherServer.port, timeout: 5)
        c.send("GET /notifications/stream HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer demo-alice\r\nLast-Event-ID: \(badge.id!)\r\n\r\n")
        XCTAssertEqual(c.readHead()?.status, 200)
        let resumed = Events(c)
        XCTAssertEqual(resumed.next().map { [$0.event ?? "", $0.id ?? ""] }, ["notification", "303"])
        XCTAssertEqual(resumed.next().map { [$0.event ?? "", $0.id ?? ""] }, ["notification", "304"])
        XCTAssertEqual(resumed.next().map { [$0.event ?? "", $0.id ?? ""] }, ["badge", "304"])
        setUnread([301, 302, 303, 304, 305])
        XCTAssertEqual(resumed.next().map { [$0.event ?? "", $0.id ?? ""] }, ["notification", "305"], "and then new ones, each once")
    }

    /// SIGTERM (the server's drain): every live bell gets a retry hint and its end, so its client reconnects elsewhere.
    func testTheDrainEndsEveryStreamWithARetryHint() throws {
        setUnread([9])
        let streams = try (0..<3).map { _ in try open() }
        for s in streams { XCTAssertEqual(s.1.next()?.event, "badge") }
        DispatchQueue.global().async { [server] in server!.shutdown() }
        for s in streams {
            var rest = s.1.buffer
            while let chunk = s.1.client.readChunk(), !chunk.isEmpty { rest += String(decoding: chunk, as: UTF8.self) }
            XCTAssertTrue(rest.contains("retry: "), rest)
        }
        server.waitUntilStopped()
        XCTAssertEqual(app.notifications.polledUsers, 0, "every stream's subscription was let go")
    }
}

final class NotificationHubTests: XCTestCase {
    /// Two tokens whose keyed hashes collided would still never share a poll (nor see each other's notifications).
    func testTokensThatShareAHashGetTheirOwnPolls() throws {
        let lang = try XCTUnwrap(LanguageCode("en"))
        var users: [Int: NotificationHub.UserPoll] = [:]
        users[41] = NotificationHub.UserPoll(token: "alice", lang: lang, uselang: nil, account: 1, key: 41)
        XCTAssertEqual(NotificationHub.slot(in: users, 41, token: "alice", uselang: nil), 41)
        XCTAssertEqual(NotificationHub.slot(in: users, 41, token: "mallory", uselang: nil), 42)
        XCTAssertEqual(NotificationHub.slot(in: users, 41, token: "alice", uselang: "de"), 42, "alice in German is a poll of its own")
        users[42] = NotificationHub.UserPoll(token: "mallory", lang: lang, uselang: nil, account: 2, key: 42)
        XCTAssertEqual(NotificationHub.slot(in: users, 41, token: "mallory", uselang: nil), 42)
        XCTAssertNotEqual(NotificationHub.key(token: "alice", lang: lang), NotificationHub.key(token: "alice ", lang: lang))
        XCTAssertNotEqual(NotificationHub.key(token: "alice", lang: lang, uselang: "de"), NotificationHub.key(token: "alice", lang: lang))
    }
}

/// The one timer behind every user's next poll round.
final class PollClockTests: XCTestCase {
    final class Target: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    /// Fired targets in order, as the clock's queue calls them.
    final class Fired: Sendable {
        private let names = Mutex<[String]>([])
        func append(_ name: String) { names.withLock { $0.append(name) } }
        func withLock<R>(_ body: ([String]) -> R) -> R { names.withLock { body($0) } }
    }

    private func recorder() -> (PollClock<Target>, Fired, XCTestExpectation) {
        let fired = Fired()
        let expectation = XCTestExpectation(description: "fired")
        expectation.assertForOverFulfill = false
        return (PollClock<Target> { t in fired.append(t.name); expectation.fulfill() }, fired, expectation)
    }

    /// Due times fire earliest first, whatever order they were put on the clock in — an entry earlier than the one
    /// the timer is armed for re-arms it.
    func testTargetsFireEarliestFirst() {
        let (clock, fired, _) = recorder()
        let late = Target("late"), early = Target("early"), middle = Target("middle")
        clock.schedule(late, after: 0.30)
        clock.schedule(middle, after: 0.15)
        clock.schedule(early, after: 0.02)
        let deadline = Date().addingTimeInterval(5)
        while fired.withLock({ $0.count }) < 3, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(fired.withLock { $0 }, ["early", "middle", "late"])
        XCTAssertEqual(clock.pending, 0)
        withExtendedLifetime((late, early, middle)) {}
    }

    /// The clock holds its targets weakly: a user let go before its round is due is not kept alive (nor its token),
    /// and its entry is dropped without a call.
    func testALetGoTargetIsDroppedNotFired() {
        let (clock, fired, expectation) = recorder()
        weak var gone: Target?
        do {
            let target = Target("gone")
            gone = target
            clock.schedule(target, after: 0.05)
        }
        XCTAssertNil(gone, "the clock keeps no strong reference")
        let kept = Target("kept")
        clock.schedule(kept, after: 0.1)
        wait(for: [expectation], timeout: 5)
        XCTAssertEqual(fired.withLock { $0 }, ["kept"])
        withExtendedLifetime(kept) {}
    }

    /// Many users' rounds on one clock: each fires once.
    func testManyTargetsEachFireOnce() {
        let (clock, fired, _) = recorder()
        let targets = (0..<500).map { Target("t\($0)") }
        for (i, t) in targets.enumerated() { clock.schedule(t, after: 0.01 + Double(i % 50) / 1000) }
        let deadline = Date().addingTimeInterval(5)
        while fired.withLock({ $0.count }) < 500, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(Set(fired.withLock { $0 }), Set(targets.map(\.name)))
        XCTAssertEqual(fired.withLock { $0.count }, 500)
    }

}
