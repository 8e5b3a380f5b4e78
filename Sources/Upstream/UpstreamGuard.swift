import Foundation
import Synchronization
import LedeBasics
import HTTPCore

/// What stands between Lede and each upstream origin:
/// - **Wikimedia's back-pressure**: after a 429 (or a 503 with `Retry-After`), no call of that kind goes to that
///   origin until the time has passed; callers fail fast with `.rateLimited(retryAfter:)`.
/// - **A circuit breaker per origin**: after `failureThreshold` consecutive failures (timeouts, unreachable,
///   5xx), calls fail fast with `.circuitOpen` for `coolDown` seconds; then one probe call is let through, and
///   its outcome closes the breaker again or reopens it for another cool-down.
/// - **Bounded concurrency per origin** (Wikimedia's API etiquette): at most `maxConcurrent` calls in flight;
///   others wait in order, within their own deadline.
public final class UpstreamGuard: Sendable {
    public struct Settings: Sendable {
        public var failureThreshold = 5
        public var coolDown: Double = 10
        public var maxConcurrent = 16
        /// Bounds on a `Retry-After` Lede honours (a nonsense value must not stop an origin for a day).
        public var maxRetryAfter = 3_600
        /// Used for a 429 that says no `Retry-After`, and for the Action API's `ratelimited`/`maxlag` errors.
        public var defaultRetryAfter = 5
        public init(failureThreshold: Int = 5, coolDown: Double = 10, maxConcurrent: Int = 16) {
            self.failureThreshold = failureThreshold; self.coolDown = coolDown; self.maxConcurrent = maxConcurrent
        }
    }

    public enum BreakerState: Int, Sendable { case closed = 0, open = 1, halfOpen = 2 }

    /// How a call that went through ended, as the breaker counts it.
    public enum Outcome: Sendable {
        /// The origin answered (any status but 5xx, including 429 and 4xx).
        case answered
        /// Timeout, unreachable, reset, or a 5xx without `Retry-After`.
        case failed
        /// The call never reached the origin (its deadline passed in the queue): a probe hands its turn on.
        case abandoned
    }

    /// A call waiting for a slot: granted in order, or timed out by the sweep at `deadline` (uptime ns).
    fileprivate struct Waiter {
        let deadline: UInt64
        let once: Once
    }

    /// One origin's state, and the handle a caller keeps for it (`gate(origin:)`): the common call (breaker closed,
    /// no back-off, a slot free, no waiter) reads and updates only its atomics, so the event loops calling the same
    /// origin never meet on a lock; everything else is under the guard's table lock.
    public final class Gate: @unchecked Sendable {   // @unchecked: the plain fields are touched only under the owning guard's table lock; the atomics anywhere.
        let name: String
        /// Calls holding a slot; only ever raised by a compare-and-exchange below the bound.
        let inFlight = Atomic(0)
        /// Calls queued for a slot (written under the lock).
        let waiting = Atomic(0)
        /// The breaker is closed and no kind is backing off: `admit` has nothing to check (written under the lock).
        let calm = Atomic(true)
        /// Consecutive failures, mirrored for `record`'s fast path (written under the lock).
        let failures = Atomic(0)
        var state = BreakerState.closed
        var consecutiveFailures = 0
        var openUntil = 0.0
        var probeStarted = 0.0
        var retryUntil: [String: Double] = [:]   // by call kind, and for user-bound calls by kind and user (`backOffKey`)
        /// The latest time in `retryUntil`: once past, every wait is over and the table is emptied (so the gate is calm
        /// again, whoever asked to wait and whether or not they called since).
        var retryUntilLatest = 0.0
        fileprivate var waiters: [Waiter] = []
        var opened = 0
        var rejectedRateLimited = 0
        var rejectedCircuitOpen = 0
        var queued = 0
        var queueTimeouts = 0
        init(name: String) { self.name = name }

        /// After a change of `state` or `retryUntil`, under the lock.
        func settle() {
            calm.store(state == .closed && retryUntil.isEmpty, ordering: .releasing)
            failures.store(consecutiveFailures, ordering: .releasing)
        }

        /// Takes a slot if one is free below `limit`.
        func tryTake(_ limit: Int) -> Bool {
            var v = inFlight.load(ordering: .relaxed)
            while v < limit {
                let (done, now) = inFlight.compareExchange(expected: v, desired: v + 1, ordering: .sequentiallyConsistent)
                if done { return true }
                v = now
            }
            return false
        }
    }

