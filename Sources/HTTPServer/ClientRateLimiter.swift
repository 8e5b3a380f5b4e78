import EventLoops
import Glibc
import Synchronization

/// A token bucket per client, in a table of fixed size: `rate` units a second up to `burst`. A request is admitted
/// while its client has at least one unit; it then pays what it costs (a request answered from memory 1, one that works
/// off the loop its route's cost), and a client may run into debt down to `-burst` — the bucket refills the debt before
/// it admits again. Constant time a request: one set of four entries in a 16-byte-an-entry table (a 64-byte cache
/// line), under one of 64 spin locks (held for a few dozen instructions; no retain, no mutex object per shard).
///
/// Memory is bounded by `capacity` entries of 16 bytes (a million clients: 16 MiB, reserved with `calloc` and so
/// resident only as sets are touched). An idle client needs no entry — a bucket that has refilled to `burst` is the
/// same as no bucket — so a new client takes an entry whose bucket is full, or else the one of its set with the most
/// units: under more active clients than the table holds, the least spent are forgotten first, never the indebted.
public final class ClientRateLimiter: @unchecked Sendable {  // invariant: a shard's entries are read and written only while its lock is held
    public let rate: Double
    public let burst: Double
    public let capacity: Int
    /// The policy's name in `RateLimit-Policy` and `RateLimit` ("client", "address").
    public let name: String
    /// Every shard's sets, one after another (shard `i`'s at `i * setsPerShard * ways`).
    private let entries: UnsafeMutablePointer<Entry>
    private let shards = SpinShards()
    private let setsPerShard: Int
    private let setMask: UInt64
    /// `burst` in thousandths.
    private let full: Int64
    private let epoch: UInt64
    private let refused = Atomic<Int>(0)
    private let seed: (UInt64, UInt64)

    static let shardCount = SpinShards.count
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

    deinit { free(entries) }

    @inline(__always)
    private func withShard<R>(_ i: Int, _ body: (UnsafeMutablePointer<Entry>) -> R) -> R {
        let table = entries + i &* setsPerShard &* ClientRateLimiter.ways
        return shards.locked(i) { body(table) }
    }

    /// What one admission decided: whether it was admitted, and the bucket after it (for the refusal's fields).
    public struct Decision: Sendable, Equatable {
        public var admitted: Bool
        /// The bucket after the request, in thousandths of a unit (negative: debt).
        let milli: Int64
        let rate: Double
        let full: Int64
        /// Whole units left after this request (0 when refused or in debt).
        public var remaining: Int { admitted ? max(0, Int(milli / 1000)) : 0 }
        /// Seconds until the client may send again (refused), at least 1.
        public var retryAfter: Int { max(1, Int((Double(1000 - milli) / (rate * 1000)).rounded(.up))) }
        /// Seconds until the bucket is full again.
        public var reset: Int { max(admitted ? 0 : 1, Int((Double(full - milli) / (rate * 1000)).rounded(.up))) }
    }

    /// `rate` units a second, `burst` units at most; `capacity` entries (rounded up to a power of two sets in each of
    /// the 64 shards).
    public init(rate: Double, burst: Double, capacity: Int = 1 << 20, name: String = "client", now: UInt64 = Syscall.monotonicNanos()) {
        self.name = name
        self.rate = max(rate, 0.001)
        self.burst = max(burst, 1)
        full = Int64(self.burst * 1000)
        var sets = 1
        while sets * ClientRateLimiter.ways * ClientRateLimiter.shardCount < capacity { sets *= 2 }
        setMask = UInt64(sets - 1)
        setsPerShard = sets
        self.capacity = sets * ClientRateLimiter.ways * ClientRateLimiter.shardCount
        entries = calloc(self.capacity, MemoryLayout<Entry>.stride)!.bindMemory(to: Entry.self, capacity: self.capacity)
        epoch = now
        var g = SystemRandomNumberGenerator()
        seed = (g.next(), g.next())
    }

    /// Requests refused so far.
    public var refusals: Int { refused.load(ordering: .relaxed) }

    // MARK: Keys

    /// The rate-limit stage's key for a request: its bearer token's when it sends one of valid form, else its
    /// address's (an `Authorization` that is no valid bearer token is no budget of its own).
    @inline(__always)
    public func key(_ credentials: Credentials, address: ClientAddress) -> UInt64 {
        if case .bearer(let token) = credentials { return key(credentials: token) }
        return key(address: address)
    }

    /// The key of a caller with credentials: a keyed hash of the `Authorization` value (the value itself is never kept).
    public func key(credentials: String) -> UInt64 {
        var h = Hasher()
        h.combine(seed.0); h.combine(1 as UInt8)
        h.combine(credentials)
        return ClientRateLimiter.nonZero(h.finalize())
    }

