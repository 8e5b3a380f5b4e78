import Foundation
import Synchronization

/// A cache of what no user owns — public (never user-bound) upstream answers, the feed's shared and personal parts
/// (`KeyedCache<FeedKey>`: keys made of the values they name, with no text formatted to look one up):
/// - a TTL per entry (chosen per call kind by the caller);
/// - bounded by entries and bytes, least recently used evicted first;
/// - concurrent misses for one key share one fetch (coalescing);
/// - stale-if-error: when a refresh fails with a transient error, the last good value is served for up to
///   `staleIfError` seconds past its expiry, then the error goes through;
/// - a page that does not exist is remembered for `notFoundTTL` seconds, so a popular missing title does not send
///   every request upstream;
/// - stale-while-revalidate (RFC 5861), per entry: a value its caller allows to go stale is served for a bounded time
///   past its expiry while one refresh (per key) runs in the background — no request waits on the refresh of
///   something that was warm.
public final class KeyedCache<Key: Hashable & Sendable>: Sendable {
    public typealias Limits = CacheLimits
    public typealias Counters = CacheCounters
    public typealias Source = CacheSource

    /// What is kept for a page that does not exist.
    private struct Missing: Sendable { let error: any CacheableFailure }

    /// An entry: the LRU bookkeeping here, the value in `Entry<T>`, kept with its static type so that reading it back
    /// is a class check, not an existential cast (`swift_dynamicCast` cost ~370 instructions a lookup, and a box
    /// around the value one more retain and release).
    ///
    /// Its fields are read and written only inside `state.withLock` (nodes never leave the mutex): the lock is their
    /// exclusivity, so they carry no run-time check — which, once this code is inlined into the app across the module
    /// boundary, would cost about 600 instructions a warm personal feed (callgrind).
    private class Node {
        let key: Key
        @exclusivity(unchecked) var cost: Int
        @exclusivity(unchecked) var expires: Double
        /// Seconds past `expires` the value may be served while it is refreshed (0: not at all).
        @exclusivity(unchecked) var staleFor: Double
        /// When a hit last moved it to the front.
        @exclusivity(unchecked) var touched = -Double.infinity
        @exclusivity(unchecked) var prev: Node?
        @exclusivity(unchecked) var next: Node?
        init(key: Key, cost: Int, expires: Double, staleFor: Double) {
            self.key = key; self.cost = cost; self.expires = expires; self.staleFor = staleFor
        }
    }

    private final class Entry<T: Sendable>: Node {
        let value: T
        init(key: Key, value: T, cost: Int, expires: Double, staleFor: Double) {
            self.value = value
            super.init(key: key, cost: cost, expires: expires, staleFor: staleFor)
        }
    }

    public let limits: Limits
    private let clock: @Sendable () -> Double
    /// The entries, the LRU list, fetches under way and the counters, behind one mutex (nodes never leave it).
    private let state: Mutex<State>

    public init(limits: Limits = Limits(), clock: @escaping @Sendable () -> Double = { Date().timeIntervalSinceReferenceDate }) {
        self.limits = limits
        self.clock = clock
        self.state = Mutex(State(limits: limits))
    }

    /// The LRU list links both ways: unlinked here, or a dropped cache would keep every node alive (a fuzz target's
    /// LeakSanitizer found them; a process's caches live as long as it does, a test's do not).
    deinit {
        state.withLock { s in
            var node = s.head
            while let n = node { node = n.next; n.prev = nil; n.next = nil }
            s.head = nil; s.tail = nil
        }
    }

    public var snapshot: Counters {
        state.withLock { s in
            var c = s.counters
            c.entries = s.map.count; c.bytes = s.bytes
            return c
        }
    }

    /// The cached value for `key`, or the result of `fetch` (shared with concurrent callers for the same key),
    /// kept for `ttl` seconds. `fetch` returns the value and its cost in bytes.
    /// `ttlFor`, when given, decides the lifetime from the fetched value (e.g. short for a partial result).
    /// `staleWhileRevalidate`, when given, says how long past its expiry a fetched value may be served while one refresh
    /// runs in the background (0 for a value that must not be served stale).
    public func value<T: Sendable>(_ key: Key, ttl: Double, ttlFor: (@Sendable (T) -> Double)? = nil,
                                   staleWhileRevalidate: (@Sendable (T) -> Double)? = nil,
                                   fetch: @escaping @Sendable () async throws -> (T, Int)) async throws -> T {
        try await lookup(key, ttl: ttl, ttlFor: ttlFor, staleWhileRevalidate: staleWhileRevalidate, fetch: fetch).0
    }

    /// The fresh value for `key` if one is cached, without fetching: lets a handler answer on the event loop
    /// when the answer is at hand, and go off the loop only when it is not.
    public func cachedValue<T: Sendable>(_ key: Key, as type: T.Type = T.self) -> T? {
        cachedValue(key, as: T.self, at: clock())
    }

