import Foundation
import HTTPServer
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import HTTPCore
@testable import Upstream

/// Seed 002 (iOS notifications spec), "Bell badging": the four states.
final class BellBadgingTests: XCTestCase {
    func testExploreFeedWithUnreadMessages() {
        XCTAssertEqual(Badge(unread: 4, exploreFeedOn: true), Badge(unread: 4, exploreFeedOn: true))
        let b = Badge(unread: 4, exploreFeedOn: true)
        XCTAssertEqual(b.placement, .explore); XCTAssertTrue(b.indicated); XCTAssertEqual(b.displayCount, "4"); XCTAssertEqual(b.appIconBadgeCount, 4)
    }
    func testExploreFeedWithNoUnreadMessages() {
        let b = Badge(unread: 0, exploreFeedOn: true)
        XCTAssertEqual(b.placement, .explore); XCTAssertFalse(b.indicated); XCTAssertEqual(b.displayCount, "0"); XCTAssertEqual(b.appIconBadgeCount, 0)
    }
    func testExploreFeedOffWithUnreadMessages() {
        let b = Badge(unread: 120, exploreFeedOn: false)
        XCTAssertEqual(b.placement, .settings); XCTAssertTrue(b.indicated); XCTAssertEqual(b.displayCount, "99+"); XCTAssertEqual(b.unreadCount, 120)
    }
    func testExploreFeedOffWithNoUnreadMessages() {
        let b = Badge(unread: 0, exploreFeedOn: false)
        XCTAssertEqual(b.placement, .settings); XCTAssertFalse(b.indicated)
    }
    func testDisplayCountBoundary() {
        XCTAssertEqual(Badge(unread: 99, exploreFeedOn: true).displayCount, "99")
        XCTAssertEqual(Badge(unread: 100, exploreFeedOn: true).displayCount, "99+")
        XCTAssertEqual(Badge(unread: -3, exploreFeedOn: true).unreadCount, 0)
    }
    func testTheBadgeIsWrittenAsJSONEncoderWouldWriteIt() throws {
        for n in [0, 7, -1, 10, 99, 100, 1_234_567_890, Int.max, Int.min] {
            var out: [UInt8] = []
            JSONText.appendInt(n, to: &out)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), String(n))
        }
        for (n, on) in [(0, true), (4, false), (99, true), (100, false), (123_456, true), (Int.max, false)] {
            let b = Badge(unread: n, exploreFeedOn: on)
            XCTAssertEqual(String(decoding: b.jsonBytes, as: UTF8.self), String(decoding: try Responses.encoder.encode(b), as: UTF8.self))
        }
    }

    func testTheListIsWrittenAsJSONEncoderWouldWriteIt() throws {
        let embedded = EmbeddedNotifications.list(for: "Alice", lang: "en", read: [700_010])
        var items = embedded.prefix(12).map(NotificationItem.init)
        var odd = items[0]
        odd.agent = nil; odd.body = "tab\tquote\"back\\slash/é 😀 \u{1}"; odd.category = nil; odd.timestamp = nil; odd.wiki = nil; odd.primaryLink = nil; odd.title = nil
        items.append(odd)
        for (list, cont) in [(items, "1795176000|700010" as String?), ([], nil)] {
            let body = NotificationRoutes.ListBody(badge: Badge(unread: 120, exploreFeedOn: false), notifications: list, continue: cont)
            XCTAssertEqual(String(decoding: body.jsonBytes, as: UTF8.self), String(decoding: try Responses.encoder.encode(body), as: UTF8.self))
        }
    }
}

final class NotificationRulesTests: XCTestCase {
    func testFilterGroupMapping() {
        XCTAssertEqual(FilterGroup.of(type: "edit-user-talk", category: "edit-user-talk"), .userTalkPageMessage)
        XCTAssertEqual(FilterGroup.of(type: "mention", category: "mention"), .mentionInTalkPage)
        XCTAssertEqual(FilterGroup.of(type: "mention-summary", category: "mention"), .mentionInTalkPage)
        XCTAssertEqual(FilterGroup.of(type: "reverted", category: "reverted"), .editReverted)
        XCTAssertEqual(FilterGroup.of(type: "edit-thank", category: "edit-thank"), .thanks)
        XCTAssertEqual(FilterGroup.of(type: "welcome", category: "system"), .welcome)
        XCTAssertEqual(FilterGroup.of(type: "login-fail-new", category: "login-fail"), .loginAttempts)
        XCTAssertEqual(FilterGroup.of(type: "login-success", category: "login-success"), .loginAttempts)
        XCTAssertEqual(FilterGroup.of(type: "page-linked", category: "article-linked"), .other)
        XCTAssertEqual(FilterGroup.of(type: "something-new", category: "edit-user-talk"), .userTalkPageMessage, "category decides for unknown types")
    }

