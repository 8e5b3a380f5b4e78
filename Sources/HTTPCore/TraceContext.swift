import Glibc
import Synchronization

/// W3C Trace Context (https://www.w3.org/TR/trace-context/) for one request: the trace it belongs to, this server's span
/// for it, and what the caller said. A `traceparent` that comes in well-formed is kept (its trace id, its flags, and
/// `tracestate` with it); one that is malformed — another version than `00` not readable as one, an all-zero trace or
/// parent id, a wrong length, anything not lowercase hex — is replaced by a fresh trace, never passed on, and its
/// `tracestate` is dropped. Each call the request makes upstream carries a child `traceparent` (the same trace, a new
/// span id whose parent is this request's span). Nothing is sampled or exported here: the access log line and every
/// problem carry the trace id, and an operator's collector reads the logs.
public struct TraceContext: Sendable, Equatable {
    /// The trace id, as two 64-bit halves (never both zero).
    public let traceHigh: UInt64, traceLow: UInt64
    /// This server's span for the request (never zero).
    public let spanID: UInt64
    /// The caller's span, when a valid `traceparent` came.
    public let parentID: UInt64?
    /// The trace flags (bit 0: sampled), as they came or 0 for a fresh trace.
    public let flags: UInt8
    /// `tracestate`, kept as it came (bounded, printable) along with a valid `traceparent`.
    public let state: String?

    /// The trace of the request being handled: the task's (an `.async` handler's work, a stream's producer and the tasks
    /// they start), else the one the event loop is dispatching on this thread (a handler's synchronous part, a
    /// `.callback` handler's start). Nil elsewhere (background refreshes and polls belong to no request).
    /// Outside any task the task-local is not read: Lede binds it only in tasks (`$task.withValue` is always awaited), and
    /// reading it is a generic call and a copy through the type's metadata, on every upstream call made from a loop.
    /// Inside a loop's dispatch (`whileDispatching`) no task runs: the thread's trace is read with no look for a task
    /// (a runtime call and a generic check of its answer, a few hundred instructions on every upstream call).
    public static var current: TraceContext? {
        let slot = ThreadSlot.mine
        if slot.dispatching > 0 || withUnsafeCurrentTask(body: { $0 == nil }) { return slot.trace }
        return task ?? slot.trace
    }

    /// The trace a task and its children carry.
    @TaskLocal public static var task: TraceContext?

    /// Runs `body` with `trace` as the thread's current one (an event loop's dispatch: no task, and no allocation, which
    /// binding a task-local outside a task costs twice per request).
    public static func whileDispatching<T>(_ trace: TraceContext?, _ body: () throws -> T) rethrows -> T {
        let slot = ThreadSlot.mine
        let outer = slot.trace
        slot.trace = trace
        slot.dispatching += 1
        defer { slot.trace = outer; slot.dispatching -= 1 }
        return try body()
    }

