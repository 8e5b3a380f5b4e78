import Foundation
import Glibc

public struct TestResponse {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]
    public var text: String { String(decoding: body, as: UTF8.self) }
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A blocking loopback client that speaks raw bytes, so tests can send anything.
public final class RawClient {
    public let fd: Int32
    private var buffer: [UInt8] = []

    /// `receiveBuffer`: SO_RCVBUF set before connecting (a reader whose kernel takes little). `from`: the loopback
    /// address the connection comes from (127.0.0.0/8 is all loopback: another client, as the server sees it).
    public init(port: Int, timeout: Double = 5, receiveBuffer: Int32? = nil, from source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if bound != 0 { let e = errno; Glibc.close(fd); throw NSError(domain: "bind", code: Int(e)) }
        }
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

    public func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    public func send(_ text: String) { send(Array(text.utf8)) }
    public func send(_ bytes: [UInt8]) {
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
    public func readResponse(head: Bool = false) -> TestResponse? {
        guard var response = readHead() else { return nil }
        let status = response.status
        let length = (head || status == 304 || status == 204 || status < 200) ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
        guard let body = readBytes(length) else { return nil }
        response.body = body
        return response
    }

    /// The next `count` bytes (nil on EOF or timeout first).
    public func readBytes(_ count: Int) -> [UInt8]? {
        while buffer.count < count { if !fill() { return nil } }
        let bytes = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// Reads a response head only (a streamed body follows).
    public func readHead() -> TestResponse? {
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
    public func readChunk() -> [UInt8]? {
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
    public func readToEOF() -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { let all = buffer; buffer.removeAll(); return all }
            if n < 0 { return nil }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Bytes read but not yet consumed by a reader above.
    public var unread: [UInt8] { buffer }

    /// True when the server closes the connection (EOF) within the receive timeout, with no further bytes.
    public func closedByPeer() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return buffer.isEmpty }
            if n < 0 { return errno == ECONNRESET }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    public func abortiveClose() {
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
