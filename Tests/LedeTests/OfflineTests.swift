import Foundation
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

/// Saved articles offline: the sync token, which image size a reader downloads, which URLs a manifest may name, the
/// revisions call's steps (on a recorded answer), and `GET /offline` against fakes of the reading lists, the Action API
/// and PCS that count their calls.
final class OfflineRulesTests: XCTestCase {
    func testATokenReadsBackAndAnythingElseIsRefused() {
        let t = OfflineRules.SyncToken(list: 7, since: 1_795_940_081)
        let written = OfflineRules.write(t)
        XCTAssertEqual(OfflineRules.read(written), t)
        XCTAssertTrue(written.hasPrefix("o1.7.1795940081."))
        var tampered = written
        tampered.removeLast()
        tampered.append(written.last == "0" ? "1" : "0")
        for bad in ["", "o1", "o1.7.1795940081", "o1.8.1795940081." + written.split(separator: ".")[3], tampered, "o1.-7.1.abc",
                    "o2.7.1795940081.0", String(repeating: "9", count: 80), written + ".x"] {
            XCTAssertNil(OfflineRules.read(bad), bad)
        }
    }

    func testTheReaderGetsTheNarrowestSizeAtLeastItsWidthElseTheWidest() {
        func src(_ w: Int, _ scale: String) -> MediaSource {
            MediaSource(src: "//upload.wikimedia.org/wikipedia/commons/thumb/a/ab/X.jpg/\(w)px-X.jpg", scale: scale)
        }
        let item = MediaListItem(title: "File:X.jpg", type: "image", showInGallery: true, leadImage: false, src: nil,
                                 srcset: [src(320, "1x"), src(480, "1.5x"), src(640, "2x")])
        XCTAssertEqual(OfflineRules.image(item, width: 400)?.width, 480)
        XCTAssertEqual(OfflineRules.image(item, width: 640)?.url, "https://upload.wikimedia.org/wikipedia/commons/thumb/a/ab/X.jpg/640px-X.jpg")
        XCTAssertEqual(OfflineRules.image(item, width: 2000)?.width, 640, "none is wide enough: the widest")
        XCTAssertEqual(OfflineRules.image(item, width: 100)?.width, 320)
        XCTAssertEqual(OfflineRules.thumbWidth("https://upload.wikimedia.org/x/thumb/a/ab/Doc.pdf/page1-1200px-Doc.pdf.jpg"), 1200)
        XCTAssertNil(OfflineRules.thumbWidth("https://upload.wikimedia.org/wikipedia/commons/a/ab/X.jpg"))
        // Off Wikimedia's hosts: never in a manifest.
        let elsewhere = MediaListItem(title: "File:Y.jpg", type: "image", showInGallery: true, leadImage: false, src: "https://evil.example/640px-Y.jpg",
                                      srcset: [MediaSource(src: "//upload.wikimedia.org.evil.example/640px-Y.jpg", scale: "1x")])
        XCTAssertNil(OfflineRules.image(elsewhere, width: 640))
    }

    func testAManifestNamesOnlyWikimediasHostsOverHTTPS() {
        XCTAssertEqual(OfflineRules.wikimediaURL("//meta.wikimedia.org/api/rest_v1/data/css/mobile/base"), "https://meta.wikimedia.org/api/rest_v1/data/css/mobile/base")
        XCTAssertEqual(OfflineRules.wikimediaURL("https://en.wikipedia.org/api/rest_v1/data/i18n/pcs"), "https://en.wikipedia.org/api/rest_v1/data/i18n/pcs")
        for bad in ["http://meta.wikimedia.org/x", "//evil.example/wikimedia.org", "//wikimedia.org.evil.example/x", "javascript:alert(1)",
                    "//meta.wikimedia.org/x\"onload=", "/api/rest_v1/data/css", "//user@meta.wikimedia.org/x", ""] {
            XCTAssertNil(OfflineRules.wikimediaURL(bad), bad)
        }
        let m = OfflineRules.manifest(site: "https://en.wikipedia.org", page: "AC/DC", revision: 42, timestamp: nil,
                                      resources: ["//meta.wikimedia.org/api/rest_v1/data/css/mobile/base", "//evil.example/x.js",
                                                  "//meta.wikimedia.org/api/rest_v1/data/javascript/mobile/pcs", "//en.wikipedia.org/api/rest_v1/data/i18n/pcs",
                                                  "//meta.wikimedia.org/api/rest_v1/data/css/mobile/base"],
                                      media: [], width: 640)
        XCTAssertEqual(m.resources.map(\.kind), ["css", "javascript", "messages"], "each once, none elsewhere")
        XCTAssertEqual(m.html, "https://en.wikipedia.org/api/rest_v1/page/mobile-html/AC%2FDC/42")
    }