    func testMarkReadBodies() throws {
        XCTAssertEqual(try MarkReadRequest.parse(Array("{\"all\":true}".utf8)), .all)
        XCTAssertEqual(try MarkReadRequest.parse(Array("{\"ids\":[3,\"4\",3]}".utf8)), .ids([3, 4]))
        let bad = ["", "[]", "{", "{\"all\":false}", "{\"all\":1}", "{\"ids\":[]}", "{\"ids\":[1],\"all\":true}", "{\"ids\":[1],\"extra\":1}",
                   "{\"ids\":[\"abc\"]}", "{\"ids\":[1.5]}", "{\"ids\":[true]}", "{\"ids\":[-1]}", "{\"ids\":\"1,2\"}", "{}",
                   "{\"ids\":[\(Array(repeating: "1", count: 501).joined(separator: ","))]}"]
        for b in bad {
            XCTAssertThrowsError(try MarkReadRequest.parse(Array(b.utf8)), b) { XCTAssertEqual(($0 as? Problem)?.status, 400, b) }
        }
    }

    func testMarkReadIsBatchedByFifty() {
        let b = MarkReadRequest.batches(Array(1...120))
        XCTAssertEqual(b.map(\.count), [50, 50, 20])
        XCTAssertEqual(b.flatMap { $0 }, Array(1...120))
        XCTAssertEqual(MarkReadRequest.batches([7]).count, 1)
    }

    func testBearerShape() throws {
        XCTAssertEqual(try BearerAuthorization.extract(Credentials.read(["Authorization": "Bearer abc.DEF-123_~+/=="])), "Bearer abc.DEF-123_~+/==")
        XCTAssertEqual(try BearerAuthorization.extract(Credentials.read(["Authorization": "bearer abc"])), "Bearer abc")
        for bad in ["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Bearer a b", "Bearer a\"b", "Token abc"] {
            XCTAssertThrowsError(try BearerAuthorization.extract(Credentials.read(["Authorization": bad])), bad) { e in
                let p = e as! Problem
                XCTAssertEqual(p.status, 401)
                XCTAssertEqual(p.headers["WWW-Authenticate"], BearerAuthorization.challenge, "one challenge for every 401")
                XCTAssertFalse(p.detail.contains("dXNlcjpwYXNz"))
            }
        }
        XCTAssertThrowsError(try BearerAuthorization.extract(Credentials.read([:])))
        XCTAssertThrowsError(try BearerAuthorization.extract(Credentials.read(HTTPHeaders([("Authorization", "Bearer a"), ("Authorization", "Bearer b")]))))
    }
}

final class NotificationLiveTests: FakeUpstreamTestCase {
    override var loops: Int { 2 }
    override func configure(_ options: inout Options) { options.upstreamTimeout = 0.5 }

    func call(_ method: String, _ path: String, auth: String? = "Bearer demo-alice", body: String? = nil, contentType: String = "application/json") throws -> TestHTTPResponse {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: t\r\n"
        if let auth { text += "Authorization: \(auth)\r\n" }
        if let body { text += "Content-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + (body ?? "")
        return try TestHTTPResponse(port: server.port, request: text)
    }

    func json(_ r: TestHTTPResponse) -> [String: Any] { (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:] }

    func testTheClientsAuthorizationIsForwardedAndResponsesAreNeverStored() throws {
        let r = try call("GET", "/notifications?filter=unread&limit=5")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.headers["cache-control"], "private, no-store")
        XCTAssertEqual(fake.requests(kind: "notifications").last?.headers["Authorization"], "Bearer demo-alice")
        let body = json(r)
        XCTAssertEqual((body["notifications"] as? [Any])?.count, 5)
        XCTAssertEqual((body["badge"] as? [String: Any])?["displayCount"] as? String, "99+")
        XCTAssertNotNil(body["continue"] as? String)
    }

