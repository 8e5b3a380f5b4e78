import Foundation
import HTTPClient
import HTTPServer
import EventLoops
import Synchronization
import TestSupport
import XCTest
@testable import HTTPCore

/// A handler's upstream call on a server loop: the client keeps its pool on that loop, the request goes out
/// and the answer comes back on the loop's own thread, and the handler resumes there.
final class SharedLoopTests: XCTestCase {
    final class Seen: @unchecked Sendable {   // @unchecked: only touched under `lock`.
        let lock = NSLock()
        var sameLoop = 0, otherThread = 0
        func record(_ same: Bool) { lock.withLock { if same { sameLoop += 1 } else { otherThread += 1 } } }
    }

    func testAHandlersUpstreamCallStaysOnItsLoop() async throws {
        let up = try upstream()
        defer { up.shutdown(); up.waitUntilStopped() }
        let client = try HTTPClient(configuration: .init(loops: 1, connectionsPerOrigin: 2))
        defer { client.shutdown() }
        let seen = Seen()
        let url = "http://127.0.0.1:\(up.port)/n"
        let server = try front(loops: 2) { router in
            router.get("/fan") { _ in
                .async {
                    let before = EventLoop.current
                    do {
                        let r = try await client.execute(ClientRequest(url: url), timeout: 2)
                        seen.record(before != nil && EventLoop.current === before)
                        return HTTPResponse(status: r.status, contentType: "application/json", bytes: r.body)
                    } catch {
                        return HTTPResponse(status: 502, contentType: "text/plain", bytes: Array("\(error)".utf8))
                    }
                }
            }
        }
        defer { server.shutdown(); server.waitUntilStopped() }
        try await eightClients(port: server.port)
        XCTAssertEqual(seen.sameLoop, 200, "every call resumed on the loop it started on")
        XCTAssertEqual(seen.otherThread, 0)
        let row = client.metrics.row(url.replacingOccurrences(of: "/n", with: ""))
        XCTAssertEqual(row.requests, 200)
        XCTAssertLessThanOrEqual(row.created, 4, "two server loops, a pool of two on each")
        // Off the loops (here, a test's task) the client's own loop serves the same origin.
        let r = try await client.execute(ClientRequest(url: url), timeout: 2)
        XCTAssertEqual(r.status, 200)
    }

