/// Serialises a response head and body into bytes, adding the server's own fields and choosing the
/// representation (gzip or identity, 304 for a matching ETag).
enum ResponseEncoder {
    /// Bodies at least this large are sent from their own storage instead of being copied after the head.
    static let separateBodyThreshold = 4096

    /// Appends the response head (and a small body) to `out`. Returns the body size, and the body itself when it
    /// is large enough to be sent separately (it is then not appended).
    static func encode(_ response: HTTPResponse, into out: inout [UInt8], request: Connection.Pending, keepAlive: Bool, date: [UInt8]) -> (Int, [UInt8]?) {
        var status = response.status
        var body: [UInt8]
        var contentType: String? = response.headers["Content-Type"]
        var etag: String?
        var gzipped = false
        var varies = false
        let acceptsGzip = request.acceptsGzip
        switch response.body {
        case .bytes(let b):
            body = b
            if b.count > Compression.threshold && response.headers["Content-Encoding"] == nil && Compression.isCompressible(contentType) {
                varies = true
                if acceptsGzip, let z = Gzip.compress(b, level: 5), z.count < b.count { body = z; gzipped = true }
            }
            // A handler's strong ETag names the identity bytes; the gzip representation gets its own tag.
            if let tag = response.headers["ETag"] {
                etag = gzipped && tag.hasSuffix("\"") && !tag.hasPrefix("W/") ? String(tag.dropLast()) + "-gz\"" : tag
                if let inm = request.ifNoneMatch, let etag, ResponseEncoder.matches(ifNoneMatch: inm, etag: etag), status == 200 { status = 304 }
            }
        case .prepared(let p):
            contentType = contentType ?? p.contentType
            varies = p.gzip != nil
            if let z = p.gzip, acceptsGzip { body = z; gzipped = true; etag = p.gzipETag } else { body = p.identity; etag = p.etag }
            if let inm = request.ifNoneMatch, let etag, ResponseEncoder.matches(ifNoneMatch: inm, etag: etag), status == 200 {
                status = 304
            }
        }
        let noBody = request.method == "HEAD" || status == 304 || status == 204 || status < 200

        out.append(contentsOf: http11)
        appendInt(status, to: &out)
        out.append(32)
        out.append(contentsOf: HTTPStatus.reason(status).utf8)
        out.append(contentsOf: serverAndDate)
        out.append(contentsOf: date)
        out.append(contentsOf: crlf)
        for (name, value) in response.headers {
            if skipped(name) { continue }
            if status == 304 && name.asciiCaseInsensitiveEquals("Content-Type") { continue }
            appendField(name, value, to: &out)
        }
        if status != 304, let contentType, response.headers["Content-Type"] == nil { appendField("Content-Type", contentType, to: &out) }
        if let etag { appendField("ETag", etag, to: &out) }
        if gzipped && status != 304 { out.append(contentsOf: contentEncodingGzip) }
        if varies && !ResponseEncoder.mentionsAcceptEncoding(response.headers["Vary"]) { out.append(contentsOf: varyAcceptEncoding) }
        if status != 304 && status != 204 && status >= 200 {
            out.append(contentsOf: contentLength)
            appendInt(body.count, to: &out)
            out.append(contentsOf: crlf)
        }
        appendField("X-Request-ID", request.requestID, to: &out)
        if !keepAlive { out.append(contentsOf: connectionClose) }
        else if request.versionMinor == 0 { out.append(contentsOf: connectionKeepAlive) }
        out.append(contentsOf: crlf)
        if noBody { return (0, nil) }
        if body.count >= separateBodyThreshold { return (body.count, body) }
        out.append(contentsOf: body)
        return (body.count, nil)
    }

    /// Whether a `Vary` value already names Accept-Encoding (byte scan; no Foundation string search).
    static func mentionsAcceptEncoding(_ vary: String?) -> Bool {
        guard let vary else { return false }
        let needle = Array("accept-encoding".utf8)
        let u = Array(vary.utf8)
        guard u.count >= needle.count else { return false }
        for start in 0...(u.count - needle.count) {
            var ok = true
            for k in 0..<needle.count where (u[start + k] >= 65 && u[start + k] <= 90 ? u[start + k] | 0x20 : u[start + k]) != needle[k] { ok = false; break }
            if ok { return true }
        }
        return false
    }

