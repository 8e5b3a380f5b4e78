import HTTPCore
import Foundation
import Glibc
import HTTPClient
import HTTPServer
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// Seed 000, "Loading the feed": a placeholder, and "when the data for that card is retrieved, it should replace
/// the placeholder" — streamed (`Accept: application/jsonl`) and in the classic answer, against a fake Wikimedia
/// whose latency is set per call kind.
final class FeedStreamTests: FakeUpstreamTestCase {
    override var loops: Int { 2 }
    override func configure(_ options: inout Options) {
        options.upstreamTimeout = 2
        options.sectionTimeout = 0.3
    }

    private func open(_ path: String, _ extra: String = "", version: String = "1.1") throws -> RawClient {
        let c = try RawClient(port: server.port, timeout: 5)
        c.send("GET \(path) HTTP/\(version)\r\nHost: t\r\nAccept: application/jsonl\r\n\(extra)\r\n")
        return c
    }

    private func json(_ line: [UInt8]) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
    }

    /// Reads chunks until the body ends; returns each line with the time it arrived.
    private func lines(_ c: RawClient, inflater: Inflater? = nil, since t0: Date) throws -> [(line: [String: Any], at: Double)] {
        var out: [(line: [String: Any], at: Double)] = []
        var pending: [UInt8] = []
        while let chunk = c.readChunk(), !chunk.isEmpty {
            pending += try inflater.map { try XCTUnwrap($0.feed(chunk)) } ?? chunk
            while let nl = pending.firstIndex(of: 10) {
                out.append((try json(Array(pending[..<nl])), Date().timeIntervalSince(t0)))
                pending.removeFirst(nl + 1)
            }
        }
        XCTAssertTrue(pending.isEmpty, "every line ends with a newline")
        return out
    }

    func testTheHeadComesBeforeAnyUpstreamAnswerAndSectionsFollowAsTheyLand() throws {
        fake.set("feed", .delay(0.6)); fake.set("random", .delay(0.6)); fake.set("related", .delay(1.5))
        let t0 = Date()
        let c = try open("/feed?date=2026-11-20&because=Amsterdam")
        let head = try XCTUnwrap(c.readHead())
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Type"), "application/jsonl")
        XCTAssertEqual(head.header("Cache-Control"), "private, no-store")
        XCTAssertEqual(head.header("Vary"), "Accept, Accept-Encoding, Accept-Language")
        let all = try lines(c, since: t0)
        let first = try XCTUnwrap(all.first)
        XCTAssertLessThan(first.at, 0.4, "the head is written before any upstream wait")
        XCTAssertEqual(first.line["date"] as? String, "2026-11-20")
        XCTAssertEqual(first.line["kinds"] as? [String], ["featured", "mostRead", "pictureOfTheDay", "onThisDay", "random", "becauseYouRead"])
        let sections = all.dropFirst()
        XCTAssertEqual(Set(sections.compactMap { $0.line["kind"] as? String }), ["featured", "mostRead", "pictureOfTheDay", "onThisDay", "random", "becauseYouRead"])
        XCTAssertTrue(sections.allSatisfy { $0.line["status"] as? String == "ok" }, "slow is not failed: every section arrives")
        // In completion order: the featured feed's sections and random at ~0.6 s, Because you read last at ~1.5 s.
        XCTAssertEqual(sections.last?.line["kind"] as? String, "becauseYouRead")
        XCTAssertGreaterThan(sections.last!.at, 1.4)
        XCTAssertLessThan(sections.last!.at, 1.95)
        let featured = try XCTUnwrap(sections.first { $0.line["kind"] as? String == "featured" })
        XCTAssertGreaterThan(featured.at, 0.5); XCTAssertLessThan(featured.at, 1.1)
        // The connection is reusable after the stream.
        c.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.status, 200)
    }

    func testAHungSectionBecomesItsPlaceholderAtTheUpstreamDeadlineAndTheAnswerEnds() throws {
        fake.set("related", .hang)
        let t0 = Date()
        let c = try open("/feed?date=2026-11-20&because=Amsterdam")
        XCTAssertEqual(c.readHead()?.status, 200)
        let all = try lines(c, since: t0)
        let because = try XCTUnwrap(all.last)
        XCTAssertEqual(because.line["kind"] as? String, "becauseYouRead")
        XCTAssertEqual(because.line["status"] as? String, "placeholder")
        XCTAssertEqual(because.line["reason"] as? String, "timeout")
        XCTAssertEqual(because.line["retryAfterSeconds"] as? Int, 1)
        XCTAssertGreaterThan(because.at, 1.9, "waited for the upstream deadline (2 s), not the section deadline (0.3 s)")
        XCTAssertLessThan(because.at, 2.6)
        // The shared sections were warm or quick: they arrived long before.
        XCTAssertLessThan(all[1].at, 0.5)
    }

    func testWarmSectionsGoOutWithTheHead() throws {
        // Warm the shared part and Because you read.
        _ = try TestHTTPResponse(port: server.port, request: "GET /feed?date=2026-11-20&because=Amsterdam HTTP/1.1\r\nHost: t\r\n\r\n")
        fake.set("feed", .hang)
        let c = try open("/feed?date=2026-11-20&because=Amsterdam")
        // Everything warm: the whole answer at once, on the loop (the same lines, framed by Content-Length).
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.header("Content-Type"), "application/jsonl")
        XCTAssertEqual(r.header("Cache-Control"), "private, no-store")
        XCTAssertNil(r.header("Transfer-Encoding"))
        let lines = r.text.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 8, "head + six warm sections, each ending with a newline: \(r.text)")
        XCTAssertEqual(lines.last, "")
        XCTAssertTrue(lines.dropLast().allSatisfy { !$0.isEmpty })
    }

    func testGzipIsOneStreamReadableLineByLine() throws {
        fake.set("related", .delay(0.5))
        let t0 = Date()
        let c = try open("/feed?date=2026-11-20&because=Amsterdam", "Accept-Encoding: gzip\r\n")
        let head = try XCTUnwrap(c.readHead())
        XCTAssertEqual(head.header("Content-Encoding"), "gzip")
        let inflater = Inflater()
        let all = try lines(c, inflater: inflater, since: t0)
        XCTAssertTrue(inflater.finished)
        XCTAssertEqual(all.count, 7)
        XCTAssertLessThan(all[0].at, 0.4, "the head inflates on arrival")
    }

    func testHTTP10IsCloseDelimited() throws {
        let c = try open("/feed?date=2026-11-20&sections=featured,random", version: "1.0")
        let text = String(decoding: try XCTUnwrap(c.readToEOF()), as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        XCTAssertFalse(parts[0].lowercased().contains("transfer-encoding"))
        let body = parts.dropFirst().joined(separator: "\r\n\r\n")
        XCTAssertEqual(body.split(separator: "\n").count, 3)
        XCTAssertTrue(body.hasSuffix("\n"))
    }

    func testAClientThatLeavesMidAnswerLeavesNoStreamAndTheCallStillFillsTheCache() throws {
        fake.set("related", .delay(0.8))
        do {
            let c = try open("/feed?date=2026-11-20&because=Amsterdam")
            XCTAssertEqual(c.readHead()?.status, 200)
            XCTAssertNotNil(c.readChunk())
        }   // gone before Because you read lands
        let deadline = Date().addingTimeInterval(1)
        while server.metrics.openStreams > 0 && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(server.metrics.openStreams, 0, "the stream and its waiters are gone")
        usleep(1_000_000)
        // The call went on and filled the cache: the next answer has it in its first write.
        let c = try open("/feed?date=2026-11-20&because=Amsterdam&sections=becauseYouRead")
        let text = try XCTUnwrap(c.readResponse()).text
        XCTAssertTrue(text.contains("\"kind\":\"becauseYouRead\",\"source\":\"Amsterdam\",\"status\":\"ok\""), text)
        XCTAssertEqual(fake.requests(kind: "related").count, 1)
    }

    func testTheClassicAnswerIsNeverA504ForSlownessAndPlaceholdersGoOnceTheDataLands() throws {
        fake.set("feed", .delay(1.0)); fake.set("random", .delay(1.0))
        let first = try TestHTTPResponse(port: server.port, request: "GET /feed?date=2026-11-20 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(first.status, 200, "slow is not a 504")
        let s1 = try XCTUnwrap((try json(first.body))["sections"] as? [[String: Any]])
        XCTAssertTrue(s1.allSatisfy { $0["status"] as? String == "placeholder" })
        XCTAssertEqual(Set(s1.compactMap { $0["retryAfterSeconds"] as? Int }), [2])
        XCTAssertEqual(first.headers["cache-control"], "public, max-age=2", "never kept past its earliest retry")
        usleep(1_000_000)   // every call it needs has answered by now
        let second = try TestHTTPResponse(port: server.port, request: "GET /feed?date=2026-11-20 HTTP/1.1\r\nHost: t\r\n\r\n")
        let s2 = try XCTUnwrap((try json(second.body))["sections"] as? [[String: Any]])
        XCTAssertEqual(s2.count, 5)
        XCTAssertTrue(s2.allSatisfy { $0["status"] as? String == "ok" }, "the placeholders were dropped when the data landed")
        XCTAssertEqual(second.headers["cache-control"], "public, max-age=60")
    }

    func testNegotiation() {
        func prefers(_ accept: String?) -> Bool {
            var h = HTTPHeaders()
            if let accept { h.add("Accept", accept) }
            return MediaNegotiation.prefers("application/jsonl", over: "application/json", in: h)
        }
        XCTAssertTrue(prefers("application/jsonl"))
        XCTAssertTrue(prefers("application/jsonl, application/json;q=0.5"))
        XCTAssertFalse(prefers(nil))
        XCTAssertFalse(prefers("*/*"))
        XCTAssertFalse(prefers("application/json, application/jsonl"), "a tie keeps the classic answer")
        XCTAssertFalse(prefers("application/jsonl;q=0"))
        XCTAssertTrue(prefers("application/*;q=0.2, application/jsonl"))
    }
}

/// The article screen streamed (`Accept: application/jsonl`): the head with the card as soon as the summary is
/// there, then each part on its own line as it completes — the very part the classic answer holds, named.
final class ArticleStreamTests: FakeUpstreamTestCase {
    override var loops: Int { 2 }
    override func configure(_ options: inout Options) {
        options.upstreamTimeout = 1.5
        options.sectionTimeout = 0.3
    }

    private func lines(_ path: String, since t0: Date) throws -> (TestResponse, [(line: [String: Any], at: Double)]) {
        let c = try RawClient(port: server.port, timeout: 5)
        c.send("GET \(path) HTTP/1.1\r\nHost: t\r\nAccept: application/jsonl\r\n\r\n")
        let head = try XCTUnwrap(c.readHead())
        var out: [(line: [String: Any], at: Double)] = []
        while let chunk = c.readChunk(), !chunk.isEmpty {
            for line in chunk.split(separator: 10) {
                out.append((try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]), Date().timeIntervalSince(t0)))
            }
        }
        return (head, out)
    }

    func testTheCardFirstThenEachPartAsItCompletesEqualToTheClassicAnswer() async throws {
        fake.set("media", .delay(0.8))
        let t0 = Date()
        let (head, all) = try lines("/article/Albert_Einstein?lang=en", since: t0)
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Type"), "application/jsonl")
        XCTAssertEqual(head.header("Cache-Control"), "private, no-store")
        XCTAssertEqual(all.count, 7)
        XCTAssertEqual((all[0].line["card"] as? [String: Any])?["title"] as? String, "Albert Einstein")
        XCTAssertEqual(all[0].line["parts"] as? [String], ["sections", "languages", "media", "readMore", "references", "editable"])
        XCTAssertLessThan(all[0].at, 0.5, "the head waits for the summary alone")
        XCTAssertEqual(all.last?.line["part"] as? String, "media", "the slow gallery comes last")
        XCTAssertGreaterThan(all.last!.at, 0.7)
        XCTAssertEqual(all.last?.line["status"] as? String, "ok", "slower than the section deadline, within the upstream one")
        // Each part is the classic answer's, named.
        let (_, classic, _) = try get(server, "/article/Albert_Einstein?lang=en").statusJSONAndResponse
        for entry in all.dropFirst() {
            var part = entry.line
            let name = try XCTUnwrap(part.removeValue(forKey: "part") as? String)
            if name == "editable" {   // a member of the classic answer, not an object
                XCTAssertEqual(part["status"] as? String, "ok")
                XCTAssertEqual(part["editable"] as? Bool, try XCTUnwrap(classic["editable"] as? Bool))
                continue
            }
            XCTAssertEqual(NSDictionary(dictionary: part), NSDictionary(dictionary: try XCTUnwrap(classic[name] as? [String: Any])), name)
        }
    }

    func testAMissingPageIsStillA404Problem() throws {
        fake.set("summary", .status(404, "{\"type\":\"https://mediawiki.org/wiki/HyperSwitch/errors/not_found\"}"))
        let (head, all) = try lines("/article/No_such_page_at_all?lang=en", since: Date())
        XCTAssertEqual(head.status, 404)
        XCTAssertEqual(head.header("Content-Type"), "application/problem+json")
        XCTAssertTrue(all.isEmpty)
    }

    func testAHungPartIsItsPlaceholderAtTheUpstreamDeadline() throws {
        fake.set("languages", .hang)
        let t0 = Date()
        let (_, all) = try lines("/article/Albert_Einstein?lang=en", since: t0)
        let languages = try XCTUnwrap(all.last)
        XCTAssertEqual(languages.line["part"] as? String, "languages")
        XCTAssertEqual(languages.line["status"] as? String, "placeholder")
        XCTAssertGreaterThan(languages.at, 1.4)
        XCTAssertLessThan(languages.at, 2.2)
    }
}

