import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import TestSupport
import XCTest
import HTTPServer
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import HTTPCore
@testable import Upstream

/// The Saved tab's view of `FakeUpstream`: the reading lists' interface over a store of the test's users (the embedded
/// default's, with its `next` pages, `duplicate: true` and error bodies), a summary for any title, what was asked, and
/// the ways each can fail or lag.
final class FakeReadingLists: Sendable {
    let upstream: FakeUpstream
    var store: EmbeddedReadingLists { upstream.embedded.readingLists }
    var template: String { upstream.template }
    struct Seen: Sendable { var method: String; var path: String; var query: String? }
    private struct State: Sendable {
        var deletesInFlight = 0, maxDeletesInFlight = 0
        var failingSummaries: Set<String> = []
        /// Entry ids whose first DELETE answers 503 (a transient failure).
        var flakyDeletes: Set<Int> = []
        var deleteDelay = 0.0, summaryDelay = 0.0
    }
    /// The faults and what they counted, in a box the fake's handlers share.
    private final class Faults: Sendable { let state = Mutex(State()) }
    private let faults = Faults()

    init(users: [String: EmbeddedReadingLists.User], settings: EmbeddedReadingLists.Settings = .init()) throws {
        upstream = try FakeUpstream(readingLists: EmbeddedReadingLists(users: users, settings: settings))
        let faults = self.faults
        upstream.set("summary", .asyncHandler { r in
            let parts = r.path.split(separator: "/")
            let lang = String(parts.first ?? "en")
            let title = (PercentDecoding.decode(parts.last ?? "", plusAsSpace: false) ?? "").replacingOccurrences(of: "_", with: " ")
            let (fails, delay) = faults.state.withLock { ($0.failingSummaries.contains(title), $0.summaryDelay) }
            if delay > 0 { try? await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
            if fails { return (500, "{\"detail\":\"boom\"}") }
            return (200, "{\"type\":\"standard\",\"title\":\(JSONText.quote(title)),\"displaytitle\":\(JSONText.quote(title)),\"lang\":\"\(lang)\",\"dir\":\"ltr\","
                + "\"extract\":\(JSONText.quote(title + " (/ˈtest/) is an article.")),\"extract_html\":\(JSONText.quote("<p>" + title + " is an article.</p>"))}")
        })
        upstream.set("readinglists-entries", .asyncHandler { r in
            guard r.method == "DELETE" else { return nil }
            let id = Int(r.path.split(separator: "/").last ?? "") ?? -1
            let (delay, flaky) = faults.state.withLock { s -> (Double, Bool) in
                s.deletesInFlight += 1; s.maxDeletesInFlight = max(s.maxDeletesInFlight, s.deletesInFlight)
                return (s.deleteDelay, s.flakyDeletes.remove(id) != nil)
            }
            defer { faults.state.withLock { $0.deletesInFlight -= 1 } }
            if delay > 0 { try? await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
            return flaky ? (503, "busy") : nil
        })
    }

    func stop() { upstream.stop() }

    var seen: [Seen] { upstream.requests.map { Seen(method: $0.method, path: $0.path, query: $0.query) } }
    func seen(_ method: String, _ contains: String) -> [Seen] { seen.filter { $0.method == method && $0.path.contains(contains) } }
    var maxDeletesInFlight: Int { faults.state.withLock { $0.maxDeletesInFlight } }
    func failSummary(of title: String) { _ = faults.state.withLock { $0.failingSummaries.insert(title) } }
    func failFirstDelete(of id: Int) { _ = faults.state.withLock { $0.flakyDeletes.insert(id) } }
    func delays(delete: Double = 0, summary: Double = 0) { faults.state.withLock { $0.deleteDelay = delete; $0.summaryDelay = summary } }

    /// `n` entries, newest first, spread over `editions` in turn (`Article 0` is the newest).
    static func entries(_ n: Int, editions: [String], from id: Int = 1) -> [EmbeddedReadingLists.Entry] {
        (0..<n).map { i in
            let at = EmbeddedReadingLists.timestamp(1_790_000_000 - i * 60)
            return .init(id: id + i, project: "https://\(editions[i % editions.count]).wikipedia.org", title: "Article \(i)", created: at, updated: at)
        }
    }
}

final class SavedTests: XCTestCase {
    var fake: FakeReadingLists!
    var server: HTTPServer!
    var base = ""
    let alice = ["Authorization": "Bearer alice-token"]

    func start(users: [String: EmbeddedReadingLists.User], settings: EmbeddedReadingLists.Settings = .init()) throws {
        var s = settings
        s.acceptsAnyToken = true
        fake = try FakeReadingLists(users: users, settings: s)
        server = try startLede { [fake] in
            $0.upstream = fake!.template
            $0.upstreamTimeout = 2
            $0.upstreamGuard.maxConcurrent = 64
            $0.cacheLimits.staleIfError = 0
        }
        base = "http://127.0.0.1:\(server.port)"
    }

    override func tearDown() {
        server?.shutdown(); server?.waitUntilStopped(); fake?.stop()
    }


    /// `method path` as Alice unless told otherwise: the status, the body as JSON, the response.
    func json(_ method: String, _ path: String, headers: [String: String]? = nil) throws -> (Int, [String: Any], TestResponse) {
        try get(server, path, headers ?? alice, method: method).statusJSONAndResponse
    }

    // MARK: - The tab

    func testTheTabOf120EntriesAcrossThreeEditionsArrivesInOneCallInOrderWithCards() async throws {
        try start(users: ["alice-token": .init(setUp: true, listID: 9, entries: FakeReadingLists.entries(120, editions: ["en", "de", "it"], from: 1000))])
        let (status, body, http) = try json("GET", "/saved?limit=200")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(http.header("Cache-Control"), "private, no-cache")
        XCTAssertEqual(body["count"] as? Int, 120)
        XCTAssertEqual(body["syncEnabled"] as? Bool, true)
        XCTAssertNil(body["continue"])
        let items = body["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(items.map { $0["title"] as? String }, (0..<120).map { "Article \($0)" }, "newest first, as saved")
        XCTAssertEqual(items.map { $0["lang"] as? String }, (0..<120).map { ["en", "de", "it"][$0 % 3] })
        for item in items {
            let card = item["card"] as? [String: Any]
            XCTAssertEqual(card?["title"] as? String, item["title"] as? String)
            XCTAssertEqual(card?["extract"] as? String, "\(item["title"]!) is an article.", "the card is /summary's: IPA stripped")
        }
        XCTAssertEqual(fake.seen("GET", "/entries").count, 2, "two pages of 100 followed by next")
        XCTAssertEqual(fake.seen("GET", "/page/summary/").count, 120, "one summary per article")
        XCTAssertEqual(fake.seen("POST", "/setup").count, 0)

        // Warm: the cards come from the summary cache (the same entries /summary answers from).
        _ = try json("GET", "/saved?limit=200")
        XCTAssertEqual(fake.seen("GET", "/page/summary/").count, 120)
        let (_, summary, _) = try json("GET", "/summary/Article_5?lang=it", headers: [:])
        XCTAssertEqual(summary["title"] as? String, "Article 5")
        XCTAssertEqual(fake.seen("GET", "/page/summary/").count, 120, "/summary answered from the card /saved fetched")
    }

    func testPagesFollowTheOpaqueContinueAndABadOneIsA400() async throws {
        try start(users: ["alice-token": .init(setUp: true, listID: 9, entries: FakeReadingLists.entries(7, editions: ["en"]))])
        var titles: [String] = []
        var path = "/saved?limit=3"
        for _ in 0..<5 {
            let (status, body, _) = try json("GET", path)
            XCTAssertEqual(status, 200)
            XCTAssertEqual(body["count"] as? Int, 7)
            titles += (body["items"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
            guard let next = body["continue"] as? String else { break }
            path = "/saved?limit=3&continue=" + next
        }
        XCTAssertEqual(titles, (0..<7).map { "Article \($0)" })
        for bad in ["x", "o-1", "o12345678", ""] {
            let (status, body, _) = try json("GET", "/saved?continue=" + bad)
            XCTAssertEqual(status, 400, bad)
            XCTAssertEqual(body["type"] as? String, "urn:lede:problem:invalid-saved-request", bad)
        }
        let (status, _, _) = try json("GET", "/saved?limit=201")
        XCTAssertEqual(status, 400)
    }

    func testAnUnchangedListAnswers304AndAChangedOneDoesNot() async throws {
        try start(users: ["alice-token": .init(setUp: true, listID: 9, entries: FakeReadingLists.entries(3, editions: ["en"]))])
        let (_, _, first) = try json("GET", "/saved")
        let tag = try XCTUnwrap(first.header("ETag"))
        XCTAssertTrue(tag.hasPrefix("\""), "a strong validator of the representation")
        let summaries = fake.seen("GET", "/page/summary/").count
        let status = try get(server, "/saved", alice.merging(["If-None-Match": tag]) { a, _ in a }).status
        XCTAssertEqual(status, 304)
        XCTAssertEqual(fake.seen("GET", "/page/summary/").count, summaries)
        let (put, _, _) = try json("PUT", "/saved/New_one?lang=en")
        XCTAssertEqual(put, 201)
        let (after, body, _) = try json("GET", "/saved", headers: alice.merging(["If-None-Match": tag]) { a, _ in a })
        XCTAssertEqual(after, 200)
        XCTAssertEqual((body["items"] as? [[String: Any]])?.first?["title"] as? String, "New one")
    }

    func testATabIsReusedBrieflyForItsOwnUserAloneAndAWriteDropsIt() async throws {
        let at = EmbeddedReadingLists.timestamp(1_790_000_000)
        try start(users: ["alice-token": .init(setUp: true, listID: 9, entries: FakeReadingLists.entries(2, editions: ["en"])),
                          "bob-token": .init(setUp: true, listID: 10, entries: [.init(id: 500, project: "https://de.wikipedia.org", title: "Bobs", created: at, updated: at)])])
        let bob = ["Authorization": "Bearer bob-token"]
        let (_, first, _) = try json("GET", "/saved")
        let reads = fake.seen("GET", "/entries").count
        // Another app of Alice's saves a page: this server shows it once its copy is older than --saved-cache-ttl.
        _ = fake.store.answer(UpstreamRequest(method: .post, lang: "en", path: "/w/rest.php/readinglists/v0/lists/9/entries",
                                              json: Array(#"{"project":"https://en.wikipedia.org","title":"Elsewhere"}"#.utf8),
                                              authorization: "Bearer alice-token", kind: .readinglistsAdd))
        let (_, again, _) = try json("GET", "/saved")
        XCTAssertEqual(again["count"] as? Int, first["count"] as? Int, "the copy of a moment ago")
        XCTAssertEqual(fake.seen("GET", "/entries").count, reads, "answered without asking Wikimedia")
        let (_, bobs, _) = try json("GET", "/saved", headers: bob)
        XCTAssertEqual((bobs["items"] as? [[String: Any]])?.map { $0["title"] as? String }, ["Bobs"], "each user's own tab, never another's")
        // A save through this server drops the copy: the next read has both saves.
        let (put, _, _) = try json("PUT", "/saved/Here?lang=en")
        XCTAssertEqual(put, 201)
        let (_, after, _) = try json("GET", "/saved")
        XCTAssertEqual(Set((after["items"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }), ["Here", "Elsewhere", "Article 0", "Article 1"])
    }

    func testACardThatFailsLeavesItsItemWithANullCardAndTheRestArrive() async throws {
        try start(users: ["alice-token": .init(setUp: true, listID: 9, entries: FakeReadingLists.entries(5, editions: ["en"]))])
        fake.failSummary(of: "Article 2")
        let (status, body, _) = try json("GET", "/saved")
        XCTAssertEqual(status, 200)
        let items = body["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(items.count, 5)
        XCTAssertTrue(items[2]["card"] is NSNull)
        XCTAssertEqual(items.filter { $0["card"] is [String: Any] }.count, 4)
    }

    func testTheStreamedTabSendsItsHeadThenEachCardAsItLands() async throws {
        try start(users: ["alice-token": .init(setUp: true, listID: 9, entries: FakeReadingLists.entries(4, editions: ["en", "de"]))])
        fake.delays(summary: 0.2)
        let http = try get(server, "/saved", alice.merging(["Accept": "application/jsonl"]) { a, _ in a }); let (status, data) = (http.status, http.data)
        XCTAssertEqual(status, 200)
        XCTAssertEqual(http.header("Content-Type"), "application/jsonl")
        XCTAssertEqual(http.header("Cache-Control"), "private, no-store")
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map { try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(lines.count, 5)
        XCTAssertEqual(lines[0]["count"] as? Int, 4)
        XCTAssertEqual(lines[0]["itemsInPage"] as? Int, 4)
        XCTAssertEqual(lines[0]["syncEnabled"] as? Bool, true)
        XCTAssertEqual(Set(lines.dropFirst().compactMap { $0["index"] as? Int }), [0, 1, 2, 3])
        for line in lines.dropFirst() {
            XCTAssertEqual(line["title"] as? String, "Article \(line["index"] as! Int)")
            XCTAssertNotNil(line["card"] as? [String: Any])
        }
    }

    // MARK: - Spellings

    func testSpellingsOfOneTitleAreOneItemAndAreRemovedTogether() async throws {
        let at = EmbeddedReadingLists.timestamp(1_790_000_000)
        let entries: [EmbeddedReadingLists.Entry] = [
            .init(id: 1, project: "https://en.wikipedia.org", title: "Albert_Einstein", created: at, updated: at),
            .init(id: 2, project: "https://en.wikipedia.org", title: "Albert Einstein", created: at, updated: at),
            .init(id: 3, project: "https://en.wikipedia.org", title: "albert Einstein", created: at, updated: at),
            .init(id: 4, project: "https://de.wikipedia.org", title: "Albert Einstein", created: at, updated: at),
        ]
        try start(users: ["alice-token": .init(setUp: true, listID: 9, entries: entries)])
        let (_, body, _) = try json("GET", "/saved")
        XCTAssertEqual(body["count"] as? Int, 2, "three spellings on en are one article; de is another")
        for spelling in ["Albert_Einstein", "albert%20Einstein", "Albert%20Einstein"] {
            let (status, state, _) = try json("GET", "/saved/\(spelling)?lang=en")
            XCTAssertEqual(status, 200)
            XCTAssertEqual(state["saved"] as? Bool, true, spelling)
        }
        // Saving another spelling creates nothing.
        let (put, _, _) = try json("PUT", "/saved/albert_Einstein?lang=en")
        XCTAssertEqual(put, 200)
        XCTAssertEqual(fake.seen("POST", "/entries").count, 0)
        let (deleted, _, _) = try json("DELETE", "/saved/ALBERT_Einstein?lang=en")
        XCTAssertEqual(deleted, 204, "a title that is not saved is removed as a no-op")
        XCTAssertEqual(fake.seen("DELETE", "/entries/").count, 0)
        let (removed, _, _) = try json("DELETE", "/saved/Albert_Einstein?lang=en")
        XCTAssertEqual(removed, 204)
        XCTAssertEqual(Set(fake.seen("DELETE", "/entries/").map { $0.path.split(separator: "/").last.map(String.init) ?? "" }), ["1", "2", "3"])
        XCTAssertEqual(fake.store.entries(of: "alice-token").map(\.id), [4])
        let (_, state, _) = try json("GET", "/saved/Albert_Einstein?lang=en")
        XCTAssertEqual(state["saved"] as? Bool, false)
    }

    // MARK: - Sync not set up

    func testAUserWhoNeverSetUpSyncReadsAnEmptyTabAndASaveSetsItUpOnce() async throws {
        try start(users: ["alice-token": .init(setUp: false, listID: 0)])
        let (status, body, _) = try json("GET", "/saved")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(body["count"] as? Int, 0)
        XCTAssertEqual(body["syncEnabled"] as? Bool, false)
        XCTAssertEqual((body["items"] as? [Any])?.count, 0)
        let (bookmark, state, _) = try json("GET", "/saved/Madrid?lang=es")
        XCTAssertEqual(bookmark, 200)
        XCTAssertEqual(state["saved"] as? Bool, false)
        let (removed, _, _) = try json("DELETE", "/saved/Madrid?lang=es")
        XCTAssertEqual(removed, 204)
        XCTAssertEqual(fake.seen.filter { $0.method != "GET" }.count, 0, "a read creates nothing upstream")
        XCTAssertFalse(fake.store.isSetUp("alice-token"))

        let (created, saved, _) = try json("PUT", "/saved/Madrid?lang=es")
        XCTAssertEqual(created, 201)
        XCTAssertEqual(saved["saved"] as? Bool, true)
        let (again, _, _) = try json("PUT", "/saved/Madrid?lang=es")
        XCTAssertEqual(again, 200, "saving twice is idempotent")
        XCTAssertEqual(fake.store.setUpCalls, 1)
        XCTAssertEqual(fake.store.entries(of: "alice-token").map(\.project), ["https://es.wikipedia.org"])
        XCTAssertEqual(fake.store.entries(of: "alice-token").map(\.title), ["Madrid"])
        let (_, tab, _) = try json("GET", "/saved")
        XCTAssertEqual(tab["syncEnabled"] as? Bool, true)
        XCTAssertEqual(tab["count"] as? Int, 1)
    }

    // MARK: - Delete all

    func testDeleteAllRemovesEveryEntryWithBoundedConcurrencyAndNeverTearsDown() async throws {
        try start(users: ["alice-token": .init(setUp: true, listID: 9, entries: FakeReadingLists.entries(40, editions: ["en", "de"]))])
        let (refused, problem, _) = try json("DELETE", "/saved")
        XCTAssertEqual(refused, 400)
        XCTAssertEqual(problem["parameter"] as? String, "confirm")
        XCTAssertEqual(fake.store.entries(of: "alice-token").count, 40)

        fake.delays(delete: 0.03)
        fake.failFirstDelete(of: 7)
        let (status, body, http) = try json("DELETE", "/saved?confirm=all")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(body["removed"] as? Int, 40)
        XCTAssertEqual(http.header("Cache-Control"), "private, no-store")
        XCTAssertEqual(fake.store.entries(of: "alice-token").count, 0)
        XCTAssertEqual(fake.store.teardownCalls, 0)
        XCTAssertLessThanOrEqual(fake.maxDeletesInFlight, 4)
        XCTAssertGreaterThan(fake.maxDeletesInFlight, 1, "deletes go out in parallel")
        XCTAssertEqual(fake.seen("DELETE", "/entries/7").count, 2, "a transient failure is retried once")
        XCTAssertEqual(fake.seen("DELETE", "/entries/").count, 41)
    }

    // MARK: - Errors

    func testTheEntryLimitIsA409ThatNamesTheLimit() async throws {
        var settings = EmbeddedReadingLists.Settings()
        settings.maxEntries = 3
        try start(users: ["alice-token": .init(setUp: true, listID: 9, entries: FakeReadingLists.entries(3, editions: ["en"]))], settings: settings)
        let (status, body, http) = try json("PUT", "/saved/One_more?lang=en")
        XCTAssertEqual(status, 409)
        XCTAssertEqual(http.header("Content-Type"), "application/problem+json")
        XCTAssertEqual(body["type"] as? String, "urn:lede:problem:saved-limit")
        XCTAssertEqual(body["limit"] as? Int, 3)
        XCTAssertEqual(fake.seen("POST", "/entries").count, 1, "the save was sent once")
    }

    func testRefusedTokensAndTemporaryAccountsAre401s() async throws {
        try start(users: [:])
        let (missing, _, _) = try json("GET", "/saved", headers: [:])
        XCTAssertEqual(missing, 401)
        let (temp, body, http) = try json("GET", "/saved", headers: ["Authorization": "Bearer demo-temp"])
        XCTAssertEqual(temp, 401)
        XCTAssertEqual(body["type"] as? String, "urn:lede:problem:saved-needs-account")
        XCTAssertNotNil(http.header("WWW-Authenticate"))
        let (put, _, _) = try json("PUT", "/saved/Madrid?lang=en", headers: ["Authorization": "Bearer demo-temp"])
        XCTAssertEqual(put, 401)
        XCTAssertEqual(fake.seen("POST", "/").count, 0)
    }

    func testTheExtensionsErrorsMapInOnePlace() throws {
        func failure(_ status: Int, _ body: String) -> Error? {
            do { try ReadingListsFailure.read(UpstreamResponse(status: status, body: Array(body.utf8))) } catch { return error }
        }
        XCTAssertEqual(failure(400, #"{"errorKey":"readinglists-db-error-not-set-up","httpCode":400}"#) as? ReadingListsFailure, .notSetUp)
        XCTAssertEqual(failure(400, #"{"errorKey":"readinglists-db-error-entry-limit"}"#) as? ReadingListsFailure, .entryLimit)
        XCTAssertEqual(failure(401, #"{"errorKey":"rest-permission-denied-anon"}"#) as? ReadingListsFailure, .anonymous)
        XCTAssertEqual(failure(404, #"{"errorKey":"readinglists-db-error-no-such-list-entry"}"#) as? ReadingListsFailure, .noSuchEntry)
        XCTAssertEqual(failure(400, #"{"errorKey":"readinglists-db-error-title-too-long"}"#) as? ReadingListsFailure, .rejected(key: "readinglists-db-error-title-too-long"))
        XCTAssertEqual(failure(403, "<html>") as? UpstreamError, .notAuthorised, "a refused token, whatever the body")
        XCTAssertEqual(failure(500, "{}") as? UpstreamError, .unavailable(status: 500))
        XCTAssertEqual(failure(404, "not json") as? UpstreamError, .unavailable(status: 404), "no interface there: Wikimedia's side")
        XCTAssertEqual(Problem(readingLists: .rejected(key: "x")).status, 400)
        XCTAssertEqual(Problem(readingLists: .anonymous).status, 401)
    }

    // MARK: - Rules without sockets

    func testEditionsOfProjectsAndCanonicalTitles() {
        XCTAssertEqual(SavedRules.edition(ofProject: "https://de.wikipedia.org")?.code, "de")
        XCTAssertEqual(SavedRules.edition(ofProject: "https://de.m.wikipedia.org/")?.code, "de")
        XCTAssertEqual(SavedRules.edition(ofProject: "//zh-yue.wikipedia.org")?.code, "zh-yue")
        XCTAssertNil(SavedRules.edition(ofProject: "https://en.wiktionary.org"))
        XCTAssertNil(SavedRules.edition(ofProject: "https://xx.wikipedia.org"))
        XCTAssertNil(SavedRules.edition(ofProject: "@local"))
        XCTAssertEqual(SavedRules.canonicalTitle("albert__Einstein "), "Albert Einstein")
        XCTAssertEqual(SavedRules.canonicalTitle("Albert Einstein"), "Albert Einstein")
        // MediaWiki drops leading and trailing underscores too (ArticleTitle, for URLs, only spaces).
        XCTAssertEqual(SavedRules.canonicalTitle(" _albert__Einstein_ "), "Albert Einstein")
        XCTAssertEqual(SavedRules.canonicalTitle("_"), "")
        for t in ["Albert_Einstein", "albert__Einstein ", "a", "Python (programming language)", "x\ty", "Ødegaard_x", "2001:_A_Space_Odyssey"] {
            XCTAssertEqual(SavedRules.canonicalTitle(t), ArticleTitle.display(t), "the byte path agrees with MediaWiki's rules as ArticleTitle reads them: \(t)")
        }
        XCTAssertEqual(SavedRules.project(LanguageCode("it")!), "https://it.wikipedia.org")
        XCTAssertEqual(SavedRules.offset(ofContinue: SavedRules.continueToken(150)), 150)
        XCTAssertNil(SavedRules.offset(ofContinue: "150"))
    }

    func testMergeKeepsTheNewestFirstAndLeavesOtherProjectsOut() {
        let e: [ReadingListEntry] = [
            .init(id: 1, project: "https://en.wikipedia.org", title: "Old", created: "2026-01-01T00:00:00Z", updated: "2026-01-01T00:00:00Z"),
            .init(id: 2, project: "https://en.wiktionary.org", title: "word", created: "2026-02-01T00:00:00Z", updated: "2026-02-01T00:00:00Z"),
            .init(id: 3, project: "https://en.wikipedia.org", title: "New", created: "2026-03-01T00:00:00Z", updated: "2026-03-01T00:00:00Z"),
            .init(id: 4, project: "https://en.wikipedia.org", title: "old", created: "2026-04-01T00:00:00Z", updated: "2026-04-01T00:00:00Z"),
        ]
        let (items, skipped) = SavedRules.merge(e)
        XCTAssertEqual(skipped, 1)
        XCTAssertEqual(items.map(\.title), ["Old", "New"], "the newest spelling decides the place")
        XCTAssertEqual(items.map(\.entryIDs), [[4, 1], [3]])
        XCTAssertEqual(items.first?.savedAt, "2026-04-01T00:00:00Z")
    }

    /// The embedded default's demo users, as the README's curl examples show them.
    func testTheEmbeddedDemoListsServeTheTab() async throws {
        server = try startLede()
        base = "http://127.0.0.1:\(server.port)"
        let (status, body, _) = try json("GET", "/saved", headers: ["Authorization": "Bearer demo-alice"])
        XCTAssertEqual(status, 200)
        XCTAssertEqual(body["count"] as? Int, 12, "13 entries, one saved under two spellings")
        let items = body["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(Set(items.map { $0["lang"] as? String }), ["en", "de"])
        let bombay = items.first { $0["title"] as? String == "Bombay" }
        XCTAssertEqual((bombay?["card"] as? [String: Any])?["title"] as? String, "Mumbai", "a title that is now a redirect shows its target's card")
        let (bob, tab, _) = try json("GET", "/saved", headers: ["Authorization": "Bearer demo-bob"])
        XCTAssertEqual(bob, 200)
        XCTAssertEqual(tab["syncEnabled"] as? Bool, false)
    }
}
