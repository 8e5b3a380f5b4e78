import CLinux
import EventLoops
import Foundation
import Glibc
import HTTPCore

/// The server's part of one event loop: its listener, its connections (by descriptor), the per-loop caches (the
/// Date field renewed once a second, the access-log buffer, request ids) and the drain. Lives on the loop's thread.
final class ServerLoop: LoopObserver {
    let loop: EventLoop
    let core: ServerCore
    var id: Int { loop.id }
    private var listeners: [Listener] = []
    private var connections: [Connection?] = Array(repeating: nil, count: 1024)
    private(set) var connectionCount = 0
    private var reserveFD: Int32 = -1
    private(set) var draining = false
    private var lastEMFILELog: UInt64 = 0

    /// The compressor of streamed gzip bodies on this loop (streams keep none of their own).
    lazy var deflater = PieceDeflater()

    private var dateSecond = -1
    private(set) var dateBytes: [UInt8] = []
    var logBuffer: [UInt8] = []
    private var requestCounter: UInt64 = 0
    private let requestIDPrefix: UInt64

    init(id: Int, core: ServerCore) throws {
        loop = try EventLoop(id: id)
        self.core = core
        reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        // 6 random hex digits + the loop + a counter: unique per process, and short enough (≤ 15 bytes) to
        // stay a small string with no allocation.
        requestIDPrefix = RequestID.packPrefix(Array((String(UInt32.random(in: 0x10_0000...0xFF_FFFF), radix: 16) + String(id % 16, radix: 16)).utf8))
        refreshDate()
        loop.observer = self
        let tick = UInt64(max(0.01, core.configuration.tickInterval) * 1e9)
        loop.addTicker(interval: tick) { [unowned self] now in
            refreshDate()
            eachConnection { $0.tick(now: now) }
            flushLog()
        }
        loop.onStop { [self] in
            for l in listeners { close(l.fd) }
            listeners.removeAll()
            if reserveFD >= 0 { close(reserveFD); reserveFD = -1 }
            loop.observer = nil
            core.loopStopped()
        }
    }

    var readBuffer: UnsafeMutableRawBufferPointer { loop.readBuffer }

    /// Each open connection, walked by index: one that closes in `body` leaves `connections` at once (no iterator
    /// holds a copy of the table for the removal to copy), and the walk allocates nothing even unoptimised (a debug
    /// build's generic iterator allocated at each of the 1,024 slots, every tick: the allocation tests counted ticks).
    private func eachConnection(_ body: (Connection) -> Void) {
        var i = 0
        while i < connections.count {
            if let c = connections[i] { body(c) }
            i += 1
        }
    }

    /// `admin`: the operators' listener (`ServerConfiguration.adminPort`).
    func addListener(_ fd: Int32, admin: Bool = false) {
        let l = Listener(fd: fd, server: self, admin: admin)
        listeners.append(l)
        loop.register(fd, l, read: true, write: false)
    }

    func start() { loop.start(name: "lede-loop-\(loop.id)") }

    // MARK: - LoopObserver

    func loopWillHandleEvents() { refreshDate() }

    func loopDidHandleEvents() {
        flushLog()
        if draining && connectionCount == 0 { loop.stop() }
    }

    // MARK: - Accept

    final class Listener: LoopDescriptorHandler {
        let fd: Int32
        unowned let server: ServerLoop
        let admin: Bool
        init(fd: Int32, server: ServerLoop, admin: Bool) { self.fd = fd; self.server = server; self.admin = admin }
        func handle(events: UInt32) { server.acceptConnections(fd, admin: admin) }
    }

