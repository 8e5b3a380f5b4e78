import EventLoops
import Glibc
import HTTPCore

/// Limits the parser enforces. Defaults follow the issue: 8 KiB request line, 32 KiB header section, 1 MiB body.
public struct ParserLimits: Sendable {
    public var maxRequestLine: Int = 8 * 1024
    public var maxHeaderBytes: Int = 32 * 1024
    public var maxHeaderCount: Int = 100
    public var maxBody: Int = 1 << 20
    public var maxChunkLine: Int = 4 * 1024
    /// A larger body limit for some requests (by method and decoded path), asked only when a body exceeds `maxBody`:
    /// the router's per-route limits (an article's wikitext on its edit route). Nil: `maxBody` for every request.
    public var bodyLimit: (@Sendable (_ method: String, _ path: String) -> Int?)?
    public init(maxRequestLine: Int = 8 * 1024, maxHeaderBytes: Int = 32 * 1024, maxHeaderCount: Int = 100,
                maxBody: Int = 1 << 20) {
        self.maxRequestLine = maxRequestLine; self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount; self.maxBody = maxBody
    }
}

/// Why a request was refused. After any parse error the connection must close: the bytes that follow
/// cannot be trusted to start a new request.
public struct ParseError: Error, Equatable, Sendable {
    public var status: Int
    public var detail: String
    public init(_ status: Int, _ detail: String) { self.status = status; self.detail = detail }
}

/// What the parser has to say after being fed bytes.
public enum ParseEvent: Sendable {
    /// Nothing complete yet: feed more bytes.
    case needMore
    /// The head asked for `Expect: 100-continue` and the declared body is within limits: send `100 Continue`.
    case continueRequested
    case request(HTTPRequest)
    case error(ParseError)
}

/// Incremental, strict RFC 9112 request parser over bytes. It owns a buffer: `append` bytes as they arrive,
/// then call `next()` until it says `.needMore`. Bytes may arrive one at a time; the work stays linear.
/// Pure: no I/O, no clock.
public struct RequestParser {
    public let limits: ParserLimits
    private var buffer: [UInt8] = []
    private var start = 0      // first byte not yet consumed
    private var scan = 0       // where the line scanner resumes
    private var state: State = .requestLine
    private var failed: ParseError?

    // The request being assembled.
    private var headBytes = 0
    private var method = ""
    // The target's bytes (an array that keeps its capacity from request to request), and where its path and query
    // are in them.
    private var target: [UInt8] = []
    private var parts = HTTPRequest.TargetParts()
    private var known = KnownFields()
    private var versionMajor = 1
    private var versionMinor = 1
    private var headers = HTTPHeaders()
    private var body: [UInt8] = []
    private var chunked = false
    private var continuePending = false
    /// An answered request's box, handed back by the connection when nothing else holds it: the next request is
    /// built in it (its field list keeps its capacity), so a keep-alive request allocates no box and no list.
    private var spare: HTTPRequest.Storage?

    /// The fields that decide framing and the response, noted as each line is parsed (by length, then bytes),
    /// so finishing the head never searches the field list by name.
    private struct KnownFields {
        var hostCount = 0
        var hostValid = true
        var framing = false          // Content-Length or Transfer-Encoding present
        var expect = false
        var connectionClose = false
        var connectionKeepAlive = false
        var acceptEncoding = false
        var ifNoneMatch: String?
        var requestID: String?
        var acceptLanguage = false
        var traceparent = false
        /// The first `Authorization`'s place among the fields (-1: none), and their number.
        var authorizationAt: Int32 = -1, authorizationCount: Int32 = 0
    }

    private enum State {
        case requestLine
        case fields
        case body(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
    }

    public init(limits: ParserLimits = ParserLimits()) { self.limits = limits }

