import Foundation
import Glibc
@testable import HTTPServer

struct TestResponse {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A blocking loopback client that speaks raw bytes, so tests can send anything.
final class RawClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// `receiveBuffer`: SO_RCVBUF set before connecting (a reader whose kernel takes little).
    init(port: Int, timeout: Double = 5, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if rc != 0 { let e = errno; Glibc.close(fd); throw NSError(domain: "connect", code: Int(e)) }
        setTimeout(timeout)
    }

    func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) { send(Array(text.utf8)) }
    func send(_ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            off += n
        }
    }

    /// Reads more bytes; false on EOF, error or timeout.
    @discardableResult
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { return false }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    /// Reads one response. `head`: the request was HEAD (no body follows).
    func readResponse(head: Bool = false) -> TestResponse? {
        guard var response = readHead() else { return nil }
        let status = response.status
        let length = (head || status == 304 || status == 204 || status < 200) ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
        while buffer.count < length { if !fill() { return nil } }
        response.body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return response
    }

    /// Reads a response head only (a streamed body follows).
    func readHead() -> TestResponse? {
        while true {
            if let end = find([13, 10, 13, 10]) {
                let headText = String(decoding: buffer[0..<end], as: UTF8.self)
                var lines = headText.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
                var headers: [String: String] = [:]
                for l in lines {
                    guard let c = l.firstIndex(of: ":") else { continue }
                    headers[l[..<c].lowercased()] = l[l.index(after: c)...].trimmingCharacters(in: .whitespaces)
                }
                buffer.removeFirst(end + 4)
                return TestResponse(status: status, headers: headers, body: [])
            }
            if !fill() { return nil }
        }
    }

    /// Reads one chunk of a chunked body, strictly: its data, [] for the last chunk (with its empty trailer), nil on
    /// a framing error, EOF or timeout.
    func readChunk() -> [UInt8]? {
        while true {
            if let lineEnd = find([13, 10]) {
                guard lineEnd > 0, let size = Int(String(decoding: buffer[0..<lineEnd], as: UTF8.self), radix: 16) else { return nil }
                let need = lineEnd + 2 + size + 2
                while buffer.count < need { if !fill() { return nil } }
                guard buffer[need - 2] == 13, buffer[need - 1] == 10 else { return nil }
                let data = Array(buffer[(lineEnd + 2)..<(lineEnd + 2 + size)])
                buffer.removeFirst(need)
                return data
            }
            if !fill() { return nil }
        }
    }

    /// Every byte until the server closes the connection (or the receive timeout: nil).
    func readToEOF() -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { let all = buffer; buffer.removeAll(); return all }
            if n < 0 { return nil }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Bytes read but not yet consumed by a reader above.
    var unread: [UInt8] { buffer }

    /// True when the server closes the connection (EOF) within the receive timeout, with no further bytes.
    func closedByPeer() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return buffer.isEmpty }
            if n < 0 { return errno == ECONNRESET }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    func abortiveClose() {
        var l = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        for i in 0...(buffer.count - needle.count) where buffer[i] == needle[0] && Array(buffer[i..<(i + needle.count)]) == needle { return i }
        return nil
    }
}

/// Starts a real server on an ephemeral loopback port with test routes.
/// A server configuration for tests: loopback, an ephemeral port, two loops, short ticks, drain and linger.
func testConfiguration(_ configure: (inout ServerConfiguration) -> Void) -> ServerConfiguration {
    var config = ServerConfiguration()
    config.host = "127.0.0.1"
    config.port = 0
    config.loops = 2
    config.accessLog = false
    config.tickInterval = 0.05
    config.timeouts.drain = 5
    config.timeouts.linger = 0.5
    configure(&config)
    return config
}

func startTestServer(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
    let config = testConfiguration(configure)
    let router = Router()
    router.get("/hello") { _ in .response(.text("hello")) }
    router.post("/echo") { ctx in .response(HTTPResponse(status: 200, contentType: "application/octet-stream", bytes: ctx.request.body)) }
    router.get("/slow") { ctx in
        let ms = Int(ctx.request.queryParameter("ms") ?? "200") ?? 200
        return .async {
            try? await Task.sleep(nanoseconds: UInt64(ms) * 1_000_000)
            return .text("slow \(ms)")
        }
    }
    router.get("/big") { _ in .response(.json(Array(("[" + (0..<300).map { "\"item \($0)\"" }.joined(separator: ",") + "]").utf8))) }
    let cached = PreparedBody(contentType: "application/json", bytes: Array(("{\"list\":[" + (0..<300).map { "\($0)" }.joined(separator: ",") + "]}").utf8))
    router.get("/cached") { _ in .response(.prepared(cached)) }
    let parts = (0..<4).map { i in BodyFragment("[" + (0..<200).map { "\"part \(i) item \($0)\"" }.joined(separator: ",") + "]") }
    router.get("/assembled") { ctx in
        var body = AssembledBody()
        body.append(literal: "{\"who\":\"\(ctx.request.queryParameter("who") ?? "")\",\"parts\":[")
        for (i, p) in parts.enumerated() {
            if i > 0 { body.append(literal: ",") }
            body.append(p)
        }
        body.append(literal: "]}")
        return .response(.assembled(body, headers: ["Cache-Control": "private, max-age=60"]))
    }
    router.get("/items/{id}") { ctx in .response(.text("item \(ctx.parameter("id") ?? "")")) }
    // Large bodies (sent from their own storage): 300 KB of a repeating, position-dependent pattern.
    let largeBytes: [UInt8] = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    let largePrepared = PreparedBody(contentType: "application/octet-stream", bytes: largeBytes)
    router.get("/large") { ctx in
        ctx.request.queryParameter("shared") == "1" ? .response(.prepared(largePrepared)) : .response(HTTPResponse(status: 200, contentType: "application/octet-stream", bytes: largeBytes))
    }
    let server = HTTPServer(configuration: config, router: router, logger: Logger(level: ProcessInfo.processInfo.environment["LEDE_TEST_LOG"] == nil ? .off : .debug))
    try server.start()
    return server
}

func stop(_ server: HTTPServer) {
    server.shutdown()
    server.waitUntilStopped()
}
