import HTTPCore
import HTTPClient
import LedeBasics

/// One HTTP exchange with an upstream origin (Wikimedia's API surface, its image origin, Reddit), as the live client
/// would send it. The live transport puts it on the network; an embedded transport answers it from bundled data. Both
/// return the raw bytes, so every answer goes through the same decoders. `lang` picks the base URL from a transport's
/// template (a wiki's language; any one key for an origin with one base URL).
public struct UpstreamRequest: Sendable, Equatable {
    public enum Method: String, Sendable { case get = "GET", post = "POST", delete = "DELETE" }

    /// What the request asks for, in one shared box: a request is copied into every async frame on its way out (six
    /// of them for the badge), and a copy is then one reference and the credentials, not seven strings and arrays.
    /// Copy-on-write: changed only where uniquely referenced.
    private final class Storage: @unchecked Sendable {   // @unchecked: never mutated once shared (every setter copies unless unique).
        // Unchecked: no dynamic exclusivity check per read (each cost a runtime call on every upstream call); a box is
        // changed only while uniquely referenced, by a setter that holds no other access to it.
        @exclusivity(unchecked) var method: Method
        @exclusivity(unchecked) var lang: String
        @exclusivity(unchecked) var path: String
        @exclusivity(unchecked) var query: [(String, String)]
        @exclusivity(unchecked) var form: [(String, String)]
        @exclusivity(unchecked) var json: [UInt8]
        @exclusivity(unchecked) var kind: CallKind
        @exclusivity(unchecked) var prepared: PreparedUpstreamRequest?
        init(method: Method, lang: String, path: String, query: [(String, String)], form: [(String, String)], json: [UInt8], kind: CallKind,
             prepared: PreparedUpstreamRequest?) {
            self.method = method; self.lang = lang; self.path = path; self.query = query; self.form = form; self.json = json; self.kind = kind
            self.prepared = prepared
        }
    }
    private var storage: Storage

    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) {
            let s = storage
            storage = Storage(method: s.method, lang: s.lang, path: s.path, query: s.query, form: s.form, json: s.json, kind: s.kind, prepared: s.prepared)
        }
        return storage
    }

    public var method: Method {
        get { storage.method }
        set { let s = unique(); s.method = newValue; s.prepared = nil }
    }
    public var lang: String {
        get { storage.lang }
        set { let s = unique(); s.lang = newValue; s.prepared = nil }
    }
    /// Path below the language's base URL, starting with `/` (`/api/rest_v1/…` or `/w/api.php`).
    public var path: String {
        get { storage.path }
        set { let s = unique(); s.path = newValue; s.prepared = nil }
    }
    /// Query items, in order, not yet encoded.
    public var query: [(String, String)] {
        get { storage.query }
        set { let s = unique(); s.query = newValue; s.prepared = nil }
    }
    /// Form fields for POST (`application/x-www-form-urlencoded`).
    public var form: [(String, String)] {
        get { storage.form }
        set { let s = unique(); s.form = newValue; s.prepared = nil }
    }
    /// A JSON body (`application/json`) for a POST to a REST interface (the reading lists'); a POST without one sends
    /// `form`.
    public var json: [UInt8] {
        get { storage.json }
        set { let s = unique(); s.json = newValue; s.prepared = nil }
    }
    /// The ready-made form a transport gave this request (`UpstreamTransport.prepare`) for a call repeated many
    /// times: its URL encoded and parsed, its request head written. Dropped when the method, language, path,
    /// query or form change; `authorization` is sent per call. Not part of equality.
    public internal(set) var prepared: PreparedUpstreamRequest? {
        get { storage.prepared }
        set { unique().prepared = newValue }
    }
    /// What the call is for: its metrics' label, and what a `Retry-After` stops.
    public var kind: CallKind {
        get { storage.kind }
        set { unique().kind = newValue }
    }
    /// The client's `Authorization` header, forwarded only on user-bound calls. Never logged or cached. Kept beside
    /// the box: setting it per call (the badge's prepared request) copies nothing.
    public var authorization: String?
    /// The address of the person a call is made for, sent as `X-Forwarded-For` (anonymous edits only, where Wikimedia
    /// trusts the deployment as a proxy: `--anonymous-edits on`).
    public var forwardedFor: String?
    /// The script variant a REST answer is asked in (`Accept-Language`); nil: the edition's default.
    public var variant: String?
    /// `form` already encoded (`formBody`), made off the event loops for a large form (an edit's megabytes of wikitext);
    /// nil: the transport encodes `form` itself.
    public var encodedForm: [UInt8]?

    public init(method: Method = .get, lang: String, path: String, query: [(String, String)] = [], form: [(String, String)] = [],
                json: [UInt8] = [], authorization: String? = nil, kind: CallKind) {
        storage = Storage(method: method, lang: lang, path: path, query: query, form: form, json: json, kind: kind, prepared: nil)
        self.authorization = authorization
    }

    /// A request to `lang`'s edition, read in its variant when it has one: an Action API query asks with `variant=`,
    /// a REST call with `Accept-Language` (`variant`, sent per call by the transport).
    public init(method: Method = .get, lang: LanguageCode, path: String, query: [(String, String)] = [], form: [(String, String)] = [],
                json: [UInt8] = [], authorization: String? = nil, kind: CallKind) {
        var query = query
        if let v = lang.variant, method == .get, path == "/w/api.php" { query.append(("variant", v)) }
        self.init(method: method, lang: lang.code, path: path, query: query, form: form, json: json, authorization: authorization, kind: kind)
        if lang.variant != nil, path.hasPrefix("/api/rest_v1/") { variant = lang.variant }
    }

    public static func == (a: UpstreamRequest, b: UpstreamRequest) -> Bool {
        a.method == b.method && a.lang == b.lang && a.path == b.path && a.authorization == b.authorization && a.kind == b.kind
            && a.query.elementsEqual(b.query, by: ==) && a.form.elementsEqual(b.form, by: ==) && a.json == b.json
    }

    /// `path?query`, percent-encoded the way Wikimedia expects (`|` as `%7C`, space as `%20`).
    public var pathAndQuery: String {
        query.isEmpty ? path : path + "?" + UpstreamRequest.formEncode(query)
    }

    public static func formEncode(_ items: [(String, String)]) -> String { encode(items, kept: .form) }

    /// A POST's `application/x-www-form-urlencoded` body: everything but RFC 3986 unreserved bytes escaped, `:` too, as
    /// the apps' HTTP stacks write a form (OkHttp's FormBody, URLComponents' form encoding).
    public static func formBody(_ items: [(String, String)]) -> String { encode(items, kept: .unreserved) }

    private static func encode(_ items: [(String, String)], kept: Kept) -> String {
        let capacity = items.reduce(0) { $0 + 3 * ($1.0.utf8.count + $1.1.utf8.count) + 2 }
        return String(unsafeUninitializedCapacity: max(1, capacity)) { buffer in
            var w = Writer(base: buffer.baseAddress!)
            w.form(items, first: nil, kept: kept)
            return w.count
        }
    }

    /// The base URL (`baseParts` joined by the language) followed by the path and the encoded query, written once
    /// (every upstream call builds its URL here).
    public func url(baseParts: [String]) -> String {
        // Written straight into the string's storage, sized for the worst case (every query byte escaped).
        let capacity = baseParts.reduce(lang.utf8.count * max(0, baseParts.count - 1)) { $0 + $1.utf8.count } + path.utf8.count + 1
            + query.reduce(0) { $0 + 3 * ($1.0.utf8.count + $1.1.utf8.count) + 2 }
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var w = Writer(base: buffer.baseAddress!)
            for (i, part) in baseParts.enumerated() {
                if i > 0 { w.write(lang) }
                w.write(part)
            }
            w.write(path)
            w.form(query, first: UInt8(ascii: "?"))
            return w.count
        }
    }

    /// Encodes everything but RFC 3986 unreserved characters (and keeps `:` readable for `morelike:`).
    public static func percentEncode(_ s: String, keep: String = ":") -> String {
        let kept = Kept(keep)
        return String(unsafeUninitializedCapacity: max(1, 3 * s.utf8.count)) { buffer in
            var w = Writer(base: buffer.baseAddress!)
            w.percentEncoded(s, kept)
            return w.count
        }
    }

    /// The bytes an encoding leaves as they are, as 128 bits: RFC 3986 unreserved, plus the ASCII of `keep`.
    struct Kept {
        var low: UInt64 = 0, high: UInt64 = 0    // bytes 0–63, 64–127

        init(_ keep: String) {
            for b in "-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_~".utf8 { add(b) }
            for b in keep.utf8 where b < 128 { add(b) }
        }

        private mutating func add(_ b: UInt8) { if b < 64 { low |= 1 << UInt64(b) } else { high |= 1 << UInt64(b - 64) } }

        @inline(__always)
        func contains(_ b: UInt8) -> Bool { b < 64 ? low & (1 << UInt64(b)) != 0 : b < 128 && high & (1 << UInt64(b - 64)) != 0 }

        /// Query strings keep `:` (`morelike:`).
        static let form = Kept(":")
        static let unreserved = Kept("")
    }

    /// Bytes written into memory sized beforehand: no per-piece array bookkeeping.
    private struct Writer {
        let base: UnsafeMutablePointer<UInt8>
        var count = 0

        mutating func byte(_ b: UInt8) { base[count] = b; count += 1 }

        mutating func write(_ s: String) {
            var s = s
            s.withUTF8 { u in
                if let a = u.baseAddress { (base + count).initialize(from: a, count: u.count) }
                count += u.count
            }
        }

        /// `name=value` pairs joined by `&`, preceded by `first` when there is any.
        mutating func form(_ items: [(String, String)], first: UInt8?, kept: Kept = .form) {
            for (i, (k, v)) in items.enumerated() {
                if i > 0 { byte(UInt8(ascii: "&")) } else if let first { byte(first) }
                percentEncoded(k, kept)
                byte(UInt8(ascii: "="))
                percentEncoded(v, kept)
            }
        }

        /// `s` with every byte outside `kept` as `%HH`; runs of kept bytes copied whole.
        mutating func percentEncoded(_ s: String, _ kept: Kept) {
            var s = s
            s.withUTF8 { u in
                var run = 0
                for i in 0..<u.count {
                    let b = u[i]
                    if kept.contains(b) { continue }
                    if run < i { (base + count).initialize(from: u.baseAddress! + run, count: i - run); count += i - run }
                    base[count] = UInt8(ascii: "%")
                    base[count + 1] = UpstreamRequest.hexDigit(b >> 4)
                    base[count + 2] = UpstreamRequest.hexDigit(b & 15)
                    count += 3
                    run = i + 1
                }
                if run < u.count { (base + count).initialize(from: u.baseAddress! + run, count: u.count - run); count += u.count - run }
            }
        }
    }

    @inline(__always) static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 48 + v : 55 + v }
}

