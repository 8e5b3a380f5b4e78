import Dispatch
import Foundation
import Glibc
import Synchronization
import EventLoops
import HTTPCore

/// Why a call failed. Every case but `timeout` also means the connection it used was closed.
public enum HTTPClientError: Error, Equatable, Sendable {
    /// The deadline (resolve, connect, TLS handshake, queueing, send and receive together) passed.
    case timeout
    case resolve(String)
    /// The connection could not be made (refused, unreachable).
    case connect(String)
    /// The connection broke (reset, or closed before the response was complete).
    case reset
    /// The response is not HTTP/1.1 as RFC 9112 writes it, or its content coding is not one we asked for.
    case malformed(String)
    /// The response body is larger than `maxResponseBytes` (checked while bytes arrive, and after inflating).
    case tooLarge
    /// The TLS handshake failed.
    case tls(String)
    /// The server's certificate could not be verified (chain, expiry, or host name).
    case certificate(String)
    /// The URL is not an absolute http(s) URL this client can call.
    case invalidURL(String)
}

extension HTTPClientError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .timeout: return "timed out"
        case .resolve(let s): return "name resolution failed: \(s)"
        case .connect(let s): return "connection failed: \(s)"
        case .reset: return "the connection was reset or closed early"
        case .malformed(let s): return "malformed response: \(s)"
        case .tooLarge: return "the response is larger than allowed"
        case .tls(let s), .certificate(let s): return s
        case .invalidURL(let s): return "invalid URL: \(s)"
        }
    }
}

public struct ClientRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public init(method: String = "GET", url: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method; self.url = url; self.headers = headers; self.body = body
    }
    /// GET, HEAD, OPTIONS, TRACE, PUT and DELETE may be sent again when a reused connection turns out closed.
    var isIdempotent: Bool { Self.isIdempotent(method) }
    static func isIdempotent(_ method: String) -> Bool { ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(method) }
}

public struct ClientResponse: Sendable {
    public var status: Int
    public var head: ResponseHead
    /// The body, inflated when it came gzip-encoded.
    public var body: [UInt8]
}

/// Scheme, host and port of a URL: what a pool is kept by.
struct Origin: Hashable, Sendable, CustomStringConvertible {
    let tls: Bool
    let host: String
    let port: Int
    /// `scheme://host[:port]` (the metrics' label) and the `Host` field value, written once per origin.
    let description: String
    let hostField: String