    /// The current request's body limit: `maxBody`, or its route's larger one. Asked only once a body is larger than
    /// `maxBody` (then once per request: kept until the next head), so ordinary requests never look their route up.
    private var routeLimit: Int?
    private var bodyLimit: Int {
        mutating get {
            if let routeLimit { return routeLimit }
            var limit = limits.maxBody
            if let larger = limits.bodyLimit {
                let path = parts.path.isEmpty ? "/" : String(decoding: target[parts.path], as: UTF8.self)
                limit = max(limit, larger(method, path) ?? limit)
            }
            routeLimit = limit
            return limit
        }
    }

    /// Bytes received but not yet consumed by a complete request.
    public var bufferedByteCount: Int { buffer.count - start }
    /// True when no part of a next request has arrived (the connection is idle between requests).
    public var isIdle: Bool {
        if case .requestLine = state, buffer.count == start { return true }
        return false
    }
    /// True once the head of the current request is complete and its body is being read.
    public var isReadingBody: Bool {
        switch state {
        case .requestLine, .fields: return false
        default: return true
        }
    }

    /// The head of the request whose body is being read, as a request without its body (a copy: for decisions made
    /// before any of the body is taken — the route's account, the body budget); nil when no body is being read.
    public var headBeingRead: HTTPRequest? {
        guard isReadingBody else { return nil }
        let path = parts.path.isEmpty ? "/" : String(decoding: target[parts.path], as: UTF8.self)
        let query = parts.query.map { String(decoding: target[$0], as: UTF8.self) }
        return HTTPRequest(method: method, target: String(decoding: target[0..<parts.targetEnd], as: UTF8.self), path: path, query: query,
                           versionMinor: versionMinor, headers: headers, keepAlive: false)
    }

    /// Body bytes the current request may still bring: what remains of a declared length, or (chunked) the server's
    /// body limit. 0 when no body is being read.
    public var expectedBodyBytes: Int {
        switch state {
        case .requestLine, .fields: return 0
        case .body(let remaining): return remaining
        default: return limits.maxBody
        }
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        compact()
        buffer.append(contentsOf: bytes)
    }

    private mutating func compact() {
        if start == 0 { return }
        if start == buffer.count {
            buffer.empty(); scan = 0; start = 0
        } else if start >= 4096 {
            buffer.removeFirst(start); scan -= start; start = 0
        }
    }

    /// Lets go of what is kept for the next request — the spare request box, the field list's and the target's
    /// capacity, the read buffer when nothing is in it — on a connection about to hold a long stream (hours of a
    /// bell): they come back, allocated anew, with its next request.
    public mutating func releaseIdleBuffers() {
        guard isIdle else { return }
        spare = nil
        headers = HTTPHeaders()
        target = []
        buffer = []; start = 0; scan = 0
    }