    /// A thread's current trace outside any task.
    final class ThreadSlot: @unchecked Sendable {   // @unchecked: each slot is read and written only by the thread it belongs to.
        var trace: TraceContext?
        /// How many `whileDispatching` calls this thread is inside (a dispatch is synchronous: no task runs in it).
        var dispatching = 0
        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            pthread_key_create(&key) { if let p = $0 { Unmanaged<ThreadSlot>.fromOpaque(p).release() } }
            return key
        }()
        static var mine: ThreadSlot {
            if let p = pthread_getspecific(key) { return Unmanaged<ThreadSlot>.fromOpaque(p).takeUnretainedValue() }
            let slot = ThreadSlot()
            pthread_setspecific(key, Unmanaged.passRetained(slot).toOpaque())
            return slot
        }
    }

    public init(traceHigh: UInt64, traceLow: UInt64, spanID: UInt64, parentID: UInt64?, flags: UInt8, state: String?) {
        self.traceHigh = traceHigh; self.traceLow = traceLow; self.spanID = spanID
        self.parentID = parentID; self.flags = flags; self.state = state
    }

    /// The most of `tracestate` kept (the specification's 32 members of at most 256 bytes fit well under it).
    static let maxState = 512

    /// The context for a request that sent `traceparent` / `tracestate` (or did not), with `span` as this server's
    /// span id and `fresh` to make a trace id when none is kept.
    public static func make(traceparent: String?, tracestate: String?, span: UInt64, fresh: () -> (UInt64, UInt64)) -> TraceContext {
        let span = span == 0 ? 1 : span
        if let raw = traceparent, let parsed = parse(raw) {
            return TraceContext(traceHigh: parsed.high, traceLow: parsed.low, spanID: span, parentID: parsed.parent, flags: parsed.flags,
                                state: tracestate.flatMap(validState))
        }
        var (high, low) = fresh()
        if high == 0 && low == 0 { low = 1 }
        return TraceContext(traceHigh: high, traceLow: low, spanID: span, parentID: nil, flags: 0, state: nil)
    }

    /// A fresh trace (no `traceparent` came): `span` this server's span, `high`/`low` the trace id (zeros made one).
    @inlinable
    public static func fresh(span: UInt64, high: UInt64, low: UInt64) -> TraceContext {
        TraceContext(traceHigh: high, traceLow: high == 0 && low == 0 ? 1 : low, spanID: span == 0 ? 1 : span, parentID: nil, flags: 0, state: nil)
    }

    /// `version-traceid-parentid-flags` read by the specification's rules: version `00` is exactly 55 characters; a
    /// later version (`01`–`fe`) is read by its first four fields and must be 55 characters or go on with `-`;
    /// `ff` is invalid; ids are lowercase hex and not all zero.
    static func parse(_ raw: String) -> (high: UInt64, low: UInt64, parent: UInt64, flags: UInt8)? {
        var raw = raw
        return raw.withUTF8 { u -> (UInt64, UInt64, UInt64, UInt8)? in
            var start = 0, end = u.count
            while start < end, u[start] == 32 || u[start] == 9 { start += 1 }
            while end > start, u[end - 1] == 32 || u[end - 1] == 9 { end -= 1 }
            let t = UnsafeBufferPointer(rebasing: u[start..<end])
            guard t.count >= 55, t[2] == 45, t[35] == 45, t[52] == 45,
                  let version = hex(t, 0, 2), version != 0xff else { return nil }
            if version == 0 { guard t.count == 55 else { return nil } } else if t.count > 55 { guard t[55] == 45 else { return nil } }
            guard let high = hex(t, 3, 16), let low = hex(t, 19, 16), high != 0 || low != 0,
                  let parent = hex(t, 36, 16), parent != 0, let flags = hex(t, 53, 2) else { return nil }
            return (high, low, parent, UInt8(flags))
        }
    }

    /// `count` lowercase hex digits at `at` (at most 16).
    private static func hex(_ t: UnsafeBufferPointer<UInt8>, _ at: Int, _ count: Int) -> UInt64? {
        var v: UInt64 = 0
        for i in at..<(at + count) {
            let c = t[i]
            let d: UInt8
            switch c {
            case 48...57: d = c - 48
            case 97...102: d = c - 87
            default: return nil
            }
            v = v << 4 | UInt64(d)
        }
        return v
    }

    /// `tracestate` kept when it is printable ASCII within `maxState`; otherwise dropped (never passed on).
    private static func validState(_ s: String) -> String? {
        let u = s.utf8
        guard !u.isEmpty, u.count <= maxState, u.allSatisfy({ $0 >= 32 && $0 < 127 }) else { return nil }
        return s
    }

    /// The trace id as 32 lowercase hex digits.
    public var traceID: String {
        String(unsafeUninitializedCapacity: 32) { b in
            FNV1a.writeHex(traceHigh, b.baseAddress!); FNV1a.writeHex(traceLow, b.baseAddress! + 16)
            return 32
        }
    }

    /// The `traceparent` of a call this request makes: the same trace and flags, `span` as the call's span id.
    public func child(span: UInt64) -> String {
        // Written in place: one string, 55 characters.
        String(unsafeUninitializedCapacity: 55) { b in writeTraceparent(span: span, to: b.baseAddress!); return 55 }
    }

    /// A `traceparent` value with `span` as its span id: 55 bytes at `p`.
    private func writeTraceparent(span: UInt64, to p: UnsafeMutablePointer<UInt8>) {
        p[0] = 48; p[1] = 48; p[2] = 45
        FNV1a.writeHex(traceHigh, p + 3); FNV1a.writeHex(traceLow, p + 19)
        p[35] = 45
        FNV1a.writeHex(span == 0 ? 1 : span, p + 36)
        p[52] = 45
        func digit(_ d: UInt8) -> UInt8 { d < 10 ? 48 + d : 87 + d }
        p[53] = digit(flags >> 4); p[54] = digit(flags & 15)
    }

    /// Writes the trace id's 32 hex digits into `out`.
    package func appendTraceID(to out: inout [UInt8]) {
        Self.appendHex(traceHigh, to: &out)
        Self.appendHex(traceLow, to: &out)
    }

    /// Writes `word` as 16 lowercase hex digits into `out`.
    package static func appendHex(_ word: UInt64, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { b in
            FNV1a.writeHex(word, b.baseAddress!)
            out.append(contentsOf: UnsafeBufferPointer(b))
        }
    }

    /// The `traceparent` of the next call this request makes: a child with a span id of its own (`childSpan`).
    public func child() -> String { child(span: Self.childSpan(of: spanID)) }

    /// The fields an outgoing call of this trace carries, appended to a request's head as bytes: `traceparent` (a
    /// child, as `child()` writes it) and `tracestate` when kept. No string is made.
    public func appendFields(to bytes: inout [UInt8]) {
        let span = Self.childSpan(of: spanID)
        // The whole line written in one go: the name, the 55-byte value, CR LF.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 70) { b in
            let p = b.baseAddress!
            let name: StaticString = "traceparent: "
            p.update(from: name.utf8Start, count: 13)
            writeTraceparent(span: span, to: p + 13)
            p[68] = 13; p[69] = 10
            bytes.append(contentsOf: UnsafeBufferPointer(b))
        }
        // Printable as the intake keeps it; a state made in code that is not (a line break) is left out, not sent.
        if let state, state.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) {
            bytes.append(contentsOf: "tracestate: ".utf8); bytes.append(contentsOf: state.utf8); bytes.append(13); bytes.append(10)
        }
    }

    /// The bytes `appendFields` appends.
    public var fieldBytes: Int { 13 + 55 + 2 + (state.map { 12 + $0.utf8.count + 2 } ?? 0) }

    /// Span ids of outgoing calls: the request's span mixed with a process-wide counter (SplitMix64's output function),
    /// so each call of a request, and of every request, gets its own without a system call.
    private static let calls = Atomic<UInt64>(0)
    static func childSpan(of span: UInt64) -> UInt64 {
        let z = SplitMix64.scramble(span &+ calls.wrappingAdd(1, ordering: .relaxed).newValue &* 0x9E37_79B9_7F4A_7C15)
        return z == 0 ? 1 : z
    }
}

/// SplitMix64: a fast generator for ids that need to be unique, not secret (trace and span ids). One per event loop,
/// seeded from the system's generator.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public init() { var system = SystemRandomNumberGenerator(); state = system.next() }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.scramble(state)
    }

    /// The generator's output function: a bijection of 64-bit words that spreads every input bit.
    public static func scramble(_ x: UInt64) -> UInt64 {
        var z = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
