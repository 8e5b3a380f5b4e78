import Foundation
import Glibc
import HTTPClient
import Synchronization
import TestSupport
import XCTest
@testable import HTTPServer
@testable import HTTPCore

/// What the stream producers of the test routes did, for the tests to check.
final class StreamProbe: Sendable {
    struct State {
        var produced = 0
        var writes = 0
        var ended: String?
        var lastEventID: String??
        var leakedWriter: BodyWriter?
    }
    let state = Mutex(State())
    func update(_ f: (inout State) -> Void) { state.withLock { f(&$0) } }
    var snapshot: State { state.withLock { $0 } }

    /// Polls until `condition` holds (at most `seconds`).
    func wait(_ seconds: Double = 5, _ condition: (State) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(snapshot) { return true }
            usleep(10_000)
        }
        return condition(snapshot)
    }
}

/// Records how a producer ended: "returned", "closed: <reason>", "cancelled".
private func ending(_ error: any Error) -> String {
    if let c = error as? StreamClosed { return "closed: \(c.reason.rawValue)" }
    if error is CancellationError { return "cancelled" }
    return "error"
}

func startStreamServer(_ probe: StreamProbe, _ configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
    let router = Router()
    router.get("/hello") { _ in .response(.text("hello")) }
    // n pieces "piece i\n", `delay` ms apart.
    router.get("/stream/chunks") { ctx in
        let n = Int(ctx.request.queryParameter("n") ?? "3") ?? 3
        let delay = UInt64(ctx.request.queryParameter("delay") ?? "0") ?? 0
        return .response(.stream(contentType: "text/plain; charset=utf-8") { body in
            probe.update { $0.writes += 0 }
            for i in 0..<n {
                if i > 0 && delay > 0 { try await Task.sleep(nanoseconds: delay * 1_000_000) }
                try await body.write("piece \(i)\n")
                probe.update { $0.writes += 1 }
            }
            probe.update { $0.ended = "returned"; $0.leakedWriter = body }
        })
    }
    // 16 KiB pieces for as long as the client takes them.
    router.get("/stream/forever") { _ in
        .response(.stream(contentType: "application/octet-stream") { body in
            let piece = [UInt8](repeating: 120, count: 16 * 1024)
            do {
                while true {
                    try await body.write(piece)
                    probe.update { $0.produced += piece.count; $0.writes += 1 }
                }
            } catch {
                probe.update { $0.ended = ending(error) }
                throw error
            }
        })
    }
    // Server-sent events: one event carrying the Last-Event-ID, one multi-line event, then quiet until cancelled.
    router.get("/stream/events") { _ in
        .response(.eventStream { events in
            probe.update { $0.lastEventID = .some(events.lastEventID) }
            do {
                try await events.send(event: "hello", id: "1", data: "last=\(events.lastEventID ?? "none")")
                try await events.send(ServerSentEvent(event: "multi", id: "2", data: "one\ntwo\r\nthree"))
                try await Task.sleep(nanoseconds: 60_000_000_000)
                probe.update { $0.ended = "returned" }
            } catch {
                probe.update { $0.ended = ending(error) }
            }
        })
    }
    // A producer that fails after one piece.
    router.get("/stream/fail") { _ in
        .response(.stream(contentType: "text/plain") { body in
            try await body.write("partial\n")
            struct Broken: Error {}
            throw Broken()
        })
    }
    // A stream answered off the loop (an async handler), from a write made off the loop's thread.
    router.get("/stream/async") { _ in
        .async {
            .stream(contentType: "text/plain") { body in
                try await Task.detached { try await body.write("from elsewhere\n") }.value
            }
        }
    }
    return try startServer(router, loops: 2, configure)
}

final class StreamTests: XCTestCase {
    /// A GET request's text, for a raw client that reads the stream itself.
    private func getText(_ path: String, _ extra: String = "", version: String = "1.1") -> String {
        "GET \(path) HTTP/\(version)\r\nHost: t\r\n\(extra)\r\n"
    }

