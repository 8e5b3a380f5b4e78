import CLinux
import Foundation
import Glibc
import Synchronization

/// A descriptor registered on a loop: told of its events on the loop's thread.
public protocol LoopDescriptorHandler: AnyObject {
    /// `events`: bit 0 readable (or peer hang-up), bit 1 writable, bit 2 error/hang-up.
    func handle(events: UInt32)
}

/// A component that owns a loop and wants to run around each wake-up (the server: its Date cache, its log).
public protocol LoopObserver: AnyObject {
    /// Before the events of one wake-up are handled.
    func loopWillHandleEvents()
    /// After the events, tickers and task jobs of one wake-up. May call `stop()`.
    func loopDidHandleEvents()
}

/// One thread, one epoll instance. Descriptors, tickers and per-loop state of every component that shares the
/// loop (the HTTP server's listeners and connections, the HTTP client's pools) are touched on its thread only;
/// other threads hand work in with `execute`, which wakes the loop through an eventfd. It is also the task
/// executor of Swift tasks that prefer it, so an async handler's awaits resume where its connection lives.
/// It knows nothing of HTTP.
public final class EventLoop: @unchecked Sendable {   // @unchecked: all state is touched on the loop thread only, but `wake` (locks its own) and `running` (atomic).
    public let id: Int
    private let epfd: Int32
    private let wake: WakeQueue
    /// Handlers by descriptor number (descriptors are small integers, unique in the process).
    private var handlers: [LoopDescriptorHandler?] = Array(repeating: nil, count: 1024)
    /// Jobs of Swift tasks that prefer this loop, enqueued on its own thread: run before it waits again.
    private var localJobs: [UnownedJob] = []
    /// The loop's thread once `run` has begun (0 before).
    private let running = Atomic<UInt>(0)
    private struct Ticker {
        var interval: UInt64
        var next: UInt64
        let tick: (UInt64) -> Void
    }
    private var tickers: [Ticker] = []
    private var attachments: [ObjectIdentifier: AnyObject] = [:]
    private var lastAttachment: (key: ObjectIdentifier, value: AnyObject)?
    private var stopHooks: [() -> Void] = []
    private var stopped = false
    /// Told around each wake-up (strong until the loop stops).
    public var observer: LoopObserver?
    /// The monotonic time (ns) read once as this wake-up's events began: a stamp for timeouts counted in seconds, so
    /// each read or write need not read the clock again. Never ahead of a later reading (ticks read the clock anew).
    public private(set) var now: UInt64 = 0
    /// 64 KiB every reader on this loop may use between two of its own calls (never across a suspension).
    public let readBuffer: UnsafeMutableRawBufferPointer

