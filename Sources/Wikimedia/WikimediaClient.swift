import EventLoops
import Upstream
import Foundation
import Synchronization
import LedeBasics
import HTTPCore

/// The one implementation of `WikimediaAPI`: builds each request exactly as docs/UPSTREAM.md says,
/// sends it through a transport (live network or embedded data), maps statuses and Action API errors to
/// `UpstreamError`, decodes the JSON, and caches public calls.
public final class WikimediaClient: WikimediaAPI, Sendable {
    /// Seconds each kind of public call is cached. `random` and user-bound calls are never cached.
    public struct TTLs: Sendable {
        public var feedToday: Double = 300
        public var feedPast: Double = 3_600
        public var summary: Double = 600
        public var related: Double = 600
        public var nearby: Double = 300
        public var search: Double = 120
        /// The article screen's parts: contents, media and file credits change with edits; language links rarely.
        public var contents: Double = 600
        public var languages: Double = 3_600
        public var media: Double = 600
        public var files: Double = 3_600
        public init() {}
    }

    /// The exchanges themselves: origins, the guard, the deadline, redirects within the origin, metrics.
    public let upstream: UpstreamClient
    public let cache: UpstreamCache
    public let ttls: TTLs
    let today: @Sendable () -> FeedDate
    public var transport: UpstreamTransport { upstream.transport }
    public var metrics: UpstreamMetrics { upstream.metrics }
    /// Retry-After back-off, circuit breaker and concurrency bound, per origin.
    public var guards: UpstreamGuard { upstream.guards }
    /// Per-call deadline in seconds (`--upstream-timeout`).
    public var deadline: Double { upstream.deadline }
    /// Warnings about upstream answers (items skipped). Never carries user data.
    public var logger: Logger { upstream.logger }

    public init(transport: UpstreamTransport, cache: UpstreamCache = UpstreamCache(), metrics: UpstreamMetrics = UpstreamMetrics(),
                guards: UpstreamGuard = UpstreamGuard(), deadline: Double = 2, ttls: TTLs = TTLs(), logger: Logger = Logger(level: .off),
                today: @escaping @Sendable () -> FeedDate = { FeedDate.today() }) {
        self.upstream = UpstreamClient(transport: transport, metrics: metrics, guards: guards, deadline: deadline, logger: logger)
        self.cache = cache; self.ttls = ttls; self.today = today
    }

    // MARK: - Origins and exchanges (UpstreamClient), status mapping, decoding (each service's calls: Services/*/WikimediaClient+*.swift)

    /// The origin (`scheme://host[:port]`) a request for `lang` goes to: what back-off and the breaker are kept by.
    public func origin(lang: String) -> String { upstream.origin(lang: lang) }

    /// The origin of a language's calls, as its guard handle (its name is the origin).
    func originGate(lang: String) -> UpstreamGuard.Gate { upstream.originGate(lang: lang) }

    /// The badge's prepared request per language (bounded by the languages Lede accepts, a few hundred codes), with
    /// its origin's guard handle.
    /// A class: taken out of the table with one retain (a copy of an optional struct of this size goes through its
    /// type's metadata).
    final class Language: Sendable {
        let gate: UpstreamGuard.Gate
        let unread: UpstreamRequest
        init(gate: UpstreamGuard.Gate, unread: UpstreamRequest) { self.gate = gate; self.unread = unread }
    }
    /// By the edition's number (`LanguageCode.index`): found with no string hashed.
    let languages = Mutex<[Language?]>([])

    /// One REST exchange whatever its status (redirects followed): for interfaces whose error bodies say more than
    /// their status (the reading lists').
    func restAnswer(_ req: UpstreamRequest) async throws -> UpstreamResponse { try await upstream.exchange(req).0 }

    /// One call with its redirects followed, under the origin's guard (`UpstreamClient.exchange`).
    @inline(__always)
    func exchange(_ req: UpstreamRequest) async throws -> (UpstreamResponse, Bool) { try await upstream.exchange(req) }

