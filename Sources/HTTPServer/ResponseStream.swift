import HTTPCore
import EventLoops

/// A body produced over time: the response's status and fields go out at once, then whatever the producer
/// writes, framed by the server (chunked for HTTP/1.1, close-delimited for HTTP/1.0, nothing for HEAD; one gzip
/// member flushed after every write when the client accepts gzip). The body ends when the producer returns: it
/// cannot be ended twice, and a write after the end throws.
public struct ResponseStream: Sendable {
    public let contentType: String
    /// A `text/event-stream`: the server adds comment heartbeats while it is quiet and a final `retry:` hint on drain.
    public let isEventStream: Bool
    let producer: Producer
    /// Told when the stream will never start (the connection closed first, the server's stream limit, a HEAD request),
    /// so whoever set it up for a push producer can let go of it.
    let abandoned: (@Sendable () -> Void)?

    enum Producer {
        /// A task writes the body, waiting while the client is slow to read; the body ends when it returns.
        case task(@Sendable (BodyWriter) async throws -> Void)
        /// No task: `start` runs on the connection's loop once the head is out, and whoever it hands the writer to
        /// pushes bytes (`BodyWriter.push`) until it calls `finish()` or the stream ends (`BodyWriter.onClose`). What
        /// a long-lived stream costs is then its connection and the writer, not a task and its frames.
        case push(@Sendable (BodyWriter) -> Void)
    }

    public init(contentType: String, isEventStream: Bool = false, produce: @escaping @Sendable (BodyWriter) async throws -> Void) {
        self.contentType = contentType
        self.isEventStream = isEventStream
        self.producer = .task(produce)
        self.abandoned = nil
    }

    /// A push stream (see `Producer.push`).
    public init(contentType: String, isEventStream: Bool = false, abandoned: (@Sendable () -> Void)? = nil,
                start: @escaping @Sendable (BodyWriter) -> Void) {
        self.contentType = contentType
        self.isEventStream = isEventStream
        self.producer = .push(start)
        self.abandoned = abandoned
    }
}

extension HTTPResponse {
    /// A streamed answer. `produce` runs in a task that prefers the connection's loop; throwing (other than
    /// `StreamClosed`) aborts the connection, so the client sees a truncated body rather than a complete one.
    public static func stream(status: Int = 200, contentType: String, headers: HTTPHeaders = HTTPHeaders(),
                              _ produce: @escaping @Sendable (BodyWriter) async throws -> Void) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: .stream(ResponseStream(contentType: contentType, produce: produce)))
    }

    /// Server-sent events (`text/event-stream`), with `Cache-Control: no-store` and `X-Accel-Buffering: no` so that
    /// neither a cache nor a buffering proxy holds events back.
    public static func eventStream(headers: HTTPHeaders = HTTPHeaders(),
                                   _ produce: @escaping @Sendable (EventStreamWriter) async throws -> Void) -> HTTPResponse {
        let h = eventStreamFields(headers)
        let stream = ResponseStream(contentType: "text/event-stream; charset=utf-8", isEventStream: true) { body in
            try await produce(EventStreamWriter(body: body))
        }
        return HTTPResponse(status: 200, headers: h, body: .stream(stream))
    }

    /// An event stream's fields: `Cache-Control: no-store` unless set, `X-Accel-Buffering: no`.
    static func eventStreamFields(_ headers: HTTPHeaders) -> HTTPHeaders {
        var h = headers
        if h["Cache-Control"] == nil { h.set("Cache-Control", "no-store") }
        h.set("X-Accel-Buffering", "no")
        return h
    }

    /// Server-sent events pushed without a task (`ResponseStream.Producer.push`): `start` runs on the connection's
    /// loop when the stream opens and keeps the channel where events come from; `abandoned` is told instead when it
    /// never opens. The same fields as `eventStream`.
    public static func eventChannel(headers: HTTPHeaders = HTTPHeaders(), abandoned: (@Sendable () -> Void)? = nil,
                                    _ start: @escaping @Sendable (EventChannel) -> Void) -> HTTPResponse {
        let h = eventStreamFields(headers)
        let stream = ResponseStream(contentType: "text/event-stream; charset=utf-8", isEventStream: true, abandoned: abandoned) { body in
            start(EventChannel(body: body))
        }
        return HTTPResponse(status: 200, headers: h, body: .stream(stream))
    }
}

