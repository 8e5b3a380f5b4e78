import EventLoops
import HTTPCore

/// The head of an HTTP/1.1 response: its status line and its fields, in the `HTTPHeaders` both directions use (kept as
/// the bytes that arrived; nothing is made a string unless asked for).
public struct ResponseHead: Sendable, Equatable {
    public var status: Int
    public var versionMinor: Int
    /// The reason phrase as sent (possibly empty).
    public var reason: String
    public var headers: HTTPHeaders
    /// Whether a `Content-Encoding` field was sent (noted as the head was parsed).
    public let hasContentEncoding: Bool

    init(status: Int, versionMinor: Int, reason: String, headers: HTTPHeaders, hasContentEncoding: Bool) {
        self.status = status; self.versionMinor = versionMinor; self.reason = reason; self.headers = headers
        self.hasContentEncoding = hasContentEncoding
    }

    /// Field lines in order, names as sent.
    public var fields: [(name: String, value: String)] { headers.fields }

    public static func == (a: ResponseHead, b: ResponseHead) -> Bool {
        a.status == b.status && a.reason == b.reason && a.versionMinor == b.versionMinor
            && a.fields.elementsEqual(b.fields, by: { $0.name == $1.name && $0.value == $1.value })
    }

    /// The first value of a field, by case-insensitive name.
    public func value(_ name: String) -> String? { headers[name] }
    /// `Location`, as `value("Location")`.
    public var location: String? { headers["Location"] }
    /// `Retry-After`, as `value("Retry-After")`.
    public var retryAfter: String? { headers["Retry-After"] }

    /// Every value of a field, comma lists split and trimmed (case kept).
    public func values(_ name: String) -> [String] {
        var out: [String] = []
        headers.forEach(named: name) { v in
            FieldList.forEachMember(v) { t in if !t.isEmpty { out.append(String(decoding: t, as: UTF8.self)) } }
        }
        return out
    }

    /// The kind of a field the parser acts on (framing, persistence, content coding), by its name (a token), ASCII
    /// case-insensitively.
    enum Known: UInt8, Sendable {
        case other, contentLength, transferEncoding, connection, contentEncoding

        static func of(_ n: UnsafeBufferPointer<UInt8>) -> Known {
            switch n.count {
            case 10: return ASCII.equalsLowercase(n, "connection") ? .connection : .other
            case 14: return ASCII.equalsLowercase(n, "content-length") ? .contentLength : .other
            case 16: return ASCII.equalsLowercase(n, "content-encoding") ? .contentEncoding : .other
            case 17: return ASCII.equalsLowercase(n, "transfer-encoding") ? .transferEncoding : .other
            default: return .other
            }
        }
    }

}

/// Why a response could not be read. Every case means the connection must not be reused.
public enum ResponseError: Error, Equatable, Sendable {
    /// Not HTTP/1.x as RFC 9112 writes it (status line, field syntax, framing, chunk sizes, codings).
    case malformed(String)
    /// The body (declared, or received, or inflated) is larger than the cap.
    case tooLarge
    /// The connection closed before the response was complete.
    case truncated
}

/// Incremental, strict RFC 9112 response parser. Feed bytes as they arrive; it says when a response is
/// complete. Pure: no I/O, no clock.
///
/// Strict where a wrong guess would desynchronise the connection or smuggle a response: CRLF line endings, a
/// status line `HTTP/1.x NNN reason`, token field names with no whitespace before the colon, no obs-fold, no
/// control characters in values, `Content-Length` as plain digits (repeated only with the same value), never
/// with `Transfer-Encoding`, hexadecimal chunk sizes without overflow. Interim 1xx responses are skipped.
public struct ResponseParser {
    public struct Limits: Sendable {
        public var maxHead = 64 * 1024
        public var maxFields = 200
        public var maxBody = 8 << 20
        public var maxChunkLine = 4 * 1024
        public var maxTrailers = 16 * 1024
        public init(maxBody: Int = 8 << 20) { self.maxBody = maxBody }
    }

