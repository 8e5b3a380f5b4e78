import Foundation
import Glibc
import Synchronization
import TestSupport
import XCTest
@testable import HTTPServer
@testable import HTTPCore

/// Push streams (`HTTPResponse.eventChannel`, `ResponseStream.Producer.push`): no task, the producer keeps the channel
/// and pushes. The unhappy readers first: a reader that stops, one that leaves, a stream that never starts.
final class PushStreamTests: XCTestCase {
    final class Record: Sendable {
        struct State { var closed: String?; var abandoned = 0; var started = 0; var channel: EventChannel? }
        let state = Mutex(State())
        var snapshot: State { state.withLock { $0 } }
        func wait(_ seconds: Double = 5, _ condition: (State) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline { if condition(snapshot) { return true }; usleep(10_000) }
            return condition(snapshot)
        }
    }

    func start(_ record: Record, _ configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
        let router = Router()
        router.get("/hello") { _ in .response(.text("hello")) }
        // A channel kept by the test: the test pushes from its own thread.
        router.get("/push") { _ in
            .response(.eventChannel(abandoned: { record.state.withLock { $0.abandoned += 1 } }) { channel in
                channel.onClose { reason in record.state.withLock { $0.closed = reason.rawValue; $0.channel = nil } }
                record.state.withLock { $0.started += 1; $0.channel = channel }
                channel.send(event: "hello", data: "first")
            })
        }
        // The same, answered off the loop after a while (a client may leave meanwhile).
        router.get("/push/later") { _ in
            .async {
                try? await Task.sleep(nanoseconds: 300_000_000)
                return .eventChannel(abandoned: { record.state.withLock { $0.abandoned += 1 } }) { channel in
                    record.state.withLock { $0.started += 1 }
                    channel.finish()
                }
            }
        }
        return try startServer(router, loops: 2, configure)
    }

    func testAReaderThatStopsReadingEndsThePushStreamPastTheBoundAndItsProducerIsTold() throws {
        let record = Record()
        let server = try start(record) { $0.streams.stallTimeout = 30 }
        defer { stop(server) }
        let c = try RawClient(port: server.port, receiveBuffer: 4096)
        c.send("GET /push HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertTrue(record.wait { $0.channel != nil })
        let channel = try XCTUnwrap(record.snapshot.channel)
        // The producer cannot wait: it pushes 16 KiB pieces while the client reads nothing.
        let piece = String(repeating: "x", count: 16 * 1024)
        var pushed = 0
        while record.snapshot.closed == nil && pushed < 4_000 {
            channel.send(event: "flood", data: piece)
            pushed += 1
            usleep(500)
        }
        XCTAssertTrue(record.wait(5) { $0.closed != nil })
        XCTAssertEqual(record.snapshot.closed, "stalled", "past the high-water mark, long before the stall timeout")
        XCTAssertLessThan(pushed, 4_000)
        XCTAssertTrue(record.wait(2) { _ in server.metrics.openStreams == 0 && server.metrics.streamBufferedBytes == 0 })
        // Pushing after the end does nothing (and does not trap).
        channel.send(event: "late", data: "x")
        channel.finish()
    }

    func testAClientThatLeavesEndsThePushStreamAndItsProducerIsTold() throws {
        let record = Record()
        let server = try start(record)
        defer { stop(server) }
        do {
            let c = try RawClient(port: server.port)
            c.send("GET /push HTTP/1.1\r\nHost: t\r\n\r\n")
            XCTAssertEqual(c.readHead()?.status, 200)
            XCTAssertNotNil(c.readChunk())
        }
        XCTAssertTrue(record.wait(2) { $0.closed != nil })
        XCTAssertEqual(record.snapshot.closed, "disconnected")
        XCTAssertTrue(record.wait(1) { _ in server.metrics.openStreams == 0 })
    }

    func testEventsPushedFromAnyThreadArriveInOrderAndFinishEndsTheBody() throws {
        let record = Record()
        let server = try start(record)
        defer { stop(server) }
        let c = try RawClient(port: server.port)
        c.send("GET /push HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try XCTUnwrap(c.readHead())
        XCTAssertEqual(head.header("Content-Type"), "text/event-stream; charset=utf-8")
        XCTAssertTrue(record.wait { $0.channel != nil })
        let channel = try XCTUnwrap(record.snapshot.channel)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for i in 0..<50 { channel.send(event: "n", id: String(i), data: "\(i)") }
            channel.finish()
            done.signal()
        }
        done.wait()
        var text = ""
        while let chunk = c.readChunk(), !chunk.isEmpty { text += String(decoding: chunk, as: UTF8.self) }
        let ids = text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { Int($0.dropFirst(4))! }
        XCTAssertEqual(ids, Array(0..<50), "in the order pushed")
        XCTAssertTrue(text.hasPrefix("event: hello\ndata: first\n\n"))
        XCTAssertTrue(record.wait { $0.closed == "ended" })
        c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "hello", "the connection goes on after the body")
    }

    func testAPushStreamThatNeverStartsIsAbandoned() throws {
        let record = Record()
        let server = try start(record) { $0.streams.maxStreams = 1 }
        defer { stop(server) }
        // HEAD: the fields only.
        let head = try RawClient(port: server.port)
        head.send("HEAD /push HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(head.readResponse(head: true)?.status, 200)
        XCTAssertTrue(record.wait { $0.abandoned == 1 })
        // The server's stream limit: one open, the next refused.
        let first = try RawClient(port: server.port)
        first.send("GET /push HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(first.readHead()?.status, 200)
        let second = try RawClient(port: server.port)
        second.send("GET /push HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(second.readResponse()?.status, 503)
        XCTAssertTrue(record.wait { $0.abandoned == 2 })
        // A client gone before the answer was ready.
        do {
            let c = try RawClient(port: server.port)
            c.send("GET /push/later HTTP/1.1\r\nHost: t\r\n\r\n")
        }
        XCTAssertTrue(record.wait(3) { $0.abandoned == 3 })
        XCTAssertEqual(record.snapshot.started, 1, "only the stream that opened started")
    }
}
