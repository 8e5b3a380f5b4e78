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

/// The editor's view of `FakeUpstream`: the Action API answering the editor's calls like MediaWiki does with
/// `errorformat=html` — the editor query, `meta=tokens` (a fresh token per call, the anonymous `+\` without
/// credentials) and `action=edit`, whose answers a test scripts in order — and any other call with a `badvalue`
/// error. Every call is recorded.
final class FakeActionAPI: Sendable {
    struct Call: Sendable {
        var method: String
        /// The query's or the form's fields, decoded.
        var fields: [String: String]
        /// The form body exactly as sent (POST).
        var body: String
        var authorization: String?
        var forwardedFor: String? = nil
        var kind: String { fields["action"] == "edit" ? "edit" : fields["meta"] == "tokens" ? "token" : fields["intestactions"] == "edit" ? "editor" : "other" }
    }
    private struct State: Sendable {
        var calls: [Call] = []
        var tokens = 0
        /// The edit calls' answers, in order (the last repeats).
        var edits: [String] = [FakeActionAPI.success]
        var editDelay = 0.0
        var editor = FakeActionAPI.editorAnswer()
    }
    /// The script and what it counted, in a box the fake's handlers share.
    private final class Script: Sendable { let state = Mutex(State()) }
    private let script = Script()
    let upstream: FakeUpstream
    var template: String { upstream.template }

    init() throws {
        upstream = try FakeUpstream()
        let script = self.script
        let answer: FakeUpstream.Behaviour = .asyncHandler { r in
            let call = Call(method: r.method, fields: Self.fields(r.method == "POST" ? r.body : r.query ?? ""), body: r.body,
                            authorization: r.headers["Authorization"], forwardedFor: r.headers["X-Forwarded-For"])
            let (text, delay): (String, Double) = script.state.withLock { s in
                s.calls.append(call)
                switch call.kind {
                case "token":
                    s.tokens += 1
                    return (call.authorization == nil ? "{\"batchcomplete\":true,\"query\":{\"tokens\":{\"csrftoken\":\"+\\\\\"}}}"
                                                      : "{\"batchcomplete\":true,\"query\":{\"tokens\":{\"csrftoken\":\"tok-\(s.tokens)+\\\\\"}}}", 0)
                case "edit":
                    let next = s.edits.count > 1 ? s.edits.removeFirst() : s.edits[0]
                    return (next, s.editDelay)
                case "editor": return (s.editor, 0)
                default: return ("{\"errors\":[{\"code\":\"badvalue\",\"html\":\"Unexpected call.\"}]}", 0)
                }
            }
            if delay > 0 { try? await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
            return (200, text)
        }
        upstream.setOthers(answer)
    }

    func stop() { upstream.stop() }

    var calls: [Call] { script.state.withLock { $0.calls } }
    func calls(_ kind: String) -> [Call] { calls.filter { $0.kind == kind } }
    func script(edits: [String], delay: Double = 0) { script.state.withLock { $0.edits = edits; $0.editDelay = delay } }
    func script(editor: String) { script.state.withLock { $0.editor = editor } }

    static func fields(_ encoded: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in encoded.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            out[String(kv[0]).removingPercentEncoding ?? ""] = kv.count > 1 ? String(kv[1]).removingPercentEncoding ?? "" : ""
        }
        return out
    }

    static let success = "{\"edit\":{\"result\":\"Success\",\"pageid\":736,\"title\":\"Albert Einstein\",\"contentmodel\":\"wikitext\",\"oldrevid\":1250000000,\"newrevid\":1250000001,\"newtimestamp\":\"2026-11-27T10:00:00Z\",\"watched\":true}}"

    static func error(_ code: String, _ html: String, data: String? = nil) -> String {
        "{\"errors\":[{\"code\":\"\(code)\",\"html\":\(JSONText.quote(html))\(data.map { ",\"data\":\($0)" } ?? ""),\"module\":\"edit\"}],\"docref\":\"See https://en.wikipedia.org/w/api.php for API usage.\",\"servedby\":\"mw-api-ext.eqiad.main-1\"}"
    }

    static let blockinfo = "{\"blockinfo\":{\"blockid\":17,\"blockedby\":\"Ad<b>min</b>\",\"blockedbyid\":2,\"blockreason\":\"[[WP:EW|Edit warring]] &amp; more\",\"blockedtimestamp\":\"2026-11-19T12:00:00Z\",\"blockexpiry\":\"2026-12-31T00:00:00Z\",\"blockpartial\":true,\"blocknocreate\":false,\"blockanononly\":false}}"

    /// The editor's answer as MediaWiki gives it (formatversion=2, errorformat=html).
    static func editorAnswer(wikitext: String = "=== Early life ===\nEinstein was born in Ulm, Württemberg – 日本語 too.\n",
                             refusals: String = "", anon: Bool = false, protection: String = "") -> String {
        let userinfo = anon ? "{\"id\":0,\"name\":\"192.0.2.7\",\"anon\":true}" : "{\"id\":4242,\"name\":\"Alice\"}"
        return "{\"batchcomplete\":true,\"query\":{\"pages\":[{\"pageid\":736,\"ns\":0,\"title\":\"Albert Einstein\",\"contentmodel\":\"wikitext\",\"pagelanguage\":\"en\",\"pagelanguagehtmlcode\":\"en\",\"pagelanguagedir\":\"ltr\",\"touched\":\"2026-11-26T09:00:00Z\",\"lastrevid\":1250000000,\"length\":180000,\"protection\":[\(protection)],\"restrictiontypes\":[\"edit\",\"move\"],\"actions\":{\"edit\":[\(refusals)]},\"revisions\":[{\"revid\":1250000000,\"parentid\":1249999000,\"timestamp\":\"2026-11-26T08:59:00Z\",\"slots\":{\"main\":{\"contentmodel\":\"wikitext\",\"contentformat\":\"text/x-wiki\",\"content\":\(JSONText.quote(wikitext))}}}]}],\"userinfo\":\(userinfo)}}"
    }
}