    init(tls: Bool, host: String, port: Int) {
        self.tls = tls; self.host = host; self.port = port
        // The host as a URL writes it: an IPv6 address in brackets (checked by bytes: Foundation's contains(String)
        // cost ~4k instructions).
        let bracketed = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        hostField = port == (tls ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
        description = (tls ? "https://" : "http://") + hostField
    }

    static func == (a: Origin, b: Origin) -> Bool { a.tls == b.tls && a.port == b.port && a.host == b.host }
    func hash(into hasher: inout Hasher) { hasher.combine(tls); hasher.combine(host); hasher.combine(port) }

    /// Splits an absolute http(s) URL into its origin and the request target (path and query; a fragment is
    /// dropped). One pass over the bytes: this runs for every upstream call.
    static func parse(_ url: String) throws(HTTPClientError) -> (Origin, String) {
        var url = url
        let result = url.withUTF8 { u -> Result<(Origin, String), HTTPClientError> in
            do throws(HTTPClientError) {
                let (origin, end) = try parseOrigin(u)
                return .success((origin, try target(u, from: end)))
            } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Where `scheme://authority` ends in an absolute http(s) URL (at its first '/', '?' or '#'), or nil when it
    /// does not start with a scheme Lede speaks.
    static func authorityEnd(_ u: UnsafeBufferPointer<UInt8>) -> Int? {
        func lower(_ b: UInt8) -> UInt8 { b >= 65 && b <= 90 ? b + 32 : b }
        func hasPrefix(_ p: StaticString) -> Bool {
            guard u.count >= p.utf8CodeUnitCount else { return false }
            for i in 0..<p.utf8CodeUnitCount where lower(u[i]) != p.utf8Start[i] { return false }
            return true
        }
        var end: Int
        if hasPrefix("https://") { end = 8 } else if hasPrefix("http://") { end = 7 } else { return nil }
        while end < u.count, u[end] != UInt8(ascii: "/"), u[end] != UInt8(ascii: "?"), u[end] != UInt8(ascii: "#") { end += 1 }
        return end
    }

    /// The origin of an absolute http(s) URL, and where its authority ends.
    static func parseOrigin(_ u: UnsafeBufferPointer<UInt8>) throws(HTTPClientError) -> (Origin, Int) {
        guard let end = authorityEnd(u) else { throw .invalidURL("not an absolute http(s) URL") }
        let tls = u[4] == UInt8(ascii: "s") || u[4] == UInt8(ascii: "S")
        let start = tls ? 8 : 7
        let authority = UnsafeBufferPointer(rebasing: u[start..<end])
        guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")) else { throw .invalidURL("not an absolute http(s) URL without userinfo") }
        var hostBytes = authority[...]
        var port = tls ? 443 : 80
        func readPort(_ digits: Slice<UnsafeBufferPointer<UInt8>>) throws(HTTPClientError) -> Int {
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { throw .invalidURL("bad port") }
            let p = digits.reduce(0) { $0 * 10 + Int($1 - 48) }
            guard (1...65535).contains(p) else { throw .invalidURL("bad port") }
            return p
        }
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { throw .invalidURL("an IPv6 literal without ]") }
            let rest = authority[(close + 1)...]
            hostBytes = authority[1..<close]
            if !rest.isEmpty {
                guard rest.first == UInt8(ascii: ":") else { throw .invalidURL("bad port") }
                port = try readPort(rest.dropFirst())
            }
        } else if let colon = authority.lastIndex(of: UInt8(ascii: ":")) {
            port = try readPort(authority[(colon + 1)...])
            hostBytes = authority[..<colon]
        }
        guard !hostBytes.isEmpty, hostBytes.allSatisfy({ $0 > 32 && $0 < 127 }) else { throw .invalidURL("bad host") }
        let host = String(decoding: hostBytes.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
        return (Origin(tls: tls, host: host, port: port), end)
    }

    /// The request target of a URL whose authority ends at `end`: path and query, a fragment dropped.
    static func target(_ u: UnsafeBufferPointer<UInt8>, from end: Int) throws(HTTPClientError) -> String {
        var fragment = end
        while fragment < u.count, u[fragment] != UInt8(ascii: "#") { fragment += 1 }
        let targetBytes = UnsafeBufferPointer(rebasing: u[end..<fragment])
        guard targetBytes.allSatisfy({ $0 > 32 && $0 < 127 }) else { throw .invalidURL("the target holds spaces or control characters") }
        let target = String(decoding: targetBytes, as: UTF8.self)
        return target.isEmpty || target.utf8.first == UInt8(ascii: "?") ? "/" + target : target
    }
}

/// An HTTP/1.1 client on Lede's own epoll event loops: keep-alive connection pools per origin and loop,
/// bounded, with a queue of requests (each with its deadline) when a pool is busy; TLS through the system
/// OpenSSL; name resolution off the loops, cached. It knows nothing of Wikipedia.
///
/// A call made on a server `EventLoop`'s thread (a handler's task runs there) uses pools kept on that very
/// loop: the request is written, the answer read and the caller resumed without leaving the thread. Calls
/// from anywhere else go to the client's own loop threads.
public final class HTTPClient: Sendable {
    public struct Configuration: Sendable {
        /// Loop threads of the client's own, for calls made off the server's loops.
        public var loops = 1
        /// Connections per origin per loop, at most.
        public var connectionsPerOrigin = 16
        /// Largest response body accepted (also after inflating gzip).
        public var maxResponseBytes = 8 << 20
        /// A PEM file of extra trusted CA certificates (the system trust store is always used).
        public var caFile: String?
        /// Idle keep-alive connections are closed after this long.
        public var idleTimeout: Double = 30
        public init(loops: Int = 1, connectionsPerOrigin: Int = 16, maxResponseBytes: Int = 8 << 20, caFile: String? = nil) {
            self.loops = loops; self.connectionsPerOrigin = connectionsPerOrigin; self.maxResponseBytes = maxResponseBytes; self.caFile = caFile
        }
    }

    public var configuration: Configuration { shared.configuration }
    public var metrics: ClientMetrics { shared.metrics }
    let shared: ClientShared
    private let own: [EventLoop]
    let loops: [ClientLoop]
    private let next = Counter()

    public init(configuration: Configuration = Configuration()) throws(HTTPClientError) {
        shared = ClientShared(configuration: configuration, tlsContext: try TLSContext(caFile: configuration.caFile))
        var hosts: [EventLoop] = []
        var made: [ClientLoop] = []
        for i in 0..<max(1, configuration.loops) {
            let host: EventLoop
            do { host = try EventLoop(id: i) } catch { throw .connect(error.description) }
            let loop = ClientLoop(shared: shared, host: host)
            // The loop keeps its client state until it stops (connections on it point back to their pools).
            host.addTicker { now in loop.tick(now: now) }
            host.onStop { loop.close(.reset) }
            hosts.append(host); made.append(loop)
        }
        own = hosts; loops = made
        for (i, host) in own.enumerated() { host.start(name: "lede-client-\(i)") }
    }

    deinit { shutdown() }

    /// Stops the client's loops and closes its connections on the server's loops; calls in flight fail.
    public func shutdown() {
        for host in own { host.stop() }
        for loop in shared.takeAttached() { loop.execute { loop.close(.reset) } }
    }

    /// This client's pools on the server loop whose thread this is, if it is one.
    private func currentServerLoop() -> ClientLoop? {
        guard let server = EventLoop.current else { return nil }
        let shared = self.shared
        return server.attachment(ObjectIdentifier(shared)) {
            let loop = ClientLoop(shared: shared, host: server)
            // Strong captures, not weak ones: a weak reference gives its object a side table for life, and every
            // retain and release of it then takes the runtime's slow path (the loop and the shared state are retained
            // on each call). No cycle outlives the server loop: it drops its tickers, stop hooks and attachments (which
            // hold this loop strongly anyway) when it stops.
            server.addTicker { now in loop.tick(now: now) }
            server.onStop {
                loop.close(.reset)
                shared.detach(loop)
            }
            shared.attached(loop)
            return loop
        }
    }

    /// Sends the request (with `trace`'s fields when given) and returns the response, within `timeout` seconds in all.
    public func execute(_ request: ClientRequest, trace: TraceContext? = nil, timeout: Double) async throws(HTTPClientError) -> ClientResponse {
        let here = currentServerLoop()
        let (origin, target): (Origin, String)
        if let here { (origin, target) = try here.parse(request.url) } else { (origin, target) = try Origin.parse(request.url) }
        // The head written straight into the bytes that go out (no String built and copied per call).
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128 + target.utf8.count + Self.fieldBytes(request.headers) + (trace?.fieldBytes ?? 0) + request.body.count)
        Self.writeStart(request.method, target, origin, into: &bytes)
        try Self.writeFields(request.headers, into: &bytes)
        trace?.appendFields(to: &bytes)
        Self.writeEnd(request.method, request.body, into: &bytes)
        let deadline = Syscall.monotonicNanos() &+ UInt64(max(0, timeout) * 1e9)
        let call = ContinuationCall()
        call.sending(bytes: bytes, isHead: request.method == "HEAD", idempotent: request.isIdempotent, deadline: deadline)
        return try await send(call, to: origin, here: here)
    }

    /// Sends a prepared request, with `headers` (then `fieldValue`, the value of the request's `callField`, written with
    /// no list made for it: a call's credentials) after its own fields and `body` after the head (its
    /// `Content-Length` written here), within `timeout` seconds in all: only these per-call parts are checked
    /// and written; the URL is not parsed, nor the rest of the head written, again.
    public func execute(_ request: PreparedRequest, headers: HTTPHeaders = HTTPHeaders(), fieldValue: String? = nil,
                        trace: TraceContext? = nil, body: [UInt8] = [], timeout: Double) async throws(HTTPClientError) -> ClientResponse {
        try Self.check(request, headers: headers, fieldValue: fieldValue)
        let deadline = Syscall.monotonicNanos() &+ UInt64(max(0, timeout) * 1e9)
        let call = ContinuationCall()
        call.sending(request, headers: headers, fieldValue: fieldValue, trace: trace, body: body, deadline: deadline)
        return try await send(call, to: request.origin, here: currentServerLoop())
    }

    /// The same exchange as the async `execute` of a prepared request, answered through `completion` instead of a
    /// task: for a caller that runs on a server loop and goes on from the answer without awaiting (no task, no
    /// continuation). On a server loop's thread the call uses that loop's pools and `completion` runs on that
    /// thread, once, after the connection that carried the call is back in its pool (it may make another call at
    /// once); off the server loops it runs on a loop of the client's own. A request the client refuses outright
    /// (a per-call field that is not valid) is answered before this returns.
    public func execute(_ request: PreparedRequest, headers: HTTPHeaders = HTTPHeaders(), fieldValue: String? = nil,
                        trace: TraceContext? = nil, body: [UInt8] = [], timeout: Double,
                        completion: @escaping @Sendable (Result<ClientResponse, HTTPClientError>) -> Void) {
        execute(request, headers: headers, fieldValue: fieldValue, trace: trace, body: body, timeout: timeout, call: CallbackCall(completion))
    }

    /// The same exchange answered to `call`, an object of the caller's that holds the state it goes on from (a
    /// `ClientCall` subclass): the call is what the client queues and carries, so nothing else is made for it.
    public func execute(_ request: PreparedRequest, headers: HTTPHeaders = HTTPHeaders(), fieldValue: String? = nil,
                        trace: TraceContext? = nil, body: [UInt8] = [], timeout: Double, call: ClientCall) {
        // Checked now (a refused field is answered before this returns); written by the connection that carries the call,
        // into its own buffer (no array made for the call's bytes).
        do { try Self.check(request, headers: headers, fieldValue: fieldValue) } catch { call.finish(.failure(error)); return }
        let here = currentServerLoop()
        // On a server loop, its wake-up's clock (the deadline counts from when the loop woke; no clock read per call).
        call.sending(request, headers: headers, fieldValue: fieldValue, trace: trace, body: body,
                     deadline: (here.map { $0.host.now } ?? Syscall.monotonicNanos()) &+ UInt64(max(0, timeout) * 1e9))
        submit(call, to: request.origin, here: here)
    }

    /// A call to `origin` submitted in place on the server loop whose thread this is (`here`), or handed to a loop of
    /// the client's own.
    @inline(__always)
    private func submit(_ call: ClientCall, to origin: Origin, here: ClientLoop?) {
        if let here { here.submit(call, to: origin); return }
        let loop = loops.count == 1 ? loops[0] : loops[next.increment() % loops.count]
        let box = UnsafeSendableBox(call, host: loop.host)
        loop.execute { loop.submit(box.value, to: origin) }
    }

    /// The per-call fields checked as `writeField` checks each (a token for a name, no control character in a value).
    /// A call's `fieldValue` needs a request that names its field (`PreparedRequest(…callField:)`), and is a field value.
    static func check(_ request: PreparedRequest, headers: HTTPHeaders, fieldValue: String?) throws(HTTPClientError) {
        if !headers.isEmpty { for (k, v) in headers.fields { try checkField(k, v) } }
        if let value = fieldValue {
            guard !request.callFieldStart.isEmpty else { throw .invalidURL("a field value for a request that names no call field") }
            guard isFieldValue(value) else {
                throw .invalidURL("a request field is not valid: \(String(decoding: request.callFieldStart.dropLast(2), as: UTF8.self))")
            }
        }
    }

    @inline(__always)
    private func send(_ call: ContinuationCall, to origin: Origin, here: ClientLoop?) async throws(HTTPClientError) -> ClientResponse {
        // On a server loop's thread the call is submitted in place and resumed there (the task prefers that loop).
        // A call resumes its continuation exactly once (`ClientCall.finish`): the unchecked form is safe.
        let result: Result<ClientResponse, HTTPClientError> = await withUnsafeContinuation { c in
            call.continuation = c
            submit(call, to: origin, here: here)
        }
        return try result.get()
    }

    // MARK: - The request head

    static func fieldBytes(_ fields: HTTPHeaders) -> Int { fields.isEmpty ? 0 : fields.fields.reduce(0) { $0 + fieldBytes($1.name, $1.value) } }
    /// A field line's bytes: name, `: `, value, CRLF.
    static func fieldBytes(_ name: String, _ value: String) -> Int { name.utf8.count + value.utf8.count + 4 }

    /// `METHOD target HTTP/1.1` and the `Host` field.
    static func writeStart(_ method: String, _ target: String, _ origin: Origin, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: method.utf8); bytes.append(32)
        bytes.append(contentsOf: target.utf8)
        bytes.append(contentsOf: " HTTP/1.1\r\nHost: ".utf8)
        bytes.append(contentsOf: origin.hostField.utf8)
        bytes.append(13); bytes.append(10)
    }

    /// Field lines, each checked: a token for a name, no CR, LF or other control character in a value.
    static func writeFields(_ fields: HTTPHeaders, into bytes: inout [UInt8]) throws(HTTPClientError) {
        if fields.isEmpty { return }
        for (k, v) in fields.fields { try writeField(k, v, into: &bytes) }
    }

    /// One field line, checked as `writeFields` checks each.
    static func writeField(_ k: String, _ v: String, into bytes: inout [UInt8]) throws(HTTPClientError) {
        try checkField(k, v)
        appendField(k, v, into: &bytes)
    }

    static func checkField(_ k: String, _ v: String) throws(HTTPClientError) {
        var name = k
        guard name.withUTF8({ ByteScan.isToken($0) }), isFieldValue(v) else { throw .invalidURL("a request field is not valid: \(k)") }
    }

    /// No control byte but a tab, no DEL (RFC 9110 §5.5).
    static func isFieldValue(_ v: String) -> Bool {
        var value = v
        return value.withUTF8 { ByteScan.isFieldValue($0, from: 0, to: $0.count) }
    }

    /// A field line, already checked.
    static func appendField(_ k: String, _ v: String, into bytes: inout [UInt8]) {
        // Copied from the strings' bytes (no walk over their UTF-8 views).
        var k = k, v = v
        k.withUTF8 { bytes.append(contentsOf: $0) }
        bytes.append(58); bytes.append(32)
        v.withUTF8 { bytes.append(contentsOf: $0) }
        bytes.append(13); bytes.append(10)
    }

    /// `Content-Length` when there is a body (or the method expects one), the blank line, and the body.
    static func writeEnd(_ method: String, _ body: [UInt8], into bytes: inout [UInt8]) {
        if !body.isEmpty || method == "POST" || method == "PUT" {
            bytes.append(contentsOf: "Content-Length: ".utf8); bytes.append(contentsOf: String(body.count).utf8)
            bytes.append(13); bytes.append(10)
        }
        bytes.append(13); bytes.append(10)
        bytes.append(contentsOf: body)
    }
}

/// A request made ready once for calls repeated many times (the same method, URL and fixed fields; per call only
/// other fields and a body): its URL parsed and checked, its request line, `Host` and fixed fields written. A class:
/// it is held and passed along by reference (one word in an async frame, not the head and the origin's strings).
public final class PreparedRequest: Sendable {
    public let method: String
    public let url: String
    let origin: Origin
    let idempotent: Bool
    let isHead: Bool
    /// The request line, `Host` and the fixed fields, each line ending in CRLF (no blank line).
    let head: [UInt8]
    /// `Name: ` of the field each call may send one value of (`callField`), checked and written once; empty: none.
    let callFieldStart: [UInt8]

