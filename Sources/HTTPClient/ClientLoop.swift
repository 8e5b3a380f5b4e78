import CLinux
import Dispatch
import Foundation
import Glibc
import Synchronization
import EventLoops

/// One client's connection pools on one host loop. Everything about its connections happens on the host's
/// thread; other threads hand work in with `execute`.
final class ClientLoop: @unchecked Sendable {   // @unchecked: `pools` and the connections are touched on the host's thread only.
    /// The loop whose thread owns these pools: a server's loop the client shares (calls made on it stay on it), or a
    /// loop of the client's own (calls from anywhere else). Strong: a server loop may stop before the client does;
    /// the loop drops its tickers and attachments when it stops, which breaks the cycle.
    let host: EventLoop
    private var pools: [Origin: Pool] = [:]
    /// The pool of the last call: the next call is to the same origin as a rule, found without hashing its strings.
    private var lastPool: Pool?
    let shared: ClientShared
    private var stopped = false

    init(shared: ClientShared, host: EventLoop) {
        self.shared = shared
        self.host = host
    }

    var readBuffer: UnsafeMutableRawBufferPointer { host.readBuffer }

    /// Origins of recent URLs by their `scheme://authority` bytes: a call to a known origin is not parsed (nor its
    /// strings built) again. A handful of entries (Lede calls one origin per language).
    private var knownOrigins: [(prefix: [UInt8], origin: Origin)] = []

    /// `Origin.parse`, with the origin looked up by its bytes first. On the host's thread.
    func parse(_ url: String) throws(HTTPClientError) -> (Origin, String) {
        var url = url
        let result = url.withUTF8 { u -> Result<(Origin, String), HTTPClientError> in
            do throws(HTTPClientError) {
                guard let end = Origin.authorityEnd(u) else { throw .invalidURL("not an absolute http(s) URL") }
                for known in knownOrigins where known.prefix.count == end
                    && known.prefix.withUnsafeBufferPointer({ memcmp($0.baseAddress!, u.baseAddress!, end) == 0 }) {
                    return .success((known.origin, try Origin.target(u, from: end)))
                }
                let (origin, _) = try Origin.parseOrigin(u)
                if knownOrigins.count >= 16 { knownOrigins.removeFirst() }
                knownOrigins.append((prefix: Array(u[0..<end]), origin: origin))
                return .success((origin, try Origin.target(u, from: end)))
            } catch { return .failure(error) }
        }
        return try result.get()
    }

    func execute(_ task: @escaping @Sendable () -> Void) { host.execute(task) }

    /// Deadlines and idle time-outs, about every 10 ms.
    func tick(now: UInt64) { for pool in pools.values { pool.tick(now: now) } }

    /// Closes every connection; queued and running calls fail. On the host's thread.
    func close(_ error: HTTPClientError) {
        stopped = true
        for pool in pools.values { pool.closeAll(error) }
        pools.removeAll()
        lastPool = nil
    }

    // MARK: - Pools and descriptors (host thread)

    func submit(_ pending: ClientCall, to origin: Origin) {
        assert(host.inLoop, "a client loop's pools are touched on its host's thread only")
        if stopped { pending.finish(.failure(.reset)); return }
        let pool: Pool
        if let p = lastPool, p.origin == origin { pool = p } else if let p = pools[origin] { pool = p; lastPool = p } else {
            pool = Pool(origin: origin, loop: self, client: shared)
            pools[origin] = pool
            lastPool = pool
        }
        pool.submit(pending)
    }

    func register(_ fd: Int32, _ c: ClientConnection, read: Bool, write: Bool) { host.register(fd, c, read: read, write: write) }
    func setInterest(_ fd: Int32, read: Bool, write: Bool) { host.setInterest(fd, read: read, write: write) }
    func deregister(_ fd: Int32) { host.deregister(fd) }
}

/// The connections of one origin on one loop: at most `connectionsPerOrigin`, idle ones kept alive, requests
/// queued in order when all are busy.
final class Pool {
    let origin: Origin
    /// unowned(unsafe): the client loop holds its pools strongly until it closes them, and a pool is only used on it.
    unowned(unsafe) let loop: ClientLoop
    let client: ClientShared
    private var idle: [ClientConnection] = []
    private var busy = 0   // connections connecting or carrying a request
    private var queue: [ClientCall] = []
    private var queueStart = 0

    /// This origin's `/metrics` counters.
    let counters: ClientMetrics.Counters

    init(origin: Origin, loop: ClientLoop, client: ClientShared) {
        self.origin = origin; self.loop = loop; self.client = client
        counters = client.metrics.counters(origin)
    }

    var limit: Int { max(1, client.configuration.connectionsPerOrigin) }

