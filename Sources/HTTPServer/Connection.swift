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
    let core: ServerCore
    /// The loop this connection lives on (its `now` stamps timeouts); unchecked for the reason `server` is.
    unowned(unsafe) let loop: EventLoop
    /// Owned by the event loop, which is alive whenever it calls this connection's `handle`.
    let readBuffer: UnsafeMutableRawBufferPointer
    var parser: RequestParser
    var machine: ConnectionStateMachine
    /// Head bytes and small bodies, written in one send.
    var out: [UInt8] = []
    var outStart = 0
    /// Large bodies and an assembled body's large fragments, each sent right after `out[..<at]` from its own storage
    /// (with the head bytes in one `sendmsg`; never copied).
    var bodies = PendingBodies()
    var hasPendingOutput: Bool { !bodies.isEmpty || outStart < out.count }
    var interestRead = true
    var interestWrite = false
    var inFlight = false
    /// While a `.callback` handler's `start` runs: an answer it gives at once waits in `inlineAnswer` and is written
    /// when `start` returns (not from inside the dispatch that is still running).
    var startingCallback = false
    var inlineAnswer: HTTPResponse?
    var closeAfterFlush = false
    var lingerDeadline: UInt64?
    var peerClosed = false
    private(set) var isClosed = false
    var current = Pending()
    /// The streamed response being written, if any: no other request is answered until it ends.
    var stream: OpenStream?
    var pendingBytes: Int {
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
        /// What its `Authorization` says, read once.
        var credentials = Credentials.none
        /// The languages it asks words in, read once (by the app's localizer); nil until read (a request answered
        /// before it was dispatched has them read by the problem stage).
        var language: RequestLanguage?
        /// Its bearer token's digest when the token is not (yet) an accepted client (0: none, or accepted): what
        /// its answer may teach the budgets (`ClientBudgets.learn`).
        var unprovenToken: UInt64 = 0
        var method: String { request.method }
        var path: String { request.path }
        var versionMinor: Int { request.versionMinor }
        var headers: HTTPHeaders { request.headers }
        var ifNoneMatch: String? { request.ifNoneMatch }
        var acceptsGzip: Bool { request.mayAcceptGzip && Compression.acceptsGzip(request.headers) }
    }

    /// Whether parsing stopped because the answers not yet sent passed `limits.maxUnsentBytes`: reading stops too, until
    /// the client has taken them (a client that pipelines and never reads holds that much of the server, no more).
    var pausedForOutput = false
    /// `limits.maxUnsentBytes`, read once.
    let maxUnsent: Int

    /// Past this many buffered (unparsed) bytes, stop reading until the handler answers.
    var pauseThreshold: Int { parser.limits.maxBody + parser.limits.maxHeaderBytes + 64 * 1024 }

    /// The connection's peer address, as `accept` gave it.
    let peer: ClientAddress
    /// The server's per-client budgets, unretained (the core holds them for as long as any connection lives; a retain
    /// and a release a request cost the warm feed ~70 instructions).
    let budgets: Unmanaged<ClientBudgets>?
    /// A body arriving over several reads: the bytes reserved for it in the server's budget of bodies in flight, when
    /// it began and how many bytes have come since (its rate is checked after the grace period).
    var bodyReserved = 0
    /// Whose share of the bodies' budget it is in (the peer, or whom a trusted proxy forwarded for).
    var bodyAddress = ClientAddress.unknown
    var bodyStarted: UInt64 = 0
    var bodyReceived = 0

    /// Whether the connection counts in its address's share of the connections (`AddressShares`): all but a trusted
    /// proxy's.
    let countedShare: Bool
    /// When it last answered (or opened): the longest idle is closed first when the server is full.
    var lastAnswered: UInt64

    /// Waiting for a request with nothing owed: no request read or being answered, nothing unsent, no stream.
    var isIdleKeepAlive: Bool {
        !isClosed && !inFlight && stream == nil && parser.isIdle && !hasPendingOutput && lingerDeadline == nil && bodyReserved == 0
    }

    /// Whether `adminOnly` routes are hidden from it: a public connection of a server with an operators' listener.
    let hidesAdminRoutes: Bool

    init(fd: Int32, server: ServerLoop, now: UInt64, peer: ClientAddress = .unknown, countedShare: Bool = false, admin: Bool = false) {
        self.fd = fd
        self.hidesAdminRoutes = !admin && server.core.configuration.adminPort != nil
        self.peer = peer
        self.countedShare = countedShare
        self.lastAnswered = now
        self.budgets = server.core.budgets.map { Unmanaged.passUnretained($0) }
        self.server = server
        self.core = server.core
        self.readBuffer = server.readBuffer
        self.loop = server.loop
        let config = core.configuration
        maxUnsent = config.limits.maxUnsentBytes
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

    func readable() {
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
    func process() {
        parsing: while !inFlight && stream == nil && !closeAfterFlush && !isClosed {
            // The request answered last is dropped (an idle keep-alive connection keeps nothing of it); its box goes
            // back to the parser when the handler kept no copy.
            parser.recycle(&current.request)
            switch parser.next() {
            case .needMore:
                if !parser.isIdle {
                    machine.bytesReceived(now: loop.now, headComplete: parser.isReadingBody)
                    if parser.isReadingBody && !admitBody() { break }
                }
                flush(); return
            case .continueRequested:
                if let head = parser.headBeingRead, refusedFromHead(head) { break parsing }   // instead of 100 Continue: no body comes
                out.append(contentsOf: Connection.continueBytes)
            case .request(let request):
                dispatch(request)
                // Answers the client has not taken past the bound: no more parsing (nor reading) until it takes them.
                if out.count - outStart >= maxUnsent || (!bodies.isEmpty && out.count - outStart + bodies.pendingBytes >= maxUnsent) {
                    pausedForOutput = true
                    break parsing
                }
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

    /// What the head of a request whose body has not arrived decides, before any body budget is reserved: a route
    /// that needs an account refuses credentials it cannot take at once (its own problem, `Connection: close`, none
    /// of the body read). True when answered so.
    func refusedFromHead(_ head: HTTPRequest) -> Bool {
        guard case .found(let route, _) = core.router.match(head),
              case .required(let refusal) = route.account, let problem = refusal(Credentials.read(head.headers)) else { return false }
        answerWithoutRequest(problem.response, now: loop.now, head: head)
        return true
    }

    /// A body being read that did not arrive with its head: first what its head decides (`refusedFromHead`), then its
    /// reservation, kept `bodies.window` bytes ahead of what has arrived (`reserveBody`). False when answered.
    func admitBody() -> Bool {
        if bodyReserved == 0 {
            guard let head = parser.headBeingRead else { return true }
            if refusedFromHead(head) { return false }
            bodyStarted = loop.now
            bodyReceived = 0
            bodyAddress = RequestIntake.client(head.headers, peer: peer, core: core).0
        }
        return reserveBody()
    }

    /// Keeps the body's reservation in the budget of all bodies being received (and its address's share of it) as
    /// far ahead of what has arrived as `bodies.window`, or the rest of the body when less: what a head announces
    /// reserves nothing it has not sent. When it does not fit, the request is answered 503 with `Retry-After` (from
    /// its start: none of the body read) and the connection closed. False then.
    func reserveBody() -> Bool {
        let want = bodyReceived + min(max(1, parser.expectedBodyBytes), core.configuration.bodies.window)
        if want <= bodyReserved { return true }
        if core.reserveBody(want - bodyReserved, for: bodyAddress) { bodyReserved = want; return true }
        core.metrics.bodyRefused()
        answerWithoutRequest(Problem(status: 503, slug: "busy", .bodiesBusy,
                                     headers: ["Retry-After": String(Int.random(in: 1...3)), "Cache-Control": "no-store"]).response, now: loop.now,
                             head: parser.headBeingRead)
        return false
    }

    func releaseBody() {
        if bodyReserved > 0 { core.releaseBody(bodyReserved, for: bodyAddress); bodyReserved = 0 }
    }

    /// Answers (and then closes) for a request that never completed: a timeout, a refused body.
    func answerWithoutRequest(_ response: HTTPResponse, now: UInt64, head: HTTPRequest? = nil) {
        releaseBody()
        current = Pending()
        if let head { current.request = head }   // its words in the reader's language, its method and path logged
        current.started = now
        current.requestID = server.nextRequestID()
        current.route = -2
        current.keepAlive = false
        respond(response)
    }

    func dispatch(_ request: HTTPRequest) {
        releaseBody()
        // The wake-up's clock: the request's bytes were in by then, so its latency counts from there (and the clock is
        // not read again per request).
        let now = loop.now
        machine.requestDispatched(now: now)
        current = Pending()
        RequestIntake.read(request, into: &current, peer: peer, now: now, core: core, server: server)
        let trace = current.trace
        // The handler sees the request's trace (upstream calls carry a child of it); its `.async` work carries it in its task.
        TraceContext.whileDispatching(trace) { route(request) }
    }

    /// A `.callback` handler's answer, on the loop.
    func callbackAnswered(_ response: HTTPResponse) {
        if startingCallback { inlineAnswer = response } else { asyncCompleted(response) }
    }

    func asyncCompleted(_ response: HTTPResponse) {
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

    func respond(_ response: HTTPResponse) {
        if case .stream(let body) = response.body {
            if current.method != "HEAD" { startStream(response, body); return }
            body.abandoned?()
        }
        // A problem rendered in the reader's language, an error naming its trace; a success written as it is (no copy
        // of it made).
        if case .problem(let record) = response.body {
            let language = current.language ?? core.localizer?.language(of: current.request) ?? .unnamed
            write(ProblemStage.rendered(response, record.problem, language, current.trace,
                                        typeBase: core.configuration.naming.problemTypeBase, localizer: core.localizer))
        } else if response.status >= 400 {
            write(ProblemStage.withTraceID(response, current.trace))
        } else {
            write(response)
        }
    }

    /// The answer to `current` encoded into `out` (not sent yet), logged, and the connection's state moved on.
    private func write(_ response: HTTPResponse) {
        let server = self.server
        // While draining, the last request buffered gets `Connection: close`.
        var keepAlive = current.keepAlive && !closeAfterFlush
        if machine.draining && parser.bufferedByteCount == 0 { keepAlive = false }
        let start = out.count
        // `current` is read in place (a copy would retain its request and id).
        let queuedBefore = bodies.pendingBytes
        let (bodyBytes, largeBody) = withUnsafeMutablePointer(to: &bodies) {
            ResponseEncoder.encode(response, into: &out, request: &current, keepAlive: keepAlive, date: server.dateBytes, bodies: $0)
        }
        if let largeBody { bodies.append(largeBody, at: out.count) }
        let total = out.count - start + bodies.pendingBytes - queuedBefore
        let now = Syscall.monotonicNanos()
        if current.unprovenToken != 0, let budgets { learn(budgets, status: response.status, now: now) }
        lastAnswered = now
        RequestLog.record(&current, status: response.status, bytes: total, bodyBytes: bodyBytes, now: now, core: core, server: server)
        if !keepAlive { closeAfterFlush = true }
        if machine.responseCompleted(now: now, keepAlive: keepAlive, moreBuffered: !parser.isIdle) == .close {
            closeAfterFlush = true
        }
    }

    func flush() {
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
        if out.capacity > 256 * 1024 { out = [] } else { out.empty() }
        outStart = 0
        if pausedForOutput {
            // The client took every answer: the requests it sent meanwhile are parsed and answered now (`process`
            // flushes again, and stops again at the bound).
            pausedForOutput = false
            if !inFlight && stream == nil && !closeAfterFlush {
                process()
                if !isClosed && peerClosed && !inFlight && !hasPendingOutput && stream == nil { close() }
                return
            }
        }
        if closeAfterFlush && stream == nil { beginLinger() } else { updateInterest() }
    }

    /// The pending head bytes and bodies in order, as many as `maxGathered` iovecs take, in one `sendmsg`.
    func gatherSend() -> Syscall.IOResult {
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
    func beginLinger() {
        guard lingerDeadline == nil else { return }
        if peerClosed { close(); return }
        shutdown(fd, Int32(SHUT_WR))
        lingerDeadline = Syscall.monotonicNanos() + UInt64(core.configuration.timeouts.linger * 1e9)
        updateInterest()
    }

    func updateInterest() {
        if isClosed { return }
        let wantWrite = hasPendingOutput
        let wantRead = !peerClosed && (lingerDeadline != nil || ((!closeAfterFlush || stream != nil) && !pausedForOutput && parser.bufferedByteCount < pauseThreshold))
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
            let rate = String(core.configuration.bodies.minRate)
            answerWithoutRequest(Problem(status: 408, slug: "body-too-slow", .bodyTooSlow, rate).response, now: now, head: parser.headBeingRead)
            flush()
            return
        }
        switch machine.timerFired(now: now) {
        case .none, .heartbeat: break
        case .close, .closeStalled: close()
        case .timeoutAndClose:
            answerWithoutRequest(Problem(status: 408, .requestTimeout).response, now: now)
            flush()
        }
    }

    /// Past the grace period, a body must average the minimum rate (`bodies.minRate`) since it began.
    func isBodyTooSlow(now: UInt64) -> Bool {
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
        if countedShare { core.connectionShares.give(peer) }
        server.connectionClosed(fd)
    }

    // MARK: -

    static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

}