    /// Advances as far as the buffered bytes allow.
    public mutating func next() -> ParseEvent {
        if let failed { return .error(failed) }
        do {
            while true {
                switch state {
                case .requestLine, .fields:
                    guard let (lineStart, lineEnd) = try nextLine(isHead: true) else { return .needMore }
                    if case .requestLine = state {
                        if lineEnd == lineStart { continue }  // RFC 9112 §2.2: ignore empty lines before the request line
                        try parseRequestLine(lineStart, lineEnd)
                        state = .fields
                    } else if lineEnd == lineStart {
                        if let event = try finishHead() { return event }
                    } else {
                        try parseFieldLine(lineStart, lineEnd, trailer: false)
                    }
                case .body(let remaining):
                    let available = buffer.count - start
                    if available == 0 && remaining > 0 { return .needMore }
                    let take = min(available, remaining)
                    body.append(contentsOf: buffer[start..<(start + take)])
                    start += take; scan = start
                    if remaining - take > 0 { state = .body(remaining: remaining - take); return .needMore }
                    return .request(completeRequest())
                case .chunkSize:
                    guard let (ls, le) = try nextLine(isHead: false) else { return .needMore }
                    let size = try parseChunkSize(ls, le)
                    if size == 0 {
                        state = .trailers
                    } else {
                        if body.count + size > limits.maxBody, body.count + size > bodyLimit {
                            throw ParseError(413, "The chunked request body exceeds the limit of \(bodyLimit) bytes.")
                        }
                        state = .chunkData(remaining: size)
                    }
                case .chunkData(let remaining):
                    let available = buffer.count - start
                    if available == 0 { return .needMore }
                    let take = min(available, remaining)
                    body.append(contentsOf: buffer[start..<(start + take)])
                    start += take; scan = start
                    state = remaining - take > 0 ? .chunkData(remaining: remaining - take) : .chunkDataEnd
                case .chunkDataEnd:
                    if buffer.count - start < 2 {
                        if buffer.count - start == 1 && buffer[start] != 13 {
                            throw ParseError(400, "Chunk data must be followed by CRLF.")
                        }
                        return .needMore
                    }
                    guard buffer[start] == 13, buffer[start + 1] == 10 else {
                        throw ParseError(400, "Chunk data must be followed by CRLF.")
                    }
                    start += 2; scan = start
                    state = .chunkSize
                case .trailers:
                    guard let (ls, le) = try nextLine(isHead: false) else { return .needMore }
                    if ls == le { return .request(completeRequest()) }
                    try parseFieldLine(ls, le, trailer: true)
                }
            }
        } catch let error as ParseError {
            failed = error
            return .error(error)
        } catch {
            let e = ParseError(400, "Malformed request.")
            failed = e
            return .error(e)
        }
    }

    // MARK: - Lines

    /// Finds the next CRLF-terminated line from `start`. Returns (lineStart, lineEnd) without the CRLF,
    /// and consumes it. A bare CR or bare LF is an error. Enforces the head and line limits.
    private mutating func nextLine(isHead: Bool) throws -> (Int, Int)? {
        let lineStart = start
        let count = buffer.count
        let found = buffer.withUnsafeBufferPointer { ByteScan.firstLineBreak($0, from: scan) }
        let limits = self.limits, headBytes = self.headBytes
        var isRequestLine = false, inTrailers = false
        switch state {
        case .requestLine: isRequestLine = true
        case .trailers: inTrailers = true
        default: break
        }
        if let at = found {
            if buffer[at] == 10 { throw ParseError(400, "A bare LF is not a valid line ending; use CRLF.") }
            if at + 1 >= count {
                scan = at
                try RequestParser.checkLength(at - lineStart, isHead: isHead, isRequestLine: isRequestLine, inTrailers: inTrailers, headBytes: headBytes, limits: limits)
                return nil
            }
            if buffer[at + 1] != 10 { throw ParseError(400, "A bare CR is not allowed; lines end with CRLF.") }
            try RequestParser.checkLength(at - lineStart, isHead: isHead, isRequestLine: isRequestLine, inTrailers: inTrailers, headBytes: headBytes, limits: limits)
            if isHead {
                self.headBytes += at + 2 - lineStart
                if !isRequestLine && self.headBytes > limits.maxHeaderBytes { throw RequestParser.headerSectionTooLarge(limits) }
            }
            start = at + 2; scan = start
            return (lineStart, at)
        }
        scan = count
        try RequestParser.checkLength(count - lineStart, isHead: isHead, isRequestLine: isRequestLine, inTrailers: inTrailers, headBytes: headBytes, limits: limits)
        if isHead && !isRequestLine && headBytes + (count - lineStart) > limits.maxHeaderBytes { throw RequestParser.headerSectionTooLarge(limits) }
        return nil
    }

    private static func headerSectionTooLarge(_ limits: ParserLimits) -> ParseError {
        ParseError(431, "The header section exceeds \(limits.maxHeaderBytes) bytes.")
    }