    /// `callField`: the name of a field each call may give a value of its own (`execute(…fieldValue:…)`: a call's
    /// credentials), written after the fixed fields and the call's `headers`.
    public init(method: String = "GET", url: String, headers: HTTPHeaders = HTTPHeaders(), callField: String? = nil) throws(HTTPClientError) {
        let (origin, target) = try Origin.parse(url)
        var head: [UInt8] = []
        HTTPClient.writeStart(method, target, origin, into: &head)
        try HTTPClient.writeFields(headers, into: &head)
        self.method = method; self.url = url; self.origin = origin; self.head = head
        idempotent = ClientRequest.isIdempotent(method)
        isHead = method == "HEAD"
        if let callField {
            try HTTPClient.checkField(callField, "")
            callFieldStart = Array(callField.utf8) + [58, 32]
        } else {
            callFieldStart = []
        }
    }
}

/// What every loop, pool and connection of one client shares (no reference back to the client, so dropping
/// the client stops its loops).
final class ClientShared: Sendable {
    let configuration: HTTPClient.Configuration
    let resolver = Resolver()
    let metrics = ClientMetrics()
    let tlsContext: TLSContext
    private let attachedLoops = Mutex<[ClientLoop]>([])
    init(configuration: HTTPClient.Configuration, tlsContext: TLSContext) {
        self.configuration = configuration; self.tlsContext = tlsContext
    }