    enum Framing: Equatable { case none, length(Int), chunked, untilClose }

    private enum State: Equatable {
        case head
        case body(Framing)
        case chunkSize
        case chunkData(Int)
        case chunkDataEnd
        case trailers
        case done
    }

    public let limits: Limits
    /// The request was HEAD: the response has no body whatever its fields say.
    public private(set) var requestWasHead: Bool
    private var buffer: [UInt8] = []
    private var start = 0
    private var state = State.head
    private var headBytes = 0
    private var trailerBytes = 0
    /// The head being read: lines found so far and where the scan resumes, so bytes that trickle in are each looked
    /// at once (rescanning from the head's start made a head sent a byte at a time quadratic: 64 KB took a second).
    private var headLines: [Range<Int>] = []
    private var headScan = 0
    private var headLineStart = 0
    /// Whether the head being read holds a control byte other than a tab (a CR or LF not ending a line, a NUL, a DEL…):
    /// only then are its reason phrase and field values checked byte by byte (what they would be refused for).
    private var headHasControl = false
    /// Where the scan for the end of a chunk-size or trailer line resumes.
    private var lineScan = 0
    public private(set) var head: ResponseHead?
    /// The field list heads are read into: its buffers are kept for the next head on the connection when the last
    /// head handed out is gone (a kept-alive connection's answers then allocate none for their fields).
    private var headers = HTTPHeaders()
    public private(set) var body: [UInt8] = []
    /// Whether the connection may carry another request after this response.
    public private(set) var keepAlive = false

    public init(limits: Limits = Limits(), requestWasHead: Bool = false) {
        self.limits = limits
        self.requestWasHead = requestWasHead
    }

    /// Ready for the next response on the same connection (the last one complete and taken, nothing left over): the
    /// receive buffer, the line list and the body keep their capacity, up to 64 KB, so an exchange on a kept-alive
    /// connection does not allocate them again.
    public mutating func reset(requestWasHead: Bool) {
        self.requestWasHead = requestWasHead
        if buffer.capacity > 64 * 1024 { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
        headLines.removeAll(keepingCapacity: true)
        start = 0; state = .head; headBytes = 0; trailerBytes = 0; headScan = 0; headLineStart = 0; lineScan = 0
        head = nil; keepAlive = false
        // The last body's buffer is kept for the next (none allocated when its reader, answered on the loop, is done
        // with it; a reader still holding it gets it whole, and the next body a fresh buffer of the same size).
        if body.capacity > 64 * 1024 { body = [] } else { body.removeAll(keepingCapacity: true) }
    }

    /// The head of a complete response, taken out of the parser (moved to its reader: no copy of its fields' list
    /// made and dropped).
    public mutating func takeHead() -> ResponseHead? {
        let taken = head
        head = nil
        return taken
    }

    public var isComplete: Bool { state == .done }
    /// Bytes received after the end of the response (a well-behaved server sends none: nothing is pipelined).
    public var hasLeftover: Bool { state == .done && start < buffer.count }

    /// Takes bytes from the connection. Returns true once the response is complete.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(ResponseError) -> Bool {
        if !bytes.isEmpty { buffer.append(contentsOf: bytes) }
        try advance()
        compact()
        return state == .done
    }

    public mutating func feed(_ bytes: [UInt8]) throws(ResponseError) -> Bool {
        buffer.append(contentsOf: bytes)
        try advance()
        compact()
        return state == .done
    }

    /// The peer closed the connection: completes a close-delimited body, otherwise the response is truncated.
    public mutating func finish() throws(ResponseError) {
        if state == .done { return }
        if case .body(.untilClose) = state {
            state = .done
            keepAlive = false
            return
        }
        throw .truncated
    }

    private mutating func compact() {
        if start > 4096 && start * 2 > buffer.count {
            let shift = start
            buffer.removeFirst(shift)
            start = 0
            // A head being read after an interim response moves with the bytes.
            headScan = max(0, headScan - shift); headLineStart = max(0, headLineStart - shift); lineScan = max(0, lineScan - shift)
            if !headLines.isEmpty { headLines = headLines.map { ($0.lowerBound - shift)..<($0.upperBound - shift) } }
        }
    }

