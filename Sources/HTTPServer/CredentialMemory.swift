import EventLoops
import Glibc

/// Asks whoever credentials are meant for whether it accepts them (Lede: one `meta=userinfo` call to Wikimedia).
/// `done` is told once: true accepted, false refused, nil when it could not tell (the check failed).
public protocol CredentialVerifier: Sendable {
    func verify(_ credentials: String, then done: @escaping @Sendable (Bool?) -> Void)
}

/// What the server has learned of bearer tokens, by their keyed digest (the token itself is never kept): accepted by
/// whoever they are for (a budget of their own, for `remember` seconds), refused (for `forgetRefused` seconds), or
/// being checked. A table of fixed size like `ClientRateLimiter`'s: `capacity` entries of 16 bytes in sets of four
/// (a million tokens: 16 MiB, resident as sets are touched). A new digest takes a free or expired entry of its set,
/// else the one that expires first among those not accepted, and only when all four are accepted tokens the one of
/// them that expires first: tokens nobody vouched for cannot push out the ones Wikimedia accepted.
public final class CredentialMemory: @unchecked Sendable {  // invariant: a shard's entries are read and written only while its lock is held
    public enum State: UInt32, Sendable { case unknown = 0, checking, accepted, refused }

    struct Entry {
        var key: UInt64
        /// Milliseconds since `epoch` until which `state` holds (wrapping; compared as a signed distance).
        var until: UInt32
        var state: UInt32
    }

    public let capacity: Int
    /// Milliseconds an accepted token is remembered, a refused one, a check in flight.
    let acceptedFor: UInt32, refusedFor: UInt32, checkingFor: UInt32
    private let entries: UnsafeMutablePointer<Entry>
    private let shards = SpinShards()
    private let setsPerShard: Int
    private let setMask: UInt64
    private let epoch: UInt64
    static let ways = 4

    /// `remember` seconds for an accepted token, `forgetRefused` for a refused one; a check not answered within
    /// `checkTimeout` may be started again.
    public init(capacity: Int = 1 << 20, remember: Double = 3600, forgetRefused: Double = 600, checkTimeout: Double = 30,
                now: UInt64 = Syscall.monotonicNanos()) {
        func ms(_ s: Double) -> UInt32 { UInt32(clamping: Int(max(1, min(s, 86_400 * 20)) * 1000)) }
        acceptedFor = ms(remember); refusedFor = ms(forgetRefused); checkingFor = ms(checkTimeout)
        var sets = 1
        while sets * CredentialMemory.ways * SpinShards.count < capacity { sets *= 2 }
        setsPerShard = sets
        setMask = UInt64(sets - 1)
        self.capacity = sets * CredentialMemory.ways * SpinShards.count
        entries = calloc(self.capacity, MemoryLayout<Entry>.stride)!.bindMemory(to: Entry.self, capacity: self.capacity)
        epoch = now
    }

    deinit { free(entries) }

    @inline(__always)
    private func ms(_ now: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: (now &- epoch) / 1_000_000) }

    @inline(__always)
    private static func live(_ e: Entry, _ ms: UInt32) -> Bool { e.key != 0 && Int32(bitPattern: e.until &- ms) > 0 }

    /// Runs `body` on `key`'s set (four entries) with its shard locked.
    @inline(__always)
    private func withSet<R>(_ key: UInt64, _ body: (UnsafeMutablePointer<Entry>) -> R) -> R {
        let mixed = key &* 0x9E37_79B9_7F4A_7C15
        let shard = Int(truncatingIfNeeded: mixed >> 58)
        let set = Int(truncatingIfNeeded: (mixed >> 20) & setMask)
        let base = entries + (shard &* setsPerShard &+ set) &* CredentialMemory.ways
        return shards.locked(shard) { body(base) }
    }

    /// What is known of `key` now.
    public func state(_ key: UInt64, now: UInt64 = Syscall.monotonicNanos()) -> State {
        let t = ms(now)
        return withSet(key) { base in
            for i in 0..<CredentialMemory.ways where base[i].key == key {
                return CredentialMemory.live(base[i], t) ? State(rawValue: base[i].state) ?? .unknown : .unknown
            }
            return .unknown
        }
    }

    /// Marks `key` as being checked when nothing is known of it; true when the caller is to start the check.
    public func beginCheck(_ key: UInt64, now: UInt64 = Syscall.monotonicNanos()) -> Bool {
        let t = ms(now)
        return withSet(key) { base in
            for i in 0..<CredentialMemory.ways where base[i].key == key && CredentialMemory.live(base[i], t) { return false }
            put(base, Entry(key: key, until: t &+ checkingFor, state: State.checking.rawValue), t)
            return true
        }
    }

    /// Records what whoever the token is for said of it: accepted, refused, or nil (no answer: forgotten, so that a
    /// later request may check again).
    public func record(_ key: UInt64, accepted: Bool?, now: UInt64 = Syscall.monotonicNanos()) {
        let t = ms(now)
        withSet(key) { base in
            guard let accepted else {
                for i in 0..<CredentialMemory.ways where base[i].key == key { base[i] = Entry(key: 0, until: 0, state: 0) }
                return
            }
            put(base, Entry(key: key, until: t &+ (accepted ? acceptedFor : refusedFor),
                            state: (accepted ? State.accepted : State.refused).rawValue), t)
        }
    }

    /// Writes `entry` over its key's entry, else a free or expired one, else the first to expire of those not
    /// accepted, else the first to expire.
    @inline(__always)
    private func put(_ base: UnsafeMutablePointer<Entry>, _ entry: Entry, _ t: UInt32) {
        var slot = -1, rank = Int.max
        for i in 0..<CredentialMemory.ways {
            let e = base[i]
            if e.key == entry.key { slot = i; break }
            let left = Int(Int32(bitPattern: e.until &- t))
            let r = !CredentialMemory.live(e, t) ? Int.min : (e.state == State.accepted.rawValue ? (1 << 40) + left : left)
            if r < rank { rank = r; slot = i }
        }
        base[slot] = entry
    }
}

