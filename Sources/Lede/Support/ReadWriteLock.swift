import Glibc

/// A reader–writer lock for state read on every request and written rarely (the warm feed's prepared bodies):
/// readers on different event loops never wait for each other, where a mutex made them sleep in `futex` on
/// every collision.
final class ReadWriteLock: @unchecked Sendable {
    private let rwlock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        rwlock = .allocate(capacity: 1)
        rwlock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(rwlock, nil)
    }

    deinit {
        pthread_rwlock_destroy(rwlock)
        rwlock.deallocate()
    }

    func withReadLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return try body()
    }

    func withWriteLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return try body()
    }
}