    /// Eight keep-alive clients, 25 requests each to `/fan`, at once; every answer `{"n":1}`.
    func eightClients(port: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let s = try RawClient(port: port)
                    for _ in 0..<25 {
                        let r = try s.get("/fan"); let (status, body) = (r.status, r.text)
                        XCTAssertEqual(status, 200, body)
                        XCTAssertEqual(body, #"{"n":1}"#)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// An upstream on loopback answering `/n` with `{"n":1}`.
    func upstream() throws -> HTTPServer {
        let router = Router()
        router.get("/n") { _ in .response(HTTPResponse(status: 200, contentType: "application/json", bytes: Array(#"{"n":1}"#.utf8))) }
        let server = try startServer(router)
        return server
    }

    func front(loops: Int, _ routes: (Router) -> Void) throws -> HTTPServer {
        let router = Router()
        routes(router)
        let server = try startServer(router, loops: loops)
        return server
    }

    func testACallbackCallOnAServerLoopIsAnsweredOnThatLoopWithoutATask() async throws {
        let up = try upstream()
        defer { up.shutdown(); up.waitUntilStopped() }
        let client = try HTTPClient(configuration: .init(loops: 1, connectionsPerOrigin: 2))
        defer { client.shutdown() }
        let prepared = try PreparedRequest(url: "http://127.0.0.1:\(up.port)/n", headers: ["Accept": "application/json"])
        let seen = Seen()
        let server = try front(loops: 2) { router in
            router.get("/fan") { _ in
                .callback { responder in
                    let loop = EventLoop.current
                    client.execute(prepared, headers: ["Authorization": "Bearer t"], timeout: 2) { result in
                        seen.record(loop != nil && EventLoop.current === loop && withUnsafeCurrentTask { $0 == nil })
                        switch result {
                        case .success(let r): responder.respond(HTTPResponse(status: r.status, contentType: "application/json", bytes: r.body))
                        case .failure(let e): responder.respond(HTTPResponse(status: 502, contentType: "text/plain", bytes: Array("\(e)".utf8)))
                        }
                    }
                }
            }
        }
        defer { server.shutdown(); server.waitUntilStopped() }
        try await eightClients(port: server.port)
        XCTAssertEqual(seen.sameLoop, 200, "every answer came back on the loop that made the call, outside any task")
        XCTAssertEqual(seen.otherThread, 0)
        let row = client.metrics.row("http://127.0.0.1:\(up.port)")
        XCTAssertEqual(row.requests, 200)
        XCTAssertLessThanOrEqual(row.created, 4, "two server loops, a pool of two on each")
    }

    func testACallbackMayMakeTheNextCallOnTheConnectionItWasAnsweredOn() throws {
        let up = try upstream()
        defer { up.shutdown(); up.waitUntilStopped() }
        let client = try HTTPClient(configuration: .init(loops: 1, connectionsPerOrigin: 4))
        defer { client.shutdown() }
        let prepared = try PreparedRequest(url: "http://127.0.0.1:\(up.port)/n")
        let server = try front(loops: 1) { router in
            router.get("/chain") { _ in
                .callback { responder in
                    // Three calls, each made from inside the previous one's callback.
                    @Sendable func call(_ left: Int, _ bodies: String) {
                        client.execute(prepared, timeout: 2) { result in
                            guard case .success(let r) = result else { responder.respond(.text("failed")); return }
                            let all = bodies + String(decoding: r.body, as: UTF8.self)
                            if left == 1 { responder.respond(.text(all)) } else { call(left - 1, all) }
                        }
                    }
                    call(3, "")
                }
            }
        }
        defer { server.shutdown(); server.waitUntilStopped() }
        let s = try RawClient(port: server.port)
        for _ in 0..<5 {
            let r = try s.get("/chain"); let (status, body) = (r.status, r.text)
            XCTAssertEqual(status, 200)
            XCTAssertEqual(body, String(repeating: #"{"n":1}"#, count: 3))
        }
        let row = client.metrics.row("http://127.0.0.1:\(up.port)")
        XCTAssertEqual(row.requests, 15)
        XCTAssertEqual(row.created, 1, "each next call took the connection its predecessor had just given back")
    }

    final class Answers: Sendable {
        let list = Mutex<[Result<ClientResponse, HTTPClientError>]>([])
        func add(_ r: Result<ClientResponse, HTTPClientError>) { list.withLock { $0.append(r) } }
        var count: Int { list.withLock { $0.count } }
        var errors: [HTTPClientError] { list.withLock { $0.compactMap { if case .failure(let e) = $0 { return e } else { return nil } } } }
    }

    func testACallbackIsAnsweredExactlyOnceWhenTheCallFailsOrIsRefused() throws {
        let client = try HTTPClient(configuration: .init(loops: 1))
        defer { client.shutdown() }
        // A port nobody listens on.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in(); addr.sin_family = sa_family_t(AF_INET); addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &len) } }
        let port = Int(UInt16(bigEndian: addr.sin_port))
        close(probe)

        let answers = Answers()
        let refused = try PreparedRequest(url: "http://127.0.0.1:\(port)/n")
        client.execute(refused, timeout: 2) { answers.add($0) }
        // A per-call field with a line break (in the list or as the call field's value), or a call field's value for a
        // request that names no call field, is refused before anything is sent, before `execute` returns; a call field
        // whose name is not a token is refused when the request is prepared. (Each is counted on its own: the refused
        // connection above is answered on the client's loop whenever it fails.)
        let credentialed = try PreparedRequest(url: "http://127.0.0.1:\(port)/n", callField: "Authorization")
        XCTAssertThrowsError(try PreparedRequest(url: "http://127.0.0.1:\(port)/n", callField: "Bad Name"))
        let invalid: [(PreparedRequest, HTTPHeaders, String?)] = [
            (refused, ["Authorization": "Bearer a\r\nX-Smuggled: 1"], nil), (credentialed, [:], "Bearer a\nX-Smuggled: 1"), (refused, [:], "v"),
        ]
        for (request, headers, fieldValue) in invalid {
            let now = Answers()
            client.execute(request, headers: headers, fieldValue: fieldValue, timeout: 2) { now.add($0); answers.add($0) }
            XCTAssertEqual(now.count, 1, "answered before execute returned")
            if case .invalidURL = now.errors.first {} else { XCTFail("\(now.errors)") }
        }
        let deadline = Date().addingTimeInterval(5)
        while answers.count < 4 && Date() < deadline { usleep(5_000) }
        usleep(100_000)   // time for a second answer that must not come
        XCTAssertEqual(answers.count, 4)
        let errors = answers.errors
        XCTAssertEqual(errors.count, 4)
        XCTAssertEqual(errors.filter { if case .invalidURL = $0 { return true } else { return false } }.count, 3)
        XCTAssertEqual(errors.filter { if case .connect = $0 { return true } else { return false } }.count, 1)
    }

    func testACallbackCallOffTheServerLoopsIsAnsweredOnTheClientsOwnLoop() throws {
        let up = try upstream()
        defer { up.shutdown(); up.waitUntilStopped() }
        let client = try HTTPClient(configuration: .init(loops: 1))
        defer { client.shutdown() }
        let onLoop = Mutex<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        client.execute(try PreparedRequest(url: "http://127.0.0.1:\(up.port)/n"), timeout: 2) { result in
            onLoop.withLock { $0 = EventLoop.current != nil && (try? result.get().status) == 200 }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(onLoop.withLock { $0 }, true)
    }
}