    public let settings: Settings
    private let clock: @Sendable () -> Double
    /// Every origin's state, behind one mutex (the classes inside never leave it but as handles).
    private struct Table {
        var origins: [String: Gate] = [:]
        /// When the one pending sweep of timed-out waiters runs (uptime ns); nil when none is scheduled. One timer
        /// for all waiters, not one per waiter: under load half the calls may wait, and Dispatch timers are not free.
        var sweepAt: UInt64?

        mutating func origin(_ name: String) -> Gate {
            if let o = origins[name] { return o }
            let o = Gate(name: name); origins[name] = o; return o
        }
    }
    private let table = Mutex(Table())

    /// `clock`: wall-clock seconds since 1970 (HTTP-dates in `Retry-After` are absolute).
    public init(settings: Settings = Settings(), clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.settings = settings
        self.clock = clock
    }

    /// The handle of `origin`'s state, made on first use: kept by a caller, it spares each call a lookup.
    public func gate(origin name: String) -> Gate { table.withLock { $0.origin(name) } }

    /// Whether a call of `kind` may go to `origin` now. Throws `.rateLimited` or `.circuitOpen` when not.
    /// Returns true when this call is the breaker's probe.
    /// `user`: the credentials of a user-bound call — Wikimedia's quotas on those are the user's, so a `Retry-After`
    /// on one user's call stops that user's calls of that kind only, and a public call's stops public calls only.
    public func admit(origin name: String, kind: String, user: String? = nil) throws -> Bool { try admit(gate(origin: name), kind: kind, user: user) }

    public func admit(_ o: Gate, kind: String, user: String? = nil) throws -> Bool {
        if o.calm.load(ordering: .acquiring) { return false }
        let now = clock()
        let kind = Self.backOffKey(kind, user: user)
        return try table.withLock { (_: inout Table) throws(UpstreamError) -> Bool in
        if !o.retryUntil.isEmpty && o.retryUntilLatest <= now {
            o.retryUntil.removeAll()
            o.settle()
        }
        if let until = o.retryUntil[kind] {
            if until > now {
                o.rejectedRateLimited += 1
                throw UpstreamError.rateLimited(retryAfter: max(1, Int((until - now).rounded(.up))))
            }
            o.retryUntil[kind] = nil
            o.settle()
        }
        switch o.state {
        case .closed:
            return false
        case .open:
            if o.openUntil > now {
                o.rejectedCircuitOpen += 1
                throw UpstreamError.circuitOpen(retryAfter: max(1, Int((o.openUntil - now).rounded(.up))))
            }
            o.state = .halfOpen; o.probeStarted = now
            return true
        case .halfOpen:
            // One probe at a time; a probe that never reported (its caller vanished) is replaced after a while.
            if now - o.probeStarted > max(30, settings.coolDown) { o.probeStarted = now; return true }
            o.rejectedCircuitOpen += 1
            throw UpstreamError.circuitOpen(retryAfter: 1)
        }
        }
    }

    /// Records the outcome of a call that `admit` let through.
    public func record(origin name: String, outcome: Outcome, probe: Bool) { record(gate(origin: name), outcome: outcome, probe: probe) }

    public func record(_ o: Gate, outcome: Outcome, probe: Bool) {
        switch outcome {
        case .answered where !probe && o.calm.load(ordering: .acquiring) && o.failures.load(ordering: .acquiring) == 0: return
        case .abandoned where !probe: return
        default: break
        }
        let now = clock()
        table.withLock { _ in
        switch outcome {
        case .abandoned:
            if probe && o.state == .halfOpen { o.state = .open; o.openUntil = now }
        case .answered:
            o.consecutiveFailures = 0
            if o.state != .closed && (probe || o.state == .halfOpen) { o.state = .closed }
        case .failed:
            o.consecutiveFailures += 1
            if probe || (o.state == .closed && o.consecutiveFailures >= settings.failureThreshold) {
                if o.state != .open { o.opened += 1 }
                o.state = .open; o.openUntil = now + settings.coolDown
            }
        }
        o.settle()
        }
    }

    /// Wikimedia said to wait: no call of `kind` to `origin` before `seconds` have passed (bounded) — for a user-bound
    /// call (`user`: its credentials), no call of that kind by that user.
    public func backOff(origin name: String, kind: String, user: String? = nil, seconds: Int) -> Int {
        let s = min(max(1, seconds), settings.maxRetryAfter)
        let now = clock()
        let until = now + Double(s)
        let key = Self.backOffKey(kind, user: user)
        table.withLock { t in
            let o = t.origin(name)
            if o.retryUntil.count >= Self.maxBackOffs && o.retryUntil[key] == nil {
                // Many users asked to wait at once: forget the waits that are over; past the bound a user's wait is
                // not remembered (that user's next call asks Wikimedia again), so the table stays bounded.
                o.retryUntil = o.retryUntil.filter { $0.value > now }
                guard o.retryUntil.count < Self.maxBackOffs else { return }
            }
            o.retryUntil[key] = max(o.retryUntil[key] ?? 0, until)
            o.retryUntilLatest = max(o.retryUntilLatest, until)
            o.settle()
        }
        return s
    }

