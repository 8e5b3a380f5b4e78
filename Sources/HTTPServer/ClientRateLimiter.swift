import EventLoops
import Glibc
import Synchronization

/// A token bucket per client, in a table of fixed size: `rate` units a second up to `burst`. A request is admitted
/// while its client has at least one unit; it then pays what it costs (a request answered from memory 1, one that works
/// off the loop its route's cost), and a client may run into debt down to `-burst` — the bucket refills the debt before
/// it admits again. Constant time a request: one set of four entries in a 16-byte-an-entry table (a 64-byte cache
/// line), under one of 64 uncontended mutexes.
///
/// Memory is bounded by `capacity` entries of 16 bytes (a million clients: 16 MiB, reserved with `calloc` and so
/// resident only as sets are touched). An idle client needs no entry — a bucket that has refilled to `burst` is the
/// same as no bucket — so a new client takes an entry whose bucket is full, or else the one of its set with the most
/// units: under more active clients than the table holds, the least spent are forgotten first, never the indebted.
public final class ClientRateLimiter: Sendable {
    public let rate: Double
    public let burst: Double
    public let capacity: Int
    private let shards: [Shard]
    private let setsPerShard: Int
    private let epoch: UInt64
    private let refused = Atomic<Int>(0)
    private let seed: (UInt64, UInt64)

    static let shardCount = 64
    static let ways = 4

    struct Entry {
        /// The client's key (never 0; 0 marks a free entry).
        var key: UInt64
        /// Units in thousandths (negative: debt).
        var milli: Int32
        /// Milliseconds since `epoch` when `milli` was last brought up to date (wrapping; 49 days apart look close,
        /// which only ever gives back a full bucket late).
        var stamp: UInt32
    }

    /// One shard's sets: a `calloc`ed block of entries, touched only under the shard's mutex.
    struct Table: ~Copyable {
        let entries: UnsafeMutablePointer<Entry>
        deinit { free(entries) }
    }
    final class Shard: Sendable {
        let table: Mutex<Table>
        init(sets: Int) {
            let raw = calloc(sets * ClientRateLimiter.ways, MemoryLayout<Entry>.stride)!
            table = Mutex(Table(entries: raw.bindMemory(to: Entry.self, capacity: sets * ClientRateLimiter.ways)))
        }
    }

    /// What one admission decided.
    public struct Decision: Sendable, Equatable {
        public var admitted: Bool
        /// Whole units left after this request (0 when refused or in debt).
        public var remaining: Int
        /// Seconds until the client may send again (refused), at least 1.
        public var retryAfter: Int
        /// Seconds until the bucket is full again.
        public var reset: Int
    }

    /// `rate` units a second, `burst` units at most; `capacity` entries (rounded up to a multiple of 256).
    public init(rate: Double, burst: Double, capacity: Int = 1 << 20, now: UInt64 = Syscall.monotonicNanos()) {
        self.rate = max(rate, 0.001)
        self.burst = max(burst, 1)
        let sets = max(1, (capacity + ClientRateLimiter.ways * ClientRateLimiter.shardCount - 1) / (ClientRateLimiter.ways * ClientRateLimiter.shardCount))
        setsPerShard = sets
        self.capacity = sets * ClientRateLimiter.ways * ClientRateLimiter.shardCount
        shards = (0..<ClientRateLimiter.shardCount).map { _ in Shard(sets: sets) }
        epoch = now
        var g = SystemRandomNumberGenerator()
        seed = (g.next(), g.next())
    }

    /// Requests refused so far.
    public var refusals: Int { refused.load(ordering: .relaxed) }

    // MARK: Keys

    /// The key of a caller with credentials: a keyed hash of the `Authorization` value (the value itself is never kept).
    public func key(credentials: String) -> UInt64 {
        var h = Hasher()
        h.combine(seed.0); h.combine(1 as UInt8)
        h.combine(credentials)
        return ClientRateLimiter.nonZero(h.finalize())
    }

    /// The key of an anonymous client: its IPv4 address, or the /64 an IPv6 client is given (one host rotates through
    /// a whole /64 at will).
    public func key(address: ClientAddress) -> UInt64 {
        var h = Hasher()
        h.combine(seed.1); h.combine(2 as UInt8)
        h.combine(address.high)
        if address.isIPv4 || address.high == 0 { h.combine(address.low) }
        return ClientRateLimiter.nonZero(h.finalize())
    }