    // MARK: - The unhappy readers first

    func testAReaderThatStopsReadingSuspendsTheProducerWithinTheBoundThenIsCutAtTheStallTimeout() throws {
        let probe = StreamProbe()
        let server = try startStreamServer(probe) { $0.streams.stallTimeout = 1.0 }
        defer { stop(server) }
        let c = try RawClient(port: server.port, receiveBuffer: 4096)
        c.send(getText("/stream/forever"))
        // The producer fills the kernel's buffers and then Lede's bound, and stops there.
        XCTAssertTrue(probe.wait { $0.writes > 0 })
        var last = -1
        XCTAssertTrue(probe.wait(5) { s in
            defer { last = s.produced }
            return s.produced == last && s.produced > 0 && { usleep(150_000); return true }()
        }, "the producer never stopped")
        let suspendedAt = probe.snapshot.produced
        usleep(300_000)
        XCTAssertEqual(probe.snapshot.produced, suspendedAt, "a suspended producer produced more")
        XCTAssertNil(probe.snapshot.ended, "suspended, not ended")
        // What Lede holds for it stays under the high-water mark plus one write.
        let buffered = server.metrics.streamBufferedBytes
        XCTAssertGreaterThan(buffered, 0)
        XCTAssertLessThanOrEqual(buffered, server.configuration.streams.highWater + 16 * 1024 + 64)
        XCTAssertEqual(server.metrics.openStreams, 1)
        // The stall timeout closes it and cancels the producer.
        XCTAssertTrue(probe.wait(5) { $0.ended != nil })
        XCTAssertEqual(probe.snapshot.ended, "closed: stalled")
        XCTAssertTrue(probe.wait(2) { _ in server.metrics.openStreams == 0 && server.metrics.streamBufferedBytes == 0 })
        XCTAssertTrue(server.metrics.render().contains("http_streams_stalled_total 1\n"))
    }

    func testAClientThatDisconnectsCancelsTheProducer() throws {
        let probe = StreamProbe()
        let server = try startStreamServer(probe)
        defer { stop(server) }
        do {
            let c = try RawClient(port: server.port)
            c.send(getText("/stream/events"))
            XCTAssertEqual(c.readHead()?.status, 200)
            XCTAssertNotNil(c.readChunk())
            XCTAssertEqual(server.metrics.openStreams, 1)
        }   // closed here, while the producer sleeps
        XCTAssertTrue(probe.wait(2) { $0.ended != nil })
        XCTAssertEqual(probe.snapshot.ended, "cancelled")
        XCTAssertTrue(probe.wait(1) { _ in server.metrics.openStreams == 0 })
    }

    func testAResetWhileTheProducerWritesEndsItsWrites() throws {
        let probe = StreamProbe()
        let server = try startStreamServer(probe)
        defer { stop(server) }
        do {
            let c = try RawClient(port: server.port, receiveBuffer: 4096)
            c.send(getText("/stream/forever"))
            XCTAssertTrue(probe.wait { $0.writes > 2 })
            c.abortiveClose()
        }
        XCTAssertTrue(probe.wait(2) { $0.ended != nil })
        XCTAssertEqual(probe.snapshot.ended, "closed: disconnected")
        XCTAssertTrue(probe.wait(1) { _ in server.metrics.openStreams == 0 })
    }

    func testAProducerThatFailsAbortsTheConnectionWithoutTheLastChunk() throws {
        let server = try startStreamServer(StreamProbe())
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send(getText("/stream/fail"))
        XCTAssertEqual(c.readHead()?.status, 200)
        XCTAssertEqual(c.readChunk().map { String(decoding: $0, as: UTF8.self) }, "partial\n")
        XCTAssertNil(c.readChunk(), "a failed stream must not look complete")
    }

    // MARK: - Framing