    static func matches(ifNoneMatch: String, etag: String) -> Bool {
        if ifNoneMatch.trimmingOWS() == "*" { return true }
        for candidate in ifNoneMatch.split(separator: ",") {
            var c = candidate.trimmingOWS()
            if c.hasPrefix("W/") { c = c.dropFirst(2) }
            if c == etag { return true }
        }
        return false
    }

    private static func skipped(_ name: String) -> Bool {
        name.asciiCaseInsensitiveEquals("Content-Length") || name.asciiCaseInsensitiveEquals("ETag") || name.asciiCaseInsensitiveEquals("Connection")
            || name.asciiCaseInsensitiveEquals("Date") || name.asciiCaseInsensitiveEquals("Server")
            || name.asciiCaseInsensitiveEquals("Transfer-Encoding") || name.asciiCaseInsensitiveEquals("X-Request-ID")
    }

    @inline(__always)
    private static func appendField(_ name: String, _ value: String, to out: inout [UInt8]) {
        out.append(contentsOf: name.utf8)
        out.append(58); out.append(32)
        // Never let a value break the head: CR and LF become spaces.
        for b in value.utf8 { out.append(b == 13 || b == 10 || b == 0 ? 32 : b) }
        out.append(contentsOf: crlf)
    }

    @inline(__always)
    static func appendInt(_ n: Int, to out: inout [UInt8]) {
        if n == 0 { out.append(48); return }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var v = n, count = 0
        withUnsafeMutableBytes(of: &digits) { d in
            while v > 0 { d[count] = UInt8(48 + v % 10); v /= 10; count += 1 }
            while count > 0 { count -= 1; out.append(d[count]) }
        }
    }

    static let http11 = Array("HTTP/1.1 ".utf8)
    static let serverAndDate = Array("\r\nServer: lede\r\nDate: ".utf8)
    static let crlf: [UInt8] = [13, 10]
    static let contentLength = Array("Content-Length: ".utf8)
    static let contentEncodingGzip = Array("Content-Encoding: gzip\r\n".utf8)
    static let varyAcceptEncoding = Array("Vary: Accept-Encoding\r\n".utf8)
    static let connectionClose = Array("Connection: close\r\n".utf8)
    static let connectionKeepAlive = Array("Connection: keep-alive\r\n".utf8)
}

enum AccessLog {
    static func append(to out: inout [UInt8], method: String, route: String, path: String, status: Int, bytes: Int, micros: Int, requestID: String) {
        out.append(contentsOf: prefix)
        JSONText.appendQuoted(Timestamp.iso8601(), to: &out)
        out.append(contentsOf: methodKey); JSONText.appendQuoted(method, to: &out)
        out.append(contentsOf: routeKey); JSONText.appendQuoted(route, to: &out)
        // The path only: a query string may carry tokens and never reaches the log.
        out.append(contentsOf: pathKey); JSONText.appendQuoted(String(path.prefix(512)), to: &out)
        out.append(contentsOf: statusKey); ResponseEncoder.appendInt(status, to: &out)
        out.append(contentsOf: bytesKey); ResponseEncoder.appendInt(bytes, to: &out)
        out.append(contentsOf: durationKey); ResponseEncoder.appendInt(micros, to: &out)
        out.append(contentsOf: idKey); JSONText.appendQuoted(requestID, to: &out)
        out.append(contentsOf: [125, 10])
    }
    static let prefix = Array("{\"time\":".utf8)
    static let methodKey = Array(",\"method\":".utf8)
    static let routeKey = Array(",\"route\":".utf8)
    static let pathKey = Array(",\"path\":".utf8)
    static let statusKey = Array(",\"status\":".utf8)
    static let bytesKey = Array(",\"bytes\":".utf8)
    static let durationKey = Array(",\"duration_us\":".utf8)
    static let idKey = Array(",\"request_id\":".utf8)
}