public struct UpstreamResponse: Sendable {
    public var status: Int
    public var body: [UInt8]
    /// Response fields the client acts on, by lower-case name (`location`, `retry-after`).
    public var headers: HTTPHeaders
    public init(status: Int, body: [UInt8], headers: HTTPHeaders = HTTPHeaders()) { self.status = status; self.body = body; self.headers = headers }
}

/// A request's ready-made form, made by (and only used by) the transport named by `owner`.
public final class PreparedUpstreamRequest: Sendable {
    let owner: ObjectIdentifier
    let request: PreparedRequest
    init(owner: ObjectIdentifier, request: PreparedRequest) { self.owner = owner; self.request = request }
}

public protocol UpstreamTransport: Sendable {
    /// `request` with whatever the transport can make ready once for calls that repeat it (everything but its
    /// `authorization`), or `request` as it is. Sending the result is the same exchange as sending `request`.
    func prepare(_ request: UpstreamRequest) -> UpstreamRequest
    /// Performs the exchange within `deadline` seconds. Throws `UpstreamError.timeout`, `.tooLarge`, or
    /// `.unavailable(status: 0)` when nothing usable came back; any HTTP status is returned, not thrown —
    /// redirects too: the client follows them itself.
    func send(_ request: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse
    /// The same exchange as `send` for `call.request`, answered to `call` (`UpstreamCall.transportAnswered`) without a
    /// task, when the transport can start it here and now (the live transport, for a request it prepared); false, with
    /// nothing started and `call` never answered, otherwise — the caller then uses `send`. `call` is answered once,
    /// where the answer is read; `call.trace` is the request's trace context.
    func start(_ call: UpstreamCall, deadline: Double) -> Bool
    /// The absolute URL that `path` of a request for `lang` is relative to (`https://en.wikipedia.org`): what
    /// redirects are resolved against and what names the origin for back-off and the circuit breaker.
    func baseURL(lang: String) -> String
}

extension UpstreamTransport {
    public func prepare(_ request: UpstreamRequest) -> UpstreamRequest { request }
    public func start(_ call: UpstreamCall, deadline: Double) -> Bool { false }
    public func baseURL(lang: String) -> String { "https://\(lang).wikipedia.org" }
}

extension LanguageCode {
    /// `converttitles=1` for an edition written in more than one script (a title in any variant finds the page, as
    /// MediaWiki's REST API finds it), nothing for the others: an Action API query that names pages by title adds it.
    /// Only reads: a save names the page the editor opened, under its canonical title.
    package var convertTitles: [(String, String)] { LanguageCode.hasVariants(code) ? [("converttitles", "1")] : [] }
}
