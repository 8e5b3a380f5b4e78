import EventLoops
import Glibc
import Synchronization
import HTTPCore
/// What a handler gets: the request, the path parameters of its route, and the request id.
public struct RequestContext: Sendable {
    public let request: HTTPRequest
    public let parameters: [String: String]
    /// The request's id (the client's `X-Request-ID`, or the server's), as sent back in `X-Request-ID`.
    public var requestID: String { id.string }
    let id: RequestID
    public let route: String
    /// The request's trace (W3C Trace Context), as kept from `traceparent` or made fresh.
    public let trace: TraceContext?
    /// Who sent it: the connection's peer, or the address a trusted proxy forwarded for (the trusted proxies configured).
    public let client: ClientAddress
    /// The peer is a trusted proxy: its `X-Forwarded-Proto` and `X-Forwarded-Host` may be believed.
    public let viaTrustedProxy: Bool
    /// What its `Authorization` says, read once (the rate limiter keyed the request by it).
    public let credentials: Credentials
    /// The languages it asks words in, read once by the app's localizer (`.unnamed` without one).
    public let language: RequestLanguage

    public init(request: HTTPRequest, parameters: [String: String] = [:], requestID: String = "-", route: String = "", trace: TraceContext? = nil,
                client: ClientAddress = .unknown, viaTrustedProxy: Bool = false, language: RequestLanguage = .unnamed) {
        self.init(request: request, parameters: parameters, id: RequestID(client: requestID), route: route, trace: trace,
                  client: client, viaTrustedProxy: viaTrustedProxy, credentials: Credentials.read(request), language: language)
    }

    init(request: HTTPRequest, parameters: [String: String], id: RequestID, route: String, trace: TraceContext?,
         client: ClientAddress, viaTrustedProxy: Bool, credentials: Credentials, language: RequestLanguage) {
        self.request = request; self.parameters = parameters; self.id = id; self.route = route; self.trace = trace
        self.client = client; self.viaTrustedProxy = viaTrustedProxy; self.credentials = credentials; self.language = language
    }

    /// A forwarding header's value when the request came through a trusted proxy; nil otherwise (a client's own
    /// `X-Forwarded-Proto` says nothing).
    public func forwarded(_ name: String) -> String? { viaTrustedProxy ? request.headers[name] : nil }

    public func parameter(_ name: String) -> String? { parameters[name] }
}

/// A handler answers on the event loop (`.response`: cached bytes, health) or later (`.async`: upstream work in a
/// task; `.callback`: work that answers through a callback, with no task). The loop never waits for either; other
/// connections go on being served.
public enum HandlerResult: Sendable {
    case response(HTTPResponse)
    case async(@Sendable () async throws -> HTTPResponse)
    /// `start` runs at once, on the connection's loop, and answers through the `Responder` it is given, exactly
    /// once, from any thread: for work whose answer arrives as a callback on the loop (an upstream call made on it),
    /// which then needs no task, no continuation and no frames. A responder dropped unanswered answers 500.
    case callback(@Sendable (Responder) -> Void)
}

/// The answer to one request whose handler returned `.callback`. Answering on the connection's loop writes the
/// response at once; from another thread it is handed to the loop. Only the first answer counts.
public final class Responder: Sendable {
    /// Answers once: set by the first `respond` (or by `deinit`), from whichever thread.
    private let answered = Atomic(false)
    private let connection: LoopBound<Connection>

    init(_ connection: LoopBound<Connection>) { self.connection = connection }

    public func respond(_ response: HTTPResponse) {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        deliver(response)
    }

    private func deliver(_ response: HTTPResponse) {
        let connection = self.connection
        if connection.loop.inLoop { connection.value.callbackAnswered(response) } else { connection.loop.execute { connection.value.callbackAnswered(response) } }
    }

    deinit {
        // A handler that lost its responder without answering must not leave the connection waiting for ever.
        if !answered.load(ordering: .acquiring) {
            deliver(Problem(status: 500, .noAnswer).response)
        }
    }
}

/// A handler may throw: a `ProblemConvertible` error is answered with its problem, any other with a 500 (`Problem.answering`).
public typealias Handler = @Sendable (RequestContext) throws -> HandlerResult

