import Glibc
import HTTPCore

/// A complete, validated HTTP/1.1 request. Its fields live in one shared box: the request is handed to the handler's
/// context and kept for the response with one retain each, not one per field (copy-on-write on mutation).
public struct HTTPRequest: Sendable {
    final class Storage: @unchecked Sendable {  // invariant: mutated only while uniquely referenced (HTTPRequest's setters copy first)
        var method: String
        /// The target as bytes, with its path (still percent-encoded) and query as ranges in them: a parsed
        /// request's are copied once from the parser's buffer (into an array that keeps its capacity from request to
        /// request), and become strings only when asked for.
        var target: [UInt8]
        var parts: TargetParts
        var versionMajor: Int
        var versionMinor: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        var keepAlive: Bool
        var ifNoneMatch: String?
        var requestIDField: String?
        var mayAcceptGzip: Bool
        /// An `Authorization` field was sent (noted by the parser; a request made in code says true).
        var mayHaveAuthorization = true
        var mayHaveAcceptLanguage = true
        var mayHaveTraceparent = true
        /// Where the parser found the first `Authorization` among the received fields, and how many it found: -1, none
        /// noted (a request made in code: looked up by name).
        var authorizationAt: Int32 = -1, authorizationCount: Int32 = 0

        init(method: String, target: [UInt8], parts: TargetParts, versionMajor: Int, versionMinor: Int,
             headers: HTTPHeaders, body: [UInt8], keepAlive: Bool, ifNoneMatch: String?, requestIDField: String?, mayAcceptGzip: Bool) {
            self.method = method; self.target = target; self.parts = parts
            self.versionMajor = versionMajor; self.versionMinor = versionMinor
            self.headers = headers; self.body = body; self.keepAlive = keepAlive
            self.ifNoneMatch = ifNoneMatch; self.requestIDField = requestIDField; self.mayAcceptGzip = mayAcceptGzip
        }

        func copy() -> Storage {
            let s = Storage(method: method, target: target, parts: parts, versionMajor: versionMajor,
                            versionMinor: versionMinor, headers: headers, body: body, keepAlive: keepAlive, ifNoneMatch: ifNoneMatch,
                            requestIDField: requestIDField, mayAcceptGzip: mayAcceptGzip)
            s.mayHaveAuthorization = mayHaveAuthorization; s.mayHaveAcceptLanguage = mayHaveAcceptLanguage
            s.mayHaveTraceparent = mayHaveTraceparent; s.authorizationAt = authorizationAt; s.authorizationCount = authorizationCount
            return s
        }
    }

    var storage: Storage

    init(storage: Storage) { self.storage = storage }

    /// Where the target's bytes end, and where its path and query are in the bytes (the path may follow the target:
    /// "/" for an absolute-form target without one, or a path set by code).
    struct TargetParts: Sendable {
        var targetEnd = 0
        var path = 0..<0
        var query: Range<Int>?
        /// The query holds no `%` or `+` escape and no byte past ASCII: every name and value in it is its own bytes.
        var queryIsPlain = false
    }