    /// A line of `length` bytes (so far) against the limits (static: no copy of the parser).
    @inline(__always)
    private static func checkLength(_ length: Int, isHead: Bool, isRequestLine: Bool, inTrailers: Bool, headBytes: Int, limits: ParserLimits) throws {
        if isHead {
            if isRequestLine && length > limits.maxRequestLine {
                throw ParseError(414, "The request line exceeds \(limits.maxRequestLine) bytes.")
            }
            if headBytes + length > limits.maxHeaderBytes {
                throw headerSectionTooLarge(limits)
            }
        } else if inTrailers {
            if length > limits.maxHeaderBytes { throw ParseError(431, "The trailer section is too large.") }
        } else if length > limits.maxChunkLine {
            throw ParseError(400, "A chunk-size line exceeds \(limits.maxChunkLine) bytes.")
        }
    }

    // MARK: - Request line

    private mutating func parseRequestLine(_ ls: Int, _ le: Int) throws {
        headBytes = le + 2 - ls
        try buffer.withUnsafeBufferPointer { b in
            var sp1 = ls
            while sp1 < le, b[sp1] != 32 { sp1 += 1 }
            // The target: where it ends (memchr), whether a byte in it must be percent-encoded (CTL, non-ASCII, '#':
            // one branch-free pass), its first '?' and whether '%' comes before that (memchr). A feed's target is
            // 130 bytes; the byte-by-byte scan with four branches a byte cost ~20 instructions a byte.
            let base = b.baseAddress!
            func find(_ byte: Int32, _ from: Int, _ to: Int) -> Int? {
                guard from < to, let p = memchr(base + from, byte, to - from) else { return nil }
                return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(p))
            }
            let sp2 = find(32, sp1 + 1, le) ?? le
            var flagged: UInt8 = 0
            if sp1 + 1 < sp2 {
                for i in (sp1 + 1)..<sp2 {
                    let c = b[i]
                    flagged |= (c &- 33 >= 94 ? 1 : 0) | (c == 35 ? 1 : 0)
                }
            }
            let unencoded = flagged != 0
            let question = find(63, sp1 + 1, sp2) ?? -1
            let escaped = find(37, sp1 + 1, question < 0 ? sp2 : question) != nil
            guard sp1 < le, sp2 < le else { throw ParseError(400, "The request line must be: method SP target SP version.") }
            guard sp1 > ls, (ls..<sp1).allSatisfy({ ByteScan.isToken(b[$0]) }) else {
                throw ParseError(400, "The method is not a valid token.")
            }
            guard sp2 > sp1 + 1 else { throw ParseError(400, "The request target is empty.") }
            // Version: exactly HTTP/DIGIT.DIGIT.
            let v = sp2 + 1
            guard le - v == 8, b[v] == 72, b[v + 1] == 84, b[v + 2] == 84, b[v + 3] == 80, b[v + 4] == 47,
                  (48...57).contains(b[v + 5]), b[v + 6] == 46, (48...57).contains(b[v + 7]) else {
                throw ParseError(400, "The HTTP version is not valid (expected HTTP/1.1).")
            }
            versionMajor = Int(b[v + 5] - 48); versionMinor = Int(b[v + 7] - 48)
            guard versionMajor == 1 else { throw ParseError(505, "Only HTTP/1.x is supported.") }
            if unencoded { throw ParseError(400, "The request target contains a character that must be percent-encoded.") }
            if sp1 - ls == 3 && b[ls] == 71 && b[ls + 1] == 69 && b[ls + 2] == 84 { method = "GET" }
            else { method = String(decoding: UnsafeBufferPointer(rebasing: b[ls..<sp1]), as: UTF8.self) }
            target.empty()
            target.append(contentsOf: UnsafeBufferPointer(rebasing: b[(sp1 + 1)..<sp2]))
            try splitTarget(b, sp1 + 1, sp2, question: question < 0 ? sp2 : question, escaped: escaped)
        }
    }