/// Method + path pattern → handler. Patterns are `/literal/{name}`; a `{name}` matches one non-empty segment.
/// HEAD is answered by the GET route (the server drops the body). A known path with another method is a
/// 405 with `Allow`; anything else a 404.
public final class Router: @unchecked Sendable {   // @unchecked: routes are added only before the server starts (asserted: `freeze`), then only read.
    /// A class: a match hands it on with one retain.
    public final class Route: Sendable {
        public let method: String
        public let pattern: String
        public let index: Int
        /// The largest request body this route takes, when it takes more than the server's `maxBody`.
        public let maxBody: Int?
        /// Whether a client's rate limit applies (the probes are never limited).
        public let limited: Bool
        /// Units a request costs its client when its handler works off the loop (answered on it: 1).
        public let cost: Int
        /// What the route does with the request's credentials.
        public let account: Account
        /// Served only on the operators' listener when the server has one (`ServerConfiguration.adminPort`).
        public let adminOnly: Bool
        /// Whether a 2xx answer proves its bearer token was accepted by whoever it was sent on to (the route sends it
        /// upstream and answers 401 when it is refused): the token becomes a client of its own.
        public let vouches: Bool
        let segments: [Segment]
        let handler: Handler
        init(method: String, pattern: String, index: Int, maxBody: Int?, limited: Bool, cost: Int, account: Account, adminOnly: Bool,
             segments: [Segment], handler: @escaping Handler) {
            self.adminOnly = adminOnly
            self.method = method; self.pattern = pattern; self.index = index; self.maxBody = maxBody
            self.limited = limited; self.cost = cost; self.account = account; self.segments = segments; self.handler = handler
            if case .required = account { vouches = true } else { vouches = false }
        }
    }

    /// What a route does with credentials.
    public enum Account: Sendable {
        /// Reads none, or sends them on when given without depending on them for its answer.
        case optional
        /// Needs a bearer token, sends it on and answers 401 when it is refused, so a 2xx answer vouches for the
        /// token. `refusal` is the route's problem for credentials it refuses from the head alone (nil: admitted):
        /// a request whose body has not arrived with its head is answered with it at once, none of the body read.
        case required(refusal: @Sendable (Credentials) -> Problem?)
    }

    enum Segment: Equatable, Sendable {
        case literal(String)
        case parameter(String)
    }

    public enum Match {
        case found(Route, [String: String])
        case methodNotAllowed(allow: [String])
        case notFound
    }

    public private(set) var routes: [Route] = []
    /// Literal routes by the byte length of their path: a request's path is compared only with the few of its
    /// length (no hashing).
    private var literalsByLength: [[(path: [UInt8], routes: [Route])]] = []
    private var patterned: [Route] = []

    public init() {}

    /// Route labels, in registration order (index = `Route.index`); used as metric labels.
    public var patterns: [String] { routes.map(\.pattern) }

    /// Set when a server starts on this router: from then on its tables are only read, from every loop.
    private let frozen = Atomic(false)
    func freeze() { frozen.store(true, ordering: .releasing) }

    /// Units a request costs when its handler answers later (`.async`, `.callback`: work that reaches an upstream or
    /// renders), unless its route says otherwise.
    public static let workCost = 4

    /// `maxBody`: a larger request body limit for this route alone (every other route keeps the server's).
    /// `limited`: whether per-client rate limits apply. `cost`: units a request spends when it works off the loop.
    /// `account`: whether the route needs a bearer token (`Account`). `adminOnly`: served only on the operators'
    /// listener when there is one.
    public func add(_ method: String, _ pattern: String, maxBody: Int? = nil, limited: Bool = true, cost: Int = Router.workCost,
                    account: Account = .optional, adminOnly: Bool = false, _ handler: @escaping Handler) {
        assert(!frozen.load(ordering: .acquiring), "routes are added before the server starts")
        let segments: [Segment] = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { s in
            if s.hasPrefix("{") && s.hasSuffix("}") { return .parameter(String(s.dropFirst().dropLast())) }
            return .literal(String(s))
        }
        let route = Route(method: method, pattern: pattern, index: routes.count, maxBody: maxBody, limited: limited, cost: max(1, cost),
                          account: account, adminOnly: adminOnly, segments: segments, handler: handler)
        routes.append(route)
        if segments.allSatisfy({ if case .literal = $0 { return true } else { return false } }) {
            let path = "/" + segments.map { if case .literal(let l) = $0 { return l } else { return "" } }.joined(separator: "/")
            let n = path.utf8.count
            if literalsByLength.count <= n { literalsByLength.append(contentsOf: repeatElement([], count: n + 1 - literalsByLength.count)) }
            if let i = literalsByLength[n].firstIndex(where: { $0.path == Array(path.utf8) }) { literalsByLength[n][i].routes.append(route) }
            else { literalsByLength[n].append((path: Array(path.utf8), routes: [route])) }
        } else {
            patterned.append(route)
        }
    }