final class EditTests: XCTestCase {
    var fake: FakeActionAPI!
    var server: HTTPServer!
    var base = ""
    let alice = ["Authorization": "Bearer alice-token"]

    /// `anonymousEdits`: most tests here describe a deployment that sends anonymous edits (`--anonymous-edits on`);
    /// the default, off, has tests of its own.
    func start(editTimeout: Double = 15, anonymousEdits: Bool = true) throws {
        fake = try FakeActionAPI()
        server = try startLede { [fake] in
            $0.upstream = fake!.template
            $0.upstreamTimeout = 2
            $0.editTimeout = editTimeout
            $0.anonymousEdits = anonymousEdits
        }
        base = "http://127.0.0.1:\(server.port)"
    }

    override func tearDown() { server?.shutdown(); server?.waitUntilStopped(); fake?.stop() }

    func call(_ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil) throws -> (Int, [String: Any], TestResponse) {
        try get(server, path, headers, method: method, body: body.map { [UInt8]($0) } ?? []).statusJSONAndResponse
    }

    func save(_ fields: [String: Any], headers: [String: String]? = nil, path: String = "/article/Albert_Einstein/edit?lang=en") throws -> (Int, [String: Any], TestResponse) {
        var h = headers ?? alice
        h["Content-Type"] = "application/json"
        return try call("POST", path, headers: h, body: try JSONSerialization.data(withJSONObject: fields))
    }

    let edit: [String: Any] = ["section": 2, "wikitext": "=== Early life ===\nBorn in Ulm – Württemberg 日本 & 100% \"sure\"+\n", "summary": "Fix: birth place",
                               "baseRevision": 1250000000, "minor": true]

    // MARK: - Opening the editor

    /// Seed 000: "Given that the current article can be edited, When I tap the pencil icon, Then I should see the Editing view."
    func testOpeningTheEditorIsOneQueryWithTheSectionsWikitextItsRevisionAndWhetherTheUserMayEdit() async throws {
        try start()
        let (status, body, http) = try call("GET", "/article/Albert_Einstein/edit?lang=en&section=2", headers: alice)
        XCTAssertEqual(status, 200)
        XCTAssertEqual(http.header("Cache-Control"), "private, no-store")
        XCTAssertEqual(body["title"] as? String, "Albert Einstein")
        XCTAssertEqual(body["section"] as? Int, 2)
        XCTAssertEqual(body["revision"] as? Int, 1250000000)
        XCTAssertEqual(body["wikitext"] as? String, "=== Early life ===\nEinstein was born in Ulm, Württemberg – 日本語 too.\n")
        XCTAssertEqual(body["canEdit"] as? Bool, true)
        XCTAssertEqual((body["reasons"] as? [Any])?.count, 0)
        XCTAssertEqual((body["notices"] as? [Any])?.count, 0)
        let calls = fake.calls
        XCTAssertEqual(calls.count, 1, "one query opens the editor")
        let q = try XCTUnwrap(calls.first?.fields)
        XCTAssertEqual(q["rvsection"], "2"); XCTAssertEqual(q["titles"], "Albert_Einstein")
        XCTAssertEqual(q["prop"], "revisions|info"); XCTAssertEqual(q["rvprop"], "content|ids|timestamp"); XCTAssertEqual(q["rvslots"], "main")
        XCTAssertEqual(q["intestactions"], "edit"); XCTAssertEqual(q["intestactionsdetail"], "full"); XCTAssertEqual(q["inprop"], "protection")
        XCTAssertEqual(q["meta"], "userinfo|siteinfo"); XCTAssertEqual(q["siprop"], "autocreatetempuser"); XCTAssertEqual(q["errorformat"], "html")
        XCTAssertEqual(calls.first?.authorization, "Bearer alice-token")
    }

    func testARefusedUserSeesEachReasonAsTextWithItsBlockAndTheProtection() async throws {
        try start()
        let refusals = "{\"code\":\"blockedtext-partial\",\"html\":\"<b>You have been blocked</b> from editing this page by <a href=\\\"/wiki/User:Admin\\\">Admin</a>.\",\"data\":\(FakeActionAPI.blockinfo)},"
            + "{\"code\":\"protectedpage\",\"html\":\"This page has been protected &amp; locked.\"}"
        fake.script(editor: FakeActionAPI.editorAnswer(refusals: refusals, protection: "{\"type\":\"edit\",\"level\":\"sysop\",\"expiry\":\"2027-01-01T00:00:00Z\"},{\"type\":\"move\",\"level\":\"sysop\",\"expiry\":\"infinity\"}"))
        let (status, body, _) = try call("GET", "/article/Albert_Einstein/edit?lang=en&section=2", headers: alice)
        XCTAssertEqual(status, 200)
        XCTAssertEqual(body["canEdit"] as? Bool, false)
        let reasons = try XCTUnwrap(body["reasons"] as? [[String: Any]])
        XCTAssertEqual(reasons.map { $0["code"] as? String }, ["blockedtext-partial", "protectedpage"])
        XCTAssertEqual(reasons[0]["text"] as? String, "You have been blocked from editing this page by Admin.")
        XCTAssertEqual(reasons[1]["text"] as? String, "This page has been protected & locked.")
        let block = try XCTUnwrap(reasons[0]["block"] as? [String: Any])
        XCTAssertEqual(block["by"] as? String, "Ad<b>min</b>", "a user name is text as it is")
        XCTAssertEqual(block["reason"] as? String, "[[WP:EW|Edit warring]] & more")
        XCTAssertEqual(block["expiry"] as? String, "2026-12-31T00:00:00Z")
        XCTAssertEqual(block["partial"] as? Bool, true)
        XCTAssertNil(reasons[1]["block"])
        let protection = try XCTUnwrap(body["protection"] as? [[String: String]])
        XCTAssertEqual(protection, [["type": "edit", "level": "sysop", "expiry": "2027-01-01T00:00:00Z"], ["type": "move", "level": "sysop", "expiry": "infinity"]])
    }

