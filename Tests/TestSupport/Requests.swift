import Foundation
import HTTPServer

// The tests' one way to ask a server under test (docs/TESTING.md): a request written as given on a fresh loopback
// connection, its answer read whole (`RawClient`, the one raw client). A test that needs the bytes themselves — a
// malformed request, pipelining, a stream, a reader that stops — drives a `RawClient` itself.

extension TestResponse {
    /// One request, `request` sent as it is written, on a fresh connection; one response read whole (Content-Length or
    /// chunked; no body after HEAD, 204 or 304).
    public init(port: Int, request: String, timeout: Double = 5) throws {
        let client = try RawClient(port: port, timeout: timeout)
        client.send(request)
        guard let response = client.readWhole(head: request.hasPrefix("HEAD ")) else { throw NSError(domain: "no complete response", code: 2) }
        self = response
    }

    /// The body as a JSON object ([:] when it is none).
    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
    public var data: Data { Data(body) }
    /// The status and the body as a JSON object, for `let (status, body) = try get(…).statusAndJSON`.
    public var statusAndJSON: (Int, [String: Any]) { (status, json) }
    /// The same and the response itself (its fields: `header(_:)`).
    public var statusJSONAndResponse: (Int, [String: Any], TestResponse) { (status, json, self) }
}

/// A request's head as the helpers write it: the request line, `Host`, `headers` in name order, then `extra` lines.
func requestHead(_ method: String, _ target: String, version: String = "1.1", host: String, _ headers: [String: String], extra: String = "") -> String {
    var text = "\(method) \(target) HTTP/\(version)\r\nHost: \(host)\r\n"
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
    return text + extra + "\r\n"
}

/// `method target` with `headers` (besides `Host: 127.0.0.1:port`, and `Connection: close`) and `body`, to the server on
/// `port`.
public func get(_ port: Int, _ target: String, _ headers: [String: String] = [:], method: String = "GET", body: [UInt8] = [],
                version: String = "1.1") throws -> TestResponse {
    let length = !body.isEmpty || method == "POST" || method == "PUT" ? "Content-Length: \(body.count)\r\n" : ""
    let head = requestHead(method, target, version: version, host: "127.0.0.1:\(port)", headers, extra: length + "Connection: close\r\n")
    return try TestResponse(port: port, request: head + String(decoding: body, as: UTF8.self))
}

/// The same, to `server`.
public func get(_ server: HTTPServer, _ target: String, _ headers: [String: String] = [:], method: String = "GET", body: [UInt8] = [],
                version: String = "1.1") throws -> TestResponse {
    try get(server.port, target, headers, method: method, body: body, version: version)
}

extension RawClient {
    /// `GET target` on this kept-alive connection and its response: for a test that asks many times on one connection.
    public func get(_ target: String, _ headers: [String: String] = [:]) throws -> TestResponse {
        send(requestHead("GET", target, host: "t", headers))
        guard let response = readWhole() else { throw NSError(domain: "no complete response", code: 2) }
        return response
    }
}

extension RawClient {
    /// One response read whole: a chunked body's chunks joined (a streamed answer, to its last chunk), else
    /// Content-Length's bytes.
    public func readWhole(head: Bool = false) -> TestResponse? {
        guard !head else { return readResponse(head: true) }
        guard var response = readHead() else { return nil }
        let status = response.status
        if status == 304 || status == 204 || status < 200 { return response }
        if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            var body: [UInt8] = []
            while let chunk = readChunk() {
                if chunk.isEmpty { response.body = body; return response }
                body += chunk
            }
            return nil
        }
        guard let body = readBytes(Int(response.header("Content-Length") ?? "0") ?? 0) else { return nil }
        response.body = body
        return response
    }
}
