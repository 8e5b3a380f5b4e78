import Foundation

/// The cache in front of public (never user-bound) upstream calls:
/// - a TTL per entry (chosen per call kind by the caller);
/// - bounded by entries and bytes, least recently used evicted first;
/// - concurrent misses for one key share one fetch (coalescing);
/// - stale-if-error: when a refresh fails with a transient error, the last good value is served for up to
///   `staleIfError` seconds past its expiry, then the error goes through;
/// - a page that does not exist is remembered for `notFoundTTL` seconds, so a popular missing title does not send
///   every request upstream.
public final class UpstreamCache: @unchecked Sendable {
    public struct Limits: Sendable {
        public var maxEntries: Int = 10_000
        public var maxBytes: Int = 64 << 20
        /// Seconds past expiry a value may still be served when the upstream fails.
        public var staleIfError: Double = 600
        /// Seconds a `notFound` answer is kept (0: not kept).
        public var notFoundTTL: Double = 60
        public init(maxEntries: Int = 10_000, maxBytes: Int = 64 << 20, staleIfError: Double = 600, notFoundTTL: Double = 60) {
            self.maxEntries = maxEntries; self.maxBytes = maxBytes; self.staleIfError = staleIfError; self.notFoundTTL = notFoundTTL
        }
    }

    public struct Counters: Sendable, Equatable {
        public var hits = 0, misses = 0, coalesced = 0, staleServed = 0, evictions = 0
        public var entries = 0, bytes = 0
    }

    /// What is kept for a page that does not exist.
    private struct Missing: Sendable { let error: UpstreamError }

    private final class Node {
        let key: String
        var value: any Sendable
        var cost: Int
        var expires: Double
        var prev: Node?
        var next: Node?
        init(key: String, value: any Sendable, cost: Int, expires: Double) {
            self.key = key; self.value = value; self.cost = cost; self.expires = expires
        }
    }

    public let limits: Limits
    private let clock: @Sendable () -> Double
    private let lock = NSLock()
    private var map: [String: Node] = [:]
    private var head: Node?   // most recently used
    private var tail: Node?   // least recently used
    private var bytes = 0
    private var inflight: [String: Task<any Sendable, Error>] = [:]
    private var counters = Counters()

    public init(limits: Limits = Limits(), clock: @escaping @Sendable () -> Double = { Date().timeIntervalSinceReferenceDate }) {
        self.limits = limits
        self.clock = clock
    }

    public var snapshot: Counters {
        lock.lock(); defer { lock.unlock() }
        var c = counters
        c.entries = map.count; c.bytes = bytes
        return c
    }

    /// The cached value for `key`, or the result of `fetch` (shared with concurrent callers for the same key),
    /// kept for `ttl` seconds. `fetch` returns the value and its cost in bytes.
    /// `ttlFor`, when given, decides the lifetime from the fetched value (e.g. short for a partial result).
    public func value<T: Sendable>(_ key: String, ttl: Double, ttlFor: (@Sendable (T) -> Double)? = nil,
                                   fetch: @escaping @Sendable () async throws -> (T, Int)) async throws -> T {
        try await lookup(key, ttl: ttl, ttlFor: ttlFor, fetch: fetch).0
    }

    /// The fresh value for `key` if one is cached, without fetching: lets a handler answer on the event loop
    /// when the answer is at hand, and go off the loop only when it is not.
    public func cachedValue<T>(_ key: String, as type: T.Type = T.self) -> T? {
        lock.lock(); defer { lock.unlock() }
        return freshValue(key, now: clock(), as: T.self)
    }

    /// Keeps `value` for `ttl` seconds (for answers built on the spot, without an upstream call).
    public func insert<T: Sendable>(_ key: String, _ value: T, cost: Int, ttl: Double) {
        lock.lock(); defer { lock.unlock() }
        counters.misses += 1
        store(key, value, cost: cost, expires: clock() + ttl)
    }