    func testWithoutCredentialsTheEditorIsAnAnonymousOneAndSaysTheEditWillBePublic() async throws {
        try start()
        fake.script(editor: FakeActionAPI.editorAnswer(anon: true, protection: "{\"type\":\"edit\",\"level\":\"autoconfirmed\",\"expiry\":\"infinity\"}"))
        let (status, body, _) = try call("GET", "/article/Albert_Einstein/edit?lang=en")
        XCTAssertEqual(status, 200)
        XCTAssertTrue(body["section"] is NSNull, "no section: the whole page")
        let notices = try XCTUnwrap(body["notices"] as? [String])
        XCTAssertEqual(notices.count, 2)
        XCTAssertTrue(notices[0].contains("IP address"))
        XCTAssertEqual(notices[1], "This page is protected: only autoconfirmed users may edit it.", "MediaWiki's group name, not \"registered\"")
        let call = try XCTUnwrap(fake.calls.first)
        XCTAssertNil(call.authorization); XCTAssertNil(call.fields["rvsection"])
    }

    func testAMissingSectionOrPageIsA404AndABadSectionA400() async throws {
        try start()
        fake.script(editor: "{\"errors\":[{\"code\":\"nosuchsection\",\"html\":\"There is no section 9 in r1250000000.\",\"module\":\"query+revisions\"}]}")
        var (status, body, _) = try call("GET", "/article/Albert_Einstein/edit?lang=en&section=9", headers: alice)
        XCTAssertEqual(status, 404); XCTAssertEqual(body["type"] as? String, "urn:lede:problem:not-found")
        fake.script(editor: "{\"batchcomplete\":true,\"query\":{\"pages\":[{\"ns\":0,\"title\":\"Nope\",\"missing\":true,\"actions\":{\"edit\":[]}}],\"userinfo\":{\"id\":0,\"name\":\"x\",\"anon\":true}}}")
        (status, body, _) = try call("GET", "/article/Nope/edit?lang=en", headers: alice)
        XCTAssertEqual(status, 404)
        let before = fake.calls.count
        (status, body, _) = try call("GET", "/article/Albert_Einstein/edit?lang=en&section=-1", headers: alice)
        XCTAssertEqual(status, 400); XCTAssertEqual(body["type"] as? String, "urn:lede:problem:invalid-parameter")
        XCTAssertEqual(fake.calls.count, before, "nothing asked for a bad request")
    }

    // MARK: - Saving

    func testASaveIsOneTokenAndOneEditWhoseFormIsWhatTheAppsSend() async throws {
        try start()
        let (status, body, http) = try save(edit, headers: alice.merging(["Accept-Language": "en"]) { a, _ in a })
        XCTAssertEqual(status, 200)
        XCTAssertEqual(body["result"] as? String, "saved")
        XCTAssertEqual(body["revision"] as? Int, 1250000001)
        XCTAssertEqual(body["previousRevision"] as? Int, 1250000000)
        XCTAssertEqual(http.header("Cache-Control"), "private, no-store")
        XCTAssertEqual(fake.calls.map(\.kind), ["token", "edit"])
        let sent = try XCTUnwrap(fake.calls("edit").first)
        XCTAssertEqual(sent.method, "POST")
        XCTAssertEqual(sent.authorization, "Bearer alice-token")
        // Percent-encoded UTF-8, fields in the apps' order, assert=user for a signed-in user, the reader's language
        // (Accept-Language: en, as the phones send it), the token last.
        XCTAssertEqual(sent.body, "action=edit&format=json&formatversion=2&errorformat=html&title=Albert_Einstein&section=2"
            + "&text=%3D%3D%3D%20Early%20life%20%3D%3D%3D%0ABorn%20in%20Ulm%20%E2%80%93%20W%C3%BCrttemberg%20%E6%97%A5%E6%9C%AC%20%26%20100%25%20%22sure%22%2B%0A"
            + "&summary=Fix%3A%20birth%20place&baserevid=1250000000&minor=1&assert=user&uselang=en&token=tok-1%2B%5C")
        XCTAssertEqual(sent.fields["text"], edit["wikitext"] as? String)
    }

    func testByDefaultASaveWithoutAnAccountIsRefusedAndNothingIsSentToWikimedia() async throws {
        try start(anonymousEdits: false)
        var anonymous = edit
        anonymous["section"] = nil
        let (status, problem, http) = try save(anonymous, headers: [:])
        XCTAssertEqual(status, 401)
        XCTAssertEqual(problem["type"] as? String, "urn:lede:problem:edit-needs-account")
        XCTAssertEqual(http.header("WWW-Authenticate"), BearerAuthorization.challenge)
        XCTAssertTrue(fake.calls.isEmpty, "no token, no edit: nothing went to Wikimedia")
        // With an account, the same deployment saves.
        let (saved, _, _) = try save(edit)
        XCTAssertEqual(saved, 200)
        XCTAssertEqual(fake.calls("edit").count, 1)
    }

    func testByDefaultTheEditorWithoutAnAccountSaysItNeedsOne() async throws {
        try start(anonymousEdits: false)
        fake.script(editor: FakeActionAPI.editorAnswer(anon: true, protection: "{\"type\":\"edit\",\"level\":\"autoconfirmed\",\"expiry\":\"infinity\"}"))
        let (status, body, _) = try call("GET", "/article/Albert_Einstein/edit?lang=en")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(body["canEdit"] as? Bool, false)
        let reasons = try XCTUnwrap(body["reasons"] as? [[String: Any]])
        XCTAssertEqual(reasons.first?["code"] as? String, "needs-account")
        XCTAssertTrue((reasons.first?["text"] as? String ?? "").contains("account"))
        let notices = try XCTUnwrap(body["notices"] as? [String])
        XCTAssertFalse(notices.contains { $0.contains("IP address") }, "nothing will be saved as an IP: no IP notice")
        XCTAssertNotNil(body["wikitext"] as? String, "the text is still there to read")
    }

