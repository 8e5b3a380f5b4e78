import EventLoops
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

    public let transport: UpstreamTransport
    public let cache: UpstreamCache
    public let metrics: UpstreamMetrics
    /// Retry-After back-off, circuit breaker and concurrency bound, per origin.
    public let guards: UpstreamGuard
    /// Per-call deadline in seconds (`--upstream-timeout`).
    public let deadline: Double
    public let ttls: TTLs
    /// Warnings about upstream answers (items skipped). Never carries user data.
    public let logger: Logger
    let today: @Sendable () -> FeedDate
    /// Redirects followed per call, at most (a loop or a longer chain is `unavailable`).
    public static let maxRedirects = 3

    public init(transport: UpstreamTransport, cache: UpstreamCache = UpstreamCache(), metrics: UpstreamMetrics = UpstreamMetrics(),
                guards: UpstreamGuard = UpstreamGuard(), deadline: Double = 2, ttls: TTLs = TTLs(), logger: Logger = Logger(level: .off),
                today: @escaping @Sendable () -> FeedDate = { FeedDate.today() }) {
        self.transport = transport; self.cache = cache; self.metrics = metrics; self.guards = guards
        self.deadline = deadline; self.ttls = ttls; self.logger = logger; self.today = today
    }

    // MARK: - Origins, exchange, redirects, status mapping, decoding (each service's calls: Services/*/WikimediaClient+*.swift)

    /// The origin (`scheme://host[:port]`) a request for `lang` goes to: what back-off and the breaker are kept by.
    public func origin(lang: String) -> String { originGate(lang: lang).name }

    /// The origin of a language's calls, as its guard handle (its name is the origin).
    func originGate(lang: String) -> UpstreamGuard.Gate {
        if let known = languages.withLock({ $0[lang] }) { return known.gate }
        let base = transport.baseURL(lang: lang)
        let gate = guards.gate(origin: URIReference(base).origin ?? base)
        return languages.withLock { table in
            if let known = table[lang] { return known.gate }
            table[lang] = Language(gate: gate)
            return gate
        }
    }

    /// What is kept per language (bounded by the languages Lede accepts, a few hundred codes): its origin's guard
    /// handle and the badge's prepared request.
    struct Language {
        let gate: UpstreamGuard.Gate
        var unread: UpstreamRequest?
    }
    let languages = Mutex<[String: Language]>([:])

    /// One REST exchange whatever its status (redirects followed): for interfaces whose error bodies say more than
    /// their status (the reading lists').
    func restAnswer(_ req: UpstreamRequest) async throws -> UpstreamResponse { try await exchange(req).0 }

    /// One call with its redirects followed (GET only, same origin and base path, at most `maxRedirects`).
    /// Returns the final answer and whether a redirect was followed.
    @inline(__always)
    func exchange(_ req: UpstreamRequest) async throws -> (UpstreamResponse, Bool) {
        try await follow(try await guardedExchange(req), of: req)
    }

    /// The redirects of an answer to `req` followed, if it is one.
    func follow(_ first: UpstreamResponse, of req: UpstreamRequest) async throws -> (UpstreamResponse, Bool) {
        var response = first
        var current = req
        var redirected = false
        var hops = 0
        while true {
            guard let next = try redirectTarget(response, of: current, hops: hops) else { return (response, redirected) }
            hops += 1; redirected = true; current = next
            response = try await guardedExchange(current)
        }
    }

    /// A redirect Lede may follow: its status, and a `Location`.
    static func isRedirect(_ response: UpstreamResponse) -> Bool {
        [301, 302, 303, 307, 308].contains(response.status) && response.headers["location"] != nil
    }

    /// The request a redirect answer leads to, nil when `response` is not a redirect; throws for one Lede does not
    /// follow (another origin, not a GET, too many hops).
    func redirectTarget(_ response: UpstreamResponse, of req: UpstreamRequest, hops: Int) throws -> UpstreamRequest? {
        guard Self.isRedirect(response), let location = response.headers["location"] else { return nil }
        guard hops < Self.maxRedirects, req.method == .get, let next = redirect(req, to: location) else {
            throw UpstreamError.unavailable(status: response.status)
        }
        return next
    }

    /// `location` resolved against the request's URL (RFC 3986 §5.2); nil when it leaves the base URL (another
    /// origin, or outside the template's path): Lede does not follow a redirect to somewhere else.
    func redirect(_ req: UpstreamRequest, to location: String) -> UpstreamRequest? {
        let base = transport.baseURL(lang: req.lang)
        let baseRef = URIReference(base)
        guard let origin = baseRef.origin, !location.isEmpty, !location.utf8.contains(where: { $0 < 33 || $0 == 127 }) else { return nil }
        let target = URIReference(base + req.pathAndQuery).resolving(URIReference(location))
        let basePath = baseRef.path.hasSuffix("/") ? String(baseRef.path.dropLast()) : baseRef.path
        guard target.origin?.lowercased() == origin.lowercased(), target.path.hasPrefix(basePath + "/") else { return nil }
        var next = req
        next.path = String(target.path.dropFirst(basePath.count)) + (target.query.map { "?" + $0 } ?? "")
        next.query = []
        return next
    }

    /// One HTTP exchange under the origin's guard: Retry-After back-off and the breaker are checked first,
    /// a slot of the origin's concurrency is taken within the deadline, and the outcome is recorded.
    @inline(__always)
    func guardedExchange(_ req: UpstreamRequest) async throws -> UpstreamResponse {
        let admitted = try admit(req)
        return try await guardedExchange(req, admitted, holdsSlot: guards.tryAcquire(admitted.gate))
    }

    /// A call let through by the origin's guard: who it is for, whether it is the breaker's probe, and when it began.
    struct Admitted {
        let gate: UpstreamGuard.Gate
        let probe: Bool
        let start: UInt64
    }

    /// Back-off and breaker, checked before anything is sent (a refusal is counted here).
    func admit(_ req: UpstreamRequest, gate known: UpstreamGuard.Gate? = nil) throws -> Admitted {
        let gate = known ?? originGate(lang: req.lang)
        do {
            return Admitted(gate: gate, probe: try guards.admit(gate, kind: req.kind.rawValue, user: req.authorization), start: Syscall.monotonicNanos())
        } catch let e as UpstreamError {
            metrics.record(kind: req.kind.rawValue, outcome: e.outcome, seconds: nil)
            throw e
        }
    }

    static func seconds(since start: UInt64) -> Double { Double(Syscall.monotonicNanos() &- start) / 1e9 }

    /// The rest of a guarded exchange: a slot (unless one is held already) within the deadline, the send, the
    /// outcome settled.
    func guardedExchange(_ req: UpstreamRequest, _ a: Admitted, holdsSlot: Bool) async throws -> UpstreamResponse {
        try await takeSlot(req, a, holdsSlot: holdsSlot, deadline: deadline)
        return try settle(req, a, await send(req, a, deadline: deadline) ?? .failure(.timeout))
    }

    /// A slot of the origin's concurrency within `deadline` (unless one is held already); a timeout otherwise, counted.
    func takeSlot(_ req: UpstreamRequest, _ a: Admitted, holdsSlot: Bool, deadline: Double) async throws {
        do {
            if !holdsSlot { try await guards.acquire(a.gate, timeout: deadline) }
        } catch {
            if a.probe { guards.record(a.gate, outcome: .abandoned, probe: true) }
            metrics.record(kind: req.kind.rawValue, outcome: "timeout", seconds: Self.seconds(since: a.start))
            throw UpstreamError.timeout
        }
    }

    /// The exchange itself in what is left of `deadline` since the call began; nil when nothing is left (nothing sent).
    func send(_ req: UpstreamRequest, _ a: Admitted, deadline: Double) async -> Result<UpstreamResponse, UpstreamError>? {
        let remaining = deadline - Self.seconds(since: a.start)
        guard remaining > 0 else { return nil }
        do { return .success(try await transport.send(req, deadline: remaining)) }
        catch let e as UpstreamError { return .failure(e) }
        catch { return .failure(.unavailable(status: 0)) }
    }

    /// The held slot given back and the outcome of an exchange recorded (breaker, metrics, Wikimedia's
    /// back-pressure): the answer, or the error the call ends with.
    func settle(_ req: UpstreamRequest, _ a: Admitted, _ result: Result<UpstreamResponse, UpstreamError>) throws -> UpstreamResponse {
        guards.release(a.gate)
        let seconds = Self.seconds(since: a.start)
        switch result {
        case .success(let response):
            let retryAfter = guards.retryAfterSeconds(response.headers["retry-after"])
            // Wikimedia's back-pressure: 429, or 503 with Retry-After. The origin answered: not a breaker failure.
            if response.status == 429 || (response.status == 503 && retryAfter != nil) {
                guards.record(a.gate, outcome: .answered, probe: a.probe)
                let wait = guards.backOff(origin: a.gate.name, kind: req.kind.rawValue, user: req.authorization, seconds: retryAfter ?? guards.settings.defaultRetryAfter)
                metrics.record(kind: req.kind.rawValue, outcome: "rate_limited", seconds: seconds)
                logger.warning("upstream asked to back off", [("origin", a.gate.name), ("kind", req.kind.rawValue), ("status", "\(response.status)"), ("retry_after", "\(wait)")])
                throw UpstreamError.rateLimited(retryAfter: wait)
            }
            let outcome: String
            switch response.status {
            case 200..<400: outcome = "ok"
            case 404: outcome = "not_found"
            case 401, 403: outcome = "not_authorised"
            default: outcome = "unavailable"
            }
            guards.record(a.gate, outcome: response.status >= 500 ? .failed : .answered, probe: a.probe)
            metrics.record(kind: req.kind.rawValue, outcome: outcome, seconds: seconds)
            return response
        case .failure(let e):
            if case .rateLimited = e { throw e }   // a transport's own refusal: no exchange to record
            let failed: Bool
            switch e {
            case .timeout, .unavailable, .untrusted: failed = true
            default: failed = false
            }
            guards.record(a.gate, outcome: failed ? .failed : .answered, probe: a.probe)
            metrics.record(kind: req.kind.rawValue, outcome: e.outcome, seconds: seconds)
            throw e
        }
    }

    /// A write (an edit): one exchange under the origin's guard within its own `deadline`, never sent twice and never
    /// redirected. Refused before sending (back-off, breaker, no slot within the deadline, a certificate): the usual
    /// `UpstreamError`. Failed once sent (no complete answer in time, the connection lost): `EditOutcomeUnknown`.
    func sendOnce(_ req: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
        let a = try admit(req)
        try await takeSlot(req, a, holdsSlot: guards.tryAcquire(a.gate), deadline: deadline)
        guard let result = await send(req, a, deadline: deadline) else {
            guards.release(a.gate)
            throw UpstreamError.timeout
        }
        do { return try settle(req, a, result) } catch let e as UpstreamError {
            switch e {
            case .timeout, .unavailable, .tooLarge: throw EditOutcomeUnknown(cause: e)
            default: throw e
            }
        }
    }

    /// `exchange` answered through a callback: when the guard lets the call through with a free slot and the
    /// transport can start it here (the live transport, on a server loop), no task is made and `completion` runs
    /// where the transport answers (that loop); otherwise — queueing for a slot, another transport, a redirect to
    /// follow — the rest goes on in a task that prefers the current loop. Either way the same steps, in the same
    /// order, as the async `exchange`. `read` takes the count out of the answer; it captures nothing, so the exchange's
    /// own closure is the only one made between the transport and `completion`.
    func exchange(_ req: UpstreamRequest, gate: UpstreamGuard.Gate?,
                          reading read: @escaping @Sendable (WikimediaClient, UpstreamResponse, UpstreamRequest) throws -> Int,
                          completion: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        let a: Admitted
        do { a = try admit(req, gate: gate) } catch { completion(.failure(error)); return }
        let trace = TraceContext.current   // the request's, for the steps that go on in a task
        let holdsSlot = guards.tryAcquire(a.gate)
        let remaining = deadline - Self.seconds(since: a.start)
        if holdsSlot, remaining > 0, transport.start(req, deadline: remaining, completion: { [self] result in
            let response: UpstreamResponse
            do { response = try settle(req, a, result) } catch { completion(.failure(error)); return }
            guard Self.isRedirect(response) else { completion(Result { try read(self, response, req) }); return }
            Task(executorPreference: EventLoop.current) { [self] in   // `follow` checks the redirect and makes the hops
                await TraceContext.$task.withValue(trace) {
                    do { completion(.success(try read(self, try await follow(response, of: req).0, req))) } catch { completion(.failure(error)) }
                }
            }
        }) { return }
        Task(executorPreference: EventLoop.current) { [self] in
            await TraceContext.$task.withValue(trace) {
                do { completion(.success(try read(self, try await follow(try await guardedExchange(req, a, holdsSlot: holdsSlot), of: req).0, req))) }
                catch { completion(.failure(error)) }
            }
        }
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