    /// Target, path and query laid out in one array: the target, then the path, then the query.
    static func layout(target: String, path: String, query: String?) -> ([UInt8], TargetParts) {
        var bytes = Array(target.utf8)
        let t = bytes.count
        bytes.append(contentsOf: path.utf8)
        let p = bytes.count
        var parts = TargetParts(targetEnd: t, path: t..<p, query: nil)
        if let query {
            bytes.append(contentsOf: query.utf8); parts.query = p..<bytes.count
            parts.queryIsPlain = query.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "+") }
        }
        return (bytes, parts)
    }

    private func string(_ range: Range<Int>) -> String {
        storage.target.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    public var method: String { get { storage.method } set { unique().method = newValue } }
    /// The request target exactly as sent.
    public var target: String {
        get { string(0..<storage.parts.targetEnd) }
        set { relayout(target: newValue, path: path, query: query) }
    }
    /// The path part of the target, still percent-encoded (validated).
    public var path: String {
        get { string(storage.parts.path) }
        set { relayout(target: target, path: newValue, query: query) }
    }
    /// The path's bytes, for reading in place (no string made).
    func withPathBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let range = storage.parts.path
        return storage.target.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    private mutating func relayout(target: String, path: String, query: String?) {
        let (bytes, parts) = HTTPRequest.layout(target: target, path: path, query: query)
        let s = unique()
        s.target = bytes; s.parts = parts
    }
    /// The path's segments, percent-decoded (each valid UTF-8). `/a/b%2Fc` → `["a", "b/c"]`.
    public var pathSegments: [String] { HTTPRequest.segments(ofPath: path) }
    /// The raw query string without `?`, or nil.
    public var query: String? {
        get { storage.parts.query.map { string($0) } }
        set { relayout(target: target, path: path, query: newValue) }
    }
    public var versionMajor: Int { get { storage.versionMajor } set { unique().versionMajor = newValue } }
    public var versionMinor: Int { get { storage.versionMinor } set { unique().versionMinor = newValue } }
    public var headers: HTTPHeaders {
        get { storage.headers }
        set {   // fields set in code: looked up
            let s = unique(); s.headers = newValue
            s.mayHaveAuthorization = true; s.mayHaveAcceptLanguage = true; s.mayHaveTraceparent = true; s.authorizationAt = -1
        }
    }
    public var body: [UInt8] { get { storage.body } set { unique().body = newValue } }
    /// Whether the connection may stay open after the response.
    public var keepAlive: Bool { get { storage.keepAlive } set { unique().keepAlive = newValue } }

    // Noted by the parser while it read the fields (the first of each), for the response.
    var ifNoneMatch: String? { storage.ifNoneMatch }
    var requestIDField: String? { storage.requestIDField }
    var mayAcceptGzip: Bool { storage.mayAcceptGzip }
    var mayHaveAuthorization: Bool { storage.mayHaveAuthorization }
    /// False when the parser saw no `Accept-Language` field (a request made in code may have one: true).
    public var mayHaveAcceptLanguage: Bool { storage.mayHaveAcceptLanguage }
    /// False when the parser saw no `traceparent` field.
    var mayHaveTraceparent: Bool { storage.mayHaveTraceparent }
    /// The received `Authorization` fields as the parser noted them: the first one's place among the received fields
    /// and their number; nil when not noted (a request made in code).
    var authorizationNoted: (at: Int, count: Int)? {
        storage.authorizationAt < 0 ? nil : (Int(storage.authorizationAt), Int(storage.authorizationCount))
    }
    /// Whether the target has a query (`?`), without making it a string.
    public var hasQuery: Bool { storage.parts.query != nil }

    public init(method: String, target: String, path: String, query: String?,
                versionMajor: Int = 1, versionMinor: Int = 1, headers: HTTPHeaders = HTTPHeaders(),
                body: [UInt8] = [], keepAlive: Bool = true) {
        self.init(method: method, target: target, path: path, query: query, versionMajor: versionMajor, versionMinor: versionMinor,
                  headers: headers, body: body, keepAlive: keepAlive, ifNoneMatch: headers["If-None-Match"],
                  requestIDField: headers["X-Request-ID"], mayAcceptGzip: headers.contains("Accept-Encoding"))
    }

    /// The parser's: the fields it noted while reading them.
    init(method: String, target: String, path: String, query: String?, versionMajor: Int, versionMinor: Int,
         headers: HTTPHeaders, body: [UInt8], keepAlive: Bool, ifNoneMatch: String?, requestIDField: String?, mayAcceptGzip: Bool) {
        let (bytes, parts) = HTTPRequest.layout(target: target, path: path, query: query)
        storage = Storage(method: method, target: bytes, parts: parts, versionMajor: versionMajor, versionMinor: versionMinor,
                          headers: headers, body: body, keepAlive: keepAlive, ifNoneMatch: ifNoneMatch, requestIDField: requestIDField,
                          mayAcceptGzip: mayAcceptGzip)
    }

    /// What the server answers for when there is no request (a parse error, a timeout): `GET /`.
    static let none = HTTPRequest(method: "GET", target: "/", path: "/", query: nil)

    /// A validated path's segments, percent-decoded: `/` → `[""]`, `*` → `[]`.
    static func segments(ofPath path: String) -> [String] {
        if path == "*" { return [] }
        var segments: [String] = []
        let u = Array(path.utf8)
        var segStart = 1
        for i in 1...max(1, u.count) where i == u.count || u[i] == 47 {
            let seg = u[min(segStart, u.count)..<i]
            segments.append((try? RequestParser.decodeSegment(seg)) ?? String(decoding: seg, as: UTF8.self))
            segStart = i + 1
        }
        return segments
    }

    /// Each non-empty `&`-separated pair of the query in order, its name and its value (nil without `=`; the first
    /// `=` splits) as the raw bytes, until `body` returns true. One pass, no generic split.
    private func forEachQueryPair(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>?) -> Bool) {
        guard let range = storage.parts.query, !range.isEmpty else { return }
        storage.target.withUnsafeBufferPointer { whole in
            let u = UnsafeBufferPointer(rebasing: whole[range])
            let base = UnsafeRawPointer(u.baseAddress!)
            /// The index of the first `byte` in `u[from..<to]`, or `to` (memchr: a feed's query is 115 bytes).
            func find(_ byte: UInt8, _ from: Int, _ to: Int) -> Int {
                guard from < to, let p = memchr(base + from, Int32(byte), to - from) else { return to }
                return base.distance(to: UnsafeRawPointer(p))
            }
            var pairStart = 0
            while pairStart < u.count {
                let end = find(UInt8(ascii: "&"), pairStart, u.count)
                let eq = find(UInt8(ascii: "="), pairStart, end)
                let equals: Int? = eq < end ? eq : nil
                if pairStart < end {
                    let value = equals.map { UnsafeBufferPointer(rebasing: u[($0 + 1)..<end]) }
                    if body(UnsafeBufferPointer(rebasing: u[pairStart..<(equals ?? end)]), value) { return }
                }
                pairStart = end + 1
            }
        }
    }

    /// Query parameters in order, `+` read as space, percent-decoded. Pairs that fail to decode are dropped
    /// (the parser has already refused malformed percent-encoding in the target).
    public var queryItems: [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        forEachQueryPair { rawName, rawValue in
            guard let name = PercentDecoding.decode(bytes: rawName, plusAsSpace: true) else { return false }
            if let rawValue {
                guard let value = PercentDecoding.decode(bytes: rawValue, plusAsSpace: true) else { return false }
                items.append((name: name, value: value))
            } else {
                items.append((name: name, value: ""))
            }
            return false
        }
        return items
    }

    /// The first value of each of `names` (as `queryItems` would give them: `+` as space, percent-decoded, a pair that
    /// fails to decode left out), `values[i]` for `names[i]`, in one pass: a pair's name is compared as bytes where it
    /// holds no escape, and only the values of names asked for are decoded. A route that reads many parameters (the
    /// feed reads eight) makes no string per name.
    public func firstQueryValues(_ names: QueryNames) -> [String?] {
        var strings: [String?] = []
        withFirstQueryValues(names) { raw in strings = raw.map { $0?.string } }
        return strings
    }

    /// The same values as sent, lent to `body` (`values[i]` for `names[i]`): a plain value's bytes are read where they
    /// lie, and a route that wants a number or a date from them makes no string at all. (Not generic over a result:
    /// across modules a generic one is not specialised, and its metadata cost ~700 instructions a request.)
    public func withFirstQueryValues(_ names: QueryNames, _ body: (UnsafeBufferPointer<RawQueryValue?>) throws -> Void) rethrows {
        try withUnsafeTemporaryAllocation(of: RawQueryValue?.self, capacity: names.strings.count) { values in
            values.initialize(repeating: nil)
            // A query the parser found plain (no escape at all) needs no name or value looked at byte by byte.
            let plain = storage.parts.queryIsPlain
            forEachQueryPair { raw, rawValue in
                guard let index = names.index(of: raw, plain: plain), values[index] == nil else { return false }
                guard let rawValue else { values[index] = .empty; return false }
                // A value that fails to decode is left out (a later pair of that name may stand), as in `queryItems`.
                values[index] = plain ? RawQueryValue(plain: rawValue) : RawQueryValue(checking: rawValue)
                return false
            }
            return try body(UnsafeBufferPointer(values))
        }
    }

    /// The first item so named, as `queryItems.first { $0.name == name }?.value` finds it, without making the list:
    /// each pair's name is compared where it lies (as bytes when both are ASCII with no escape), and only the value
    /// asked for is decoded. A route reads several parameters; rebuilding every item for each cost the list ~31k
    /// instructions a request.
    public func queryParameter(_ name: String) -> String? {
        guard hasQuery else { return nil }   // most requests: no query, nothing to look through
        var name = name
        return name.withUTF8 { want in
            let wantASCII = want.allSatisfy { $0 < 0x80 }
            var found: String?
            forEachQueryPair { raw, rawValue in
                let plain = wantASCII && !raw.contains { $0 >= 0x80 || $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }
                let same = plain
                    ? raw.count == want.count && (raw.isEmpty || memcmp(raw.baseAddress!, want.baseAddress!, raw.count) == 0)
                    : PercentDecoding.decode(bytes: raw, plusAsSpace: true).map { $0 == String(decoding: want, as: UTF8.self) } ?? false
                guard same else { return false }
                guard let rawValue else { found = ""; return true }
                // A value whose escapes are malformed leaves the pair out, as in `queryItems`.
                found = PercentDecoding.decode(bytes: rawValue, plusAsSpace: true)
                return found != nil
            }
            return found
        }
    }
}