    func testAnAnonymousSaveSendsTheAnonymousTokenAndNoAssert() async throws {
        try start()
        var anonymous = edit
        anonymous["minor"] = nil
        anonymous["section"] = nil
        let (status, _, _) = try save(anonymous, headers: [:])
        XCTAssertEqual(status, 200)
        let sent = try XCTUnwrap(fake.calls("edit").first)
        XCTAssertNil(sent.authorization)
        XCTAssertNil(sent.fields["assert"]); XCTAssertNil(sent.fields["section"]); XCTAssertNil(sent.fields["minor"])
        XCTAssertEqual(sent.fields["token"], "+\\")
        // Sent once, for the address it came from: Wikimedia (trusting this deployment as a proxy) attributes it there.
        XCTAssertEqual(fake.calls.map(\.kind), ["token", "edit"])
        XCTAssertEqual(fake.calls.map { $0.forwardedFor ?? "-" }, ["127.0.0.1", "127.0.0.1"], "the token and the edit carry X-Forwarded-For")
    }

    /// Temporary accounts (MediaWiki 1.42+, on Wikimedia's wikis): an anonymous edit makes one, and its edits are
    /// attributed to it — the IP notice would be wrong.
    func testTemporaryAccountsReplaceTheIPNotice() async throws {
        try start()
        func notices(_ answer: String, _ headers: [String: String]) async throws -> [String] {
            fake.script(editor: answer)
            let (status, body, _) = try call("GET", "/article/Albert_Einstein/edit?lang=en", headers: headers)
            XCTAssertEqual(status, 200)
            return body["notices"] as? [String] ?? []
        }
        let plain = FakeActionAPI.editorAnswer()
        // A user on a temporary account.
        let temp = plain.replacingOccurrences(of: "\"userinfo\":{\"id\":4242,\"name\":\"Alice\"}", with: "\"userinfo\":{\"id\":90001,\"name\":\"~2026-31337-4\",\"temp\":true}")
        XCTAssertNotEqual(temp, plain)
        var n = try await notices(temp, alice)
        XCTAssertTrue(n.contains { $0.contains("temporary account") }, "\(n)"); XCTAssertFalse(n.contains { $0.contains("IP address") })
        // An anonymous reader on a wiki that makes temporary accounts.
        let anon = FakeActionAPI.editorAnswer(anon: true).replacingOccurrences(of: "\"userinfo\":", with: "\"autocreatetempuser\":{\"enabled\":true,\"matchPattern\":\"~$1\"},\"userinfo\":")
        n = try await notices(anon, [:])
        XCTAssertTrue(n.contains { $0.contains("temporary account will be created") }, "\(n)"); XCTAssertFalse(n.contains { $0.contains("IP address") })
        // One that does not: the IP notice.
        n = try await notices(FakeActionAPI.editorAnswer(anon: true), [:])
        XCTAssertTrue(n.contains { $0.contains("IP address") }, "\(n)")
        // The save that made a temporary account names it, so the app can say whose the edit is.
        fake.script(edits: [FakeActionAPI.success.replacingOccurrences(of: "\"watched\":true", with: "\"watched\":true,\"tempusercreated\":\"~2026-31337-5\",\"tempusercreatedredirect\":\"https://en.wikipedia.org/wiki/Special:CentralAutoLogin\"")])
        var anonymous = edit
        anonymous["section"] = nil
        let (status, body, _) = try save(anonymous, headers: [:])
        XCTAssertEqual(status, 200)
        XCTAssertEqual(body["temporaryAccount"] as? String, "~2026-31337-5")
    }

    func testTheSaveIsAskedInTheReadersLanguage() async throws {
        try start()
        var h = alice
        h["Accept-Language"] = "ja"
        let (status, _, _) = try save(edit, headers: h)
        XCTAssertEqual(status, 200)
        XCTAssertEqual(fake.calls("edit").first?.fields["uselang"], "ja", "the wiki's refusals, warnings and captcha in the reader's language")
    }

    func testASignedInSaveNamesNoAddress() async throws {
        try start()
        let (status, _, _) = try save(edit)
        XCTAssertEqual(status, 200)
        XCTAssertEqual(fake.calls.map { $0.forwardedFor ?? "-" }, ["-", "-"], "the account is who edits; no address goes along")
    }

    func testABadTokenIsFetchedOnceMoreAndTheEditSentOnceMore() async throws {
        try start()
        fake.script(edits: [FakeActionAPI.error("badtoken", "Invalid CSRF token."), FakeActionAPI.success])
        let (status, body, _) = try save(edit)
        XCTAssertEqual(status, 200); XCTAssertEqual(body["result"] as? String, "saved")
        XCTAssertEqual(fake.calls.map(\.kind), ["token", "edit", "token", "edit"])
        XCTAssertEqual(fake.calls("edit").map { $0.fields["token"] ?? "" }, ["tok-1+\\", "tok-2+\\"], "the second edit carries the fresh token")
    }

    func testATokenRefusedTwiceIsA401AndNothingMoreIsSent() async throws {
        try start()
        fake.script(edits: [FakeActionAPI.error("badtoken", "Invalid CSRF token.")])
        let (status, body, http) = try save(edit)
        XCTAssertEqual(status, 401); XCTAssertEqual(body["type"] as? String, "urn:lede:problem:not-authorised")
        XCTAssertEqual(http.header("WWW-Authenticate"), BearerAuthorization.challenge)
        XCTAssertEqual(fake.calls.map(\.kind), ["token", "edit", "token", "edit"])
    }

