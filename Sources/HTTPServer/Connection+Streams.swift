import EventLoops
import Glibc
import HTTPCore

/// A connection's streamed response (`HTTPResponse.stream`, server-sent events, push streams): its head, its framed
/// and compressed writes, back-pressure on its producer, the stall deadline, heartbeats and its end in every way a
/// stream ends. While one is open the connection answers nothing else.
extension Connection {
    /// Writes a stream's head and starts its producer; the connection answers nothing else until the stream ends.
    func startStream(_ response: HTTPResponse, _ body: ResponseStream) {
        let p = current
        let config = core.configuration.streams
        guard core.metrics.streamOpened(max: config.maxStreams) else {
            var problem = Problem(status: 503, slug: "too-many-streams", .streamsFull, String(config.maxStreams))
            problem.headers.set("Retry-After", "5")
            respond(problem.response)
            body.abandoned?()
            return
        }
        let now = Syscall.monotonicNanos()
        // HTTP/1.1: chunked, and the connection stays usable after the stream; HTTP/1.0: the body ends with the connection.
        let chunked = p.versionMinor >= 1
        let keepAlive = chunked && p.keepAlive && !closeAfterFlush
        let gzip = ResponseEncoder.streamMayGzip(body, ResponseEncoder.FieldSummary(response.headers.fields)) && p.acceptsGzip
        let start = out.count
        ResponseEncoder.encodeStreamHead(response, body, into: &out, request: p, keepAlive: keepAlive, chunked: chunked, gzipped: gzip, date: server.dateBytes)
        core.metrics.record(loop: server.id, route: p.route, status: response.status, seconds: Double(now &- p.started) / 1e9, bytes: out.count - start)
        if !keepAlive { closeAfterFlush = true }
        let lastEventID = body.isEventStream ? p.headers["Last-Event-ID"] : nil
        // A stream may stay open for hours: it keeps only what its access-log line needs of the request.
        current.request = HTTPRequest(method: p.method, target: p.path, path: p.path, query: nil, versionMinor: p.versionMinor)
        let writer = BodyWriter(loop: server.loop, lastEventID: lastEventID)
        let s = OpenStream(writer: writer, chunked: chunked, gzip: gzip, isEventStream: body.isEventStream, status: response.status)
        writer.sink = self
        stream = s
        machine.streamStarted(now: now, heartbeats: body.isEventStream)
        if gzip { appendFramed(Deflate.gzipHeader, s) }
        flush()
        if isClosed { body.abandoned?(); return }
        switch body.producer {
        case .push(let start):
            // No task: the producer keeps the writer and pushes; the connection and the writer are all it holds. Its
            // idle buffers go until its next request (a push stream is a bell held for hours).
            parser.releaseIdleBuffers()
            if !hasPendingOutput { out = []; outStart = 0 }
            start(writer)
        case .task(let produce):
            let connection = LoopBound(self, on: server.loop)
            let loop = server.loop
            // The producer sees the request's trace, as its handler did.
            let trace = current.trace
            s.task = Task(executorPreference: loop) {
                var failure: (any Error)?
                do { try await TraceContext.$task.withValue(trace) { try await produce(writer) } } catch { failure = error }
                let outcome = failure
                if loop.inLoop { connection.value.producerFinished(writer, outcome) } else { loop.execute { connection.value.producerFinished(writer, outcome) } }
            }
        }
        if stream === s, machine.draining && s.isEventStream { drainEventStream(s) }
    }

    /// A push stream's writer went past the high-water mark: it cannot wait, so the stream ends as stalled.
    func streamOverflowed(_ writer: BodyWriter) {
        guard let s = stream, s.writer === writer, !isClosed else { return }
        close(.stalled)
    }

    /// A push stream's producer ended its body.
    func pushFinished(_ writer: BodyWriter) { producerFinished(writer, nil) }

    /// A producer's write, on the loop: framed, queued and sent as far as the socket takes it. True when the writer
    /// must wait for the buffer to drain.
    func streamWrite(_ bytes: [UInt8]) -> Bool {
        guard let s = stream, !isClosed else { return false }
        machine.streamWrote(now: Syscall.monotonicNanos())
        appendBody(bytes, s)
        flush()
        guard stream === s, !isClosed else { return false }
        return pendingBytes > core.configuration.streams.highWater
    }

    /// Parks a writer until the outbound buffer is down to the low-water mark.
    func streamWait(_ c: CheckedContinuation<Void, any Error>) {
        guard let s = stream, !isClosed else { c.resume(throwing: StreamClosed(reason: .ended)); return }
        if pendingBytes <= core.configuration.streams.lowWater { c.resume(); return }
        s.waiters.append(c)
    }

    /// Appends identity bytes of a stream's body: compressed when the stream is gzipped (the server's own few bytes,
    /// heartbeats and hints, as stored blocks), then framed.
    func appendBody(_ bytes: [UInt8], _ s: OpenStream, compress: Bool = true) {
        guard s.gzip else { appendFramed(bytes, s); return }
        s.crc = Deflate.crc(bytes[...], continuing: s.crc)
        s.size &+= bytes.count
        appendFramed(compress ? server.deflater.flushed(bytes) : Deflate.stored(bytes), s)
    }

