import EventLoops
import Glibc
import HTTPCore

/// One client socket: feeds the parser, runs handlers, writes responses in request order.
/// Lives on its loop's thread only.
final class Connection: LoopDescriptorHandler {
    let fd: Int32
    /// Unowned and unchecked (no atomic strong-retain per use): a connection's code runs only on its loop while the
    /// loop runs, and the running loop holds its server loop (its stop hook) and itself.
    unowned(unsafe) let server: ServerLoop
    /// The server's shared state and the loop's read buffer, held here.
    private let core: ServerCore
    /// The loop this connection lives on (its `now` stamps timeouts); unchecked for the reason `server` is.
    private unowned(unsafe) let loop: EventLoop
    /// Owned by the event loop, which is alive whenever it calls this connection's `handle`.
    private let readBuffer: UnsafeMutableRawBufferPointer
    private var parser: RequestParser
    private var machine: ConnectionStateMachine
    /// Head bytes and small bodies, written in one send.
    private var out: [UInt8] = []
    private var outStart = 0
    /// Large bodies and an assembled body's large fragments, each sent right after `out[..<at]` from its own storage
    /// (with the head bytes in one `sendmsg`; never copied).
    private var bodies = PendingBodies()
    private var hasPendingOutput: Bool { !bodies.isEmpty || outStart < out.count }
    private var interestRead = true
    private var interestWrite = false
    private var inFlight = false
    /// While a `.callback` handler's `start` runs: an answer it gives at once waits in `inlineAnswer` and is written
    /// when `start` returns (not from inside the dispatch that is still running).
    private var startingCallback = false
    private var inlineAnswer: HTTPResponse?
    private var closeAfterFlush = false
    private var lingerDeadline: UInt64?
    private var peerClosed = false
    private(set) var isClosed = false
    private var current = Pending()
    /// The streamed response being written, if any: no other request is answered until it ends.
    private var stream: OpenStream?
    private var pendingBytes: Int {
        out.count - outStart + bodies.pendingBytes
    }

    /// A streamed response in progress: its framing, its producer and the producer's parked writes.
    final class OpenStream {
        let writer: BodyWriter
        let chunked: Bool
        let gzip: Bool
        let isEventStream: Bool
        let status: Int
        var task: Task<Void, Never>?
        var waiters: [CheckedContinuation<Void, any Error>] = []
        /// CRC-32 and length of the identity bytes (the gzip trailer).
        var crc: UInt32 = 0
        var size = 0
        /// Body bytes written (framed, compressed).
        var bytes = 0
        /// Bytes of this stream counted in the metrics' buffered gauge.
        var buffered = 0
        init(writer: BodyWriter, chunked: Bool, gzip: Bool, isEventStream: Bool, status: Int) {
            self.writer = writer; self.chunked = chunked; self.gzip = gzip; self.isEventStream = isEventStream; self.status = status
        }
    }

    /// What the response to the request being handled needs to know about it.
    struct Pending {
        /// The request being answered (shared with its handler's context), kept for decisions made only when the
        /// response needs them (gzip, ETag, HEAD, HTTP/1.0).
        var request = HTTPRequest.none
        var keepAlive = true
        var requestID = RequestID.unset
        /// Its trace (W3C Trace Context): kept from `traceparent` or fresh.
        var trace: TraceContext?
        var route = -1
        var started: UInt64 = 0
        /// Who sent it (the peer, or whom a trusted proxy forwarded for), and whether the peer is a trusted proxy.
        var client = ClientAddress.unknown
        var viaProxy = false
        var method: String { request.method }
        var path: String { request.path }
        var versionMinor: Int { request.versionMinor }
        var headers: HTTPHeaders { request.headers }
        var ifNoneMatch: String? { request.ifNoneMatch }
        var acceptsGzip: Bool { request.mayAcceptGzip && Compression.acceptsGzip(request.headers) }
    }

    /// Past this many buffered (unparsed) bytes, stop reading until the handler answers.
    private var pauseThreshold: Int { parser.limits.maxBody + parser.limits.maxHeaderBytes + 64 * 1024 }

    /// The connection's peer address, as `accept` gave it.
    let peer: ClientAddress
    /// The server's per-client limiter, unretained (the core holds it for as long as any connection lives; a retain
    /// and a release a request cost the warm feed ~70 instructions).
    private let limiter: Unmanaged<ClientRateLimiter>?
    /// A body arriving over several reads: the bytes reserved for it in the server's budget of bodies in flight, when
    /// it began and how many bytes have come since (its rate is checked after the grace period).
    private var bodyReserved = 0
    private var bodyStarted: UInt64 = 0
    private var bodyReceived = 0