    func testMissingMalformedOrRefusedCredentialsAre401() throws {
        for auth in [nil, "Basic Zm9vOmJhcg==", "Bearer", "Bearer a b"] as [String?] {
            let r = try call("GET", "/notifications/badge", auth: auth)
            XCTAssertEqual(r.status, 401, auth ?? "none")
            XCTAssertTrue(r.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            XCTAssertFalse(String(decoding: r.body, as: UTF8.self).contains("Zm9vOmJhcg"))
        }
        XCTAssertEqual(fake.requests(kind: "notifications").count, 0, "refused before any upstream call")
        let refused = try call("GET", "/notifications/badge", auth: "Bearer demo-mallory")
        XCTAssertEqual(refused.status, 401)
        XCTAssertFalse(String(decoding: refused.body, as: UTF8.self).contains("mallory"), "the token never appears in error details")
    }

    func testTwoHundredConcurrentRequestsAlternatingUsersNeverCrossOver() throws {
        // Generous deadline: this is about isolation under concurrency, not about speed on a 2-core CI box.
        server.shutdown(); server.waitUntilStopped()
        server = try startLede(loops: 2) { [fake] in
            $0.upstream = fake!.template
            $0.upstreamTimeout = 10
        }
        let group = DispatchGroup()
        let failures = Locked<[String]>([])
        let port = server.port
        for i in 0..<200 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let user = i % 2 == 0 ? "demo-alice" : "demo-bob"
                guard let r = try? TestHTTPResponse(port: port, request: "GET /notifications?filter=all&limit=50 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(user)\r\n\r\n"),
                      r.status == 200,
                      let body = try? JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any],
                      let list = body["notifications"] as? [[String: Any]] else { failures.mutate { $0.append("\(i): no 200") }; return }
                let ids = list.compactMap { $0["id"] as? Int }
                let own = user == "demo-alice" ? 700_000..<800_000 : 800_000..<900_000
                if ids.isEmpty || !ids.allSatisfy(own.contains) { failures.mutate { $0.append("\(i) \(user) got \(ids.prefix(3))") } }
            }
        }
        group.wait()
        XCTAssertEqual(failures.value, [])
    }

    func testMarkReadSendsTheTokenInBatchesOfFiftyAndReturnsTheNewBadge() throws {
        let ids = (1...120).map { 700_000 + 10 * $0 }
        let r = try call("POST", "/notifications/read", body: "{\"ids\":[\(ids.map(String.init).joined(separator: ","))]}")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(json(r)["unreadCount"] as? Int, 0)
        XCTAssertEqual(json(r)["indicated"] as? Bool, false)
        let marks = fake.requests(kind: "markread")
        XCTAssertEqual(marks.count, 3)
        for m in marks {
            XCTAssertEqual(m.method, "POST")
            XCTAssertEqual(m.headers["Authorization"], "Bearer demo-alice")
            XCTAssertTrue(m.body.contains("token=alice"), m.body)
            let list = m.body.split(separator: "&").first { $0.hasPrefix("list=") }!.dropFirst(5)
            XCTAssertLessThanOrEqual(list.components(separatedBy: "%7C").count, 50)
        }
        XCTAssertEqual(fake.requests(kind: "token").count, 1)
        let again = try call("POST", "/notifications/read", body: "{\"ids\":[700010]}")
        XCTAssertEqual(again.status, 200, "idempotent")
    }

    func testInvalidMarkReadMarksNothing() throws {
        for (body, type, status) in [("{\"ids\":[]}", "application/json", 400), ("{\"ids\":[\"x\"]}", "application/json", 400),
                                     ("{\"all\":true,\"extra\":1}", "application/json", 400), ("not json", "application/json", 400),
                                     ("{\"all\":true}", "text/plain", 415)] {
            let r = try call("POST", "/notifications/read", body: body, contentType: type)
            XCTAssertEqual(r.status, status, body)
            XCTAssertEqual(r.headers["content-type"], "application/problem+json")
        }
        XCTAssertEqual(fake.requests(kind: "markread").count + fake.requests(kind: "token").count, 0)
    }

    func testUpstreamFailureIsAClearProblem() throws {
        fake.set("notifications", .status(503, "{}"))
        XCTAssertEqual(try call("GET", "/notifications/badge").status, 502)
        fake.set("notifications", .delay(2))
        let t0 = Date()
        XCTAssertEqual(try call("GET", "/notifications").status, 504)
        XCTAssertLessThan(Date().timeIntervalSince(t0), 1.5)
    }

    func testTypesFilterAndValidation() throws {
        let r = try call("GET", "/notifications?filter=all&limit=50&types=thanks,welcome", auth: "Bearer demo-bob")
        let list = json(r)["notifications"] as! [[String: Any]]
        XCTAssertFalse(list.isEmpty)
        XCTAssertTrue(list.allSatisfy { ["thanks", "welcome"].contains($0["filter"] as! String) })
        for q in ["filter=new", "limit=0", "limit=51", "types=spam", "types=thanks,,welcome", "feed=maybe", "continue=abc"] {
            XCTAssertEqual(try call("GET", "/notifications?\(q)").status, 400, q)
        }
    }
}