    /// Appends one piece of a stream's body, framed (a chunk for HTTP/1.1).
    func appendFramed(_ payload: [UInt8], _ s: OpenStream) {
        guard !payload.isEmpty else { return }   // an empty chunk would end the body
        // Bytes already sent leave the buffer before it grows (no large-body entry refers to offsets in it then).
        if bodies.isEmpty && outStart > 0 && outStart * 2 >= out.count { out.removeFirst(outStart); outStart = 0 }
        let before = out.count
        if s.chunked {
            Connection.appendHex(payload.count, to: &out)
            out.append(13); out.append(10)
            out.append(contentsOf: payload)
            out.append(13); out.append(10)
        } else {
            out.append(contentsOf: payload)
        }
        s.bytes += out.count - before
        core.metrics.streamWrote(out.count - before)
    }

    /// After a flush: the stall clock follows the buffer; parked writers resume once it is down to the low-water mark;
    /// the buffered gauge follows.
    func streamDrained(progressed: Bool) {
        guard let s = stream else { return }
        let pending = pendingBytes
        machine.streamOutput(pending: pending > 0, progressed: progressed, now: Syscall.monotonicNanos())
        if pending != s.buffered { core.metrics.streamBuffered(pending - s.buffered); s.buffered = pending }
        if !s.waiters.isEmpty && pending <= core.configuration.streams.lowWater {
            let waiters = s.waiters
            s.waiters.removeAll()
            for w in waiters { w.resume() }
        }
    }

    /// The producer returned (or threw), on the loop.
    func producerFinished(_ writer: BodyWriter, _ failure: (any Error)?) {
        guard let s = stream, s.writer === writer, !isClosed else { return }
        if let failure, !(failure is StreamClosed) && !(failure is CancellationError) {
            // The status is long gone: cut the connection so the client sees a truncated body, not a complete one.
            core.logger.warning("stream producer failed; connection aborted", [("error", "\(failure)"), ("request_id", current.requestID.string)])
            close(.ended)
            return
        }
        endStream(s, reason: .ended)
    }

    /// Ends the body (gzip trailer, last chunk), logs the request, and goes on with pipelined requests.
    func endStream(_ s: OpenStream, reason: StreamClosed.Reason) {
        if s.gzip {
            var tail = Deflate.finalBlock
            for shift in stride(from: 0, to: 32, by: 8) { tail.append(UInt8(truncatingIfNeeded: s.crc >> UInt32(shift))) }
            let size = UInt32(truncatingIfNeeded: s.size)
            for shift in stride(from: 0, to: 32, by: 8) { tail.append(UInt8(truncatingIfNeeded: size >> UInt32(shift))) }
            appendFramed(tail, s)
        }
        if s.chunked { out.append(contentsOf: Connection.lastChunk); s.bytes += Connection.lastChunk.count }
        stream = nil
        cancel(s, reason)
        let p = current
        let now = Syscall.monotonicNanos()
        if core.configuration.accessLog {
            AccessLog.append(to: &server.logBuffer, method: p.method, route: p.route < 0 ? "unmatched" : core.router.routes[p.route].pattern,
                             path: p.path, status: s.status, bytes: s.bytes, micros: Int((now &- p.started) / 1000), requestID: p.requestID.string,
                             trace: p.trace, client: p.client)
        }
        let keepAlive = !closeAfterFlush && !(machine.draining && parser.bufferedByteCount == 0)
        if !keepAlive { closeAfterFlush = true }
        if machine.responseCompleted(now: now, keepAlive: keepAlive, moreBuffered: !parser.isIdle) == .close { closeAfterFlush = true }
        current.request = .none
        flush()
        if isClosed { return }
        process()
        if isClosed { return }
        if peerClosed && !hasPendingOutput && !closeAfterFlush && !inFlight && stream == nil { close(); return }
        updateInterest()
    }

    /// Frees what a stream holds: its producer is cancelled, parked writers fail, later writes throw.
    func cancel(_ s: OpenStream, _ reason: StreamClosed.Reason) {
        s.writer.sink = nil
        s.writer.closedReason = reason
        if let handler = s.writer.closeHandler { s.writer.closeHandler = nil; handler(reason) }
        s.task?.cancel()
        s.task = nil
        let waiters = s.waiters
        s.waiters.removeAll()
        for w in waiters { w.resume(throwing: StreamClosed(reason: reason)) }
        if s.buffered != 0 { core.metrics.streamBuffered(-s.buffered); s.buffered = 0 }
        core.metrics.streamClosed(stalled: reason == .stalled)
    }

    /// A stream's deadlines (the state machine's): a reader that takes nothing for the stall timeout is cut; a quiet
    /// event stream gets a comment heartbeat.
    func streamTick(_ s: OpenStream, now: UInt64) {
        switch machine.timerFired(now: now) {
        case .closeStalled: close(.stalled)
        case .heartbeat:
            appendBody(SSEFraming.heartbeat, s, compress: false)
            flush()
        case .none, .close, .timeoutAndClose: break
        }
    }

    /// Drain: an event stream gets a `retry:` hint (spread so clients do not all come back at once) and ends.
    func drainEventStream(_ s: OpenStream) {
        let base = core.configuration.streams.drainRetry
        appendBody(SSEFraming.retry(base + Int.random(in: 0...max(0, base))), s, compress: false)
        closeAfterFlush = true
        endStream(s, reason: .draining)
    }

    static let lastChunk = Array("0\r\n\r\n".utf8)

    static func appendHex(_ n: Int, to out: inout [UInt8]) {
        var shift = 60
        while shift > 0 && (n >> shift) & 0xF == 0 { shift -= 4 }
        while shift >= 0 { out.append(hexDigits[(n >> shift) & 0xF]); shift -= 4 }
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
