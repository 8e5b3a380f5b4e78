import Foundation
import Glibc
import HTTPClient
import HTTPServer
import TestSupport
import XCTest
@testable import HTTPCore

/// A TCP server on loopback whose every connection runs a script with blocking I/O: for answers no real
/// server would send (resets, hangs, trickles, garbage).
final class ScriptedServer: @unchecked Sendable {   // @unchecked: `accepted` is only touched under `lock`; the rest is set once.
    let fd: Int32
    var port = 0
    private let lock = NSLock()
    private var accepted = 0
    var connections: Int { lock.withLock { accepted } }

    init(_ script: @escaping @Sendable (Int32, Int) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET); addr.sin_port = 0; addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        listen(fd, 64)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        port = Int(UInt16(bigEndian: addr.sin_port))
        let listener = fd
        Thread.detachNewThread { [self] in
            while true {
                let c = accept(listener, nil, nil)
                if c < 0 { return }
                let n = lock.withLock { accepted += 1; return accepted }
                Thread.detachNewThread { script(c, n); close(c) }
            }
        }
    }

    func stop() { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }

    /// Reads one request head (and a Content-Length body); nil at EOF.
    static func readRequest(_ fd: Int32) -> String? { readMessage(fd)?.head }

    /// Reads one message: its head and its Content-Length body; nil at EOF.
    static func readMessage(_ fd: Int32) -> (head: String, body: [UInt8])? {
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = data.indices.dropLast(3).first(where: { data[$0] == 13 && data[$0 + 1] == 10 && data[$0 + 2] == 13 && data[$0 + 3] == 10 }) {
                let head = String(decoding: data[..<end], as: UTF8.self)
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                while data.count < end + 4 + length {
                    let n = recv(fd, &chunk, chunk.count, 0)
                    if n <= 0 { return nil }
                    data += chunk[0..<n]
                }
                return (head, Array(data[(end + 4)..<(end + 4 + length)]))
            }
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return nil }
            data += chunk[0..<n]
        }
    }

    static func write(_ fd: Int32, _ text: String) { write(fd, Array(text.utf8)) }
    static func write(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Closes with a reset (RST) instead of a FIN.
    static func reset(_ fd: Int32) {
        var l = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
    }
}

final class ClientTests: XCTestCase {
    var server: HTTPServer!
    var client: HTTPClient!

