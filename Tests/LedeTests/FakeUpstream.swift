import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import XCTest
import HTTPServer
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import HTTPCore
@testable import Upstream

/// A fake Wikimedia on an ephemeral loopback port (our own HTTPServer). By default it answers every request
/// with the embedded default's bytes, so live and embedded can be compared; a behaviour per call kind makes
/// it fail in each of the ways upstream can.
final class FakeUpstream: @unchecked Sendable {
    enum Behaviour {
        case embedded
        case status(Int, String)
        /// A status with response fields (`Retry-After`, `Location`).
        case answer(Int, [String: String], String)
        case delay(Double)
        /// This body, after this many seconds.
        case slowBody(Double, String)
        case body(String)
        case oversized(Int)
        case hang
        /// The test's own answer (status, JSON) to each request of the kind.
        case handler(@Sendable (Recorded) -> (Int, String))
        /// The same, awaited; nil: the embedded default's answer.
        case asyncHandler(@Sendable (Recorded) async -> (Int, String)?)
    }

    struct Recorded {
        var method: String
        var path: String
        var query: String?
        var headers: HTTPHeaders
        var body: String
    }

    let server: HTTPServer
    private let lock = NSLock()
    private var behaviours: [String: Behaviour] = [:]
    private var others: Behaviour = .embedded
    private var recorded: [Recorded] = []
    private var inFlight = 0
    /// The most requests the fake was answering at once.
    private(set) var maxInFlight = 0
    let embedded: EmbeddedTransport

    var template: String { "http://127.0.0.1:\(server.port)/{lang}" }

    /// `readingLists`: the users and lists the reading lists' interface answers for (the embedded demo's by default).
    init(readingLists: EmbeddedReadingLists = .demo()) throws {
        embedded = EmbeddedTransport(readingLists: readingLists)
        let router = Router()
        server = makeServer(router) { $0.timeouts.drain = 1; $0.limits.maxConnections = 1000; $0.limits.maxBody = 8 << 20 }
        let handler: Handler = { [unowned self] ctx in .async { await self.answer(ctx) } }
        router.get("/{lang}/api/rest_v1/feed/featured/{y}/{m}/{d}", handler)
        router.get("/{lang}/api/rest_v1/page/summary/{title}", handler)
        router.get("/{lang}/api/rest_v1/page/media-list/{title}", handler)
        router.get("/{lang}/api/rest_v1/page/media-list/{title}/{revision}", handler)
        router.get("/{lang}/api/rest_v1/page/mobile-html-offline-resources/{title}", handler)
        router.get("/{lang}/api/rest_v1/page/mobile-html-offline-resources/{title}/{revision}", handler)
        let lists = "/{lang}/w/rest.php/readinglists/v0/lists"
        router.get(lists, handler)
        router.post(lists + "/setup", handler)
        router.post(lists + "/teardown", handler)
        router.get(lists + "/changes/since/{date}", handler)
        router.get(lists + "/{id}/entries", handler)
        router.post(lists + "/{id}/entries", handler)
        router.add("DELETE", lists + "/{id}/entries/{entry}", handler)
        router.get("/{lang}/w/rest.php/v1/page/{title}/html", handler)
        router.get("/{lang}/w/api.php", handler)
        router.post("/{lang}/w/api.php", handler)
        try server.start()
    }

    func stop() { server.shutdown(); server.waitUntilStopped() }

    func set(_ kind: String, _ behaviour: Behaviour) { lock.lock(); behaviours[kind] = behaviour; lock.unlock() }
    /// How a kind with no behaviour of its own is answered (the embedded default's bytes, unless a test says otherwise).
    func setOthers(_ behaviour: Behaviour) { lock.lock(); others = behaviour; lock.unlock() }
    var requests: [Recorded] { lock.lock(); defer { lock.unlock() }; return recorded }
    func requests(kind: String) -> [Recorded] { requests.filter { FakeUpstream.kind(path: $0.path, query: $0.query, body: $0.body) == kind } }

    static func kind(path: String, query: String?, body: String) -> String {
        if path.contains("/readinglists/v0/lists") {
            if path.contains("/changes/since/") { return "readinglists-changes" }
            return path.hasSuffix("/entries") || path.contains("/entries/") ? "readinglists-entries" : "readinglists"
        }
        if path.contains("/page/mobile-html-offline-resources/") { return "offline-resources" }
        if path.contains("/feed/featured/") { return "feed" }
        if path.contains("/page/summary/") { return "summary" }
        if path.contains("/page/media-list/") { return "media" }
        if path.contains("/rest.php/v1/page/") { return "html" }
        let q = (query ?? "") + "&" + body
        if q.contains("curtimestamp=1") { return "revisions" }
        if q.contains("action=parse") { return "contents" }
        if q.contains("prop=langlinks") { return "languages" }
        if q.contains("prop=imageinfo") { return "files" }
        if q.contains("echomarkread") { return "markread" }
        if q.contains("intestactions=edit") { return "editor" }
        if q.contains("action=edit&") { return "edit" }
        if q.contains("meta=tokens") { return "token" }
        if q.contains("meta=notifications") { return "notifications" }
        if q.contains("meta=siteinfo") { return "siteinfo" }
        if q.contains("meta=userinfo") { return "userinfo" }
        if q.contains("morelike") { return "related" }
        if q.contains("generator=random") { return "random" }
        if q.contains("generator=geosearch") { return "nearby" }
        return "search"
    }

