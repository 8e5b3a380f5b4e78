import Dispatch
import Foundation
import HTTPServer
import Synchronization
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import Upstream

/// The badge's call through a callback (no task when the live transport can start it) is the same call as the async
/// one: the same answers and errors, the same metrics, the same requests upstream — over the fast path, over the
/// fallbacks (a redirect to follow, a slot to queue for, a transport that cannot start calls) and on failure.
final class BadgeCallbackTests: XCTestCase {
    var fake: FakeUpstream!
    override func setUpWithError() throws { fake = try FakeUpstream() }
    override func tearDown() { fake.stop() }

    func client(live: Bool = true, maxConcurrent: Int = 16, deadline: Double = 2) -> WikimediaClient {
        let transport: UpstreamTransport = live ? try! LiveTransport(template: fake.template, contact: "qa@lede.test") : EmbeddedTransport()
        return WikimediaClient(transport: transport, guards: UpstreamGuard(settings: .init(failureThreshold: 3, coolDown: 10, maxConcurrent: maxConcurrent)),
                               deadline: deadline)
    }

    /// The count or the error, as a comparable string.
    static func outcome(_ r: Result<Int, any Error>) -> String {
        switch r {
        case .success(let n): return "count \(n)"
        case .failure(let e): return (e as? UpstreamError).map { "\($0)" } ?? "other \(e)"
        }
    }

    /// Whether the last `viaCallback` was answered inside a task (a fallback) rather than by the transport's callback.
    var answeredInTask: Bool?

