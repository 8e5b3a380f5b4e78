import EventLoops
import Glibc

/// One client socket: feeds the parser, runs handlers, writes responses in request order.
/// Lives on its loop's thread only.
final class Connection: LoopDescriptorHandler {
    let fd: Int32
    unowned let server: ServerLoop
    private var parser: RequestParser
    private var machine: ConnectionStateMachine
    /// Head bytes and small bodies, written in one send.
    private var out: [UInt8] = []
    private var outStart = 0
    /// Large shared bodies, each to be sent right after `out[..<at]`, from their own storage (head and body
    /// in one `sendmsg` with two iovecs; never copied).
    private var bodies: [(at: Int, bytes: [UInt8])] = []
    private var bodySent = 0
    private var hasPendingOutput: Bool { !bodies.isEmpty || outStart < out.count }
    private var interestRead = true
    private var interestWrite = false
    private var inFlight = false
    private var closeAfterFlush = false
    private var lingerDeadline: UInt64?
    private var peerClosed = false
    private(set) var isClosed = false
    private var current = Pending()

    /// What the response to the request being handled needs to know about it.
    struct Pending {
        var method = "GET"
        var path = "/"
        var versionMinor = 1
        var keepAlive = true
        /// The request's headers, kept for decisions made only when the response needs them (gzip).
        var headers = HTTPHeaders()
        var mayAcceptGzip = false
        var acceptsGzip: Bool { mayAcceptGzip && Compression.acceptsGzip(headers) }
        var ifNoneMatch: String?
        var requestID = "-"
        var route = -1
        var started: UInt64 = 0
    }

    /// Past this many buffered (unparsed) bytes, stop reading until the handler answers.
    private var pauseThreshold: Int { parser.limits.maxBody + parser.limits.maxHeaderBytes + 64 * 1024 }

    init(fd: Int32, server: ServerLoop, now: UInt64) {
        self.fd = fd
        self.server = server
        let config = server.core.configuration
        parser = RequestParser(limits: config.parserLimits)
        machine = ConnectionStateMachine(now: now, timeouts: .init(header: UInt64(config.timeouts.header * 1e9),
                                                                  idle: UInt64(config.timeouts.idle * 1e9)))
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
            switch Syscall.read(fd, server.readBuffer.baseAddress!, server.readBuffer.count) {
            case .bytes(let n):
                if lingerDeadline != nil { continue }  // lingering: read and discard
                parser.append(UnsafeRawBufferPointer(rebasing: server.readBuffer[0..<n]))
                received = true
                if n < server.readBuffer.count { break }
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
            machine.bytesReceived(now: Syscall.monotonicNanos(), headComplete: parser.isReadingBody)
        }
        process()
        if isClosed { return }
        if peerClosed && !inFlight && !hasPendingOutput { close(); return }
        updateInterest()
    }

    /// Parses and answers buffered requests, in order, until one goes off-loop or bytes run out.
    private func process() {
        while !inFlight && !closeAfterFlush && !isClosed {
            switch parser.next() {
            case .needMore:
                if !parser.isIdle {
                    machine.bytesReceived(now: Syscall.monotonicNanos(), headComplete: parser.isReadingBody)
                }
                flush(); return
            case .continueRequested:
                out.append(contentsOf: Connection.continueBytes)
            case .request(let request):
                dispatch(request)
            case .error(let e):
                current = Pending()
                current.started = Syscall.monotonicNanos()
                current.requestID = server.nextRequestID()
                current.route = -2
                current.keepAlive = false
                let problem = Problem(status: e.status, slug: e.status == 400 ? "malformed-request" : nil, detail: e.detail)
                respond(problem.response)
            }
        }
        flush()
    }

    private func dispatch(_ request: HTTPRequest) {
        let now = Syscall.monotonicNanos()
        machine.requestDispatched(now: now)
        current = Pending()
        current.started = now
        current.method = request.method
        current.path = request.path
        current.versionMinor = request.versionMinor
        current.keepAlive = request.keepAlive
        current.headers = request.headers
        current.mayAcceptGzip = request.mayAcceptGzip
        current.ifNoneMatch = request.ifNoneMatch
        if let requestID = request.requestIDField, Connection.isValidRequestID(requestID) { current.requestID = requestID }
        else { current.requestID = server.nextRequestID() }

        if request.method != "GET" && !Router.knownMethods.contains(request.method) {
            // A well-formed method Lede implements nowhere (RFC 9110 §9.1): 501, not 405.
            respond(Problem(status: 501, slug: "method-not-implemented",
                            detail: "The method \(request.method.prefix(40)) is not implemented by this server; it serves GET, HEAD and POST.").response)
            return
        }
        switch server.core.router.match(method: request.method, path: request.path) {
        case .found(let route, let params):
            current.route = route.index
            let context = RequestContext(request: request, parameters: params, requestID: current.requestID, route: route.pattern)
            switch route.handler(context) {
            case .response(let response):
                respond(response)
            case .async(let work):
                inFlight = true
                let loop = server.loop
                // The task prefers this loop: it starts here, its awaits resume here, and it answers in place.
                let connection = LoopBound(self, on: loop)
                Task(executorPreference: loop) {
                    let response = await work()
                    if loop.inLoop { connection.value.asyncCompleted(response) } else { loop.execute { connection.value.asyncCompleted(response) } }
                }
            }
        case .methodNotAllowed(let allow):
            var p = Problem(status: 405, detail: "\(request.method) is not allowed on \(request.path); use \(allow.joined(separator: ", ")).")
            p.headers.set("Allow", allow.joined(separator: ", "))
            respond(p.response)
        case .notFound:
            respond(Problem(status: 404, detail: "No route for \(request.path.prefix(200)).").response)
        }
    }

