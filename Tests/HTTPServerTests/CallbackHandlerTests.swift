import Dispatch
import EventLoops
import Foundation
import Synchronization
import TestSupport
import XCTest
@testable import HTTPServer
@testable import HTTPCore

/// Handlers that answer through a `Responder` (`.callback`) instead of a task: at once, later on the loop, from
/// another thread, never (dropped), twice, or after their client has gone.
final class CallbackHandlerTests: XCTestCase {
    /// Responders a handler parked for the test to answer.
    final class Parked: Sendable {
        let responders = Mutex<[Responder]>([])
        func park(_ r: Responder) { responders.withLock { $0.append(r) } }
        func take() -> [Responder] { responders.withLock { all in defer { all.removeAll() }; return all } }
        var count: Int { responders.withLock { $0.count } }
    }

    var server: HTTPServer!
    let parked = Parked()

    override func setUpWithError() throws {
        let router = Router()
        router.get("/hello") { _ in .response(.text("hello")) }
        router.get("/now") { _ in .callback { $0.respond(.text("now")) } }
        router.get("/loop") { _ in
            .callback { responder in
                let loop = EventLoop.current!
                // Answered on the loop, in a later wake-up than the dispatch.
                loop.execute { responder.respond(.text(loop.inLoop ? "on the loop" : "elsewhere")) }
            }
        }
        router.get("/thread") { ctx in
            let ms = Int(ctx.request.queryParameter("ms") ?? "50") ?? 50
            return .callback { responder in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(ms)) { responder.respond(.text("thread \(ms)")) }
            }
        }
        router.get("/dropped") { _ in .callback { _ in } }
        router.get("/twice") { _ in
            .callback { responder in
                responder.respond(.text("first"))
                responder.respond(.text("second"))
            }
        }
        let parked = self.parked
        router.get("/parked") { _ in .callback { parked.park($0) } }
        server = try startServer(router, loops: 2)
    }

    override func tearDown() {
        for r in parked.take() { r.respond(.text("late")) }
        stop(server)
    }

    func client() throws -> RawClient { try RawClient(port: server.port) }

    func testAnAnswerGivenAtOnceIsWrittenAndTheConnectionGoesOn() throws {
        let c = try client()
        for path in ["/now", "/hello", "/now", "/loop", "/now"] {
            c.send("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
            let r = try XCTUnwrap(c.readResponse(), path)
            XCTAssertEqual(r.status, 200, path)
        }
    }

    func testAnAnswerLaterOnTheLoopOrFromAnotherThreadArrives() throws {
        let c = try client()
        c.send("GET /loop HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "on the loop")
        c.send("GET /thread?ms=30 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "thread 30")
    }

    func testPipelinedRequestsBehindACallbackAreAnsweredInOrder() throws {
        let c = try client()
        c.send("GET /thread?ms=120 HTTP/1.1\r\nHost: t\r\n\r\nGET /now HTTP/1.1\r\nHost: t\r\n\r\nGET /hello HTTP/1.1\r\nHost: t\r\n\r\nGET /loop HTTP/1.1\r\nHost: t\r\n\r\nGET /thread?ms=10 HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "thread 120")
        XCTAssertEqual(c.readResponse()?.text, "now")
        XCTAssertEqual(c.readResponse()?.text, "hello")
        XCTAssertEqual(c.readResponse()?.text, "on the loop")
        XCTAssertEqual(c.readResponse()?.text, "thread 10")
    }

    func testADroppedResponderAnswers500AndTheConnectionGoesOn() throws {
        let c = try client()
        c.send("GET /dropped HTTP/1.1\r\nHost: t\r\n\r\n")
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.status, 500)
        XCTAssertEqual(r.header("Content-Type"), "application/problem+json")
        c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "hello")
    }

    func testOnlyTheFirstAnswerCounts() throws {
        let c = try client()
        c.send("GET /twice HTTP/1.1\r\nHost: t\r\n\r\nGET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "first")
        XCTAssertEqual(c.readResponse()?.text, "hello", "the second answer was not written as the next request's")
        c.setTimeout(0.3)
        XCTAssertNil(c.readResponse(), "nothing more was written")
    }

    func testAnAnswerAfterTheClientLeftIsDroppedAndTheServerGoesOn() throws {
        var gone: RawClient? = try client()
        gone!.send("GET /parked HTTP/1.1\r\nHost: t\r\n\r\n")
        let deadline = Date().addingTimeInterval(5)
        while parked.count == 0 && Date() < deadline { usleep(2_000) }
        XCTAssertEqual(parked.count, 1)
        gone!.abortiveClose()
        gone = nil
        usleep(100_000)   // the server sees the reset and closes its side
        for r in parked.take() { r.respond(.text("late")) }
        let c = try client()
        c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(c.readResponse()?.text, "hello")
        let settled = Date().addingTimeInterval(2)
        while server.metrics.openConnections != 1 && Date() < settled { usleep(5_000) }
        XCTAssertEqual(server.metrics.openConnections, 1, "the abandoned connection is gone, the new one open")
    }

    func testACallbackInFlightIsWaitedForByTheDrain() throws {
        let c = try client()
        c.send("GET /thread?ms=300 HTTP/1.1\r\nHost: t\r\n\r\n")
        usleep(50_000)
        server.shutdown()
        let r = try XCTUnwrap(c.readResponse())
        XCTAssertEqual(r.text, "thread 300")
        XCTAssertEqual(r.header("Connection"), "close")
    }
}