    /// Pools this client keeps on server loops, for `shutdown`.
    func attached(_ loop: ClientLoop) { attachedLoops.withLock { $0.append(loop) } }
    func detach(_ loop: ClientLoop) { attachedLoops.withLock { $0.removeAll { $0 === loop } } }
    func takeAttached() -> [ClientLoop] {
        attachedLoops.withLock { loops in defer { loops.removeAll() }; return loops }
    }
}

/// An atomic counter (round-robin over loops).
final class Counter: Sendable {
    private let n = Atomic<Int>(0)
    func increment() -> Int { n.wrappingAdd(1, ordering: .relaxed).newValue & Int.max }
}

/// One call of the client — what it sends, by when, and how its caller is told — as one object, which the caller may
/// be: a subclass that overrides `answered` holds the state the caller goes on from (an upstream call's request, its
/// guard's admission, whom to tell), and the client queues and carries it with no closure and no box of its own
/// (`HTTPClient.execute(_:headers:fieldValue:trace:body:timeout:call:)`). The async `execute` and the callback form use
/// subclasses of their own. Lives on its loop once submitted: the client reads and changes it only there.
open class ClientCall {
    /// Where a call stands: made, handed to the client, or answered (once).
    private enum Stage: UInt8 { case made, submitted, answered }