    /// Splits and checks the target over bytes: origin-form, absolute-form (`http[s]://authority/path`), or
    /// `*` for OPTIONS. The path's escapes are checked segment by segment (each must decode to UTF-8 without
    /// NUL); the segments themselves are decoded only when a route asks for them.
    /// `question` (the first '?', or `te`) and `escaped` ('%' before it) come from the request line's scan.
    private mutating func splitTarget(_ t: UnsafeBufferPointer<UInt8>, _ ts: Int, _ te: Int, question: Int, escaped: Bool) throws {
        if te - ts == 1 && t[ts] == 42 {
            guard method == "OPTIONS" else { throw ParseError(400, "The asterisk target is only valid for OPTIONS.") }
            parts = HTTPRequest.TargetParts(targetEnd: 1, path: 0..<1, query: nil)
            return
        }
        var pathStart = ts
        if t[ts] != 47 {
            let http: StaticString = "http://", https: StaticString = "https://"
            if te - ts >= 7 && (0..<7).allSatisfy({ ASCII.lower(t[ts + $0]) == http.utf8Start[$0] }) { pathStart = ts + 7 }
            else if te - ts >= 8 && (0..<8).allSatisfy({ ASCII.lower(t[ts + $0]) == https.utf8Start[$0] }) { pathStart = ts + 8 }
            else { throw ParseError(400, "The request target must be origin-form (/path) or absolute-form (http://host/path).") }
            let authorityStart = pathStart
            while pathStart < te, t[pathStart] != 47, t[pathStart] != 63 { pathStart += 1 }
            let authority = t[authorityStart..<pathStart]
            if authority.isEmpty || authority.contains(64) || !authority.allSatisfy(RequestParser.isHostChar) {
                throw ParseError(400, "The absolute-form target has an invalid authority.")
            }
        }
        var q = question, escaped = escaped
        if pathStart != ts {
            // Absolute form: the authority (which may hold '%') is not part of the path.
            q = pathStart; escaped = false
            while q < te, t[q] != 63 { if t[q] == 37 { escaped = true }; q += 1 }
        }
        if q > pathStart {
            if escaped {
                var segStart = pathStart + 1
                for i in segStart...q where i == q || t[i] == 47 {
                    _ = try RequestParser.decodeSegment(t[segStart..<i])
                    segStart = i + 1
                }
            }
            parts.path = (pathStart - ts)..<(q - ts)
        } else {
            // An absolute-form target with no path: the path is "/", kept after the target's bytes.
            target.append(47)
            parts.path = (te - ts)..<(te - ts + 1)
        }
        parts.targetEnd = te - ts
        if q < te {
            let rest = t[(q + 1)..<te]
            let escaped = try RequestParser.checkPercentEncoding(rest)
            parts.query = (q + 1 - ts)..<(te - ts)
            // Bytes past ASCII were refused above: no `%` and no `+` makes every name and value its own bytes.
            parts.queryIsPlain = !escaped && (rest.isEmpty || memchr(t.baseAddress! + q + 1, 43, rest.count) == nil)
        } else {
            parts.query = nil
        }
    }

    // MARK: - Fields