    public init(id: Int = 0) throws(Syscall.BindError) {
        self.id = id
        epfd = lede_epoll_create()
        guard epfd >= 0, let wake = WakeQueue() else { throw Syscall.BindError(description: "epoll/eventfd: \(String(cString: strerror(errno)))") }
        self.wake = wake
        _ = lede_epoll_ctl(epfd, 1, wake.fd, 1)
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit { readBuffer.deallocate() }

    /// Runs the loop on a new thread.
    public func start(name: String) {
        let t = Thread { [self] in run() }
        t.name = name
        t.stackSize = 1 << 20
        t.start()
    }

    /// Runs `task` on this loop's thread (from any thread).
    public func execute(_ task: @escaping () -> Void) {
        wake.enqueue(task)
    }

    /// Ends the loop after the current wake-up (from any thread). Stop hooks run on its thread, last added first.
    public func stop() {
        if inLoop { stopped = true } else { execute { [self] in stopped = true } }
    }

    /// Runs the loop on the calling thread until `stop`.
    public func run() {
        running.store(UInt(pthread_self()), ordering: .releasing)
        LoopThread.set(self)
        var fds = [Int32](repeating: 0, count: 256)
        var events = [UInt32](repeating: 0, count: 256)
        let start = Syscall.monotonicNanos()
        now = start
        for i in tickers.indices { tickers[i].next = start &+ tickers[i].interval }
        while !stopped {
            let timeout = waitMillis(now: Syscall.monotonicNanos())
            let n = fds.withUnsafeMutableBufferPointer { f in
                events.withUnsafeMutableBufferPointer { e in lede_epoll_wait(epfd, f.baseAddress, e.baseAddress, 256, timeout) }
            }
            now = Syscall.monotonicNanos()
            if n > 0 {
                observer?.loopWillHandleEvents()
                for i in 0..<Int(n) {
                    let fd = fds[i]
                    if fd == wake.fd { wake.drain() }
                    else if Int(fd) < handlers.count, let h = handlers[Int(fd)] { h.handle(events: events[i]) }
                }
            }
            runLocalJobs()
            // A fresh reading: stamps taken from `now` or later during this wake-up are never ahead of it.
            if !tickers.isEmpty { runTickers(now: Syscall.monotonicNanos()) }
            runLocalJobs()   // any a tick started, before the loop waits again
            observer?.loopDidHandleEvents()
        }
        for hook in stopHooks.reversed() { hook() }
        stopHooks.removeAll(); attachments.removeAll(); lastAttachment = nil; tickers.removeAll(); observer = nil
        handlers = []
        close(epfd)
    }

    private func waitMillis(now: UInt64) -> Int32 {
        if !localJobs.isEmpty { return 0 }
        if tickers.isEmpty { return 1000 }
        var next = UInt64.max
        var i = 0
        // By index: unoptimised, a generic iterator allocates at each step, and this runs at every wake-up.
        while i < tickers.count { next = min(next, tickers[i].next); i += 1 }
        if next <= now { return 0 }
        return Int32(min(1000, (next - now + 999_999) / 1_000_000))
    }

    private func runTickers(now: UInt64) {
        var i = 0
        while i < tickers.count {   // a tick may add tickers
            if now >= tickers[i].next {
                tickers[i].next = now &+ tickers[i].interval
                tickers[i].tick(now)
            }
            i += 1
        }
    }

    private func runLocalJobs() {
        while !localJobs.isEmpty {
            let batch = localJobs
            localJobs.removeAll(keepingCapacity: true)
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    // MARK: - Descriptors, tickers, per-loop state (on the loop's thread)

    /// The loop whose thread this is, if any.
    public static var current: EventLoop? { LoopThread.current }

    /// Watches `fd` for `handler` (readable and/or writable), level-triggered.
    public func register(_ fd: Int32, _ handler: LoopDescriptorHandler, read: Bool, write: Bool) {
        assert(confined, "descriptors are registered on the loop's thread")
        let i = Int(fd)
        if i >= handlers.count {
            handlers.append(contentsOf: repeatElement(nil, count: max(i + 1 - handlers.count, handlers.count)))
        }
        handlers[i] = handler
        _ = lede_epoll_ctl(epfd, 1, fd, (read ? 1 : 0) | (write ? 2 : 0))
    }

    public func setInterest(_ fd: Int32, read: Bool, write: Bool) {
        _ = lede_epoll_ctl(epfd, 2, fd, (read ? 1 : 0) | (write ? 2 : 0))
    }

    /// Stops watching `fd` (it stays open).
    public func deregister(_ fd: Int32) {
        assert(confined, "descriptors are deregistered on the loop's thread")
        forget(fd)
        _ = lede_epoll_ctl(epfd, 3, fd, 0)
    }

    /// Drops `fd`'s handler without a system call: for a descriptor about to be closed (closing removes it from
    /// the epoll set).
    public func forget(_ fd: Int32) {
        assert(confined, "descriptors are forgotten on the loop's thread")
        if Int(fd) < handlers.count { handlers[Int(fd)] = nil }
    }

    /// `tick` is called with the monotonic time in nanoseconds about every `interval` nanoseconds (10 ms unless
    /// told), after the events of a wake-up.
    public func addTicker(interval: UInt64 = 10_000_000, _ tick: @escaping (UInt64) -> Void) {
        assert(confined, "tickers are added on the loop's thread")
        tickers.append(Ticker(interval: max(1_000_000, interval), next: Syscall.monotonicNanos() &+ interval, tick: tick))
    }

    /// `hook` runs when the loop stops (hooks run last added first).
    public func onStop(_ hook: @escaping () -> Void) {
        assert(confined, "stop hooks are added on the loop's thread")
        stopHooks.append(hook)
    }

    /// Per-loop state of another component, made on first use. A key is always asked for with the same type (its
    /// owner's): the one asked for last is found without hashing, and no entry is cast again.
    public func attachment<T: AnyObject>(_ key: ObjectIdentifier, make: () -> T) -> T {
        assert(confined, "attachments live on the loop's thread")
        if let last = lastAttachment, last.key == key { return unsafeDowncast(last.value, to: T.self) }
        if let a = attachments[key] {
            lastAttachment = (key, a)
            return unsafeDowncast(a, to: T.self)
        }
        let a = make()
        attachments[key] = a
        lastAttachment = (key, a)
        return a
    }

    /// On the loop's thread, or before the loop runs (set-up from the starting thread): what the class's
    /// `@unchecked Sendable` rests on, checked in debug builds.
    public var confined: Bool {
        let t = running.load(ordering: .acquiring)
        return t == 0 || pthread_equal(pthread_t(t), pthread_self()) != 0
    }

    /// Whether the caller runs on this loop's thread.
    public var inLoop: Bool {
        let t = running.load(ordering: .acquiring)
        return t != 0 && pthread_equal(pthread_t(t), pthread_self()) != 0
    }
}

/// Swift tasks that prefer a loop run on its thread: their awaits resume where their loop-confined state lives.
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