    func testASaveThatTimesOutIsNeverSentAgainAndSaysItMayHaveBeenSaved() async throws {
        try start(editTimeout: 0.4)
        fake.script(edits: [FakeActionAPI.success], delay: 1.2)
        let (status, body, _) = try save(edit)
        XCTAssertEqual(status, 504)
        XCTAssertEqual(body["type"] as? String, "urn:lede:problem:edit-outcome-unknown")
        XCTAssertTrue((body["detail"] as? String ?? "").contains("may have been saved"))
        XCTAssertEqual(body["baseRevision"] as? Int, 1250000000)
        try await Task.sleep(nanoseconds: 1_500_000_000)
        XCTAssertEqual(fake.calls("edit").count, 1, "a save that went out is never sent again")
        XCTAssertEqual(fake.calls("token").count, 1)
    }

    func testTheSavesDeadlineIsItsOwnNotTheUpstreamTimeout() async throws {
        try start(editTimeout: 5)
        fake.script(edits: [FakeActionAPI.success], delay: 2.5)   // longer than --upstream-timeout 2
        let (status, body, _) = try save(edit)
        XCTAssertEqual(status, 200); XCTAssertEqual(body["result"] as? String, "saved")
    }

    func testAConflictIsA409WithTheRevisionToReload() async throws {
        try start()
        fake.script(edits: [FakeActionAPI.error("editconflict", "Edit conflict.")])
        fake.script(editor: FakeActionAPI.editorAnswer().replacingOccurrences(of: "\"lastrevid\":1250000000", with: "\"lastrevid\":1250000777"))
        let (status, body, _) = try save(edit)
        XCTAssertEqual(status, 409)
        XCTAssertEqual(body["type"] as? String, "urn:lede:problem:edit-conflict")
        XCTAssertEqual(body["currentRevision"] as? Int, 1250000777)
        XCTAssertEqual(fake.calls("edit").count, 1)
    }

    /// Every answer of `action=edit` an editor meets, through the one table.
    func testEveryRefusalOfTheWikiIsItsProblem() async throws {
        try start()
        let cases: [(answer: String, status: Int, slug: String?, check: ([String: Any]) -> Void)] = [
            (FakeActionAPI.error("protectedpage", "This page has been <b>protected</b>."), 403, "protected", { XCTAssertEqual($0["detail"] as? String, "This page has been protected.") }),
            (FakeActionAPI.error("cascadeprotected", "Transcluded in a protected page."), 403, "protected", { _ in }),
            (FakeActionAPI.error("blocked", "You have been blocked from editing.", data: FakeActionAPI.blockinfo), 403, "blocked", {
                XCTAssertEqual(($0["block"] as? [String: Any])?["partial"] as? Bool, true)
                XCTAssertEqual(($0["block"] as? [String: Any])?["expiry"] as? String, "2026-12-31T00:00:00Z")
            }),
            (FakeActionAPI.error("autoblocked", "Your IP address has been automatically blocked.", data: FakeActionAPI.blockinfo), 403, "blocked", { XCTAssertEqual($0["code"] as? String, "autoblocked") }),
            (FakeActionAPI.error("abusefilter-warning-shouting", "<b>Warning:</b> all caps.", data: "{\"abusefilter\":{\"id\":\"50\",\"description\":\"Shouting\",\"actions\":[\"warn\"]}}"), 422, "edit-warning", {
                XCTAssertTrue(($0["detail"] as? String ?? "").hasPrefix("Warning: all caps."))
            }),
            (FakeActionAPI.error("abusefilter-disallowed", "This action has been automatically identified as harmful, and therefore disallowed."), 403, "edit-disallowed", { _ in }),
            (FakeActionAPI.error("spamblacklist", "The text you wanted to save was blocked by the spam filter.", data: "{\"spamblacklist\":{\"matches\":[\"spam.example\"]}}"), 403, "edit-disallowed", {
                XCTAssertEqual($0["matches"] as? [String], ["spam.example"])
            }),
            (FakeActionAPI.error("assertuserfailed", "You are no longer logged in."), 401, "not-authorised", { _ in }),
            (FakeActionAPI.error("mwoauth-invalid-authorization-invalid-user", "The authorization headers are for a user that does not exist here."), 401, "not-authorised", { _ in }),
            (FakeActionAPI.error("readonly", "The database has been automatically locked."), 503, "wiki-read-only", { _ in }),
            (FakeActionAPI.error("ratelimited", "As an anti-abuse measure, you are limited from performing this action too many times."), 429, "edit-rate-limited", { _ in }),
            (FakeActionAPI.error("contenttoobig", "The content you supplied exceeds the page size limit of 2,048 kilobytes."), 413, "edit-too-large", { _ in }),
            (FakeActionAPI.error("missingtitle", "The page you specified doesn't exist."), 404, "not-found", { _ in }),
            (FakeActionAPI.error("something-new", "A <i>new</i> refusal."), 502, "edit-failed", { XCTAssertEqual($0["detail"] as? String, "The wiki refused the edit: A new refusal.") }),
            // AbuseFilter before errorformat: a Failure naming its code.
            ("{\"edit\":{\"result\":\"Failure\",\"code\":\"abusefilter-warning-blanking\",\"info\":\"Hit AbuseFilter: Section blanking\",\"warning\":\"<b>Warning:</b> you removed a section.\"}}", 422, "edit-warning", {
                XCTAssertEqual($0["code"] as? String, "abusefilter-warning-blanking")
            }),
            ("{\"edit\":{\"captcha\":{\"type\":\"image\",\"mime\":\"image/png\",\"id\":\"1234567\",\"url\":\"/w/index.php?title=Special:Captcha/image&wpCaptchaId=1234567\"},\"result\":\"Failure\"}}", 428, "captcha-required", {
                let captcha = $0["captcha"] as? [String: String]
                XCTAssertEqual(captcha?["id"], "1234567")
                XCTAssertEqual(captcha?["url"], "\(self.fake.template.replacingOccurrences(of: "/{lang}", with: ""))/w/index.php?title=Special:Captcha/image&wpCaptchaId=1234567")
            }),
            ("{\"edit\":{\"result\":\"Success\",\"pageid\":736,\"title\":\"Albert Einstein\",\"contentmodel\":\"wikitext\",\"nochange\":true,\"watched\":true}}", 200, nil, {
                XCTAssertEqual($0 as NSDictionary, ["result": "nochange"] as NSDictionary)
            }),
        ]
        for c in cases {
            fake.script(edits: [c.answer])
            let editsBefore = fake.calls("edit").count
            let (status, body, http) = try save(edit)
            XCTAssertEqual(status, c.status, c.answer)
            if let slug = c.slug {
                XCTAssertEqual(body["type"] as? String, "urn:lede:problem:\(slug)", c.answer)
                XCTAssertEqual(http.header("Content-Type"), "application/problem+json")
            }
            c.check(body)
            XCTAssertEqual(fake.calls("edit").count, editsBefore + 1, "one edit for \(c.answer)")
        }
    }

