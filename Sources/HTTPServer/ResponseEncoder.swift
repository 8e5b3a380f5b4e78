import HTTPCore
/// Serialises a response head and body into bytes, adding the server's own fields and choosing the
/// representation (gzip or identity, 304 for a matching ETag).
enum ResponseEncoder {
    /// Bodies at least this large are sent from their own storage instead of being copied after the head.
    static let separateBodyThreshold = 4096

    /// Appends the response head (and a small body) to `out`. Returns the body size, and the body itself when it
    /// is large enough to be sent separately (it is then not appended).
    /// `request` is inout only to be read in place (the connection's own; a copy would retain its fields).
    /// `bodies`, when given, takes an assembled identity body's large fragments as they are (each sent from its own
    /// storage after `out[..<at]`), with the bytes between them appended to `out`: the body is never copied whole.
    static func encode(_ response: HTTPResponse, into out: inout [UInt8], request: inout Connection.Pending, keepAlive: Bool, date: [UInt8],
                       bodies: UnsafeMutablePointer<PendingBodies>? = nil) -> (Int, [UInt8]?) {
        if case .prepared(let p) = response.body, response.headers.isEmpty {
            // Fast path: a prepared body's fields were rendered once, per representation.
            let status = response.status
            let gzipped = p.gzip != nil && request.acceptsGzip
            let notModified = status == 200 && request.ifNoneMatch.map { matches(ifNoneMatch: $0, etag: gzipped ? p.gzipETag : p.etag) } == true
            if !notModified && status >= 200 && status != 204 {
                // The whole head in one append (status line, Date, the prepared fields, X-Request-ID, the
                // connection's field, the blank line), then the body. `p`'s arrays are read in place (a copy
                // would retain storage every loop shares).
                let bound = statusLineBound(status, date: date) + (gzipped ? p.gzipHead.count : p.identityHead.count)
                    + tailBound(request.requestID)
                // Written here, not through `appendWritten`: its closure cost ~90 instructions a request (callgrind).
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { buffer in
                    var w = ByteWriter(buffer.baseAddress!)
                    writeStatusLine(status, date: date, to: &w)
                    if gzipped { w.put(p.gzipHead) } else { w.put(p.identityHead) }
                    writeTail(request.requestID, versionMinor: request.versionMinor, keepAlive: keepAlive, to: &w)
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<w.written(from: buffer.baseAddress!)]))
                }
                if request.method == "HEAD" { return (0, nil) }
                if gzipped { return finish(p.gzip!, into: &out) }
                return finish(p.identity, into: &out)
            }
        }
        if case .assembled(let a) = response.body, a.fields != nil, response.headers.isEmpty {
            // Fast path: an assembled body whose fields were rendered once needs no field list or summary.
            return encodeAssembled(a, status: response.status, fields: [], summary: FieldSummary.none, into: &out, request: &request,
                                   keepAlive: keepAlive, date: date, bodies: bodies)
        }
        var status = response.status
        var body: [UInt8]
        var fields = response.headers.fields
        if case .prepared(let p) = response.body, !p.headers.isEmpty { fields = p.headers.fields + fields }
        let summary = FieldSummary(fields)
        var contentType: String?
        var etag: String?
        var gzipped = false
        var varies = false
        switch response.body {
        case .bytes(let b): (body, contentType, etag, gzipped, varies) = bytesBody(b, summary, acceptsGzip: request.acceptsGzip)
        case .problem(let r):   // the connection renders problems first (`ProblemStage.finish`); the server's default base otherwise
            let bytes = r.problem.jsonBytes(typeBase: ServerConfiguration.Naming().problemTypeBase)
            (body, contentType, etag, gzipped, varies) = bytesBody(bytes, summary, acceptsGzip: request.acceptsGzip)
        case .prepared(let p):
            contentType = summary.contentType ?? p.contentType
            varies = p.gzip != nil
            if let z = p.gzip, request.acceptsGzip { body = z; gzipped = true; etag = p.gzipETag } else { body = p.identity; etag = p.etag }
        case .assembled(let a):
            return encodeAssembled(a, status: status, fields: fields, summary: summary, into: &out, request: &request, keepAlive: keepAlive, date: date,
                                   bodies: bodies)
        case .stream(let s):
            // Streams are started by the connection (`encodeStreamHead`); here only their fields, as a GET's (HEAD).
            let gzipped = streamMayGzip(s, summary) && request.acceptsGzip
            encodeStreamHead(response, s, into: &out, request: request, keepAlive: keepAlive, chunked: request.versionMinor >= 1, gzipped: gzipped, date: date)
            return (0, nil)
        }
        if status == 200, let inm = request.ifNoneMatch, let etag, matches(ifNoneMatch: inm, etag: etag) { status = 304 }
        appendStatusLine(status, date: date, to: &out)
        appendFields(fields, summary: summary, status: status, contentType: contentType, etag: etag, gzipped: gzipped,
                     varies: varies, bodyCount: body.count, to: &out)
        appendTail(request, keepAlive: keepAlive, to: &out)
        if request.method == "HEAD" || status == 304 || status == 204 || status < 200 { return (0, nil) }
        return finish(body, into: &out)
    }

    /// An assembled body: the representation's bytes are put together only when they are sent (not for HEAD or 304).
    private static func encodeAssembled(_ a: AssembledBody, status: Int, fields: [(name: String, value: String)], summary: FieldSummary,
                                        into out: inout [UInt8], request: inout Connection.Pending, keepAlive: Bool, date: [UInt8],
                                        bodies: UnsafeMutablePointer<PendingBodies>?) -> (Int, [UInt8]?) {
        var status = status
        if let f = a.fields, fields.isEmpty, status == 200, request.ifNoneMatch == nil {
            // Its fields rendered once: the status line, their bytes, then what differs per body.
            let varies = a.offersGzip, gzipped = varies && request.acceptsGzip
            let id = request.requestID, versionMinor = request.versionMinor
            // The whole head in one append, written in place as for a prepared body (seven appends cost ~900 instructions
            // a response; `appendWritten`'s closure ~90). The length: at most 20 digits and its line end.
            let bound = statusLineBound(200, date: date) + f.rendered.count + AssembledBody.etagFieldBound
                + contentEncodingGzip.utf8CodeUnitCount + varyAcceptEncoding.utf8CodeUnitCount + contentLength.utf8CodeUnitCount + 20 + 2 + tailBound(id)
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { buffer in
                var w = ByteWriter(buffer.baseAddress!)
                writeStatusLine(200, date: date, to: &w)
                w.put(f.rendered)
                a.writeETagField(gzipped: gzipped, to: &w)
                if gzipped { w.put(contentEncodingGzip) }
                if varies && !f.namesAcceptEncoding { w.put(varyAcceptEncoding) }
                w.put(contentLength); w.put(decimal: gzipped ? a.gzipCount : a.count); w.put(crlf)
                writeTail(id, versionMinor: versionMinor, keepAlive: keepAlive, to: &w)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<w.written(from: buffer.baseAddress!)]))
            }
            if request.method == "HEAD" { return (0, nil) }
            return assembledBytes(a, gzipped: gzipped, into: &out, bodies: bodies)
        }
        let fields = a.fields.map { $0.headers.fields + fields } ?? fields
        let summary = a.fields == nil ? summary : FieldSummary(fields)
        let varies = a.offersGzip && summary.contentEncoding == nil
        let gzipped = varies && request.acceptsGzip
        let etag = summary.etag ?? (gzipped ? a.gzipETag : a.etag)
        if status == 200, let inm = request.ifNoneMatch, matches(ifNoneMatch: inm, etag: etag) { status = 304 }
        appendStatusLine(status, date: date, to: &out)
        appendFields(fields, summary: summary, status: status, contentType: summary.contentType ?? a.contentType, etag: etag, gzipped: gzipped,
                     varies: varies, bodyCount: gzipped ? a.gzipCount : a.count, to: &out)
        appendTail(request, keepAlive: keepAlive, to: &out)
        if request.method == "HEAD" || status == 304 || status == 204 || status < 200 { return (0, nil) }
        return assembledBytes(a, gzipped: gzipped, into: &out, bodies: bodies)
    }

    /// The representation's bytes: gathered from the fragments when the caller takes bodies and it is the identity one,
    /// else put together whole.
    private static func assembledBytes(_ a: AssembledBody, gzipped: Bool, into out: inout [UInt8],
                                       bodies: UnsafeMutablePointer<PendingBodies>?) -> (Int, [UInt8]?) {
        if !gzipped, let bodies { return gather(a, into: &out, bodies: bodies) }
        return finish(gzipped ? a.gzipBytes() : a.identityBytes(), into: &out)
    }

    /// Fragments at least this large are sent from their own storage when an assembled body is gathered.
    static let gatheredFragment = 1024

    /// An assembled identity body without copying it whole: each large fragment's bytes as a body of their own, the
    /// literals and small fragments between them appended to `out`.
    private static func gather(_ a: AssembledBody, into out: inout [UInt8], bodies: UnsafeMutablePointer<PendingBodies>) -> (Int, [UInt8]?) {
        var queued = false
        a.forEachPiece { piece, literals in
            switch piece {
            case .fragment(let u):
                u._withUnsafeGuaranteedRef { f in
                    let n = f.bytes.count
                    if n >= gatheredFragment {
                        bodies.pointee.append(fragment: u, count: n, at: out.count); queued = true
                    } else {
                        out.append(contentsOf: f.bytes)
                    }
                }
            case .literal(let r):
                out.append(contentsOf: UnsafeBufferPointer(rebasing: literals[r]))
            case .short(let b):
                b.withBytes { out.append(contentsOf: $0) }
            }
        }
        if queued { bodies.pointee.keep(a) }
        return (a.count, nil)
    }

    /// The head of a streamed response: no Content-Length; `Transfer-Encoding: chunked` when `chunked`, else the body
    /// ends with the connection (`keepAlive` false) or there is none (HEAD).
    static func encodeStreamHead(_ response: HTTPResponse, _ stream: ResponseStream, into out: inout [UInt8], request: Connection.Pending,
                                 keepAlive: Bool, chunked: Bool, gzipped: Bool, date: [UInt8]) {
        let fields = response.headers.fields
        let summary = FieldSummary(fields)
        appendStatusLine(response.status, date: date, to: &out)
        appendFields(fields, summary: summary, status: response.status, contentType: stream.contentType, etag: nil, gzipped: gzipped,
                     varies: streamMayGzip(stream, summary), bodyCount: nil, to: &out)
        if chunked { out.append(contentsOf: transferEncodingChunked) }
        appendTail(request, keepAlive: keepAlive, to: &out)
    }

    /// Whether a stream's representation depends on Accept-Encoding.
    /// Bytes made for one response (a problem's too): compressed when large and accepted; a handler's strong ETag names
    /// the identity bytes, and the gzip representation gets its own tag.
    @inline(__always)
    static func bytesBody(_ b: [UInt8], _ summary: FieldSummary, acceptsGzip: Bool)
        -> (body: [UInt8], contentType: String?, etag: String?, gzipped: Bool, varies: Bool) {
        let contentType = summary.contentType
        var body = b, gzipped = false, varies = false
        if b.count > Compression.threshold && summary.contentEncoding == nil && Compression.isCompressible(contentType) {
            varies = true
            if acceptsGzip, let z = Gzip.compress(b, level: 5), z.count < b.count { body = z; gzipped = true }
        }
        var etag: String?
        if let tag = summary.etag {
            etag = gzipped && tag.hasSuffix("\"") && !tag.hasPrefix("W/") ? String(tag.dropLast()) + "-gz\"" : tag
        }
        return (body, contentType, etag, gzipped, varies)
    }

    static func streamMayGzip(_ stream: ResponseStream, _ summary: FieldSummary) -> Bool {
        summary.contentEncoding == nil && Compression.isCompressible(summary.contentType ?? stream.contentType)
    }

    @inline(__always)
    private static func finish(_ body: [UInt8], into out: inout [UInt8]) -> (Int, [UInt8]?) {
        if body.count >= separateBodyThreshold { return (body.count, body) }
        out.append(contentsOf: body)
        return (body.count, nil)
    }

    /// The fields of a response that the encoder reads or owns, found in one pass.
    struct FieldSummary {
        var contentType: String?, contentEncoding: String?, etag: String?, vary: String?
        /// Bit i set: field i is written by the encoder, not copied (for the first 64 fields).
        var ownFields: UInt64 = 0

        /// The summary of no fields.
        static let none = FieldSummary([])

        init(_ fields: [(name: String, value: String)]) {
            for (i, f) in fields.enumerated() {
                switch FieldName.classify(f.name) {
                case .contentType: contentType = contentType ?? f.value
                case .contentEncoding: contentEncoding = contentEncoding ?? f.value
                case .etag: etag = etag ?? f.value; if i < 64 { ownFields |= 1 << UInt64(i) }
                case .vary: vary = vary ?? f.value
                case .serverOwned: if i < 64 { ownFields |= 1 << UInt64(i) }
                case .other: break
                }
            }
        }

        func isOwn(_ i: Int, _ name: String) -> Bool {
            if i < 64 { return ownFields & (1 << UInt64(i)) != 0 }
            let kind = FieldName.classify(name)
            return kind == .serverOwned || kind == .etag
        }
    }

    /// The representation's fields, after `Date`: the handler's (less the server's own), then Content-Type,
    /// ETag, Content-Encoding, Vary and Content-Length. Also renders a prepared body's fields once.
    static func appendFields(_ fields: [(name: String, value: String)], summary: FieldSummary, status: Int, contentType: String?,
                             etag: String?, gzipped: Bool, varies: Bool, bodyCount: Int?, to out: inout [UInt8]) {
        for (i, f) in fields.enumerated() {
            if summary.isOwn(i, f.name) { continue }
            if status == 304 && f.value == summary.contentType && FieldName.classify(f.name) == .contentType { continue }
            appendField(f.name, f.value, to: &out)
        }
        if status != 304, let contentType, summary.contentType == nil { appendField("Content-Type", contentType, to: &out) }
        if let etag { appendField("ETag", etag, to: &out) }
        if gzipped && status != 304 { out.append(contentsOf: contentEncodingGzip) }
        if varies && !mentionsAcceptEncoding(summary.vary) { out.append(contentsOf: varyAcceptEncoding) }
        if let bodyCount, status != 304 && status != 204 && status >= 200 {
            out.append(contentsOf: contentLength)
            JSONText.appendInt(bodyCount, to: &out)
            out.append(contentsOf: crlf)
        }
    }

    /// Writes `write`'s bytes, at most `bound` of them, in one append.
    @inline(__always)
    private static func appendWritten(_ bound: Int, to out: inout [UInt8], _ write: (inout ByteWriter) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { buffer in
            var w = ByteWriter(buffer.baseAddress!)
            write(&w)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<w.written(from: buffer.baseAddress!)]))
        }
    }

    /// The bytes `writeStatusLine` writes, at most.
    @inline(__always)
    private static func statusLineBound(_ status: Int, date: [UInt8]) -> Int {
        if status == 200 { return ok200.utf8CodeUnitCount + date.count + 2 }
        return http11.utf8CodeUnitCount + 21 + HTTPStatus.reason(status).utf8.count + serverAndDate.utf8CodeUnitCount + date.count + 2
    }

    /// The status line, `Server` and `Date`.
    @inline(__always)
    private static func writeStatusLine(_ status: Int, date: [UInt8], to w: inout ByteWriter) {
        if status == 200 {
            w.put(ok200)
        } else {
            w.put(http11); w.put(decimal: status); w.put(32)
            var reason = HTTPStatus.reason(status)
            reason.withUTF8 { w.put($0) }
            w.put(serverAndDate)
        }
        w.put(date); w.put(crlf)
    }

    /// The bytes `writeTail` writes, at most.
    @inline(__always)
    private static func tailBound(_ id: RequestID) -> Int {
        xRequestID.utf8CodeUnitCount + id.maxByteCount + connectionKeepAlive.utf8CodeUnitCount + 4
    }

    /// `X-Request-ID`, the connection's field when it needs one, and the blank line that ends the head.
    @inline(__always)
    private static func writeTail(_ id: RequestID, versionMinor: Int, keepAlive: Bool, to w: inout ByteWriter) {
        w.put(xRequestID); w.advance(id.write(to: w.position)); w.put(crlf)
        if !keepAlive { w.put(connectionClose) } else if versionMinor == 0 { w.put(connectionKeepAlive) }
        w.put(crlf)
    }

    @inline(__always)
    private static func appendStatusLine(_ status: Int, date: [UInt8], to out: inout [UInt8]) {
        appendWritten(statusLineBound(status, date: date), to: &out) { writeStatusLine(status, date: date, to: &$0) }
    }

    @inline(__always)
    private static func appendTail(_ request: Connection.Pending, keepAlive: Bool, to out: inout [UInt8]) {
        let id = request.requestID, versionMinor = request.versionMinor
        appendWritten(tailBound(id), to: &out) { writeTail(id, versionMinor: versionMinor, keepAlive: keepAlive, to: &$0) }
    }

    /// Whether a `Vary` value already names Accept-Encoding (byte scan; no Foundation string search).
    static func mentionsAcceptEncoding(_ vary: String?) -> Bool {
        guard let vary else { return false }
        let needle = Array("accept-encoding".utf8)
        let u = Array(vary.utf8)
        guard u.count >= needle.count else { return false }
        for start in 0...(u.count - needle.count) {
            var ok = true
            for k in 0..<needle.count where ASCII.lower(u[start + k]) != needle[k] { ok = false; break }
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

    /// The response fields the encoder cares about, recognised by length first, then by name.
    enum FieldName: Equatable {
        case contentType, contentEncoding, etag, vary, serverOwned, other

        static func classify(_ name: String) -> FieldName {
            switch name.utf8.count {
            case 4:
                if name.asciiCaseInsensitiveEquals("ETag") { return .etag }
                if name.asciiCaseInsensitiveEquals("Vary") { return .vary }
                if name.asciiCaseInsensitiveEquals("Date") { return .serverOwned }
            case 6: if name.asciiCaseInsensitiveEquals("Server") { return .serverOwned }
            case 10: if name.asciiCaseInsensitiveEquals("Connection") { return .serverOwned }
            case 12:
                if name.asciiCaseInsensitiveEquals("Content-Type") { return .contentType }
                if name.asciiCaseInsensitiveEquals("X-Request-ID") { return .serverOwned }
            case 14: if name.asciiCaseInsensitiveEquals("Content-Length") { return .serverOwned }
            case 16: if name.asciiCaseInsensitiveEquals("Content-Encoding") { return .contentEncoding }
            case 17: if name.asciiCaseInsensitiveEquals("Transfer-Encoding") { return .serverOwned }
            default: break
            }
            return .other
        }
    }

    @inline(__always)
    static func appendField(_ name: String, _ value: String, to out: inout [UInt8]) {
        var name = name, value = value
        name.withUTF8 { out.append(contentsOf: $0) }
        out.append(58); out.append(32)
        value.withUTF8 { v in
            // Never let a value break the head: CR, LF and NUL become spaces.
            if v.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) {
                for b in v { out.append(b == 13 || b == 10 || b == 0 ? 32 : b) }
            } else {
                out.append(contentsOf: v)
            }
        }
        out.append(contentsOf: crlf)
    }

    static let http11: StaticString = "HTTP/1.1 "
    // Every answer says `X-Content-Type-Options: nosniff`: a browser reads each as the type it is sent as (a JSON
    // answer, a problem, an image), never as something it guessed (HTML, script). Part of the status line's constant.
    static let ok200: StaticString = "HTTP/1.1 200 OK\r\nServer: lede\r\nX-Content-Type-Options: nosniff\r\nDate: "
    static let serverAndDate: StaticString = "\r\nServer: lede\r\nX-Content-Type-Options: nosniff\r\nDate: "
    static let crlf: StaticString = "\r\n"
    static let contentLength: StaticString = "Content-Length: "
    static let contentEncodingGzip: StaticString = "Content-Encoding: gzip\r\n"
    static let varyAcceptEncoding: StaticString = "Vary: Accept-Encoding\r\n"
    static let transferEncodingChunked: StaticString = "Transfer-Encoding: chunked\r\n"
    static let connectionClose: StaticString = "Connection: close\r\n"
    static let xRequestID: StaticString = "X-Request-ID: "
    static let connectionKeepAlive: StaticString = "Connection: keep-alive\r\n"
}