    /// Back-offs remembered per origin, at most (users' and public kinds together): about 100 bytes each.
    static let maxBackOffs = 10_000

    /// What a back-off is kept under: the call kind, and for a user-bound call a digest of its credentials (never the
    /// credentials themselves: SipHash with this process's random key, 128 bits).
    static func backOffKey(_ kind: String, user: String?) -> String {
        guard let user else { return kind }
        return kind + "@" + Digest.hex128(user)
    }

    /// Reads `Retry-After` (delta-seconds or an HTTP-date, RFC 9110 §10.2.3) into seconds from now.
    public func retryAfterSeconds(_ value: String?) -> Int? {
        guard let v = value?.trimmingCharacters(in: .whitespaces), !v.isEmpty else { return nil }
        if v.utf8.allSatisfy({ (48...57).contains($0) }) { return v.utf8.count > 9 ? settings.maxRetryAfter : Int(v) }
        guard let date = HTTPDate.parse(v) else { return nil }
        return max(0, Int((date - clock()).rounded(.up)))
    }

    // MARK: - Concurrency
    //
    // A slot is taken by raising `inFlight` below the bound with a compare-and-exchange, on the fast path or under
    // the lock; a queued caller is counted in `waiting` before it looks for a free slot once more (under the lock),
    // and a release lowers `inFlight` before it looks at `waiting` (sequentially consistent both): one of the two
    // always sees the other, so a slot freed while a caller queues is never left unused. Callers queue in order;
    // a newcomer takes a free slot only when nobody waits.

    /// Takes one of the origin's call slots, waiting in order for at most `timeout` seconds (then `.timeout`).
    public func acquire(origin name: String, timeout: Double) async throws { try await acquire(gate(origin: name), timeout: timeout) }

    /// A slot at once when one is free and nobody is queued (then no await, no frame): the common case.
    @inline(__always)
    public func tryAcquire(_ o: Gate) -> Bool {
        o.waiting.load(ordering: .sequentiallyConsistent) == 0 && o.tryTake(settings.maxConcurrent)
    }

