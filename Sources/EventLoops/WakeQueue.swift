import CLinux
import Glibc

/// How other threads hand work to an epoll loop: closures queued under a mutex, and an eventfd the loop
/// watches, signalled on each enqueue. The server's loops and the client's own loops both use it.
public final class WakeQueue: @unchecked Sendable {   // @unchecked: hands loop-confined closures to the loop thread, which alone runs them; the queue itself is under `lock`.
    /// The eventfd to register for reading; when it is readable, call `drain`.
    public let fd: Int32
    private var lock = pthread_mutex_t()
    private var tasks: [() -> Void] = []

    /// Nil when no eventfd could be made.
    public init?() {
        fd = lede_eventfd()
        guard fd >= 0 else { return nil }
        pthread_mutex_init(&lock, nil)
    }

    deinit {
        close(fd)
        pthread_mutex_destroy(&lock)
    }

    /// Queues `task` and wakes the loop (from any thread).
    public func enqueue(_ task: @escaping () -> Void) {
        pthread_mutex_lock(&lock)
        tasks.append(task)
        pthread_mutex_unlock(&lock)
        _ = lede_eventfd_signal(fd)
    }

    /// Clears the wake-up and runs what was queued (on the loop's thread).
    public func drain() {
        _ = lede_eventfd_drain(fd)
        pthread_mutex_lock(&lock)
        let batch = tasks
        tasks.removeAll(keepingCapacity: true)
        pthread_mutex_unlock(&lock)
        for t in batch { t() }
    }
}