    /// Index of the LF of the next CRLF at or after `start`, or nil. A bare LF or CR is malformed. Resumes where the
    /// last call stopped (a chunk or trailer line that trickles in is scanned once).
    private mutating func lineEnd(limit: Int, what: String) throws(ResponseError) -> Int? {
        var i = max(start, lineScan)
        while i < buffer.count {
            let b = buffer[i]
            if b == 10 {
                guard i > start, buffer[i - 1] == 13 else { throw .malformed("\(what): a line ends in a bare LF") }
                return i
            }
            if b == 13 {
                if i + 1 == buffer.count { break }   // judged with the byte after it, when it comes
                if buffer[i + 1] != 10 { throw .malformed("\(what): a bare CR") }
            }
            i += 1
            if i - start > limit { throw .malformed("\(what) is too long") }
        }
        lineScan = i
        return nil
    }

    private mutating func advance() throws(ResponseError) {
        while true {
            switch state {
            case .done:
                return
            case .head:
                guard let (h, fields) = try parseHead() else { return }
                if (100..<200).contains(h.status) {
                    // Interim (100 Continue, 103 Early Hints…): skip it, the final response follows.
                    guard h.status != 101 else { throw .malformed("an upgrade (101) was not asked for") }
                    headBytes = 0
                    continue
                }
                head = h
                let framing = try Self.framing(of: h, fields, requestWasHead: requestWasHead, maxBody: limits.maxBody)
                keepAlive = Self.persistent(h, fields) && framing != .untilClose
                switch framing {
                case .none: state = .done
                case .length(0): state = .done
                case .length, .untilClose: state = .body(framing)
                case .chunked: state = .chunkSize
                }
            case .body(let framing):
                let available = buffer.count - start
                switch framing {
                case .length(let n):
                    let take = min(n - body.count, available)
                    body.append(contentsOf: buffer[start..<(start + take)])
                    start += take
                    if body.count == n { state = .done } else { return }
                case .untilClose:
                    guard body.count + available <= limits.maxBody else { throw .tooLarge }
                    body.append(contentsOf: buffer[start...])
                    start = buffer.count
                    return
                default:
                    return
                }
            case .chunkSize:
                guard let lf = try lineEnd(limit: limits.maxChunkLine, what: "a chunk size line") else { return }
                let size = try Self.chunkSize(buffer[start..<(lf - 1)])
                start = lf + 1
                if size == 0 {
                    state = .trailers
                } else {
                    guard body.count + size <= limits.maxBody else { throw .tooLarge }
                    state = .chunkData(size)
                }
            case .chunkData(let remaining):
                let take = min(remaining, buffer.count - start)
                body.append(contentsOf: buffer[start..<(start + take)])
                start += take
                if take == remaining { state = .chunkDataEnd } else { state = .chunkData(remaining - take); return }
            case .chunkDataEnd:
                guard buffer.count - start >= 2 else { return }
                guard buffer[start] == 13, buffer[start + 1] == 10 else { throw .malformed("chunk data is not followed by CRLF") }
                start += 2
                state = .chunkSize
            case .trailers:
                guard let lf = try lineEnd(limit: limits.maxTrailers, what: "a trailer line") else { return }
                let length = lf + 1 - start
                trailerBytes += length
                guard trailerBytes <= limits.maxTrailers else { throw .malformed("trailer section is too large") }
                start = lf + 1
                if length == 2 { state = .done }   // the empty line ends the message; trailers are not used
            }
        }
    }