    func testAWarnedEditSentAgainIsTheConfirmationAndIsSaved() async throws {
        try start()
        fake.script(edits: [FakeActionAPI.error("abusefilter-warning-shouting", "<b>Warning:</b> all caps."), FakeActionAPI.success])
        let (first, _, _) = try save(edit)
        XCTAssertEqual(first, 422)
        let (second, body, _) = try save(edit)
        XCTAssertEqual(second, 200); XCTAssertEqual(body["result"] as? String, "saved")
        let sent = fake.calls("edit")
        XCTAssertEqual(sent.count, 2)
        XCTAssertEqual(sent[0].fields["text"], sent[1].fields["text"], "the same edit")
    }

    func testACaptchaAnswerIsSentWithTheEdit() async throws {
        try start()
        var solved = edit
        solved["captcha"] = ["id": "1234567", "answer": "wiki pedia"]
        let (status, _, _) = try save(solved)
        XCTAssertEqual(status, 200)
        let sent = try XCTUnwrap(fake.calls("edit").first)
        XCTAssertEqual(sent.fields["captchaid"], "1234567"); XCTAssertEqual(sent.fields["captchaword"], "wiki pedia")
    }

    func testABadSaveRequestIsRefusedBeforeAnythingIsSent() async throws {
        try start()
        var missing = edit; missing["baseRevision"] = nil
        var unknown = edit; unknown["sectoin"] = 2
        var badSection = edit; badSection["section"] = "new"
        var badCaptcha = edit; badCaptcha["captcha"] = ["id": "1"]
        for bad in [missing, unknown, badSection, badCaptcha] {
            let (status, body, _) = try save(bad)
            XCTAssertEqual(status, 400); XCTAssertEqual(body["type"] as? String, "urn:lede:problem:invalid-edit")
        }
        let (status, _, http) = try call("POST", "/article/Albert_Einstein/edit?lang=en", headers: ["Content-Type": "text/plain"], body: Data("x".utf8))
        XCTAssertEqual(status, 415); XCTAssertEqual(http.header("Accept-Post"), "application/json")
        let (auth, _, _) = try save(edit, headers: ["Authorization": "Basic abc"])
        XCTAssertEqual(auth, 401)
        XCTAssertEqual(fake.calls.count, 0)
    }

    // MARK: - The body limit of this route alone

    func testA1_5MiBEditIsTakenOnThisRouteAndTheSameBodyIsA413Elsewhere() async throws {
        try start()
        var big = edit
        big["section"] = nil
        big["wikitext"] = String(repeating: "Einstein's ''Annus mirabilis'' papers. ", count: 1_572_864 / 39)
        let body = try JSONSerialization.data(withJSONObject: big)
        XCTAssertGreaterThan(body.count, 1_500_000)
        let (status, _, _) = try call("POST", "/article/Albert_Einstein/edit?lang=en", headers: alice.merging(["Content-Type": "application/json"]) { a, _ in a }, body: body)
        XCTAssertEqual(status, 200)
        XCTAssertEqual(fake.calls("edit").first?.fields["text"], big["wikitext"] as? String)
        let (elsewhere, problem, _) = try call("POST", "/notifications/read?lang=en", headers: alice.merging(["Content-Type": "application/json"]) { a, _ in a }, body: body)
        XCTAssertEqual(elsewhere, 413); XCTAssertEqual(problem["status"] as? Int, 413)
        // Past the route's own limit: refused from its declared length.
        var huge = big
        huge["wikitext"] = String(repeating: "x", count: EditRules.maxBodyBytes)
        let (tooBig, _, _) = try call("POST", "/article/Albert_Einstein/edit?lang=en", headers: alice.merging(["Content-Type": "application/json"]) { a, _ in a },
                                            body: try JSONSerialization.data(withJSONObject: huge))
        XCTAssertEqual(tooBig, 413)
        XCTAssertEqual(fake.calls("edit").count, 1)
    }
}

/// The embedded default's demo wiki, end to end: what `swift run` answers with no network.
final class EmbeddedEditorTests: XCTestCase {
    var server: HTTPServer!
    var base = ""
    override func setUp() async throws {
        server = try startLede()
        base = "http://127.0.0.1:\(server.port)"
    }
    override func tearDown() { server?.shutdown(); server?.waitUntilStopped() }

    func call(_ method: String, _ path: String, user: String? = "demo-alice", json: [String: Any]? = nil, accept: String? = nil) throws -> (Int, [String: Any], TestResponse) {
        var headers: [String: String] = [:]
        if let user { headers["Authorization"] = "Bearer \(user)" }
        if json != nil { headers["Content-Type"] = "application/json" }
        if let accept { headers["Accept"] = accept }
        let body = try json.map { [UInt8](try JSONSerialization.data(withJSONObject: $0)) } ?? []
        return try get(server, path, headers, method: method, body: body).statusJSONAndResponse
    }