/// A query value as sent, valid only inside `HTTPRequest.withFirstQueryValues`: its bytes, and whether they are the value
/// itself (no `%` or `+` escape, valid UTF-8). Decoded into a string only when asked.
public struct RawQueryValue {
    public let bytes: UnsafeBufferPointer<UInt8>
    /// No escape in it: `bytes` are the decoded value.
    public let isPlain: Bool
    /// The decoded value when checking it already made it (an escaped or non-ASCII value), so it is decoded once.
    private let decoded: String?

    /// A name with no `=`: the empty value.
    static var empty: RawQueryValue { RawQueryValue(bytes: UnsafeBufferPointer(start: nil, count: 0), isPlain: true, decoded: "") }

    private init(bytes: UnsafeBufferPointer<UInt8>, isPlain: Bool, decoded: String?) {
        self.bytes = bytes; self.isPlain = isPlain; self.decoded = decoded
    }

    /// A value from a query known to hold no escape and no byte past ASCII.
    init(plain bytes: UnsafeBufferPointer<UInt8>) { self.init(bytes: bytes, isPlain: true, decoded: nil) }

    /// nil when the value does not decode (a malformed escape, or not UTF-8).
    init?(checking bytes: UnsafeBufferPointer<UInt8>) {
        var escaped = false, ascii = true
        for b in bytes {
            if b == UInt8(ascii: "%") || b == UInt8(ascii: "+") { escaped = true; break }
            if b >= 0x80 { ascii = false }
        }
        var decoded: String?
        if escaped || !ascii {
            guard let d = PercentDecoding.decode(bytes: bytes, plusAsSpace: true) else { return nil }
            decoded = d
        }
        self.init(bytes: bytes, isPlain: !escaped, decoded: decoded)
    }

