import CLinux
import Foundation
import Glibc

/// One thread, one epoll instance. Owns its connections; everything about a connection happens on its
/// loop's thread. Other threads hand work in with `execute`, which wakes the loop through an eventfd.
final class EventLoop: @unchecked Sendable {
    let id: Int
    let core: ServerCore
    private let epfd: Int32
    private let wakeFD: Int32
    private var listeners: [Int32] = []
    private var connections: [Connection?] = Array(repeating: nil, count: 1024)
    private(set) var connectionCount = 0
    private var taskLock = pthread_mutex_t()
    private var tasks: [() -> Void] = []
    private var reserveFD: Int32 = -1
    private var draining = false
    private var stopped = false
    let readBuffer: UnsafeMutableRawBufferPointer
    private var lastTick: UInt64 = 0
    private let tickNanos: UInt64
    private var lastEMFILELog: UInt64 = 0

    // Per-loop caches: the Date header (renewed once a second) and the access-log buffer.
    private var dateSecond = -1
    private(set) var dateBytes: [UInt8] = []
    var logBuffer: [UInt8] = []
    private var requestCounter: UInt64 = 0
    private let requestIDPrefixBytes: [UInt8]

    init(id: Int, core: ServerCore) throws {
        self.id = id
        self.core = core
        epfd = lede_epoll_create()
        wakeFD = lede_eventfd()
        guard epfd >= 0, wakeFD >= 0 else { throw Syscall.BindError(description: "epoll/eventfd: \(String(cString: strerror(errno)))") }
        _ = lede_epoll_ctl(epfd, 1, wakeFD, 1)
        pthread_mutex_init(&taskLock, nil)
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
        tickNanos = UInt64(max(0.01, core.configuration.tickInterval) * 1e9)
        // 6 random hex digits + the loop + a counter: unique per process, and short enough (≤ 15 bytes) to
        // stay a small string with no allocation.
        requestIDPrefixBytes = Array((String(UInt32.random(in: 0x10_0000...0xFF_FFFF), radix: 16) + String(id % 16, radix: 16)).utf8)
        refreshDate()
    }

    func addListener(_ fd: Int32) {
        listeners.append(fd)
        _ = lede_epoll_ctl(epfd, 1, fd, 1)
    }

    /// Runs `task` on this loop's thread.
    func execute(_ task: @escaping () -> Void) {
        pthread_mutex_lock(&taskLock)
        tasks.append(task)
        pthread_mutex_unlock(&taskLock)
        _ = lede_eventfd_signal(wakeFD)
    }

    func run() {
        var fds = [Int32](repeating: 0, count: 256)
        var events = [UInt32](repeating: 0, count: 256)
        lastTick = Syscall.monotonicNanos()
        while !stopped {
            let n = fds.withUnsafeMutableBufferPointer { f in
                events.withUnsafeMutableBufferPointer { e in
                    lede_epoll_wait(epfd, f.baseAddress, e.baseAddress, 256, Int32(tickNanos / 1_000_000))
                }
            }
            if n > 0 {
                refreshDate()
                for i in 0..<Int(n) {
                    let fd = fds[i], ev = events[i]
                    if fd == wakeFD { _ = lede_eventfd_drain(wakeFD); runTasks() }
                    else if listeners.contains(fd) { acceptConnections(fd) }
                    else if Int(fd) < connections.count, let c = connections[Int(fd)] { c.handle(events: ev) }
                }
            }
            flushLog()
            let now = Syscall.monotonicNanos()
            if now &- lastTick >= tickNanos {
                lastTick = now
                refreshDate()
                for c in connections where c != nil { c!.tick(now: now) }
                flushLog()
            }
            if draining && connectionCount == 0 { stopped = true }
        }
        for fd in listeners { close(fd) }
        listeners.removeAll()
        close(epfd); close(wakeFD)
        if reserveFD >= 0 { close(reserveFD) }
        core.loopStopped()
    }

    private func runTasks() {
        pthread_mutex_lock(&taskLock)
        let batch = tasks
        tasks.removeAll(keepingCapacity: true)
        pthread_mutex_unlock(&taskLock)
        for t in batch { t() }
    }

    // MARK: - Accept

    private func acceptConnections(_ listener: Int32) {
        for _ in 0..<128 {
            let fd = lede_accept(listener)
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
            if core.metrics.openConnections >= core.configuration.limits.maxConnections {
                refuse(fd)
                continue
            }
            Syscall.setNoDelay(fd)
            register(fd)
        }
    }

    private func refuse(_ fd: Int32) {
        core.metrics.connectionRejected()
        let bytes = core.overloadedResponse(date: dateBytes)
        _ = bytes.withUnsafeBytes { Syscall.send(fd, $0.baseAddress!, $0.count) }
        close(fd)
    }

    private func register(_ fd: Int32) {
        let i = Int(fd)
        if i >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: max(i + 1 - connections.count, connections.count)))
        }
        let c = Connection(fd: fd, loop: self, now: Syscall.monotonicNanos())
        connections[i] = c
        connectionCount += 1
        core.metrics.connectionOpened()
        _ = lede_epoll_ctl(epfd, 1, fd, 1)
        if draining { c.shutdownRequested() }
    }

    func setInterest(_ fd: Int32, read: Bool, write: Bool) {
        _ = lede_epoll_ctl(epfd, 2, fd, (read ? 1 : 0) | (write ? 2 : 0))
    }

    func connectionClosed(_ fd: Int32) {
        if Int(fd) < connections.count { connections[Int(fd)] = nil }
        connectionCount -= 1
        core.metrics.connectionClosed()
        close(fd)
    }

    // MARK: - Shutdown

    /// Stop accepting (after taking in what the kernel already accepted), let busy connections finish.
    func beginDrain() {
        draining = true
        for l in listeners {
            acceptConnections(l)
            _ = lede_epoll_ctl(epfd, 3, l, 0)
            close(l)
        }
        listeners.removeAll()
        for c in connections where c != nil { c!.shutdownRequested() }
    }

    /// Drain timeout passed: close whatever is left.
    func forceClose() {
        for c in connections where c != nil { c!.close() }
        draining = true
    }

    // MARK: - Per-loop caches

    private func refreshDate() {
        var tv = timeval()
        gettimeofday(&tv, nil)
        let s = Int(tv.tv_sec)
        if s != dateSecond {
            dateSecond = s
            dateBytes = Array(Timestamp.httpDate(seconds: s).utf8)
        }
    }

    func nextRequestID() -> String {
        requestCounter &+= 1
        var n = requestCounter & 0xFFFF_FFFF
        var digits = 1
        while n >> (4 * UInt64(digits)) != 0 { digits += 1 }
        // Written in place: at most 15 bytes, so the result is a small string (no allocation).
        return String(unsafeUninitializedCapacity: requestIDPrefixBytes.count + digits) { buffer in
            var i = 0
            for b in requestIDPrefixBytes { buffer[i] = b; i += 1 }
            var k = i + digits
            let end = k
            while k > i { k -= 1; buffer[k] = EventLoop.hexDigits[Int(n & 0xF)]; n >>= 4 }
            return end
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private func flushLog() {
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