/// Writes bytes forward from a pointer into memory its user has sized for them (no bounds or capacity checks: the
/// caller counted the bytes first).
struct ByteWriter {
    private(set) var position: UnsafeMutablePointer<UInt8>
    init(_ start: UnsafeMutablePointer<UInt8>) { position = start }

    @inline(__always)
    mutating func put(_ literal: StaticString) {
        position.update(from: literal.utf8Start, count: literal.utf8CodeUnitCount)
        position += literal.utf8CodeUnitCount
    }

    @inline(__always)
    mutating func put(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { put($0) } }

    @inline(__always)
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let base = bytes.baseAddress { position.update(from: base, count: bytes.count) }
        position += bytes.count
    }

    @inline(__always)
    mutating func put(_ byte: UInt8) { position.pointee = byte; position += 1 }

    /// A non-negative integer in decimal (at most 20 digits); nothing for a negative one.
    @inline(__always)
    mutating func put(decimal n: Int) {
        guard n >= 0 else { return }
        var digits = 1, m = n
        while m >= 10 { m /= 10; digits += 1 }
        var v = n
        for k in stride(from: digits - 1, through: 0, by: -1) { position[k] = UInt8(48 + v % 10); v /= 10 }
        position += digits
    }

    @inline(__always)
    mutating func advance(_ n: Int) { position += n }

    @inline(__always)
    func written(from start: UnsafeMutablePointer<UInt8>) -> Int { position - start }
}