    /// The head, once its empty line has arrived.
    private mutating func parseHead() throws(ResponseError) -> (ResponseHead, FramingFields)? {
        // Find CRLF CRLF from where the last call stopped, checking the limit.
        if headLines.isEmpty && headScan <= start {
            headScan = start; headLineStart = start; headHasControl = false
            if headLines.capacity == 0 { headLines.reserveCapacity(24) }   // one allocation, not five doublings
        }
        var lineStart = headLineStart
        var i = headScan
        let count = buffer.count, headStart = start, maxHead = limits.maxHead
        enum Step { case more, end, bareLF, bareCR, tooManyFields, tooLarge }
        // Line breaks found eight bytes at a time, with every other control byte; each CR is judged with the byte after it.
        let step: Step = buffer.withUnsafeBufferPointer { b in
            while true {
                guard let at = ByteScan.firstControl(b, from: i) else { i = count; return count - headStart > maxHead ? .tooLarge : .more }
                i = at
                if at - headStart > maxHead { return .tooLarge }
                let c = b[at]
                if c != 13 && c != 10 {
                    if c != 9 { headHasControl = true }
                    i = at + 1
                    continue
                }
                // A line ends at a CR with its LF, taken together (the scan goes on after both); an LF found by the
                // scan is therefore a bare one.
                if c == 10 { return .bareLF }
                if at + 1 == count { return .more }   // waits on the CR until the byte after it is here
                if b[at + 1] != 10 { return .bareCR }
                if at == lineStart { i = at + 1; return .end }   // empty line: end of head
                headLines.append(lineStart..<at)
                lineStart = at + 2
                i = at + 2
                if headLines.count > limits.maxFields + 1 { return .tooManyFields }
            }
        }
        switch step {
        case .more: headScan = i; headLineStart = lineStart; return nil
        case .end: break
        case .bareLF: throw .malformed("the response head has a bare LF")
        case .bareCR: throw .malformed("the response head has a bare CR")
        case .tooManyFields: throw .malformed("more than \(limits.maxFields) header fields")
        case .tooLarge: throw .malformed("the response head is larger than \(limits.maxHead) bytes")
        }
        let end = i + 1
        defer { headLines.removeAll(keepingCapacity: true) }
        headScan = end; headLineStart = end
        guard let statusLine = headLines.first else { throw .malformed("no status line") }
        // The fields go into the parser's own list (its buffers reused when no earlier head holds them), and what the
        // parser acts on is noted in the same pass: the framing, persistence and content-coding fields.
        headers.removeAllKeepingCapacity(orReserving: 2048, fields: 32)
        var framing = FramingFields()
        let (status, versionMinor, reason) = try buffer.withUnsafeBufferPointer { (b) throws(ResponseError) -> (Int, Int, String) in
            let check = headHasControl
            let (status, versionMinor, reasonStart) = try Self.statusLine(b, statusLine.lowerBound, statusLine.upperBound, checkReason: check)
            try headers.appendingReceived { (fields) throws(ResponseError) in
                guard headLines.count > 1 else { return }
                // The field lines copied in one go (the line breaks between them too), each field then a span of them.
                let first = headLines[1].lowerBound
                let base = fields.block(UnsafeBufferPointer(rebasing: b[first..<headLines[headLines.count - 1].upperBound])) - first
                // Each field's span written to the stack as it is read, then all added in one call.
                let failure: ResponseError? = withUnsafeTemporaryAllocation(of: HTTPHeaders.FieldOffsets.self, capacity: headLines.count - 1) { spans in
                    var n = 0
                    for range in headLines.dropFirst() {
                        let colon: Int, vs: Int, ve: Int
                        do throws(ResponseError) { (colon, vs, ve) = try Self.field(b, range.lowerBound, range.upperBound, checkValue: check) }
                        catch { return error }
                        let ls = range.lowerBound
                        let kind = ResponseHead.Known.of(UnsafeBufferPointer(rebasing: b[ls..<colon]))
                        if kind != .other { framing.note(kind, UnsafeBufferPointer(rebasing: b[vs..<ve])) }
                        spans.initializeElement(at: n, to: (Int32(truncatingIfNeeded: base + ls), Int32(truncatingIfNeeded: base + colon),
                                                            Int32(truncatingIfNeeded: base + vs), Int32(truncatingIfNeeded: base + ve)))
                        n += 1
                    }
                    fields.add(fields: UnsafeBufferPointer(rebasing: spans[..<n]))
                    return nil
                }
                if let failure { throw failure }
            }
            return (status, versionMinor, Self.reason(UnsafeBufferPointer(rebasing: b[reasonStart..<statusLine.upperBound])))
        }
        start = end
        return (ResponseHead(status: status, versionMinor: versionMinor, reason: reason, headers: headers, hasContentEncoding: framing.contentEncoding),
                framing)
    }