/// Refresh ahead: a warm shared part is served while one refresh runs when it expires (stale-while-revalidate), so
/// once warm no request waits for Wikipedia — here 1 s per call, the sections living 2 s.
final class FeedRefreshAheadTests: FakeUpstreamTestCase {
    override var loops: Int { 2 }
    override func configure(_ options: inout Options) {
        options.upstreamTimeout = 2
        options.sectionTimeout = 1.5
        options.feedMaxAge = 2
    }

    func testOnceWarmNoRequestWaitsForTheUpstreamAndCallsStayBounded() throws {
        fake.set("feed", .delay(1.0)); fake.set("random", .delay(1.0))
        let cold = try TestHTTPResponse(port: server.port, request: "GET /feed HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(cold.status, 200)
        var slow: [Double] = []
        var count = 0
        let end = Date().addingTimeInterval(20)
        while Date() < end {
            let t0 = Date()
            let r = try TestHTTPResponse(port: server.port, request: "GET /feed HTTP/1.1\r\nHost: t\r\n\r\n")
            let took = Date().timeIntervalSince(t0)
            XCTAssertEqual(r.status, 200)
            let sections = (try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any])?["sections"] as? [[String: Any]] ?? []
            XCTAssertTrue(sections.allSatisfy { $0["status"] as? String == "ok" }, "never a placeholder once warm")
            if took > 0.05 { slow.append(took) }
            count += 1
            usleep(50_000)
        }
        XCTAssertGreaterThan(count, 100)
        XCTAssertTrue(slow.allSatisfy { $0 < 0.5 }, "a request waited for a 1 s upstream: \(slow)")
        XCTAssertLessThanOrEqual(slow.count, count / 50, "over 50 ms: \(slow)")
        // One refresh per lifetime (2 s live + 1 s refresh): about 7 in 20 s, never one per request.
        XCTAssertLessThanOrEqual(fake.requests(kind: "feed").count, 12)
        XCTAssertGreaterThanOrEqual(fake.requests(kind: "feed").count, 4, "the sections were refreshed, not kept forever")
    }
}