    // What the call sends, set as it is handed to the client, each part a field of its own (an enum of the parts was
    // copied whole for each read, through the runtime's witnesses).
    /// The prepared request; nil for bytes written already (`body`).
    private(set) var prepared: PreparedRequest?
    private(set) var headers = HTTPHeaders()
    /// The value of the prepared request's call field (a call's credentials), written after `headers`.
    private(set) var fieldValue: String?
    private(set) var trace: TraceContext?
    /// The body after a prepared request's head; the whole request without one.
    private(set) var body: [UInt8] = []
    /// The method is HEAD: its answer has no body whatever its fields say.
    private(set) var isHead = false
    /// Whether the call may be sent again when a kept-alive connection turns out closed before its answer.
    private(set) var idempotent = false
    private(set) var deadline: UInt64 = 0
    private var stage = Stage.made
    /// A reused connection that turned out closed gets one more try on a fresh one.
    var retried = false

    public init() {}

    /// Ready to be submitted: a prepared request and its per-call parts.
    final func sending(_ request: PreparedRequest, headers: HTTPHeaders, fieldValue: String?, trace: TraceContext?,
                       body: [UInt8], deadline: UInt64) {
        prepared = request; self.headers = headers; self.trace = trace; self.body = body
        self.fieldValue = fieldValue
        isHead = request.isHead; idempotent = request.idempotent
        self.deadline = deadline; stage = .submitted
    }