    /// Checks a field line; a header field (not a trailer, which is checked and dropped) is kept as bytes.
    private mutating func parseFieldLine(_ ls: Int, _ le: Int, trailer: Bool) throws {
        if !trailer && headers.count >= limits.maxHeaderCount {
            throw ParseError(431, "More than \(limits.maxHeaderCount) header fields.")
        }
        try buffer.withUnsafeBufferPointer { b in
            let first = b[ls]
            if first == 32 || first == 9 {
                throw ParseError(400, "Obsolete line folding (a field line starting with whitespace) is not allowed.")
            }
            var colon = -1
            let nameEnd = ByteScan.tokenEnd(b, from: ls, to: le)
            if nameEnd < le {
                let c = b[nameEnd]
                if c == 58 { colon = nameEnd }
                else if c == 32 || c == 9 { throw ParseError(400, "Whitespace between a field name and the colon is not allowed.") }
                else { throw ParseError(400, "A field name contains an invalid character.") }
            }
            guard colon > ls else { throw ParseError(400, colon == ls ? "A field name is empty." : "A field line has no colon.") }
            var vs = colon + 1, ve = le
            while vs < ve, b[vs] == 32 || b[vs] == 9 { vs += 1 }
            while ve > vs, b[ve - 1] == 32 || b[ve - 1] == 9 { ve -= 1 }
            if !ByteScan.isFieldValue(b, from: vs, to: ve) {
                let nul = UnsafeBufferPointer(rebasing: b[vs..<ve]).contains(0)
                throw ParseError(400, nul ? "A field value contains NUL." : "A field value contains a control character.")
            }
            if trailer { return }
            note(UnsafeBufferPointer(rebasing: b[ls..<colon]), b, vs, ve)
            headers.add(line: UnsafeBufferPointer(rebasing: b[ls..<ve]), name: 0..<(colon - ls), value: (vs - ls)..<(ve - ls))
        }
    }

    /// Records what finishing the head and answering need from a field, recognised by its name's bytes.
    private mutating func note(_ name: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, _ vs: Int, _ ve: Int) {
        func value() -> String { String(decoding: UnsafeBufferPointer(rebasing: b[vs..<ve]), as: UTF8.self) }
        switch name.count {
        case 4:
            if ASCII.equalsLowercase(name, "host") {
                known.hostCount += 1
                if ByteScan.hostEnd(b, from: vs, to: ve, bits: RequestParser.hostBits) < ve { known.hostValid = false }
            }
        case 6: if ASCII.equalsLowercase(name, "expect") { known.expect = true }
        case 11: if ASCII.equalsLowercase(name, "traceparent") { known.traceparent = true }
        case 10:
            if ASCII.equalsLowercase(name, "connection") {
                // Comma-separated tokens, compared without allocating.
                let options = FieldList.connectionOptions(UnsafeBufferPointer(rebasing: b[vs..<ve]))
                if options.close { known.connectionClose = true }
                if options.keepAlive { known.connectionKeepAlive = true }
            }
        case 12: if known.requestID == nil, ASCII.equalsLowercase(name, "x-request-id") { known.requestID = value() }
        case 13:
            if known.ifNoneMatch == nil, ASCII.equalsLowercase(name, "if-none-match") { known.ifNoneMatch = value() }
            else if ASCII.equalsLowercase(name, "authorization") {
                if known.authorizationCount == 0 { known.authorizationAt = Int32(headers.count) }
                known.authorizationCount += 1
            }
        case 14: if ASCII.equalsLowercase(name, "content-length") { known.framing = true }
        case 15:
            if ASCII.equalsLowercase(name, "accept-encoding") { known.acceptEncoding = true }
            else if ASCII.equalsLowercase(name, "accept-language") { known.acceptLanguage = true }
        case 17: if ASCII.equalsLowercase(name, "transfer-encoding") { known.framing = true }
        default: break
        }
    }

    // MARK: - Head complete: framing