    /// The same at `now` (this cache's clock, read once by a caller that makes several lookups).
    public func cachedValue<T: Sendable>(_ key: Key, as type: T.Type = T.self, at now: Double) -> T? {
        state.withLock { $0.freshValue(key, now: now, as: T.self) }
    }

    /// Keeps `value` for `ttl` seconds (for answers built on the spot, without an upstream call), and up to `staleFor`
    /// seconds more for `revalidatingValue` while it is rebuilt.
    public func insert<T: Sendable>(_ key: Key, _ value: T, cost: Int, ttl: Double, staleFor: Double = 0) {
        let expires = clock() + ttl
        state.withLock { s in
            s.counters.misses += 1
            s.refreshing.remove(key)
            s.store(key, value, cost: cost, expires: expires, staleFor: staleFor)
        }
    }

    /// A fresh value, or a stale one within its stale-while-revalidate window (for values kept with `insert`, whose
    /// caller rebuilds them): `refresh` is true for the one caller that should rebuild it now — until its `insert` (or
    /// `refreshFailed`) no other caller is asked to. `stale` says the value is past its lifetime.
    public func revalidatingValue<T: Sendable>(_ key: Key, as type: T.Type = T.self) -> (value: T, refresh: Bool, stale: Bool)? {
        let now = clock()
        return state.withLock { s in
            if let v = s.freshValue(key, now: now, as: T.self) { return (v, false, false) }
            guard let node = s.map[key], node.staleFor > 0, now < node.expires + node.staleFor, let v = (node as? Entry<T>)?.value else { return nil }
            s.counters.revalidated += 1
            s.moveToFront(node)
            return (v, s.refreshing.insert(key).inserted, true)
        }
    }

    /// A rebuild asked for by `revalidatingValue` failed: the next caller may try again.
    public func refreshFailed(_ key: Key) {
        _ = state.withLock { $0.refreshing.remove(key) }
    }

    /// What a lookup found under the lock: a value, a fetch already running, or the fetch it started.
    private enum LookupStep<T: Sendable> { case cached(T), missing(any CacheableFailure), running(Task<any Sendable, Error>), started(Task<any Sendable, Error>, Int) }

    /// Like `value`, and says whether the answer came from the cache or from the upstream.
    public func lookup<T: Sendable>(_ key: Key, ttl: Double, ttlFor: (@Sendable (T) -> Double)? = nil,
                                    staleWhileRevalidate: (@Sendable (T) -> Double)? = nil,
                                    fetch: @escaping @Sendable () async throws -> (T, Int)) async throws -> (T, Source) {
        let now = clock()
        let step: LookupStep<T> = state.withLock { s in
            if let node = s.map[key] {
                if node.expires > now {
                    if let missing = node as? Entry<Missing> { s.counters.hits += 1; return .missing(missing.value.error) }
                    if let v = s.fresh(node, now: now, as: T.self) { return .cached(v) }
                }
                // Stale but within what its caller allows: served now, refreshed in the background (once per key).
                if node.staleFor > 0, now < node.expires + node.staleFor, let v = (node as? Entry<T>)?.value {
                    s.counters.revalidated += 1
                    s.moveToFront(node)
                    if s.inflight[key] == nil { s.inflight[key] = fetchTask(key, ttl: ttl, ttlFor: ttlFor, staleWhileRevalidate: staleWhileRevalidate, fetch: fetch) }
                    return .cached(v)
                }
            }
            if let running = s.inflight[key] {
                s.counters.coalesced += 1
                return .running(running)
            }
            s.counters.misses += 1
            let task = fetchTask(key, ttl: ttl, ttlFor: ttlFor, staleWhileRevalidate: staleWhileRevalidate, fetch: fetch)
            s.inflight[key] = task
            return .started(task, s.counters.staleServed)
        }
        switch step {
        case .cached(let v):
            return (v, .hit)
        case .missing(let error):
            throw error
        case .running(let running):
            return (try await running.value as! T, .coalesced)
        case .started(let task, let servedStaleBefore):
            let value = try await task.value as! T
            let after = clock()
            let stale = state.withLock { s in s.counters.staleServed > servedStaleBefore && s.map[key].map { $0.expires <= after } == true }
            return (value, stale ? .stale : .miss)
        }
    }