    /// Ready to be submitted: a whole request written already.
    final func sending(bytes: [UInt8], isHead: Bool, idempotent: Bool, deadline: UInt64) {
        body = bytes; self.isHead = isHead; self.idempotent = idempotent
        self.deadline = deadline; stage = .submitted
    }

    /// The call's answer, once (a subclass overrides it: the base does nothing). Runs on the loop that carried the
    /// call, after the connection is back in its pool; the caller may make another call at once.
    open func answered(_ result: consuming Result<ClientResponse, HTTPClientError>) {}

    var isFinished: Bool { stage == .answered }

    /// The call's bytes appended to `out`.
    final func writeMessage(into out: inout [UInt8]) {
        if let prepared {
            prepared.head.withUnsafeBufferPointer { out.append(contentsOf: $0) }
            if !headers.isEmpty { for (k, v) in headers.fields { HTTPClient.appendField(k, v, into: &out) } }
            if var value = fieldValue {
                prepared.callFieldStart.withUnsafeBufferPointer { out.append(contentsOf: $0) }
                value.withUTF8 { out.append(contentsOf: $0) }
                out.append(13); out.append(10)
            }
            trace?.appendFields(to: &out)
            HTTPClient.writeEnd(prepared.method, body, into: &out)
        } else {
            body.withUnsafeBufferPointer { out.append(contentsOf: $0) }
        }
    }

