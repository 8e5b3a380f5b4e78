import CLinux
import Foundation
import Glibc

/// One thread, one epoll instance. Owns its connections; everything about a connection happens on its
/// loop's thread. Other threads hand work in with `execute`, which wakes the loop through an eventfd.
/// Other components (the upstream client) may share a loop: they register descriptors of their own, a
/// ticker, and keep per-loop state as an attachment — all on the loop's thread (`EventLoop.current`).
public final class EventLoop: @unchecked Sendable {   // @unchecked: all state is touched on the loop thread only, but `wake`, which locks its own.
    let id: Int
    let core: ServerCore
    private let epfd: Int32
    private let wake: WakeQueue
    private var listeners: [Int32] = []
    private var connections: [Connection?] = Array(repeating: nil, count: 1024)
    private(set) var connectionCount = 0
    /// Jobs of Swift tasks that prefer this loop, enqueued on its own thread: run before it waits again.
    private var localJobs: [UnownedJob] = []
    private var thread: pthread_t?
    /// Descriptors other components registered, and their tickers and per-loop state.
    private var foreign: [Int32: LoopDescriptorHandler] = [:]
    private var tickers: [(UInt64) -> Void] = []
    private var lastForeignTick: UInt64 = 0
    private var attachments: [ObjectIdentifier: AnyObject] = [:]
    private var stopHooks: [() -> Void] = []
    private var reserveFD: Int32 = -1
    private var draining = false
    private var stopped = false
    public let readBuffer: UnsafeMutableRawBufferPointer
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
        guard epfd >= 0, let wake = WakeQueue() else { throw Syscall.BindError(description: "epoll/eventfd: \(String(cString: strerror(errno)))") }
        self.wake = wake
        _ = lede_epoll_ctl(epfd, 1, wake.fd, 1)
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
    public func execute(_ task: @escaping () -> Void) {
        wake.enqueue(task)
    }

    func run() {
        thread = pthread_self()
        LoopThread.set(self)
        var fds = [Int32](repeating: 0, count: 256)
        var events = [UInt32](repeating: 0, count: 256)
        lastTick = Syscall.monotonicNanos()
        while !stopped {
            let n = fds.withUnsafeMutableBufferPointer { f in
                events.withUnsafeMutableBufferPointer { e in
                    lede_epoll_wait(epfd, f.baseAddress, e.baseAddress, 256, tickers.isEmpty ? Int32(tickNanos / 1_000_000) : 10)
                }
            }
            if n > 0 {
                refreshDate()
                for i in 0..<Int(n) {
                    let fd = fds[i], ev = events[i]
                    if fd == wake.fd { wake.drain() }
                    else if listeners.contains(fd) { acceptConnections(fd) }
                    else if Int(fd) < connections.count, let c = connections[Int(fd)] { c.handle(events: ev) }
                    else { foreign[fd]?.handle(events: ev) }
                }
            }
            if !tickers.isEmpty {
                let now = Syscall.monotonicNanos()
                if now &- lastForeignTick >= 10_000_000 { lastForeignTick = now; for t in tickers { t(now) } }
            }
            runLocalJobs()
            flushLog()
            let now = Syscall.monotonicNanos()
            if now &- lastTick >= tickNanos {
                lastTick = now
                refreshDate()
                for c in connections where c != nil { c!.tick(now: now) }
                flushLog()
            }
            runLocalJobs()   // any a tick started, before the loop waits again
            if draining && connectionCount == 0 { stopped = true }
        }
        for hook in stopHooks { hook() }
        stopHooks.removeAll(); attachments.removeAll(); tickers.removeAll()
        for fd in listeners { close(fd) }
        listeners.removeAll()
        close(epfd)
        if reserveFD >= 0 { close(reserveFD) }
        core.loopStopped()
    }

    // MARK: - Sharing the loop (on its thread only)

    /// The loop whose thread this is, if any.
    public static var current: EventLoop? { LoopThread.current }

    /// Watches `fd` for `handler` (readable and/or writable), level-triggered.
    public func register(_ fd: Int32, _ handler: LoopDescriptorHandler, read: Bool, write: Bool) {
        assert(confined, "descriptors are registered on the loop's thread")
        foreign[fd] = handler
        _ = lede_epoll_ctl(epfd, 1, fd, (read ? 1 : 0) | (write ? 2 : 0))
    }

    public func deregister(_ fd: Int32) {
        assert(confined, "descriptors are deregistered on the loop's thread")
        foreign[fd] = nil
        _ = lede_epoll_ctl(epfd, 3, fd, 0)
    }

    /// `tick` is called about every 10 ms with the monotonic time in nanoseconds.
    public func addTicker(_ tick: @escaping (UInt64) -> Void) { tickers.append(tick) }

    /// `hook` runs when the loop stops.
    public func onStop(_ hook: @escaping () -> Void) { stopHooks.append(hook) }

    /// Per-loop state of another component, made on first use.
    public func attachment<T: AnyObject>(_ key: ObjectIdentifier, make: () -> T) -> T {
        assert(confined, "attachments live on the loop's thread")
        if let a = attachments[key] as? T { return a }
        let a = make()
        attachments[key] = a
        return a
    }

    /// Whether the caller runs on this loop's thread.
    /// On the loop's thread, or before the loop runs (set-up from the starting thread): what the class's
    /// `@unchecked Sendable` rests on, checked in debug builds.
    var confined: Bool { thread == nil || inLoop }

    public var inLoop: Bool { thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }

    private func runLocalJobs() {
        while !localJobs.isEmpty {
            let batch = localJobs
            localJobs.removeAll(keepingCapacity: true)
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
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

    public func setInterest(_ fd: Int32, read: Bool, write: Bool) {
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


/// Swift tasks that prefer a loop (the server starts its async handlers so) run on its thread: a handler's
/// awaits resume where its connection lives, and its answer is written without a thread hop.
extension EventLoop: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if inLoop {
            localJobs.append(job)
        } else {
            execute { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}

/// The event loop running on the current thread, if any.
enum LoopThread {
    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k, nil)
        return k
    }()

    static func set(_ loop: EventLoop) { pthread_setspecific(key, Unmanaged.passUnretained(loop).toOpaque()) }

    static var current: EventLoop? {
        guard let p = pthread_getspecific(key) else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(p).takeUnretainedValue()
    }
}

/// A descriptor another component registered on a loop.
public protocol LoopDescriptorHandler: AnyObject {
    func handle(events: UInt32)
}

/// A loop-confined object carried through a `Sendable` context (a task, another thread's callback) back to its
/// loop, where alone it is used. Debug builds check that on every access.
public struct LoopBound<T: AnyObject>: @unchecked Sendable {   // @unchecked: `value` is only read on `loop`'s thread (asserted).
    private let object: T
    public let loop: EventLoop
    public init(_ object: T, on loop: EventLoop) { self.object = object; self.loop = loop }
    public var value: T {
        assert(loop.inLoop, "a loop-bound object used off its loop")
        return object
    }
}