    func submit(_ p: ClientCall) {
        if let c = idle.popLast() {
            busy += 1
            c.send(p)
        } else if busy + idle.count < limit {
            open(for: p)
        } else {
            counters.queued.add(1, ordering: .relaxed)
            queue.append(p)
        }
    }

    private func open(for p: ClientCall) {
        busy += 1
        let c = ClientConnection(origin: origin, pool: self, loop: loop, client: client)
        c.start(p)
    }

    /// A connection finished its request; `reusable` when it may carry another.
    func released(_ c: ClientConnection, reusable: Bool) {
        busy -= 1
        if reusable { idle.append(c) }
        dequeue()
    }

    /// An idle connection closed (the server closed it, or it idled out).
    func idleClosed(_ c: ClientConnection) {
        idle.removeAll { $0 === c }
    }

    /// A request whose reused connection turned out closed: once more, on a fresh connection.
    func retry(_ p: ClientCall) {
        counters.retries.add(1, ordering: .relaxed)
        if busy + idle.count < limit { open(for: p) } else { queue.insert(p, at: queueStart) }
    }

    private func dequeue() {
        while queueStart < queue.count {
            let p = queue[queueStart]
            if p.isFinished { queueStart += 1; continue }
            if let c = idle.popLast() {
                queueStart += 1; busy += 1; c.send(p)
            } else if busy + idle.count < limit {
                queueStart += 1; open(for: p)
            } else {
                break
            }
        }
        if queueStart > 64 && queueStart * 2 > queue.count { queue.removeFirst(queueStart); queueStart = 0 }
    }

    /// Deadlines of queued requests, and idle time-outs.
    func tick(now: UInt64) {
        var i = queueStart
        while i < queue.count {
            if !queue[i].isFinished && now >= queue[i].deadline { queue[i].finish(.failure(.timeout)) }
            i += 1
        }
        while queueStart < queue.count && queue[queueStart].isFinished { queueStart += 1 }
        for c in idle where c.idleSince > 0 && now > c.idleSince && now &- c.idleSince > UInt64(client.configuration.idleTimeout * 1e9) { c.closeIdle() }
        // Connections carrying a request check their own deadline.
        for c in loopConnections { c.tick(now: now) }
    }

    /// Busy connections, for their deadlines.
    var loopConnections: [ClientConnection] = []

    /// `c` no longer carries a call (the rest move up: no retain or release each, as a swap makes).
    func inFlightEnded(_ c: ClientConnection) {
        if let k = loopConnections.firstIndex(where: { $0 === c }) { loopConnections.remove(at: k) }
    }

    func closeAll(_ error: HTTPClientError) {
        for c in idle + loopConnections { c.abort(error) }
        for p in queue[queueStart...] { p.finish(.failure(error)) }
        idle.removeAll(); queue.removeAll(); queueStart = 0
    }
}

/// One upstream connection: connect (non-blocking), TLS handshake when https, then one request at a time
/// with keep-alive. Never reused after a malformed answer, a reset or a time-out.
final class ClientConnection: LoopDescriptorHandler {
    enum State { case resolving, connecting, handshaking, writing, reading, idle, closed }

    let origin: Origin
    /// unowned(unsafe), both: a connection is used on its loop only, and its pool (held by the loop) outlives it —
    /// closing a pool aborts each of its connections first, which deregisters it (no event reaches it after).
    unowned(unsafe) let pool: Pool
    unowned(unsafe) let loop: ClientLoop
    let client: ClientShared
    private(set) var state = State.resolving
    /// What epoll watches on this connection: changed only when it differs (a reused connection stays read-only
    /// from request to request, with no epoll_ctl per call; there were two).
    private var watching = (read: false, write: false)

    private func watch(read: Bool, write: Bool) {
        guard watching != (read, write) else { return }
        watching = (read, write)
        loop.setInterest(fd, read: read, write: write)
    }
    private var fd: Int32 = -1
    private var tls: TLSSession?
    private var current: ClientCall?
    private var out: [UInt8] = []
    private var written = 0
    /// One parser for the connection's life, reset for each exchange (its buffers are reused).
    private var parser: ResponseParser
    private var received = false
    private var requestsServed = 0
    private var addresses: [ResolvedAddress] = []
    private var addressIndex = 0
    var idleSince: UInt64 = 0

    init(origin: Origin, pool: Pool, loop: ClientLoop, client: ClientShared) {
        self.origin = origin; self.pool = pool; self.loop = loop; self.client = client
        parser = ResponseParser(limits: .init(maxBody: client.configuration.maxResponseBytes))
    }

    // MARK: Start