    /// A write, sent once (`UpstreamClient.sendOnce`); a save that failed once sent is `EditOutcomeUnknown`.
    func sendOnce(_ req: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
        try await upstream.sendOnce(req, deadline: deadline)
    }

    /// Decodes an answer leniently (see Lenient.swift), counting and logging the list items it had to skip.
    func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8], kind call: CallKind) throws -> T {
        let kind = call.rawValue
        let skipped = SkippedItems(pagesKind: kind)
        var decoder = UpstreamJSONDecoder()
        decoder.userInfo[SkippedItems.key] = skipped
        let value: T
        do { value = try decoder.decode(T.self, from: body) } catch {
            throw UpstreamError.malformed("\(kind): the answer is not the expected JSON shape")
        }
        for (itemKind, n) in skipped.counts.sorted(by: { $0.key < $1.key }) {
            metrics.skipped(kind: itemKind, count: n)
            logger.warning("upstream items skipped", [("call", kind), ("kind", itemKind), ("count", "\(n)")])
        }
        return value
    }

    struct RESTError: Decodable { var detail: String?; var title: String? }

    /// REST v1: the status says what happened; errors carry a JSON body with `detail`.
    func rest<T: Decodable>(_ req: UpstreamRequest, as type: T.Type) async throws -> (T, Int) {
        let (value, size, _) = try await restFollowing(req, as: type)
        return (value, size)
    }

    /// Like `rest`, and says whether a redirect was followed.
    func restFollowing<T: Decodable>(_ req: UpstreamRequest, as type: T.Type) async throws -> (T, Int, Bool) {
        let (response, redirected) = try await exchange(req)
        switch response.status {
        case 200..<300: break
        case 404:
            let detail = (try? UpstreamJSONDecoder().decode(RESTError.self, from: response.body))?.detail
            throw UpstreamError.notFound(detail ?? "not found upstream")
        case 401, 403: throw UpstreamError.notAuthorised
        default: throw UpstreamError.unavailable(status: response.status)
        }
        return (try decode(T.self, response.body, kind: req.kind), response.body.count, redirected)
    }

    /// Action API: errors come as `{"error":{"code","info"}}`, usually with HTTP 200.
    func action<Q: Decodable>(_ req: UpstreamRequest, as type: Q.Type) async throws -> (Q, Int) {
        let response = try await actionAnswer(req)
        let envelope = try decode(ActionEnvelope<Q>.self, response.body, kind: req.kind)
        if let e = envelope.error { try actionError(e.code, info: e.info, req, response) }
        guard let q = envelope.query else {
            // A generator with no results answers without `query` at all.
            if let empty = Self.emptyQuery(Q.self) { return (empty, response.body.count) }
            throw UpstreamError.malformed("\(req.kind): no query in the answer")
        }
        return (q, response.body.count)
    }

    /// An Action API exchange whose status is a success (anything else thrown as what it means).
    func actionAnswer(_ req: UpstreamRequest) async throws -> UpstreamResponse {
        try Self.actionStatus(try await exchange(req).0)
    }

    /// An Action API answer by its HTTP status: the answer when 2xx, else the error it means.
    static func actionStatus(_ response: UpstreamResponse) throws -> UpstreamResponse {
        switch response.status {
        case 200..<300: return response
        case 401, 403: throw UpstreamError.notAuthorised
        case 404: throw UpstreamError.notFound("not found upstream")
        default: throw UpstreamError.unavailable(status: response.status)
        }
    }

    static func emptyQuery<Q: Decodable>(_ type: Q.Type) -> Q? {
        try? UpstreamJSONDecoder().decode(Q.self, from: Array("{}".utf8))
    }

    func pages(_ req: UpstreamRequest) async throws -> (QueryResult, Int) {
        let (q, size) = try await action(req, as: PagesQuery.self)
        let pages = (q.pages ?? []).filter { $0.missing != true }
            .enumerated().sorted { ($0.element.index ?? $0.offset, $0.offset) < ($1.element.index ?? $1.offset, $1.offset) }.map(\.element)
        return (QueryResult(pages: pages, redirects: q.redirects ?? []), size)
    }
}