    func testOpenSaveConflictWarningCaptchaAndTheRefusalsOfTheDemoWiki() async throws {
        // Open section 2 and save it.
        let (s0, opened, _) = try call("GET", "/article/Albert_Einstein/edit?section=2")
        XCTAssertEqual(s0, 200)
        let revision = try XCTUnwrap(opened["revision"] as? Int)
        XCTAssertEqual(opened["wikitext"] as? String, "=== Early life ===\nThis section of ''Albert Einstein'' is about early life.\n\n")
        let (s1, saved, _) = try call("POST", "/article/Albert_Einstein/edit", json: ["section": 2, "wikitext": "=== Early life ===\nBorn in Ulm.\n", "summary": "Birth place", "baseRevision": revision])
        XCTAssertEqual(s1, 200); XCTAssertEqual(saved["previousRevision"] as? Int, revision)
        let newRevision = try XCTUnwrap(saved["revision"] as? Int)
        // The page now holds it; the same text again is no change.
        let (_, reopened, _) = try call("GET", "/article/Albert_Einstein/edit?section=2")
        XCTAssertEqual(reopened["wikitext"] as? String, "=== Early life ===\nBorn in Ulm.\n")
        XCTAssertEqual(reopened["revision"] as? Int, newRevision)
        let (s2, same, _) = try call("POST", "/article/Albert_Einstein/edit", json: ["section": 2, "wikitext": "=== Early life ===\nBorn in Ulm.\n", "summary": "", "baseRevision": newRevision])
        XCTAssertEqual(s2, 200); XCTAssertEqual(same["result"] as? String, "nochange")
        // A stale base whose section changed since: a conflict naming the revision to reload; another section merges.
        let (s3, conflict, _) = try call("POST", "/article/Albert_Einstein/edit", json: ["section": 2, "wikitext": "=== Early life ===\nBorn in Munich.\n", "summary": "", "baseRevision": revision])
        XCTAssertEqual(s3, 409); XCTAssertEqual(conflict["currentRevision"] as? Int, newRevision)
        let (s4, merged, _) = try call("POST", "/article/Albert_Einstein/edit", json: ["section": 4, "wikitext": "=== Princeton ===\nThe Institute for Advanced Study.\n", "summary": "", "baseRevision": revision])
        XCTAssertEqual(s4, 200, "\(merged)")
        // The abuse filter's warning, then the same edit again goes through.
        let loud: [String: Any] = ["section": 3, "wikitext": "=== Papers ===\nFour papers!!!\n", "summary": "wow", "baseRevision": try XCTUnwrap(merged["revision"] as? Int)]
        let (s5, warning, _) = try call("POST", "/article/Albert_Einstein/edit", json: loud)
        XCTAssertEqual(s5, 422); XCTAssertEqual(warning["type"] as? String, "urn:lede:problem:edit-warning")
        let (s6, confirmed, _) = try call("POST", "/article/Albert_Einstein/edit", json: loud)
        XCTAssertEqual(s6, 200); XCTAssertEqual(confirmed["result"] as? String, "saved")
        // A new external link asks for a captcha; answered, it saves.
        var linked: [String: Any] = ["section": 5, "wikitext": "== Scientific career ==\nSee https://example.org/relativity\n", "summary": "", "baseRevision": try XCTUnwrap(confirmed["revision"] as? Int)]
        let (s7, captcha, _) = try call("POST", "/article/Albert_Einstein/edit", json: linked)
        XCTAssertEqual(s7, 428)
        let asked = try XCTUnwrap(captcha["captcha"] as? [String: String])
        XCTAssertTrue(asked["url"]?.hasPrefix("https://en.wikipedia.org/w/index.php?title=Special:Captcha/image") == true)
        linked["captcha"] = ["id": asked["id"]!, "answer": "lede"]
        let (s8, _, _) = try call("POST", "/article/Albert_Einstein/edit", json: linked)
        XCTAssertEqual(s8, 200)
        // The spam list, the protected pages, the partial block, a refused token.
        let (_, amsterdam, _) = try call("GET", "/article/Amsterdam/edit?section=0")
        let (s9, spam, _) = try call("POST", "/article/Amsterdam/edit", json: ["section": 0, "wikitext": "Visit https://spam.example/now\n", "summary": "",
                                                                                     "baseRevision": try XCTUnwrap(amsterdam["revision"] as? Int)])
        XCTAssertEqual(s9, 403); XCTAssertEqual(spam["type"] as? String, "urn:lede:problem:edit-disallowed")
        let (s10, protected, _) = try call("POST", "/article/Dam_Square/edit", json: ["wikitext": "x", "summary": "", "baseRevision": 1])
        XCTAssertEqual(s10, 403); XCTAssertEqual(protected["type"] as? String, "urn:lede:problem:protected")
        let (s11, blocked, _) = try call("POST", "/article/Rijksmuseum/edit", user: "demo-bob", json: ["wikitext": "x", "summary": "", "baseRevision": 1])
        XCTAssertEqual(s11, 403); XCTAssertEqual((blocked["block"] as? [String: Any])?["partial"] as? Bool, true)
        let (s12, _, _) = try call("POST", "/article/Mumbai/edit", user: nil, json: ["wikitext": "x", "summary": "", "baseRevision": 1])
        XCTAssertEqual(s12, 401, "no anonymous edits by default (--anonymous-edits off): refused before the wiki is asked")
        let (s13, _, _) = try call("POST", "/article/Mumbai/edit", user: "stranger", json: ["wikitext": "x", "summary": "", "baseRevision": 1])
        XCTAssertEqual(s13, 401)
    }