    func start(_ p: ClientCall) {
        current = p
        pool.loopConnections.append(self)
        if let cached = client.resolver.cached(host: origin.host, port: origin.port) {
            addresses = cached
            connectNext()
            return
        }
        let loop = self.loop
        let origin = self.origin
        // Resolved off the loop; the answer comes back to it.
        let box = UnsafeSendableBox(self, host: loop.host)
        client.resolver.resolve(host: origin.host, port: origin.port) { result in
            loop.execute {
                let c = box.value
                guard c.state == .resolving else { return }
                switch result {
                case .success(let list): c.addresses = list; c.connectNext()
                case .failure(let e): c.fail(e)
                }
            }
        }
    }

    private func connectNext() {
        guard addressIndex < addresses.count else { fail(.connect("\(origin.host):\(origin.port): no address accepted the connection")); return }
        let address = addresses[addressIndex]
        addressIndex += 1
        let s = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { fail(.connect("socket: \(String(cString: strerror(errno)))")); return }
        var one: Int32 = 1
        setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let rc = address.withSockaddr { Glibc.connect(s, $0, $1) }
        let e = errno
        if rc != 0 && e != EINPROGRESS {
            close(s)
            if addressIndex < addresses.count { connectNext() } else { fail(.connect("\(origin.host):\(origin.port): \(String(cString: strerror(e)))")) }
            return
        }
        fd = s
        state = .connecting
        pool.counters.created.add(1, ordering: .relaxed); pool.counters.open.add(1, ordering: .relaxed)
        loop.register(s, self, read: false, write: true)
        watching = (false, true)
    }

    private func connected() {
        if origin.tls {
            do { tls = try TLSSession(context: client.tlsContext, fd: fd, host: origin.host) } catch { fail(error); return }
            state = .handshaking
            continueHandshake()
        } else {
            beginRequest()
        }
    }

    private func continueHandshake() {
        guard let tls else { return }
        switch tls.handshake() {
        case .done:
            pool.counters.handshakes.add(1, ordering: .relaxed)
            beginRequest()
        case .wantRead: watch(read: true, write: false)
        case .wantWrite: watch(read: false, write: true)
        case .closed: fail(.tls("the server closed the connection during the TLS handshake"))
        case .failed(let e): fail(e)
        }
    }

    // MARK: Requests

    /// A pooled idle connection takes a request.
    func send(_ p: ClientCall) {
        current = p
        idleSince = 0
        pool.loopConnections.append(self)
        pool.counters.reused.add(1, ordering: .relaxed)
        beginRequest()
    }

    private func beginRequest() {
        guard let p = current else { becomeIdle(); return }
        if p.isFinished { current = nil; finishRequest(reusable: state != .connecting && state != .handshaking); return }
        // The call's bytes written into the connection's own buffer (its capacity kept from call to call).
        if out.capacity > 64 * 1024 { out = [] } else { out.empty() }
        p.writeMessage(into: &out)
        written = 0
        parser.reset(requestWasHead: p.isHead)
        received = false
        state = .writing
        pool.counters.requests.add(1, ordering: .relaxed)
        writeSome()
    }

    private func writeSome() {
        while written < out.count {
            let step: TLSSession.Step = out.withUnsafeBytes { all in
                let rest = UnsafeRawBufferPointer(rebasing: all[written...])
                if let tls { return tls.write(rest) }
                switch Syscall.send(fd, rest.baseAddress!, rest.count) {
                case .bytes(let n): return .done(n)
                case .wouldBlock: return .wantWrite
                case .endOfFile, .failed: return .failed(.reset)
                }
            }
            switch step {
            case .done(let n): written += n
            case .wantWrite: watch(read: false, write: true); return
            case .wantRead: watch(read: true, write: false); return
            case .closed, .failed: brokenBeforeAnswer(); return
            }
        }
        state = .reading
        watch(read: true, write: false)
        // The answer cannot be there yet as a rule (the upstream has not run), so epoll says when it is — no read that
        // finds nothing, once per call. But for bytes TLS read ahead, which epoll cannot see.
        if let tls, tls.hasPending { readSome() }
    }

    private func readSome() {
        while true {
            let step: TLSSession.Step
            if let tls { step = tls.read(loop.readBuffer) } else {
                switch Syscall.read(fd, loop.readBuffer.baseAddress!, loop.readBuffer.count) {
                case .bytes(let n): step = .done(n)
                case .endOfFile: step = .closed
                case .wouldBlock: step = .wantRead
                case .failed: step = .failed(.reset)
                }
            }
            switch step {
            case .done(let n):
                received = true
                do {
                    if try parser.feed(UnsafeRawBufferPointer(rebasing: loop.readBuffer[0..<n])) { complete(); return }
                } catch { fail(Self.map(error)); return }
            case .wantRead: watch(read: true, write: false); return
            case .wantWrite: watch(read: false, write: true); return
            case .closed:
                if !received { brokenBeforeAnswer(); return }
                do { try parser.finish(); complete() } catch { fail(Self.map(error)) }
                return
            case .failed:
                if !received { brokenBeforeAnswer() } else { fail(.reset) }
                return
            }
        }
    }