/// Every request's budget: a bearer token Wikimedia has accepted (`CredentialMemory`) is a client of its own with
/// `clients.rate`/`burst`; everything else — no `Authorization`, a malformed one, a token not yet accepted or refused
/// — is charged to its address (IPv6 by /64) with `clients.addressRate`/`addressBurst`. A token nothing is known of
/// is checked once (`clients.verifier`), the check charged to the address; a route that sends the token on and
/// answers 2xx vouches for it, a 401 refuses it.
final class ClientBudgets: Sendable {
    let identities: ClientRateLimiter
    let addresses: ClientRateLimiter
    let memory: CredentialMemory
    let verifier: (any CredentialVerifier)?
    /// What a check costs the address: a call to Wikimedia, as any work off the loop.
    static let checkCost = 4

    init(_ clients: ServerConfiguration.Clients) {
        identities = ClientRateLimiter(rate: clients.rate, burst: clients.burst, capacity: clients.capacity, name: "client")
        addresses = ClientRateLimiter(rate: clients.addressRate ?? clients.rate, burst: clients.addressBurst ?? clients.burst,
                                      capacity: clients.capacity, name: "address")
        memory = CredentialMemory(capacity: clients.capacity, remember: clients.remember, forgetRefused: clients.forgetRefused)
        verifier = clients.verifier
    }

    /// Requests refused so far, both budgets.
    var refusals: Int { identities.refusals + addresses.refusals }

    /// Whose budget a request is charged to.
    struct Budget {
        /// The bucket table: `identities` or `addresses` (unretained: the budgets outlive every connection).
        let limiter: Unmanaged<ClientRateLimiter>
        let key: UInt64
        /// The digest of its bearer token (0: none); charged to the address unless `accepted`.
        let token: UInt64
        let state: CredentialMemory.State
    }

    @inline(__always)
    func budget(_ credentials: Credentials, address: ClientAddress, now: UInt64) -> Budget {
        if case .bearer(let value) = credentials {
            let token = identities.key(credentials: value)
            let state = memory.state(token, now: now)
            if state == .accepted { return Budget(limiter: .passUnretained(identities), key: token, token: token, state: state) }
            return Budget(limiter: .passUnretained(addresses), key: addresses.key(address: address), token: token, state: state)
        }
        return Budget(limiter: .passUnretained(addresses), key: addresses.key(address: address), token: 0, state: .unknown)
    }

    /// Starts the check of a token nothing is known of (at most one at a time), charging the address for it.
    func check(_ budget: Budget, credentials: Credentials, now: UInt64) {
        guard budget.state == .unknown, budget.token != 0, let verifier, case .bearer(let value) = credentials,
              memory.beginCheck(budget.token, now: now) else { return }
        addresses.charge(budget.key, ClientBudgets.checkCost, now: now)
        let memory = self.memory, token = budget.token
        verifier.verify(value) { accepted in memory.record(token, accepted: accepted) }
    }

    /// What an answer says of the token it was sent with: a 401 refuses it; a 2xx from a route that sent it on
    /// (`Router.Route.vouches`) accepts it.
    @inline(__always)
    func learn(token: UInt64, status: Int, vouches: Bool, now: UInt64) {
        if status == 401 { memory.record(token, accepted: false, now: now) }
        else if vouches && status >= 200 && status < 300 { memory.record(token, accepted: true, now: now) }
    }
}
