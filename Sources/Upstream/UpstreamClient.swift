import EventLoops
import Foundation
import Synchronization
import LedeBasics
import HTTPCore
import HTTPClient

/// The exchanges with upstream origins, the same for every service and every origin: each request through its origin's
/// `UpstreamGuard` (Retry-After back-off per kind, the circuit breaker, bounded concurrency), within a deadline, over a
/// transport (live or embedded), redirects followed only within the origin and its base path, every outcome counted in
/// `UpstreamMetrics`. the Wikimedia module builds its calls on it; another origin (images, Reddit) uses it
/// directly, as `any GuardedUpstream`, sharing the guard and the metrics (`sharing(transport:deadline:)`).
public final class UpstreamClient: GuardedUpstream, Sendable {
    public let transport: UpstreamTransport
    public let metrics: UpstreamMetrics
    /// Retry-After back-off, circuit breaker and concurrency bound, per origin.
    public let guards: UpstreamGuard
    /// Per-call deadline in seconds.
    public let deadline: Double
    /// Warnings (an origin asking to back off). Never carries user data.
    public let logger: Logger
    /// Redirects followed per call, at most (a loop or a longer chain is `unavailable`).
    public static let maxRedirects = 3

    public init(transport: UpstreamTransport, metrics: UpstreamMetrics = UpstreamMetrics(), guards: UpstreamGuard = UpstreamGuard(),
                deadline: Double = 2, logger: Logger = Logger(level: .off)) {
        self.transport = transport; self.metrics = metrics; self.guards = guards; self.deadline = deadline; self.logger = logger
    }

    /// A client for another origin (`transport`'s) sharing this one's guard, metrics and logger, with its own per-call
    /// `deadline`.
    public func sharing(transport: UpstreamTransport, deadline: Double) -> UpstreamClient {
        UpstreamClient(transport: transport, metrics: metrics, guards: guards, deadline: deadline, logger: logger)
    }

    /// The origin (`scheme://host[:port]`) a request for `lang` goes to: what back-off and the breaker are kept by.
    public func origin(lang: String) -> String { originGate(lang: lang).name }

    /// The origin of a request key's calls (a wiki's language; one key for another origin), as its guard handle (its
    /// name is the origin). Kept per key: bounded by the keys the transports serve.
    package func originGate(lang: String) -> UpstreamGuard.Gate {
        if let known = gates.withLock({ $0[lang] }) { return known }
        let base = transport.baseURL(lang: lang)
        let gate = guards.gate(origin: URIReference(base).origin ?? base)
        return gates.withLock { table in
            if let known = table[lang] { return known }
            table[lang] = gate
            return gate
        }
    }
    let gates = Mutex<[String: UpstreamGuard.Gate]>([:])

    /// One exchange whatever its status (redirects followed): an origin that is not a wiki's API, or an interface
    /// whose error bodies say more than their status.
    public func answer(_ req: UpstreamRequest) async throws -> UpstreamResponse { try await exchange(req).0 }

    /// One call with its redirects followed (GET only, same origin and base path, at most `maxRedirects`).
    /// Returns the final answer and whether a redirect was followed.
    @inline(__always)
    package func exchange(_ req: UpstreamRequest) async throws -> (UpstreamResponse, Bool) {
        try await follow(try await guardedExchange(req), of: req)
    }