    static func map(_ e: ResponseError) -> HTTPClientError {
        switch e {
        case .malformed(let s): return .malformed(s)
        case .tooLarge: return .tooLarge
        case .truncated: return .reset
        }
    }

    /// The connection broke before any byte of the answer: a kept-alive connection the server had closed.
    /// An idempotent request goes once more on a fresh connection.
    private func brokenBeforeAnswer() {
        if let p = current, requestsServed > 0, p.idempotent, !p.retried, !p.isFinished {
            p.retried = true
            current = nil
            teardown()
            pool.released(self, reusable: false)
            pool.retry(p)
            return
        }
        fail(.reset)
    }

    private func complete() {
        guard let p = current, let head = parser.takeHead() else { fail(.malformed("no response")); return }
        var body = parser.body
        // Most answers send no Content-Encoding: then no strings are made to find that out.
        let codings = head.hasContentEncoding ? head.values("Content-Encoding").map { $0.lowercased() }.filter { $0 != "identity" } : []
        if !codings.isEmpty {
            guard codings == ["gzip"] || codings == ["x-gzip"] else { fail(.malformed("content coding \(codings.joined(separator: ", ")) was not asked for")); return }
            if !body.isEmpty {
                guard let inflated = Inflater.decompress(body, limit: client.configuration.maxResponseBytes) else {
                    fail(Inflater.decompress(body, limit: Int.max) == nil ? .malformed("the gzip body is corrupt") : .tooLarge); return
                }
                body = inflated
            }
        }
        let reusable = parser.keepAlive && !parser.hasLeftover && nothingReadAhead()
        requestsServed += 1
        current = nil
        pool.inFlightEnded(self)
        if reusable { becomeIdle() } else { teardown() }
        pool.released(self, reusable: reusable)
        // Last: a caller answered by callback may make its next call at once, on this very connection.
        p.finish(.success(ClientResponse(status: head.status, head: head, body: body)))
    }

    /// Whether TLS holds no bytes past the answer (read ahead from the socket with it): records without data (a
    /// session ticket) are taken now; data the upstream sent unasked is a leftover, as the parser's own would be.
    private func nothingReadAhead() -> Bool {
        guard let tls, tls.hasPending else { return true }
        guard case .wantRead = tls.read(loop.readBuffer) else { return false }
        return !tls.hasPending
    }

    private func becomeIdle() {
        state = .idle
        idleSince = loop.host.now
        watch(read: true, write: false)
    }

    private func finishRequest(reusable: Bool) {
        pool.inFlightEnded(self)
        if reusable { becomeIdle() } else { teardown() }
        pool.released(self, reusable: reusable)
    }

    // MARK: Events

    func handle(events: UInt32) {
        switch state {
        case .connecting:
            var err: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
            if err != 0 {
                teardown()
                if addressIndex < addresses.count { connectNext() } else { fail(.connect("\(origin.host):\(origin.port): \(String(cString: strerror(err)))")) }
                return
            }
            connected()
        case .handshaking: continueHandshake()
        case .writing: writeSome()
        case .reading: readSome()
        case .idle:
            // The server closed a kept-alive connection (or sent bytes nobody asked for): it is done.
            closeIdle()
        case .resolving, .closed: break
        }
    }

    func tick(now: UInt64) {
        guard let p = current, state != .idle, state != .closed else { return }
        if now >= p.deadline { fail(.timeout) }
    }

    // MARK: Ending

    func closeIdle() {
        guard state == .idle else { return }
        teardown()
        pool.idleClosed(self)
    }

    func abort(_ e: HTTPClientError) {
        let p = current
        current = nil
        teardown()
        p?.finish(.failure(e))
    }

    /// The request fails; the connection closes and leaves the pool.
    private func fail(_ e: HTTPClientError) {
        let p = current
        current = nil
        let wasBusy = state != .idle && state != .closed
        teardown()
        if wasBusy || p != nil { pool.released(self, reusable: false) }   // teardown left the busy list
        p?.finish(.failure(e))   // last, with the pool consistent (see `complete`)
    }

    private func teardown() {
        pool.inFlightEnded(self)
        if fd >= 0 {
            loop.deregister(fd)
            tls = nil
            close(fd)
            fd = -1
            pool.counters.open.subtract(1, ordering: .relaxed)
        }
        state = .closed
    }
}

/// Carries a loop-confined object across the resolver's thread and back to its loop, where alone it is used.
struct UnsafeSendableBox<T: AnyObject>: @unchecked Sendable {   // @unchecked: `value` is only dereferenced on `host`'s thread (asserted).
    private let object: T
    private let host: EventLoop
    init(_ value: T, host: EventLoop) { self.object = value; self.host = host }
    var value: T {
        assert(host.inLoop, "a loop-confined object used off its loop")
        return object
    }
}