    public func get(_ pattern: String, _ handler: @escaping Handler) { add("GET", pattern, handler) }
    public func post(_ pattern: String, _ handler: @escaping Handler) { add("POST", pattern, handler) }

    /// The body limit of the route a request goes to, when that route set a larger one than the server's.
    public func maxBody(method: String, path: String) -> Int? {
        if case .found(let route, _) = match(method: method, path: path) { return route.maxBody }
        return nil
    }

    /// The literal routes registered for exactly this path (its bytes compared with those of the few of its length).
    private func literalRoutes(_ path: String) -> [Route]? {
        var path = path
        return path.withUTF8 { literalRoutes($0) }
    }

    private func literalRoutes(_ p: UnsafeBufferPointer<UInt8>) -> [Route]? {
        let n = p.count
        guard n > 0, n < literalsByLength.count else { return nil }
        for candidate in literalsByLength[n] where candidate.path.withUnsafeBufferPointer({ memcmp($0.baseAddress!, p.baseAddress!, n) == 0 }) {
            return candidate.routes
        }
        return nil
    }

    /// Matches a request's (validated, still percent-encoded) path; its segments are decoded only when no
    /// literal route has it.
    public func match(method: String, path: String) -> Match {
        let wanted = method == "HEAD" ? "GET" : method
        let literal = literalRoutes(path)
        if let hit = literal?.first(where: { $0.method == wanted }) { return .found(hit, [:]) }
        return matchSegments(wanted, path, literal)
    }

    /// The same for a parsed request, its path read as bytes: a literal route is found with no string made.
    func match(_ request: HTTPRequest) -> Match {
        let method = request.method
        let wanted = method == "HEAD" ? "GET" : method
        let literal = request.withPathBytes { literalRoutes($0) }
        if let hit = literal?.first(where: { $0.method == wanted }) { return .found(hit, [:]) }
        return matchSegments(wanted, request.path, literal)
    }

    private func matchSegments(_ wanted: String, _ path: String, _ literal: [Route]?) -> Match {
        let segments = HTTPRequest.segments(ofPath: path)
        // An escaped path may still spell a literal route once decoded (`/fe%65d`).
        let decodedLiteral = path.utf8.contains(37) ? literalRoutes("/" + segments.joined(separator: "/")) : literal
        return resolve(wanted, segments, decodedLiteral)
    }

    /// The methods of RFC 9110 §9, PATCH (RFC 5789) and QUERY (the HTTP WG's safe-method-with-body draft, which
    /// clients and test tools already send): on a route that does not allow one, the answer is 405 with `Allow`;
    /// any other method is 501.
    public static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "QUERY"]

    /// `rawPath`, when given and free of percent-escapes, finds literal routes without joining the segments.
    public func match(method: String, segments: [String], rawPath: String? = nil) -> Match {
        let key: String
        if let rawPath, rawPath.utf8.first == 47, !rawPath.utf8.contains(37) { key = rawPath }
        else { key = "/" + segments.joined(separator: "/") }
        return resolve(method == "HEAD" ? "GET" : method, segments, literalRoutes(key))
    }

    /// Whether a route's segments take a path's: each literal equal, each parameter non-empty.
    private static func matches(_ pattern: [Segment], _ segments: [String]) -> Bool {
        for i in pattern.indices {
            switch pattern[i] {
            case .literal(let l): if l != segments[i] { return false }
            case .parameter: if segments[i].isEmpty { return false }
            }
        }
        return true
    }

    private func resolve(_ wanted: String, _ segments: [String], _ exactRoutes: [Route]?) -> Match {
        // Fast path: a literal route with this method.
        if let exactRoutes, let hit = exactRoutes.first(where: { $0.method == wanted }) { return .found(hit, [:]) }
        var candidates: [(Route, [String: String])] = exactRoutes?.map { ($0, [:]) } ?? []
        for i in patterned.indices where patterned[i].segments.count == segments.count {
            // Compared in place first (a route that does not match costs no copy and no dictionary), then its
            // parameters read.
            guard Self.matches(patterned[i].segments, segments) else { continue }
            var params: [String: String] = [:]
            for (seg, value) in zip(patterned[i].segments, segments) { if case .parameter(let name) = seg { params[name] = value } }
            candidates.append((patterned[i], params))
        }
        if candidates.isEmpty { return .notFound }
        if let hit = candidates.first(where: { $0.0.method == wanted }) { return .found(hit.0, hit.1) }
        var allow = Set(candidates.map(\.0.method))
        if allow.contains("GET") { allow.insert("HEAD") }
        return .methodNotAllowed(allow: allow.sorted())
    }
}