    /// The redirects of an answer to `req` followed, if it is one.
    package func follow(_ first: UpstreamResponse, of req: UpstreamRequest) async throws -> (UpstreamResponse, Bool) {
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
    package static func isRedirect(_ response: UpstreamResponse) -> Bool {
        [301, 302, 303, 307, 308].contains(response.status) && response.headers["location"] != nil
    }

    /// The request a redirect answer leads to, nil when `response` is not a redirect; throws for one Lede does not
    /// follow (another origin, not a GET, too many hops).
    package func redirectTarget(_ response: UpstreamResponse, of req: UpstreamRequest, hops: Int) throws -> UpstreamRequest? {
        guard Self.isRedirect(response), let location = response.headers["location"] else { return nil }
        guard hops < Self.maxRedirects, req.method == .get, let next = redirect(req, to: location) else {
            throw UpstreamError.unavailable(status: response.status)
        }
        return next
    }

    /// `location` resolved against the request's URL (RFC 3986 §5.2); nil when it leaves the base URL (another
    /// origin, or outside the template's path): Lede does not follow a redirect to somewhere else.
    package func redirect(_ req: UpstreamRequest, to location: String) -> UpstreamRequest? {
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
    package func guardedExchange(_ req: UpstreamRequest) async throws -> UpstreamResponse {
        let admitted = try admit(req)
        return try await guardedExchange(req, admitted, holdsSlot: guards.tryAcquire(admitted.gate))
    }

    /// A call let through by the origin's guard: who it is for, whether it is the breaker's probe, and when it began.
    package struct Admitted {
        let gate: UpstreamGuard.Gate
        let probe: Bool
        let start: UInt64
    }

    /// Back-off and breaker, checked before anything is sent (a refusal is counted here).
    package func admit(_ req: UpstreamRequest, gate known: UpstreamGuard.Gate? = nil) throws -> Admitted {
        let gate = known ?? originGate(lang: req.lang)
        do {
            return Admitted(gate: gate, probe: try guards.admit(gate, kind: req.kind.rawValue, user: req.authorization), start: Syscall.monotonicNanos())
        } catch let e as UpstreamError {
            metrics.record(kind: req.kind.rawValue, outcome: e.outcome, seconds: nil)
            throw e
        }
    }

    package static func seconds(since start: UInt64) -> Double { Double(Syscall.monotonicNanos() &- start) / 1e9 }

    /// The rest of a guarded exchange: a slot (unless one is held already) within the deadline, the send, the
    /// outcome settled.
    package func guardedExchange(_ req: UpstreamRequest, _ a: Admitted, holdsSlot: Bool) async throws -> UpstreamResponse {
        try await takeSlot(req, a, holdsSlot: holdsSlot, deadline: deadline)
        return try settle(req, a, await send(req, a, deadline: deadline) ?? .failure(.timeout))
    }

    /// A slot of the origin's concurrency within `deadline` (unless one is held already); a timeout otherwise, counted.
    package func takeSlot(_ req: UpstreamRequest, _ a: Admitted, holdsSlot: Bool, deadline: Double) async throws {
        do {
            if !holdsSlot { try await guards.acquire(a.gate, timeout: deadline) }
        } catch {
            if a.probe { guards.record(a.gate, outcome: .abandoned, probe: true) }
            metrics.record(kind: req.kind.rawValue, outcome: "timeout", seconds: Self.seconds(since: a.start))
            throw UpstreamError.timeout
        }
    }

    /// The exchange itself in what is left of `deadline` since the call began; nil when nothing is left (nothing sent).
    package func send(_ req: UpstreamRequest, _ a: Admitted, deadline: Double) async -> Result<UpstreamResponse, UpstreamError>? {
        let remaining = deadline - Self.seconds(since: a.start)
        guard remaining > 0 else { return nil }
        do { return .success(try await transport.send(req, deadline: remaining)) }
        catch let e as UpstreamError { return .failure(e) }
        catch { return .failure(.unavailable(status: 0)) }
    }

    /// The held slot given back and the outcome of an exchange recorded (breaker, metrics, Wikimedia's
    /// back-pressure): the answer, or the error the call ends with.
    package func settle(_ req: UpstreamRequest, _ a: Admitted, _ result: consuming Result<UpstreamResponse, UpstreamError>) throws -> UpstreamResponse {
        guards.release(a.gate)
        let seconds = Self.seconds(since: a.start)
        switch consume result {
        case .success(let response):
            // Wikimedia's back-pressure: 429, or 503 with Retry-After. The origin answered: not a breaker failure. (No
            // other answer's fields are looked through for it.)
            let retryAfter = response.status == 429 || response.status == 503 ? guards.retryAfterSeconds(response.headers["retry-after"]) : nil
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

    /// A write (a save, a delete, an edit): one exchange under the origin's guard within its own `deadline`, never sent twice and never
    /// redirected. Refused before sending (back-off, breaker, no slot within the deadline, a certificate): the usual
    /// `UpstreamError`. Failed once sent (no complete answer in time, the connection lost): `WriteOutcomeUnknown`.
    package func sendOnce(_ req: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
        let a = try admit(req)
        try await takeSlot(req, a, holdsSlot: guards.tryAcquire(a.gate), deadline: deadline)
        guard let result = await send(req, a, deadline: deadline) else {
            guards.release(a.gate)
            throw UpstreamError.timeout
        }
        do { return try settle(req, a, result) } catch let e as UpstreamError {
            switch e {
            case .timeout, .unavailable, .tooLarge: throw WriteOutcomeUnknown(cause: e)
            default: throw e
            }
        }
    }

    /// `exchange` answered through a callback: when the guard lets the call through with a free slot and the
    /// transport can start it here (the live transport, on a server loop), no task is made and `completion` runs
    /// where the transport answers (that loop); otherwise — queueing for a slot, another transport, a redirect to
    /// follow — the rest goes on in a task that prefers the current loop. Either way the same steps, in the same
    /// order, as the async `exchange`. `read` takes the count out of the answer, given `owner`; it captures nothing.
    /// What the call goes on from is one `UpstreamCall`, the transport's (and the HTTP client's) answer target: no
    /// closure is made between the transport and `completion`.
    package func exchange(_ req: consuming UpstreamRequest, gate: UpstreamGuard.Gate?, owner: AnyObject & Sendable,
                          reading read: @escaping @Sendable (AnyObject, UpstreamResponse, UpstreamRequest) throws -> Int,
                          completion: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        let a: Admitted
        do { a = try admit(req, gate: gate) } catch { completion(.failure(error)); return }
        let trace = TraceContext.current   // the request's, for the steps that go on in a task
        let holdsSlot = guards.tryAcquire(a.gate)
        let remaining = deadline - Self.seconds(since: a.start)
        // The request moved into the call (not copied); a call the transport does not start goes on from it in a task.
        let call = UpstreamCall(client: self, request: req, admitted: a, owner: owner, read: read, completion: completion, trace: trace)
        if holdsSlot, remaining > 0, transport.start(call, deadline: remaining) { return }
        call.goOnInTask { [self] in try await guardedExchange(call.request, a, holdsSlot: holdsSlot) }
    }
}

/// An upstream call answered through a callback (`UpstreamClient.exchange(_:gate:owner:reading:completion:)`): what
/// it goes on from once the transport has an answer — the request, its admission by the guard, how its answer is read
/// and whom to tell — in one object, which the live transport hands on to the HTTP client as the answer's target.
/// The call is the HTTP client's own entry for it (a `ClientCall`): the client queues and carries this object, so
/// nothing else is made per call.
public final class UpstreamCall: ClientCall, @unchecked Sendable {   // @unchecked: its own fields are constants; the ClientCall part is read and changed only on the loop that carries the call.
    let client: UpstreamClient
    public let request: UpstreamRequest
    let admitted: UpstreamClient.Admitted
    let owner: AnyObject & Sendable
    let read: @Sendable (AnyObject, UpstreamResponse, UpstreamRequest) throws -> Int
    let completion: @Sendable (Result<Int, any Error>) -> Void
    /// The request's trace context, read once when the call began.
    public let trace: TraceContext?

    init(client: UpstreamClient, request: consuming UpstreamRequest, admitted: UpstreamClient.Admitted, owner: AnyObject & Sendable,
         read: @escaping @Sendable (AnyObject, UpstreamResponse, UpstreamRequest) throws -> Int,
         completion: @escaping @Sendable (Result<Int, any Error>) -> Void, trace: TraceContext?) {
        self.client = client; self.request = request; self.admitted = admitted; self.owner = owner; self.read = read
        self.completion = completion; self.trace = trace
    }

    deinit { answerIfDropped() }

    /// The HTTP client's answer to the call, when the live transport started it, as the rest of Lede reads it.
    public override func answered(_ result: consuming Result<ClientResponse, HTTPClientError>) {
        switch consume result {
        case .success(let response): transportAnswered(.success(LiveTransport.answer(response)))
        case .failure(let e): transportAnswered(.failure(LiveTransport.upstreamError(e)))
        }
    }

    /// The transport's answer (once): settled under the origin's guard, then read and told; a redirect is followed in
    /// a task that prefers the current loop.
    public func transportAnswered(_ result: consuming Result<UpstreamResponse, UpstreamError>) {
        let response: UpstreamResponse
        do { response = try client.settle(request, admitted, result) } catch { completion(.failure(error)); return }
        guard UpstreamClient.isRedirect(response) else {
            do { completion(.success(try read(owner, response, request))) } catch { completion(.failure(error)) }
            return
        }
        goOnInTask { response }   // `follow` checks the redirect and makes the hops
    }

    /// The rest of the call in a task that prefers the current loop, under the call's trace: `first` answer's redirects
    /// followed, then read and told.
    func goOnInTask(_ first: @escaping @Sendable () async throws -> UpstreamResponse) {
        Task(executorPreference: EventLoop.current) { [self] in
            await TraceContext.$task.withValue(trace) {
                do { completion(.success(try read(owner, try await client.follow(try await first(), of: request).0, request))) }
                catch { completion(.failure(error)) }
            }
        }
    }
}

/// A write that failed after its request was sent: it may have been applied. Never sent again.
public struct WriteOutcomeUnknown: Error, Sendable, Equatable {
    public var cause: UpstreamError

    package init(cause: UpstreamError) {
        self.cause = cause
    }
}