    /// What a lookup found under the lock: a value, a fetch already running, or the fetch it started.
    private enum LookupStep { case cached(any Sendable), running(Task<any Sendable, Error>), started(Task<any Sendable, Error>, Int) }

    /// How a lookup was answered.
    public enum Source: String, Sendable { case hit, miss, coalesced, stale }

    /// Like `value`, and says whether the answer came from the cache or from the upstream.
    public func lookup<T: Sendable>(_ key: String, ttl: Double, ttlFor: (@Sendable (T) -> Double)? = nil,
                                    fetch: @escaping @Sendable () async throws -> (T, Int)) async throws -> (T, Source) {
        let step: LookupStep = lock.withLock {
            if let v = freshValue(key, now: clock(), as: (any Sendable).self) { return .cached(v) }
            if let running = inflight[key] {
                counters.coalesced += 1
                return .running(running)
            }
            counters.misses += 1
            let task = Task<any Sendable, Error> { [self] in
                do {
                    let (value, cost) = try await fetch()
                    lock.withLock {
                        inflight[key] = nil
                        store(key, value, cost: cost, expires: clock() + (ttlFor?(value) ?? ttl))
                    }
                    return value
                } catch {
                    let stale: (any Sendable)? = lock.withLock {
                        inflight[key] = nil
                        if case .notFound = error as? UpstreamError, limits.notFoundTTL > 0 {
                            store(key, Missing(error: error as! UpstreamError), cost: 64, expires: clock() + limits.notFoundTTL)
                        }
                        guard let e = error as? UpstreamError, e.allowsStale, let node = map[key], node.expires + limits.staleIfError > clock() else { return nil }
                        counters.staleServed += 1
                        moveToFront(node)
                        return node.value
                    }
                    if let stale { return stale }
                    throw error
                }
            }
            inflight[key] = task
            return .started(task, counters.staleServed)
        }
        switch step {
        case .cached(let v):
            if let missing = v as? Missing { throw missing.error }
            return (v as! T, .hit)
        case .running(let running):
            return (try await running.value as! T, .coalesced)
        case .started(let task, let servedStaleBefore):
            let value = try await task.value as! T
            let stale = lock.withLock { counters.staleServed > servedStaleBefore && map[key].map { $0.expires <= clock() } == true }
            return (value, stale ? .stale : .miss)
        }
    }

    /// Drops every entry (tests, admin).
    public func removeAll() {
        lock.lock(); defer { lock.unlock() }
        map.removeAll(); head = nil; tail = nil; bytes = 0
    }

    // MARK: - LRU list (lock held)

    /// A fresh entry's value of type `T`, counted as a hit and made the most recently used.
    private func freshValue<T>(_ key: String, now: Double, as type: T.Type) -> T? {
        guard let node = map[key], node.expires > now, let value = node.value as? T else { return nil }
        counters.hits += 1
        moveToFront(node)
        return value
    }

    private func store(_ key: String, _ value: any Sendable, cost: Int, expires: Double) {
        if let old = map[key] { unlink(old); bytes -= old.cost; map[key] = nil }
        guard cost <= limits.maxBytes else { return }
        let node = Node(key: key, value: value, cost: cost, expires: expires)
        map[key] = node
        linkFront(node)
        bytes += cost
        while (map.count > limits.maxEntries || bytes > limits.maxBytes), let victim = tail {
            unlink(victim); map[victim.key] = nil; bytes -= victim.cost
            counters.evictions += 1
        }
    }

    private func moveToFront(_ node: Node) {
        guard head !== node else { return }
        unlink(node); linkFront(node)
    }

    private func linkFront(_ node: Node) {
        node.prev = nil; node.next = head
        head?.prev = node
        head = node
        if tail == nil { tail = node }
    }

    private func unlink(_ node: Node) {
        node.prev?.next = node.next
        node.next?.prev = node.prev
        if head === node { head = node.next }
        if tail === node { tail = node.prev }
        node.prev = nil; node.next = nil
    }
}