    /// What a head's fields say of its framing and persistence (RFC 9112 §6.3, §9.3), noted as it is read; judged by
    /// `framing(of:_:)` (a head with no body, HEAD's or a 204's, is not held to its Content-Length).
    struct FramingFields {
        /// Transfer codings, lower-cased, in order (an array only when the field was sent).
        var transferCodings: [String] = []
        /// The Content-Length value (every member of every field the same).
        var length: Int?
        var lengthInvalid = false
        /// Two Content-Length members differ (as written).
        var lengthsDisagree = false
        private var lengthDigits = 0
        var close = false, keepAlive = false, contentEncoding = false

        @inline(__always)
        mutating func note(_ kind: ResponseHead.Known, _ value: UnsafeBufferPointer<UInt8>) {
            switch kind {
            case .other: return
            case .contentEncoding: contentEncoding = true
            case .connection:
                let options = FieldList.connectionOptions(value)
                close = close || options.close; keepAlive = keepAlive || options.keepAlive
            case .transferEncoding:
                FieldList.forEachMember(value) { t in if !t.isEmpty { transferCodings.append(String(decoding: t, as: UTF8.self).lowercased()) } }
            case .contentLength:
                // Nearly every answer: one plain number, read as it is (no list walked).
                if value.count > 0, value.count <= 15, value.allSatisfy({ $0 &- 48 < 10 }) {
                    var n = 0
                    for d in value { n = n &* 10 &+ Int(d &- 48) }
                    if let first = length, first != n || lengthDigits != value.count { lengthsDisagree = true }
                    if length == nil { length = n; lengthDigits = value.count }
                    return
                }
                FieldList.forEachMember(value) { t in
                    var n = 0
                    if t.isEmpty || t.count > 15 || !t.allSatisfy({ (48...57).contains($0) }) { lengthInvalid = true; n = -1 }
                    else { for d in t { n = n * 10 + Int(d - 48) } }
                    if let first = length, first != n || lengthDigits != t.count { lengthsDisagree = true }
                    if length == nil { length = n; lengthDigits = t.count }
                }
            }
        }
    }

    /// The reason phrase: the usual one without decoding it (a literal string; no bytes read into a new one).
    static func reason(_ r: UnsafeBufferPointer<UInt8>) -> String {
        if r.count == 2, r[0] == UInt8(ascii: "O"), r[1] == UInt8(ascii: "K") { return "OK" }
        return String(decoding: r, as: UTF8.self)
    }

    /// `HTTP/1.x NNN reason` in `b[ls..<le]`: the status, the minor version and where the reason starts. The reason is
    /// checked for control bytes when `checkReason` (the head's scan found one somewhere).
    static func statusLine(_ b: UnsafeBufferPointer<UInt8>, _ ls: Int, _ le: Int, checkReason: Bool = true) throws(ResponseError) -> (Int, Int, Int) {
        let n = le - ls
        guard n >= 12, b[ls] == 72, b[ls + 1] == 84, b[ls + 2] == 84, b[ls + 3] == 80, b[ls + 4] == 47, b[ls + 5] == 49,
              b[ls + 6] == 46, (48...57).contains(b[ls + 7]), b[ls + 8] == 32,
              (49...53).contains(b[ls + 9]), (48...57).contains(b[ls + 10]), (48...57).contains(b[ls + 11]) else {
            throw .malformed("the status line is not 'HTTP/1.x NNN reason'")
        }
        guard n == 12 || b[ls + 12] == 32 else { throw .malformed("the status code is not three digits followed by a space") }
        var k = checkReason ? ls + 13 : le
        while k < le {
            let c = b[k]
            guard c == 9 || (c >= 32 && c != 127) else { throw .malformed("the reason phrase holds control characters") }
            k += 1
        }
        let status = Int(b[ls + 9] - 48) * 100 + Int(b[ls + 10] - 48) * 10 + Int(b[ls + 11] - 48)
        return (status, Int(b[ls + 7] - 48), min(ls + 13, le))
    }