    public func acquire(_ o: Gate, timeout: Double) async throws {
        if tryAcquire(o) { return }
        let deadline = DispatchTime.now().uptimeNanoseconds &+ UInt64(max(0, timeout) * 1e9)
        let granted: Bool = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let once = Once(c)
            let (ready, schedule) = table.withLock { t -> ([Once], Bool) in
                o.queued += 1
                o.waiters.append(Waiter(deadline: deadline, once: once))
                o.waiting.add(1, ordering: .sequentiallyConsistent)
                let ready = handOff(o)
                let schedule = o.waiters.isEmpty ? false : (t.sweepAt.map { deadline < $0 } ?? true)
                if schedule { t.sweepAt = deadline }
                return (ready, schedule)
            }
            for w in ready { w.resume(true) }
            if schedule { scheduleSweep(at: deadline) }
        }
        if !granted { throw UpstreamError.timeout }
    }

    /// Under the lock: gives free slots to the longest waiters.
    private func handOff(_ o: Gate) -> [Once] {
        var ready: [Once] = []
        while !o.waiters.isEmpty, o.tryTake(settings.maxConcurrent) {
            ready.append(o.waiters.removeFirst().once)
            o.waiting.subtract(1, ordering: .sequentiallyConsistent)
        }
        return ready
    }

    /// Gives the slot back, to the longest waiter if there is one.
    public func release(origin name: String) { release(gate(origin: name)) }

    public func release(_ o: Gate) {
        o.inFlight.subtract(1, ordering: .sequentiallyConsistent)
        if o.waiting.load(ordering: .sequentiallyConsistent) == 0 { return }
        // Someone queued: the freed slot goes to the longest waiter (a newcomer seeing `waiting` queues behind it).
        for w in table.withLock({ _ in handOff(o) }) { w.resume(true) }
    }

    private func scheduleSweep(at deadline: UInt64) {
        DispatchQueue.global().asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline)) { [self] in sweep() }
    }

    /// Times out every waiter whose deadline has passed, and schedules the next sweep for the earliest left.
    private func sweep() {
        let now = DispatchTime.now().uptimeNanoseconds
        let (expired, next) = table.withLock { t -> ([Once], UInt64?) in
            var expired: [Once] = []
            var earliest: UInt64?
            for o in t.origins.values where !o.waiters.isEmpty {
                let before = o.waiters.count
                o.waiters.removeAll { w in
                    if w.deadline <= now { expired.append(w.once); o.queueTimeouts += 1; return true }
                    earliest = min(earliest ?? w.deadline, w.deadline)
                    return false
                }
                o.waiting.subtract(before - o.waiters.count, ordering: .sequentiallyConsistent)
            }
            // Another sweep may be pending for sooner; this one reschedules only when none is.
            var next: UInt64?
            if let at = t.sweepAt, at > now {
                if let e = earliest, e < at { t.sweepAt = e; next = e }
            } else {
                t.sweepAt = earliest; next = earliest
            }
            return (expired, next)
        }
        for once in expired { once.resume(false) }
        if let next { scheduleSweep(at: next) }
    }

    /// Resumes a continuation at most once (the grant and the timer race).
    fileprivate final class Once: Sendable {
        private let c: Mutex<CheckedContinuation<Bool, Never>?>
        init(_ c: CheckedContinuation<Bool, Never>) { self.c = Mutex(c) }
        func resume(_ value: Bool) {
            let taken = c.withLock { c -> CheckedContinuation<Bool, Never>? in defer { c = nil }; return c }
            taken?.resume(returning: value)
        }
    }

    // MARK: - Inspection and metrics

    public func state(origin name: String) -> BreakerState {
        // Reported as open until a probe goes, even past `openUntil`.
        table.withLock { t in t.origins[name]?.state ?? .closed }
    }

    public func inFlight(origin name: String) -> Int {
        table.withLock { $0.origins[name]?.inFlight.load(ordering: .relaxed) ?? 0 }
    }

    public func render() -> String {
        let now = clock()
        return table.withLock { t in
        let rows = t.origins.sorted { $0.key < $1.key }.map { (name: $0.key, o: $0.value) }
        var out = "# HELP lede_upstream_circuit_state Circuit breaker per upstream origin: 0 closed, 1 open, 2 half-open (probing).\n# TYPE lede_upstream_circuit_state gauge\n"
        for r in rows { out += "lede_upstream_circuit_state{origin=\"\(r.name)\"} \(r.o.state.rawValue)\n" }
        out += "# HELP lede_upstream_circuit_opened_total Times the breaker opened after consecutive failures.\n# TYPE lede_upstream_circuit_opened_total counter\n"
        for r in rows { out += "lede_upstream_circuit_opened_total{origin=\"\(r.name)\"} \(r.o.opened)\n" }
        out += "# HELP lede_upstream_rejected_total Calls not sent: Wikimedia's Retry-After still running, or the breaker open.\n# TYPE lede_upstream_rejected_total counter\n"
        for r in rows {
            out += "lede_upstream_rejected_total{origin=\"\(r.name)\",reason=\"rate_limited\"} \(r.o.rejectedRateLimited)\n"
            out += "lede_upstream_rejected_total{origin=\"\(r.name)\",reason=\"circuit_open\"} \(r.o.rejectedCircuitOpen)\n"
        }
        out += "# HELP lede_upstream_backoff_kinds Call kinds currently waiting out a Retry-After, per origin.\n# TYPE lede_upstream_backoff_kinds gauge\n"
        for r in rows { out += "lede_upstream_backoff_kinds{origin=\"\(r.name)\"} \(r.o.retryUntil.values.filter { $0 > now }.count)\n" }
        out += "# HELP lede_upstream_in_flight Calls in flight per origin (bounded by the per-origin concurrency).\n# TYPE lede_upstream_in_flight gauge\n"
        for r in rows { out += "lede_upstream_in_flight{origin=\"\(r.name)\"} \(r.o.inFlight.load(ordering: .relaxed))\n" }
        out += "# HELP lede_upstream_queued_total Calls that waited for a free slot of their origin.\n# TYPE lede_upstream_queued_total counter\n"
        for r in rows { out += "lede_upstream_queued_total{origin=\"\(r.name)\"} \(r.o.queued)\n" }
        out += "# HELP lede_upstream_queue_timeouts_total Calls whose deadline passed while waiting for a slot.\n# TYPE lede_upstream_queue_timeouts_total counter\n"
        for r in rows { out += "lede_upstream_queue_timeouts_total{origin=\"\(r.name)\"} \(r.o.queueTimeouts)\n" }
        return out
        }
    }
}

