/// The life of one connection as a pure state machine: events in, actions out. Time is passed in
/// (monotonic nanoseconds), so tests drive it with a fake clock.
public struct ConnectionStateMachine: Sendable {
    public enum State: Equatable, Sendable {
        /// Waiting for the first byte of a request. `fresh` for a just-accepted connection.
        case idle(since: UInt64, fresh: Bool)
        /// Some of a request head has arrived.
        case readingHead(since: UInt64)
        /// The head is complete; body bytes are arriving.
        case readingBody(lastProgress: UInt64)
        /// A handler is working or the response is being written.
        case responding(since: UInt64)
        /// A streamed body is being written. `lastWrite`: the last bytes written (heartbeats count from it);
        /// `waitingSince`: when bytes began to wait for a client that takes none (nil while the buffer is empty).
        case streaming(lastWrite: UInt64, waitingSince: UInt64?, heartbeats: Bool)
        case closed
    }

    public enum Action: Equatable, Sendable {
        case none
        /// Close without a response.
        case close
        /// Answer 408 and close.
        case timeoutAndClose
        /// A stream: write a heartbeat (a comment, for an event stream that has been quiet).
        case heartbeat
        /// A stream whose client took nothing for the stall timeout: close it, cancel its producer.
        case closeStalled
    }

    public struct Timeouts: Sendable {
        public var header: UInt64
        public var idle: UInt64
        /// A stream with bytes waiting and no progress this long is closed.
        public var stall: UInt64
        /// An event stream quiet this long gets a heartbeat.
        public var heartbeat: UInt64
        public init(header: UInt64, idle: UInt64, stall: UInt64 = 30_000_000_000, heartbeat: UInt64 = 25_000_000_000) {
            self.header = header; self.idle = idle; self.stall = stall; self.heartbeat = heartbeat
        }
    }

    public private(set) var state: State
    public private(set) var draining = false
    public let timeouts: Timeouts

    public init(now: UInt64, timeouts: Timeouts) {
        self.state = .idle(since: now, fresh: true)
        self.timeouts = timeouts
    }

    /// Bytes of a request arrived. `headComplete`: the parser has the head and is reading the body.
    public mutating func bytesReceived(now: UInt64, headComplete: Bool) {
        switch state {
        case .idle: state = headComplete ? .readingBody(lastProgress: now) : .readingHead(since: now)
        case .readingHead(let since): state = headComplete ? .readingBody(lastProgress: now) : .readingHead(since: since)
        case .readingBody: state = .readingBody(lastProgress: now)
        case .responding, .streaming, .closed: break
        }
    }

    /// A complete request went to its handler.
    public mutating func requestDispatched(now: UInt64) {
        if state != .closed { state = .responding(since: now) }
    }

    /// The output made progress (a write went through) while responding.
    public mutating func writeProgressed(now: UInt64) {
        if case .responding = state { state = .responding(since: now) }
    }

    /// A streamed body begins (its head is written). Header and idle timeouts no longer apply; the stall timeout
    /// does, and heartbeats when `heartbeats` (an event stream).
    public mutating func streamStarted(now: UInt64, heartbeats: Bool) {
        if state != .closed { state = .streaming(lastWrite: now, waitingSince: nil, heartbeats: heartbeats) }
    }

    /// The stream wrote bytes (the producer's, or a heartbeat).
    public mutating func streamWrote(now: UInt64) {
        if case .streaming(_, let waiting, let hb) = state { state = .streaming(lastWrite: now, waitingSince: waiting, heartbeats: hb) }
    }

    /// After a send: whether bytes still wait, and whether the client took any (`progressed`).
    public mutating func streamOutput(pending: Bool, progressed: Bool, now: UInt64) {
        guard case .streaming(let last, let waiting, let hb) = state else { return }
        let since: UInt64? = pending ? ((progressed || waiting == nil) ? now : waiting) : nil
        state = .streaming(lastWrite: last, waitingSince: since, heartbeats: hb)
    }

    /// The response is fully written. Returns `.close` unless the connection is kept alive.
    /// `moreBuffered`: bytes of a next (pipelined) request are already here.
    public mutating func responseCompleted(now: UInt64, keepAlive: Bool, moreBuffered: Bool) -> Action {
        guard state != .closed else { return .none }
        if !keepAlive || (draining && !moreBuffered) { state = .closed; return .close }
        state = moreBuffered ? .readingHead(since: now) : .idle(since: now, fresh: false)
        return .none
    }

    /// Whether the response now being prepared should carry `Connection: close` because of a drain.
    public var mustCloseAfterResponse: Bool { draining }

    /// Time from `stamp` to `now`; none when the stamp is ahead (taken from a fresher reading than the check's).
    @inline(__always)
    static func elapsed(_ now: UInt64, _ stamp: UInt64) -> UInt64 { now > stamp ? now &- stamp : 0 }

    public mutating func timerFired(now: UInt64) -> Action {
        switch state {
        case .idle(let since, let fresh):
            // A fresh connection must deliver its first header section in time, too.
            let limit = fresh ? timeouts.header : timeouts.idle
            if ConnectionStateMachine.elapsed(now, since) >= limit { state = .closed; return .close }
        case .readingHead(let since):
            if ConnectionStateMachine.elapsed(now, since) >= timeouts.header { state = .closed; return .timeoutAndClose }
        case .readingBody(let last):
            if ConnectionStateMachine.elapsed(now, last) >= timeouts.idle { state = .closed; return .timeoutAndClose }
        case .responding(let since):
            // A handler may take long (it has its own deadlines); only a stalled write is cut here,
            // which the connection reports by not calling `writeProgressed`.
            if ConnectionStateMachine.elapsed(now, since) >= timeouts.idle { state = .closed; return .close }
        case .streaming(let last, let waiting, let hb):
            if let waiting {
                if ConnectionStateMachine.elapsed(now, waiting) >= timeouts.stall { state = .closed; return .closeStalled }
            } else if hb && ConnectionStateMachine.elapsed(now, last) >= timeouts.heartbeat {
                state = .streaming(lastWrite: now, waitingSince: nil, heartbeats: hb)
                return .heartbeat
            }
        case .closed: break
        }
        return .none
    }

    /// SIGTERM: idle keep-alive connections close now; busy ones finish their request, then close. A fresh
    /// connection (accepted, nothing read yet) is kept: its request is most likely already on the way, and
    /// it is an accepted request that must not be dropped. The header timeout still bounds it.
    public mutating func shutdownRequested() -> Action {
        draining = true
        if case .idle(_, let fresh) = state, !fresh { state = .closed; return .close }
        return .none
    }

    public mutating func closed() { state = .closed }
}