    func testChunkedFramingIsExactAndTheConnectionIsReusedAfterTheStream() throws {
        let probe = StreamProbe()
        let server = try startStreamServer(probe)
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send(getText("/stream/chunks?n=3"))
        let head = try XCTUnwrap(c.readHead())
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Transfer-Encoding"), "chunked")
        XCTAssertNil(head.header("Content-Length"))
        XCTAssertEqual(head.header("Content-Type"), "text/plain; charset=utf-8")
        XCTAssertNil(head.header("Connection"))
        var body: [UInt8] = []
        while let chunk = c.readChunk(), !chunk.isEmpty { body += chunk }
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "piece 0\npiece 1\npiece 2\n")
        XCTAssertTrue(probe.wait { $0.ended == "returned" })
        c.send(getText("/hello"))
        XCTAssertEqual(c.readResponse()?.text, "hello", "the connection is reusable after the last chunk")
    }

    func testTheWireBytesOfAChunkedStream() throws {
        let server = try startStreamServer(StreamProbe())
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send(getText("/stream/chunks?n=3", "Connection: close\r\n"))
        let all = try XCTUnwrap(c.readToEOF())
        let text = String(decoding: all, as: UTF8.self)
        let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        XCTAssertEqual(body, "8\r\npiece 0\n\r\n8\r\npiece 1\n\r\n8\r\npiece 2\n\r\n0\r\n\r\n")
        XCTAssertTrue(text.contains("\r\nConnection: close\r\n"))
    }

    func testHTTP10StreamsAreCloseDelimited() throws {
        let server = try startStreamServer(StreamProbe())
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send(getText("/stream/chunks?n=3", version: "1.0"))
        let text = String(decoding: try XCTUnwrap(c.readToEOF()), as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        XCTAssertTrue(parts[0].hasPrefix("HTTP/1.1 200 OK\r\n"))
        XCTAssertFalse(parts[0].lowercased().contains("transfer-encoding"))
        XCTAssertFalse(parts[0].lowercased().contains("content-length"))
        XCTAssertTrue(parts[0].contains("\r\nConnection: close"))
        XCTAssertEqual(parts.dropFirst().joined(separator: "\r\n\r\n"), "piece 0\npiece 1\npiece 2\n")
    }

    func testHEADOfAStreamIsItsFieldsOnlyAndRunsNoProducer() throws {
        let probe = StreamProbe()
        let server = try startStreamServer(probe)
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send("HEAD /stream/chunks?n=3 HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try XCTUnwrap(c.readResponse(head: true))
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Transfer-Encoding"), "chunked")
        c.send(getText("/hello"))
        XCTAssertEqual(c.readResponse()?.text, "hello", "nothing followed the HEAD answer")
        XCTAssertEqual(probe.snapshot.writes, 0)
        XCTAssertNil(probe.snapshot.ended)
    }

    func testAGzipStreamIsReadablePieceByPieceAsItArrives() throws {
        let server = try startStreamServer(StreamProbe())
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send(getText("/stream/chunks?n=3&delay=300", "Accept-Encoding: gzip\r\n"))
        let head = try XCTUnwrap(c.readHead())
        XCTAssertEqual(head.header("Content-Encoding"), "gzip")
        XCTAssertEqual(head.header("Vary"), "Accept-Encoding")
        let inflater = Inflater()
        var text = ""
        var seen: [String] = []
        let started = Date()
        while let chunk = c.readChunk(), !chunk.isEmpty {
            let piece = try XCTUnwrap(inflater.feed(chunk), "every piece inflates on arrival")
            text += String(decoding: piece, as: UTF8.self)
            if !piece.isEmpty { seen.append(String(format: "%.1f", Date().timeIntervalSince(started))) }
            if text == "piece 0\n" { XCTAssertLessThan(Date().timeIntervalSince(started), 0.25, "the first piece was readable before the second was made") }
        }
        XCTAssertEqual(text, "piece 0\npiece 1\npiece 2\n")
        XCTAssertTrue(inflater.finished, "the gzip member ends with its trailer (CRC and length checked)")
        XCTAssertEqual(seen.count, 3)
    }

    func testAPipelinedRequestBehindAStreamWaitsItsTurn() throws {
        let server = try startStreamServer(StreamProbe())
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send(getText("/stream/chunks?n=2&delay=100") + getText("/hello"))
        XCTAssertEqual(c.readHead()?.status, 200)
        XCTAssertEqual(c.readChunk().map { String(decoding: $0, as: UTF8.self) }, "piece 0\n")
        XCTAssertEqual(c.readChunk().map { String(decoding: $0, as: UTF8.self) }, "piece 1\n")
        XCTAssertEqual(c.readChunk(), [])
        XCTAssertEqual(c.readResponse()?.text, "hello")
    }

    func testAStreamAnsweredOffTheLoopFromAnotherThread() throws {
        let server = try startStreamServer(StreamProbe())
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send(getText("/stream/async"))
        XCTAssertEqual(c.readHead()?.status, 200)
        XCTAssertEqual(c.readChunk().map { String(decoding: $0, as: UTF8.self) }, "from elsewhere\n")
        XCTAssertEqual(c.readChunk(), [])
    }

    func testAWriteAfterTheEndThrows() async throws {
        let probe = StreamProbe()
        let server = try startStreamServer(probe)
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send(getText("/stream/chunks?n=1"))
        XCTAssertNotNil(c.readHead())
        XCTAssertEqual(c.readChunk().map { String(decoding: $0, as: UTF8.self) }, "piece 0\n")
        XCTAssertEqual(c.readChunk(), [])
        let writer = try XCTUnwrap(probe.snapshot.leakedWriter)
        do {
            try await writer.write("too late")
            XCTFail("a write after the end went through")
        } catch let e as StreamClosed {
            XCTAssertEqual(e.reason, .ended)
        }
        let isOpen = await writer.isOpen
        XCTAssertFalse(isOpen)
    }

    func testHeaderAndIdleTimeoutsDoNotCutAHealthyStream() throws {
        let server = try startStreamServer(StreamProbe()) { $0.timeouts.idle = 0.3; $0.timeouts.header = 0.3 }
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send(getText("/stream/chunks?n=6&delay=200"))
        XCTAssertNotNil(c.readHead())
        var count = 0
        while let chunk = c.readChunk(), !chunk.isEmpty { count += 1 }
        XCTAssertEqual(count, 6, "1 s of stream outlived 0.3 s header and idle timeouts")
    }

    // MARK: - Server-sent events

    func testServerSentEventFraming() {
        XCTAssertEqual(String(decoding: ServerSentEvent(event: "update", id: "7", data: "one\ntwo\r\nthree\rfour").encoded, as: UTF8.self),
                       "event: update\nid: 7\ndata: one\ndata: two\ndata: three\ndata: four\n\n")
        XCTAssertEqual(String(decoding: ServerSentEvent(data: "").encoded, as: UTF8.self), "data: \n\n")
        XCTAssertEqual(String(decoding: ServerSentEvent(data: "end\n").encoded, as: UTF8.self), "data: end\ndata: \n\n")
        // No bare CR and no line break can leave a field: a client reads back the same values.
        let hostile = ServerSentEvent(event: "a\rb\nc", id: "x\r\ny\0z", data: "d", retry: 1500)
        XCTAssertEqual(String(decoding: hostile.encoded, as: UTF8.self), "retry: 1500\nevent: abc\nid: xyz\ndata: d\n\n")
        XCTAssertFalse(hostile.encoded.contains(13))
    }

    func testEventStreamFieldsLastEventIDAndHeartbeats() throws {
        let probe = StreamProbe()
        let server = try startStreamServer(probe) { $0.streams.heartbeat = 0.2 }
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send(getText("/stream/events", "Last-Event-ID: 41\r\n"))
        let head = try XCTUnwrap(c.readHead())
        XCTAssertEqual(head.header("Content-Type"), "text/event-stream; charset=utf-8")
        XCTAssertEqual(head.header("Cache-Control"), "no-store")
        XCTAssertEqual(head.header("X-Accel-Buffering"), "no")
        XCTAssertTrue(probe.wait { $0.lastEventID != nil })
        XCTAssertEqual(probe.snapshot.lastEventID, .some("41"))
        var text = ""
        while !text.contains(":\n\n") {
            guard let chunk = c.readChunk() else { return XCTFail("no heartbeat; got \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        XCTAssertEqual(text, "event: hello\nid: 1\ndata: last=41\n\nevent: multi\nid: 2\ndata: one\ndata: two\ndata: three\n\n:\n\n")
    }

    // MARK: - Limits and drain

    func testPastMaxStreamsAStreamRequestGets503WithRetryAfter() throws {
        let server = try startStreamServer(StreamProbe()) { $0.streams.maxStreams = 1 }
        defer { stop(server) }
        let first = try RawClient(port: server.port)
        first.send(getText("/stream/events"))
        XCTAssertEqual(first.readHead()?.status, 200)
        let second = try RawClient(port: server.port)
        second.send(getText("/stream/events"))
        let refused = try XCTUnwrap(second.readResponse())
        XCTAssertEqual(refused.status, 503)
        XCTAssertEqual(refused.header("Retry-After"), "5")
        XCTAssertEqual(refused.header("Content-Type"), "application/problem+json")
        XCTAssertTrue(refused.text.contains("too-many-streams"))
        XCTAssertTrue(server.metrics.render().contains("http_streams_refused_total 1\n"))
        // Ordinary requests are not streams.
        second.send(getText("/hello"))
        XCTAssertEqual(second.readResponse()?.status, 200)
    }

    func testDrainEndsEventStreamsWithARetryHintAndCutsOtherStreamsAtTheDeadline() throws {
        let probe = StreamProbe()
        let server = try startStreamServer(probe) { $0.timeouts.drain = 1.0; $0.streams.drainRetry = 1000 }
        let events = try RawClient(port: server.port)
        events.send(getText("/stream/events"))
        XCTAssertEqual(events.readHead()?.status, 200)
        XCTAssertNotNil(events.readChunk())
        XCTAssertNotNil(events.readChunk())
        let raw = try RawClient(port: server.port, receiveBuffer: 4096)
        raw.send(getText("/stream/forever"))
        XCTAssertTrue(probe.wait { $0.writes > 0 })
        let started = Date()
        DispatchQueue.global().async { server.shutdown() }
        // The event stream: a retry hint between 1 and 2 s, then the last chunk and the connection's end.
        let hint = try XCTUnwrap(events.readChunk())
        let hintText = String(decoding: hint, as: UTF8.self)
        XCTAssertTrue(hintText.hasPrefix("retry: ") && hintText.hasSuffix("\n\n"), hintText)
        let ms = Int(hintText.dropFirst(7).dropLast(2)) ?? -1
        XCTAssertTrue((1000...2000).contains(ms), hintText)
        XCTAssertEqual(events.readChunk(), [])
        XCTAssertTrue(events.closedByPeer())
        // The other stream is cut at the drain deadline and the server stops.
        server.waitUntilStopped()
        let took = Date().timeIntervalSince(started)
        XCTAssertLessThan(took, 3.0)
        XCTAssertGreaterThan(took, 0.8)
        XCTAssertTrue(probe.wait(1) { $0.ended == "closed: draining" || $0.ended == "closed: disconnected" }, "\(String(describing: probe.snapshot.ended))")
        XCTAssertEqual(server.metrics.openStreams, 0)
    }
}
