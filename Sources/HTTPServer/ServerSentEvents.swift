/// One server-sent event (WHATWG HTML, "Server-sent events"), framed so a client's parser reads back exactly these
/// values: multi-line data becomes several `data:` lines (CR LF, CR and LF all end a line, so none is sent bare),
/// and line breaks in `event` and `id` (and NUL in `id`, which makes a client ignore the field) are dropped.
public struct ServerSentEvent: Sendable, Equatable {
    public var event: String?
    public var id: String?
    public var data: String
    /// Reconnection time hinted to the client, in milliseconds.
    public var retry: Int?

    public init(event: String? = nil, id: String? = nil, data: String, retry: Int? = nil) {
        self.event = event; self.id = id; self.data = data; self.retry = retry
    }

    /// The event's bytes on the wire, ending with the blank line that dispatches it.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.utf8.count + 32)
        if let retry { SSEFraming.field("retry", String(max(0, retry)), to: &out) }
        if let event { SSEFraming.field("event", event, to: &out) }
        if let id { SSEFraming.field("id", id, to: &out, dropNUL: true) }
        var line: [UInt8] = []
        var afterCR = false
        for b in data.utf8 {
            if b == 10 && afterCR { afterCR = false; continue }   // the LF of a CR LF pair
            afterCR = b == 13
            if b == 13 || b == 10 { SSEFraming.dataLine(line, to: &out); line.removeAll(keepingCapacity: true); continue }
            line.append(b)
        }
        SSEFraming.dataLine(line, to: &out)
        out.append(10)
        return out
    }
}

enum SSEFraming {
    static func field(_ name: StaticString, _ value: String, to out: inout [UInt8], dropNUL: Bool = false) {
        name.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(58); out.append(32)
        for b in value.utf8 where b != 13 && b != 10 && !(dropNUL && b == 0) { out.append(b) }
        out.append(10)
    }

    static func dataLine(_ line: [UInt8], to out: inout [UInt8]) {
        out.append(contentsOf: dataPrefix)
        out.append(contentsOf: line)
        out.append(10)
    }

    static let dataPrefix = Array("data: ".utf8)
    /// A comment line and a blank line: keeps an idle stream's connection (and every proxy on the way) alive.
    static let heartbeat = Array(":\n\n".utf8)

    static func retry(_ milliseconds: Int) -> [UInt8] { Array("retry: \(max(0, milliseconds))\n\n".utf8) }
}

/// What an event stream's producer writes to: events, `retry:` hints and comments, framed by the server. The
/// request's `Last-Event-ID` says where a reconnecting client left off.
public struct EventStreamWriter: Sendable {
    public let body: BodyWriter

    public var lastEventID: String? { body.lastEventID }

    public func send(_ event: ServerSentEvent) async throws { try await body.write(event.encoded) }

    public func send(event: String? = nil, id: String? = nil, data: String) async throws {
        try await send(ServerSentEvent(event: event, id: id, data: data))
    }

    /// A `retry:` field alone: the reconnection time the client should use from now on.
    public func retry(milliseconds: Int) async throws { try await body.write(SSEFraming.retry(milliseconds)) }

    /// A comment (ignored by clients); line breaks in `text` are dropped.
    public func comment(_ text: String) async throws {
        var out: [UInt8] = [58, 32]
        for b in text.utf8 where b != 13 && b != 10 { out.append(b) }
        out.append(10); out.append(10)
        try await body.write(out)
    }
}

/// A pushed event stream's channel (`HTTPResponse.eventChannel`): events written without waiting, from any thread, in
/// the order they are sent; `finish()` ends the body; `onClose` tells when the stream is over, however it ends.
public struct EventChannel: Sendable {
    public let body: BodyWriter

    public var lastEventID: String? { body.lastEventID }

    public func send(_ event: ServerSentEvent) { body.push(event.encoded) }

    public func send(event: String? = nil, id: String? = nil, data: String) { send(ServerSentEvent(event: event, id: id, data: data)) }

    /// Bytes already framed as events (`ServerSentEvent.encoded`): one encoding shared by many streams.
    public func send(encoded: [UInt8]) { body.push(encoded) }

    /// A `retry:` field alone: the reconnection time the client should use from now on.
    public func retry(milliseconds: Int) { body.push(SSEFraming.retry(milliseconds)) }

    public func finish() { body.finish() }

    public func onClose(_ handler: @escaping @Sendable (StreamClosed.Reason) -> Void) { body.onClose(handler) }
}