    private static func nonZero(_ v: Int) -> UInt64 { let k = UInt64(bitPattern: Int64(v)); return k == 0 ? 1 : k }

    // MARK: Buckets

    private var burstMilli: Int64 { Int64(burst * 1000) }

    /// Admits a request of `key` if its bucket holds a unit, and takes `cost` units from it.
    public func admit(_ key: UInt64, cost: Int = 1, now: UInt64 = Syscall.monotonicNanos()) -> Decision {
        let decision = update(key, now: now) { milli in
            if milli < 1000 { return nil }
            return milli - Int64(cost) * 1000
        }
        if !decision.admitted { refused.wrappingAdd(1, ordering: .relaxed) }
        return decision
    }

    /// Takes `units` more from `key`'s bucket (work found to cost more than its admission), into debt if need be.
    public func charge(_ key: UInt64, _ units: Int, now: UInt64 = Syscall.monotonicNanos()) {
        guard units > 0 else { return }
        _ = update(key, now: now) { $0 - Int64(units) * 1000 }
    }

    /// Brings `key`'s bucket up to date and applies `spend` (nil: refused, the bucket unchanged).
    private func update(_ key: UInt64, now: UInt64, _ spend: (Int64) -> Int64?) -> Decision {
        let ms = UInt32(truncatingIfNeeded: (now &- epoch) / 1_000_000)
        let mixed = key &* 0x9E37_79B9_7F4A_7C15
        let shard = Int(mixed >> 58)
        let set = Int((mixed >> 20) % UInt64(setsPerShard))
        let full = burstMilli
        let rate = self.rate
        return shards[shard].table.withLock { table -> Decision in
            let base = table.entries + set * ClientRateLimiter.ways
            var slot = -1
            var current: Int64 = 0
            var victim = 0, victimMilli = Int64.min
            for i in 0..<ClientRateLimiter.ways {
                let e = base[i]
                let m = e.key == 0 ? full : ClientRateLimiter.refilled(e, ms, rate, full)
                if e.key == key { slot = i; current = m; break }
                if m > victimMilli { victim = i; victimMilli = m }
            }
            if slot < 0 { slot = victim; current = full }
            let after = spend(current)
            let kept = max(after ?? current, -full)
            base[slot] = Entry(key: key, milli: Int32(clamping: kept), stamp: ms)
            let perMilliPerSecond = rate * 1000
            let reset = Int(((Double(full - kept)) / perMilliPerSecond).rounded(.up))
            if after == nil {
                let wait = Int((Double(1000 - kept) / perMilliPerSecond).rounded(.up))
                return Decision(admitted: false, remaining: 0, retryAfter: max(1, wait), reset: max(1, reset))
            }
            return Decision(admitted: true, remaining: max(0, Int(kept / 1000)), retryAfter: 0, reset: max(0, reset))
        }
    }

    @inline(__always)
    private static func refilled(_ e: Entry, _ ms: UInt32, _ rate: Double, _ full: Int64) -> Int64 {
        let elapsed = Double(ms &- e.stamp)
        let m = Double(e.milli) + elapsed * rate   // rate units/s = rate thousandths/ms
        return m >= Double(full) ? full : Int64(m)
    }

    // MARK: Answers

    /// `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers): the bucket as a quota of `burst` units over the
    /// seconds it takes to refill.
    public var policyField: String {
        "\"client\";q=\(Int(burst));w=\(max(1, Int((burst / rate).rounded(.up))))"
    }

    /// `RateLimit` for a decision: units remaining and seconds until the bucket is full.
    public static func field(_ d: Decision) -> String { "\"client\";r=\(d.remaining);t=\(d.reset)" }

    /// The 429 problem for a refused request.
    public func refusal(_ d: Decision) -> HTTPResponse {
        var p = Problem(status: 429, slug: "rate-limited",
                        detail: "Too many requests from this client; retry after \(d.retryAfter) s. The limit is \(Int(burst)) units at once, refilled at \(ClientRateLimiter.format(rate)) a second.")
        p.headers.set("Retry-After", String(d.retryAfter))
        p.headers.set("RateLimit-Policy", policyField)
        p.headers.set("RateLimit", ClientRateLimiter.field(d))
        p.headers.set("Cache-Control", "no-store")
        return p.response
    }

    static func format(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }
}