    private func answer(_ ctx: RequestContext) async -> HTTPResponse {
        let r = ctx.request
        let body = String(decoding: r.body, as: UTF8.self)
        let kind = FakeUpstream.kind(path: r.path, query: r.query, body: body)
        let behaviour = lock.withLock {
            recorded.append(Recorded(method: r.method, path: r.path, query: r.query, headers: r.headers, body: body))
            inFlight += 1; maxInFlight = max(maxInFlight, inFlight)
            return behaviours[kind] ?? others
        }
        defer { lock.withLock { inFlight -= 1 } }
        switch behaviour {
        case .embedded: return await fromEmbedded(r, body: body, kind: kind)
        case .status(let code, let text): return HTTPResponse(status: code, contentType: "application/json", bytes: Array(text.utf8))
        case .answer(let code, let fields, let text):
            var h = HTTPHeaders()
            for (k, v) in fields { h.set(k, v) }
            return HTTPResponse(status: code, contentType: "application/json", bytes: Array(text.utf8), headers: h)
        case .delay(let seconds):
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return await fromEmbedded(r, body: body, kind: kind)
        case .body(let text): return .json(Array(text.utf8))
        case .slowBody(let seconds, let text):
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return .json(Array(text.utf8))
        case .oversized(let n):
            // Made with no per-byte work (a debug build's String would take seconds for megabytes).
            var body = [UInt8](repeating: UInt8(ascii: "x"), count: n + 10)
            body.replaceSubrange(0..<8, with: Array("{\"pad\":\"".utf8)); body.replaceSubrange((n + 8)..<(n + 10), with: Array("\"}".utf8))
            return .json(body)
        case .hang:
            try? await Task.sleep(nanoseconds: 3_000_000_000)
            return .json(Array("{}".utf8))
        case .handler(let answer):
            let (status, text) = answer(Recorded(method: r.method, path: r.path, query: r.query, headers: r.headers, body: body))
            return HTTPResponse(status: status, contentType: "application/json", bytes: Array(text.utf8))
        case .asyncHandler(let answer):
            guard let (status, text) = await answer(Recorded(method: r.method, path: r.path, query: r.query, headers: r.headers, body: body)) else {
                return await fromEmbedded(r, body: body, kind: kind)
            }
            return HTTPResponse(status: status, contentType: "application/json", bytes: Array(text.utf8))
        }
    }

    /// The request as the live client sent it, answered by the embedded transport.
    private func fromEmbedded(_ r: HTTPRequest, body: String, kind: String) async -> HTTPResponse {
        let lang = r.pathSegments.first ?? "en"
        let path = "/" + r.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).joined(separator: "/")
        func pairs(_ s: String?) -> [(String, String)] {
            (s ?? "").split(separator: "&").map { p in
                let kv = p.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (PercentDecoding.decode(kv[0], plusAsSpace: true) ?? "", kv.count > 1 ? (PercentDecoding.decode(kv[1], plusAsSpace: true) ?? "") : "")
            }
        }
        let method: UpstreamRequest.Method = r.method == "POST" ? .post : r.method == "DELETE" ? .delete : .get
        let req = UpstreamRequest(method: method, lang: lang, path: path, query: pairs(r.query),
                                  form: r.method == "POST" && !path.hasPrefix("/w/rest.php") ? pairs(body) : [],
                                  json: path.hasPrefix("/w/rest.php") ? Array(r.body) : [], authorization: r.headers["Authorization"],
                                  kind: CallKind(rawValue: kind))   // the embedded transport reads no kind
        let answer = try! await embedded.send(req, deadline: 5)
        var h = HTTPHeaders()
        for (k, v) in answer.headers { h.set(k, v) }
        return HTTPResponse(status: answer.status, contentType: "application/json", bytes: answer.body, headers: h)
    }
}

/// Starts Lede on an ephemeral loopback port with test-friendly options (no access log, quiet logs).
func startLede(loops: Int = 1, _ configure: (inout Options) -> Void = { _ in }) throws -> HTTPServer {
    try startLedeApp(loops: loops, configure).server
}

/// Like `startLede`, and also hands back the app (its client and caches) for tests that look inside.
func startLedeApp(loops: Int = 1, _ configure: (inout Options) -> Void = { _ in }) throws -> (app: LedeApp, server: HTTPServer) {
    var options = Options()
    options.server.host = "127.0.0.1"; options.server.port = 0; options.server.loops = loops; options.server.accessLog = false
    options.logLevel = .off
    options.server.clients.rate = 0  // many requests from one loopback address; the rate-limit tests turn it on
    options.wikiVariants = false     // no call at start-up the tests do not make themselves (WikiVariantTests turns it on)
    configure(&options)
    let app = try LedeApp(options: options)
    let server = app.makeServer(logger: Logger(level: .off))
    try server.start()
    return (app, server)
}

/// Lede on loopback in front of a fresh `FakeUpstream`, and a JSON GET helper: the setup of the HTTP tests of the
/// content routes and the article screen.
class FakeUpstreamTestCase: XCTestCase {
    var fake: FakeUpstream!
    var server: HTTPServer!
    var app: LedeApp!
    var base = ""

    /// Event loops of the Lede under test.
    var loops: Int { 1 }
    /// The options of the Lede under test, besides its upstream (the fake).
    func configure(_ options: inout Options) {
        options.upstreamTimeout = 0.5
        options.cacheLimits.staleIfError = 0
    }

    override func setUpWithError() throws {
        fake = try FakeUpstream()
        (app, server) = try startLedeApp(loops: loops) { [fake, self] in
            $0.upstream = fake!.template
            configure(&$0)
        }
        base = "http://127.0.0.1:\(server.port)"
    }

    override func tearDown() { server.shutdown(); server.waitUntilStopped(); fake.stop() }

}