extension Array where Element == UInt8 {
    /// Appends a literal's bytes (no array to retain, no lazy global to check).
    @inline(__always)
    public mutating func append(contentsOf literal: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}

enum AccessLog {
    static func append(to out: inout [UInt8], method: String, route: String, path: String, status: Int, bytes: Int, micros: Int, requestID: String,
                       trace: TraceContext? = nil, client: ClientAddress = .unknown) {
        out.append(contentsOf: prefix)
        JSONText.appendQuoted(Timestamp.iso8601(), to: &out)
        out.append(contentsOf: methodKey); JSONText.appendQuoted(method, to: &out)
        out.append(contentsOf: routeKey); JSONText.appendQuoted(route, to: &out)
        // The path only: a query string may carry tokens and never reaches the log.
        out.append(contentsOf: pathKey); JSONText.appendQuoted(String(path.prefix(512)), to: &out)
        out.append(contentsOf: statusKey); JSONText.appendInt(status, to: &out)
        out.append(contentsOf: bytesKey); JSONText.appendInt(bytes, to: &out)
        out.append(contentsOf: durationKey); JSONText.appendInt(micros, to: &out)
        out.append(contentsOf: idKey); JSONText.appendQuoted(requestID, to: &out)
        if client != .unknown { out.append(contentsOf: clientKey); JSONText.appendQuoted(client.description, to: &out) }
        if let trace {
            out.append(contentsOf: traceKey); out.append(34); trace.appendTraceID(to: &out); out.append(34)
            out.append(contentsOf: spanKey); out.append(34); TraceContext.appendHex(trace.spanID, to: &out); out.append(34)
            if let parent = trace.parentID {
                out.append(contentsOf: parentKey); out.append(34); TraceContext.appendHex(parent, to: &out); out.append(34)
            }
        }
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
    static let clientKey = Array(",\"client\":".utf8)
    static let traceKey = Array(",\"trace_id\":".utf8)
    static let spanKey = Array(",\"span_id\":".utf8)
    static let parentKey = Array(",\"parent_span_id\":".utf8)
}