    init(fd: Int32, server: ServerLoop, now: UInt64, peer: ClientAddress = .unknown) {
        self.fd = fd
        self.peer = peer
        self.limiter = server.core.limiter.map { Unmanaged.passUnretained($0) }
        self.server = server
        self.core = server.core
        self.readBuffer = server.readBuffer
        self.loop = server.loop
        let config = core.configuration
        parser = RequestParser(limits: core.parserLimits)
        machine = ConnectionStateMachine(now: now, timeouts: .init(header: UInt64(config.timeouts.header * 1e9),
                                                                  idle: UInt64(config.timeouts.idle * 1e9),
                                                                  stall: UInt64(config.streams.stallTimeout * 1e9),
                                                                  heartbeat: UInt64(config.streams.heartbeat * 1e9)))
    }

    // MARK: - Events

    func handle(events: UInt32) {
        if events & 1 != 0 || events & 4 != 0 { readable() }
        if isClosed { return }
        if events & 2 != 0 { flush() }
    }

    private func readable() {
        var received = false
        for _ in 0..<4 {
            switch Syscall.read(fd, readBuffer.baseAddress!, readBuffer.count) {
            case .bytes(let n):
                if lingerDeadline != nil { continue }  // lingering: read and discard
                parser.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<n]))
                if bodyReserved > 0 { bodyReceived &+= n }
                received = true
                if n < readBuffer.count { break }
                continue
            case .wouldBlock:
                break
            case .endOfFile:
                peerClosed = true
            case .failed:
                close(); return
            }
            break
        }
        if lingerDeadline != nil {
            if peerClosed { close() }
            return
        }
        if received {
            machine.bytesReceived(now: loop.now, headComplete: parser.isReadingBody)
        }
        // A client that goes away ends its stream (and cancels the producer) at once.
        if peerClosed && stream != nil { close(); return }
        process()
        if isClosed { return }
        if peerClosed && !inFlight && !hasPendingOutput { close(); return }
        updateInterest()
    }

    /// Parses and answers buffered requests, in order, until one goes off-loop or bytes run out.
    private func process() {
        while !inFlight && stream == nil && !closeAfterFlush && !isClosed {
            // The request answered last is dropped (an idle keep-alive connection keeps nothing of it); its box goes
            // back to the parser when the handler kept no copy.
            parser.recycle(&current.request)
            switch parser.next() {
            case .needMore:
                if !parser.isIdle {
                    machine.bytesReceived(now: loop.now, headComplete: parser.isReadingBody)
                    if bodyReserved == 0 && parser.isReadingBody && !reserveBody() { break }
                }
                flush(); return
            case .continueRequested:
                out.append(contentsOf: Connection.continueBytes)
            case .request(let request):
                dispatch(request)
            case .error(let e):
                current = Pending()
                current.started = loop.now   // as `dispatch` stamps a request
                current.requestID = server.nextRequestID()
                current.trace = server.trace(for: nil)
                current.route = -2
                current.keepAlive = false
                let problem = Problem(status: e.status, slug: e.status == 400 ? "malformed-request" : nil, detail: e.detail)
                respond(problem.response)
            }
        }
        flush()
    }

    /// A body that did not arrive with its head takes its size from the budget of all bodies being received; when it
    /// does not fit, the request is answered 503 with `Retry-After` and its body is not read. False then.
    private func reserveBody() -> Bool {
        let want = max(1, parser.expectedBodyBytes)
        bodyStarted = loop.now
        bodyReceived = 0
        if core.reserveBody(want) { bodyReserved = want; return true }
        core.metrics.bodyRefused()
        answerWithoutRequest(Problem(status: 503, slug: "busy", detail: "The server is receiving as many request bodies as it holds at once; retry shortly.",
                                     headers: ["Retry-After": String(Int.random(in: 1...3)), "Cache-Control": "no-store"]).response, now: loop.now)
        return false
    }

    private func releaseBody() {
        if bodyReserved > 0 { core.releaseBody(bodyReserved); bodyReserved = 0 }
    }

    /// Answers (and then closes) for a request that never completed: a timeout, a refused body.
    private func answerWithoutRequest(_ response: HTTPResponse, now: UInt64) {
        releaseBody()
        current = Pending()
        current.started = now
        current.requestID = server.nextRequestID()
        current.route = -2
        current.keepAlive = false
        respond(response)
    }

    private func dispatch(_ request: HTTPRequest) {
        releaseBody()
        // The wake-up's clock: the request's bytes were in by then, so its latency counts from there (and the clock is
        // not read again per request).
        let now = loop.now
        machine.requestDispatched(now: now)
        current = Pending()
        current.started = now
        current.request = request
        current.keepAlive = request.keepAlive
        if let requestID = request.requestIDField, Connection.isValidRequestID(requestID) { current.requestID = RequestID(client: requestID) }
        else { current.requestID = server.nextRequestID() }
        let trace = server.trace(for: request)
        current.trace = trace
        if core.forwarding.trusted.isEmpty { current.client = peer }
        else { (current.client, current.viaProxy) = core.forwarding.client(peer: peer, forwardedFor: request.headers.values("X-Forwarded-For")) }
        // The handler sees the request's trace (upstream calls carry a child of it); its `.async` work carries it in its task.
        TraceContext.whileDispatching(trace) { route(request) }
    }

    private func route(_ request: HTTPRequest) {

        if request.method != "GET" && !Router.knownMethods.contains(request.method) {
            // A well-formed method Lede implements nowhere (RFC 9110 §9.1): 501, not 405.
            respond(Problem(status: 501, slug: "method-not-implemented",
                            detail: "The method \(request.method.prefix(40)) is not implemented by this server; it serves GET, HEAD and POST.").response)
            return
        }
        switch core.router.match(request) {
        case .found(let route, let params):
            current.route = route.index
            // Each client's budget: admitted while its bucket holds a unit; work off the loop pays its route's cost.
            var clientKey: UInt64 = 0
            if route.limited, let limiter = self.limiter {
                let refusal: HTTPResponse? = limiter._withUnsafeGuaranteedRef { limiter in
                    if request.mayHaveAuthorization, let credentials = request.headers["Authorization"] { clientKey = limiter.key(credentials: credentials) }
                    else { clientKey = limiter.key(address: current.client) }
                    let decision = limiter.admit(clientKey, now: loop.now)
                    return decision.admitted ? nil : limiter.refusal(decision)
                }
                if let refusal { respond(refusal); return }
            }
            let context = RequestContext(request: request, parameters: params, id: current.requestID, route: route.pattern, trace: current.trace,
                                         client: current.client, viaTrustedProxy: current.viaProxy)
            let result: HandlerResult
            do { result = try route.handler(context) } catch { result = .response(Problem.answering(error).response) }
            switch result {
            case .response(let response):
                respond(response)
            case .async(let work):
                if clientKey != 0 { chargeWork(clientKey, route.cost) }
                inFlight = true
                let loop = server.loop
                // The task prefers this loop: it starts here, its awaits resume here, and it answers in place.
                let connection = LoopBound(self, on: loop)
                let trace = current.trace
                Task(executorPreference: loop) {
                    let response = await TraceContext.$task.withValue(trace) {
                        do { return try await work() } catch { return Problem.answering(error).response }
                    }
                    if loop.inLoop { connection.value.asyncCompleted(response) } else { loop.execute { connection.value.asyncCompleted(response) } }
                }
            case .callback(let start):
                if clientKey != 0 { chargeWork(clientKey, route.cost) }
                // No task: the work answers through the responder, on this loop as a rule (an upstream call made
                // here calls back here). An answer given before `start` returns is written as an inline one.
                inFlight = true
                let responder = Responder(LoopBound(self, on: server.loop))
                startingCallback = true
                start(responder)
                startingCallback = false
                if let answer = inlineAnswer {
                    inlineAnswer = nil
                    inFlight = false
                    respond(answer)
                }
            }
        case .methodNotAllowed(let allow):
            var p = Problem(status: 405, detail: "\(request.method) is not allowed on \(request.path); use \(allow.joined(separator: ", ")).")
            p.headers.set("Allow", allow.joined(separator: ", "))
            respond(p.response)
        case .notFound:
            let path = String(request.path.prefix(200))
            respond(Problem(status: 404, detail: "No route for \(path).", message: ProblemMessage(server: .noRoute, [path])).response)
        }
    }

    /// Work that goes off the loop costs its client its route's price (the unit of its admission already paid).
    private func chargeWork(_ key: UInt64, _ cost: Int) {
        guard cost > 1, let limiter else { return }
        limiter._withUnsafeGuaranteedRef { $0.charge(key, cost - 1, now: loop.now) }
    }

    /// A `.callback` handler's answer, on the loop.
    func callbackAnswered(_ response: HTTPResponse) {
        if startingCallback { inlineAnswer = response } else { asyncCompleted(response) }
    }

    private func asyncCompleted(_ response: HTTPResponse) {
        guard !isClosed else {
            if case .stream(let body) = response.body { body.abandoned?() }
            return
        }
        inFlight = false
        respond(response)
        process()
        if isClosed { return }
        if peerClosed && !hasPendingOutput && !closeAfterFlush && stream == nil { close(); return }
        updateInterest()
    }

    // MARK: - Writing

    private func respond(_ response: HTTPResponse) {
        if case .stream(let body) = response.body {
            if current.method != "HEAD" { startStream(response, body); return }
            body.abandoned?()
        }
        let server = self.server
        // While draining, the last request buffered gets `Connection: close`.
        var keepAlive = current.keepAlive && !closeAfterFlush
        if machine.draining && parser.bufferedByteCount == 0 { keepAlive = false }
        let start = out.count
        // `current` is read in place (a copy would retain its request and id).
        let queuedBefore = bodies.pendingBytes
        var response = response
        if case .problem(let record) = response.body {
            response = Connection.rendered(response, record.problem, current.request, current.trace, typeBase: core.configuration.naming.problemTypeBase,
                                           localizer: core.localizer)
        } else {
            response = Connection.withTraceID(response, current.trace)
        }
        let (bodyBytes, largeBody) = withUnsafeMutablePointer(to: &bodies) {
            ResponseEncoder.encode(response, into: &out, request: &current, keepAlive: keepAlive, date: server.dateBytes, bodies: $0)
        }
        if let largeBody { bodies.append(largeBody, at: out.count) }
        let total = out.count - start + bodies.pendingBytes - queuedBefore
        let now = Syscall.monotonicNanos()
        let started = current.started, route = current.route
        core.metrics.record(loop: server.id, route: route, status: response.status, seconds: Double(now &- started) / 1e9, bytes: total)
        if core.configuration.accessLog {
            let p = current
            AccessLog.append(to: &server.logBuffer, method: p.method, route: p.route < 0 ? (p.route == -1 ? "unmatched" : "invalid") : core.router.routes[p.route].pattern,
                             path: p.path, status: response.status, bytes: bodyBytes, micros: Int((now &- p.started) / 1000), requestID: p.requestID.string,
                             trace: p.trace, client: p.client)
        }
        if !keepAlive { closeAfterFlush = true }
        if machine.responseCompleted(now: now, keepAlive: keepAlive, moreBuffered: !parser.isIdle) == .close {
            closeAfterFlush = true
        }
    }

    /// A problem encoded for the request it answers, once: `type` from the app's base, its standard title and its
    /// catalogued detail in the request's language (with `Content-Language`, and `Vary: Accept-Language` when the header
    /// chose it), the request's trace as its last member.
    static func rendered(_ response: HTTPResponse, _ problem: Problem, _ request: HTTPRequest, _ trace: TraceContext?, typeBase: String,
                         localizer: (any ProblemLocalizer)?) -> HTTPResponse {
        var problem = problem
        var r = response
        if let localizer, let words = localizer.words(for: problem, request: request), words.title != nil || words.detail != nil {
            if let title = words.title { problem.title = title }
            if let detail = words.detail { problem.detail = detail }
            r.headers.set("Content-Language", words.language)
            if words.byHeader {
                let vary = r.headers["Vary"] ?? ""
                if !Connection.lists(vary, "accept-language") { r.headers.set("Vary", vary.isEmpty ? "Accept-Language" : vary + ", Accept-Language") }
            }
        }
        r.body = .bytes(problem.jsonBytes(typeBase: typeBase, trace: trace))
        return r
    }

    /// Whether a comma-separated field value lists `token` (written in lower case), ASCII case-insensitively.
    static func lists(_ value: String, _ token: StaticString) -> Bool {
        var value = value
        return value.withUTF8 { u in
            var start = 0
            for i in 0...u.count where i == u.count || u[i] == 44 {
                let item = Substring(decoding: UnsafeBufferPointer(rebasing: u[start..<i]), as: UTF8.self).trimmingOWS()
                var s = String(item)
                if s.withUTF8({ ASCII.equalsLowercase($0, token) }) { return true }
                start = i + 1
            }
            return false
        }
    }

    /// A problem (`application/problem+json`) names the request's trace: `"traceId"` added as its last member unless its
    /// maker wrote one.
    static func withTraceID(_ response: HTTPResponse, _ trace: TraceContext?) -> HTTPResponse {
        guard response.status >= 400, let trace else { return response }
        guard case .bytes(var body) = response.body else { return response }
        guard body.last == 125,
              response.headers["Content-Type"] == "application/problem+json", !Problem.namesTrace(body) else { return response }
        body.removeLast()
        Problem.appendTraceMember(trace, to: &body)
        body.append(125)
        var r = response
        r.body = .bytes(body)
        return r
    }

    private func flush() {
        if isClosed { return }
        var sent = false
        while !bodies.isEmpty || outStart < out.count {
            let r: Syscall.IOResult
            if bodies.count > 1 {
                r = gatherSend()
            } else if !bodies.isEmpty {
                let headEnd = bodies.at(0)
                r = out.withUnsafeBytes { o in
                    bodies.withBytes(0) { b in   // (none of it sent while head bytes before it are pending)
                        if outStart < headEnd {
                            return Syscall.send2(fd, o.baseAddress! + outStart, headEnd - outStart, b.baseAddress!, b.count)
                        }
                        return Syscall.send(fd, b.baseAddress!, b.count)
                    }
                }
            } else {
                r = out.withUnsafeBytes { Syscall.send(fd, $0.baseAddress! + outStart, $0.count - outStart) }
            }
            switch r {
            case .bytes(var n):
                machine.writeProgressed(now: loop.now)
                sent = true
                // Head bytes first, then the body that follows them.
                while n > 0 {
                    let headEnd = bodies.isEmpty ? out.count : bodies.at(0)
                    if outStart < headEnd {
                        let k = min(n, headEnd - outStart)
                        outStart += k; n -= k
                    } else if !bodies.isEmpty {
                        n -= bodies.consume(n)
                    } else {
                        break
                    }
                }
            case .wouldBlock:
                streamDrained(progressed: sent)
                updateInterest(); return
            case .endOfFile, .failed:
                close(); return
            }
        }
        streamDrained(progressed: sent)
        if out.capacity > 256 * 1024 { out = [] } else { out.removeAll(keepingCapacity: true) }
        outStart = 0
        if closeAfterFlush && stream == nil { beginLinger() } else { updateInterest() }
    }

    /// The pending head bytes and bodies in order, as many as `maxGathered` iovecs take, in one `sendmsg`.
    private func gatherSend() -> Syscall.IOResult {
        let maxGathered = 16
        return out.withUnsafeBytes { o in
            withUnsafeTemporaryAllocation(of: iovec.self, capacity: maxGathered) { iov in
                var count = 0, pos = outStart
                /// `out` up to `end`; false when no iovec is left for it.
                func addOut(upTo end: Int) -> Bool {
                    guard pos < end else { return true }
                    guard count < maxGathered else { return false }
                    iov[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: o.baseAddress! + pos), iov_len: end - pos)
                    count += 1; pos = end
                    return true
                }
                func visit(_ i: Int) -> Syscall.IOResult {
                    if i == bodies.count { _ = addOut(upTo: o.count); return Syscall.sendv(fd, iov.baseAddress!, count) }
                    guard addOut(upTo: bodies.at(i)), count < maxGathered else { return Syscall.sendv(fd, iov.baseAddress!, count) }
                    return bodies.withBytes(i) { b in
                        iov[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: b.baseAddress!), iov_len: b.count)
                        count += 1
                        return visit(i + 1)
                    }
                }
                return visit(0)
            }
        }
    }

    /// Half-close and keep reading (discarding) briefly, so the client sees the final response instead of
    /// a reset caused by unread bytes.
    private func beginLinger() {
        guard lingerDeadline == nil else { return }
        if peerClosed { close(); return }
        shutdown(fd, Int32(SHUT_WR))
        lingerDeadline = Syscall.monotonicNanos() + UInt64(core.configuration.timeouts.linger * 1e9)
        updateInterest()
    }

    private func updateInterest() {
        if isClosed { return }
        let wantWrite = hasPendingOutput
        let wantRead = !peerClosed && (lingerDeadline != nil || ((!closeAfterFlush || stream != nil) && parser.bufferedByteCount < pauseThreshold))
        if wantRead != interestRead || wantWrite != interestWrite {
            interestRead = wantRead; interestWrite = wantWrite
            server.setInterest(fd, read: wantRead, write: wantWrite)
        }
    }

    // MARK: - Timers and shutdown

    func tick(now: UInt64) {
        if isClosed { return }
        if let deadline = lingerDeadline {
            if now >= deadline { close() }
            return
        }
        if inFlight { return }  // a handler is working; it has its own deadlines
        if let s = stream { streamTick(s, now: now); return }   // a stream has its own deadlines, not the request's
        if bodyReserved > 0, isBodyTooSlow(now: now) {
            answerWithoutRequest(Problem(status: 408, slug: "body-too-slow",
                                         detail: "The request body arrived slower than \(core.configuration.bodies.minRate) bytes a second.").response, now: now)
            flush()
            return
        }
        switch machine.timerFired(now: now) {
        case .none, .heartbeat: break
        case .close, .closeStalled: close()
        case .timeoutAndClose:
            answerWithoutRequest(Problem(status: 408, detail: "The request was not received in time.").response, now: now)
            flush()
        }
    }

    /// Past the grace period, a body must average the minimum rate (`bodies.minRate`) since it began.
    private func isBodyTooSlow(now: UInt64) -> Bool {
        let bodies = core.configuration.bodies
        guard bodies.minRate > 0, now > bodyStarted else { return false }
        let elapsed = Double(now - bodyStarted) / 1e9
        return elapsed >= bodies.grace && Double(bodyReceived) < Double(bodies.minRate) * elapsed
    }

    func shutdownRequested() {
        if isClosed { return }
        if let s = stream {
            _ = machine.shutdownRequested()
            // An event stream is told to come back (to another replica) and ends now; other streams may finish
            // until the drain deadline cuts them.
            if s.isEventStream { drainEventStream(s) }
            return
        }
        if machine.shutdownRequested() == .close && !hasPendingOutput && parser.isIdle && !inFlight {
            close()
        }
    }

    func close(_ reason: StreamClosed.Reason = .disconnected) {
        guard !isClosed else { return }
        isClosed = true
        releaseBody()
        machine.closed()
        if let s = stream { stream = nil; cancel(s, reason) }
        server.connectionClosed(fd)
    }

    // MARK: - Streamed responses

    /// Writes a stream's head and starts its producer; the connection answers nothing else until the stream ends.
    private func startStream(_ response: HTTPResponse, _ body: ResponseStream) {
        let p = current
        let config = core.configuration.streams
        guard core.metrics.streamOpened(max: config.maxStreams) else {
            var problem = Problem(status: 503, slug: "too-many-streams",
                                  detail: "The server has as many open streams as it allows (\(config.maxStreams)); retry shortly.",
                                  message: ProblemMessage(server: .streamsFull, [String(config.maxStreams)]))
            problem.headers.set("Retry-After", "5")
            respond(problem.response)
            body.abandoned?()
            return
        }
        let now = Syscall.monotonicNanos()
        // HTTP/1.1: chunked, and the connection stays usable after the stream; HTTP/1.0: the body ends with the connection.
        let chunked = p.versionMinor >= 1
        let keepAlive = chunked && p.keepAlive && !closeAfterFlush
        let gzip = ResponseEncoder.streamMayGzip(body, ResponseEncoder.FieldSummary(response.headers.fields)) && p.acceptsGzip
        let start = out.count
        ResponseEncoder.encodeStreamHead(response, body, into: &out, request: p, keepAlive: keepAlive, chunked: chunked, gzipped: gzip, date: server.dateBytes)
        core.metrics.record(loop: server.id, route: p.route, status: response.status, seconds: Double(now &- p.started) / 1e9, bytes: out.count - start)
        if !keepAlive { closeAfterFlush = true }
        let lastEventID = body.isEventStream ? p.headers["Last-Event-ID"] : nil
        // A stream may stay open for hours: it keeps only what its access-log line needs of the request.
        current.request = HTTPRequest(method: p.method, target: p.path, path: p.path, query: nil, versionMinor: p.versionMinor)
        let writer = BodyWriter(loop: server.loop, lastEventID: lastEventID)
        let s = OpenStream(writer: writer, chunked: chunked, gzip: gzip, isEventStream: body.isEventStream, status: response.status)
        writer.sink = self
        stream = s
        machine.streamStarted(now: now, heartbeats: body.isEventStream)
        if gzip { appendFramed(Deflate.gzipHeader, s) }
        flush()
        if isClosed { body.abandoned?(); return }
        switch body.producer {
        case .push(let start):
            // No task: the producer keeps the writer and pushes; the connection and the writer are all it holds. Its
            // idle buffers go until its next request (a push stream is a bell held for hours).
            parser.releaseIdleBuffers()
            if !hasPendingOutput { out = []; outStart = 0 }
            start(writer)
        case .task(let produce):
            let connection = LoopBound(self, on: server.loop)
            let loop = server.loop
            // The producer sees the request's trace, as its handler did.
            let trace = current.trace
            s.task = Task(executorPreference: loop) {
                var failure: (any Error)?
                do { try await TraceContext.$task.withValue(trace) { try await produce(writer) } } catch { failure = error }
                let outcome = failure
                if loop.inLoop { connection.value.producerFinished(writer, outcome) } else { loop.execute { connection.value.producerFinished(writer, outcome) } }
            }
        }
        if stream === s, machine.draining && s.isEventStream { drainEventStream(s) }
    }

    /// A push stream's writer went past the high-water mark: it cannot wait, so the stream ends as stalled.
    func streamOverflowed(_ writer: BodyWriter) {
        guard let s = stream, s.writer === writer, !isClosed else { return }
        close(.stalled)
    }

    /// A push stream's producer ended its body.
    func pushFinished(_ writer: BodyWriter) { producerFinished(writer, nil) }

    /// A producer's write, on the loop: framed, queued and sent as far as the socket takes it. True when the writer
    /// must wait for the buffer to drain.
    func streamWrite(_ bytes: [UInt8]) -> Bool {
        guard let s = stream, !isClosed else { return false }
        machine.streamWrote(now: Syscall.monotonicNanos())
        appendBody(bytes, s)
        flush()
        guard stream === s, !isClosed else { return false }
        return pendingBytes > core.configuration.streams.highWater
    }

    /// Parks a writer until the outbound buffer is down to the low-water mark.
    func streamWait(_ c: CheckedContinuation<Void, any Error>) {
        guard let s = stream, !isClosed else { c.resume(throwing: StreamClosed(reason: .ended)); return }
        if pendingBytes <= core.configuration.streams.lowWater { c.resume(); return }
        s.waiters.append(c)
    }

    /// Appends identity bytes of a stream's body: compressed when the stream is gzipped (the server's own few bytes,
    /// heartbeats and hints, as stored blocks), then framed.
    private func appendBody(_ bytes: [UInt8], _ s: OpenStream, compress: Bool = true) {
        guard s.gzip else { appendFramed(bytes, s); return }
        s.crc = Deflate.crc(bytes[...], continuing: s.crc)
        s.size &+= bytes.count
        appendFramed(compress ? server.deflater.flushed(bytes) : Deflate.stored(bytes), s)
    }

    /// Appends one piece of a stream's body, framed (a chunk for HTTP/1.1).
    private func appendFramed(_ payload: [UInt8], _ s: OpenStream) {
        guard !payload.isEmpty else { return }   // an empty chunk would end the body
        // Bytes already sent leave the buffer before it grows (no large-body entry refers to offsets in it then).
        if bodies.isEmpty && outStart > 0 && outStart * 2 >= out.count { out.removeFirst(outStart); outStart = 0 }
        let before = out.count
        if s.chunked {
            Connection.appendHex(payload.count, to: &out)
            out.append(13); out.append(10)
            out.append(contentsOf: payload)
            out.append(13); out.append(10)
        } else {
            out.append(contentsOf: payload)
        }
        s.bytes += out.count - before
        core.metrics.streamWrote(out.count - before)
    }

    /// After a flush: the stall clock follows the buffer; parked writers resume once it is down to the low-water mark;
    /// the buffered gauge follows.
    private func streamDrained(progressed: Bool) {
        guard let s = stream else { return }
        let pending = pendingBytes
        machine.streamOutput(pending: pending > 0, progressed: progressed, now: Syscall.monotonicNanos())
        if pending != s.buffered { core.metrics.streamBuffered(pending - s.buffered); s.buffered = pending }
        if !s.waiters.isEmpty && pending <= core.configuration.streams.lowWater {
            let waiters = s.waiters
            s.waiters.removeAll()
            for w in waiters { w.resume() }
        }
    }

    /// The producer returned (or threw), on the loop.
    private func producerFinished(_ writer: BodyWriter, _ failure: (any Error)?) {
        guard let s = stream, s.writer === writer, !isClosed else { return }
        if let failure, !(failure is StreamClosed) && !(failure is CancellationError) {
            // The status is long gone: cut the connection so the client sees a truncated body, not a complete one.
            core.logger.warning("stream producer failed; connection aborted", [("error", "\(failure)"), ("request_id", current.requestID.string)])
            close(.ended)
            return
        }
        endStream(s, reason: .ended)
    }

    /// Ends the body (gzip trailer, last chunk), logs the request, and goes on with pipelined requests.
    private func endStream(_ s: OpenStream, reason: StreamClosed.Reason) {
        if s.gzip {
            var tail = Deflate.finalBlock
            for shift in stride(from: 0, to: 32, by: 8) { tail.append(UInt8(truncatingIfNeeded: s.crc >> UInt32(shift))) }
            let size = UInt32(truncatingIfNeeded: s.size)
            for shift in stride(from: 0, to: 32, by: 8) { tail.append(UInt8(truncatingIfNeeded: size >> UInt32(shift))) }
            appendFramed(tail, s)
        }
        if s.chunked { out.append(contentsOf: Connection.lastChunk); s.bytes += Connection.lastChunk.count }
        stream = nil
        cancel(s, reason)
        let p = current
        let now = Syscall.monotonicNanos()
        if core.configuration.accessLog {
            AccessLog.append(to: &server.logBuffer, method: p.method, route: p.route < 0 ? "unmatched" : core.router.routes[p.route].pattern,
                             path: p.path, status: s.status, bytes: s.bytes, micros: Int((now &- p.started) / 1000), requestID: p.requestID.string,
                             trace: p.trace, client: p.client)
        }
        let keepAlive = !closeAfterFlush && !(machine.draining && parser.bufferedByteCount == 0)
        if !keepAlive { closeAfterFlush = true }
        if machine.responseCompleted(now: now, keepAlive: keepAlive, moreBuffered: !parser.isIdle) == .close { closeAfterFlush = true }
        current.request = .none
        flush()
        if isClosed { return }
        process()
        if isClosed { return }
        if peerClosed && !hasPendingOutput && !closeAfterFlush && !inFlight && stream == nil { close(); return }
        updateInterest()
    }

    /// Frees what a stream holds: its producer is cancelled, parked writers fail, later writes throw.
    private func cancel(_ s: OpenStream, _ reason: StreamClosed.Reason) {
        s.writer.sink = nil
        s.writer.closedReason = reason
        if let handler = s.writer.closeHandler { s.writer.closeHandler = nil; handler(reason) }
        s.task?.cancel()
        s.task = nil
        let waiters = s.waiters
        s.waiters.removeAll()
        for w in waiters { w.resume(throwing: StreamClosed(reason: reason)) }
        if s.buffered != 0 { core.metrics.streamBuffered(-s.buffered); s.buffered = 0 }
        core.metrics.streamClosed(stalled: reason == .stalled)
    }

    /// A stream's deadlines (the state machine's): a reader that takes nothing for the stall timeout is cut; a quiet
    /// event stream gets a comment heartbeat.
    private func streamTick(_ s: OpenStream, now: UInt64) {
        switch machine.timerFired(now: now) {
        case .closeStalled: close(.stalled)
        case .heartbeat:
            appendBody(SSEFraming.heartbeat, s, compress: false)
            flush()
        case .none, .close, .timeoutAndClose: break
        }
    }

    /// Drain: an event stream gets a `retry:` hint (spread so clients do not all come back at once) and ends.
    private func drainEventStream(_ s: OpenStream) {
        let base = core.configuration.streams.drainRetry
        appendBody(SSEFraming.retry(base + Int.random(in: 0...max(0, base))), s, compress: false)
        closeAfterFlush = true
        endStream(s, reason: .draining)
    }

    static let lastChunk = Array("0\r\n\r\n".utf8)

    static func appendHex(_ n: Int, to out: inout [UInt8]) {
        var shift = 60
        while shift > 0 && (n >> shift) & 0xF == 0 { shift -= 4 }
        while shift >= 0 { out.append(hexDigits[(n >> shift) & 0xF]); shift -= 4 }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    // MARK: -

    static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    static func isValidRequestID(_ id: String) -> Bool {
        let u = id.utf8
        return !u.isEmpty && u.count <= 128 && u.allSatisfy { $0 > 32 && $0 < 127 && $0 != 34 && $0 != 92 }
    }
}