    /// The key of an anonymous client: its IPv4 address, or the /64 an IPv6 client is given (one host rotates through
    /// a whole /64 at will).
    /// A keyed mix rather than SipHash: an address is not chosen by its client as freely as credentials are, and this
    /// runs on every anonymous request (SipHash cost the warm feed ~3 % of its rate).
    @inline(__always)
    public func key(address: ClientAddress) -> UInt64 {
        let low = address.isIPv4 || address.high == 0 ? address.low : 0
        var x = (address.high ^ seed.1) &* 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 29) ^ low ^ seed.0) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 32)) &* 0x94D0_49BB_1331_11EB
        x ^= x >> 31
        return x == 0 ? 1 : x
    }

    private static func nonZero(_ v: Int) -> UInt64 { let k = UInt64(bitPattern: Int64(v)); return k == 0 ? 1 : k }

    // MARK: Buckets

    /// Admits a request of `key` if its bucket holds a unit, and takes `cost` units from it.
    public func admit(_ key: UInt64, cost: Int = 1, now: UInt64 = Syscall.monotonicNanos()) -> Decision {
        let price = Int64(cost) * 1000
        let (admitted, milli) = update(key, now: now) { $0 >= 1000 ? ($0 - price, true) : ($0, false) }
        if !admitted { refused.wrappingAdd(1, ordering: .relaxed) }
        return Decision(admitted: admitted, milli: milli, rate: rate, full: full)
    }

    /// Takes `units` more from `key`'s bucket (work found to cost more than its admission), into debt if need be.
    public func charge(_ key: UInt64, _ units: Int, now: UInt64 = Syscall.monotonicNanos()) {
        guard units > 0 else { return }
        let price = Int64(units) * 1000
        _ = update(key, now: now) { ($0 - price, true) }
    }

    /// Brings `key`'s bucket up to date, applies `spend` (the new balance, and whether it was admitted), keeps the
    /// balance no lower than `-burst`. Returns what `spend` said and the balance kept.
    @inline(__always)
    private func update(_ key: UInt64, now: UInt64, _ spend: (Int64) -> (Int64, Bool)) -> (Bool, Int64) {
        let ms = UInt32(truncatingIfNeeded: (now &- epoch) / 1_000_000)
        let mixed = key &* 0x9E37_79B9_7F4A_7C15
        let shard = Int(truncatingIfNeeded: mixed >> 58)
        let set = Int(truncatingIfNeeded: (mixed >> 20) & setMask)
        let full = self.full, rate = self.rate
        return withShard(shard) { table -> (Bool, Int64) in
            let base = table + set &* ClientRateLimiter.ways
            var slot = -1
            var current = full
            var victim = 0, victimMilli = Int64.min
            for i in 0..<ClientRateLimiter.ways {
                let e = base[i]
                if e.key == key { slot = i; current = ClientRateLimiter.refilled(e, ms, rate, full); break }
                let m = e.key == 0 ? full : ClientRateLimiter.refilled(e, ms, rate, full)
                if m > victimMilli { victim = i; victimMilli = m }
            }
            if slot < 0 { slot = victim }
            let (after, admitted) = spend(current)
            let kept = max(after, -full)
            base[slot] = Entry(key: key, milli: Int32(clamping: kept), stamp: ms)
            return (admitted, kept)
        }
    }

    @inline(__always)
    private static func refilled(_ e: Entry, _ ms: UInt32, _ rate: Double, _ full: Int64) -> Int64 {
        let elapsed = ms &- e.stamp
        if elapsed == 0 { return Int64(e.milli) }
        let m = Double(e.milli) + Double(elapsed) * rate   // rate units/s = rate thousandths/ms
        return m >= Double(full) ? full : Int64(m)
    }

    // MARK: Answers

    /// `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers): the bucket as a quota of `burst` units over the
    /// seconds it takes to refill.
    public var policyField: String {
        "\"\(name)\";q=\(Int(burst));w=\(max(1, Int((burst / rate).rounded(.up))))"
    }

    /// `RateLimit` for a decision: units remaining and seconds until the bucket is full.
    public func field(_ d: Decision) -> String { "\"\(name)\";r=\(d.remaining);t=\(d.reset)" }

    /// The 429 problem for a refused request.
    public func refusal(_ d: Decision) -> HTTPResponse {
        var p = Problem(status: 429, slug: "rate-limited", .rateLimited, String(d.retryAfter), String(Int(burst)), ClientRateLimiter.format(rate))
        p.headers.set("Retry-After", String(d.retryAfter))
        p.headers.set("RateLimit-Policy", policyField)
        p.headers.set("RateLimit", field(d))
        p.headers.set("Cache-Control", "no-store")
        return p.response
    }

    static func format(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }
}