    /// A field line `b[ls..<le]`: where its name ends (the colon) and its value without surrounding spaces and tabs. The
    /// value is checked for control bytes when `checkValue` (the head's scan found one somewhere).
    @inline(__always)
    static func field(_ b: UnsafeBufferPointer<UInt8>, _ ls: Int, _ le: Int, checkValue: Bool = true) throws(ResponseError) -> (colon: Int, valueStart: Int, valueEnd: Int) {
        guard le > ls, b[ls] != 32, b[ls] != 9 else {
            throw .malformed(le > ls ? "obsolete line folding in the response head" : "a header line without a field name")
        }
        // The name: token bytes (a letter at once, another byte by the bit set), then the colon (not a token byte).
        let colon = ByteScan.tokenEnd(b, from: ls, to: le)
        if colon < le, b[colon] != 58 { throw .malformed("a field name that is not a token (or whitespace before the colon)") }
        guard colon < le, colon > ls else { throw .malformed("a header line without a field name") }
        var vs = colon + 1, ve = le
        while vs < ve, b[vs] == 32 || b[vs] == 9 { vs += 1 }
        while ve > vs, b[ve - 1] == 32 || b[ve - 1] == 9 { ve -= 1 }
        if checkValue, !ByteScan.isFieldValue(b, from: vs, to: ve) { throw .malformed("a field value holds control characters") }
        return (colon, vs, ve)
    }

    /// RFC 9112 §6.3, strictly, from the fields noted as the head was read.
    static func framing(of h: ResponseHead, _ f: FramingFields, requestWasHead: Bool, maxBody: Int) throws(ResponseError) -> Framing {
        if requestWasHead || h.status == 204 || h.status == 304 || (100..<200).contains(h.status) { return .none }
        let te = f.transferCodings
        guard !f.lengthsDisagree else { throw .malformed("Content-Length values disagree") }
        if !te.isEmpty {
            guard f.length == nil else { throw .malformed("both Transfer-Encoding and Content-Length") }
            guard te.last == "chunked" else {
                guard te.allSatisfy({ $0 != "chunked" }) else { throw .malformed("chunked is not the last transfer coding") }
                return .untilClose
            }
            guard te.count == 1 else { throw .malformed("a transfer coding other than chunked") }
            return .chunked
        }
        if let n = f.length {
            guard !f.lengthInvalid, n >= 0 else { throw .malformed("Content-Length is not a number") }
            guard n <= maxBody else { throw .tooLarge }
            return .length(n)
        }
        return .untilClose
    }

    static func persistent(_ h: ResponseHead, _ f: FramingFields) -> Bool {
        if f.close { return false }
        return h.versionMinor >= 1 || f.keepAlive
    }

    static func chunkSize(_ line: ArraySlice<UInt8>) throws(ResponseError) -> Int {
        // Lenient where it costs nothing: whitespace after the size with no extension is read as nothing.
        switch line.withUnsafeBufferPointer({ ChunkedFraming.size($0, lenient: true) }) {
        case .size(let size): return size
        case .notHexadecimal: throw .malformed("a chunk size is not hexadecimal")
        case .tooLarge: throw .malformed("a chunk size is too large")
        case .invalidAfterSize, .whitespaceWithoutExtension: throw .malformed("a chunk size is followed by something else")
        case .controlInExtension: throw .malformed("a chunk extension holds control characters")
        }
    }
}