    func viaCallback(_ c: WikimediaClient, _ auth: String = "Bearer demo-alice") -> Result<Int, any Error> {
        let got = Mutex<Result<Int, any Error>?>(nil)
        let inTask = Mutex<Bool?>(nil)
        let calls = Atomic(0)
        let done = DispatchSemaphore(value: 0)
        c.unreadCount(lang: .english, authorization: auth) { r in
            calls.add(1, ordering: .relaxed)
            inTask.withLock { $0 = withUnsafeCurrentTask { $0 != nil } }
            got.withLock { $0 = r }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        usleep(20_000)
        XCTAssertEqual(calls.load(ordering: .relaxed), 1, "answered exactly once")
        answeredInTask = inTask.withLock { $0 }
        return got.withLock { $0 } ?? .failure(UpstreamError.timeout)
    }

    func viaAsync(_ c: WikimediaClient, _ auth: String = "Bearer demo-alice") async -> Result<Int, any Error> {
        do { return .success(try await c.unreadCount(lang: .english, authorization: auth)) } catch { return .failure(error) }
    }

    func assertSame(_ behaviour: FakeUpstream.Behaviour?, expect: String, file: StaticString = #filePath, line: UInt = #line) async {
        if let behaviour { fake.set("notifications", behaviour) }
        let a = client(), b = client()
        let before = fake.requests(kind: "notifications").count
        let asyncResult = Self.outcome(await viaAsync(a))
        let asyncCalls = fake.requests(kind: "notifications").count - before
        let callbackResult = Self.outcome(viaCallback(b))
        let callbackCalls = fake.requests(kind: "notifications").count - before - asyncCalls
        XCTAssertEqual(callbackResult, asyncResult, file: file, line: line)
        XCTAssertTrue(asyncResult.hasPrefix(expect), asyncResult, file: file, line: line)
        XCTAssertEqual(callbackCalls, asyncCalls, "the same calls upstream", file: file, line: line)
        XCTAssertEqual(b.metrics.render(cache: b.cache.snapshot).filter { !$0.isNumber }, a.metrics.render(cache: a.cache.snapshot).filter { !$0.isNumber },
                       "the same metrics families and labels", file: file, line: line)
        for o in ["ok", "unavailable", "not_authorised", "rate_limited", "timeout", "malformed", "not_found"] {
            XCTAssertEqual(b.metrics.count(kind: "notifications", outcome: o), a.metrics.count(kind: "notifications", outcome: o), o, file: file, line: line)
        }
        XCTAssertEqual(a.guards.inFlight(origin: a.origin(lang: "en")), 0, file: file, line: line)
        XCTAssertEqual(b.guards.inFlight(origin: b.origin(lang: "en")), 0, "the slot was given back", file: file, line: line)
    }

    func testTheBadgeCountIsTheSameThroughTheCallback() async throws {
        await assertSame(nil, expect: "count ")
        XCTAssertEqual(answeredInTask, false, "the live transport's callback answered: no task was made")
        let sent = fake.requests(kind: "notifications")
        XCTAssertEqual(sent.count, 2)
        XCTAssertEqual(sent.map { $0.headers["Authorization"] }, ["Bearer demo-alice", "Bearer demo-alice"])
        XCTAssertEqual(sent[0].query, sent[1].query, "the same request upstream")
    }

    func testEveryFailureIsTheSameThroughTheCallback() async throws {
        await assertSame(.answer(429, ["Retry-After": "30"], "{}"), expect: "rateLimited(retryAfter: 30)")
        await assertSame(.status(500, "{}"), expect: "unavailable(status: 500)")
        await assertSame(.status(403, "{}"), expect: "notAuthorised")
        await assertSame(.body("not json"), expect: "malformed")
        await assertSame(.body(#"{"error":{"code":"mwoauth-invalid-authorization","info":"no"}}"#), expect: "notAuthorised")
        await assertSame(.body(#"{"error":{"code":"maxlag","info":"lagged"}}"#), expect: "rateLimited")
        await assertSame(.body(#"{"batchcomplete":true}"#), expect: "malformed")
    }

    func testARedirectIsFollowedThroughTheCallbackAsWithoutIt() async throws {
        // A redirect that leads back to itself: followed three times, then the call fails, either way.
        let loop = "/en/w/api.php?action=query&format=json&formatversion=2&meta=notifications&notfilter=%21read&notlimit=1"
        await assertSame(.answer(302, ["Location": loop], "{}"), expect: "unavailable(status: 302)")
        XCTAssertEqual(answeredInTask, true, "the hops were followed in a task")
        XCTAssertEqual(fake.requests(kind: "notifications").count, 8, "four calls (one and three hops) each way")
    }

    func testATimeoutIsTheSameThroughTheCallback() async throws {
        fake.set("notifications", .delay(1))
        let a = client(deadline: 0.2), b = client(deadline: 0.2)
        let asyncResult = Self.outcome(await viaAsync(a))
        let callbackResult = Self.outcome(viaCallback(b))
        XCTAssertEqual(asyncResult, "timeout")
        XCTAssertEqual(callbackResult, asyncResult)
        XCTAssertEqual(b.metrics.count(kind: "notifications", outcome: "timeout"), 1)
    }

    func testCallsQueuedForASlotOrOnAnotherTransportStillAnswer() async throws {
        // One slot: calls beyond it queue (the task path), and every one is answered once.
        fake.set("notifications", .delay(0.05))
        let c = client(maxConcurrent: 1)
        let answers = Mutex<[String]>([])
        let group = DispatchGroup()
        for _ in 0..<6 {
            group.enter()
            c.unreadCount(lang: .english, authorization: "Bearer demo-alice") { r in
                answers.withLock { $0.append(Self.outcome(r)) }
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(answers.withLock { $0.count }, 6)
        XCTAssertTrue(answers.withLock { $0.allSatisfy { $0.hasPrefix("count ") } }, "\(answers.withLock { $0 })")
        XCTAssertEqual(c.guards.inFlight(origin: c.origin(lang: "en")), 0)
        // The embedded transport starts no call itself: the task path, with the same answer.
        let embedded = client(live: false)
        let expected = Self.outcome(await viaAsync(embedded))
        XCTAssertEqual(Self.outcome(viaCallback(embedded)), expected)
        XCTAssertEqual(answeredInTask, true)
    }
}