    private mutating func finishHead() throws -> ParseEvent? {
        let http11 = versionMinor >= 1
        // Host
        if known.hostCount > 1 { throw ParseError(400, "More than one Host field.") }
        if http11 && known.hostCount == 0 { throw ParseError(400, "HTTP/1.1 requests must carry a Host field.") }
        if !known.hostValid { throw ParseError(400, "The Host field is not a valid host[:port].") }

        var te: [String] = [], cl: [String] = []
        if known.framing {
            te = headers.values("Transfer-Encoding")
            cl = headers.values("Content-Length")
        }
        chunked = false
        var length = 0
        if !te.isEmpty {
            if !cl.isEmpty { throw ParseError(400, "Content-Length and Transfer-Encoding must not both be sent.") }
            if !http11 { throw ParseError(400, "Transfer-Encoding is not allowed in HTTP/1.0.") }
            let codings = headers.tokens("Transfer-Encoding").map { String($0.split(separator: ";").first ?? "").trimmingOWS() }
            if codings.isEmpty { throw ParseError(400, "Transfer-Encoding is empty.") }
            for c in codings where c != "chunked" {
                throw ParseError(501, "The transfer coding '\(c.prefix(40))' is not supported; only chunked is.")
            }
            if codings.count > 1 { throw ParseError(400, "chunked must be applied only once.") }
            chunked = true
        } else if !cl.isEmpty {
            var value: Int?
            for field in cl {
                for member in field.split(separator: ",", omittingEmptySubsequences: false) {
                    let m = member.trimmingOWS()
                    guard !m.isEmpty, m.utf8.count <= 18, m.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = Int(m) else {
                        throw ParseError(400, "Content-Length must be plain digits within range.")
                    }
                    if let value, value != n { throw ParseError(400, "Content-Length values disagree.") }
                    value = n
                }
            }
            length = value ?? 0
            if length > limits.maxBody, length > bodyLimit {
                throw ParseError(413, "The declared body of \(length) bytes exceeds the limit of \(bodyLimit) bytes.")
            }
        }

        let hasBody = chunked || length > 0
        if known.expect, let expect = headers["Expect"] {
            guard expect.lowercasedASCII() == "100-continue" else {
                throw ParseError(417, "Only the expectation 100-continue is supported.")
            }
            continuePending = hasBody && http11
        }
        if chunked { state = .chunkSize }
        else if length > 0 { state = .body(remaining: length) }
        else { return .request(completeRequest()) }

        if continuePending && buffer.count == start {
            continuePending = false
            return .continueRequested
        }
        continuePending = false
        return nil
    }

    /// A path segment, percent-decoded; must be valid UTF-8 without NUL. (The target is ASCII already.)
    static func decodeSegment<C: Collection>(_ seg: C) throws -> String where C.Element == UInt8, C.Index == Int {
        guard seg.contains(37) else { return String(decoding: seg, as: UTF8.self) }
        var out = [UInt8](); out.reserveCapacity(seg.count)
        var i = seg.startIndex
        while i < seg.endIndex {
            if seg[i] == 37 {
                guard i + 2 < seg.endIndex, let h = PercentDecoding.hexValue(seg[i + 1]), let l = PercentDecoding.hexValue(seg[i + 2]) else {
                    throw ParseError(400, "The path has invalid percent-encoding.")
                }
                let b = h << 4 | l
                if b == 0 { throw ParseError(400, "The path has invalid percent-encoding.") }
                out.append(b); i += 3
            } else { out.append(seg[i]); i += 1 }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw ParseError(400, "The path has invalid percent-encoding.") }
        return s
    }

    /// Throws when a `%` is not followed by two hex digits; returns whether the query holds any `%`.
    static func checkPercentEncoding(_ u: Slice<UnsafeBufferPointer<UInt8>>) throws -> Bool {
        // Most queries hold no escape: one memchr finds that.
        guard !u.isEmpty, memchr(u.base.baseAddress! + u.startIndex, 37, u.count) != nil else { return false }
        var i = u.startIndex
        while i < u.endIndex {
            if u[i] == 37 {
                guard i + 2 < u.endIndex, PercentDecoding.hexValue(u[i + 1]) != nil, PercentDecoding.hexValue(u[i + 2]) != nil else {
                    throw ParseError(400, "The query has invalid percent-encoding.")
                }
                i += 3
            } else { i += 1 }
        }
        return true
    }

    // MARK: - Chunks

    private func parseChunkSize(_ ls: Int, _ le: Int) throws -> Int {
        let line = buffer.withUnsafeBufferPointer { ChunkedFraming.size(UnsafeBufferPointer(rebasing: $0[ls..<le])) }
        switch line {
        case .size(let size): return size
        case .notHexadecimal: throw ParseError(400, "The chunk size is not hexadecimal.")
        case .tooLarge: throw ParseError(400, "The chunk size overflows.")
        case .invalidAfterSize: throw ParseError(400, "The chunk size is followed by invalid characters.")
        case .whitespaceWithoutExtension: throw ParseError(400, "The chunk size is followed by whitespace without an extension.")
        case .controlInExtension: throw ParseError(400, "A chunk extension contains a control character.")
        }
    }