    func testChangedSinceCountsTheMarginAndAnUnknownStamp() {
        let since = 1_795_940_000
        XCTAssertTrue(OfflineRules.isSince(Timestamp.rfc3339(seconds: since + 60), since))
        XCTAssertTrue(OfflineRules.isSince(Timestamp.rfc3339(seconds: since - 2), since), "within the margin")
        XCTAssertFalse(OfflineRules.isSince(Timestamp.rfc3339(seconds: since - 3600), since))
        XCTAssertTrue(OfflineRules.isSince(nil, since), "unknown: listed again rather than left stale")
        XCTAssertTrue(OfflineRules.isSince("yesterday", since))
    }

    /// A recorded answer (the Android app's reading list titles, asked with underscores): each title followed
    /// through `normalized` to its page.
    func testTheRevisionsStepsResolveTheRecordedAnswer() throws {
        let client = WikimediaClient(transport: EmbeddedTransport())
        let envelope = try client.decode(RevisionsEnvelope.self, try RealAnswersTests.fixture("query_info_normalized"), kind: .revisions)
        let resolved = try XCTUnwrap(envelope.query).resolve(["Barack_Obama", "Joe_Biden", "Not asked"])
        XCTAssertEqual(resolved["Barack_Obama"]?.title, "Barack Obama")
        XCTAssertEqual(resolved["Barack_Obama"]?.pageID, 534366)
        XCTAssertEqual(resolved["Joe_Biden"]?.pageID, 145422)
        XCTAssertNil(resolved["Joe_Biden"]?.revision, "asked without prop=revisions: no revision, and not missing")
        XCTAssertEqual(resolved["Joe_Biden"]?.missing, false)
        XCTAssertNil(resolved["Not asked"])
        // An answer without the `normalized` step: the page is still found by the title's display form.
        let bare = try client.decode(RevisionsEnvelope.self, Array(#"{"query":{"pages":[{"pageid":1,"ns":0,"title":"Albert Einstein","lastrevid":5}]}}"#.utf8), kind: .revisions)
        XCTAssertEqual(try XCTUnwrap(bare.query).resolve(["Albert_Einstein"])["Albert_Einstein"]?.revision, 5)
    }

    func testRedirectsConversionsAndLoopsAreFollowedOnce() throws {
        let body = #"""
        {"batchcomplete":true,"curtimestamp":"2026-11-29T08:00:00Z","query":{"normalized":[{"from":"bombay","to":"Bombay"}],
        "redirects":[{"from":"Bombay","to":"Mumbai"},{"from":"A","to":"B"},{"from":"B","to":"A"}],
        "pages":[{"pageid":1,"ns":0,"title":"Mumbai","lastrevid":99,"revisions":[{"revid":99,"parentid":98,"timestamp":"2026-11-28T10:00:00Z"}]},
        {"ns":0,"title":"Gone","missing":true},{"title":"Bad|title","invalidreason":"x","invalid":true},{"pageid":"x"},
        {"pageid":3,"ns":0,"title":"A","lastrevid":"7"}]}}
        """#
        let client = WikimediaClient(transport: EmbeddedTransport())
        let envelope = try client.decode(RevisionsEnvelope.self, Array(body.utf8), kind: .revisions)
        XCTAssertEqual(envelope.curtimestamp, "2026-11-29T08:00:00Z")
        let r = try XCTUnwrap(envelope.query).resolve(["bombay", "Gone", "Bad|title", "A"])
        XCTAssertEqual(r["bombay"], PageRevision(title: "Mumbai", pageID: 1, revision: 99, timestamp: "2026-11-28T10:00:00Z"))
        XCTAssertEqual(r["Gone"]?.missing, true)
        XCTAssertEqual(r["Bad|title"]?.missing, true)
        XCTAssertEqual(r["A"]?.revision, 7, "a loop of redirects ends where it repeats; a revision as a string is read")
    }

    func testPCSOfflineResourcesSkipWhatIsNotAURL() throws {
        let client = WikimediaClient(transport: EmbeddedTransport())
        let urls = try client.decode(OfflineResourcesAnswer.self, Array(#"["//meta.wikimedia.org/api/rest_v1/data/css/mobile/base",7,null,"",{"x":1},"//en.wikipedia.org/api/rest_v1/data/i18n/pcs"]"#.utf8), kind: .offlineResources)
        XCTAssertEqual(urls.urls, ["//meta.wikimedia.org/api/rest_v1/data/css/mobile/base", "//en.wikipedia.org/api/rest_v1/data/i18n/pcs"])
    }
}

/// `GET /offline` for 300 saved articles against counting fakes: the reading lists (the embedded store, on a clock the
/// test holds), and the Action API's revisions and PCS's two calls answered by the test.
final class OfflineSyncTests: XCTestCase {
    /// The fake wiki: each title's revision and when it was saved; titles deleted; titles whose PCS calls fail.
    final class Wiki: Sendable {
        struct State: Sendable {
            var pages: [String: (revision: Int, timestamp: String)] = [:]
            var failing: Set<String> = []
        }
        let state = Mutex(State())
        let clock: EmbeddedClock

        init(titles: [String], clock: EmbeddedClock) {
            self.clock = clock
            state.withLock { s in for (i, t) in titles.enumerated() { s.pages[t] = (1_300_000_000 + i, "2026-11-01T00:00:00Z") } }
        }

        func edit(_ title: String) { state.withLock { $0.pages[title]!.revision += 1_000; $0.pages[title]!.timestamp = clock.stamp() } }
        func delete(_ title: String) { _ = state.withLock { $0.pages.removeValue(forKey: title) } }
        func fail(_ title: String) { _ = state.withLock { $0.failing.insert(title) } }

        static func parameters(_ r: FakeUpstream.Recorded) -> [String: String] {
            var out: [String: String] = [:]
            for p in ((r.query ?? "") + "&" + r.body).split(separator: "&") {
                let kv = p.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                out[PercentDecoding.decode(kv[0], plusAsSpace: true) ?? ""] = kv.count > 1 ? PercentDecoding.decode(kv[1], plusAsSpace: true) : ""
            }
            return out
        }

        /// The title in a PCS path (`/{lang}/api/rest_v1/page/<service>/<title>/<revision>`).
        static func title(_ r: FakeUpstream.Recorded) -> String {
            let parts = r.path.split(separator: "/")
            return (PercentDecoding.decode(parts[parts.count - 2], plusAsSpace: false) ?? "").replacingOccurrences(of: "_", with: " ")
        }

        func revisions(_ r: FakeUpstream.Recorded) -> (Int, String) {
            let titles = (Self.parameters(r)["titles"] ?? "").split(separator: "|").map(String.init)
            let pages = state.withLock { s in
                titles.map { t -> String in
                    guard let p = s.pages[t] else { return "{\"ns\":0,\"title\":\(JSONText.quote(t)),\"missing\":true}" }
                    return "{\"pageid\":\(p.revision % 100_000),\"ns\":0,\"title\":\(JSONText.quote(t)),\"lastrevid\":\(p.revision),\"revisions\":[{\"revid\":\(p.revision),\"parentid\":1,\"timestamp\":\"\(p.timestamp)\"}]}"
                }
            }
            return (200, "{\"batchcomplete\":true,\"curtimestamp\":\"\(clock.stamp())\",\"query\":{\"pages\":[\(pages.joined(separator: ","))]}}")
        }

        func pcs(_ r: FakeUpstream.Recorded, resources: Bool) -> (Int, String) {
            let title = Self.title(r)
            if state.withLock({ $0.failing.contains(title) }) { return (503, "{\"detail\":\"busy\"}") }
            if resources {
                return (200, #"["//meta.wikimedia.org/api/rest_v1/data/css/mobile/base","//meta.wikimedia.org/api/rest_v1/data/css/mobile/pcs","//meta.wikimedia.org/api/rest_v1/data/javascript/mobile/pcs","//en.wikipedia.org/api/rest_v1/data/css/mobile/site","//en.wikipedia.org/api/rest_v1/data/i18n/pcs"]"#)
            }
            let file = title.replacingOccurrences(of: " ", with: "_") + ".jpg"
            let srcset = [(320, "1x"), (480, "1.5x"), (640, "2x")].map { w, s in "{\"src\":\"//upload.wikimedia.org/wikipedia/commons/thumb/a/ab/\(file)/\(w)px-\(file)\",\"scale\":\"\(s)\"}" }
            return (200, "{\"revision\":\"1\",\"tid\":\"t\",\"items\":[{\"title\":\"File:\(file)\",\"type\":\"image\",\"showInGallery\":true,\"srcset\":[\(srcset.joined(separator: ","))]}]}")
        }
    }

    var fake: FakeUpstream!
    var server: HTTPServer!
    var wiki: Wiki!
    let clock = EmbeddedClock()
    let titles = (0..<300).map { "Saved article \($0)" }
    let alice = ["Authorization": "Bearer alice"]

    override func setUpWithError() throws {
        clock.hold(at: 1_795_900_000)
        var settings = EmbeddedReadingLists.Settings()
        settings.clock = clock
        let entries = titles.enumerated().map { i, t in
            let at = EmbeddedReadingLists.timestamp(1_795_000_000 - i * 60)
            return EmbeddedReadingLists.Entry(id: 1_000 + i, project: "https://en.wikipedia.org", title: t.replacingOccurrences(of: " ", with: "_"), created: at, updated: at)
        }
        let store = EmbeddedReadingLists(users: ["alice": .init(setUp: true, listID: 41, entries: entries), "bob": .init(setUp: true, listID: 42)],
                                         settings: settings)
        fake = try FakeUpstream(readingLists: store)
        wiki = Wiki(titles: titles, clock: clock)
        fake.set("revisions", .handler { [wiki] in wiki!.revisions($0) })
        fake.set("offline-resources", .handler { [wiki] in wiki!.pcs($0, resources: true) })
        fake.set("media", .handler { [wiki] in wiki!.pcs($0, resources: false) })
        server = try startLede { [fake] in $0.upstream = fake!.template; $0.upstreamTimeout = 2 }
    }

    override func tearDown() { server.shutdown(); server.waitUntilStopped(); fake.stop() }

    func calls(_ kind: String) -> Int { fake.requests(kind: kind).count }
    var pcsCalls: Int { calls("offline-resources") + calls("media") }

    func sync(_ token: String? = nil, _ headers: [String: String]? = nil) throws -> [String: Any] {
        let r = try get(server, "/offline" + (token.map { "?since=" + $0 } ?? ""), headers ?? alice)
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertEqual(r.header("Cache-Control"), "private, no-store")
        return r.json
    }

    func articles(_ answer: [String: Any]) -> [[String: Any]] { answer["articles"] as? [[String: Any]] ?? [] }

    func testThreeHundredSavedArticlesTakeSixRevisionCallsThenNothingUntilOneChanges() throws {
        // The first sync: every article, whole.
        let first = try sync()
        XCTAssertEqual(first["complete"] as? Bool, true)
        XCTAssertEqual(first["count"] as? Int, 300)
        let listed = articles(first)
        XCTAssertEqual(listed.count, 300)
        XCTAssertTrue(listed.allSatisfy { $0["status"] as? String == "ok" })
        XCTAssertLessThanOrEqual(calls("revisions"), 6, "50 titles a call")
        XCTAssertEqual(pcsCalls, 600, "two PCS calls an article (at most three)")
        let one = try XCTUnwrap(listed.first { $0["title"] as? String == "Saved article 7" })
        XCTAssertEqual(one["html"] as? String, "http://127.0.0.1:\(fake.server.port)/en/api/rest_v1/page/mobile-html/Saved_article_7/1300000007")
        XCTAssertEqual((one["resources"] as? [[String: Any]])?.count, 5)
        let image = try XCTUnwrap((one["images"] as? [[String: Any]])?.first)
        XCTAssertEqual(image["width"] as? Int, 640, "a phone's width by default")
        XCTAssertEqual(image["file"] as? String, "File:Saved_article_7.jpg")
        let token = try XCTUnwrap(first["sync"] as? String)

        // Nothing changed: no PCS call, nothing listed.
        clock.hold(at: 1_795_900_100)
        let (revisionsBefore, pcsBefore) = (calls("revisions"), pcsCalls)
        let second = try sync(token)
        XCTAssertEqual(second["complete"] as? Bool, false)
        XCTAssertEqual(articles(second).count, 0)
        XCTAssertEqual((second["removed"] as? [Any])?.count, 0)
        XCTAssertEqual(pcsCalls, pcsBefore, "no PCS call when nothing changed")
        XCTAssertLessThanOrEqual(calls("revisions") - revisionsBefore, 6)
        XCTAssertLessThan(try get(server, "/offline?since=" + token, alice).body.count, 200, "an unchanged list is one small answer")

        // One article edited: only that one, and its two PCS calls.
        clock.hold(at: 1_795_900_200)
        wiki.edit("Saved article 42")
        clock.hold(at: 1_795_900_260)   // the next read a minute after the edit (in the same second, it would be listed twice)
        let token2 = try XCTUnwrap(second["sync"] as? String)
        let third = try sync(token2)
        XCTAssertEqual(articles(third).map { $0["title"] as? String }, ["Saved article 42"])
        XCTAssertEqual(articles(third).first?["revision"] as? Int, 1_300_001_042)
        XCTAssertEqual(pcsCalls - pcsBefore, 2)

        // One taken off Saved (through Lede), one deleted on the wiki: both removed, by title.
        clock.hold(at: 1_795_900_300)
        XCTAssertEqual(try get(server, "/saved/Saved_article_3", alice, method: "DELETE").status, 204)
        wiki.delete("Saved article 9")
        let fourth = try sync(try XCTUnwrap(third["sync"] as? String))
        let removed = (fourth["removed"] as? [[String: String]]) ?? []
        XCTAssertEqual(Set(removed.map { "\($0["title"]!):\($0["reason"]!)" }), ["Saved article 3:unsaved", "Saved article 9:deleted"])
        XCTAssertEqual(fourth["count"] as? Int, 299)
        XCTAssertEqual(articles(fourth).count, 0)
    }

    func testAPCSFailureForOneArticleIsItsPlaceholderAndTheTokenDoesNotSkipIt() throws {
        wiki.fail("Saved article 5")
        let first = try sync()
        let listed = articles(first)
        XCTAssertEqual(listed.count, 300)
        let failed = try XCTUnwrap(listed.first { $0["title"] as? String == "Saved article 5" })
        XCTAssertEqual(failed["status"] as? String, "placeholder")
        XCTAssertEqual(failed["reason"] as? String, "upstream-error")
        XCTAssertNotNil(failed["retryAfterSeconds"] as? Int)
        XCTAssertNil(failed["html"])
        XCTAssertEqual(listed.filter { $0["status"] as? String == "ok" }.count, 299, "the rest whole")
        // Its token asks for the whole list again: the failed article is not skipped by the next sync.
        let token = try XCTUnwrap(first["sync"] as? String)
        XCTAssertEqual(OfflineRules.read(token)?.since, 0)
        wiki.state.withLock { _ = $0.failing.remove("Saved article 5") }
        let pcsBefore = pcsCalls
        let second = try sync(token)
        XCTAssertEqual(second["complete"] as? Bool, true)
        XCTAssertEqual(articles(second).filter { $0["status"] as? String == "ok" }.count, 300)
        XCTAssertEqual(pcsCalls - pcsBefore, 2, "the others' manifests are kept per revision: only the one that failed is asked for")
    }

    func testAnotherUsersOrAMalformedTokenIsA400() throws {
        let token = try XCTUnwrap(try sync()["sync"] as? String)
        for (t, who) in [(token, ["Authorization": "Bearer bob"]), ("o1.41.12.zz", alice), ("nonsense", alice)] {
            let r = try get(server, "/offline?since=" + t, who)
            XCTAssertEqual(r.status, 400, t)
            XCTAssertEqual(r.header("Content-Type"), "application/problem+json")
            XCTAssertEqual(r.json["parameter"] as? String, "since")
            XCTAssertEqual(r.json["type"] as? String, "urn:lede:problem:invalid-sync-token")
        }
        XCTAssertEqual(try get(server, "/offline", ["Authorization": "Bearer bob"]).json["count"] as? Int, 0, "bob's empty list is his own")
        XCTAssertEqual(try get(server, "/offline").status, 401)
        XCTAssertEqual(try get(server, "/offline?width=12", alice).status, 400)
    }

    func testJSONLinesSendTheHeadEachArticleAndTheTokenLast() throws {
        let r = try get(server, "/offline", ["Authorization": "Bearer alice", "Accept": "application/jsonl"])
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.header("Content-Type"), "application/jsonl")
        let lines = r.text.split(separator: "\n").map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
        XCTAssertEqual(lines.count, 302)
        XCTAssertEqual(lines.first?["articles"] as? Int, 300)
        XCTAssertEqual(lines.first?["complete"] as? Bool, true)
        XCTAssertEqual(Set(lines[1...300].compactMap { $0["title"] as? String }).count, 300)
        XCTAssertNotNil(OfflineRules.read(try XCTUnwrap(lines.last?["sync"] as? String)))
    }

    /// A token older than the reading lists keep removals for: the whole list again, without asking for changes.
    func testATokenOlderThanTheRetentionGetsTheWholeList() throws {
        let old = OfflineRules.write(.init(list: 41, since: 1_795_900_000 - 40 * 86_400))
        let answer = try sync(old)
        XCTAssertEqual(answer["complete"] as? Bool, true)
        XCTAssertEqual(articles(answer).count, 300)
        XCTAssertEqual(calls("readinglists-changes"), 0)
    }
}

/// The embedded default answers both routes for the demo users with no network.
final class OfflineEmbeddedTests: XCTestCase {
    func testTheDemoUsersSavedArticlesAndOneRevisionsManifest() throws {
        let server = try startLede()
        defer { server.shutdown(); server.waitUntilStopped() }
        let (status, body) = try get(server, "/offline", ["Authorization": "Bearer demo-alice"]).statusAndJSON
        XCTAssertEqual(status, 200)
        let articles = try XCTUnwrap(body["articles"] as? [[String: Any]])
        XCTAssertEqual(articles.count, body["count"] as? Int)
        let bombay = try XCTUnwrap(articles.first { $0["title"] as? String == "Bombay" })
        XCTAssertEqual(bombay["page"] as? String, "Mumbai", "a saved redirect: the page it names now")
        let einstein = try XCTUnwrap(articles.first { $0["title"] as? String == "Albert Einstein" && $0["lang"] as? String == "en" })
        let revision = try XCTUnwrap(einstein["revision"] as? Int)
        XCTAssertTrue((einstein["html"] as? String)?.hasSuffix("/page/mobile-html/Albert_Einstein/\(revision)") == true)
        XCTAssertFalse((einstein["images"] as? [Any] ?? []).isEmpty)

        let one = try get(server, "/article/Albert_Einstein/offline?lang=en&revision=\(revision)")
        XCTAssertEqual(one.status, 200)
        XCTAssertEqual(one.header("Cache-Control"), "public, max-age=31536000, immutable")
        XCTAssertEqual(one.header("Vary"), "Accept-Encoding")
        let etag = try XCTUnwrap(one.header("ETag"))
        XCTAssertEqual(one.json["revision"] as? Int, revision)
        XCTAssertEqual(try get(server, "/article/Albert_Einstein/offline?lang=en&revision=\(revision)", ["If-None-Match": etag]).status, 304)
        let current = try get(server, "/article/Albert_Einstein/offline?lang=en")
        XCTAssertEqual(current.header("Cache-Control"), "public, max-age=60")
        XCTAssertEqual(current.json["revision"] as? Int, revision)
        XCTAssertEqual(try get(server, "/article/No_such_page_at_all/offline?lang=en").status, 404)
        XCTAssertEqual(try get(server, "/article/Albert_Einstein/offline?revision=0").status, 400)
        XCTAssertEqual(try get(server, "/article/Albert_Einstein/offline?revision=1234567890123").status, 400)
    }

    /// Saved, then edited through Lede's editor: the next sync lists that article alone.
    func testAnEditOnTheEmbeddedWikiListsThatArticleAlone() throws {
        let server = try startLede()
        defer { server.shutdown(); server.waitUntilStopped() }
        let auth = ["Authorization": "Bearer demo-alice"]
        let token = try XCTUnwrap(try get(server, "/offline", auth).json["sync"] as? String)
        XCTAssertEqual((try get(server, "/offline?since=" + token, auth).json["articles"] as? [Any])?.count, 0)
        let editor = try get(server, "/article/Vondelpark/edit?lang=en", auth).json
        let base = try XCTUnwrap(editor["revision"] as? Int)
        let save = try get(server, "/article/Vondelpark/edit?lang=en", auth.merging(["Content-Type": "application/json"]) { a, _ in a }, method: "POST",
                           body: Array("{\"wikitext\":\"Vondelpark is a park.\",\"baseRevision\":\(base),\"summary\":\"offline test\"}".utf8))
        XCTAssertEqual(save.status, 200, save.text)
        let after = try get(server, "/offline?since=" + token, auth).json
        XCTAssertEqual((after["articles"] as? [[String: Any]])?.map { $0["title"] as? String }, ["Vondelpark"])
    }
}