    fileprivate func acceptConnections(_ listener: Int32, admin: Bool) {
        var address: (UInt64, UInt64) = (0, 0)
        for _ in 0..<128 {
            let fd = withUnsafeMutableBytes(of: &address) { lede_accept_peer(listener, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
            if fd < 0 {
                let e = lede_errno()
                if e == EAGAIN || e == EWOULDBLOCK { return }
                if e == EMFILE || e == ENFILE {
                    // Out of descriptors: free the reserve, accept and refuse one connection, take the reserve back.
                    // This drains the backlog instead of spinning on a level-triggered listener.
                    if reserveFD >= 0 { close(reserveFD); reserveFD = -1 }
                    let victim = lede_accept(listener)
                    if victim >= 0 { refuse(victim) }
                    reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
                    let now = Syscall.monotonicNanos()
                    if now &- lastEMFILELog > 1_000_000_000 {
                        lastEMFILELog = now
                        core.logger.warning("out of file descriptors; refusing connections", [("errno", "\(e)")])
                    }
                    if victim < 0 { return }
                    continue
                }
                // ECONNABORTED, EPROTO, ENOBUFS…: this one connection failed; go on.
                if e == ECONNABORTED || e == EPROTO || e == EPERM { continue }
                return
            }
            let peer = withUnsafeBytes(of: &address) { ClientAddress(bytes: $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
            // Its address's share first (a trusted proxy holds its clients' connections: exempt), then the whole: at
            // the limit, the connection idle longest on this loop makes room, so held connections lock no one out.
            let counted = !admin && !core.forwarding.isTrusted(peer)
            if counted && !core.connectionShares.take(peer) {
                refuse(fd)
                continue
            }
            if core.metrics.openConnections >= core.configuration.limits.maxConnections && !closeLongestIdle() {
                if counted { core.connectionShares.give(peer) }
                refuse(fd)
                continue
            }
            Syscall.setNoDelay(fd)
            register(fd, peer: peer, counted: counted, admin: admin)
        }
    }

    private func refuse(_ fd: Int32) {
        core.metrics.connectionRejected()
        let bytes = core.overloadedResponse(date: dateBytes)
        _ = bytes.withUnsafeBytes { Syscall.send(fd, $0.baseAddress!, $0.count) }
        close(fd)
    }

    /// Closes the keep-alive connection of this loop that has waited longest for a request (none being answered,
    /// nothing unsent, no stream); false when there is none.
    private func closeLongestIdle() -> Bool {
        var oldest: Connection?
        var since = UInt64.max
        eachConnection { c in
            if c.lastAnswered < since && c.isIdleKeepAlive { oldest = c; since = c.lastAnswered }
        }
        guard let oldest else { return false }
        core.metrics.connectionEvicted()
        oldest.close()
        return true
    }

    private func register(_ fd: Int32, peer: ClientAddress, counted: Bool, admin: Bool) {
        let i = Int(fd)
        if i >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: max(i + 1 - connections.count, connections.count)))
        }
        let c = Connection(fd: fd, server: self, now: Syscall.monotonicNanos(), peer: peer, countedShare: counted, admin: admin)
        connections[i] = c
        connectionCount += 1
        core.metrics.connectionOpened()
        loop.register(fd, c, read: true, write: false)
        if draining { c.shutdownRequested() }
    }

    func setInterest(_ fd: Int32, read: Bool, write: Bool) { loop.setInterest(fd, read: read, write: write) }

    func connectionClosed(_ fd: Int32) {
        if Int(fd) < connections.count { connections[Int(fd)] = nil }
        loop.forget(fd)
        connectionCount -= 1
        core.metrics.connectionClosed()
        close(fd)
    }

    // MARK: - Shutdown

    /// Stop accepting (after taking in what the kernel already accepted), let busy connections finish.
    func beginDrain() {
        draining = true
        for l in listeners {
            acceptConnections(l.fd, admin: l.admin)
            loop.deregister(l.fd)
            close(l.fd)
        }
        listeners.removeAll()
        eachConnection { $0.shutdownRequested() }
        if connectionCount == 0 { loop.stop() }
    }

    /// Drain timeout passed: close whatever is left.
    func forceClose() {
        eachConnection { $0.close(.draining) }
        draining = true
        if connectionCount == 0 { loop.stop() }
    }

    // MARK: - Per-loop caches

    private func refreshDate() {
        var tv = timeval()
        gettimeofday(&tv, nil)
        let s = Int(tv.tv_sec)
        if s != dateSecond {
            dateSecond = s
            dateBytes = Array(HTTPDate.format(seconds: s).utf8)
        }
    }

    /// Trace and span ids of this loop's requests (touched only on the loop).
    var random = SplitMix64()

    /// The trace of a request: the one its `traceparent` names when well-formed, else a fresh one; a new span either way.
    func trace(for request: HTTPRequest?) -> TraceContext {
        if let request, request.mayHaveTraceparent, let traceparent = request.headers["traceparent"] {
            return TraceContext.make(traceparent: traceparent, tracestate: request.headers["tracestate"], span: random.next(),
                                     fresh: { (random.next(), random.next()) })
        }
        // No `traceparent` (nearly every request): a fresh trace, with no closure to call.
        return TraceContext.fresh(span: random.next(), high: random.next(), low: random.next())
    }

    func nextRequestID() -> RequestID {
        requestCounter &+= 1
        return RequestID(prefix: requestIDPrefix, counter: UInt32(truncatingIfNeeded: requestCounter))
    }


    func flushLog() {
        guard !logBuffer.isEmpty else { return }
        logBuffer.withUnsafeBytes { p in
            var off = 0
            while off < p.count {
                let n = write(1, p.baseAddress! + off, p.count - off)
                if n > 0 { off += n } else if n < 0 && errno == EINTR { continue } else { break }
            }
        }
        logBuffer.removeAll(keepingCapacity: true)
    }
}
