import Foundation
import HTTPClient
import HTTPServer
import EventLoops
import XCTest

/// A handler's upstream call on a server loop: the client keeps its pool on that loop, the request goes out
/// and the answer comes back on the loop's own thread, and the handler resumes there.
final class SharedLoopTests: XCTestCase {
    final class Seen: @unchecked Sendable {   // @unchecked: only touched under `lock`.
        let lock = NSLock()
        var sameLoop = 0, otherThread = 0
        func record(_ same: Bool) { lock.withLock { if same { sameLoop += 1 } else { otherThread += 1 } } }
    }

    func testAHandlersUpstreamCallStaysOnItsLoop() async throws {
        let upstreamRouter = Router()
        upstreamRouter.get("/n") { _ in .response(HTTPResponse(status: 200, contentType: "application/json", bytes: Array(#"{"n":1}"#.utf8))) }
        var config = ServerConfiguration()
        config.host = "127.0.0.1"; config.port = 0; config.loops = 1; config.accessLog = false
        let upstream = HTTPServer(configuration: config, router: upstreamRouter, logger: Logger(level: .off))
        try upstream.start()
        defer { upstream.shutdown(); upstream.waitUntilStopped() }

        let client = try HTTPClient(configuration: .init(loops: 1, connectionsPerOrigin: 2))
        defer { client.shutdown() }
        let seen = Seen()
        let url = "http://127.0.0.1:\(upstream.port)/n"
        let frontRouter = Router()
        frontRouter.get("/fan") { _ in
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
        config.loops = 2
        let front = HTTPServer(configuration: config, router: frontRouter, logger: Logger(level: .off))
        try front.start()
        defer { front.shutdown(); front.waitUntilStopped() }

        // Eight keep-alive clients, 25 requests each, at once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let s = try TestConnection(port: front.port)
                    for _ in 0..<25 {
                        let (status, body) = try s.get("/fan")
                        XCTAssertEqual(status, 200, body)
                        XCTAssertEqual(body, #"{"n":1}"#)
                    }
                }
            }
            try await group.waitForAll()
        }
        XCTAssertEqual(seen.sameLoop, 200, "every call resumed on the loop it started on")
        XCTAssertEqual(seen.otherThread, 0)
        let row = client.metrics.row("http://127.0.0.1:\(upstream.port)")
        XCTAssertEqual(row.requests, 200)
        XCTAssertLessThanOrEqual(row.created, 4, "two server loops, a pool of two on each")
        // Off the loops (here, a test's task) the client's own loop serves the same origin.
        let r = try await client.execute(ClientRequest(url: url), timeout: 2)
        XCTAssertEqual(r.status, 200)
    }
}

/// A blocking keep-alive HTTP/1.1 connection for tests: one request at a time, Content-Length answers.
final class TestConnection {
    let fd: Int32
    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET); addr.sin_port = in_port_t(UInt16(port).bigEndian); addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else { throw NSError(domain: "connect", code: Int(errno)) }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }
    deinit { close(fd) }

    func get(_ path: String) throws -> (Int, String) {
        ScriptedServer.write(fd, "GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
        guard let (head, body) = ScriptedServer.readMessage(fd) else { throw NSError(domain: "closed", code: 0) }
        return (Int(head.split(separator: " ")[1]) ?? 0, String(decoding: body, as: UTF8.self))
    }
}