    /// Answers the caller, once. A callback runs here and now, so callers of `finish` leave their pool and connection
    /// consistent first: the callback may make another call on the same loop.
    final func finish(_ result: consuming Result<ClientResponse, HTTPClientError>) {
        guard stage != .answered else { return }
        stage = .answered
        answered(result)
    }

    /// For a subclass's `deinit`: a call submitted and dropped without an answer (its loop closed under it) still
    /// answers its caller. (Not the base's own `deinit`: by then a subclass's fields are gone.)
    public final func answerIfDropped() {
        if stage == .submitted { finish(.failure(.reset)) }
    }
}

/// A call of the async `execute`: its task resumed.
final class ContinuationCall: ClientCall {
    /// Set as the call is submitted, on the thread that submits it, and resumed exactly once (`finish` answers once):
    /// the unchecked form is safe.
    var continuation: UnsafeContinuation<Result<ClientResponse, HTTPClientError>, Never>?
    override func answered(_ result: consuming Result<ClientResponse, HTTPClientError>) { continuation?.resume(returning: result) }
    deinit { answerIfDropped() }
}

/// A call answered through a callback.
final class CallbackCall: ClientCall {
    private let completion: (Result<ClientResponse, HTTPClientError>) -> Void
    init(_ completion: @escaping (Result<ClientResponse, HTTPClientError>) -> Void) { self.completion = completion }
    override func answered(_ result: consuming Result<ClientResponse, HTTPClientError>) { completion(result) }
    deinit { answerIfDropped() }
}

/// Per-origin counters for `/metrics`, across loops.
public final class ClientMetrics: Sendable {
    public struct Row: Sendable, Equatable {
        public var open = 0, created = 0, requests = 0, reused = 0, handshakes = 0, queued = 0, retries = 0
    }
    /// One origin's counters, shared by its pools on every loop: updated with relaxed atomics (no lock, no lookup).
    final class Counters: Sendable {
        let open = Atomic(0), created = Atomic(0), requests = Atomic(0), reused = Atomic(0)
        let handshakes = Atomic(0), queued = Atomic(0), retries = Atomic(0)
        var row: Row {
            Row(open: open.load(ordering: .relaxed), created: created.load(ordering: .relaxed), requests: requests.load(ordering: .relaxed),
                reused: reused.load(ordering: .relaxed), handshakes: handshakes.load(ordering: .relaxed),
                queued: queued.load(ordering: .relaxed), retries: retries.load(ordering: .relaxed))
        }
    }
    private let rows = Mutex<[String: Counters]>([:])

    /// The counters of `origin` (a pool asks once, when it is made).
    func counters(_ origin: Origin) -> Counters {
        rows.withLock { rows in
            if let c = rows[origin.description] { return c }
            let c = Counters()
            rows[origin.description] = c
            return c
        }
    }

    public func row(_ origin: String) -> Row { rows.withLock { $0[origin]?.row ?? Row() } }

    /// The client's metrics as Prometheus text, each name `prefix` followed by what it counts.
    public func render(prefix p: String = "http_client_") -> String {
        let all = rows.withLock { $0.sorted { $0.key < $1.key } }.map { (key: $0.key, value: $0.value.row) }
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ value: (Row) -> String) {
            out += PrometheusText.family(p + name, type, help, label: "origin", all.map { ($0.key, value($0.value)) })
        }
        family("connections_open", "gauge", "Upstream connections open, per origin (all loops).") { "\($0.open)" }
        family("connections_created_total", "counter", "Upstream connections made, per origin.") { "\($0.created)" }
        family("requests_total", "counter", "Requests sent upstream, per origin (requests per connection: this over created).") { "\($0.requests)" }
        family("requests_per_connection", "gauge", "Requests sent per connection made, per origin (keep-alive at work).") {
            "\($0.created == 0 ? 0 : Double($0.requests) / Double($0.created))"
        }
        family("requests_reused_total", "counter", "Requests sent on a kept-alive connection.") { "\($0.reused)" }
        family("tls_handshakes_total", "counter", "TLS handshakes completed, per origin.") { "\($0.handshakes)" }
        family("pool_waits_total", "counter", "Requests that waited for a free pooled connection.") { "\($0.queued)" }
        family("retries_total", "counter", "Idempotent requests sent again after a kept-alive connection turned out closed.") { "\($0.retries)" }
        return out
    }
}