/// Why a stream's write did not go through: the stream is over.
public struct StreamClosed: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        /// The client closed the connection or reset it, or a write to it failed.
        case disconnected
        /// The client stopped reading for longer than the stall timeout.
        case stalled
        /// The server is shutting down.
        case draining
        /// The producer already returned.
        case ended
    }
    public let reason: Reason
    public var description: String { "stream closed: \(reason.rawValue)" }
}

/// What a stream's producer writes to. Writes are taken in order and framed by the server; a write suspends while
/// the connection's outbound buffer is above its high-water mark and resumes below the low one, so a client that
/// stops reading holds the producer instead of growing the server's memory. Usable from any task: a write made off
/// the connection's loop hops onto it.
public final class BodyWriter: @unchecked Sendable {   // @unchecked: `sink` is read and written on `loop`'s thread only (every entry point hops there).
    public let loop: EventLoop
    /// The request's `Last-Event-ID`, if it sent one (an event stream's resumption point).
    public let lastEventID: String?
    /// The connection writing this stream; nil once the stream is over.
    var sink: Connection?
    var closedReason: StreamClosed.Reason = .ended
    /// A push stream's end, told once (on the loop).
    var closeHandler: (@Sendable (StreamClosed.Reason) -> Void)?

    init(loop: EventLoop, lastEventID: String?) {
        self.loop = loop
        self.lastEventID = lastEventID
    }

    /// Writes `bytes` (nothing for an empty array). Throws `StreamClosed` once the stream is over.
    public func write(_ bytes: [UInt8]) async throws {
        if bytes.isEmpty { return }
        if loop.inLoop {
            if try !accept(bytes) { return }
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in wait(c) }
        } else {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                loop.execute { [self] in
                    do { if try accept(bytes) { wait(c) } else { c.resume() } } catch { c.resume(throwing: error) }
                }
            }
        }
    }

    public func write(_ string: String) async throws { try await write(Array(string.utf8)) }

    /// On the loop: hands `bytes` to the connection; true when the writer must now wait for the buffer to drain.
    private func accept(_ bytes: [UInt8]) throws -> Bool {
        guard let sink else { throw StreamClosed(reason: closedReason) }
        return sink.streamWrite(bytes)
    }

    /// On the loop: parks the caller until the buffer drains (or the stream ends, which throws).
    private func wait(_ c: CheckedContinuation<Void, any Error>) {
        guard let sink else { c.resume(throwing: StreamClosed(reason: closedReason)); return }
        sink.streamWait(c)
    }

    // MARK: Push streams

    /// Writes `bytes` without waiting, from any thread (a write off the loop hops onto it, in order). A push stream
    /// cannot wait for a slow reader: past the high-water mark the stream ends as stalled (its client reconnects and
    /// resumes), so what it buffers stays bounded. Nothing happens once the stream is over.
    public func push(_ bytes: [UInt8]) {
        if bytes.isEmpty { return }
        if loop.inLoop { pushOnLoop(bytes) } else { loop.execute { [self] in pushOnLoop(bytes) } }
    }

    private func pushOnLoop(_ bytes: [UInt8]) {
        guard let sink else { return }
        if sink.streamWrite(bytes) { sink.streamOverflowed(self) }
    }

    /// Ends a push stream's body (the last chunk; the connection goes on with its next request), from any thread.
    public func finish() {
        if loop.inLoop { sink?.pushFinished(self) } else { loop.execute { [self] in sink?.pushFinished(self) } }
    }

    /// `handler` is told once, on the loop, when the stream ends for any reason (the client left or stalled, the
    /// server drains, `finish()`); at once if it has ended already. Set it from the push stream's `start`.
    public func onClose(_ handler: @escaping @Sendable (StreamClosed.Reason) -> Void) {
        let set = { [self] in
            if sink == nil { handler(closedReason) } else { closeHandler = handler }
        }
        if loop.inLoop { set() } else { loop.execute(set) }
    }

    /// Whether the stream is still open (on the loop; from elsewhere, a snapshot hopped through `loop`).
    public var isOpen: Bool {
        get async {
            if loop.inLoop { return sink != nil }
            return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in loop.execute { [self] in c.resume(returning: sink != nil) } }
        }
    }
}