    override func setUpWithError() throws {
        let router = Router()
        router.get("/hello") { _ in .response(HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("hello".utf8))) }
        router.get("/slow") { _ in .async { try? await Task.sleep(nanoseconds: 150_000_000); return HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("slow".utf8)) } }
        router.get("/big") { _ in .response(HTTPResponse(status: 200, contentType: "application/json", bytes: Array(repeating: 65, count: 200_000))) }
        router.post("/echo") { ctx in .response(HTTPResponse(status: 200, contentType: "text/plain", bytes: ctx.request.body)) }
        server = try startServer(router) { $0.timeouts.idle = 0.3 }
        client = try HTTPClient(configuration: .init(loops: 1, connectionsPerOrigin: 4, maxResponseBytes: 1 << 20))
    }

    override func tearDown() {
        client.shutdown()
        server.shutdown(); server.waitUntilStopped()
    }

    var base: String { "http://127.0.0.1:\(server.port)" }
    var origin: String { "http://127.0.0.1:\(server.port)" }

    func testKeepAliveReusesPooledConnections() async throws {
        for _ in 0..<20 {
            let r = try await client.execute(ClientRequest(url: base + "/hello"), timeout: 2)
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(String(decoding: r.body, as: UTF8.self), "hello")
        }
        let row = client.metrics.row(origin)
        XCTAssertEqual(row.created, 1, "20 sequential requests, one connection")
        XCTAssertEqual(row.requests, 20)
        let client = self.client!, base = self.base
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 { group.addTask { let r = try await client.execute(ClientRequest(url: base + "/hello"), timeout: 2); XCTAssertEqual(r.status, 200) } }
            try await group.waitForAll()
        }
        XCTAssertLessThanOrEqual(client.metrics.row(origin).created, 4, "never more than the pool size")
        XCTAssertTrue(client.metrics.render().contains("http_client_connections_created_total{origin=\"\(origin)\"}"))
    }

    func testABusyPoolQueuesWithinTheDeadline() async throws {
        let small = try HTTPClient(configuration: .init(loops: 1, connectionsPerOrigin: 1))
        defer { small.shutdown() }
        let start = Date()
        let base = self.base
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<3 { group.addTask { try await small.execute(ClientRequest(url: base + "/slow"), timeout: 2).status } }
            for try await s in group { XCTAssertEqual(s, 200) }
        }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.4, "one connection: one after another")
        XCTAssertEqual(small.metrics.row(origin).created, 1)
        XCTAssertGreaterThanOrEqual(small.metrics.row(origin).queued, 2)
        // A queued request whose deadline passes before a connection frees up times out.
        async let first = small.execute(ClientRequest(url: base + "/slow"), timeout: 2)
        try await Task.sleep(nanoseconds: 20_000_000)
        do { _ = try await small.execute(ClientRequest(url: base + "/slow"), timeout: 0.05); XCTFail("queued past its deadline") } catch {
            XCTAssertEqual(error, .timeout)
        }
        _ = try await first
    }

    func testAnIdleConnectionTheServerClosedIsReplaced() async throws {
        _ = try await client.execute(ClientRequest(url: base + "/hello"), timeout: 2)
        try await Task.sleep(nanoseconds: 600_000_000)   // past the server's idle timeout: it closed the connection
        let r = try await client.execute(ClientRequest(url: base + "/hello"), timeout: 2)
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(client.metrics.row(origin).created, 2)
        XCTAssertEqual(client.metrics.row(origin).open, 1)
    }

    /// A prepared request (URL parsed, head written once) is sent again and again with per-call fields and bodies,
    /// on the same pooled connection; per-call fields are checked like any other; a bad URL fails when preparing.
    func testAPreparedRequestIsSentManyTimesWithPerCallFieldsAndBodies() async throws {
        let hello = try PreparedRequest(url: base + "/hello", headers: ["Accept": "text/plain"])
        for i in 0..<5 {
            let r = try await client.execute(hello, headers: ["X-Call": "\(i)"], timeout: 2)
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(String(decoding: r.body, as: UTF8.self), "hello")
        }
        let echo = try PreparedRequest(method: "POST", url: base + "/echo", headers: ["Content-Type": "text/plain"])
        for word in ["ping", "pong"] {
            let r = try await client.execute(echo, body: Array(word.utf8), timeout: 2)
            XCTAssertEqual(String(decoding: r.body, as: UTF8.self), word)
        }
        XCTAssertEqual(client.metrics.row(origin).created, 1, "one kept-alive connection for all seven")
        do { _ = try await client.execute(hello, headers: ["X-Bad": "a\r\nInjected: 1"], timeout: 2); XCTFail("CRLF in a field") } catch {
            guard case .invalidURL = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try PreparedRequest(url: "ftp://example.org/"))
        XCTAssertThrowsError(try PreparedRequest(url: base + "/", headers: ["Bad Name": "x"]))
    }

    func testPostBodyAndLargeBodies() async throws {
        let r = try await client.execute(ClientRequest(method: "POST", url: base + "/echo", headers: ["Content-Type": "text/plain"], body: Array("ping".utf8)), timeout: 2)
        XCTAssertEqual(String(decoding: r.body, as: UTF8.self), "ping")
        let big = try await client.execute(ClientRequest(url: base + "/big", headers: ["Accept-Encoding": "gzip"]), timeout: 2)
        XCTAssertEqual(big.body.count, 200_000, "gzip answer inflated")
        XCTAssertEqual(big.head.value("Content-Encoding"), "gzip")
        let tiny = try HTTPClient(configuration: .init(maxResponseBytes: 100_000))
        defer { tiny.shutdown() }
        do { _ = try await tiny.execute(ClientRequest(url: base + "/big"), timeout: 2); XCTFail() } catch { XCTAssertEqual(error, .tooLarge) }
        do { _ = try await tiny.execute(ClientRequest(url: base + "/big", headers: ["Accept-Encoding": "gzip"]), timeout: 2); XCTFail() } catch {
            XCTAssertEqual(error, .tooLarge, "the cap holds after inflating too")
        }
    }

    func testAKeptAliveConnectionClosedUnderARequestIsRetriedOnceForIdempotentRequests() async throws {
        // Each connection answers its first request with keep-alive, then closes on the second without a word.
        let scripted = try ScriptedServer { fd, _ in
            guard ScriptedServer.readRequest(fd) != nil else { return }
            ScriptedServer.write(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            _ = ScriptedServer.readRequest(fd)
        }
        defer { scripted.stop() }
        let url = "http://127.0.0.1:\(scripted.port)/x"
        for _ in 0..<3 {
            let r = try await client.execute(ClientRequest(url: url), timeout: 2)
            XCTAssertEqual(String(decoding: r.body, as: UTF8.self), "ok")
        }
        XCTAssertGreaterThanOrEqual(client.metrics.row("http://127.0.0.1:\(scripted.port)").retries, 1)
        do { _ = try await client.execute(ClientRequest(method: "POST", url: url, body: [1]), timeout: 2); XCTFail("POST is not sent twice") } catch {
            XCTAssertEqual(error, .reset)
        }
    }

    func testBrokenAnswersFailCleanly() async throws {
        let cases: [(String, HTTPClientError, @Sendable (Int32) -> Void)] = [
            ("reset mid-body", .reset, { fd in
                ScriptedServer.write(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"); usleep(20_000); ScriptedServer.reset(fd) }),
            ("hang after headers", .timeout, { fd in ScriptedServer.write(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"); usleep(1_000_000) }),
            ("slow trickle", .timeout, { fd in
                ScriptedServer.write(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
                for _ in 0..<20 { ScriptedServer.write(fd, "x"); usleep(50_000) } }),
            ("bad chunk size", .malformed("a chunk size is not hexadecimal"), { fd in
                ScriptedServer.write(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n") }),
            ("garbage status line", .malformed("the status line is not 'HTTP/1.x NNN reason'"), { fd in ScriptedServer.write(fd, "HELLO THERE\r\n\r\n") }),
            ("oversized", .tooLarge, { fd in ScriptedServer.write(fd, "HTTP/1.1 200 OK\r\nContent-Length: 9999999\r\n\r\n") }),
            ("closed without answer", .reset, { _ in }),
            ("corrupt gzip", .malformed("the gzip body is corrupt"), { fd in
                ScriptedServer.write(fd, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnope") }),
        ]
        for (name, want, script) in cases {
            let scripted = try ScriptedServer { fd, _ in _ = ScriptedServer.readRequest(fd); script(fd) }
            defer { scripted.stop() }
            let start = Date()
            do { _ = try await client.execute(ClientRequest(url: "http://127.0.0.1:\(scripted.port)/"), timeout: 0.4); XCTFail(name) } catch {
                XCTAssertEqual(error, want, name)
            }
            XCTAssertLessThan(Date().timeIntervalSince(start), 1.5, "\(name): within the deadline")
            XCTAssertEqual(client.metrics.row("http://127.0.0.1:\(scripted.port)").open, 0, "\(name): the connection is not kept")
        }
    }

    func testNothingListeningAndBadURLs() async {
        do { _ = try await client.execute(ClientRequest(url: "http://127.0.0.1:1/"), timeout: 1); XCTFail() } catch {
            guard case .connect = error else { XCTFail("\(error)"); return }
        }
        for url in ["ftp://x/", "http://user@host/", "/relative", "http://[::1/"] {
            do { _ = try await client.execute(ClientRequest(url: url), timeout: 1); XCTFail(url) } catch {
                guard case .invalidURL = error else { XCTFail("\(url): \(error)"); continue }
            }
        }
    }
}