    /// The pencil shows only when the caller may edit: anonymous readers share one answer, a user's is private.
    func testTheArticleSaysWhetherTheCallerMayEditIt() async throws {
        let (_, anonymous, http) = try call("GET", "/article/Rijksmuseum", user: nil)
        XCTAssertEqual(anonymous["editable"] as? Bool, false, "no anonymous edits by default: the pencil needs an account")
        XCTAssertEqual(http.header("Cache-Control"), "public, max-age=300")
        XCTAssertTrue(http.header("Vary")?.contains("Authorization") == true)
        let (_, bob, bobHTTP) = try call("GET", "/article/Rijksmuseum", user: "demo-bob")
        XCTAssertEqual(bob["editable"] as? Bool, false, "bob is blocked from this page")
        XCTAssertEqual(bobHTTP.header("Cache-Control"), "private, no-cache")
        var rest = bob; rest["editable"] = nil
        var shared = anonymous; shared["editable"] = nil
        XCTAssertEqual(rest as NSDictionary, shared as NSDictionary, "the rest is the shared answer")
        let (_, alice, _) = try call("GET", "/article/Rijksmuseum", user: "demo-alice")
        XCTAssertEqual(alice["editable"] as? Bool, true)
        let (_, damSquare, _) = try call("GET", "/article/Dam_Square", user: nil)
        XCTAssertEqual(damSquare["editable"] as? Bool, false, "fully protected")
        let (_, mumbai, _) = try call("GET", "/article/Mumbai", user: "demo-alice")
        XCTAssertEqual(mumbai["editable"] as? Bool, true, "semi-protected: a signed-in user may edit")
        let (status, _, _) = try call("GET", "/article/Mumbai", user: "demo alice")
        XCTAssertEqual(status, 401, "malformed credentials are refused, not ignored")
    }
}

/// The rules, without sockets.
final class EditRulesTests: XCTestCase {
    func testEveryCodeHasItsKind() {
        let table: [(String, EditRules.Kind)] = [
            ("editconflict", .conflict), ("protectedpage", .protected), ("cascadeprotected", .protected), ("protectedtitle", .protected),
            ("blocked", .blocked), ("autoblocked", .blocked), ("blockedtext-partial", .blocked), ("globalblocking-blockedtext-range", .blocked),
            ("abusefilter-warning", .warning), ("abusefilter-warning-shouting", .warning), ("abusefilter-disallowed", .disallowed),
            ("abusefilter-disallowed-links", .disallowed), ("spamblacklist", .disallowed), ("titleblacklist-forbidden-edit", .disallowed),
            ("badtoken", .badToken), ("assertuserfailed", .notAuthorised), ("assertnameduserfailed", .notAuthorised),
            ("mwoauth-invalid-authorization-invalid-user", .notAuthorised), ("readonly", .readOnly), ("ratelimited", .rateLimited),
            ("contenttoobig", .tooLarge), ("missingtitle", .notFound), ("badvalue", .rejected), ("hookaborted", .failed),
        ]
        for (code, kind) in table { XCTAssertEqual(EditRules.kind(of: APIMessage(code: code, html: "")), kind, code) }
        // A block's details make any code a block.
        XCTAssertEqual(EditRules.kind(of: APIMessage(code: "permissiondenied", html: "", block: EditBlock(by: nil, reason: nil, expiry: nil, partial: false))), .blocked)
    }

    func testTheSaveBodyIsReadStrictly() throws {
        let ok = try EditRules.parseSave(Array(#"{"wikitext":"a","summary":"","baseRevision":5,"section":0,"minor":false,"captcha":null}"#.utf8))
        XCTAssertEqual(ok, EditRules.SaveRequest(section: 0, wikitext: "a", summary: "", baseRevision: 5, minor: false, captchaID: nil, captchaAnswer: nil))
        for bad in [#"[]"#, #"{"wikitext":1,"summary":"","baseRevision":5}"#, #"{"wikitext":"a","summary":"","baseRevision":0}"#,
                    #"{"wikitext":"a","summary":"","baseRevision":5,"minor":"yes"}"#, #"{"wikitext":"a","baseRevision":5}"#,
                    #"{"wikitext":"a","summary":"","baseRevision":5,"section":-1}"#, #"{"wikitext":"a","summary":"","baseRevision":5,"captcha":{"id":"1","answer":"x","z":1}}"#] {
            XCTAssertThrowsError(try EditRules.parseSave(Array(bad.utf8)), bad)
        }
        let long = "{\"wikitext\":\"a\",\"summary\":\"\(String(repeating: "é", count: 501))\",\"baseRevision\":5}"
        XCTAssertThrowsError(try EditRules.parseSave(Array(long.utf8)))
    }

    func testTheAnswersOfBothFormatsAreRead() throws {
        func outcome(_ json: String) throws -> EditOutcome {
            try WikimediaClient.editOutcome(try UpstreamJSONDecoder().decode(EditingAnswer.self, from: Array(json.utf8)))
        }
        XCTAssertEqual(try outcome(FakeActionAPI.success), .saved(revision: 1250000001, previous: 1250000000))
        XCTAssertEqual(try outcome(#"{"error":{"code":"editconflict","info":"Edit conflict.","*":"See docs"}}"#), .refused(APIMessage(code: "editconflict", html: "Edit conflict.")))
        XCTAssertEqual(try outcome(#"{"edit":{"result":"Failure","captcha":{"type":"image","id":123,"url":"//upload.example/c.png"}}}"#), .captcha(id: "123", url: "//upload.example/c.png"))
        XCTAssertThrowsError(try outcome(#"{"edit":{"result":"Maybe"}}"#))
        XCTAssertThrowsError(try outcome(#"{"batchcomplete":true}"#))
        XCTAssertEqual(EditRules.absoluteURL("//upload.example/c.png", base: "https://en.wikipedia.org"), "https://upload.example/c.png")
        XCTAssertEqual(EditRules.absoluteURL("/w/index.php?x=1", base: "http://127.0.0.1:9/en"), "http://127.0.0.1:9/w/index.php?x=1")
    }

    func testTheEmbeddedWikisSectionsAreMediaWikis() {
        let text = "Lead.\n== A ==\na\n=== A1 ===\na1\n== B ==\nb\n"
        func section(_ n: Int) -> String? { EmbeddedEditor.sectionRange(n, in: text).map { String(text[$0]) } }
        XCTAssertEqual(section(0), "Lead.\n")
        XCTAssertEqual(section(1), "== A ==\na\n=== A1 ===\na1\n", "a section holds its subsections")
        XCTAssertEqual(section(2), "=== A1 ===\na1\n")
        XCTAssertEqual(section(3), "== B ==\nb\n")
        XCTAssertNil(section(4))
    }
}