    /// The decoded value (`+` as space).
    public var string: String { decoded ?? String(decoding: bytes, as: UTF8.self) }
}

/// Parameter names a route reads with `firstQueryValues`, as bytes once: all of them in one buffer, each found by its
/// start, length and first byte (a pair's name is compared with memcmp only when those match).
public struct QueryNames: Sendable {
    let strings: [String]
    private let bytes: [UInt8]
    /// Per name: where it starts in `bytes`, its length, its first byte.
    private let table: [(start: Int, count: Int, first: UInt8)]

    public init(_ names: [String]) {
        precondition(names.allSatisfy { !$0.isEmpty }, "query names are not empty")
        strings = names
        var bytes: [UInt8] = [], table: [(start: Int, count: Int, first: UInt8)] = []
        for name in names {
            let u = Array(name.utf8)
            table.append((bytes.count, u.count, u[0]))
            bytes += u
        }
        self.bytes = bytes
        self.table = table
    }

    /// The index of the name `raw` spells (raw query bytes: an escaped name is decoded first), or nil.
    /// `plain`: the whole query is known to hold no escape.
    func index(of raw: UnsafeBufferPointer<UInt8>, plain knownPlain: Bool) -> Int? {
        guard let first = raw.first else { return nil }
        var plain = true
        if !knownPlain { for b in raw where b == UInt8(ascii: "%") || b == UInt8(ascii: "+") { plain = false; break } }
        guard plain else {
            guard let decoded = PercentDecoding.decode(bytes: raw, plusAsSpace: true) else { return nil }
            return strings.firstIndex(of: decoded)
        }
        return bytes.withUnsafeBufferPointer { b in
            table.withUnsafeBufferPointer { t in
                for i in 0..<t.count where t[i].count == raw.count && t[i].first == first {
                    if memcmp(b.baseAddress! + t[i].start, raw.baseAddress!, raw.count) == 0 { return i }
                }
                return nil
            }
        }
    }
}