extension FeedStreamTests {
    /// A streamed answer that built every shared section keeps them as the shared part: the next answer, streamed or
    /// classic, has them warm (and the same random card).
    func testAStreamedFeedWarmsTheSharedPartForEveryone() throws {
        fake.set("feed", .delay(0.3))
        let c = try open("/feed?date=2026-11-19")
        XCTAssertEqual(c.readHead()?.status, 200)
        let streamed = try lines(c, since: Date())
        let random = try XCTUnwrap(streamed.first { $0.line["kind"] as? String == "random" })
        let classic = try TestHTTPResponse(port: server.port, request: "GET /feed?date=2026-11-19 HTTP/1.1\r\nHost: t\r\n\r\n")
        let sections = try XCTUnwrap((try json(classic.body))["sections"] as? [[String: Any]])
        let classicRandom = try XCTUnwrap(sections.first { $0["kind"] as? String == "random" })
        XCTAssertEqual(NSDictionary(dictionary: classicRandom), NSDictionary(dictionary: random.line))
        XCTAssertEqual(fake.requests(kind: "feed").count, 1, "the classic answer was warm")
        let again = try XCTUnwrap(try open("/feed?date=2026-11-19").readResponse())
        XCTAssertNil(again.header("Transfer-Encoding"), "all warm: one body at once")
    }
}