    /// The fetch of `key`: stores what it gets (or, on a transient failure, hands back the last good value within
    /// stale-if-error) and leaves the in-flight table.
    private func fetchTask<T: Sendable>(_ key: Key, ttl: Double, ttlFor: (@Sendable (T) -> Double)?, staleWhileRevalidate: (@Sendable (T) -> Double)?,
                                        fetch: @escaping @Sendable () async throws -> (T, Int)) -> Task<any Sendable, Error> {
        Task<any Sendable, Error> { [self] in
            do {
                let (value, cost) = try await fetch()
                let expires = clock() + (ttlFor?(value) ?? ttl)
                let staleFor = staleWhileRevalidate?(value) ?? 0
                state.withLock { s in
                    s.inflight[key] = nil
                    s.store(key, value, cost: cost, expires: expires, staleFor: staleFor)
                }
                return value
            } catch {
                let now = clock(), limits = self.limits
                let stale: T? = state.withLock { s in
                    s.inflight[key] = nil
                    if let e = error as? any CacheableFailure, e.isNotFound, limits.notFoundTTL > 0 {
                        s.store(key, Missing(error: e), cost: 64, expires: now + limits.notFoundTTL, staleFor: 0)
                    }
                    guard let e = error as? any CacheableFailure, e.allowsStale, let node = s.map[key], node.expires + limits.staleIfError > now else { return nil }
                    s.counters.staleServed += 1
                    s.moveToFront(node)
                    return (node as? Entry<T>)?.value
                }
                if let stale { return stale }
                throw error
            }
        }
    }

    /// Drops the entry for `key`, if any (a value that a fresher one has overtaken).
    public func remove(_ key: Key) {
        state.withLock { s in
            guard let node = s.map.removeValue(forKey: key) else { return }
            s.unlink(node)
            s.bytes -= node.cost
        }
    }

    /// Drops every entry (tests, admin).
    public func removeAll() {
        state.withLock { s in s.map.removeAll(); s.head = nil; s.tail = nil; s.bytes = 0 }
    }

    // MARK: - LRU list (behind the mutex)

    private struct State {
        let limits: Limits
        var map: [Key: Node] = [:]
        var head: Node?   // most recently used
        var tail: Node?   // least recently used
        var bytes = 0
        var inflight: [Key: Task<any Sendable, Error>] = [:]
        /// Keys a caller of `revalidatingValue` is rebuilding.
        var refreshing = Set<Key>()
        var counters = Counters()
        init(limits: Limits) { self.limits = limits }

        /// A fresh entry's value of type `T`, counted as a hit and made the most recently used.
        mutating func freshValue<T: Sendable>(_ key: Key, now: Double, as type: T.Type) -> T? {
            guard let node = map[key] else { return nil }
            return fresh(node, now: now, as: T.self)
        }

        /// `node`'s value if it is fresh and a `T`, counted as a hit.
        mutating func fresh<T: Sendable>(_ node: Node, now: Double, as type: T.Type) -> T? {
            guard node.expires > now, let value = (node as? Entry<T>)?.value else { return nil }
            counters.hits += 1
            // Recency at a second's grain: a hot entry is relinked once a second, not on every hit (its place among
            // the least recently used is what counts, and a second is nothing against their lifetimes).
            if now - node.touched >= 1 { node.touched = now; moveToFront(node) }
            return value
        }

        mutating func store<T: Sendable>(_ key: Key, _ value: T, cost: Int, expires: Double, staleFor: Double) {
            if let old = map[key] { unlink(old); bytes -= old.cost; map[key] = nil }
            guard cost <= limits.maxBytes else { return }
            let node = Entry(key: key, value: value, cost: cost, expires: expires, staleFor: staleFor)
            map[key] = node
            linkFront(node)
            bytes += cost
            while (map.count > limits.maxEntries || bytes > limits.maxBytes), let victim = tail {
                unlink(victim); map[victim.key] = nil; bytes -= victim.cost
                counters.evictions += 1
            }
        }

        mutating func moveToFront(_ node: Node) {
            guard head !== node else { return }
            unlink(node); linkFront(node)
        }

        mutating func linkFront(_ node: Node) {
            node.prev = nil; node.next = head
            head?.prev = node
            head = node
            if tail == nil { tail = node }
        }

        mutating func unlink(_ node: Node) {
            node.prev?.next = node.next
            node.next?.prev = node.prev
            if head === node { head = node.next }
            if tail === node { tail = node.prev }
            node.prev = nil; node.next = nil
        }
    }
}

/// The bounds of a `KeyedCache`.
public struct CacheLimits: Sendable {
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

/// What a `KeyedCache` has done, and what it holds.
public struct CacheCounters: Sendable, Equatable {
    public var hits = 0, misses = 0, coalesced = 0, staleServed = 0, evictions = 0
    /// Stale values served while a background refresh ran (stale-while-revalidate).
    public var revalidated = 0
    public var entries = 0, bytes = 0
}

/// How a lookup was answered.
public enum CacheSource: String, Sendable { case hit, miss, coalesced, stale }

/// A failure a `KeyedCache` fetch may throw that the cache knows what to do with: a page that does not exist is
/// remembered for `notFoundTTL`, and a transient failure lets the last good value be served for `staleIfError`.
public protocol CacheableFailure: Error, Sendable {
    /// Whether serving a stale cached value is a sensible answer to this failure.
    var allowsStale: Bool { get }
    /// Whether the thing asked for does not exist (remembered for a while, so it is not asked for again at once).
    var isNotFound: Bool { get }
}