extension NotificationLiveTests {
    /// A cursor Echo did not issue is the client's mistake: 400 naming `continue`, not a 502 (schemathesis found it).
    func testACursorEchoDidNotIssueIsA400NamingContinue() throws {
        fake.set("notifications", .body("{\"error\":{\"code\":\"badcontinue\",\"info\":\"Invalid continue param. You should pass the original value returned by the previous query.\"}}"))
        let r = try TestHTTPResponse(port: server.port, request: "GET /notifications?continue=%7C274350310%7C6036 HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer demo-bob\r\n\r\n")
        XCTAssertEqual(r.status, 400)
        let problem = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any])
        XCTAssertEqual(problem["type"] as? String, "urn:lede:problem:invalid-parameter")
        XCTAssertEqual(problem["parameter"] as? String, "continue")
    }
}

final class EmbeddedEchoTests: XCTestCase {
    /// The embedded default refuses a cursor it did not issue, like Echo: the same 400 offline.
    func testTheEmbeddedEchoRefusesACursorItDidNotIssue() async throws {
        let client = WikimediaClient(transport: EmbeddedTransport())
        let en = try XCTUnwrap(LanguageCode("en"))
        let first = try await client.notifications(lang: en, authorization: "Bearer demo-alice", filter: .all, limit: 5, continueFrom: nil)
        let next = try XCTUnwrap(first.continue)
        let second = try await client.notifications(lang: en, authorization: "Bearer demo-alice", filter: .all, limit: 5, continueFrom: next)
        XCTAssertFalse(second.list.isEmpty)
        do {
            _ = try await client.notifications(lang: en, authorization: "Bearer demo-alice", filter: .all, limit: 5, continueFrom: "|274350310|6036")
            XCTFail("a foreign cursor was accepted")
        } catch let e as UpstreamError {
            XCTAssertEqual(e, .rejected(parameter: "continue", code: "badcontinue"))
        }
    }
}

/// The badge answered from its prepared bodies is the answer `Responses.json` builds: the same body, fields and
/// entity tag, and the same 304 — for every prepared count and a count past them, with the feed on and off.
final class BadgeAnswersTests: XCTestCase {
    func testPreparedBadgeAnswersAreTheBuiltOnes() throws {
        let badges = NotificationRoutes.BadgeAnswers()
        let router = Router()
        router.get("/prepared/{n}/{feed}") { ctx in
            .response(badges.response(unread: Int(ctx.parameter("n")!)!, feedOn: ctx.parameter("feed") == "on"))
        }
        router.get("/built/{n}/{feed}") { ctx in
            .response(Responses.json(bytes: Badge(unread: Int(ctx.parameter("n")!)!, exploreFeedOn: ctx.parameter("feed") == "on").jsonBytes,
                                     cacheControl: NotificationRoutes.noStore))
        }
        let server = try startServer(router)
        defer { server.shutdown(); server.waitUntilStopped() }
        // The fields that differ per answer (its date, its id) left out of the comparison.
        func badge(_ path: String, _ headers: [String: String] = [:]) throws -> TestResponse {
            var r = try get(server, path, headers.merging(["Accept-Encoding": "gzip"]) { a, _ in a })
            r.headers["date"] = nil; r.headers["x-request-id"] = nil
            return r
        }
        for n in Array(0..<NotificationRoutes.BadgeAnswers.prepared) + [256, 1_000, 123_456] {
            for feed in ["on", "off"] {
                let prepared = try badge("/prepared/\(n)/\(feed)"), built = try badge("/built/\(n)/\(feed)")
                XCTAssertEqual(prepared.status, 200)
                XCTAssertEqual(prepared.headers, built.headers, "\(n) \(feed)")
                XCTAssertEqual(prepared.body, built.body, "\(n) \(feed)")
                XCTAssertEqual(prepared.header("Cache-Control"), "private, no-store")
                if n % 97 == 0, let tag = built.header("ETag") {
                    XCTAssertEqual(try badge("/prepared/\(n)/\(feed)", ["If-None-Match": tag]).status, 304)
                    XCTAssertEqual(try badge("/built/\(n)/\(feed)", ["If-None-Match": tag]).status, 304)
                }
            }
        }
    }
}