    private func asyncCompleted(_ response: HTTPResponse) {
        guard !isClosed else { return }
        inFlight = false
        respond(response)
        process()
        if isClosed { return }
        if peerClosed && !hasPendingOutput && !closeAfterFlush { close(); return }
        updateInterest()
    }

    // MARK: - Writing

    private func respond(_ response: HTTPResponse) {
        let p = current
        // While draining, the last request buffered gets `Connection: close`.
        var keepAlive = p.keepAlive && !closeAfterFlush
        if machine.draining && parser.bufferedByteCount == 0 { keepAlive = false }
        let start = out.count
        let (bodyBytes, largeBody) = ResponseEncoder.encode(response, into: &out, request: p, keepAlive: keepAlive, date: server.dateBytes)
        let total = out.count - start + (largeBody?.count ?? 0)
        if let largeBody { bodies.append((at: out.count, bytes: largeBody)) }
        let now = Syscall.monotonicNanos()
        let seconds = Double(now &- p.started) / 1e9
        server.core.metrics.record(loop: server.id, route: p.route, status: response.status, seconds: seconds, bytes: total)
        if server.core.configuration.accessLog {
            AccessLog.append(to: &server.logBuffer, method: p.method, route: p.route < 0 ? (p.route == -1 ? "unmatched" : "invalid") : server.core.router.routes[p.route].pattern,
                             path: p.path, status: response.status, bytes: bodyBytes, micros: Int((now &- p.started) / 1000), requestID: p.requestID)
        }
        if !keepAlive { closeAfterFlush = true }
        if machine.responseCompleted(now: now, keepAlive: keepAlive, moreBuffered: !parser.isIdle) == .close {
            closeAfterFlush = true
        }
        // An idle keep-alive connection keeps nothing of the request it answered.
        current.headers = HTTPHeaders()
    }

    private func flush() {
        if isClosed { return }
        while !bodies.isEmpty || outStart < out.count {
            let r: Syscall.IOResult
            if let body = bodies.first {
                let headEnd = body.at
                r = out.withUnsafeBytes { o in
                    body.bytes.withUnsafeBytes { b in
                        if outStart < headEnd {
                            return Syscall.send2(fd, o.baseAddress! + outStart, headEnd - outStart, b.baseAddress!, b.count)
                        }
                        return Syscall.send(fd, b.baseAddress! + bodySent, b.count - bodySent)
                    }
                }
            } else {
                r = out.withUnsafeBytes { Syscall.send(fd, $0.baseAddress! + outStart, $0.count - outStart) }
            }
            switch r {
            case .bytes(var n):
                machine.writeProgressed(now: Syscall.monotonicNanos())
                // Head bytes first, then the body that follows them.
                while n > 0 {
                    let headEnd = bodies.first?.at ?? out.count
                    if outStart < headEnd {
                        let k = min(n, headEnd - outStart)
                        outStart += k; n -= k
                    } else if let body = bodies.first {
                        let k = min(n, body.bytes.count - bodySent)
                        bodySent += k; n -= k
                        if bodySent == body.bytes.count { bodies.removeFirst(); bodySent = 0 }
                    } else {
                        break
                    }
                }
            case .wouldBlock:
                updateInterest(); return
            case .endOfFile, .failed:
                close(); return
            }
        }
        if out.capacity > 256 * 1024 { out = [] } else { out.removeAll(keepingCapacity: true) }
        outStart = 0
        if closeAfterFlush { beginLinger() } else { updateInterest() }
    }

    /// Half-close and keep reading (discarding) briefly, so the client sees the final response instead of
    /// a reset caused by unread bytes.
    private func beginLinger() {
        guard lingerDeadline == nil else { return }
        if peerClosed { close(); return }
        shutdown(fd, Int32(SHUT_WR))
        lingerDeadline = Syscall.monotonicNanos() + UInt64(server.core.configuration.timeouts.linger * 1e9)
        updateInterest()
    }

    private func updateInterest() {
        if isClosed { return }
        let wantWrite = hasPendingOutput
        let wantRead = !peerClosed && (lingerDeadline != nil || (!closeAfterFlush && parser.bufferedByteCount < pauseThreshold))
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
        switch machine.timerFired(now: now) {
        case .none: break
        case .close: close()
        case .timeoutAndClose:
            current = Pending()
            current.started = now
            current.requestID = server.nextRequestID()
            current.route = -2
            current.keepAlive = false
            respond(Problem(status: 408, detail: "The request was not received in time.").response)
            flush()
        }
    }

    func shutdownRequested() {
        if isClosed { return }
        if machine.shutdownRequested() == .close && !hasPendingOutput && parser.isIdle && !inFlight {
            close()
        }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        machine.closed()
        server.connectionClosed(fd)
    }

    // MARK: -

    static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    static func isValidRequestID(_ id: String) -> Bool {
        let u = id.utf8
        return !u.isEmpty && u.count <= 128 && u.allSatisfy { $0 > 32 && $0 < 127 && $0 != 34 && $0 != 92 }
    }
}