    // MARK: - Completion

    private mutating func completeRequest() -> HTTPRequest {
        let close = known.connectionClose, keep = known.connectionKeepAlive
        let keepAlive = versionMinor >= 1 ? !close : (keep && !close)
        let request: HTTPRequest
        if let box = spare {
            spare = nil
            // Moved, not copied: the box's emptied values (its field list with its capacity) become the parser's.
            swap(&box.method, &method); swap(&box.target, &target)
            box.parts = parts
            swap(&box.headers, &headers); swap(&box.body, &body)
            swap(&box.ifNoneMatch, &known.ifNoneMatch); swap(&box.requestIDField, &known.requestID)
            box.versionMajor = versionMajor; box.versionMinor = versionMinor
            box.keepAlive = keepAlive; box.mayAcceptGzip = known.acceptEncoding
            box.mayHaveAuthorization = known.authorizationCount > 0; box.mayHaveAcceptLanguage = known.acceptLanguage
            box.mayHaveTraceparent = known.traceparent
            box.authorizationAt = known.authorizationAt; box.authorizationCount = known.authorizationCount
            request = HTTPRequest(storage: box)
        } else {
            request = HTTPRequest(storage: HTTPRequest.Storage(
                method: method, target: target, parts: parts, versionMajor: versionMajor,
                versionMinor: versionMinor, headers: headers, body: body, keepAlive: keepAlive,
                ifNoneMatch: known.ifNoneMatch, requestIDField: known.requestID, mayAcceptGzip: known.acceptEncoding))
            request.storage.mayHaveAuthorization = known.authorizationCount > 0; request.storage.mayHaveAcceptLanguage = known.acceptLanguage
            request.storage.mayHaveTraceparent = known.traceparent
            request.storage.authorizationAt = known.authorizationAt
            request.storage.authorizationCount = known.authorizationCount
            // The request keeps these arrays; the parser's next ones start empty.
            target = []
            headers = HTTPHeaders()
        }
        // Reset for the next request on this connection.
        state = .requestLine
        known = KnownFields()
        body = []
        headBytes = 0
        chunked = false
        routeLimit = nil
        return request
    }

    /// Takes back an answered request's box when nothing else holds it (its handler kept no copy), emptied, for
    /// the next request; `request` becomes `HTTPRequest.none` either way.
    mutating func recycle(_ request: inout HTTPRequest) {
        var taken = HTTPRequest.none
        swap(&taken, &request)
        guard spare == nil, isKnownUniquelyReferenced(&taken.storage) else { return }
        let box = taken.storage
        box.headers.removeAllKeepingCapacity()
        // The target's array keeps its bytes: the parser empties it before it writes it.
        box.body = []; box.ifNoneMatch = nil; box.requestIDField = nil; box.method = ""
        spare = box
    }

    // MARK: - Character classes

    /// `isHostChar` as a 128-bit set (`ByteScan.inSet(_:_:)` tests a byte against it), written out; a test checks it
    /// against the rule.
    static let hostBits: (UInt64, UInt64) = (0x2FFF_7FF2_0000_0000, 0x47FF_FFFE_AFFF_FFFE)

    /// Characters of uri-host [ ":" port ] (reg-name, IPv4, IP-literal).
    @inline(__always)
    static func isHostChar(_ b: UInt8) -> Bool {
        switch b {
        case 48...57, 65...90, 97...122: return true
        case 45, 46, 95, 126, 33, 36, 38, 39, 40, 41, 42, 43, 44, 59, 61, 58, 91, 93, 37: return true
        default: return false
        }
    }
}
