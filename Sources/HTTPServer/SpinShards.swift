import Glibc
import Synchronization

/// 64 spin locks for a table split into 64 shards (the per-client tables: `ClientRateLimiter`, `CredentialMemory`).
/// A lock is held for a few dozen instructions, so a spin (yielding to a preempted holder) costs less than a mutex
/// object per shard, and nothing is retained.
struct SpinShards: ~Copyable {
    static let count = 64
    private let locks: UnsafeMutablePointer<Atomic<UInt32>>

    init() {
        locks = UnsafeMutablePointer<Atomic<UInt32>>.allocate(capacity: SpinShards.count)
        for i in 0..<SpinShards.count { (locks + i).initialize(to: Atomic(0)) }
    }

    deinit {
        locks.deinitialize(count: SpinShards.count)
        locks.deallocate()
    }

    /// Runs `body` with shard `i`'s lock held.
    @inline(__always)
    func locked<R>(_ i: Int, _ body: () -> R) -> R {
        var spins = 0
        while !locks[i].compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            spins += 1
            if spins > 64 { sched_yield(); spins = 0 }   // the holder was preempted: let it run
        }
        defer { locks[i].store(0, ordering: .releasing) }
        return body()
    }
}
